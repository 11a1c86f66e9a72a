"""The series' members (docs/series.md §2): the statements of the catalog table ``<name>_members``, which
holds one row per person the release knows of — waiting, published, or standing in after leaving — with the
row the release shows for them.  Never published, never granted.

A person is known by an *identity*: a 64-bit hash of their row in the source (all its columns, or the
``[release] key`` columns with the published ones), numbered among identical rows (``identity``).  Tonight's
rows are counted into the temporary table ``veil_now``; people who left become stand-ins, newcomers wait, and
the series step's decisions (which blocks' waiting rows form a cohort, which cohorts' stand-ins leave) are
applied from two small temporary tables.  A version's rows are the members published or standing in.

>>> m = members_table("veil", "census_members", ["age", "zip"], {"occupation": sa.Text()})
>>> [c.name for c in m.c][:6], [c.name for c in m.c][6:]
(['veil_id', 'veil_state', 'veil_cohort', 'veil_joined', 'veil_since', 'veil_gone'], ['age', 'zip', 'occupation'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ColumnElement

from veil.queries.ddl import CreateTableAs
from veil.queries.nodes import Layout
from veil.queries.release import _generalized, label_of

PENDING, LIVE, GONE = 0, 1, 2  # a member's state: waiting to enter, published, standing in after leaving
NOW, FORMING, LEAVING, TAKING = "veil_now", "veil_forming", "veil_leaving", "veil_taking"
HISTOGRAMS = "veil_histograms"
BOOKKEEPING = ("veil_id", "veil_state", "veil_cohort", "veil_joined", "veil_since", "veil_gone")


class RowHash(ColumnElement[int]):
    """A 64-bit signed hash of the values of ``columns`` (NULLs hashed as such), the same for the same values:
    DuckDB ``hash()`` (unsigned, halved to fit), PostgreSQL ``hashtextextended`` of the row's text, Spark
    ``xxhash64``.  The dialect's compiler hook renders it.

    >>> from sqlalchemy.dialects import postgresql
    >>> print(RowHash([sa.column("a"), sa.column("b")]).compile(dialect=postgresql.dialect()))
    hashtextextended(CAST((a, b) AS TEXT), 0)
    """

    inherit_cache = False
    type = sa.BigInteger()

    def __init__(self, columns: Sequence[Any]) -> None:
        self.columns = list(columns)


@compiles(RowHash)
def _row_hash(element: RowHash, compiler: Any, **kw: Any) -> str:  # Spark SQL
    return f"xxhash64({', '.join(compiler.process(c, **kw) for c in element.columns)})"


@compiles(RowHash, "duckdb")
def _row_hash_duckdb(element: RowHash, compiler: Any, **kw: Any) -> str:
    return f"CAST((hash({', '.join(compiler.process(c, **kw) for c in element.columns)}) >> 1) AS BIGINT)"


@compiles(RowHash, "postgresql")
def _row_hash_postgresql(element: RowHash, compiler: Any, **kw: Any) -> str:
    row = compiler.process(sa.tuple_(*element.columns), **kw)
    return f"hashtextextended(CAST({row} AS TEXT), 0)"


def members_table(schema: str, table: str, qis: Sequence[str], columns: Mapping[str, Any]) -> sa.Table:
    """``<name>_members``: bookkeeping, each quasi-identifier's label at the series' node, the other published
    columns typed as in the source."""
    md = sa.MetaData()
    return sa.Table(
        table,
        md,
        sa.Column("veil_id", sa.BigInteger, nullable=False),
        sa.Column("veil_state", sa.SmallInteger),
        sa.Column("veil_cohort", sa.BigInteger),
        sa.Column("veil_joined", sa.Integer),
        sa.Column("veil_since", sa.Integer),
        sa.Column("veil_gone", sa.Integer),
        *(sa.Column(c, sa.Text) for c in qis),
        *(sa.Column(c, t) for c, t in columns.items()),
        schema=schema,
    )


def now_rows(
    source: sa.Table,
    layout: Layout,
    node: Sequence[int],
    qis: Sequence[str],
    published: Sequence[str],
    identity: Sequence[str],
    not_null: Sequence[str],
) -> CreateTableAs:
    """``veil_now``: tonight's rows — each person's identity (the hash of their ``identity`` columns, numbered
    among identical rows), their labels at ``node`` and their other published values."""
    src, joined, labels, _codes = _generalized(source, layout, node, qis)
    row = RowHash([src.c[c] for c in identity]).label("veil_row")
    values = [labels[c] if c in labels else src.c[c].label(c) for c in published]
    inner = sa.select(row, *values).select_from(joined).where(*(src.c[c].is_not(None) for c in not_null)).subquery("r")
    rank = sa.func.row_number().over(partition_by=inner.c.veil_row, order_by=inner.c.veil_row)
    numbered = sa.select(inner.c.veil_row, rank.label("veil_occurrence"), *(inner.c[c] for c in published)).subquery(
        "o"
    )
    select = sa.select(
        RowHash([numbered.c.veil_row, numbered.c.veil_occurrence]).label("veil_id"), *(numbered.c[c] for c in published)
    )
    return CreateTableAs(sa.table(NOW), select)


def _now(published: Sequence[str]) -> sa.TableClause:
    return sa.table(NOW, sa.column("veil_id"), *(sa.column(c) for c in published))


def leave(members: sa.Table, version: int) -> sa.Update:
    """Published people no longer in the source stand in from tonight (``veil_gone``)."""
    now = _now([])
    gone = ~sa.exists().where(now.c.veil_id == members.c.veil_id)
    return sa.update(members).where(members.c.veil_state == LIVE, gone).values(veil_state=GONE, veil_gone=version)


def forget(members: sa.Table) -> sa.Delete:
    """People who left while waiting: never published, nothing to stand in for."""
    now = _now([])
    return sa.delete(members).where(
        members.c.veil_state == PENDING, ~sa.exists().where(now.c.veil_id == members.c.veil_id)
    )


def arrive(members: sa.Table, published: Sequence[str], version: int) -> sa.Insert:
    """Newcomers (and, in a series' first version, everyone) wait, with the row the release would show."""
    now = _now(published)
    new = sa.select(
        now.c.veil_id,
        sa.literal(PENDING, sa.SmallInteger),
        sa.literal(version, sa.Integer),
        *(now.c[c] for c in published),
    ).where(~sa.exists().where(members.c.veil_id == now.c.veil_id))
    return members.insert().from_select(["veil_id", "veil_state", "veil_joined", *published], new)


def takeovers(members: sa.Table) -> CreateTableAs:
    """``veil_taking``: waiting members paired one to one with stand-ins whose row — labels and every shown
    value, NULLs equal — is the same (docs/series.md §2): each waiting member takes over such a stand-in, so the
    version shows exactly the rows it showed.  Among identical stand-ins the oldest cohort's go first.

    >>> m = members_table("veil", "t_members", ["zip"], {"dx": sa.Text()})
    >>> sql = str(takeovers(m).select)
    >>> "row_number() OVER (PARTITION BY w.zip, w.dx ORDER BY w.veil_id)" in sql
    True
    """
    shown = [c.name for c in members.c if c.name not in BOOKKEEPING]
    waiting, standing = members.alias("w"), members.alias("g")

    def ranked(t: Any, state: int, order: Sequence[Any]) -> Any:
        rank = sa.func.row_number().over(partition_by=[t.c[c] for c in shown], order_by=list(order))
        return (
            sa.select(t.c.veil_id, t.c.veil_cohort, *(t.c[c] for c in shown), rank.label("veil_rank"))
            .where(t.c.veil_state == state)
            .subquery()
        )

    w = ranked(waiting, PENDING, [waiting.c.veil_id])
    g = ranked(standing, GONE, [standing.c.veil_cohort, standing.c.veil_id])
    same = sa.and_(w.c.veil_rank == g.c.veil_rank, *(w.c[c].is_not_distinct_from(g.c[c]) for c in shown))
    pairs = sa.select(
        w.c.veil_id.label("veil_waiting"), g.c.veil_id.label("veil_standing"), g.c.veil_cohort
    ).select_from(w.join(g, same))
    return CreateTableAs(sa.table(TAKING), pairs)


def _one(value: Any, where: Any) -> Any:
    """The one row's ``value`` where ``where`` holds (``veil_taking`` and ``veil_forming`` have one row for a member),
    correlated, as an aggregate: without one Spark joins it by a nested loop, every member against every row (the 10M
    census's 6,500 takeovers a night took 136–206 s), with one by a hash join."""
    return sa.select(sa.func.max(value)).where(where).scalar_subquery()


def _taking() -> sa.TableClause:
    return sa.table(TAKING, sa.column("veil_waiting"), sa.column("veil_standing"), sa.column("veil_cohort"))


def taking_count() -> sa.Select[Any]:
    """How many waiting members ``veil_taking`` pairs with a stand-in."""
    return sa.select(sa.func.count()).select_from(_taking())


def take_over(members: sa.Table, version: int) -> sa.Update:
    """The waiting members of ``veil_taking`` are published from tonight in their stand-in's cohort."""
    t = _taking()
    cohort = _one(t.c.veil_cohort, t.c.veil_waiting == members.c.veil_id)
    return (
        sa.update(members)
        .where(members.c.veil_state == PENDING, members.c.veil_id.in_(sa.select(t.c.veil_waiting)))
        .values(veil_state=LIVE, veil_cohort=cohort, veil_since=version)
    )


def taken_over(members: sa.Table) -> sa.Delete:
    """The stand-ins of ``veil_taking``: their rows are their successors' now."""
    t = _taking()
    return sa.delete(members).where(members.c.veil_state == GONE, members.c.veil_id.in_(sa.select(t.c.veil_standing)))


def histograms(members: sa.TableClause, qis: Sequence[str], counted: Sequence[str]) -> sa.Select[Any]:
    """Rows per (state, cohort, block labels, counted values): what the series step decides from.  Waiting
    rows have no cohort (NULL) and are told apart by their labels; published rows by their cohort."""
    keys = [members.c.veil_state, members.c.veil_cohort, *(members.c[c] for c in qis), *(members.c[c] for c in counted)]
    return sa.select(*keys, sa.func.count().label("n")).group_by(*keys)


def kept_histograms(members: sa.TableClause, qis: Sequence[str], counted: Sequence[str]) -> CreateTableAs:
    """``veil_histograms``: ``histograms``, kept for the night's reads (``undecided``, ``by_size``, ``totals``) so
    that the members table is scanned once."""
    return CreateTableAs(sa.table(HISTOGRAMS), histograms(members, qis, counted))


def _kept(qis: Sequence[str], counted: Sequence[str]) -> sa.TableClause:
    names = ["veil_state", "veil_cohort", *qis, *counted, "n"]
    return sa.table(HISTOGRAMS, *(sa.column(c) for c in names))


def _cohort_sizes(h: sa.TableClause) -> sa.Subquery:
    """Each cohort's live and standing rows."""

    def rows_in(state: int) -> Any:
        return sa.func.sum(sa.case((h.c.veil_state == state, h.c.n), else_=0))

    return (
        sa.select(h.c.veil_cohort, rows_in(LIVE).label("live"), rows_in(GONE).label("gone"))
        .where(h.c.veil_state != PENDING)
        .group_by(h.c.veil_cohort)
        .subquery("s")
    )


def undecided(qis: Sequence[str], counted: Sequence[str], batch: int | None) -> sa.Select[Any]:
    """The rows of ``veil_histograms`` the series step reads value by value: the waiting rows, and the cohorts
    whose stand-ins may leave tonight — at least ``batch`` of them and ``batch`` live rows
    (``veil.release.cohorts.by_size``); every other cohort is decided by its sizes (``by_size``).  ``None``:
    every row (an erasure withdraws cohorts by their values)."""
    h = _kept(qis, counted)
    select = sa.select(*h.c)
    if batch is None:
        return select
    s = _cohort_sizes(h)
    may_leave = sa.select(s.c.veil_cohort).where(s.c.gone >= batch, s.c.live >= batch)
    return select.where(sa.or_(h.c.veil_state == PENDING, h.c.veil_cohort.in_(may_leave)))


def by_size(batch: int) -> sa.Select[Any]:
    """The cohorts with stand-ins that sizes decide: each whose people all left (it leaves whole) with its
    standing rows, and — its cohort NULL — the standing rows of those with fewer than ``batch`` stand-ins or live
    rows (they wait).

    >>> print(by_size(10))  # doctest: +ELLIPSIS
    SELECT CASE WHEN (s.live = :live_1) THEN s.veil_cohort END AS veil_cohort, sum(s.gone) AS gone ...
    """
    s = _cohort_sizes(_kept([], []))
    whole = sa.case((s.c.live == 0, s.c.veil_cohort))
    return (
        sa.select(whole.label("veil_cohort"), sa.func.sum(s.c.gone).label("gone"))
        .where(s.c.gone > 0, sa.or_(s.c.live == 0, s.c.gone < batch, s.c.live < batch))
        .group_by(whole)
    )


def totals(counted: Sequence[str]) -> sa.Select[Any]:
    """Rows per (state, counted values) of ``veil_histograms``: the tables a batch joins and leaves."""
    h = _kept([], counted)
    keys = [h.c.veil_state, *(h.c[c] for c in counted)]
    return sa.select(*keys, sa.func.sum(h.c.n).label("n")).group_by(*keys)


def forming_table(qis: Sequence[str]) -> sa.Table:
    """``veil_forming``: the blocks (labels) whose waiting rows form a cohort tonight, with its id."""
    return sa.Table(
        FORMING,
        sa.MetaData(),
        sa.Column("veil_cohort", sa.BigInteger),
        *(sa.Column(f"g{i}", sa.Text) for i in range(len(qis))),
        prefixes=["TEMPORARY"],
    )


def leaving_table() -> sa.Table:
    """``veil_leaving``: the cohorts whose stand-ins leave tonight."""
    return sa.Table(LEAVING, sa.MetaData(), sa.Column("veil_cohort", sa.BigInteger), prefixes=["TEMPORARY"])


def form(members: sa.Table, qis: Sequence[str], version: int) -> sa.Update:
    """Waiting rows of the blocks in ``veil_forming`` enter the release as their cohort."""
    f = forming_table(qis)
    match = sa.and_(*(f.c[f"g{i}"] == members.c[c] for i, c in enumerate(qis)))
    cohort = _one(f.c.veil_cohort, match)
    return (
        sa.update(members)
        .where(members.c.veil_state == PENDING, sa.exists().where(match))
        .values(veil_state=LIVE, veil_cohort=cohort, veil_since=version)
    )


def depart(members: sa.Table) -> sa.Delete:
    """The stand-ins of the cohorts in ``veil_leaving`` leave the release."""
    leaving = leaving_table()
    return sa.delete(members).where(
        members.c.veil_state == GONE, members.c.veil_cohort.in_(sa.select(leaving.c.veil_cohort))
    )


def erase(members: sa.Table) -> sa.Delete:
    """Every stand-in leaves now (``--erase-departed``: a deletion that must take effect tonight)."""
    return sa.delete(members).where(members.c.veil_state == GONE)


def shown(members: sa.Table, published: Sequence[str], version: int) -> sa.Select[Any]:
    """Version ``version``'s rows: every member published or standing in, as the release shows them."""
    return sa.select(sa.literal(version, sa.Integer).label("veil_version"), *(members.c[c] for c in published)).where(
        members.c.veil_state.in_([LIVE, GONE])
    )


def cells(members: sa.Table, columns: Sequence[str], states: Sequence[int]) -> sa.Select[Any]:
    """Rows per distinct value of ``columns`` among members in ``states`` (what a version must recount to)."""
    keys = [members.c[c] for c in columns]
    return sa.select(*keys, sa.func.count().label("n")).where(members.c.veil_state.in_(list(states))).group_by(*keys)


def oldest_waiting(members: sa.TableClause) -> sa.Select[Any]:
    """The earliest version a waiting member arrived in (NULL when nobody waits)."""
    return sa.select(sa.func.min(members.c.veil_joined)).where(members.c.veil_state == PENDING)


def published_cells(block_rows: sa.Table, columns: Sequence[str], version: int) -> sa.Select[Any]:
    """Rows per distinct value of ``columns`` in version ``version``'s blocks table (counted from its rows)."""
    keys = [block_rows.c[c] for c in columns]
    return (
        sa.select(*keys, sa.cast(sa.func.sum(block_rows.c.n), sa.BigInteger).label("n"))
        .where(block_rows.c.veil_version == version)
        .group_by(*keys)
    )


def state_of(state: sa.Table, name: str) -> sa.Select[Any]:
    """Release ``name``'s current series (``series_state``)."""
    t = state
    return sa.select(
        t.c.series, t.c.started_version, t.c.node, t.c.shape, t.c.members, t.c.batch, t.c.next_cohort, t.c.secret
    ).where(t.c.name == name)


def forget_state(state: sa.Table, name: str) -> sa.Delete:
    return sa.delete(state).where(state.c.name == name)


def record_state(state: sa.Table, values: Mapping[str, Any]) -> sa.Insert:
    return state.insert().values(dict(values))


def withdraw(members: sa.Table) -> sa.Update:
    """The cohorts in ``veil_leaving`` leave the release whole, their people waiting again (an erasure left them
    too small or failing the models: docs/series.md §2)."""
    leaving = leaving_table()
    return (
        sa.update(members)
        .where(members.c.veil_state == LIVE, members.c.veil_cohort.in_(sa.select(leaving.c.veil_cohort)))
        .values(veil_state=PENDING, veil_cohort=None, veil_since=None)
    )


def joined_after(members: sa.Table, version: int) -> sa.Select[Any]:
    """How many members joined after version ``version`` (``veil_joined``), whatever their state: the series' join
    rate (``veil.release.delaybound``)."""
    return sa.select(sa.func.count()).select_from(members).where(members.c.veil_joined > version)


def cohort_rows(members: sa.Table) -> sa.Select[Any]:
    """How many cohorts show each (live rows, standing rows) pair: what the series' plan projects
    (``veil.release.seriesplan``)."""

    def rows_in(state: int) -> Any:
        return sa.func.sum(sa.case((members.c.veil_state == state, 1), else_=0))

    each = (
        sa.select(rows_in(LIVE).label("live"), rows_in(GONE).label("gone"))
        .where(members.c.veil_state != PENDING)
        .group_by(members.c.veil_cohort)
        .subquery("c")
    )
    return sa.select(each.c.live, each.c.gone, sa.func.count().label("n")).group_by(each.c.live, each.c.gone)


def unmapped(members: sa.Table, column: str, dim: Any, level: int) -> sa.Select[Any]:
    """How many members show a label of ``column`` that ``dim`` (its dimension table) has at no row at ``level``:
    the node cannot move up for them (``relabeled``)."""
    d = dim.alias("d")
    found = sa.exists().where(label_of(d, level) == members.c[column])
    return sa.select(sa.func.count()).select_from(members).where(members.c[column].is_not(None), ~found)


def relabeled(members: sa.Table, changes: Sequence[tuple[str, Any, int, int]]) -> sa.Select[Any]:
    """Every member, each ``(column, dim, level, target)`` of ``changes`` with its label moved from ``level`` up to
    ``target`` through ``dim``, its dimension table (a function chain, so a label has one ancestor), joined to the
    distinct pairs of labels: the members' rows once the series' node has moved up (docs/series.md §2a), which
    replace the table's (``Session.replace``).

    >>> m = members_table("veil", "t_members", ["age"], {})
    >>> from veil.queries.nodes import Layout
    >>> sql = str(relabeled(m, [("age", Layout((2,), 0).dim(0), 0, 2)]))
    >>> "up0.veil_new AS age" in sql and "(SELECT DISTINCT CAST(d0.level_0 AS TEXT) AS veil_old, d0.level_2" in sql
    True
    """
    columns: dict[str, Any] = {c.name: c for c in members.c}
    joined: Any = members
    for k, (column, dim, level, target) in enumerate(changes):
        d = dim.alias(f"d{k}")
        pairs = sa.select(label_of(d, level).label("veil_old"), label_of(d, target).label("veil_new")).distinct()
        up = pairs.subquery(f"up{k}")
        joined = joined.outerjoin(up, members.c[column] == up.c.veil_old)
        columns[column] = up.c.veil_new.label(column)
    return sa.select(*columns.values()).select_from(joined)


def generation(schema: str, previous: str, table: str) -> CreateTableAs:
    """``<schema>.<table>``, a new members table: a copy of ``previous`` (``veil.release.memberstore``: a version's
    own members where statements commit on their own).

    >>> print(generation("veil", "c_members_v3", "c_members_v4"))  # doctest: +NORMALIZE_WHITESPACE
    CREATE TABLE veil.c_members_v4 AS SELECT * FROM veil.c_members_v3
    """
    copy: sa.Select[Any] = sa.select(sa.literal_column("*")).select_from(sa.table(previous, schema=schema))
    return CreateTableAs(sa.table(table, schema=schema), copy, temporary=False)
