"""The per-node counting statements: dimension tables, the base frequency set, node ``GROUP BY`` s, rollups.

The source's distinct values are read in one scan (``source_values``); a second scan codes every row through the
dimension tables into integer codes at every level and counts them in ``veil_base`` (``base_coded``); every
node's ``GROUP BY`` aggregates ``veil_base`` picking each QI's column at the node's level, with no joins:

>>> lay = Layout(heights=(1, 2), sensitive_count=1)
>>> print(node_counts(lay, (1, 2)).compile())
SELECT b.q0_1 AS g0, b.q1_2 AS g1, b.s0, sum(b.n) AS n
FROM veil_base AS b GROUP BY b.q0_1, b.q1_2, b.s0

or the materialized counts of a finer node (Incognito's rollup).  Those are narrow — one code column per QI,
at the node's level — so materializing a node costs what counting it costs; a coarser level is reached
through ``veil_up_{i}_{j}``, QI ``i``'s codes at level ``j`` with the codes above them (one row per code):

>>> print(node_counts(lay, (1, 2), (1, 1), source="veil_node_7").compile())
SELECT b.q0_1 AS g0, u1.u2 AS g1, b.s0, sum(b.n) AS n
FROM veil_node_7 AS b JOIN veil_up_1_1 AS u1 ON u1.c = b.q1_1 GROUP BY b.q0_1, u1.u2, b.s0
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.ext.compiler import compiles

from veil.queries import distances
from veil.queries.ddl import CreateTableAs, working_table

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

    def wide(self, name: str) -> sa.TableClause:
        """A table holding every QI's code at every level (``veil_base``)."""
        cols = [f"q{i}_{j}" for i, h in enumerate(self.heights) for j in range(h + 1)]
        cols += [f"s{k}" for k in range(self.sensitive_count)] + ["n"]
        return sa.table(name, *(sa.column(c) for c in cols))

    def base(self) -> sa.TableClause:
        return self.wide(BASE)

    def dim(self, i: int) -> sa.TableClause:
        h = self.heights[i]
        cols: list[sa.ColumnClause[Any]] = [sa.column(f"level_{j}") for j in range(h + 1)]
        cols += [sa.column(f"code_{j}") for j in range(h + 1)]
        return sa.table(f"veil_dim_{i}", *cols)

    def sensitive_domain(self, j: int) -> sa.TableClause:
        return sa.table(f"veil_sdom_{j}", sa.column("value"), sa.column("code"))

    def narrow(self, name: str, node: Sequence[int | None]) -> sa.TableClause:
        """A materialized node: ``q{i}_{level}`` for every QI not projected out, ``s{k}…``, ``n``."""
        cols = [f"q{i}_{lv}" for i, lv in enumerate(node) if lv is not None]
        cols += [f"s{k}" for k in range(self.sensitive_count)] + ["n"]
        return sa.table(name, *(sa.column(c) for c in cols))

    def node_table(self, ident: int, node: Sequence[int | None]) -> sa.TableClause:
        return self.narrow(f"veil_node_{ident}", node)

    def up(self, i: int, level: int) -> sa.TableClause:
        """``veil_up_{i}_{level}(c, u{level+1}…u{h})``: QI ``i``'s codes at ``level`` and the codes above them."""
        cols = ["c"] + [f"u{j}" for j in range(level + 1, self.heights[i] + 1)]
        return sa.table(f"veil_up_{i}_{level}", *(sa.column(c) for c in cols))


def dim_table(i: int, height: int, level0_type: Any) -> sa.Table:
    """DDL of dimension table ``i``: ``level_0`` typed like the source column, ``level_1..h`` text, and an
    integer ``code_j`` per level (Veil groups by codes; labels are joined back only for output).  ``code_0`` is
    the primary key: the codes above it depend on it, so PostgreSQL groups the base by the leaves' codes alone
    (``base_coded``; coding the 1M census 9-12% faster)."""
    md = sa.MetaData()
    cols = [sa.Column("level_0", level0_type)]
    cols += [sa.Column(f"level_{j}", sa.Text) for j in range(1, height + 1)]
    cols += [sa.Column(f"code_{j}", sa.Integer, primary_key=j == 0, autoincrement=False) for j in range(height + 1)]
    return sa.Table(f"veil_dim_{i}", md, *cols, prefixes=["TEMPORARY"])


def sensitive_domain_table(j: int, value_type: Any) -> sa.Table:
    md = sa.MetaData()
    return sa.Table(
        f"veil_sdom_{j}", md, sa.Column("value", value_type), sa.Column("code", sa.Integer), prefixes=["TEMPORARY"]
    )


GROUPED = "veil_source"  # the source's rows counted per combination of the columns Veil reads (``source_grouped``)
WEIGHT = "veil_rows"  # its count column


