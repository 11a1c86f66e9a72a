"""Apache Spark through Spark Connect (``sc://host:15002``): statements compiled for Spark SQL, sent with
their named parameters (``spark.sql(text, args=...)``), results fetched as Arrow into numpy.

Needs the optional extra (``pip install 'veil[spark]'``).  What differs from DuckDB and PostgreSQL is
declared as capability flags:

- ``publication = "autocommit"``: Spark commits every statement on its own (``commit``/``rollback`` do nothing),
  so a release publishes by ``veil.release.autocommit``: a table per version, verified, the views switched last, one
  run per release name by a lock table in the catalog schema (docs/spark.md).
- working tables are temporary views of this run's own Spark Connect session
  (``CACHE TABLE <name> AS <select>``: computed once, kept columnar on the executors) under names and plans of
  the run's own (``sq.run_dialect``, ``sq.run_owned``: another run ending frees none of them), dropped — and their
  cached rows freed — when the run ends, also on an error, Ctrl-C or SIGTERM.  Nothing is written to the
  catalog or the warehouse directory.  A run killed outright (SIGKILL) leaves no table or view either: its
  session's views vanish when the server expires the idle session; its cached blocks stay on the executors
  (evicted under memory pressure to local disk) until the Connect server restarts.  (``discard`` leaves them
  to the end of the run.)
- the source's columns come from the Spark catalog (``listColumns``), not ``information_schema``
  (``SparkSQLSession.source_columns``).
- ``advisory_locks = False``, ``grants = False``.
- Spark's built-in tables have no ``UPDATE``/``DELETE``: the catalog's tables are append-only logs partitioned by
  day behind views (``veil.queries.appendonly``; compacted weekly by ``veil.release.compaction``), and this
  session turns an ``INSERT``/``UPDATE`` of one into one append to its log.  A table the run marks as its own
  until its version commits (``queries.ddl.private``: a cohort series' members generation) takes an ``UPDATE`` or
  ``DELETE`` as a copy swapped in (``queries.spark.rewritten``).
- ``migrations = False``: Alembic cannot run here; ``veil init`` creates the catalog from its SQLAlchemy
  metadata (``veil.catalog``).
"""

from __future__ import annotations

import contextlib
import logging
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np
import sqlalchemy as sa
from sqlalchemy.sql.util import find_tables

from veil.backends.base import Backend, Factor, Session
from veil.backends.deferredsignals import DeferredSignals
from veil.errors import BackendError, Interruption
from veil.registry import BACKENDS
from veil.queries.ddl import CreateTableAs, DropObject, relation
from veil.queries.release import Recount
from veil.queries import appendonly
from veil.queries import spark as sq
from veil.queries.spark import DIALECT, CacheTable, compile_sql, kept_rows, source_type

if TYPE_CHECKING:  # the spark extra's; imported where used, so this module loads without it (``_connect_module``)
    import pyarrow as pa

T = TypeVar("T")
SCHEME = "sc://"
EXTRA = "pip install 'veil[spark]'"
CONNECT_TIMEOUT = 10.0
log = logging.getLogger("veil.backends.spark")
DROP_TRIES, DROP_PAUSE = 3, 0.5  # a working view's drop at the end of a run: tries, and seconds to wait more each
OPEN_COST = 1024  # bytes a file is counted as when small files are packed into a task (``SparkBackend.session``)


def _connect_module() -> Any:
    """``pyspark.sql.connect.session`` or one clear line naming the extra."""
    try:
        import pyarrow  # noqa: F401
        from pyspark.sql.connect import session as connect
        from pyspark.logger import PySparkLogger
    except ImportError as exc:  # pyspark absent, or its connect client's dependencies (pyarrow, grpc, ...)
        raise BackendError(f"the Spark backend needs the spark extra ({EXTRA}): {exc}") from None
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).disabled = True  # pyspark would print every failed query's JVM trace
    return connect


