"""PostgreSQL through psycopg 3: COPY for bulk loads, advisory locks, grants, and a work schema for big runs.

PostgreSQL never scans a temporary table in parallel (its pages live in the session's own buffers).  A run whose
base frequency set is large (``Session.scratch``: above ``WORK_THRESHOLD`` bytes) creates the base as an
``UNLOGGED`` table in a schema of its own, ``veil_work_<pid>_<start>`` (the server process's id and start, in
seconds), which parallel workers can scan; the session's search path finds it by name, and the schema is dropped
when the session ends.  Every session prices parallel plans to be chosen (``PARALLEL``).  The materialized nodes
stay temporary tables (``scratch_nodes``): each is read again and again, from the session's ``temp_buffers`` (1GB),
where an unlogged table competes for the server's shared buffers.  A schema left by a session that is gone
(a killed run) is dropped by the next run of the same user.  A user who may not create schemas keeps temporary
tables.

>>> work_schema(4242, 1764000000), owner_of("veil_work_4242_1764000000"), owner_of("veil_work_x")
('veil_work_4242_1764000000', (4242, 1764000000), None)
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

import sqlalchemy as sa

import numpy as np

from veil.backends.base import Backend, Session, first_line, parse_url
from veil.errors import Interruption
from veil.registry import BACKENDS
from veil.queries import (
    CreateSchema,
    DropSchema,
    backend_sessions,
    copy_from_stdin,
    current_setting,
    owned_schemas,
    packed,
    session_settings,
)

log = logging.getLogger("veil.backends.postgres")
# Per session, for node queries over millions of cells: hash aggregates and the temporary working tables stay in
# memory (PostgreSQL's defaults, 4MB and 8MB, spill a node's GROUP BY to disk), no JIT compilation (it costs more
# than it saves on Veil's short aggregates).
SETTINGS = {"work_mem": "256MB", "temp_buffers": "1GB", "jit": "off"}
WORK_PREFIX = "veil_work_"
QUERY_CANCELED = "57014"
CREATED_MEANWHILE = ("23505", "42P06")  # unique_violation (pg_namespace's index), duplicate_schema
WORK_THRESHOLD = 16 * 2**20  # base bytes above which the base goes to the run's work schema
# Parallel plans priced as free to start and to gather, so the scans of the source and of a base in the work schema
# go parallel (10M census, 2 cores: the statements reading the base 6-26% faster a round,
# bench/results/pg_parallel.json; priced as PostgreSQL does, size queries on an unlogged base were no faster than on
# a temporary one: that file as commit 158ffd6 left it).  From the session's start, not from the work schema's,
# for the statements that read the source: the planner takes a GROUP BY of its columns for a million groups (19,502
# in 10M resampled Adult), and at PostgreSQL's price gathering the workers' partial groups then looks dearer than
# one process hashing every row (that GROUP BY: 8.0-9.2 s in one process, 4.3-4.5 s with two workers).  Tables
# below ``min_parallel_table_scan_size`` (8MB) are never scanned in parallel, whatever the price.
PARALLEL = {"parallel_setup_cost": "0", "parallel_tuple_cost": "0"}


def work_schema(pid: int, started: int) -> str:
    return f"{WORK_PREFIX}{pid}_{started}"


def owner_of(schema: str) -> tuple[int, int] | None:
    """The ``(pid, started)`` of the session a work schema belongs to, or ``None`` for another name."""
    found = re.fullmatch(re.escape(WORK_PREFIX) + r"(\d+)_(\d+)", schema)
    return (int(found[1]), int(found[2])) if found else None


@BACKENDS.register("postgresql", "postgres")
class PostgresBackend(Backend):
    name: ClassVar[str] = "PostgreSQL"
    advisory_locks: ClassVar[bool] = True
    grants: ClassVar[bool] = True
    default_schema: ClassVar[str] = "public"
    lock_timeout: ClassVar[bool] = True
    block_tests: ClassVar[bool] = True
    analyze: ClassVar[bool] = True
    scratch_nodes: ClassVar[bool] = False  # read again and again, they stay in the session's temp_buffers
    # Hubs of at most 1% of the base's cells, not a tenth: PostgreSQL pays for every row a node query reads, so
    # more, smaller hubs beat fewer reads of the base (1M census, searches alternated in one session, two runs
    # each at 0.1 / 0.03 / 0.01: k 20.0, 19.3 / 18.9, 18.3 / 16.6, 15.9 s; entropy 24.5, 24.8 / 20.6, 21.9 /
    # 19.4, 19.7 s; t-closeness 29.1, 27.7 / 25.7, 26.3 / 24.0, 24.2 s; 0.003 and 0.001 slower again).
    hub_ratio: ClassVar[float] = 0.01
    group_source: ClassVar[bool] = True  # one parallel GROUP BY of the source, then the scans read it

    @classmethod
    def open(cls, url: str) -> Backend:
        return cls(parse_url(url).set(drivername="postgresql+psycopg"))  # the one driver Veil installs

    def engine_options(self) -> dict[str, Any]:
        return {"poolclass": sa.pool.NullPool, "connect_args": {"connect_timeout": 10}}

    def interruption(self, exc: BaseException) -> Interruption | None:
        """A statement cancelled on request (``57014 canceling statement due to user request``): the cancel
        psycopg sends when Ctrl-C lands while it waits, or ``pg_cancel_backend``; a statement timeout is an
        error like any other."""
        orig = getattr(exc, "orig", None) or exc
        if getattr(orig, "sqlstate", None) == QUERY_CANCELED and "user request" in str(orig):
            return Interruption(Interruption.last or f"PostgreSQL cancelled the statement ({first_line(exc)})")
        return None

    def make_session(self, conn: sa.Connection) -> Session:
        session = PostgresSession(self, conn)
        session.execute(session_settings({**SETTINGS, **PARALLEL}), "setting up the session")
        session.commit()
        return session


class PostgresSession(Session):
    _work: str | None = None
    _in_chunks = False  # within load_columns

    def create_schema(self, schema: str) -> None:
        """As ``Session.create_schema``; a run that creates the schema at the same moment (two first releases
        of different names) makes this one's CREATE fail once the other commits: a savepoint keeps the
        transaction, and the schema is there (PostgreSQL resolves names in the newest catalog, not in the
        transaction's snapshot)."""
        if self.has_schema(schema):
            return
        self.ensure_transaction()
        self.statements += 1
        try:
            with self.conn.begin_nested():
                self.conn.execute(CreateSchema(schema))
        except sa.exc.SQLAlchemyError as exc:
            if getattr(getattr(exc, "orig", None), "sqlstate", None) not in CREATED_MEANWHILE:
                self._recover()
                raise self.fail(exc, f"creating schema {schema!r}") from None

    def scratch(self, needed: int, threshold: int | None = None) -> str | None:
        """The run's work schema (module docstring), created on first need, when ``needed`` bytes exceed
        ``threshold`` (default ``WORK_THRESHOLD``); ``None``: temporary tables."""
        if self._work is not None:
            return self._work
        if needed <= (WORK_THRESHOLD if threshold is None else threshold):
            return None
        what = "creating the run's work schema"
        pid, started = self.rows(backend_sessions(own=True), what)[0]
        self._sweep(what)
        name = work_schema(int(pid), int(started))
        self.ensure_transaction()
        try:
            with self.conn.begin_nested():
                self.conn.execute(CreateSchema(name))
        except sa.exc.SQLAlchemyError as exc:  # no CREATE on the database: temporary tables serve
            log.info("working tables stay temporary: cannot create schema %s (%s)", name, first_line(exc))
            return None
        path = str(self.scalar(current_setting("search_path"), what) or "")
        quoted = self.dialect.identifier_preparer.quote_schema(name)
        self.execute(session_settings({"search_path": f"{path}, {quoted}" if path else quoted}), what)
        if not self.snapshot:
            self.commit()  # the schema and the search path outlive a failed statement's rollback
        self._work = name
        return name

    def _sweep(self, what: str) -> None:
        """Drop the work schemas this user owns whose session is gone."""
        live = {(int(p), int(s)) for p, s in self.rows(backend_sessions(), what)}
        for (schema,) in self.rows(owned_schemas(WORK_PREFIX), what):
            owner = owner_of(schema)
            if owner is None or owner in live:
                continue
            try:
                with self.conn.begin_nested():
                    self.conn.execute(DropSchema(schema))
            except sa.exc.SQLAlchemyError:  # another run dropped it first
                continue
            log.info("dropped schema %s, left by a run that ended without dropping it", schema)

    def drop_scratch(self) -> None:
        """The session is ending: its work schema dropped (what is still open rolled back first)."""
        work, self._work = self._work, None
        if work is None:
            return
        self._recover()
        try:
            self.conn.execute(DropSchema(work))
            self.conn.commit()
        except sa.exc.SQLAlchemyError:
            self._recover()  # the next run's sweep drops it

    def columns(
        self,
        stmt: sa.Select[Any],
        what: str = "fetching counts",
        params: dict[str, Any] | None = None,
        narrow: bool = False,
    ) -> dict[str, np.ndarray]:
        """Integer results (node counts) arrive packed: one int8 blob per column, decoded by numpy (int64 even
        when ``narrow``: the blobs are 8 bytes a value)."""
        result = self.execute(packed(stmt), what, params=params)
        names = list(result.keys())
        parts: dict[str, list[np.ndarray]] = {n: [] for n in names}
        for row in result:
            for name, blob in zip(names, row):
                parts[name].append(np.frombuffer(blob, dtype=">i8"))
        return {n: (np.concatenate(p).astype(np.int64) if p else np.zeros(0, dtype=np.int64)) for n, p in parts.items()}

    def stream(
        self,
        stmt: sa.Select[Any],
        order_by: Sequence[str],
        chunk: int,
        what: str = "fetching counts",
        settle: bool = True,
    ) -> Iterator[dict[str, np.ndarray]]:
        """One packed query ordered by ``order_by`` (empty: in any order) through a server-side cursor: each
        fetched row is one chunk of ``chunk`` result rows (int8 blobs decoded by numpy), so the client holds one
        chunk at a time."""
        self.statements += 1
        try:
            self.ensure_transaction()
            result = self.conn.execute(
                packed(stmt, chunk, order_by=list(order_by) or None),
                execution_options={"stream_results": True, "yield_per": 1},
            )
            names = list(result.keys())
            try:
                for row in result:
                    yield {n: np.frombuffer(blob, dtype=">i8").astype(np.int64) for n, blob in zip(names, row)}
            finally:
                result.close()
        except sa.exc.SQLAlchemyError as exc:
            self._recover()
            raise self.fail(exc, what) from None

    def begin_snapshot(self) -> None:
        """REPEATABLE READ: every statement of the release's transaction reads the same snapshot."""
        if self.conn.in_transaction():
            self.conn.commit()
        self.conn.execution_options(isolation_level="REPEATABLE READ")
        self.conn.begin()
        self.snapshot = True

    def bulk_load(self, table: sa.Table, rows: Sequence[Sequence[Any]], what: str) -> None:
        """``COPY`` the rows in; a temporary table loaded at once (not chunk by chunk through ``load_columns``,
        whose callers analyze what they join) is then analyzed: autovacuum never visits temporary tables, and
        without statistics the planner takes a dimension table for hundreds of rows and the join of eight of them
        with the source for 95 billion: it hashed the 10M-row source (8 batches on disk) and sorted the coded rows
        on disk (1 GB) to group them (``base_coded``, 10M resampled Adult: 34.4 s, 20.0 s with the dimension
        tables analyzed, PostgreSQL's peak private memory 744 MiB against 71; ``bench/results/pg_scan_explained.json``)."""
        if not rows:
            return
        statement = copy_from_stdin(table, list(table.c.keys()), self.dialect)
        self.statements += 1
        try:
            self.ensure_transaction()
            raw: Any = self.conn.connection.driver_connection  # psycopg; None once closed: fails below as any error
            with raw.cursor() as cur, cur.copy(statement) as copy:
                for row in rows:
                    copy.write_row(row)
        except Exception as exc:  # psycopg.Error and SQLAlchemy errors alike
            self._recover()
            raise self.fail(exc, what) from None
        if not self._in_chunks and "TEMPORARY" in getattr(table, "_prefixes", ()):
            self.analyze(table, what)

    def load_columns(self, table: sa.Table, columns: Mapping[str, Any], what: str, chunk: int | None = None) -> None:
        """As ``Session.load_columns``; its chunks are not analyzed one by one (``bulk_load``)."""
        self._in_chunks = True
        try:
            super().load_columns(table, columns, what, chunk)
        finally:
            self._in_chunks = False
