"""The series ledger's statements (docs/series-ledger.md §6): what every version of a release published, per block,
in the catalog.  Content rows carry the versions they are valid for (``first_version .. last_version``), so a
version that changes few blocks adds few rows.  Tables are passed in (``veil.catalog`` defines them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from veil.queries.ddl import CreateTableAs, count_rows, working_table
from veil.queries.nodes import Layout
from veil.queries.publication import VERSION
from veil.queries.release import CELLS, label_of, value_match, values_of

CHANGED = "veil_changed_blocks"


def of_release(table: sa.Table, name: str, *columns: str) -> sa.Select[Any]:
    """``columns`` of ``table``'s rows for release ``name``."""
    return sa.select(*(table.c[c] for c in columns)).where(table.c.name == name)


VERSION_COLUMNS = ("version", "release_id", "node", "attributes", "columns", "hierarchies", "policy")


def versions_of_release(versions: sa.Table, name: str) -> sa.Select[Any]:
    """Release ``name``'s rows of ``series_versions`` (``VERSION_COLUMNS``), oldest first: what a run's repair
    and its ledger read of them (one statement for both where the repair reads them: Spark)."""
    return of_release(versions, name, *VERSION_COLUMNS).order_by(versions.c.version)


def rows_of_release(table: sa.Table, name: str) -> sa.Select[Any]:
    """How many rows of ``table`` belong to release ``name``."""
    return count_rows(table).where(table.c.name == name)


def next_id(table: sa.Table, name: str) -> sa.Select[Any]:
    return sa.select(sa.func.coalesce(sa.func.max(table.c.id), -1) + 1).where(table.c.name == name)


def record_version(versions: sa.Table, **values: Any) -> sa.Insert:
    """A version's row in ``series_versions`` (name, version, release id, node, attributes, columns, hierarchies,
    policy, published_at)."""
    return versions.insert().values(**values)


def changed_table() -> sa.Table:
    """Temporary table of the block ids whose content a new version changes."""
    return sa.Table(CHANGED, sa.MetaData(), sa.Column("id", sa.BigInteger), prefixes=["TEMPORARY"])


def close_cells(cells: sa.Table, name: str, version: int, open_version: int) -> sa.Update:
    """End the validity of the changed blocks' current content at ``version - 1``."""
    changed = sa.select(sa.table(CHANGED, sa.column("id")).c.id)
    return (
        sa.update(cells)
        .where(cells.c.name == name, cells.c.last_version == open_version, cells.c.block_id.in_(changed))
        .values(last_version=version - 1)
    )


BLOCK_IDS = "veil_cell_blocks"
VALUE_IDS = "veil_cell_value_ids"


def block_ids_table(qi_count: int) -> sa.Table:
    """Temporary table: the ledger's id (``block_id``) of each published block, by its codes ``g<i>``."""
    return sa.Table(
        BLOCK_IDS,
        sa.MetaData(),
        *(sa.Column(f"g{i}", sa.BigInteger) for i in range(qi_count)),
        sa.Column("block_id", sa.BigInteger),
        prefixes=["TEMPORARY"],
    )


def value_ids_table() -> sa.Table:
    """Temporary table: the ledger's id (``value_id``) of each ``vid`` of the candidate's cells."""
    return sa.Table(
        VALUE_IDS,
        sa.MetaData(),
        sa.Column("vid", sa.BigInteger),
        sa.Column("value_id", sa.BigInteger),
        prefixes=["TEMPORARY"],
    )


def _cells(qi_count: int) -> sa.TableClause:
    return sa.table(CELLS, *(sa.column(f"g{i}") for i in range(qi_count)), sa.column("vid"), sa.column("n"))


