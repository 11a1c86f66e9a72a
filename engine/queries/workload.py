"""Statements of the workload metric (``veil.workload``, docs/workload.md): each query's cells, read once per
search from the source coded through the session's dimension tables — rolled up to the columns the query reads —
and the mean of a column's distinct values.

A query's cells carry the leaf codes of the quasi-identifiers it reads only (``read``); every QI's dimension table
is still joined, so that the rows are ``T``'s (a row whose QI value no hierarchy holds is in no cell, as in
``base_coded``).

>>> lay = Layout(heights=(1, 1), sensitive_count=0)
>>> src = sa.table("t", sa.column("zip"), sa.column("age"), sa.column("edu"), sa.column("hours"))
>>> print(workload_cells(lay, src, ["zip", "age"], [0], ["edu"], "hours").compile())
SELECT d0.code_0 AS q0, r.edu AS v0, count(*) AS n, sum(r.hours) AS s, sum(CASE WHEN (r.hours IS NULL) THEN :param_1 ELSE :param_2 END) AS nulls
FROM t AS r JOIN veil_dim_0 AS d0 ON r.zip = d0.level_0 JOIN veil_dim_1 AS d1 ON r.age = d1.level_0 GROUP BY d0.code_0, r.edu
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from veil.queries.nodes import Layout


def _coded(layout: Layout, source: Any, qis: Sequence[str]) -> tuple[Any, Any, list[Any]]:
    """The source (alias ``r``) joined to every QI's dimension table (``d{i}``): a row whose QI value the hierarchy
    does not hold — a NULL — finds no code and is left out, as ``base_coded`` leaves it out."""
    raw = source.alias("r")
    joined: Any = raw
    codes = []
    for i, name in enumerate(qis):
        d = layout.dim(i).alias(f"d{i}")
        joined = joined.join(d, raw.c[name] == d.c.level_0)
        codes.append(d.c.code_0)
    return raw, joined, codes


def workload_cells(
    layout: Layout,
    source: Any,
    qis: Sequence[str],
    read: Sequence[int],
    grouped: Sequence[str],
    summed: str | None,
    not_null: Sequence[str] = (),
) -> sa.Select[Any]:
    """One query's cells over the rows of ``T``: the leaf code ``q{i}`` of every QI ``i`` in ``read`` (the QIs the
    query reads; all of them for the cells a suppressed block is found in), the other columns it reads as they
    are (``v{k}``, NULL a value of its own), ``n`` rows, and for ``summed`` (a column outside both) its sum ``s``
    and its NULLs.  Rows with a NULL in ``not_null`` (the NULL policy's columns) are not in ``T``."""
    raw, joined, codes = _coded(layout, source, qis)
    kept = [codes[i] for i in read]
    values = [raw.c[c] for c in grouped]
    cols = [codes[i].label(f"q{i}") for i in read] + [v.label(f"v{k}") for k, v in enumerate(values)]
    cols.append(sa.func.count().label("n"))
    if summed is not None:
        x = raw.c[summed]
        cols += [sa.func.sum(x).label("s"), sa.func.sum(sa.case((x.is_(None), 1), else_=0)).label("nulls")]
    stmt = sa.select(*cols).select_from(joined)
    if kept or values:
        stmt = stmt.group_by(*kept, *values)
    if not_null:
        stmt = stmt.where(*(raw.c[c].is_not(None) for c in not_null))
    return stmt


def distinct_mean(
    layout: Layout, source: Any, qis: Sequence[str], column: str, not_null: Sequence[str] = ()
) -> sa.Select[Any]:
    """The mean of ``column``'s distinct values over the rows of ``T`` (a suppressed row's expected value of a
    column that is not a quasi-identifier, docs/workload.md), as a double.

    >>> lay = Layout(heights=(1,), sensitive_count=0)
    >>> print(distinct_mean(lay, sa.table("t", sa.column("zip"), sa.column("hours")), ["zip"], "hours").compile())
    SELECT avg(DISTINCT CAST(r.hours AS FLOAT)) AS m
    FROM t AS r JOIN veil_dim_0 AS d0 ON r.zip = d0.level_0
    """
    raw, joined, _ = _coded(layout, source, qis)
    stmt = sa.select(sa.func.avg(sa.distinct(sa.cast(raw.c[column], sa.Float))).label("m")).select_from(joined)
    if not_null:
        stmt = stmt.where(*(raw.c[c].is_not(None) for c in not_null))
    return stmt
