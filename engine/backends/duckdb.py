"""Embedded DuckDB (the default): numpy fetches straight from the driver, bulk loads from registered numpy
columns.  A streamed result arrives a few vectors at a time: as columns through ``fetch_df_chunk`` where pandas
is installed (the notebook and dev extras), else as rows (``fetchmany``) turned into numpy columns — slower,
but pandas stays out of the runtime dependencies."""

from __future__ import annotations

import importlib.util
import itertools
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import sqlalchemy as sa
from sqlalchemy.dialects import registry

from veil import queries as q
from veil.backends import base, signalwatch
from veil.backends.base import Backend, Session
from veil.backends.scratch import Scratch, folder, parse_bytes
from veil.errors import BackendError, Interruption
from veil.hierarchy import real_value
from veil.queries import duckdb as qd
from veil.queries.nodes import ordered
from veil.registry import BACKENDS

# Where duckdb_engine's dialect is, said up front: SQLAlchemy would otherwise try ``sqlalchemy.dialects.duckdb``
# and then scan every installed distribution's entry points for it at each engine's creation (issue 36).
registry.register("duckdb", "duckdb_engine", "Dialect")

_frames = itertools.count()
MEMORY_LIMIT = "512MB"  # DuckDB's memory_limit when the URL sets none (``?memory_limit=4GB`` overrides)
SETTINGS = {"memory_limit": MEMORY_LIMIT, "allocator_background_threads": True}  # unless the URL sets them
_HAS_PANDAS = importlib.util.find_spec("pandas") is not None  # DuckDB's chunked columnar fetch needs it
VECTOR = 2048  # rows in one DuckDB vector (``fetch_df_chunk`` fetches whole vectors)
_HOLDER = re.compile(r"lock is held in (?P<program>.+?) \(PID (?P<pid>\d+)\)")
_VEIL = re.compile(r"(?:^|[\s/])veil(?:\.cli)?(?:\s|$)")  # `veil ...`, `.venv/bin/veil`, `python -m veil.cli`


