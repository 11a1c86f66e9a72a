"""The audit's statements: a generalized table (a published release, or any table as it stands) recounted
into cells in the warehouse, and the catalog rows a release audit and report read."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from veil.queries.catalog import Status

CELL_BATCH = 50_000  # cells fetched per round trip (server-side cursor on PostgreSQL)


def table_cells(schema: str | None, table: str, qis: Sequence[str], sensitive: Sequence[str]) -> sa.Select[Any]:
    """One row per distinct (quasi-identifiers…, sensitive values…) of ``schema.table`` with its count:
    columns ``q0..``, ``s0..``, ``n``.  Rows with a NULL sensitive value are left out (they reveal nothing)."""
    t = sa.table(table, *(sa.column(c) for c in (*qis, *sensitive)), schema=schema)
    keys = [t.c[c].label(f"q{i}") for i, c in enumerate(qis)] + [t.c[c].label(f"s{j}") for j, c in enumerate(sensitive)]
    stmt = (
        sa.select(*keys, sa.func.count().label("n"))
        .select_from(t)
        .where(*(t.c[c].is_not(None) for c in sensitive))
        .group_by(*(t.c[c] for c in (*qis, *sensitive)))
    )
    return stmt.execution_options(yield_per=CELL_BATCH)


def published_release(releases: sa.Table, name: str, version: int | None) -> sa.Select[Any]:
    """The catalog row of published version ``version`` of release ``name`` (``None``: the latest)."""
    r = releases
    stmt = sa.select(
        r.c.id,
        r.c.version,
        r.c.node,
        r.c.output_table,
        r.c.achieved,
        r.c.metrics,
        r.c.rows_read,
        r.c.rows_published,
        r.c.rows_suppressed,
        r.c.rows_dropped_null,
        r.c.published_at,
        r.c.config,
    ).where(r.c.name == name, r.c.status == Status.PUBLISHED.value)
    if version is not None:
        return stmt.where(r.c.version == version)
    return stmt.order_by(r.c.version.desc()).limit(1)


def evaluated_nodes(release_nodes: sa.Table, release_id: str) -> sa.Select[Any]:
    """Every node a release's search evaluated: node (JSON), passed, suppressed rows, metric."""
    n = release_nodes
    return sa.select(n.c.node, n.c.passed, n.c.suppressed_rows, n.c.metric).where(n.c.release_id == release_id)


def hierarchy_heights(hierarchies: sa.Table, release_id: str) -> sa.Select[Any]:
    """Each quasi-identifier's hierarchy height as the release loaded it."""
    h = hierarchies
    return sa.select(h.c.attribute, h.c.height).where(h.c.release_id == release_id)
