"""PostgreSQL through psycopg 3: COPY for bulk loads, advisory locks, grants."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import sqlalchemy as sa

import numpy as np

from veil.backends.base import Backend, Session
from veil.queries import copy_from_stdin, packed, session_settings

# Per session, for node queries over millions of cells: hash aggregates and the temporary working tables stay in
# memory (PostgreSQL's defaults, 4MB and 8MB, spill a node's GROUP BY to disk), no JIT compilation (it costs more
# than it saves on Veil's short aggregates).
SETTINGS = {"work_mem": "256MB", "temp_buffers": "1GB", "jit": "off"}


class PostgresBackend(Backend):
    name: ClassVar[str] = "PostgreSQL"
    temp_schema: ClassVar[str] = "pg_temp"
    advisory_locks: ClassVar[bool] = True
    grants: ClassVar[bool] = True
    default_schema: ClassVar[str] = "public"
    fingerprint_style: ClassVar[str] = "postgresql"
    lock_timeout: ClassVar[bool] = True
    block_tests: ClassVar[bool] = True
    analyze: ClassVar[bool] = True

    def engine_options(self) -> dict[str, Any]:
        return {"poolclass": sa.pool.NullPool, "connect_args": {"connect_timeout": 10}}

    def make_session(self, conn: sa.Connection) -> Session:
        session = PostgresSession(self, conn)
        session.execute(session_settings(SETTINGS), "setting up the session")
        session.commit()
        return session


class PostgresSession(Session):
    def columns(self, stmt: sa.Select[Any], what: str = "fetching counts",
                params: dict[str, Any] | None = None, narrow: bool = False) -> dict[str, np.ndarray]:
        """Integer results (node counts) arrive packed: one int8 blob per column, decoded by numpy (int64 even
        when ``narrow``: the blobs are 8 bytes a value)."""
        result = self.execute(packed(stmt), what, params=params)
        names = list(result.keys())
        parts: dict[str, list[np.ndarray]] = {n: [] for n in names}
        for row in result:
            for name, blob in zip(names, row):
                parts[name].append(np.frombuffer(blob, dtype=">i8"))
        return {n: (np.concatenate(p).astype(np.int64) if p else np.zeros(0, dtype=np.int64)) for n, p in parts.items()}

    def stream(self, stmt: sa.Select[Any], order_by: Sequence[str], chunk: int,
               what: str = "fetching counts", settle: bool = True) -> Iterator[dict[str, np.ndarray]]:
        """One packed query ordered by ``order_by`` (empty: in any order) through a server-side cursor: each
        fetched row is one chunk of ``chunk`` result rows (int8 blobs decoded by numpy), so the client holds one
        chunk at a time."""
        self.statements += 1
        try:
            self.ensure_transaction()
            result = self.conn.execute(packed(stmt, chunk, order_by=list(order_by) or None),
                                       execution_options={"stream_results": True, "yield_per": 1})
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
        if not rows:
            return
        statement = copy_from_stdin(table, list(table.c.keys()), self.dialect)
        self.statements += 1
        try:
            self.ensure_transaction()
            raw = self.conn.connection.driver_connection
            with raw.cursor() as cur, cur.copy(statement) as copy:
                for row in rows:
                    copy.write_row(row)
        except Exception as exc:  # psycopg.Error and SQLAlchemy errors alike
            self._recover()
            raise self.fail(exc, what) from None