@BACKENDS.register("sc")
class SparkBackend(Backend):
    """A Spark cluster behind a Spark Connect server; the source is any table its catalog sees."""

    name: ClassVar[str] = "Spark"
    advisory_locks: ClassVar[bool] = False
    grants: ClassVar[bool] = False
    default_schema: ClassVar[str] = "default"
    publication: ClassVar[str] = "autocommit"  # no multi-statement transactions (``veil.release.autocommit``)
    batch_sizes: ClassVar[bool] = True  # ~1 s a job whatever the rows: a search's next nodes go in one job
    migrations: ClassVar[bool] = False

    @classmethod
    def open(cls, url: str) -> Backend:
        return cls(url)  # Spark Connect's sc://host:port, no SQLAlchemy URL

    def __init__(self, url: str) -> None:  # no SQLAlchemy engine: Spark Connect is not a DBAPI driver
        self.url = url  # type: ignore[assignment]
        self.host, self.port = _address(url)
        self.pyspark_connect = _connect_module()  # not ``connect``: Backend.connect is the SQLAlchemy one

    @property
    def display_url(self) -> str:
        """The URL without its parameters (``;token=...``)."""
        return f"{SCHEME}{self.host}:{self.port}"

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A Spark Connect session of its own for the run; its working views are dropped at the end."""
        self._probe()
        # results arrive as Arrow tables: freed to the system, where Arrow's own pool (mimalloc) kept some 30 MiB
        # of the 1M census's grouped source after it was read (a release's peak RSS 302-311 → 280-284 MiB)
        _pa().set_memory_pool(_pa().system_memory_pool())
        try:
            spark = self.pyspark_connect.SparkSession.builder.remote(str(self.url)).create()
            _few_retries(spark)
            spark.conf.set("spark.sql.session.timeZone", "UTC")
            # a working view keeps the plan it was made from, not its SQL text: a node rolled up from a finer
            # kept node still reads once that one is dropped (its cached rows, else the plan below it)
            spark.conf.set("spark.sql.legacy.storeAnalyzedPlanForView", "true")
            # the catalog's tables take a file per append (docs/spark.md §9): opening a file counted as Spark's 4 MB
            # read a log of 1,000 one-row files in 32 tasks, counted as 1 KB in 3 (a read 2.1–1.4 s → 1.0–0.8 s); a
            # large table's splits follow its bytes per core either way (the 1M census's GROUP BY alike)
            spark.conf.set("spark.sql.files.openCostInBytes", str(OPEN_COST))
        except Exception as exc:  # grpc and pyspark errors alike
            raise BackendError(f"cannot connect to Spark at {self.display_url}: {_reason(exc)}") from None
        session = SparkSQLSession(self, spark)
        with session.signals:  # Ctrl-C and SIGTERM never raise inside the client (``DeferredSignals``)
            try:
                yield session
            finally:
                with session.signals.shielded():
                    session.close()

    def _probe(self) -> None:
        """Fail fast with one line when nothing listens (the client would retry for minutes)."""
        try:
            socket.create_connection((self.host, self.port), timeout=CONNECT_TIMEOUT).close()
        except OSError as exc:
            raise BackendError(
                f"cannot connect to Spark at {self.display_url}: {exc.strerror or exc} "
                "(is the Spark Connect server running? deploy/spark/cluster.sh start)"
            ) from None


class SparkSQLSession(Session):
    """Executes built statements through one Spark Connect session; every result arrives as Arrow."""

    def __init__(self, backend: SparkBackend, spark: Any) -> None:
        super().__init__(backend, None)  # type: ignore[arg-type]
        self.spark = spark
        self.working: set[str] = set()  # this session's temporary views
        self.logs: dict[tuple[str | None, str], sa.Table | None] = {}  # catalog table → its log, if logged
        self.seq = 0
        self.marker = uuid.uuid4().hex[:16]  # this run's working views are plans of its own (``sq.run_owned``)
        self.signals = DeferredSignals(self._interrupt)
        self.renamed: dict[str, str] = {}  # … under names of their own (``sq.run_dialect``)
        self._dialect = sq.run_dialect(self.renamed)
        self._lock = threading.Lock()  # the counters, shared by the threads of ``together``
        self._current = threading.local()  # the number of the statement a thread sends (``_timed``)

    @property
    def dialect(self) -> sa.Dialect:
        return self._dialect

    def view_name(self, name: str) -> str:
        """The server's name of working view ``name`` (``sq.run_dialect``)."""
        return self.renamed.get(name, name)

    def fail(self, exc: BaseException, what: str) -> BackendError | Interruption:
        """One line naming ``what``; the interruption instead when a signal stopped the call (``DeferredSignals``)."""
        stopped = self.signals.pending()
        if stopped is not None:
            return stopped
        return BackendError(f"{self.backend.name} failed while {what}: {_reason(exc)}")

    def _sql(self, stmt: Any, what: str, params: dict[str, Any] | None = None) -> Any:
        """Compile ``stmt`` for Spark SQL and run it (commands run at once, queries when fetched)."""
        compiled = compile_sql(stmt, self._dialect)
        text = str(compiled)
        args = {**(compiled.params or {}), **(params or {})}
        if f":{sq.RUN}" in text:  # a working view's plan of this run's own (``sq.run_marker``)
            args[sq.RUN] = self.marker
        self._count()
        try:
            return self.spark.sql(text, args=args or None)
        except Exception as exc:
            raise self.fail(exc, what) from None

    def arrow(self, stmt: Any, what: str = "running a query", params: dict[str, Any] | None = None) -> pa.Table:
        with self._timed(what):
            frame = self._sql(stmt, what, params)
            try:
                return _naive_timestamps(frame.toArrow())
            except Exception as exc:
                raise self.fail(exc, what) from None

    def _count(self) -> None:
        """One statement more; its number is the sending thread's (``_timed``)."""
        with self._lock:
            self.statements += 1
            self._current.number = self.statements

    @contextmanager
    def _timed(self, what: str) -> Iterator[None]:
        """``--verbose`` logs each statement's time (each is one Spark job or more: the unit a release pays for)."""
        began = time.perf_counter()
        try:
            yield
        finally:
            number = getattr(self._current, "number", self.statements)
            log.debug("spark statement %d, %s: %.2f s", number, what, time.perf_counter() - began)

    def together(self, work: Sequence[Callable[[], T]]) -> list[T]:
        """Independent pieces sent at once, from threads of this session: each waits mostly on the server (a
        catalog append: 0.31-0.38 s; six to six tables 1.15 s one after another, 0.83 s from threads,
        bench/results/spark_catalog_appends.json).  Every piece runs to its end; then the first failure in order is
        raised, or the results returned in order.  A signal's handler raising while they run (Ctrl-C, SIGTERM: the
        main thread waits in Veil's code, not the client's) stops the session's operations before it goes on."""
        if len(work) < 2:
            return super().together(work)
        pool = ThreadPoolExecutor(max_workers=len(work), thread_name_prefix="veil-spark")
        try:
            futures = [pool.submit(piece) for piece in work]
            wait(futures)
        except BaseException:
            with contextlib.suppress(Exception):
                self._interrupt()
            raise
        finally:
            pool.shutdown(wait=True)
        return [f.result() for f in futures]

    def execute(self, stmt: Any, what: str = "running a query", params: Any = None) -> Any:
        if isinstance(params, (list, tuple)):
            raise TypeError("SparkSQLSession.execute takes one parameter set; use bulk_load for many rows")
        if isinstance(stmt, sa.Delete) and _working_name(stmt.table) in self.working:
            return self._delete_from_working(stmt, what)
        if isinstance(stmt, (sa.Update, sa.Delete)) and sq.is_private(stmt.table):
            for step in sq.rewritten(stmt):  # a copy swapped in: the run's own table (``sq.private``)
                self.arrow(step, what)
            return _ArrowResult(_pa().table({}))
        if isinstance(stmt, (sa.Insert, sa.Update)):
            log = self._log_of(stmt.table)
            if log is not None:
                stmt = appendonly.logged(stmt, log, self._next_seq())
        if isinstance(stmt, CreateTableAs) and stmt.temporary and _reads_private(stmt.select):
            return self._checkpointed(stmt, what)
        if isinstance(stmt, CreateTableAs) and stmt.temporary:
            stmt = sq.run_owned(stmt)
        self._track(stmt)  # before it runs: a run stopped while a view is being cached still drops it
        result = _ArrowResult(self.arrow(stmt, what, params))
        if isinstance(stmt, DropObject) and stmt.table.schema is None:
            self.working.discard(stmt.table.name)
        return result

    def change(self, stmts: Sequence[sa.Update | sa.Delete], what: str) -> None:
        """Changes of the run's own table (``sq.private``) as one copy swapped in (``sq.rewritten``): a cohort night's
        members change twice at each of three steps, and each copy is the whole table (10M census: a night's
        leavers and forgotten people 33 and 24 s apart).  Callers send a step's ``DELETE`` before its ``UPDATE`` where
        either order gives the same rows: Spark pushes a filter down through the projection below it, and one above
        an ``UPDATE``'s flag would join the flag's subquery again (the 1M census's copy of its leavers and forgotten
        people broadcast the night's rows four times and ran out of the driver's memory)."""
        if len(stmts) > 1 and all(sq.is_private(stmt.table) for stmt in stmts):
            for step in sq.rewritten(*stmts):
                self.arrow(step, what)
            return
        super().change(stmts, what)

    def replace(self, table: sa.Table, rows: sa.Select[Any], scratch: sa.Table, what: str) -> None:
        """A private table's rows replaced as one copy swapped in (``sq.replaced``): the 10M census's members relabeled
        for a move of the series' node were two copies, the rows written beside the table and copied back."""
        if not sq.is_private(table):
            super().replace(table, rows, scratch, what)
            return
        for step in sq.replaced(table, rows):
            self.arrow(step, what)

    def _track(self, stmt: Any) -> None:
        name = None
        if isinstance(stmt, CreateTableAs) and stmt.temporary:
            name = stmt.table.name
        elif isinstance(stmt, sa.schema.CreateTable) and "TEMPORARY" in stmt.element._prefixes:
            name = stmt.element.name
        if name is not None:
            self.working.add(name)
            self.renamed.setdefault(name, f"{name}_{self.marker}")

    def _checkpointed(self, stmt: CreateTableAs, what: str) -> _ArrowResult:
        """A working table read from a private table (``queries.ddl.private``) keeps its rows, not a plan that reads
        the table: the table's next change swaps it (``sq.rewritten``), and dropping or renaming a table uncaches
        every cached plan that reads it, which would then read the new rows, or files no longer there."""
        self._track(stmt)
        with self._timed(what), _active(self.spark):
            frame = self._sql(stmt.select, what)
            try:
                frame.localCheckpoint(eager=True).createOrReplaceTempView(self.view_name(stmt.table.name))
            except Exception as exc:
                raise self.fail(exc, what) from None
        return _ArrowResult(_pa().table({}))

    def _delete_from_working(self, stmt: sa.Delete, what: str) -> _ArrowResult:
        """A view cannot be deleted from: it becomes the rows it keeps (computed and cached again)."""
        name = _working_name(stmt.table)
        assert name is not None  # ``execute`` sends only a working view's DELETE here
        kept = self._sql(kept_rows(stmt), what)
        try:
            kept.createOrReplaceTempView(self.view_name(name))
        except Exception as exc:
            raise self.fail(exc, what) from None
        self.execute(CacheTable(name), what)
        return _ArrowResult(_pa().table({}))

    def rows(self, stmt: Any, what: str = "running a query") -> list[tuple[Any, ...]]:
        return _ArrowResult(self.arrow(stmt, what)).all()

    def row_chunks(
        self, stmt: Any, what: str = "running a query", size: int = 100_000
    ) -> Iterator[list[tuple[Any, ...]]]:
        """Spark Connect hands the result over as one Arrow table: its rows as Python tuples a slice at a time."""
        table = self.arrow(stmt, what)
        for lo in range(0, table.num_rows, size):
            yield _ArrowResult(table.slice(lo, size)).all()

    def _log_of(self, table: Any) -> sa.Table | None:
        """The append-only log behind a catalog table (``veil.queries.appendonly``), else ``None``."""
        if not isinstance(table, sa.Table) or table.schema is None or not appendonly.stored_as_log(table):
            return None
        key = (table.schema, table.name)
        if key not in self.logs:
            log = appendonly.log_table(table)
            self.logs[key] = log if self._exists(log) else None
        return self.logs[key]

    def _exists(self, table: sa.TableClause) -> bool:
        try:
            return bool(self.spark.catalog.tableExists(DIALECT.identifier_preparer.format_table(table)))
        except Exception as exc:
            raise self.fail(exc, f"looking for table {table.name!r}") from None

    def _next_seq(self) -> int:
        """Strictly increasing within the run, and above every earlier run's (nanoseconds since the epoch)."""
        with self._lock:
            self.seq = max(self.seq + 1, time.time_ns())
            return self.seq

    def relations(self, schema: str) -> dict[str, str]:
        """Name → ``BASE TABLE`` or ``VIEW`` of the catalog's tables and views in ``schema`` (no session views)."""
        self._count()
        try:
            if not self.spark.catalog.databaseExists(DIALECT.identifier_preparer.quote(schema)):
                return {}
            found = self.spark.catalog.listTables(DIALECT.identifier_preparer.quote(schema))
        except Exception as exc:
            raise self.fail(exc, f"listing schema {schema!r}") from None
        return {t.name: ("VIEW" if t.tableType == "VIEW" else "BASE TABLE") for t in found if not t.isTemporary}

    def has_relation(self, schema: str, name: str) -> bool:
        """One catalog lookup (``tableExists``), where ``relations`` fetches every table of the schema from the Hive
        metastore (0.03 s against 0.1–0.3 s)."""
        self._count()
        return self._exists(relation(name, schema))

    def has_schema(self, schema: str) -> bool:
        self._count()
        try:
            return bool(self.spark.catalog.databaseExists(DIALECT.identifier_preparer.quote(schema)))
        except Exception as exc:
            raise self.fail(exc, f"looking for schema {schema!r}") from None

    def scalar(self, stmt: Any, what: str = "running a query") -> Any:
        return self.execute(stmt, what).scalar()

    def columns(
        self,
        stmt: sa.Select[Any],
        what: str = "fetching counts",
        params: dict[str, Any] | None = None,
        narrow: bool = False,
    ) -> dict[str, np.ndarray]:
        """Columns as numpy arrays: integers as int64 (``narrow`` too), columns holding NULLs as object arrays."""
        table = self.arrow(stmt, what, params)
        return {name: _numpy(col) for name, col in zip(table.column_names, table.columns)}

    def factors(self, stmt: sa.Select[Any], what: str = "fetching rows") -> dict[str, Factor]:
        """Each column dictionary-encoded by Arrow: the Python objects made are the distinct values alone; each
        column's Arrow buffers go as its codes come (the 1M census's grouped source: 74 MiB of Arrow)."""
        table = self.arrow(stmt, what)
        names, columns = table.column_names, list(table.columns)
        del table
        factors: dict[str, Factor] = {}
        for k, name in enumerate(names):
            factors[name] = _factor(columns[k])
            columns[k] = None
        return factors

    def sizing(self, count: sa.Select[Any], what: str) -> int | None:
        """``None``: Spark Connect hands a result over whole (``row_chunks``), so the count, a Spark job of its own
        (0.4 s a night for the ledger's cells at 1M rows), would save no copy."""
        return None

    def numbered(
        self, recount: Recount, chunk: int, what: str
    ) -> tuple[list[list[tuple[Any, int]]], Iterator[dict[str, np.ndarray]]]:
        """The recount's cells fetched as values in one statement (``Recount.values``: cells, not rows) and each
        column numbered here as Arrow dictionary-encodes it — one Spark job instead of one a column and a join of
        them all (docs/spark.md §9)."""
        table = self.arrow(recount.values, what)
        columns = [name for name in table.column_names if name != "n"]
        factors = [_factor(table.column(name)) for name in columns]
        numbers = [[(value, k + 1) for k, value in enumerate(values)] for _, values in factors]
        codes = {name: factor[0].astype(np.int64) + 1 for name, factor in zip(columns, factors)}  # NULL's -1: 0
        codes["n"] = _numpy(table.column("n"))
        total = table.num_rows
        return numbers, ({k: v[lo : lo + chunk] for k, v in codes.items()} for lo in range(0, total, max(chunk, 1)))

    def source_columns(self, schema: str | None, table: str) -> list[tuple[str, str, int | None, int | None]]:
        """Name and type of every column of ``schema.table`` from the Spark catalog (no
        ``information_schema``); an empty list when the catalog has no such table."""
        self._count()
        try:
            name = DIALECT.identifier_preparer.format_table(relation(table, schema))
            if not self.spark.catalog.tableExists(name):
                return []
            found = self.spark.catalog.listColumns(name)
        except Exception as exc:
            raise self.fail(exc, f"reading the columns of {table!r}") from None
        return [(c.name, source_type(c.dataType), None, None) for c in found]

    def bulk_load(self, table: sa.Table, rows: Sequence[Sequence[Any]], what: str) -> None:
        """Rows travel as one Arrow batch; a working view becomes itself plus the rows, a catalog
        table gets them appended."""
        if not rows:
            return
        names = list(table.c.keys())
        log = self._log_of(table)
        if log is not None:  # an append-only catalog table: the rows go to its log, in one append
            seq = self._next_seq()
            day = appendonly.day_of(seq)
            table, rows, names = log, [(*r, seq, day) for r in rows], [*names, appendonly.SEQ, appendonly.DAY]
        pa = _pa()
        try:
            frame = self.spark.createDataFrame(
                pa.table(
                    {n: pa.array([r[i] for r in rows], type=_arrow_type(table.c[n].type)) for i, n in enumerate(names)}
                )
            )
            self._count()
            target = self._dialect.identifier_preparer.format_table(table)
            with self._timed(what):
                if _working_name(table) in self.working:
                    self.spark.table(target).unionByName(frame).createOrReplaceTempView(self.view_name(table.name))
                else:
                    frame.write.insertInto(target)
        except BackendError:
            raise
        except Exception as exc:
            raise self.fail(exc, what) from None

    def commit(self) -> None:
        """Spark has no multi-statement transactions: every statement is already in effect."""

    def rollback(self) -> None:
        """Nothing to undo (see ``commit``)."""

    @contextmanager
    def held_here(self) -> Iterator[None]:
        """Spark compiles a plan's whole-stage code once per session, and a run is one session: the grouped source,
        a new session's first statement, runs interpreted (the 1M census's: 3.3-3.9 s compiled, 2.1-2.6 s
        interpreted; run again in the same session, 1.3-2.0 s either way).  Only that one: a run interpreted throughout
        coded the 10M census 15-17 s slower, and a 1M release gained nothing (docs/spark.md §9)."""
        self._codegen("false")
        try:
            yield
        finally:
            self._codegen("true")

    def _codegen(self, on: str) -> None:
        try:
            self.spark.conf.set("spark.sql.codegen.wholeStage", on)
        except Exception as exc:
            raise self.fail(exc, "setting how the session runs its statements") from None

    def settle(self) -> None:
        """Nothing to end (see ``commit``): Spark frees a dropped view's cached rows on its own."""

    def _recover(self) -> None:
        pass

    def discard(self, tables: Sequence[str], what: str) -> None:
        """Nothing now: a run's working views are dropped, and their cached rows freed, when its session ends
        (``close``)."""

    def ensure_transaction(self) -> None:
        pass

    def begin_snapshot(self) -> None:
        """Spark reads each table as it is when a query runs (no snapshot across statements)."""

    def _interrupt(self) -> None:
        """Ask the server to stop every operation of this session (a signal came while the client waited)."""
        self.spark.interruptAll()

    def close(self) -> None:
        """Stop what this session still runs (a view being cached when a run is stopped), drop its views (freeing
        their cached rows) and end the server-side session."""
        with contextlib.suppress(Exception):
            self.spark.interruptAll()
        for name in sorted(self.working):
            self._drop_view(name)
        self.working.clear()
        with contextlib.suppress(Exception):
            self.spark.stop()

    def _drop_view(self, name: str) -> None:
        """Drop working view ``name``, trying again while the server still winds down what ``interruptAll``
        stopped (a stopped run that left its base cached held the cluster's memory until the session expired)."""
        for attempt in range(DROP_TRIES):
            try:
                found = self.spark.catalog.dropTempView(self.view_name(name))
                # the SIGTERM test shows these lines: a view the session no longer had cannot uncache its rows
                log.debug("dropped working view %s%s", self.view_name(name), "" if found else ": not in the session")
                return
            except Exception as exc:  # grpc and pyspark errors alike; the run is ending either way
                log.debug("dropping working view %s (try %d): %s", name, attempt + 1, _reason(exc))
                time.sleep(DROP_PAUSE * (attempt + 1))
        log.warning("could not drop working view %s: Spark frees it when the session expires", self.view_name(name))


