"""Embedded DuckDB (the default): numpy fetches straight from the driver, bulk loads from a frame."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import sqlalchemy as sa

from engine.backends.base import Backend, Session

_frames = itertools.count()


class DuckDBBackend(Backend):
    name: ClassVar[str] = "DuckDB"
    temp_schema: ClassVar[str] = "temp"
    advisory_locks: ClassVar[bool] = False
    grants: ClassVar[bool] = False
    default_schema: ClassVar[str] = "main"

    def make_session(self, conn: sa.Connection) -> Session:
        return DuckDBSession(self, conn)


class DuckDBSession(Session):
    @property
    def raw(self) -> Any:
        return self.conn.connection.driver_connection

    def columns(self, stmt: sa.Select[Any], what: str = "fetching counts") -> dict[str, np.ndarray]:
        compiled = stmt.compile(dialect=self.dialect)
        params = [compiled.params[name] for name in (compiled.positiontup or [])]
        self.statements += 1
        try:
            self.ensure_transaction()
            data = self.raw.execute(str(compiled), params).fetchnumpy()
        except Exception as exc:  # duckdb.Error and SQLAlchemy errors alike
            self._recover()
            raise self.fail(exc, what) from None
        return {k: (v.astype(np.int64) if v.dtype.kind in "iu" else _unmask(v)) for k, v in data.items()}

    def bulk_load(self, table: sa.Table, rows: Sequence[Sequence[Any]], what: str) -> None:
        if not rows:
            return
        name = f"veil_frame_{next(_frames)}"
        frame = pd.DataFrame.from_records(list(rows), columns=list(table.c.keys()))
        try:
            self.raw.register(name, frame)
        except Exception as exc:
            raise self.fail(exc, what) from None
        try:
            src = sa.table(name, *(sa.column(c) for c in table.c.keys()))
            self.execute(table.insert().from_select(list(table.c.keys()), sa.select(*src.c)), what)
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