def source_grouped(source: sa.Table, columns: Sequence[str], weight: str = WEIGHT) -> sa.Select[Any]:
    """One scan of the source, grouped by every column Veil reads (NULLs a group of their own), each group with
    its rows in column ``weight`` (``WEIGHT``, or another name where a source column has that one):
    ``source_values`` and ``base_coded`` then read this instead of the source (their ``weight``).
    On PostgreSQL it is the one statement over the source that runs in parallel (a partial aggregate per worker):
    ``GROUPING SETS`` never do, nor do joins with the session's temporary dimension tables.

    >>> print(source_grouped(sa.table("t", sa.column("zip"), sa.column("dx")), ["zip", "dx"]))  # doctest: +NORMALIZE_WHITESPACE
    SELECT t.zip, t.dx, count(*) AS veil_rows
    FROM t GROUP BY t.zip, t.dx
    """
    cols = [source.c[c] for c in columns]
    return sa.select(*cols, sa.func.count().label(weight)).group_by(*cols)


def _rows(source: sa.FromClause, weight: str | None) -> Any:
    """``count(*)``, or over a grouped source (``source_grouped``) the sum of its rows: a ``BIGINT`` as count's,
    0 where there are none."""
    if not weight:
        return sa.func.count()
    return sa.cast(sa.func.coalesce(sa.func.sum(source.c[weight]), 0), sa.BigInteger)


def source_values(
    source: sa.Table, columns: Sequence[str], null_checked: Sequence[str] = (), weight: str | None = None
) -> sa.Select[Any]:
    """One scan of the source for everything Veil learns before coding it (``GROUPING SETS``: one set per column,
    and the empty set for the whole table): ``(v0.., k0.., n, x0.., complete)``.

    On the rows of column ``c``'s set ``k{c}`` is 0 (``GROUPING``: a NULL value is told from a column not
    grouped) and ``(v{c}, n)`` is one of its distinct values with its rows.  On the whole-table row (every ``k``
    1) ``n`` is the rows, ``x{j}`` the rows where ``null_checked[j]`` is NULL, ``complete`` the rows with no NULL
    in any column named.

    >>> src = sa.table("t", sa.column("zip"), sa.column("age"))
    >>> print(source_values(src, ["zip"], ["age"]).compile(compile_kwargs={"literal_binds": True}))
    SELECT t.zip AS v0, grouping(t.zip) AS k0, count(*) AS n, sum(CASE WHEN (t.age IS NULL) THEN 1 ELSE 0 END) AS x0, sum(CASE WHEN (t.zip IS NULL OR t.age IS NULL) THEN 0 ELSE 1 END) AS complete
    FROM t GROUP BY GROUPING SETS((t.zip), ())
    """
    cols = [source.c[c] for c in columns]
    checked = [source.c[c] for c in null_checked]
    one: Any = source.c[weight] if weight else 1
    nulls = [sa.func.sum(sa.case((c.is_(None), one), else_=0)).label(f"x{j}") for j, c in enumerate(checked)]
    complete = sa.func.sum(sa.case((sa.or_(*(c.is_(None) for c in cols + checked)), 0), else_=one))
    sets = sa.func.grouping_sets(*(sa.tuple_(c) for c in cols), sa.tuple_())
    return (
        sa.select(
            *(c.label(f"v{k}") for k, c in enumerate(cols)),
            *(sa.func.grouping(c).label(f"k{k}") for k, c in enumerate(cols)),
            _rows(source, weight).label("n"),
            *nulls,
            complete.label("complete"),
        )
        .select_from(source)
        .group_by(sets)
    )


def source_rows(source: sa.Table, weight: str | None = None) -> sa.Select[Any]:
    """The source's rows (``count(*)``; over a grouped source the sum of its ``weight``).

    >>> print(source_rows(sa.table("t", sa.column("zip"))))
    SELECT count(*) AS n
    FROM t
    """
    return sa.select(_rows(source, weight).label("n")).select_from(source)


def source_cells(
    source: sa.Table, columns: Sequence[str], null_checked: Sequence[str] = (), weight: str | None = None
) -> sa.Select[Any]:
    """The source's rows grouped by every column Veil counts, each ``null_checked`` column only as whether it is
    NULL: ``(v0.., x0.., n)``, ``v{k}`` column ``k``'s value (NULL a value of its own), ``x{j}`` whether
    ``null_checked[j]`` is NULL, ``n`` the rows.  Fetched whole where its groups fit in memory, it gives both
    what ``source_values`` scans and the base frequency set coded here (``veil.sourcecells``): Spark's own floor,
    one ``GROUP BY``, in place of a scan and a coding statement.

    >>> src = sa.table("t", sa.column("zip"), sa.column("dx"), sa.column("name"))
    >>> print(source_cells(src, ["zip", "dx"], ["name"]))  # doctest: +NORMALIZE_WHITESPACE
    SELECT t.zip AS v0, t.dx AS v1, t.name IS NULL AS x0, count(*) AS n
    FROM t GROUP BY t.zip, t.dx, t.name IS NULL
    """
    cols = [source.c[c] for c in columns]
    flags = [source.c[c].is_(None) for c in null_checked]
    return (
        sa.select(
            *(c.label(f"v{k}") for k, c in enumerate(cols)),
            *(f.label(f"x{j}") for j, f in enumerate(flags)),
            _rows(source, weight).label("n"),
        )
        .select_from(source)
        .group_by(*cols, *flags)
    )