class _ArrowResult:
    """The little of SQLAlchemy's result API callers use, over an Arrow table."""

    def __init__(self, table: pa.Table) -> None:
        self.table = table

    def keys(self) -> list[str]:
        return list(self.table.column_names)

    def all(self) -> list[tuple[Any, ...]]:
        return list(zip(*(c.to_pylist() for c in self.table.columns)))

    fetchall = all

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self.all())

    def scalar(self) -> Any:
        if self.table.num_rows == 0 or self.table.num_columns == 0:
            return None
        return self.table.column(0)[0].as_py()


def _address(url: str) -> tuple[str, int]:
    """Host and port of ``sc://host[:port][/;param=value...]`` (port 15002 by default)."""
    m = re.fullmatch(r"sc://(\[[^\]]+\]|[^:/;\[\]]+)(?::(\d+))?(/.*)?", url)
    if not m:
        raise BackendError(f"not a Spark Connect URL: {url.split(';', 1)[0]!r} (expected sc://host:15002)")
    return m.group(1).strip("[]"), int(m.group(2) or 15002)


def _reads_private(select: Any) -> bool:
    return any(sq.is_private(t) for t in find_tables(select))


@contextmanager
def _active(spark: Any) -> Iterator[None]:
    """``spark`` as this thread's active session meanwhile.  pyspark hands a checkpointed frame to the thread's active
    session, else the process's default one (``SparkSession.active()`` in ``proto_to_remote_cached_dataframe``), not
    to the session that made it: where another session was opened first (a notebook's, the tests' ``twins``), the
    frame's view was asked of that one, which holds no such checkpoint (``DATAFRAME_NOT_FOUND``), and the frame, once
    collected, released its checkpoint there too.  ``_active_session`` is pyspark 4.3's thread-local of it."""
    local = type(spark)._active_session
    before = getattr(local, "session", None)
    local.session = spark
    try:
        yield
    finally:
        local.session = before


