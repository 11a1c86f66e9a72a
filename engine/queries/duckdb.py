"""DuckDB-only statements: reading a frame registered with the connection (numpy columns, a pandas DataFrame)
into a table, and the trivial query that lets the connection go of a result left open."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from veil.queries.ddl import CreateTableAs


def release_result() -> sa.Select[Any]:
    """``SELECT 1``: run after a streamed result was left unread, so the connection lets go of it."""
    return sa.select(sa.literal(1))


def insert_frame(
    table: sa.Table, frame: str, columns: Sequence[str], constants: Mapping[str, Any] | None = None
) -> sa.Insert:
    """``INSERT INTO <table> SELECT …`` from the registered frame ``frame`` (its ``columns``) and ``constants``
    (values bound once, typed as ``table``'s columns), in ``table``'s column order.

    >>> t = sa.Table("t", sa.MetaData(), sa.Column("a", sa.Integer), sa.Column("b", sa.Text))
    >>> print(insert_frame(t, "veil_frame_0", ["a"], {"b": "x"}))
    INSERT INTO t (a, b) SELECT veil_frame_0.a, :param_1 AS b
    FROM veil_frame_0
    """
    constants = constants or {}
    src = sa.table(frame, *(sa.column(c) for c in columns))
    names = [c for c in table.c.keys() if c in columns or c in constants]  # noqa: SIM118 — iterates columns, not names
    cols = [src.c[c] if c in columns else sa.literal(constants[c], type_=table.c[c].type).label(c) for c in names]
    return table.insert().from_select(names, sa.select(*cols))


def table_from_frame(table: sa.TableClause, frame: str) -> CreateTableAs:
    """``CREATE TABLE <table> AS SELECT * FROM <frame>``: a registered DataFrame copied, its types kept."""
    return CreateTableAs(table, sa.select(sa.literal_column("*")).select_from(sa.table(frame)), temporary=False)
