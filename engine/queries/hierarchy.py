"""The statements behind hierarchies that live in the warehouse and ``veil hierarchy``: a hierarchy table's
level columns, and a source column's distinct values with their row counts.

>>> print(hierarchy_rows("dims", "zip_levels", ["level_0", "level_1"]).compile())
SELECT dims.zip_levels.level_0, dims.zip_levels.level_1
FROM dims.zip_levels ORDER BY dims.zip_levels.level_0, dims.zip_levels.level_1
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa


def hierarchy_rows(schema: str | None, table: str, columns: Sequence[str]) -> sa.Select[Any]:
    """Every row of a hierarchy table: its value and level columns in the given order, sorted (so errors
    that number rows number them the same way on every run)."""
    t = sa.table(table, *(sa.column(c) for c in columns), schema=schema)
    cols = [t.c[c] for c in columns]
    return sa.select(*cols).order_by(*cols)


def value_counts(source: sa.Table, column: str) -> sa.Select[Any]:
    """Distinct values of one source column with their row counts (NULL included, as ``None``)."""
    col = source.c[column]
    return sa.select(col.label("value"), sa.func.count().label("n")).group_by(col)