def _working_name(table: Any) -> str | None:
    return table.name if getattr(table, "schema", None) is None else None


def _few_retries(spark: Any) -> None:
    """Ride out a few seconds of unavailability, not the client's default ten minutes."""
    from pyspark.sql.connect.client.retries import DefaultPolicy

    spark.client.set_retry_policies([DefaultPolicy(max_retries=5, max_backoff=5000)])


def _reason(exc: BaseException) -> str:
    """One line from a pyspark or grpc error."""
    code = getattr(exc, "code", None)
    status = code() if callable(code) else getattr(exc, "getGrpcStatusCode", lambda: None)()
    if status is not None and getattr(status, "name", "") in ("UNAVAILABLE", "DEADLINE_EXCEEDED"):
        return "the Spark Connect server is unreachable (connection lost)"
    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
    return lines[0] if lines else type(exc).__name__


def _pa() -> Any:
    """pyarrow (the spark extra's: present once ``_connect_module`` let a session open)."""
    import pyarrow

    return pyarrow


@cache
def _arrow_types() -> list[tuple[type, Any]]:
    pa = _pa()
    return [
        (sa.SmallInteger, pa.int16()),
        (sa.BigInteger, pa.int64()),
        (sa.Integer, pa.int32()),
        (sa.Double, pa.float64()),
        (sa.REAL, pa.float32()),
        (sa.Float, pa.float64()),
        (sa.Boolean, pa.bool_()),
        (sa.Date, pa.date32()),
        (sa.DateTime, pa.timestamp("us", tz="UTC")),
        (sa.String, pa.string()),
        (sa.LargeBinary, pa.binary()),
    ]