def copy_cells(
    series_cells: sa.Table, name: str, version: int, open_version: int, qi_count: int, merge: bool
) -> sa.Insert:
    """The candidate's cells (``veil_cells``) of the published blocks (those in ``veil_cell_blocks``) written to
    the ledger as version ``version``'s content, valid from it on — by the database, no cell leaves it.
    ``merge``: several ``vid`` share one value id, so their rows are summed per (block, value).

    >>> t = sa.Table("series_cells", sa.MetaData(), *(sa.Column(c) for c in ("name", "block_id", "value_id",
    ...              "count", "first_version", "last_version")))
    >>> print(copy_cells(t, "census", 1, 9, 1, False))  # doctest: +NORMALIZE_WHITESPACE
    INSERT INTO series_cells (name, block_id, value_id, count, first_version, last_version)
    SELECT :param_1 AS name, b.block_id, v.value_id, c.n, :param_2 AS first_version, :param_3 AS last_version
    FROM veil_cells AS c JOIN veil_cell_blocks AS b ON b.g0 = c.g0 JOIN veil_cell_value_ids AS v ON v.vid = c.vid
    """
    c = _cells(qi_count).alias("c")
    b, v = block_ids_table(qi_count).alias("b"), value_ids_table().alias("v")
    joined = c.join(b, sa.and_(*(b.c[f"g{i}"] == c.c[f"g{i}"] for i in range(qi_count))) if qi_count else sa.true())
    joined = joined.join(v, v.c.vid == c.c.vid)
    return _insert_content(series_cells, name, version, open_version, joined, b.c.block_id, v.c.value_id, c.c.n, merge)


def _insert_content(
    series_cells: sa.Table,
    name: str,
    version: int,
    open_version: int,
    joined: Any,
    block_id: Any,
    value_id: Any,
    n: Any,
    merge: bool,
    *where: Any,
) -> sa.Insert:
    """``series_cells`` rows (block, value, rows) from ``joined``, valid from ``version`` on (``merge``: rows
    summed per block and value)."""
    rows: Any = sa.cast(sa.func.sum(n), sa.BigInteger) if merge else n
    stmt = (
        sa.select(
            sa.literal(name, sa.Text).label("name"),
            block_id,
            value_id,
            rows,
            sa.literal(version, sa.Integer).label("first_version"),
            sa.literal(open_version, sa.Integer).label("last_version"),
        )
        .select_from(joined)
        .where(*where)
    )
    if merge:
        stmt = stmt.group_by(block_id, value_id)
    return series_cells.insert().from_select(
        ["name", "block_id", "value_id", "count", "first_version", "last_version"], stmt
    )


BLOCK_LABELS = "veil_cell_block_labels"
VALUE_LABELS = "veil_cell_value_labels"


def block_labels_table(layout: Layout, node: Sequence[int]) -> CreateTableAs:
    """Temporary table: each published block's ledger id (``veil_cell_blocks``, by codes) beside its labels as
    the version's rows show them (``a<i>``, ``label_of`` through the dimension tables) — what
    ``copy_published`` meets the blocks table on."""
    b = block_ids_table(len(node)).alias("b")
    ids: Any = b
    labels = []
    for i, level in enumerate(node):
        d = layout.dim(i)
        m = (
            sa.select(d.c[f"code_{level}"].label("code"), label_of(d, level).label("label"))
            .distinct()
            .subquery(f"m{i}")
        )
        ids = ids.join(m, m.c.code == b.c[f"g{i}"])
        labels.append(m.c.label.label(f"a{i}"))
    return CreateTableAs(sa.table(BLOCK_LABELS), sa.select(b.c.block_id, *labels).select_from(ids))


def value_labels_table(width: int) -> CreateTableAs:
    """Temporary table: each distinct published value tuple (``veil_cell_values``: ``v<j>``, ``vid``) beside its
    ledger id (``veil_cell_value_ids``)."""
    r, i = values_of(width).alias("r"), value_ids_table().alias("i")
    select = sa.select(*(r.c[f"v{j}"] for j in range(width)), r.c.vid, i.c.value_id).select_from(
        r.join(i, i.c.vid == r.c.vid)
    )
    return CreateTableAs(sa.table(VALUE_LABELS), select)