@BACKENDS.register("duckdb")
class DuckDBBackend(Backend):
    name: ClassVar[str] = "DuckDB"
    advisory_locks: ClassVar[bool] = False
    grants: ClassVar[bool] = False
    # A version's rows are appended together, so the zonemaps of their row groups find them as fast as an ART
    # index would; the index cost the commit of a 10M-row version 1.8-2.1 s (docs/publication.md §1), and the
    # ledger's index on open cells 0.85 s of a first version's (migrations/versions/0005_ledger_index.py).
    version_indexes: ClassVar[bool] = False
    default_schema: ClassVar[str] = "main"
    view_dependencies: ClassVar[bool] = False  # DuckDB drops a view other views still read
    block_tests: ClassVar[bool] = True
    exclusive_writer: ClassVar[bool] = True  # one process writes a DuckDB file, and only through Veil's connection
    text_groups_spill: ClassVar[bool] = False  # out of memory at 512 MB (queries.publication.insert_blocks)

    def __init__(self, url: sa.URL) -> None:
        super().__init__(url)
        exact_numbers(self.engine.dialect)

    def interruption(self, exc: BaseException) -> Interruption | None:
        """DuckDB runs a signal's handler while it executes a statement, swallows what the handler raised and
        raises ``RuntimeError("Query interrupted")`` (an ``InterruptException`` in some versions) instead."""
        orig = getattr(exc, "orig", None) or exc
        text = str(orig)
        if (
            type(orig).__name__ == "InterruptException"
            or text == "Query interrupted"
            or text.startswith("INTERRUPT Error")
        ):
            return Interruption()
        return None

    def busy(self, exc: BaseException) -> str | None:
        """A DuckDB file is open either in one process that may write or in processes that only read, never
        both: name the process holding it (DuckDB gives its PID) and what to do."""
        text = str(getattr(exc, "orig", exc))
        if "conflicting lock" not in text.lower() and "could not set lock" not in text.lower():
            return None
        found = _HOLDER.search(text)
        command = (_command_line(found["pid"]) or found["program"]) if found else ""
        holder = f"PID {found['pid']} ({command})" if found else "another process"
        if _VEIL.search(command):
            return (
                f"the DuckDB file {self.url.database} is in use by another veil run, {holder}; let it "
                "finish, or pass --wait SECONDS to retry until the file is free"
            )
        return (
            f"the DuckDB file {self.url.database} is locked by {holder}; a DuckDB file is open either in "
            "one process that writes or in processes that only read, never both: close that connection "
            "(analysts read a warehouse a job writes through short-lived read-only connections or a "
            "published copy: docs/how-to/nightly-job.md), or pass --wait SECONDS to retry until the file is free"
        )

    def engine_options(self) -> dict[str, Any]:
        """DuckDB's settings unless the URL sets them (``SETTINGS``): its buffer manager gets ``MEMORY_LIMIT``
        (working tables and sorts beyond it spill to DuckDB's temporary directory, so a run's memory does not
        grow with the table; DuckDB's own default is 80% of the machine's RAM), and its allocator purges what
        queries freed in background threads instead of keeping it until later statements allocate (10M census,
        a second release version: peak 986–988 MiB against 1,047–1,137 MiB without)."""
        options = super().engine_options()
        config = {k: v for k, v in SETTINGS.items() if k not in self.url.query}
        if config:
            options["connect_args"] = {"config": config}
        return options

    def connect(self) -> sa.Connection:
        """With Veil's settings; when this process already has the file open with other settings (a notebook's
        own connection), DuckDB shares that database only with the same settings: join it as it is."""
        try:
            return super().connect()
        except sa.exc.SQLAlchemyError as exc:
            if "different configuration" not in str(exc) or all(k in self.url.query for k in SETTINGS):
                raise
        self.engine.dispose()
        self.engine: sa.Engine = sa.create_engine(self.url, **super().engine_options())
        exact_numbers(self.engine.dialect)
        return self.engine.connect()

    def make_session(self, conn: sa.Connection) -> Session:
        """A session whose connection prints no progress bar: DuckDB prints one on stdout for a statement over
        2 s wherever it takes the process for interactive (``python -c``, a notebook), and stdout carries the
        ``--json`` document (a connection's setting: DuckDB refuses it as a database option)."""
        session = DuckDBSession(self, conn)
        session.execute(q.SetOption("enable_progress_bar", False), "setting up the session")
        return session

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session on an existing DuckDB file: connecting to a missing one would create an empty database,
        so a typo in ``url`` would look like a missing table (``create_missing``: ``veil seed`` creates it).  A
        SIGINT or SIGTERM interrupts its statements even while DuckDB's workers hold them (``signalwatch``)."""
        database = self.url.database or ""
        if database and not database.startswith((":memory:", "md:", "motherduck:")) and not self.create_missing:
            if not Path(database).exists():
                raise BackendError(
                    f"the DuckDB file {database} does not exist; check [source] url (a relative "
                    "path is relative to the config file's folder), or create it with `veil seed` "
                    "or `veil demo`"
                )
        signalwatch.install()
        with super().session() as session:
            yield session


