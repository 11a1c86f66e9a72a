"""The population's class sizes at a lattice node (journalist and marketer risk, docs/reidentification.md §3):
a population table holding the same quasi-identifier columns as the source, each column joined to the
run's dimension table (``veil_dim_i``, loaded by ``Warehouse.prepare``) and grouped by its level's code — the
same codes as the sample's blocks at that node, so the two are matched on codes, never on labels.

Population values the hierarchies do not list find no dimension row: ``population_unmatched`` counts those
rows (they are left out, and said so).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from veil.queries.nodes import dim_table
from veil.queries.source import source_table


def population_table(schema: str | None, table: str, types: Mapping[str, Any]) -> sa.Table:
    """The population table with the quasi-identifier columns typed like the source's."""
    return source_table(schema, table, dict(types))


def _joined(
    population: sa.Table, columns: Sequence[str], heights: Sequence[int], outer: bool
) -> tuple[Any, list[sa.Table]]:
    dims = [dim_table(i, h, population.c[c].type) for i, (c, h) in enumerate(zip(columns, heights))]
    joined: Any = population
    for c, d in zip(columns, dims):
        joined = joined.join(d, population.c[c] == d.c.level_0, isouter=outer)
    return joined, dims


def population_classes(
    population: sa.Table, columns: Sequence[str], heights: Sequence[int], node: Sequence[int]
) -> sa.Select[Any]:
    """``g0..g(d-1)`` (each quasi-identifier's code at ``node``) and ``n``, the population's rows per class."""
    joined, dims = _joined(population, columns, heights, outer=False)
    keys = [d.c[f"code_{level}"].label(f"g{i}") for i, (d, level) in enumerate(zip(dims, node))]
    return sa.select(*keys, sa.func.count().label("n")).select_from(joined).group_by(*keys)


def population_unmatched(population: sa.Table, columns: Sequence[str], heights: Sequence[int]) -> sa.Select[Any]:
    """The population's rows (all of them, and those with a quasi-identifier value no hierarchy lists)."""
    joined, dims = _joined(population, columns, heights, outer=True)
    missing = sa.or_(*[d.c.code_0.is_(None) for d in dims])
    return sa.select(
        sa.func.count().label("rows"),
        sa.func.coalesce(sa.func.sum(sa.case((missing, 1), else_=0)), 0).label("unmatched"),
    ).select_from(joined)