TINY_CODES = 127  # codes up to this fit a TINYINT (1 byte) where the dialect has one
SMALL_CODES = 32_767  # codes up to this fit a SMALLINT (2 bytes)
CODE_BYTES = {"TINYINT": 1, "SMALLINT": 2}  # a code's bytes by its compiled type (else 4: INTEGER, INT)


class TinyInteger(sa.SmallInteger):
    """The narrowest integer for codes up to ``TINY_CODES``, compiled per dialect: ``TINYINT`` (1 byte, signed)
    where the dialect has one — DuckDB here, Spark in ``veil.queries.spark`` — else ``SMALLINT``.  A new
    backend with a 1-byte integer registers ``@compiles(TinyInteger, "<dialect>")``.

    >>> from sqlalchemy.dialects import postgresql
    >>> print(sa.cast(sa.column("c"), TinyInteger()).compile(dialect=postgresql.dialect()))
    CAST(c AS SMALLINT)
    """

    cache_ok = True


@compiles(TinyInteger, "duckdb")
def _tiny_integer_duckdb(type_: TinyInteger, compiler: Any, **kw: Any) -> str:
    return "TINYINT"


def code_type(cardinality: int) -> Any:
    """The narrowest integer type for codes ``0..cardinality-1`` (``TinyInteger``: a ``TINYINT`` where the
    dialect has one).  The wide base frequency set holds a code per QI level per cell, so its width is mostly
    these codes: what the warehouse keeps, spills and hashes per node.

    >>> code_type(20), code_type(200), code_type(40_000)
    (TinyInteger(), SmallInteger(), Integer())
    """
    if cardinality - 1 <= TINY_CODES:
        return TinyInteger()
    return sa.SmallInteger() if cardinality - 1 <= SMALL_CODES else sa.Integer()


def base_coded(
    layout: Layout,
    source: sa.Table,
    qis: Sequence[str],
    sensitive: Sequence[str],
    not_null: Sequence[str] = (),
    cardinalities: Sequence[Sequence[int]] | None = None,
    sensitive_sizes: Sequence[int] | None = None,
    into: str | None = None,
    weight: str | None = None,
) -> CreateTableAs:
    """``veil_base``, the base frequency set, in one scan of the source: every row coded through the dimension
    tables (QI ``i``'s codes at all levels, so node queries need no joins) and the sensitive value tables, and
    counted per distinct code combination.  A row with a NULL in a QI or counted column finds no code and is
    left out, as is one with a NULL in a ``not_null`` column.

    With ``cardinalities`` (per QI, per level) and ``sensitive_sizes`` each code is cast to ``code_type``.
    ``into``: a scratch database to create it in (DuckDB, ``veil.backends.scratch``) instead of a temporary table.

    >>> lay = Layout(heights=(1,), sensitive_count=1)
    >>> print(base_coded(lay, sa.table("t", sa.column("zip"), sa.column("dx")), ["zip"], ["dx"]).compile())
    CREATE TEMPORARY TABLE veil_base AS SELECT d0.code_0 AS q0_0, d0.code_1 AS q0_1, v0.code AS s0, count(*) AS n
    FROM t AS r JOIN veil_dim_0 AS d0 ON r.zip = d0.level_0 JOIN veil_sdom_0 AS v0 ON r.dx = v0.value GROUP BY d0.code_0, d0.code_1, v0.code
    """

    def narrow(code: Any, cardinality: int | None) -> Any:
        return code if cardinality is None else sa.cast(code, code_type(cardinality))

    raw = source.alias("r")
    select_cols: list[Any] = []
    keys: list[Any] = []
    joined: Any = raw
    for i, (name, h) in enumerate(zip(qis, layout.heights)):
        d = layout.dim(i).alias(f"d{i}")
        joined = joined.join(d, raw.c[name] == d.c.level_0)
        for j in range(h + 1):
            keys.append(d.c[f"code_{j}"])
            select_cols.append(narrow(keys[-1], cardinalities[i][j] if cardinalities else None).label(f"q{i}_{j}"))
    for j, name in enumerate(sensitive):
        sd = layout.sensitive_domain(j).alias(f"v{j}")
        joined = joined.join(sd, raw.c[name] == sd.c.value)
        keys.append(sd.c.code)
        select_cols.append(narrow(sd.c.code, sensitive_sizes[j] if sensitive_sizes else None).label(f"s{j}"))
    stmt = sa.select(*select_cols, _rows(raw, weight).label("n")).select_from(joined).group_by(*keys)
    if not_null:
        stmt = stmt.where(*(raw.c[c].is_not(None) for c in not_null))
    return working_table(sa.table(BASE), stmt, into)