def _arrow_type(sa_type: Any) -> Any:
    """The Arrow type a bulk-loaded column travels as (Spark maps it to the dialect's SQL type)."""
    if isinstance(sa_type, sa.Numeric) and not isinstance(sa_type, sa.Float):
        return _pa().decimal128(sa_type.precision or 38, sa_type.scale or 0)
    for kind, arrow in _arrow_types():
        if isinstance(sa_type, kind):
            return arrow
    return None  # let Arrow infer (untyped columns)


def _naive_timestamps(table: pa.Table) -> pa.Table:
    """Spark's TIMESTAMP arrives zoned (session zone UTC); Veil works with naive UTC values, like DuckDB."""
    pa = _pa()
    for i, field in enumerate(table.schema):
        if pa.types.is_timestamp(field.type) and field.type.tz is not None:
            table = table.set_column(i, field.name, table.column(i).cast(pa.timestamp(field.type.unit)))
    return table


def _factor(col: pa.ChunkedArray) -> Factor:
    """The codes (``-1`` for NULL; int32, as Arrow's dictionary indices are: half the bytes of int64 for the 896,367
    groups of the 1M census's grouped source) and distinct values (as ``to_pylist`` gives them) of one column."""
    import pyarrow.compute as pc

    encoded = col.combine_chunks().dictionary_encode()
    codes = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False).astype(np.int32, copy=False)
    return codes, encoded.dictionary.to_pylist()


def _numpy(col: pa.ChunkedArray) -> np.ndarray:
    pa = _pa()
    if col.null_count == 0 and pa.types.is_integer(col.type):
        return col.to_numpy().astype(np.int64)
    if col.null_count == 0 and (pa.types.is_floating(col.type) or pa.types.is_boolean(col.type)):
        return col.to_numpy()
    return np.asarray(col.to_pylist(), dtype=object)


__all__ = ["SparkBackend", "SparkSQLSession"]
