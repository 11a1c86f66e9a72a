"""The per-node counting statements: dimension tables, the base frequency set, node ``GROUP BY`` s, rollups.

The source is scanned once into ``veil_base_raw`` (one row per distinct QI × sensitive combination with its
count) and re-coded in ``veil_base`` through the dimension tables into integer codes at every level; every
node's ``GROUP BY`` aggregates ``veil_base`` — or the materialized counts of a finer node — picking each QI's
column at the node's level, with no joins:

>>> lay = Layout(heights=(1, 2), sensitive_count=1)
>>> print(node_counts(lay, (1, 2)).compile())
SELECT b.q0_1 AS g0, b.q1_2 AS g1, b.s0, sum(b.n) AS n 
FROM veil_base AS b GROUP BY b.q0_1, b.q1_2, b.s0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import aggregate_order_by

from veil.queries.ddl import CreateTableAs

BASE_RAW = "veil_base_raw"
BASE = "veil_base"


@dataclass(frozen=True)
class Layout:
    """Names of the working tables for quasi-identifiers of the given ``heights`` and ``sensitive_count``
    sensitive columns: dimension tables ``veil_dim_i(level_j, code_j)`` and the wide base frequency set
    ``veil_base(q{i}_{j}…, s{k}…, n)`` holding, for every QI ``i``, its code at every level ``j``."""

    heights: tuple[int, ...]
    sensitive_count: int

    @property
    def qi_count(self) -> int:
        return len(self.heights)

    def levels(self, floor: Sequence[int | None] | None = None) -> list[list[int]]:
        """Per QI, the levels a table holds: ``floor[i]..h_i`` (none for a projected-out QI)."""
        floor = floor if floor is not None else [0] * self.qi_count
        return [list(range(f, h + 1)) if f is not None else [] for f, h in zip(floor, self.heights)]

    def wide(self, name: str, floor: Sequence[int | None] | None = None) -> sa.TableClause:
        cols = [f"q{i}_{j}" for i, lv in enumerate(self.levels(floor)) for j in lv]
        cols += [f"s{k}" for k in range(self.sensitive_count)] + ["n"]
        return sa.table(name, *(sa.column(c) for c in cols))

    def base(self) -> sa.TableClause:
        return self.wide(BASE)

    def dim(self, i: int) -> sa.TableClause:
        h = self.heights[i]
        cols = [sa.column(f"level_{j}") for j in range(h + 1)] + [sa.column(f"code_{j}") for j in range(h + 1)]
        return sa.table(f"veil_dim_{i}", *cols)

    def sensitive_domain(self, j: int) -> sa.TableClause:
        return sa.table(f"veil_sdom_{j}", sa.column("value"), sa.column("code"))

    def node_table(self, ident: int, floor: Sequence[int | None]) -> sa.TableClause:
        return self.wide(f"veil_node_{ident}", floor)


def dim_table(i: int, height: int, level0_type: Any) -> sa.Table:
    """DDL of dimension table ``i``: ``level_0`` typed like the source column, ``level_1..h`` text, and an
    integer ``code_j`` per level (Veil groups by codes; labels are joined back only for output)."""
    md = sa.MetaData()
    cols = [sa.Column("level_0", level0_type)]
    cols += [sa.Column(f"level_{j}", sa.Text) for j in range(1, height + 1)]
    cols += [sa.Column(f"code_{j}", sa.Integer) for j in range(height + 1)]
    return sa.Table(f"veil_dim_{i}", md, *cols, prefixes=["TEMPORARY"])


def sensitive_domain_table(j: int, value_type: Any) -> sa.Table:
    md = sa.MetaData()
    return sa.Table(f"veil_sdom_{j}", md, sa.Column("value", value_type), sa.Column("code", sa.Integer),
                    prefixes=["TEMPORARY"])


def base_raw(source: sa.Table, qis: Sequence[str], sensitive: Sequence[str], drop_nulls: bool,
             null_checked: Sequence[str] = ()) -> CreateTableAs:
    """One scan of the source: ``veil_base_raw(q0.., s0.., x0.., n)`` grouped by every QI and counted
    sensitive column; ``x{j}`` is 1 where ``null_checked[j]`` (a column published but not counted) is NULL."""
    cols = [source.c[c].label(f"q{i}") for i, c in enumerate(qis)]
    cols += [source.c[c].label(f"s{j}") for j, c in enumerate(sensitive)]
    flags = [sa.case((source.c[c].is_(None), 1), else_=0).label(f"x{j}") for j, c in enumerate(null_checked)]
    keys = [source.c[c] for c in (*qis, *sensitive)]
    stmt = sa.select(*cols, *flags, sa.func.count().label("n")).select_from(source).group_by(*keys, *flags)
    if drop_nulls:
        stmt = stmt.where(*(k.is_not(None) for k in keys))
    return CreateTableAs(sa.table(BASE_RAW), stmt)


def raw_null_rows(flag: str) -> sa.Select[Any]:
    """Rows of ``veil_base_raw`` whose NULL flag ``flag`` is set."""
    raw = sa.table(BASE_RAW, sa.column(flag), sa.column("n"))
    return sa.select(sa.func.coalesce(sa.func.sum(raw.c.n), 0)).where(raw.c[flag] == 1)


def raw_values(column: str) -> sa.Select[Any]:
    """Distinct values of one ``veil_base_raw`` column with their row counts (NULL included)."""
    raw = sa.table(BASE_RAW, sa.column(column), sa.column("n"))
    return sa.select(raw.c[column].label("value"), sa.func.sum(raw.c.n).label("n")).group_by(raw.c[column])


def raw_rows() -> sa.Select[Any]:
    raw = sa.table(BASE_RAW, sa.column("n"))
    return sa.select(sa.func.coalesce(sa.func.sum(raw.c.n), 0))


TINY_CODES = 127      # codes up to this fit a TINYINT (1 byte) where the backend has one
SMALL_CODES = 32_767  # codes up to this fit a SMALLINT (2 bytes)


class TinyInteger(sa.types.UserDefinedType):  # type: ignore[type-arg]
    """``TINYINT`` (DuckDB, Spark SQL; signed, -128..127)."""

    cache_ok = True

    def get_col_spec(self, **_kw: Any) -> str:
        return "TINYINT"


def code_type(cardinality: int, tiny: bool = False) -> Any:
    """The narrowest integer type for codes ``0..cardinality-1`` (``tiny``: the backend has ``TINYINT``).  The
    wide base frequency set holds a code per QI level per cell, so its width is mostly these codes: what the
    warehouse keeps, spills and hashes per node.

    >>> code_type(20), code_type(20, tiny=True).get_col_spec(), code_type(40_000)
    (SmallInteger(), 'TINYINT', Integer())
    """
    if tiny and cardinality - 1 <= TINY_CODES:
        return TinyInteger()
    return sa.SmallInteger() if cardinality - 1 <= SMALL_CODES else sa.Integer()


def base_coded(layout: Layout, cardinalities: Sequence[Sequence[int]] | None = None,
               sensitive_sizes: Sequence[int] | None = None, tiny: bool = False) -> CreateTableAs:
    """``veil_base``: ``veil_base_raw`` with every QI replaced by its codes at all levels (the dimension
    tables joined once, so node queries need no joins) and every sensitive value by its code.

    With ``cardinalities`` (per QI, per level) and ``sensitive_sizes`` each code is cast to ``code_type``."""
    def narrow(code: Any, cardinality: int | None) -> Any:
        return code if cardinality is None else sa.cast(code, code_type(cardinality, tiny))

    raw_cols = [f"q{i}" for i in range(layout.qi_count)] + [f"s{j}" for j in range(layout.sensitive_count)]
    raw = sa.table(BASE_RAW, *(sa.column(c) for c in raw_cols), sa.column("n")).alias("r")
    select_cols: list[Any] = []
    joined: Any = raw
    for i, h in enumerate(layout.heights):
        d = layout.dim(i).alias(f"d{i}")
        joined = joined.join(d, raw.c[f"q{i}"] == d.c.level_0)
        select_cols += [narrow(d.c[f"code_{j}"], cardinalities[i][j] if cardinalities else None).label(f"q{i}_{j}")
                        for j in range(h + 1)]
    for j in range(layout.sensitive_count):
        sd = layout.sensitive_domain(j).alias(f"v{j}")
        joined = joined.join(sd, raw.c[f"s{j}"] == sd.c.value)
        select_cols.append(narrow(sd.c.code, sensitive_sizes[j] if sensitive_sizes else None).label(f"s{j}"))
    return CreateTableAs(sa.table(BASE), sa.select(*select_cols, raw.c.n).select_from(joined))


@lru_cache(maxsize=64)
def _node_source(layout: Layout, source: str, floor: tuple[int | None, ...] | None) -> sa.Alias:
    """``layout.wide(source, floor)`` as ``b``, built once: a search issues one statement per node against the
    same few sources, and a wide table's column collection costs more than the rest of the statement."""
    return layout.wide(source, floor).alias("b")