def row_bytes(
    cardinalities: Sequence[Sequence[int]], sensitive_sizes: Sequence[int], dialect: sa.Dialect | None = None
) -> int:
    """The bytes of one row of ``veil_base`` as ``base_coded`` types it: each code's integer width as ``dialect``
    compiles its type (``CODE_BYTES``), and ``n``.

    >>> from sqlalchemy.dialects import postgresql
    >>> from duckdb_engine import Dialect as DuckDB
    >>> row_bytes([[100, 10, 1]], [20], DuckDB()), row_bytes([[100, 10, 1]], [20], postgresql.dialect())
    (12, 16)
    """
    codes = [c for level in cardinalities for c in level] + list(sensitive_sizes)
    return 8 + sum(CODE_BYTES.get(str(code_type(c).compile(dialect=dialect)), 4) for c in codes)


def _count(n: Any) -> Any:
    """A working table's ``n``: the sum of counts kept a ``BIGINT`` (DuckDB's ``sum`` widens to ``HUGEINT``,
    PostgreSQL's to ``NUMERIC``: both slower to sum again in every rollup)."""
    return sa.cast(sa.func.sum(n), sa.BigInteger).label("n")


def up_table(layout: Layout, i: int, level: int) -> CreateTableAs:
    """``layout.up(i, level)`` from dimension table ``i``: its distinct codes at ``level`` and above.

    >>> print(up_table(Layout(heights=(2,), sensitive_count=0), 0, 0).compile())
    CREATE TEMPORARY TABLE veil_up_0_0 AS SELECT DISTINCT d.code_0 AS c, d.code_1 AS u1, d.code_2 AS u2
    FROM veil_dim_0 AS d
    """
    d = layout.dim(i).alias("d")
    cols = [d.c[f"code_{level}"].label("c")]
    cols += [d.c[f"code_{j}"].label(f"u{j}") for j in range(level + 1, layout.heights[i] + 1)]
    return CreateTableAs(layout.up(i, level), sa.select(*cols).distinct())


@dataclass(frozen=True)
class _Source:
    """What a node's statement reads: the ``FROM`` clause, the node's key per QI (``None``: projected out), the
    source table as ``b`` (sensitive codes and ``n``) and whether every source row is already one node cell."""

    from_: Any
    keys: tuple[Any, ...]
    table: Any
    exact: bool


@lru_cache(maxsize=4096)
def _node_source(
    layout: Layout, source: str, floor: tuple[int | None, ...] | None, node: tuple[int | None, ...]
) -> _Source:
    """Built once per (source, node): a search issues one statement per node against the same few sources, and
    the wide base's column collection costs more than the rest of the statement.  ``floor`` ``None``: the wide
    base (every level a column); else a narrow table at ``floor``, coarser levels joined from ``veil_up_*``."""
    table, joined, key = _shared_source(layout, source, floor, (node,))
    keys = tuple(None if lv is None else key[(i, lv)] for i, lv in enumerate(node))
    return _Source(joined, keys, table, floor is not None and tuple(floor) == tuple(node))


@lru_cache(maxsize=16)
def _wide_base(layout: Layout, source: str) -> sa.FromClause:
    return layout.wide(source).alias("b")


def _source(layout: Layout, node: Sequence[int | None], floor: Sequence[int | None] | None, source: str) -> _Source:
    return _node_source(layout, source, None if floor is None else tuple(floor), tuple(node))


def _labelled(src: _Source) -> list[Any]:
    return [k.label(f"g{i}") for i, k in enumerate(src.keys) if k is not None]


def node_counts(
    layout: Layout, node: Sequence[int | None], floor: Sequence[int | None] | None = None, source: str = BASE
) -> sa.Select[Any]:
    """The ``GROUP BY`` of lattice node ``node``: ``(g_i…, s_k…, n)`` with integer codes.

    ``node[i]`` is the level of QI ``i`` (``None``: projected out, no column).  ``source`` is ``veil_base``
    or the materialized counts of a finer node ``floor`` (Incognito's rollup); read as they are when that node
    is ``node`` itself."""
    src = _source(layout, node, floor, source)
    sens = [src.table.c[f"s{k}"] for k in range(layout.sensitive_count)]
    if src.exact:
        return sa.select(*_labelled(src), *sens, src.table.c.n)
    keys = _labelled(src)
    return sa.select(*keys, *sens, sa.func.sum(src.table.c.n).label("n")).select_from(src.from_).group_by(*keys, *sens)


def base_leaves(layout: Layout) -> sa.Select[Any]:
    """The base frequency set's cells with only what rolls every node up from them: each QI's leaf code (its
    higher levels follow from the hierarchy), the sensitive codes, ``n`` (``veil.frequencies``).

    >>> print(base_leaves(Layout(heights=(2, 1), sensitive_count=1)).compile())
    SELECT veil_base.q0_0, veil_base.q1_0, veil_base.s0, veil_base.n
    FROM veil_base
    """
    base = layout.base()
    return sa.select(
        *(base.c[f"q{i}_0"] for i in range(layout.qi_count)),
        *(base.c[f"s{k}"] for k in range(layout.sensitive_count)),
        base.c.n,
    )