class DuckDBSession(Session):
    _scratch: Scratch | None = None

    @property
    def raw(self) -> Any:
        return self.conn.connection.driver_connection

    def execute(self, stmt: Any, what: str = "running a query", params: Any = None) -> sa.CursorResult[Any]:
        """A statement a SIGINT or SIGTERM interrupts even while DuckDB's workers hold it (``signalwatch``)."""
        with signalwatch.watching(self.raw):
            return super().execute(stmt, what, params)

    def fail(self, exc: BaseException, what: str) -> BackendError | Interruption:
        """The driver's error in one line; one at DuckDB's memory limit says which limit and how to raise it."""
        error = super().fail(exc, what)
        if not isinstance(error, BackendError) or "Out of Memory Error" not in str(error):
            return error
        limit = self.backend.url.query.get("memory_limit") or MEMORY_LIMIT
        return BackendError(
            f"{error} — DuckDB works within memory_limit = {limit} (Veil's default {MEMORY_LIMIT}); "
            "give it more in the [source] url, e.g. ?memory_limit=2GB"
        )

    def scratch(self, needed: int, threshold: int | None = None) -> str | None:
        """Where working tables of about ``needed`` bytes go (``veil.backends.scratch``): the alias of this
        session's scratch database — attached on first need — when ``needed`` exceeds ``threshold`` (default:
        DuckDB's memory limit) and the warehouse is a file; ``None``: temporary tables."""
        if self._scratch is not None:
            return self._scratch.alias
        what = "attaching a scratch database for the working tables"
        where = folder(self.backend.url.database, self.backend.url.query.get("temp_directory"))  # type: ignore[arg-type]
        if where is None:
            return None
        limit = (
            threshold
            if threshold is not None
            else parse_bytes(str(self.scalar(q.current_setting("memory_limit"), what)))
        )
        if needed <= limit:
            return None
        scratch = Scratch.new(where)
        self.execute(q.Attach(scratch.alias, str(scratch.path)), what)
        self._scratch = scratch
        path = str(self.scalar(q.current_setting("search_path"), what) or "main")
        self.execute(q.SetSearchPath([*path.split(","), f"{scratch.alias}.main"]), what)
        return scratch.alias

    def drop_scratch(self) -> None:
        """The session is ending: its scratch database detached (what is still open rolled back first) and
        its file deleted."""
        scratch, self._scratch = self._scratch, None
        if scratch is None:
            return
        self._recover()
        try:
            self.conn.execute(q.Attach(scratch.alias))
            self.conn.commit()
        except sa.exc.SQLAlchemyError:
            self._recover()
        scratch.remove()

    def columns(
        self,
        stmt: sa.Select[Any],
        what: str = "fetching counts",
        params: dict[str, Any] | None = None,
        narrow: bool = False,
    ) -> dict[str, np.ndarray]:
        compiled = stmt.compile(dialect=self.dialect)
        sql = str(compiled)
        values = {**compiled.params, **(params or {})}
        positional = [values[name] for name in (compiled.positiontup or [])]
        self.statements += 1
        try:
            self.ensure_transaction()
            data = self.raw.execute(sql, positional).fetchnumpy()
        except Exception as exc:  # duckdb.Error and SQLAlchemy errors alike
            self._recover()
            raise self.fail(exc, what) from None
        return {k: _column(v, narrow) for k, v in data.items()}

    def stream(
        self,
        stmt: sa.Select[Any],
        order_by: Sequence[str],
        chunk: int,
        what: str = "fetching counts",
        settle: bool = True,
    ) -> Iterator[dict[str, np.ndarray]]:
        """One query ordered by ``order_by`` (empty: in any order), its result fetched ``chunk`` rows at a time
        (DuckDB sorts out of core under its memory limit): one chunk in Python at a time, in that order."""
        compiled = ordered(stmt, order_by).compile(dialect=self.dialect)
        positional = [compiled.params[name] for name in (compiled.positiontup or [])]
        chunk = max(chunk, 1)
        vectors = -(-chunk // VECTOR)
        self.statements += 1
        drained = False
        try:
            try:
                self.ensure_transaction()
                self.raw.execute(str(compiled), positional)
            except Exception as exc:
                self._recover()
                raise self.fail(exc, what) from None
            while True:
                try:
                    data = self._next_vectors(vectors)
                except Exception as exc:
                    drained = True
                    self._recover()
                    raise self.fail(exc, what) from None
                rows = len(next(iter(data.values()))) if data else 0
                if not rows:
                    drained = True
                    if settle:
                        self.settle()  # end the transaction: DuckDB lets go of what the query spilled
                    return
                for lo in range(0, rows, chunk):  # whole vectors arrive; hand out ``chunk`` rows at a time
                    yield {k: v[lo : lo + chunk] for k, v in data.items()}
        finally:
            if not drained:  # the consumer stopped early: let the connection go of the open result
                try:
                    self.raw.execute(
                        str(qd.release_result().compile(dialect=self.dialect, compile_kwargs={"literal_binds": True}))
                    ).fetchall()
                except Exception:
                    pass

    def _next_vectors(self, vectors: int) -> dict[str, np.ndarray]:
        """The next ``vectors`` vectors of the open (integer) result as numpy columns; empty columns at its end."""
        if _HAS_PANDAS:
            # imported here, by Python, before DuckDB would: DuckDB reports any failed import of pandas — a Ctrl-C
            # landing during it included — as "'pandas' is required for this operation but it was not installed"
            importlib.import_module("pandas")  # optional (not a runtime dependency): only where it is installed
            frame = self.raw.fetch_df_chunk(vectors)
            return {k: _column(frame[k].to_numpy()) for k in frame.columns}
        names = [d[0] for d in self.raw.description]
        rows = self.raw.fetchmany(vectors * VECTOR)
        table = np.asarray(rows, dtype=np.int64).reshape(len(rows), len(names))
        return {name: table[:, j] for j, name in enumerate(names)}

    def bulk_load(self, table: sa.Table, rows: Sequence[Sequence[Any]], what: str) -> None:
        if not rows:
            return
        frame = {}
        for i, col in enumerate(table.c.keys()):
            arr = np.empty(len(rows), dtype=object)
            arr[:] = [r[i] for r in rows]
            frame[col] = arr
        self._insert_frame(table, frame, what)

    def load_columns(self, table: sa.Table, columns: Mapping[str, Any], what: str, chunk: int | None = None) -> None:
        """Numpy columns registered with DuckDB as they are (no Python rows), ``chunk`` (default ten times
        ``LOAD_CHUNK``) rows per INSERT; a value given once for every row is a bound constant of the INSERT.
        DuckDB keeps every registered array alive until the transaction ends, so callers pass narrow arrays
        and never a repeated column of Python objects."""
        chunk = chunk or 10 * base.LOAD_CHUNK
        arrays = {k: v for k, v in columns.items() if isinstance(v, np.ndarray)}
        constants = {k: v for k, v in columns.items() if k not in arrays}
        total = len(next(iter(arrays.values()))) if arrays else 0
        for lo in range(0, total, chunk):
            self._insert_frame(table, {c: a[lo : lo + chunk] for c, a in arrays.items()}, what, constants)

    def _insert_frame(
        self, table: sa.Table, frame: dict[str, np.ndarray], what: str, constants: Mapping[str, Any] | None = None
    ) -> None:
        """INSERT INTO ``table`` the columns of ``frame`` (registered with DuckDB for the statement) and
        ``constants`` (bound, typed as ``table``'s columns)."""
        name = f"veil_frame_{next(_frames)}"
        try:
            self.raw.register(name, frame)
        except Exception as exc:
            raise self.fail(exc, what) from None
        try:
            self.execute(qd.insert_frame(table, name, list(frame), constants), what)
        finally:
            try:
                self.raw.unregister(name)
            except Exception:
                pass

    def load_frame(self, table: sa.TableClause, frame: Any, what: str) -> None:
        """Create ``table`` from a pandas DataFrame (the Python API's source), column types from its dtypes:
        the frame is registered with DuckDB, copied by one ``CREATE TABLE AS``, and unregistered."""
        name = f"veil_frame_{next(_frames)}"
        try:
            self.raw.register(name, frame)
        except Exception as exc:
            raise self.fail(exc, what) from None
        try:
            self.execute(qd.table_from_frame(table, name), what)
        finally:
            try:
                self.raw.unregister(name)
            except Exception:
                pass


class _Real(sa.REAL):
    """REAL (float4) read as PostgreSQL's driver reads it (``real_value``), not widened to 64 bits."""

    def result_processor(self, dialect: sa.Dialect, coltype: Any) -> Any:
        return None if self.asdecimal else _real


def _real(value: Any) -> Any:
    return None if value is None else real_value(value)


def exact_numbers(dialect: sa.Dialect) -> None:
    """Numbers cross the driver as PostgreSQL's give them.  duckdb_engine leaves SQLAlchemy's
    ``supports_native_decimal`` off, so every ``Decimal`` bound to a NUMERIC went as a float and every DECIMAL
    read came back through one (DECIMAL(38,0) 10^38 - 1 as 99999999999999997748809823456034029568,
    DECIMAL(18,3) 999999999999999.999 as 1000000000000000.000), although DuckDB binds and returns ``Decimal``
    exactly; and a REAL comes back widened (``0.1`` as ``0.10000000149011612``), where PostgreSQL gives ``0.1``."""
    dialect.supports_native_decimal = True
    dialect.colspecs = {**dialect.colspecs, sa.REAL: _Real}


def _command_line(pid: str) -> str:
    """The holder's command line from /proc (Linux), shortened; empty where there is none."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    line = " ".join(part.decode(errors="replace") for part in raw.split(b"\0") if part)
    return line if len(line) <= 80 else line[:77] + "..."


def _column(v: np.ndarray, narrow: bool = False) -> np.ndarray:
    """A fetched column: integers as int64 (``narrow``: signed ones as fetched — a node's TINYINT codes stay
    1 byte; a 10M census's t-closeness optimum, 4.8M cells, came to 307 MB wide), the rest unmasked."""
    if v.dtype.kind == "i" and narrow:
        return v
    return v.astype(np.int64) if v.dtype.kind in "iu" else _unmask(v)


def _unmask(v: np.ndarray) -> np.ndarray:
    if isinstance(v, np.ma.MaskedArray):
        if v.mask is np.ma.nomask or not v.mask.any():
            return np.asarray(v.data)
        out = np.ma.filled(v.astype(object), None)
        return np.asarray(out, dtype=object)
    return v
