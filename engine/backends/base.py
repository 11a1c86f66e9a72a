"""What every backend shares: one connection per run, statement execution, error translation.

The only place that executes SQL.  Statements arrive built (``veil.queries``); driver errors leave as
``BackendError`` with one readable line.  Backend differences are capability flags and small overrides on
the subclasses, never ``if name == ...`` branches elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar, TypeVar

import numpy as np
import sqlalchemy as sa

from veil import queries as q
from veil.errors import BackendError, BusyError, Interruption
from veil.queries.ddl import replaced
from veil.queries.nodes import ordered

T = TypeVar("T")
LOAD_CHUNK = 100_000  # rows per insert when loading columns


def parse_url(url: str) -> sa.URL:
    try:
        return sa.make_url(url)
    except sa.exc.ArgumentError:
        raise BackendError("the database URL is not a valid SQLAlchemy URL (check [source] url / url_env)") from None


def first_line(exc: BaseException) -> str:
    """The driver's own message, first line, without SQLAlchemy's decorations."""
    orig = getattr(exc, "orig", None) or exc
    text = str(orig).strip().splitlines()
    return text[0] if text else type(orig).__name__


class Backend:
    """A database Veil runs on.  Subclasses set the flags and override the few differing operations."""

    name: ClassVar[str] = "database"
    advisory_locks: ClassVar[bool] = False  # pg_try_advisory_lock; else the database file's own lock
    grants: ClassVar[bool] = False  # GRANT SELECT to roles
    default_schema: ClassVar[str] = ""
    # How a release is published: the name of a protocol of ``veil.release.publication.PUBLICATIONS`` —
    # "transactional" (one transaction per release, docs/publication.md) or "autocommit" (every statement commits
    # on its own: a table per version, verified, then the views switched, docs/spark.md)
    publication: ClassVar[str] = "transactional"
    lock_timeout: ClassVar[bool] = False  # set_config('lock_timeout'): give up waiting for a lock (release)
    view_dependencies: ClassVar[bool] = True  # DROP VIEW refuses while another view depends on it
    migrations: ClassVar[bool] = True  # Alembic can migrate the catalog (else it is created from its metadata)
    exclusive_writer: ClassVar[bool] = False  # a writing connection locks out every other (the file lock)
    block_tests: ClassVar[bool] = False  # threshold tests on histograms in SQL (queries.node_statistics)
    version_indexes: ClassVar[bool] = True  # index tables by version: publication's, ledger's (docs/publication.md)
    analyze: ClassVar[bool] = False  # working tables need ANALYZE before a join (the planner's statistics)
    # a base frequency set of at most this many cells is searched in memory (``[search] local_cells``): the 1M
    # census's 896,367 cells 1.3-4.3x faster than a statement a node on DuckDB, 2.3-7.3x on PostgreSQL, for more
    # memory bounded by the cells (docs/benchmarks.md, "DuckDB and PostgreSQL hold up to 2M cells")
    local_cells: ClassVar[int] = 1 << 21
    text_groups_spill: ClassVar[bool] = True  # a GROUP BY over text with tens of millions of groups spills to disk
    scratch_nodes: ClassVar[bool] = True  # materialized nodes go where the base goes (``Session.scratch``);
    #                                           else they stay temporary tables
    hub_ratio: ClassVar[float] = 0.1  # a hub holds at most this share of the base's cells (``veil.rollup``)
    batch_sizes: ClassVar[bool] = False  # a statement's fixed cost outweighs a pass over the data: a search's
    #                                           likely next nodes are counted together (``Warehouse.prefetch_sizes``)
    group_source: ClassVar[bool] = False  # the source grouped once, in parallel, before the two scans read it
    #                                           (``SourceScan.group``: GROUPING SETS and joins with temporary
    #                                           tables run in one process)
    create_missing: bool = False  # an embedded database file may be created (``veil seed``)

    def __init__(self, url: sa.URL) -> None:
        self.url = url
        try:
            self.engine = sa.create_engine(url, **self.engine_options())
        except (sa.exc.ArgumentError, ImportError, sa.exc.NoSuchModuleError) as exc:
            raise BackendError(f"cannot use database URL {self.display_url}: {first_line(exc)}") from None

    @classmethod
    def open(cls, url: str) -> Backend:
        """The backend for ``url``, a URL of a scheme it registered (``veil.registry.BACKENDS``)."""
        return cls(parse_url(url))

    def engine_options(self) -> dict[str, Any]:
        return {"poolclass": sa.pool.NullPool}

    @property
    def display_url(self) -> str:
        return self.url.render_as_string(hide_password=True)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """One connection for the whole run (temporary tables live as long as it)."""
        try:
            conn = self.connect()
        except sa.exc.SQLAlchemyError as exc:
            reason = self.busy(exc)
            if reason:
                raise BusyError(reason) from None
            raise BackendError(f"cannot connect to {self.name} at {self.display_url}: {first_line(exc)}") from None
        session = self.make_session(conn)
        try:
            yield session
        finally:
            session.drop_scratch()
            try:
                conn.rollback()
            except sa.exc.SQLAlchemyError:
                pass
            conn.close()
            self.engine.dispose()

    def connect(self) -> sa.Connection:
        return self.engine.connect()

    def make_session(self, conn: sa.Connection) -> Session:
        return Session(self, conn)

    def busy(self, exc: BaseException) -> str | None:
        """A one-line reason when ``exc`` means another process holds the database, else ``None``."""
        return None

    def interruption(self, exc: BaseException) -> Interruption | None:
        """An ``Interruption`` when the driver's error ``exc`` says a signal stopped the statement (the driver
        swallowed what the signal's handler raised), else ``None``."""
        return None