def leaf_totals(layout: Layout) -> sa.Select[Any]:
    """Rows per leaf code of every quasi-identifier — the base's marginals, which ARX's per-attribute quality
    needs (``veil.utility``) — without the bottom node's cells: one small group per QI, stacked (``qi`` its index).

    >>> print(leaf_totals(Layout(heights=(1, 1), sensitive_count=0)).compile())
    SELECT t.qi, t.code, t.n
    FROM (SELECT :param_1 AS qi, veil_base.q0_0 AS code, sum(veil_base.n) AS n
    FROM veil_base GROUP BY veil_base.q0_0 UNION ALL SELECT :param_2 AS qi, veil_base.q1_0 AS code, sum(veil_base.n) AS n
    FROM veil_base GROUP BY veil_base.q1_0) AS t
    """
    base = layout.base()
    stacked = sa.union_all(
        *(
            sa.select(
                sa.literal(i, sa.Integer).label("qi"),
                base.c[f"q{i}_0"].label("code"),
                sa.func.sum(base.c.n).label("n"),
            ).group_by(base.c[f"q{i}_0"])
            for i in range(layout.qi_count)
        )
    ).subquery("t")
    return sa.select(stacked.c.qi, stacked.c.code, stacked.c.n)


def base_total(layout: Layout) -> sa.Select[Any]:
    """The base frequency set's rows (its ``n`` summed, 0 when empty) and cells: what coding it must keep.

    >>> print(base_total(Layout(heights=(1,), sensitive_count=0)).compile())
    SELECT coalesce(sum(veil_base.n), :coalesce_2) AS coalesce_1, count(*) AS count_1
    FROM veil_base
    """
    base = layout.base()
    return sa.select(sa.func.coalesce(sa.func.sum(base.c.n), 0), sa.func.count())


def ordered(stmt: sa.Select[Any], order_by: Sequence[str]) -> sa.Select[Any]:
    """``stmt``'s rows ordered by its columns ``order_by`` (none: in any order), as a streamed result reads them.

    >>> print(ordered(sa.select(sa.column("a"), sa.column("b")), ["b"]).compile())
    SELECT o.a, o.b
    FROM (SELECT a, b) AS o ORDER BY o.b
    """
    sub = stmt.subquery("o")
    return sa.select(*sub.c).order_by(*(sub.c[k] for k in order_by))


def node_keys(layout: Layout, node: Sequence[int | None]) -> list[str]:
    """The block key columns ``g{i}`` of ``node_counts(layout, node)`` (QIs not projected out)."""
    return [f"g{i}" for i, lv in enumerate(node) if lv is not None]


def node_sizes(
    layout: Layout, node: Sequence[int | None], floor: Sequence[int | None] | None = None, source: str = BASE
) -> sa.Select[Any]:
    """The block-size histogram of ``node``: ``(size, blocks)``, one row per distinct ``n(E)`` with the number
    of q*-blocks of that size, from the same source as ``node_counts`` (a few numbers per node, no block list).

    Everything size-only (k-anonymity, the rows below a model's ``min_block_size``, Σ n(E)², |T| / #blocks)
    follows from it: blocks of sizes 1, 1, 3 give ``(1, 2), (3, 1)``.

    >>> print(node_sizes(Layout(heights=(1, 2), sensitive_count=1), (1, None)).compile())
    SELECT e.size, count(*) AS blocks
    FROM (SELECT sum(b.n) AS size
    FROM veil_base AS b GROUP BY b.q0_1) AS e GROUP BY e.size ORDER BY e.size
    """
    src = _source(layout, node, floor, source)
    if src.exact and not layout.sensitive_count:  # every row is a block
        blocks = sa.select(src.table.c.n.label("size")).subquery("e")
    else:
        keys = [k for k in src.keys if k is not None]
        blocks = (
            sa.select(sa.func.sum(src.table.c.n).label("size")).select_from(src.from_).group_by(*keys).subquery("e")
        )
    return sa.select(blocks.c.size, sa.func.count().label("blocks")).group_by(blocks.c.size).order_by(blocks.c.size)


@dataclass(frozen=True)
class Grouped:
    """Several nodes' block-size histograms in one statement (``grouped_sizes``): ``statement`` returns ``(gid,
    size, blocks)`` and ``ids[k]`` is the ``gid`` of the ``k``-th node's rows."""

    statement: sa.Select[Any]
    ids: tuple[int, ...]


