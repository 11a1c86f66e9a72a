"""The release's statements on the source: the candidate's cells (what the series step compares), the rows
of a version (generalized through the dimension tables, suppressed blocks and held-back rows left out), the
independent recount, grants and locks.

Rows held back by the series step (docs/series-ledger.md §4) are listed in the temporary table ``veil_withheld``:
one row per (block codes, published values) with how many of those identical rows to leave out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, overload

import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.elements import ColumnElement

from veil.queries.ddl import CreateTableAs, working_table
from veil.queries.nodes import Layout, code_type
from veil.queries.publication import numbered_values

SUPPRESSED = "veil_suppressed"
WITHHELD = "veil_withheld"


def suppressed_table(qi_count: int) -> sa.Table:
    """Temporary table of the codes of the blocks a release suppresses."""
    md = sa.MetaData()
    return sa.Table(SUPPRESSED, md, *(sa.Column(f"g{i}", sa.Integer) for i in range(qi_count)), prefixes=["TEMPORARY"])


def withheld_table(qi_count: int, value_types: Sequence[Any]) -> sa.Table:
    """Temporary table of the rows the series step holds back: ``id``, block codes ``g<i>``, published
    values ``v<j>`` (typed like the source) and ``held`` (how many identical rows to leave out)."""
    md = sa.MetaData()
    return sa.Table(
        WITHHELD,
        md,
        sa.Column("id", sa.Integer),
        *(sa.Column(f"g{i}", sa.Integer) for i in range(qi_count)),
        *(sa.Column(f"v{j}", t) for j, t in enumerate(value_types)),
        sa.Column("held", sa.BigInteger),
        prefixes=["TEMPORARY"],
    )


def _generalized(
    source: sa.Table, layout: Layout, node: Sequence[int], qis: Sequence[str]
) -> tuple[Any, Any, dict[str, Any], list[Any]]:
    """The source joined to its dimension tables: (source alias, join, generalized label per QI, codes)."""
    src = source.alias("src")
    joined: Any = src
    labels: dict[str, Any] = {}
    codes = []
    for i, (name, level) in enumerate(zip(qis, node)):
        d = layout.dim(i).alias(f"d{i}")
        joined = joined.join(d, src.c[name] == d.c.level_0)
        labels[name] = label_of(d, level).label(name)
        codes.append(d.c[f"code_{level}"])
    return src, joined, labels, codes


def label_of(dim: Any, level: int) -> Any:
    """The published text of a dimension table's row at ``level``: what a version's rows show for the QI."""
    return sa.cast(dim.c.level_0, sa.Text) if level == 0 else dim.c[f"level_{level}"]


CELLS = "veil_cells"
VALUES = "veil_cell_values"


def values_table(
    source: sa.Table, qis: Sequence[str], columns: Sequence[str], not_null: Sequence[str]
) -> CreateTableAs:
    """The distinct published non-QI ``columns`` (``v0…``) of the rows a release reads (no QI NULL, none in
    ``not_null``) with their rows (``n``), numbered 0, 1, … (``vid``) in the database's order of them, kept in the
    temporary table ``veil_cell_values``: one narrow pass over the source, so that the candidate's cells are
    counted by integer keys (one row, vid 0, when there are no such columns and there are rows)."""
    src = source.alias("src")
    where = [src.c[c].is_not(None) for c in (*qis, *not_null)]
    n = sa.func.count().label("n")
    if not columns:
        return CreateTableAs(
            sa.table(VALUES),
            sa.select(n, sa.literal(0, sa.BigInteger).label("vid"))
            .select_from(src)
            .where(*where)
            .having(sa.func.count() > 0),
        )
    keys = [src.c[c] for c in columns]
    values = (
        sa.select(*(k.label(f"v{j}") for j, k in enumerate(keys)), n).where(*where).group_by(*keys).subquery("vals")
    )
    rank = sa.func.dense_rank().over(order_by=[values.c[f"v{j}"] for j in range(len(columns))]) - 1
    return CreateTableAs(sa.table(VALUES), sa.select(*values.c, rank.label("vid")))


def values_of(width: int) -> sa.TableClause:
    """``veil_cell_values`` (``values_table``): value columns ``v<j>``, their rows ``n``, ``vid``."""
    return sa.table(VALUES, *(sa.column(f"v{j}") for j in range(width)), sa.column("n"), sa.column("vid"))


def cell_values(width: int) -> sa.Select[Any]:
    """``veil_cell_values`` ordered by ``vid``: the published values of each ``vid`` of ``coded_cells``, its rows
    (``n``) and the ``vid``."""
    values = values_of(width)
    return sa.select(*values.c).order_by(values.c.vid)


class SameOrBothNull(ColumnElement[bool]):
    """``a`` equals ``b`` or both are NULL, written so that every database hashes a join on it: by default
    ``coalesce(a, least) = coalesce(b, least) AND (a IS NULL) = (b IS NULL)`` with ``least`` the column's least
    value (PostgreSQL hashes no ``IS NOT DISTINCT FROM``); Spark's compiler hook writes its null-safe ``<=>``
    (``veil.queries.spark``: a scalar subquery in a join condition failed there, "Subquery … has not finished").

    >>> a, b = sa.column("a"), sa.column("b")
    >>> print(sa.select(a).where(SameOrBothNull(a, b, sa.literal_column("0"))).compile())
    SELECT a
    WHERE coalesce(a, 0) = coalesce(b, 0) AND (a IS NULL) = (b IS NULL)
    """

    inherit_cache = False
    type = sa.Boolean()

    def __init__(self, a: Any, b: Any, least: Any) -> None:
        self.a, self.b, self.least = a, b, least


@compiles(SameOrBothNull)
def _same_or_both_null(element: SameOrBothNull, compiler: Any, **kw: Any) -> str:
    a, b, least = element.a, element.b, element.least
    both = sa.and_(sa.func.coalesce(a, least) == sa.func.coalesce(b, least), a.is_(None) == b.is_(None))
    return str(compiler.process(both, **kw))


def value_match(published: Sequence[Any], values: Any, nulls: Sequence[str]) -> list[Any]:
    """Conditions matching ``published`` columns to the value columns ``v<j>`` of ``values`` (an alias of
    ``veil_cell_values``) by a join every database can hash: ``nulls[j]`` says whether column ``j`` has
    ``"none"``, ``"some"`` or ``"all"`` NULL values.  A column without NULLs is matched by ``=``; one with
    some by its NULL flag and its value with NULL replaced by the column's least value; one that is NULL
    everywhere is left out (every row has the same value there)."""
    match: list[Any] = []
    for j, (a, kind) in enumerate(zip(published, nulls)):
        b = values.c[f"v{j}"]
        if kind == "none":
            match.append(a == b)
        elif kind == "some":
            least = sa.select(sa.func.min(values_of(len(nulls)).c[f"v{j}"])).scalar_subquery()
            match.append(SameOrBothNull(a, b, least))
    return match


def cells_table(
    source: sa.Table,
    layout: Layout,
    node: Sequence[int],
    qis: Sequence[str],
    columns: Sequence[str],
    not_null: Sequence[str],
    nulls: Sequence[str],
    into: str | None = None,
    sizes: Sequence[int] | None = None,
    values_count: int | None = None,
) -> CreateTableAs:
    """The candidate's cells in the working table ``veil_cells``: every row's block codes at ``node`` (``g<i>``)
    and its published ``columns``' number in ``veil_cell_values`` (``vid``), counted (``n``) — suppressed blocks
    included, the caller knows their codes.  Integer keys only: a ``GROUP BY`` over text values with tens of
    millions of groups fails at DuckDB's memory limit where integers spill.  ``into``: in that scratch database,
    read and dropped before the release writes (``veil.backends.scratch``).

    The values are matched by ``value_match``.

    With ``sizes`` (each QI's codes at ``node``) and ``values_count`` the keys are grouped as the narrowest
    integers that hold them (``nodes.code_type``): the aggregate's rows are a third as wide, what lets the
    100M census's 512 MB run count its cells."""
    src, joined, _, codes = _generalized(source, layout, node, qis)
    values = values_of(len(columns)).alias("r")
    match = value_match([src.c[c] for c in columns], values, nulls)
    joined = joined.join(values, sa.and_(*match) if match else sa.true())
    vid: Any = values.c.vid
    if sizes is not None and values_count is not None:
        codes = [sa.cast(c, code_type(size)) for c, size in zip(codes, sizes)]
        vid = sa.cast(vid, code_type(values_count))
    keys = [c.label(f"g{i}") for i, c in enumerate(codes)]
    stmt = (
        sa.select(*keys, vid.label("vid"), sa.func.count().label("n"))
        .select_from(joined)
        .where(*(src.c[c].is_not(None) for c in not_null))
        .group_by(*codes, vid)
    )
    return working_table(sa.table(CELLS), stmt, into)


def cell_bytes(qi_count: int) -> int:
    """The bytes of one row of ``veil_cells`` (a code per QI, ``vid``, ``n``): what decides whether the
    cells may outgrow the database's memory.

    >>> cell_bytes(6)
    64
    """
    return 8 * (qi_count + 2)


def valued_cells(
    source: sa.Table,
    layout: Layout,
    node: Sequence[int],
    qis: Sequence[str],
    columns: Sequence[str],
    not_null: Sequence[str],
) -> sa.Select[Any]:
    """The candidate's cells with their published values, in one statement: every row's block codes at ``node``
    (``g<i>``), its published ``columns`` (``v<j>``) and the rows (``n``) of each — the rows a release reads (no QI
    NULL, none in ``not_null``), suppressed blocks included.  What ``values_table`` and ``cells_table`` give in
    two passes, for a release whose cells come into Veil whole (numbered there as they arrive: one Spark job where
    the two passes and their reads were four)."""
    src, joined, _, codes = _generalized(source, layout, node, qis)
    values = [src.c[c] for c in columns]
    return (
        sa.select(
            *(c.label(f"g{i}") for i, c in enumerate(codes)),
            *(v.label(f"v{j}") for j, v in enumerate(values)),
            sa.func.count().label("n"),
        )
        .select_from(joined)
        .where(*(src.c[c].is_not(None) for c in not_null))
        .group_by(*codes, *values)
    )


def coded_cells(qi_count: int) -> sa.Select[Any]:
    """``veil_cells``: block codes ``g<i>``, ``vid`` and ``n``, integers only — what the series step needs per
    cell, streamable in columns."""
    cells = sa.table(CELLS, *(sa.column(f"g{i}") for i in range(qi_count)), sa.column("vid"), sa.column("n"))
    return sa.select(*cells.c)


@overload
def release_select(
    source: sa.Table,
    layout: Layout,
    node: Sequence[int],
    qis: Sequence[str],
    published: Sequence[str],
    suppress: bool,
    not_null: Sequence[str],
    withheld: None = None,
    version: int | None = None,
) -> sa.Select[Any]: ...


@overload
def release_select(
    source: sa.Table,
    layout: Layout,
    node: Sequence[int],
    qis: Sequence[str],
    published: Sequence[str],
    suppress: bool,
    not_null: Sequence[str],
    withheld: Sequence[str],
    version: int | None = None,
) -> sa.CompoundSelect: ...


def release_select(
    source: sa.Table,
    layout: Layout,
    node: Sequence[int],
    qis: Sequence[str],
    published: Sequence[str],
    suppress: bool,
    not_null: Sequence[str],
    withheld: Sequence[str] | None = None,
    version: int | None = None,
) -> sa.Select[Any] | sa.CompoundSelect:
    """The rows of a release: each QI replaced by its generalized value (text) at ``node``, other published
    columns as they are, rows of suppressed blocks dropped, columns in ``published`` order (preceded by the
    ``version`` when given).  With ``withheld`` (the non-QI published columns, in ``veil_withheld``'s order; empty
    when only QIs are published), ``held`` of each listed set of identical rows are left out."""
    src, joined, labels, codes = _generalized(source, layout, node, qis)
    where: list[Any] = [src.c[c].is_not(None) for c in not_null]
    if suppress:
        x = sa.table(SUPPRESSED, *(sa.column(f"g{i}") for i in range(len(qis)))).alias("x")
        joined = joined.outerjoin(x, sa.and_(*(x.c[f"g{i}"] == codes[i] for i in range(len(qis)))))
        where.append(x.c.g0.is_(None))
    cols = [labels[c] if c in labels else src.c[c].label(c) for c in published]
    head: list[sa.ColumnElement[Any]] = (
        [sa.literal(version, sa.Integer).label("veil_version")] if version is not None else []
    )
    if withheld is None:
        return sa.select(*head, *cols).select_from(joined).where(*where)
    w = sa.table(
        WITHHELD,
        sa.column("id"),
        sa.column("held"),
        *(sa.column(f"g{i}") for i in range(len(qis))),
        *(sa.column(f"v{j}") for j in range(len(withheld))),
    ).alias("w")
    match = sa.and_(
        *(w.c[f"g{i}"] == codes[i] for i in range(len(qis))),
        *(src.c[c].is_not_distinct_from(w.c[f"v{j}"]) for j, c in enumerate(withheld)),
    )
    kept = sa.select(*head, *cols).select_from(joined.outerjoin(w, match)).where(*where, w.c.id.is_(None))
    rn = sa.func.row_number().over(partition_by=w.c.id, order_by=w.c.id).label("veil_rn")
    numbered = (
        sa.select(*cols, w.c.held.label("veil_held"), rn)
        .select_from(joined.join(w, match))
        .where(*where)
        .subquery("numbered")
    )
    rest = sa.select(*head, *(numbered.c[c] for c in published)).where(numbered.c.veil_rn > numbered.c.veil_held)
    return sa.union_all(kept, rest)


def _numbered(block_rows: sa.Table, version: int, column: str, j: int) -> Any:
    """``publication.numbered_values`` of one column of the blocks table, as the subquery ``k<j>``."""
    return numbered_values(block_rows, version, column, f"d{j}").subquery(f"k{j}")


def recount_numbers(block_rows: sa.Table, version: int, column: str, j: int) -> sa.Select[Any]:
    """Each distinct value of ``column`` in version ``version``'s blocks table with its number (``recount``'s
    column ``c<j>``)."""
    k = _numbered(block_rows, version, column, j)
    return sa.select(k.c.v, k.c.code)


@dataclass(frozen=True)
class Recount:
    """A version's recount (``Session.numbered``): each column's distinct values with their numbers
    (``numbers``, ``recount_numbers``), the cells as those numbers (``numbered``, ``recount``) — numbered by the
    database, streamed as integers — and the same cells as values (``values``, ``recount_values``) for a
    backend that numbers them as they arrive (Spark: one statement instead of one a column, docs/spark.md §9)."""

    numbers: tuple[sa.Select[Any], ...]
    numbered: sa.Select[Any]
    values: sa.Select[Any]


def recount_statements(block_rows: sa.Table, version: int, qis: Sequence[str], sensitive: Sequence[str]) -> Recount:
    """The statements of ``Recount``: column ``c<j>`` of the cells is the ``j``-th of ``qis`` + ``sensitive``."""
    columns = [*qis, *sensitive]
    return Recount(
        tuple(recount_numbers(block_rows, version, c, j) for j, c in enumerate(columns)),
        recount(block_rows, version, qis, sensitive),
        recount_values(block_rows, version, qis, sensitive),
    )


def recount_values(block_rows: sa.Table, version: int, qis: Sequence[str], sensitive: Sequence[str]) -> sa.Select[Any]:
    """``recount``'s cells with each column's values themselves (``c<j>``, NULL kept) instead of their numbers."""
    t = block_rows
    values = [t.c[c].label(f"c{j}") for j, c in enumerate([*qis, *sensitive])]
    return (
        sa.select(*values, sa.cast(sa.func.sum(t.c.n), sa.BigInteger).label("n"))
        .where(t.c.veil_version == version)
        .group_by(*(t.c[c] for c in [*qis, *sensitive]))
    )


def recount(block_rows: sa.Table, version: int, qis: Sequence[str], sensitive: Sequence[str]) -> sa.Select[Any]:
    """Blocks and joint histograms of the counted ``sensitive`` columns of one version, read from its blocks
    table (``<name>_block_rows``: what the database counted from the published rows themselves), summed over
    the published columns the models do not read — one pass over the blocks, not a second ``GROUP BY`` of
    every published row.  Each column's value is replaced by its number (``recount_numbers``; ``c<j>``, 0 for
    NULL) and the rows summed per numbers (``n``): integers only, so the recount travels columnar and in chunks
    (``Session.stream``)."""
    t = block_rows
    columns = [*qis, *sensitive]
    numbered = [_numbered(t, version, c, j) for j, c in enumerate(columns)]
    joined: Any = t
    for c, k in zip(columns, numbered):
        joined = joined.outerjoin(k, t.c[c] == k.c.v)
    codes: list[sa.ColumnElement[Any]] = [
        sa.cast(sa.func.coalesce(k.c.code, 0), sa.BigInteger).label(f"c{j}") for j, k in enumerate(numbered)
    ]
    return (
        sa.select(*codes, sa.cast(sa.func.sum(t.c.n), sa.BigInteger).label("n"))
        .select_from(joined)
        .where(t.c.veil_version == version)
        .group_by(*(k.c.code for k in numbered))
    )


def level0_labels(layout: Layout, i: int) -> sa.Select[Any]:
    """Each level-0 code of dimension ``i`` with its value rendered as text by the database."""
    d = layout.dim(i)
    return sa.select(d.c.code_0, sa.cast(d.c.level_0, sa.Text))


def role_exists(role: str) -> sa.Select[Any]:
    roles = sa.table("pg_roles", sa.column("rolname"), schema="pg_catalog")
    return sa.select(sa.func.count()).select_from(roles).where(roles.c.rolname == role)


def privileges_held(role: str, schema: str, views: Sequence[str]) -> sa.Select[Any]:
    """One row: whether ``role`` holds USAGE on ``schema``, then SELECT on each of ``views`` (in order) — what
    it holds, directly, through a role it inherits or through PUBLIC — and whether the current user may grant
    USAGE on ``schema`` (owner, or the grant option), and who that user is: checked after a GRANT, which
    PostgreSQL only *warns* about when it applies nothing (PostgreSQL).
    """
    usage = sa.func.has_schema_privilege(role, schema, "USAGE")
    selects = [sa.func.has_table_privilege(role, sa.func.format("%I.%I", schema, v), "SELECT") for v in views]
    grantable = sa.func.has_schema_privilege(sa.func.current_user(), schema, "USAGE WITH GRANT OPTION")
    return sa.select(usage, *selects, grantable, sa.func.current_user())


def try_advisory_lock(key: int) -> sa.Select[Any]:
    return sa.select(sa.func.pg_try_advisory_lock(sa.literal(key, sa.BigInteger)))


def advisory_lock(key: int) -> sa.Select[Any]:
    """Wait for the session-level advisory lock ``key`` (PostgreSQL)."""
    return sa.select(sa.func.pg_advisory_lock(sa.literal(key, sa.BigInteger)))


def advisory_unlock(key: int) -> sa.Select[Any]:
    return sa.select(sa.func.pg_advisory_unlock(sa.literal(key, sa.BigInteger)))