def node_counts(layout: Layout, node: Sequence[int | None], floor: Sequence[int | None] | None = None,
                source: str = BASE) -> sa.Select[Any]:
    """The ``GROUP BY`` of lattice node ``node``: ``(g_i…, s_k…, n)`` with integer codes.

    ``node[i]`` is the level of QI ``i`` (``None``: projected out, no column).  ``source`` is ``veil_base``
    or the materialized counts of a finer node holding levels ``floor[i]..h_i`` (Incognito's rollup)."""
    src = _node_source(layout, source, None if floor is None else tuple(floor))
    keys = [src.c[f"q{i}_{lv}"].label(f"g{i}") for i, lv in enumerate(node) if lv is not None]
    keys += [src.c[f"s{k}"] for k in range(layout.sensitive_count)]
    return sa.select(*keys, sa.func.sum(src.c.n).label("n")).group_by(*keys)


def node_keys(layout: Layout, node: Sequence[int | None]) -> list[str]:
    """The block key columns ``g{i}`` of ``node_counts(layout, node)`` (QIs not projected out)."""
    return [f"g{i}" for i, lv in enumerate(node) if lv is not None]


def node_sizes(layout: Layout, node: Sequence[int | None], floor: Sequence[int | None] | None = None,
               source: str = BASE) -> sa.Select[Any]:
    """The block-size histogram of ``node``: ``(size, blocks)``, one row per distinct ``n(E)`` with the number
    of q*-blocks of that size, from the same source as ``node_counts`` (a few numbers per node, no block list).

    Everything size-only (k-anonymity, the rows below a model's ``min_block_size``, Σ n(E)², |T| / #blocks)
    follows from it: blocks of sizes 1, 1, 3 give ``(1, 2), (3, 1)``.

    >>> print(node_sizes(Layout(heights=(1, 2), sensitive_count=1), (1, None)).compile())
    SELECT e.size, count(*) AS blocks 
    FROM (SELECT sum(b.n) AS size 
    FROM veil_base AS b GROUP BY b.q0_1) AS e GROUP BY e.size ORDER BY e.size
    """
    src = _node_source(layout, source, None if floor is None else tuple(floor))
    keys = [src.c[f"q{i}_{lv}"] for i, lv in enumerate(node) if lv is not None]
    blocks = sa.select(sa.func.sum(src.c.n).label("size")).group_by(*keys).subquery("e")
    return (sa.select(blocks.c.size, sa.func.count().label("blocks"))
            .group_by(blocks.c.size).order_by(blocks.c.size))