def grouped_sizes(
    layout: Layout, nodes: Sequence[Sequence[int | None]], floor: Sequence[int | None] | None = None, source: str = BASE
) -> Grouped:
    """The block-size histograms of several ``nodes`` from one pass over ``source`` (Cube Incognito, LeFevre et
    al. SIGMOD 2005 §3.3: ``GROUP BY GROUPING SETS``, one set per node): ``(gid, size, blocks)``.  ``gid`` tells
    the nodes apart whatever their sets leave NULL: ``Σ 2^k · grouping(key_k)`` over every key column any node
    groups by (``grouping`` of one column: Spark's takes no more), the same for every row of one node, distinct
    between nodes (distinct nodes group by distinct key sets).  The key columns themselves never leave the
    database, so no NULL key is fetched.  Every node must be at or above ``floor``; a coarser level joins its
    ``veil_up_*`` table once for all of them.

    Nodes (1, 0) and (0, None) group by ``q0_1, q1_0`` and ``q0_0``; the keys in order q0_0, q0_1, q1_0 are bits
    1, 2, 4, so (1, 0) leaves out q0_0 (gid 1) and (0, None) leaves out q0_1 and q1_0 (gid 6):

    >>> g = grouped_sizes(Layout(heights=(1, 1), sensitive_count=0), [(1, 0), (0, None)])
    >>> g.ids
    (1, 6)
    >>> print(g.statement.compile(compile_kwargs={"literal_binds": True}))
    SELECT e.gid, e.size, count(*) AS blocks
    FROM (SELECT grouping(b.q0_0) * 1 + grouping(b.q0_1) * 2 + grouping(b.q1_0) * 4 AS gid, sum(b.n) AS size
    FROM veil_base AS b GROUP BY GROUPING SETS((b.q0_1, b.q1_0), (b.q0_0))) AS e GROUP BY e.gid, e.size
    """
    table, from_, key = _shared_source(
        layout, source, None if floor is None else tuple(floor), tuple(tuple(n) for n in nodes)
    )
    used = sorted({(i, lv) for n in nodes for i, lv in enumerate(n) if lv is not None})
    bit = {k: 1 << b for b, k in enumerate(used)}
    ids = tuple(sum(bit[k] for k in used if k[1] != n[k[0]]) for n in nodes)
    terms = [sa.func.grouping(key[k]) * sa.literal(bit[k], sa.Integer) for k in used]
    gid = functools.reduce(operator.add, terms) if terms else sa.literal(0)
    sets = [sa.tuple_(*(key[(i, lv)] for i, lv in enumerate(n) if lv is not None)) for n in nodes]
    blocks = (
        sa.select(gid.label("gid"), sa.func.sum(table.c.n).label("size"))
        .select_from(from_)
        .group_by(sa.func.grouping_sets(*sets))
        .subquery("e")
    )
    return Grouped(
        sa.select(blocks.c.gid, blocks.c.size, sa.func.count().label("blocks")).group_by(blocks.c.gid, blocks.c.size),
        ids,
    )


def _shared_source(
    layout: Layout, source: str, floor: tuple[int | None, ...] | None, nodes: tuple[tuple[int | None, ...], ...]
) -> tuple[Any, Any, dict[tuple[int, int], Any]]:
    """The table the statements of ``nodes`` read (as ``b``), its ``FROM`` and each ``(QI, level)`` key column any
    of them groups by: the wide base's own columns, or a narrow table at ``floor`` joined once to
    ``veil_up_{i}_{floor[i]}`` for every QI some node coarsens (one node: ``_node_source``; several:
    ``grouped_sizes``)."""
    if floor is None:
        base = _wide_base(layout, source)
        return base, base, {(i, lv): base.c[f"q{i}_{lv}"] for n in nodes for i, lv in enumerate(n) if lv is not None}
    table = layout.narrow(source, floor).alias("b")
    joined: Any = table
    key: dict[tuple[int, int], Any] = {}
    for i, low in enumerate(floor):
        levels = {lv for lv in (n[i] for n in nodes) if lv is not None}
        if not levels:
            continue
        if low is None or min(levels) < low:
            named = f"node {nodes[0]}" if len(nodes) == 1 else f"nodes {list(nodes)}"
            raise ValueError(f"{named} cannot be rolled up from {floor}")
        key[(i, low)] = table.c[f"q{i}_{low}"]
        if max(levels) > low:
            up = layout.up(i, low).alias(f"u{i}")
            joined = joined.join(up, up.c.c == table.c[f"q{i}_{low}"])
            key.update({(i, lv): up.c[f"u{lv}"] for lv in levels if lv != low})
    return table, joined, key


UNDECIDED = 2  # a statistics verdict floating point cannot give: the node is evaluated from its histograms