class Session:
    """Executes built statements on one connection; counts the queries it ran."""

    def __init__(self, backend: Backend, conn: sa.Connection) -> None:
        self.backend = backend
        self.conn = conn
        self.statements = 0
        self.snapshot = False  # a snapshot transaction is under way (a release): never commit on our own

    @property
    def dialect(self) -> sa.Dialect:
        return self.conn.dialect

    def fail(self, exc: BaseException, what: str) -> BackendError | Interruption:
        """What to raise for the driver's error ``exc`` while ``what``: one line naming both, or an
        ``Interruption`` when a signal stopped the statement (``Backend.interruption``)."""
        stopped = self.backend.interruption(exc)
        if stopped is not None:
            return stopped
        return BackendError(f"{self.backend.name} failed while {what}: {first_line(exc)}")

    def execute(self, stmt: Any, what: str = "running a query", params: Any = None) -> sa.CursorResult[Any]:
        self.statements += 1
        try:
            return self.conn.execute(stmt, params) if params is not None else self.conn.execute(stmt)
        except sa.exc.SQLAlchemyError as exc:
            self._recover()
            raise self.fail(exc, what) from None
        except Exception as exc:  # a driver's own error SQLAlchemy does not wrap (DuckDB's "Query interrupted")
            stopped = self.backend.interruption(exc)
            if stopped is None:
                raise
            self._recover()
            raise stopped from None

    def change(self, stmts: Sequence[sa.Update | sa.Delete], what: str) -> None:
        """``UPDATE`` s and ``DELETE`` s of one table, in order.  Here each runs in the transaction under way; a backend
        that copies a table to change it copies it once for them all (Spark: ``SparkSQLSession.change``)."""
        for stmt in stmts:
            self.execute(stmt, what)

    def replace(self, table: sa.Table, rows: sa.Select[Any], scratch: sa.Table, what: str) -> None:
        """``table``'s rows replaced by ``rows``, which may read it: here written into ``scratch`` and copied back in
        the transaction under way (``queries.ddl.replaced``); a backend that swaps a private table's copy in writes
        it once (Spark: ``SparkSQLSession.replace``)."""
        for stmt in replaced(table, rows, scratch):
            self.execute(stmt, what)

    def _recover(self) -> None:
        try:
            self.conn.rollback()
        except sa.exc.SQLAlchemyError:
            pass

    def ensure_transaction(self) -> None:
        """Let SQLAlchemy know a transaction is under way before the driver is used directly."""
        if not self.conn.in_transaction():
            self.conn.begin()

    def scratch(self, needed: int, threshold: int | None = None) -> str | None:
        """Where working tables of about ``needed`` bytes go: ``None``, the session's temporary tables (DuckDB
        may answer with an attached scratch database, ``veil.backends.scratch``)."""
        return None

    def drop_scratch(self) -> None:
        """The session is ending: drop where ``scratch`` put working tables (nothing here)."""

    @contextmanager
    def held_here(self) -> Iterator[None]:
        """The statement that fetches the source grouped, to be counted here from then on (``Options.held_first``):
        run once, the first of its kind in the session (nothing to do here)."""
        yield

    def discard(self, tables: Sequence[str], what: str) -> None:
        """Working tables read for the last time: dropped now, and what they held freed by the database
        (``settle``) before Python works on what was read from them."""
        for table in tables:
            self.execute(q.drop_table(table), what)
        self.settle()

    def begin_snapshot(self) -> None:
        """Start a transaction in which every read sees one snapshot of the database."""
        self.ensure_transaction()
        self.snapshot = True

    def settle(self) -> None:
        """Let the database free what dropped working tables and finished queries held (DuckDB keeps them until
        the transaction ends): commit, unless a snapshot transaction is under way on a backend where another
        connection could write meanwhile (``exclusive_writer``: the snapshot is the file's own lock; called only
        while a run reads and builds working tables, never between a release's writes)."""
        if not self.conn.in_transaction():
            return
        if not self.snapshot:
            self.commit()
        elif self.backend.exclusive_writer:
            self._end_transaction()  # still one reader's snapshot: nobody else can write the file

    def rows(self, stmt: Any, what: str = "running a query") -> list[tuple[Any, ...]]:
        return [tuple(r) for r in self.execute(stmt, what).all()]

    def source_columns(self, schema: str | None, table: str) -> list[tuple[str, str, int | None, int | None]]:
        """(name, data_type, numeric_precision, numeric_scale) of each column of ``schema.table``, in order,
        from ``information_schema``; empty when there is no such table."""
        return self.rows(q.columns_of(schema, table), "reading the source's columns")

    def row_chunks(
        self, stmt: Any, what: str = "running a query", size: int = 100_000
    ) -> Iterator[list[tuple[Any, ...]]]:
        """The rows of ``stmt`` in lists of at most ``size`` (a server-side cursor where the driver has one), so
        a big result is never held as Python rows at once."""
        self.statements += 1
        try:
            result = self.conn.execute(stmt, execution_options={"stream_results": True, "yield_per": size})
            try:
                for part in result.partitions(size):
                    yield [tuple(r) for r in part]
            finally:
                result.close()
        except sa.exc.SQLAlchemyError as exc:
            self._recover()
            raise self.fail(exc, what) from None

    def scalar(self, stmt: Any, what: str = "running a query") -> Any:
        """The first column of the first row (the whole result is fetched: DuckDB refuses other work on the
        connection, e.g. registering an array, while a result is pending)."""
        rows = self.execute(stmt, what).all()
        return rows[0][0] if rows else None

    def relations(self, schema: str) -> dict[str, str]:
        """Name → type (``BASE TABLE``, ``VIEW``, ...) of the tables and views in ``schema``."""
        return {n: t for n, t in self.rows(q.tables_in(schema), f"listing schema {schema!r}")}

    def has_schema(self, schema: str) -> bool:
        return bool(self.scalar(q.schema_exists(schema), f"looking for schema {schema!r}"))

    def has_relation(self, schema: str, name: str) -> bool:
        """Whether ``schema`` holds a table or view ``name`` (a backend whose catalog lists a schema slowly asks
        for the one name)."""
        return name in self.relations(schema)

    def create_schema(self, schema: str) -> None:
        """``schema``, created unless it exists, in the transaction under way: a run that fails or is rolled
        back leaves no schema behind (DuckDB and PostgreSQL undo DDL with the transaction)."""
        if not self.has_schema(schema):
            self.execute(q.CreateSchema(schema), f"creating schema {schema!r}")

    def columns(
        self,
        stmt: sa.Select[Any],
        what: str = "fetching counts",
        params: dict[str, Any] | None = None,
        narrow: bool = False,
    ) -> dict[str, np.ndarray]:
        """Run a query and return its columns as numpy arrays (integer columns as int64; ``narrow``: signed
        integer columns as wide as the database typed them, where the driver keeps the types)."""
        result = self.execute(stmt, what, params=params)
        names = list(result.keys())
        data = result.fetchall()
        if not data:
            return {n: np.zeros(0, dtype=np.int64) for n in names}
        cols = list(zip(*data))
        return {n: _array(c) for n, c in zip(names, cols)}

    def factors(self, stmt: sa.Select[Any], what: str = "fetching rows") -> dict[str, Factor]:
        """Run a query and return each column factorized: the code of every row's value (``-1`` for NULL) and
        the distinct values as the driver gives them, in code order — values held once, whatever the rows."""
        result = self.execute(stmt, what)
        names = list(result.keys())
        data = result.fetchall()
        return {name: _factor([row[k] for row in data]) for k, name in enumerate(names)}

    def stream(
        self,
        stmt: sa.Select[Any],
        order_by: Sequence[str],
        chunk: int,
        what: str = "fetching counts",
        settle: bool = True,
    ) -> Iterator[dict[str, np.ndarray]]:
        """The integer result of ``stmt`` ordered by ``order_by`` (empty: in any order), as numpy columns of at most ``chunk`` rows each.

        Here the whole result is fetched once and sliced (backends without a cheaper way); DuckDB and PostgreSQL
        override it so that only one chunk is ever in the client.  ``settle=False``: the transaction is left as it
        is once the result is read (DuckDB otherwise settles it: never between a release's writes)."""
        data = self.columns(ordered(stmt, order_by), what)
        total = len(next(iter(data.values()))) if data else 0
        for lo in range(0, total, max(chunk, 1)):
            yield {k: v[lo : lo + chunk] for k, v in data.items()}

    def sizing(self, count: sa.Select[Any], what: str) -> int | None:
        """The rows a ``stream`` of some statement will bring, counted by ``count`` (one row, one column) so that
        the reader sizes its arrays once, or ``None`` where the backend fetches a result whole (the reader joins the
        chunks: a count would cost a statement and save no copy)."""
        return int(self.scalar(count, what))

    def numbered(
        self, recount: q.Recount, chunk: int, what: str
    ) -> tuple[list[list[tuple[Any, int]]], Iterator[dict[str, np.ndarray]]]:
        """A version's recount: each column's distinct values with their numbers (1, 2, …; 0 stands for NULL) and
        the cells as those numbers (``c<j>``) with their rows (``n``), in chunks of at most ``chunk`` cells.  Here
        the database numbers them (one statement a column) and the cells are streamed as integers, left in the
        transaction under way (mid-publication); a backend whose statements cost more than their rows numbers them
        as they arrive instead."""
        numbers = [[(value, int(number)) for value, number in self.rows(stmt, what)] for stmt in recount.numbers]
        return numbers, self.stream(recount.numbered, [], chunk, what, settle=False)

    def together(self, work: Sequence[Callable[[], T]]) -> list[T]:
        """Independent pieces of work — each a statement or a few, none reading what another writes — and their
        results in order.  Here one after another (one connection, one transaction); a backend whose every
        statement is a remote job of its own sends them at once (Spark: ``SparkSQLSession.together``).  Callers
        keep what must be ordered out of one call.

        >>> Session(None, None).together([lambda: 1, lambda: 2])  # type: ignore[arg-type]
        [1, 2]
        """
        return [piece() for piece in work]

    def bulk_load(self, table: sa.Table, rows: Sequence[Sequence[Any]], what: str) -> None:
        """Insert many rows at once (subclasses use COPY or a registered frame; never row by row)."""
        if rows:
            self.execute(table.insert(), what, params=[dict(zip(table.c.keys(), r)) for r in rows])

    def analyze(self, table: sa.TableClause, what: str) -> None:
        """Give the planner statistics on a working table just filled, where the backend needs them (``analyze``)."""
        if self.backend.analyze:
            self.execute(q.Analyze(table), what)

    def load_columns(self, table: sa.Table, columns: Mapping[str, Any], what: str, chunk: int | None = None) -> None:
        """Insert rows given as columns (numpy arrays of one length, or one value for every row), ``chunk``
        (default ``LOAD_CHUNK``) rows at a time, so a big load never exists as Python rows at once."""
        chunk = chunk or LOAD_CHUNK
        arrays = {k: v for k, v in columns.items() if isinstance(v, np.ndarray)}
        total = len(next(iter(arrays.values()))) if arrays else 0
        names = list(table.c.keys())
        for lo in range(0, total, chunk):
            part = [arrays[c][lo : lo + chunk].tolist() if c in arrays else None for c in names]
            n = min(chunk, total - lo)
            cols = [p if p is not None else [columns[c]] * n for p, c in zip(part, names)]
            self.bulk_load(table, list(zip(*cols)), what)

    def commit(self) -> None:
        self.snapshot = False
        self._end_transaction()

    def _end_transaction(self) -> None:
        try:
            self.conn.commit()
        except sa.exc.SQLAlchemyError as exc:
            self._recover()
            raise self.fail(exc, "committing") from None

    def rollback(self) -> None:
        self._recover()


Factor = tuple[np.ndarray, list[Any]]  # codes (int32 or int64, -1 for NULL) and the distinct values in code order


def _factor(values: Sequence[Any]) -> Factor:
    """>>> _factor(["b", None, "a", "b"])
    (array([ 0, -1,  1,  0]), ['b', 'a'])
    """
    seen: dict[Any, int] = {}
    codes = np.fromiter(
        (-1 if v is None else seen.setdefault(v, len(seen)) for v in values), dtype=np.int64, count=len(values)
    )
    return codes, list(seen)


def _array(values: Sequence[Any]) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype.kind in "iub":
        return arr.astype(np.int64)
    if arr.dtype.kind == "O":
        try:
            if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
                return np.asarray(values, dtype=np.int64)
        except (TypeError, OverflowError):
            pass
    return arr