def copy_published(
    series_cells: sa.Table,
    name: str,
    version: int,
    open_version: int,
    block_rows: sa.Table,
    qis: Sequence[str],
    columns: Sequence[str],
    nulls: Sequence[str],
    merge: bool,
) -> sa.Insert:
    """Version ``version``'s blocks as published (``block_rows``: counted from its rows, every published column a
    QI or one of ``columns``) written to the ledger as its content, valid from it on — the cells ``copy_cells``
    writes, without counting them again from the source.  A block meets its id by its labels
    (``block_labels_table``), a value tuple by its values (``value_labels_table``; ``value_match``, ``nulls``):
    two small tables that PostgreSQL analyzes, so it hashes them instead of looping over the blocks.
    ``merge``: several ``vid`` share one value id, so their rows are summed per (block, value).

    >>> blocks = sa.Table("t_block_rows", sa.MetaData(), *(sa.Column(c) for c in ("veil_version", "zip", "n")))
    >>> ledger = sa.Table("series_cells", sa.MetaData(), *(sa.Column(c) for c in ("name", "block_id", "value_id",
    ...                   "count", "first_version", "last_version")))
    >>> print(copy_published(ledger, "census", 1, 9, blocks, ["zip"], [], [], False))  # doctest: +NORMALIZE_WHITESPACE
    INSERT INTO series_cells (name, block_id, value_id, count, first_version, last_version)
    SELECT :param_1 AS name, bl.block_id, v.value_id, c.n, :param_2 AS first_version, :param_3 AS last_version
    FROM t_block_rows AS c JOIN veil_cell_block_labels AS bl ON c.zip = bl.a0 JOIN veil_cell_value_labels AS v
    ON true WHERE c.veil_version = :veil_version_1
    """
    c = block_rows.alias("c")
    bl = sa.table(BLOCK_LABELS, sa.column("block_id"), *(sa.column(f"a{i}") for i in range(len(qis)))).alias("bl")
    v = sa.table(
        VALUE_LABELS, *(sa.column(f"v{j}") for j in range(len(columns))), sa.column("vid"), sa.column("value_id")
    ).alias("v")
    match = value_match([c.c[col] for col in columns], v, nulls)
    joined = c.join(bl, sa.and_(*(c.c[qi] == bl.c[f"a{i}"] for i, qi in enumerate(qis))) if qis else sa.true())
    joined = joined.join(v, sa.and_(*match) if match else sa.true())
    return _insert_content(
        series_cells,
        name,
        version,
        open_version,
        joined,
        bl.c.block_id,
        v.c.value_id,
        c.c.n,
        merge,
        c.c[VERSION] == version,
    )


def rows_per_value(qi_count: int) -> sa.Select[Any]:
    """The candidate's rows per ``vid`` (every block, suppressed ones too): the version's column totals."""
    c = _cells(qi_count)
    return sa.select(c.c.vid, sa.cast(sa.func.sum(c.c.n), sa.BigInteger).label("n")).group_by(c.c.vid)


def version_rows(series_cells: sa.Table, name: str, version: int) -> sa.Select[Any]:
    """The rows of the content version ``version`` of release ``name`` starts with (cells first valid in it)."""
    t = series_cells
    return sa.select(sa.func.coalesce(sa.func.sum(t.c["count"]), 0), sa.func.count()).where(
        t.c.name == name, t.c.first_version == version
    )


CELL_SHARDS = "veil_cell_shards"
BLOCK_SHARDS = "veil_ledger_shards"
NEW_CELLS = "veil_new_cells"


def cell_shards_table(qi_count: int) -> sa.Table:
    """Temporary table: the shard (``veil.release.shards``) of each block of the candidate's node, by its codes."""
    return sa.Table(
        CELL_SHARDS,
        sa.MetaData(),
        *(sa.Column(f"g{i}", sa.BigInteger) for i in range(qi_count)),
        sa.Column("shard", sa.Integer),
        prefixes=["TEMPORARY"],
    )


def block_shards_table() -> sa.Table:
    """Temporary table: the shard of each block id of the ledger."""
    return sa.Table(
        BLOCK_SHARDS,
        sa.MetaData(),
        sa.Column("block_id", sa.BigInteger),
        sa.Column("shard", sa.Integer),
        prefixes=["TEMPORARY"],
    )


def new_cells_table() -> sa.Table:
    """Temporary table: a version's changed cells gathered shard by shard, written to the ledger at the end."""
    return sa.Table(
        NEW_CELLS,
        sa.MetaData(),
        sa.Column("block_id", sa.BigInteger),
        sa.Column("value_id", sa.BigInteger),
        sa.Column("count", sa.BigInteger),
        prefixes=["TEMPORARY"],
    )