UNDECIDED = 2  # a statistics verdict floating point cannot give: the node is evaluated from its histograms


def node_statistics(layout: Layout, node: Sequence[int | None], sensitive: int, tests: Sequence[tuple[str, float]],
                    floor: Sequence[int | None] | None = None, source: str = BASE,
                    tolerance: float = 1e-12) -> sa.Select[Any]:
    """Per-block verdicts of threshold tests on sensitive attribute ``s<sensitive>``'s histograms, counted per
    block size: ``(size, ok0…, blocks, level0…)`` — ``ok<k>`` is 1 (pass), 0 (fail) or ``UNDECIDED`` for test
    ``k``, ``level<k>`` the least statistic in the group.  A test is ``("distinct", l)`` (``m >= l``) or
    ``("entropy", l)`` (``exp(-Σ p ln p) >= l``; ``m >= l`` when the block's counts are all equal, else undecided
    where the entropy is within ``tolerance · (m + 8) · (1 + ln n)`` of ``ln l`` — a thousand times the error
    bound the numpy checker allows itself).  A few rows per node, no histogram.

    >>> lay = Layout(heights=(1,), sensitive_count=1)
    >>> print(node_statistics(lay, (1,), 0, [("distinct", 2.0)]).compile(compile_kwargs={"literal_binds": True}))
    SELECT e.size, CASE WHEN (e.m >= 2.0) THEN 1 ELSE 0 END AS ok0, count(*) AS blocks, min(CAST(e.m AS DOUBLE)) AS level0 
    FROM (SELECT sum(c.c) AS size, count(*) AS m, max(c.c) AS top, min(c.c) AS low, sum(CAST(c.c AS DOUBLE) * ln(CAST(c.c AS DOUBLE))) AS clogc 
    FROM (SELECT b.q0_1 AS g0, sum(b.n) AS c 
    FROM veil_base AS b GROUP BY b.q0_1, b.s0) AS c GROUP BY c.g0) AS e GROUP BY e.size, CASE WHEN (e.m >= 2.0) THEN 1 ELSE 0 END
    """
    src = _node_source(layout, source, None if floor is None else tuple(floor))
    keys = [src.c[f"q{i}_{lv}"].label(f"g{i}") for i, lv in enumerate(node) if lv is not None]
    cells = (sa.select(*keys, sa.func.sum(src.c.n).label("c"))
             .group_by(*(k.element for k in keys), src.c[f"s{sensitive}"]).subquery("c"))
    c = sa.cast(cells.c.c, sa.Double)
    blocks = (sa.select(sa.func.sum(cells.c.c).label("size"), sa.func.count().label("m"),
                        sa.func.max(cells.c.c).label("top"), sa.func.min(cells.c.c).label("low"),
                        sa.func.sum(c * sa.func.ln(c)).label("clogc"))
              .group_by(*(cells.c[k.name] for k in keys)).subquery("e"))
    flags, levels = [], []
    for kind, threshold in tests:
        flag, level = _statistic_test(blocks, kind, threshold, tolerance)
        flags.append(flag)
        levels.append(level)
    return (sa.select(blocks.c.size, *(f.label(f"ok{k}") for k, f in enumerate(flags)), sa.func.count().label("blocks"),
                      *(sa.func.min(v).label(f"level{k}") for k, v in enumerate(levels)))
            .group_by(blocks.c.size, *flags))