def node_statistics(
    layout: Layout,
    node: Sequence[int | None],
    sensitive: int,
    tests: Sequence[tuple[str, float]],
    floor: Sequence[int | None] | None = None,
    source: str = BASE,
    tolerance: float = 1e-12,
    reference: distances.Reference | None = None,
    widths: Sequence[int] | None = None,
) -> sa.Select[Any]:
    """Per-block verdicts of threshold tests on sensitive attribute ``s<sensitive>``'s histograms, counted per
    block size: ``(size, ok0…, blocks, level0…)`` — ``ok<k>`` is 1 (pass), 0 (fail) or ``UNDECIDED`` for test
    ``k``, ``level<k>`` the worst statistic in the group (least for ``m >= l``, greatest for ``EMD <= t``).  A
    test is ``("distinct", l)`` (``m >= l``) or ``("entropy", l)`` (``exp(-Σ p ln p) >= l``; ``m >= l`` when the
    block's counts are all equal, else undecided where the entropy is within ``tolerance · (m + 8) · (1 + ln n)``
    of ``ln l`` — a thousand times the error bound the numpy checker allows itself), or ``("ordered", t)`` /
    ``("equal", t)``: the block's EMD to the whole table at most ``t`` (``queries.distances``, which needs the
    attribute's lookup tables, ``reference``).  A few rows per node, no histogram.

    >>> lay = Layout(heights=(1,), sensitive_count=1)
    >>> print(node_statistics(lay, (1,), 0, [("distinct", 2.0)]).compile(compile_kwargs={"literal_binds": True}))
    SELECT e.size, CASE WHEN (e.m >= 2.0) THEN 1 ELSE 0 END AS ok0, count(*) AS blocks, min(CAST(e.m AS DOUBLE)) AS level0
    FROM (SELECT sum(c.c) AS size, count(*) AS m, max(c.c) AS top, min(c.c) AS low, sum(CAST(c.c AS DOUBLE) * ln(CAST(c.c AS DOUBLE))) AS clogc
    FROM (SELECT b.q0_1 AS g0, sum(b.n) AS c
    FROM veil_base AS b GROUP BY b.q0_1, b.s0) AS c GROUP BY c.g0) AS e GROUP BY e.size, CASE WHEN (e.m >= 2.0) THEN 1 ELSE 0 END
    """
    src = _source(layout, node, floor, source)
    keys = _packed(src, widths) if widths is not None else _labelled(src)
    far = [k for k, _ in tests if k in distances.KINDS]
    if far and reference is None:
        raise ValueError(f"the tests {far} need the attribute's lookup tables (reference)")
    cells = _block_cells(layout, src, keys, sensitive, bool(far))
    extra: list[Any] = []
    if far:
        assert reference is not None
        cells = distances.cell_terms(cells, [k.name for k in keys], reference)
        extra = distances.block_sums(cells)
    blocks = _block_aggregates(cells, keys, extra)
    flags, levels = _verdicts(blocks, tests, tolerance, reference)
    return sa.select(
        blocks.c.size,
        *(f.label(f"ok{k}") for k, f in enumerate(flags)),
        sa.func.count().label("blocks"),
        *(v.label(f"level{k}") for k, v in enumerate(levels)),
    ).group_by(blocks.c.size, *flags)


def node_bounds(
    layout: Layout,
    node: Sequence[int | None],
    sensitive: int,
    thresholds: Sequence[float],
    reference: distances.Reference,
    buckets: distances.Buckets,
    floor: Sequence[int | None] | None = None,
    source: str = BASE,
    tolerance: float = 1e-12,
    widths: Sequence[int] | None = None,
) -> sa.Select[Any]:
    """``node_statistics`` for ordered-EMD tests ``EMD <= t`` (one per threshold) from bounds: the cells counted
    per value *bucket* (``queries.distances.bucket_bounds``), at most ``buckets.count`` rows per block instead of
    one per value.  The bounds are exact where ``F - G`` keeps one sign over a bucket; a block they leave
    undecided needs ``node_statistics`` (``UNDECIDED``).  Same columns; a level is the block's upper bound."""
    src = _source(layout, node, floor, source)
    keys = _packed(src, widths) if widths is not None else _labelled(src)
    s = sa.cast(src.table.c[f"s{sensitive}"], sa.BigInteger)
    bucket = sa.cast(sa.func.floor(sa.cast(s, sa.Double) / float(buckets.width)), sa.BigInteger)
    end = sa.func.least((bucket + 1) * buckets.width, reference.width)
    cells = (
        sa.select(
            *keys,
            bucket.label("k"),
            sa.func.sum(src.table.c.n).label("c"),
            sa.func.sum(src.table.c.n * (end - s)).label("mom"),
        )
        .select_from(src.from_)
        .group_by(*(k.element for k in keys), bucket)
        .subquery("c")
    )
    terms = distances.bucket_bounds(cells, [k.name for k in keys], reference, buckets)
    blocks = (
        sa.select(
            sa.func.sum(terms.c.c).label("size"),
            sa.func.count().label("rows"),
            (sa.func.sum(terms.c.hi) + sa.func.min(terms.c.lead)).label("hi"),
            (sa.func.sum(terms.c.lo) + sa.func.min(terms.c.lead)).label("lo"),
        )
        .group_by(*(terms.c[k.name] for k in keys))
        .subquery("e")
    )
    flags, levels = [], []
    for threshold in thresholds:
        flag, level = distances.bound_test(blocks, threshold, reference, tolerance, UNDECIDED)
        flags.append(flag)
        levels.append(sa.func.max(level))
    return sa.select(
        blocks.c.size,
        *(f.label(f"ok{k}") for k, f in enumerate(flags)),
        sa.func.count().label("blocks"),
        *(v.label(f"level{k}") for k, v in enumerate(levels)),
    ).group_by(blocks.c.size, *flags)