SHARDED_CELLS = "veil_sharded_cells"
SHARDED_LEDGER = "veil_sharded_ledger"


def sharded_cells(qi_count: int, into: str | None = None) -> CreateTableAs:
    """The candidate's cells (``veil_cells``: codes ``g<i>``, ``vid``, ``n``) with their block's shard, stored in
    shard order with 64-bit keys: one sort, after which each shard's cells lie together and ``shard_cells``
    reads only them (a filter on a clustered column: DuckDB skips the row groups whose shard range excludes it).

    >>> print(sharded_cells(1).select)  # doctest: +NORMALIZE_WHITESPACE
    SELECT CAST(c.g0 AS BIGINT) AS g0, CAST(c.vid AS BIGINT) AS vid, c.n, s.shard
    FROM veil_cells AS c JOIN veil_cell_shards AS s ON s.g0 = c.g0 ORDER BY s.shard
    """
    c, s = _cells(qi_count).alias("c"), cell_shards_table(qi_count).alias("s")
    on = sa.and_(*(s.c[f"g{i}"] == c.c[f"g{i}"] for i in range(qi_count))) if qi_count else sa.true()
    keys = [sa.cast(c.c[k], sa.BigInteger).label(k) for k in (*(f"g{i}" for i in range(qi_count)), "vid")]
    stmt = sa.select(*keys, c.c.n, s.c.shard).select_from(c.join(s, on)).order_by(s.c.shard)
    return working_table(sa.table(SHARDED_CELLS), stmt, into)


def shard_cells(qi_count: int, shard: int) -> sa.Select[Any]:
    """The candidate's cells of the blocks of one shard (from ``sharded_cells``).

    >>> print(shard_cells(1, 3))  # doctest: +NORMALIZE_WHITESPACE
    SELECT veil_sharded_cells.g0, veil_sharded_cells.vid, veil_sharded_cells.n FROM veil_sharded_cells
    WHERE veil_sharded_cells.shard = :shard_1
    """
    t = sa.table(
        SHARDED_CELLS,
        *(sa.column(f"g{i}") for i in range(qi_count)),
        sa.column("vid"),
        sa.column("n"),
        sa.column("shard"),
    )
    kept = [c for c in t.c.keys() if c != "shard"]  # noqa: SIM118 — a ColumnCollection iterates columns, not names
    return sa.select(*(t.c[c] for c in kept)).where(t.c.shard == shard)


def sharded_ledger(
    series_cells: sa.Table, name: str, columns: tuple[str, ...], into: str | None = None
) -> CreateTableAs:
    """``columns`` of release ``name``'s ledger cells with their block's shard, stored in shard order (as
    ``sharded_cells``): the ledger is read once, not once per shard."""
    s = block_shards_table().alias("s")
    stmt = (
        sa.select(*(series_cells.c[c] for c in columns), s.c.shard)
        .select_from(series_cells.join(s, s.c.block_id == series_cells.c.block_id))
        .where(series_cells.c.name == name)
        .order_by(s.c.shard)
    )
    return working_table(sa.table(SHARDED_LEDGER), stmt, into)


def ledger_shard_cells(shard: int, columns: tuple[str, ...]) -> sa.Select[Any]:
    """``columns`` of the ledger's cells whose blocks lie in one shard (from ``sharded_ledger``)."""
    t = sa.table(SHARDED_LEDGER, *(sa.column(c) for c in (*columns, "shard")))
    return sa.select(*(t.c[c] for c in columns)).where(t.c.shard == shard)


def write_new_cells(series_cells: sa.Table, name: str, version: int, open_version: int) -> sa.Insert:
    """The gathered changed cells (``veil_new_cells``) written as version ``version``'s, valid from it on."""
    n = new_cells_table()
    stmt = sa.select(
        sa.literal(name, sa.Text).label("name"),
        n.c.block_id,
        n.c.value_id,
        n.c["count"],
        sa.literal(version, sa.Integer).label("first_version"),
        sa.literal(open_version, sa.Integer).label("last_version"),
    )
    return series_cells.insert().from_select(
        ["name", "block_id", "value_id", "count", "first_version", "last_version"], stmt
    )