def _statistic_test(blocks: Any, kind: str, threshold: float, tolerance: float) -> tuple[Any, Any]:
    """(verdict, level) of one test on the per-block aggregates ``blocks`` (size, m, top, low, clogc)."""
    m = sa.cast(blocks.c.m, sa.Double)
    if kind == "distinct":
        return sa.case((blocks.c.m >= threshold, 1), else_=0), m
    if kind != "entropy":
        raise ValueError(f"no statistic {kind!r}")
    size = sa.cast(blocks.c.size, sa.Double)
    entropy = sa.func.ln(size) - blocks.c.clogc / size
    uniform = blocks.c.top == blocks.c.low
    bound = math.log(threshold)
    margin = tolerance * (m + 8) * (1 + sa.func.ln(size))  # the checkers' error bound on the entropy, ×1000
    verdict = sa.case((sa.and_(uniform, blocks.c.m >= threshold), 1), (uniform, 0),
                      (entropy > bound + margin, 1), (entropy < bound - margin, 0), else_=UNDECIDED)
    return verdict, sa.case((uniform, m), else_=sa.func.exp(entropy))


def materialize(layout: Layout, ident: int, node: Sequence[int | None],
                floor: Sequence[int | None] | None = None, source: str = BASE) -> CreateTableAs:
    """Materialize ``node``'s counts in wide form (its levels and every level above) for later rollups."""
    src = layout.wide(source, floor)
    cols = [src.c[f"q{i}_{j}"] for i, levels in enumerate(layout.levels(node)) for j in levels]
    sens = [src.c[f"s{k}"] for k in range(layout.sensitive_count)]
    stmt = sa.select(*cols, *sens, sa.func.sum(src.c.n).label("n")).group_by(*cols, *sens)
    return CreateTableAs(layout.node_table(ident, node), stmt)


def packed(select: sa.Select[Any], chunk: int = 1 << 20, order_by: Sequence[str] | None = None) -> sa.Select[Any]:
    """PostgreSQL: an all-integer result as rows of big-endian int8 blobs, one per column and ``chunk`` rows
    of the result (``string_agg(int8send(c), '')`` grouped by ``row_number() / chunk``), so a client reads
    millions of cells without building a Python object per value and no blob nears the 1 GB limit.  All
    aggregates of one group see its rows in the same order.

    With ``order_by`` the rows are numbered in that order, each blob holds its rows in it and the blobs come
    in order: a client streaming the result (a server-side cursor) meets a block's cells contiguously."""
    inner = select.subquery("r")
    empty: Any = sa.literal(b"", sa.LargeBinary)
    if order_by is None:
        chunk_of = sa.func.row_number().over() // sa.literal(chunk, sa.BigInteger)
        sub = sa.select(*inner.c, chunk_of.label("chunk")).subquery("p")
    else:
        rn = sa.func.row_number().over(order_by=[inner.c[k] for k in order_by]).label("rn")
        ranked = sa.select(*inner.c, rn).subquery("q")
        chunk_of = (ranked.c.rn - 1) // sa.literal(chunk, sa.BigInteger)
        sub = sa.select(*ranked.c, chunk_of.label("chunk")).subquery("p")
        empty = aggregate_order_by(empty, sub.c.rn)
    stmt = (sa.select(*(sa.func.string_agg(sa.func.int8send(sa.cast(sub.c[c], sa.BigInteger)), empty).label(c)
                        for c in inner.c.keys()))
            .group_by(sub.c.chunk))
    return stmt.order_by(sub.c.chunk) if order_by is not None else stmt