def _block_cells(layout: Layout, src: _Source, keys: list[Any], sensitive: int, with_value: bool) -> sa.Subquery:
    """``c``: the node's rows per (block, value of ``s<sensitive>``) — the block's ``keys``, the value as ``s``
    when ``with_value`` (the distance tests read it), the rows as ``c``."""
    value = [src.table.c[f"s{sensitive}"].label("s")] if with_value else []
    if src.exact and layout.sensitive_count == 1:  # every row is one (block, value) cell
        return sa.select(*keys, *value, src.table.c.n.label("c")).subquery("c")
    return (
        sa.select(*keys, *value, sa.func.sum(src.table.c.n).label("c"))
        .select_from(src.from_)
        .group_by(*(k.element for k in keys), src.table.c[f"s{sensitive}"])
        .subquery("c")
    )


def _block_aggregates(cells: sa.Subquery, keys: list[Any], extra: list[Any]) -> sa.Subquery:
    """``e``: per block of ``cells`` its size, distinct values ``m``, largest and smallest cell, ``Σ c ln c``
    (``clogc``) and the ``extra`` aggregates."""
    c = sa.cast(cells.c.c, sa.Double)
    return (
        sa.select(
            sa.func.sum(cells.c.c).label("size"),
            sa.func.count().label("m"),
            sa.func.max(cells.c.c).label("top"),
            sa.func.min(cells.c.c).label("low"),
            sa.func.sum(c * sa.func.ln(c)).label("clogc"),
            *extra,
        )
        .group_by(*(cells.c[k.name] for k in keys))
        .subquery("e")
    )


def _verdicts(
    blocks: sa.Subquery, tests: Sequence[tuple[str, float]], tolerance: float, reference: distances.Reference | None
) -> tuple[list[Any], list[Any]]:
    """Each test's per-block verdict and its worst level over a group (greatest distance, least statistic)."""
    flags, levels = [], []
    for kind, threshold in tests:
        if kind in distances.KINDS:
            assert reference is not None
            flag, level = distances.distance_test(blocks, kind, threshold, reference, tolerance, UNDECIDED)
            level = sa.func.max(level)
        else:
            flag, level = _statistic_test(blocks, kind, threshold, tolerance)
            level = sa.func.min(level)
        flags.append(flag)
        levels.append(level)
    return flags, levels


def _packed(src: _Source, widths: Sequence[int]) -> list[Any]:
    """The block key as one ``BIGINT`` (``g = (k0·w1 + k1)·w2 + …``, ``widths`` the cardinalities of the keys)
    where it fits: one integer column hashes and sorts faster than several; else the keys themselves."""
    keys = [k for k in src.keys if k is not None]
    if not keys or math.prod(widths) >= 2**62:
        return _labelled(src)
    packed: Any = sa.cast(keys[0], sa.BigInteger)
    for key, width in zip(keys[1:], widths[1:]):
        packed = packed * width + key
    return [packed.label("g")]


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
    verdict = sa.case(
        (sa.and_(uniform, blocks.c.m >= threshold), 1),
        (uniform, 0),
        (entropy > bound + margin, 1),
        (entropy < bound - margin, 0),
        else_=UNDECIDED,
    )
    return verdict, sa.case((uniform, m), else_=sa.func.exp(entropy))


def materialize(
    layout: Layout,
    ident: int,
    node: Sequence[int | None],
    floor: Sequence[int | None] | None = None,
    source: str = BASE,
    into: str | None = None,
) -> CreateTableAs:
    """Materialize ``node``'s counts, narrow (``layout.node_table``: its own levels only), for later rollups
    (``into``: in that scratch database, as ``base_coded``)."""
    src = _source(layout, node, floor, source)
    cols = [k.label(f"q{i}_{lv}") for i, (k, lv) in enumerate(zip(src.keys, node)) if k is not None]
    sens = [src.table.c[f"s{k}"] for k in range(layout.sensitive_count)]
    stmt = (
        sa.select(*cols, *sens, _count(src.table.c.n))
        .select_from(src.from_)
        .group_by(*(c.element for c in cols), *sens)
    )
    return working_table(layout.node_table(ident, node), stmt, into)


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
    stmt = sa.select(
        *(
            sa.func.string_agg(sa.func.int8send(sa.cast(sub.c[c], sa.BigInteger)), empty).label(c)
            for c in inner.c.keys()  # noqa: SIM118 — a ColumnCollection iterates columns, not names
        )
    ).group_by(sub.c.chunk)
    return stmt.order_by(sub.c.chunk) if order_by is not None else stmt
