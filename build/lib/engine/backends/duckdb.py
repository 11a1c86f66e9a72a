"""Embedded DuckDB (the default): numpy fetches straight from the driver, bulk loads from registered numpy
columns (no pandas on the hot path)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import sqlalchemy as sa

from engine.backends.base import Backend, Session

_frames = itertools.count()


class DuckDBBackend(Backend):
    name: ClassVar[str] = "DuckDB"
    temp_schema: ClassVar[str] = "temp"
    advisory_locks: ClassVar[bool] = False
    grants: ClassVar[bool] = False
    default_schema: ClassVar[str] = "main"
    fingerprint_style: ClassVar[str] = "duckdb"

    def busy(self, exc: BaseException) -> str | None:
        text = str(getattr(exc, "orig", exc))
        if "lock" in text.lower() and ("conflicting" in text.lower() or "could not set lock" in text.lower()):
            pid = text.split("PID", 1)[1].split(")")[0].strip() if "PID" in text else "another process"
            return (f"the DuckDB file {self.url.database} is in use by another process (PID {pid}); "
                    "another veil run may be under way — try again later or pass --wait")
        return None

    def make_session(self, conn: sa.Connection) -> Session:
        return DuckDBSession(self, conn)


class DuckDBSession(Session):
    @property
    def raw(self) -> Any:
        return self.conn.connection.driver_connection

    def columns(self, stmt: sa.Select[Any], what: str = "fetching counts",
                params: dict[str, Any] | None = None) -> dict[str, np.ndarray]:
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
        return {k: (v.astype(np.int64) if v.dtype.kind in "iu" else _unmask(v)) for k, v in data.items()}

    def bulk_load(self, table: sa.Table, rows: Sequence[Sequence[Any]], what: str) -> None:
        if not rows:
            return
        name = f"veil_frame_{next(_frames)}"
        names = list(table.c.keys())
        frame = {}
        for i, col in enumerate(names):
            arr = np.empty(len(rows), dtype=object)
            arr[:] = [r[i] for r in rows]
            frame[col] = arr
        try:
            self.raw.register(name, frame)
        except Exception as exc:
            raise self.fail(exc, what) from None
        try:
            src = sa.table(name, *(sa.column(c) for c in names))
            self.execute(table.insert().from_select(names, sa.select(*src.c)), what)
        finally:
            try:
                self.raw.unregister(name)
            except Exception:
                pass


def _unmask(v: np.ndarray) -> np.ndarray:
    if isinstance(v, np.ma.MaskedArray):
        if v.mask is np.ma.nomask or not v.mask.any():
            return np.asarray(v.data)
        out = v.astype(object).filled(None)
        return np.asarray(out, dtype=object)
    return v
