"""The publication's statements (docs/publication.md): one rows table and one blocks table per release name,
each row tagged with its version; views that select the current version through the catalog's pointer row
(``publications``) and are created once, never dropped or redefined by a release; per-version views
``<name>_v<N>``.  A release inserts, repoints and deletes expired rows in one transaction; readers only ever
take share locks, so a release never waits for them and MVCC keeps their snapshot whole.

>>> pub = sa.Table("publications", sa.MetaData(), sa.Column("name"), sa.Column("current_version"), schema="veil")
>>> rows = rows_table("published", "census", {"age": sa.Text()})
>>> print(rows_view(rows, ["age"], current(pub, "census")).compile(compile_kwargs={"literal_binds": True}))
SELECT published.census_rows.age
FROM published.census_rows
WHERE published.census_rows.veil_version = (SELECT veil.publications.current_version
FROM veil.publications
WHERE veil.publications.name = 'census')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ClauseElement, Executable

from veil.queries.catalog import KEPT
from veil.queries.ddl import CreateTableAs
from veil.releasenames import names  # pub.names: the release's objects (the config checks their lengths too)

VERSION = "veil_version"
MAX_IDENTIFIER = 63  # PostgreSQL truncates longer names (docs/publication.md)


def schema_exists(schema: str) -> sa.Select[Any]:
    info = sa.table("schemata", sa.column("schema_name"), schema="information_schema")
    return sa.select(sa.func.count()).select_from(info).where(info.c.schema_name == sa.literal(schema))


def rows_table(schema: str, name: str, columns: Mapping[str, Any]) -> sa.Table:
    """``<name>_rows``: every kept version's rows, tagged with ``veil_version``."""
    md = sa.MetaData()
    return sa.Table(
        names(name)["rows"],
        md,
        sa.Column(VERSION, sa.Integer, nullable=False),
        *(sa.Column(c, t) for c, t in columns.items()),
        schema=schema,
    )


def block_rows_table(schema: str, name: str, qis: Sequence[str], sensitive: Mapping[str, Any]) -> sa.Table:
    """``<name>_block_rows``: per version, block key, sensitive combination and its count."""
    md = sa.MetaData()
    return sa.Table(
        names(name)["block_rows"],
        md,
        sa.Column(VERSION, sa.Integer, nullable=False),
        *(sa.Column(c, sa.Text) for c in qis),
        *(sa.Column(c, t) for c, t in sensitive.items()),
        sa.Column("n", sa.BigInteger, nullable=False),
        schema=schema,
    )


def version_index(table: sa.Table) -> sa.Index:
    return sa.Index(f"{table.name}_version", table.c[VERSION])


def current(publications: sa.Table, name: str) -> Any:
    """The current version of release ``name``, read from the pointer row when the statement runs."""
    p = publications
    return sa.select(p.c.current_version).where(p.c.name == name).scalar_subquery()


def rows_view(rows: sa.TableClause, columns: Sequence[str], version: Any) -> sa.Select[Any]:
    return sa.select(*(rows.c[c] for c in columns)).where(rows.c[VERSION] == version)


def blocks_view(
    block_rows: sa.TableClause, qis: Sequence[str], sensitive: Sequence[str], version: Any
) -> sa.Select[Any]:
    """Per block: its generalized key, its size, and one row per sensitive-value combination with count."""
    t = block_rows
    size = sa.cast(sa.func.sum(t.c.n).over(partition_by=[t.c[c] for c in qis]), sa.BigInteger).label("block_size")
    return sa.select(*(t.c[c] for c in qis), size, *(t.c[c] for c in sensitive), t.c.n.label("count")).where(
        t.c[VERSION] == version
    )


def releases_view(releases: sa.Table, publications: sa.Table, name: str, shown: Any = None) -> sa.Select[Any]:
    """Published and expired versions of release ``name`` from the catalog; ``current`` marks the version the
    views show — the pointer's, or ``shown`` (Spark: a literal, docs/spark.md) — (the columns of earlier
    Veils first, so an old view can be replaced in place)."""
    r = releases
    now = current(publications, name) if shown is None else shown
    return sa.select(
        r.c.version,
        r.c.id.label("release_id"),
        r.c.published_at,
        r.c.node,
        r.c.rows_published,
        r.c.rows_suppressed,
        r.c.achieved,
        r.c.output_table,
        r.c.status,
        r.c.rows_deferred,
        (r.c.version == now).label("current"),
    ).where(r.c.name == name, r.c.status.in_(KEPT))


def version_rows_view(rows: sa.Table, columns: Sequence[str], version: int) -> sa.Select[Any]:
    """``<name>_v<N>``: version ``version``'s rows, the version a literal (the view shows it whatever the pointer)."""
    return rows_view(rows, columns, sa.literal(version))


def version_blocks_view(
    block_rows: sa.Table, qis: Sequence[str], sensitive: Sequence[str], version: int
) -> sa.Select[Any]:
    """``<name>_v<N>_blocks``: version ``version``'s blocks, the version a literal."""
    return blocks_view(block_rows, qis, sensitive, sa.literal(version))


def blocks_of_version(schema: str, name: str, version: int) -> sa.Select[Any]:
    """How many rows of ``<name>_block_rows`` belong to version ``version`` (none: its rows expired, or an earlier
    Veil published it in a table of its own): ``veil rollback`` shows only versions still there."""
    table = sa.table(names(name)["block_rows"], sa.column(VERSION), schema=schema)
    return sa.select(sa.func.count()).select_from(table).where(sa.column(VERSION) == version)


def legacy_copy(schema: str, target: str, source: str, version: int) -> CreateTableAs:
    """An earlier Veil's table of one version (``<name>_v<N>``, ``<name>_v<N>_blocks``) copied into ``target``
    (``<name>_rows``, ``<name>_block_rows``), every row tagged with ``version`` and the types kept."""
    columns: list[sa.ColumnElement[Any]] = [sa.literal(version, sa.Integer).label(VERSION), sa.literal_column("*")]
    copy = sa.select(*columns).select_from(sa.table(source, schema=schema))
    return CreateTableAs(sa.table(target, schema=schema), copy, temporary=False)


def insert_rows(rows: sa.Table, columns: Sequence[str], select: Any) -> sa.Insert:
    return rows.insert().from_select([VERSION, *columns], select)


KEYS = "veil_block_keys_{}"  # temporary: the distinct values of one column of a version's rows, numbered


def block_keys(rows: sa.Table, version: int, column: str, j: int) -> Any:
    """The distinct non-NULL values ``v`` of ``column`` in version ``version``'s rows, numbered (``code``) into the
    temporary table ``veil_block_keys_<j>``: what ``insert_blocks`` groups by instead of the text."""
    return CreateTableAs(sa.table(KEYS.format(j)), numbered_values(rows, version, column))


def numbered_values(table: sa.Table, version: int, column: str, alias: str = "d") -> sa.Select[Any]:
    """The distinct non-NULL values ``v`` of ``column`` in version ``version``'s rows of ``table``, numbered
    from 1 (``code``) in the database's order of them: a statement that reads them again gets the same numbers."""
    c = table.c[column]
    values = sa.select(c.label("v")).where(table.c[VERSION] == version, c.is_not(None)).distinct().subquery(alias)
    return sa.select(values.c.v, sa.func.dense_rank().over(order_by=values.c.v).label("code"))


def _keys(j: int, alias: str) -> Any:
    return sa.table(KEYS.format(j), sa.column("v"), sa.column("code")).alias(alias)


def insert_blocks(
    block_rows: sa.Table,
    rows: sa.Table,
    version: int,
    qis: Sequence[str],
    sensitive: Sequence[str],
    numbered: bool = False,
) -> sa.Insert:
    """The version's blocks counted from its published rows, grouped by their values — or, ``numbered``, with
    each QI and sensitive column's value replaced by its number in ``veil_block_keys_<j>`` (``block_keys``; NULL
    stays NULL), the rows counted per numbers and the values put back.  An integer ``GROUP BY`` spills where
    one over the text of tens of millions of groups fails at DuckDB's memory limit (100M census, 512 MB: 44M
    groups counted in 27 s by numbers, out of memory by text); PostgreSQL spills either, faster by text."""
    columns = [*qis, *sensitive]
    if not numbered:
        keys = [rows.c[c] for c in columns]
        plain = (
            sa.select(sa.literal(version, sa.Integer), *keys, sa.func.count())
            .where(rows.c[VERSION] == version)
            .group_by(*keys)
        )
        return block_rows.insert().from_select([VERSION, *columns, "n"], plain)
    inner = [_keys(j, f"k{j}") for j in range(len(columns))]
    joined: Any = rows
    for j, c in enumerate(columns):
        joined = joined.outerjoin(inner[j], rows.c[c] == inner[j].c.v)
    codes = [inner[j].c.code.label(f"c{j}") for j in range(len(columns))]
    counted = (
        sa.select(*codes, sa.func.count().label("n"))
        .select_from(joined)
        .where(rows.c[VERSION] == version)
        .group_by(*(k.c.code for k in inner))
        .subquery("g")
    )
    outer = [_keys(j, f"l{j}") for j in range(len(columns))]
    back: Any = counted
    for j in range(len(columns)):
        back = back.outerjoin(outer[j], counted.c[f"c{j}"] == outer[j].c.code)
    select = sa.select(
        sa.literal(version, sa.Integer), *(outer[j].c.v for j in range(len(columns))), counted.c.n
    ).select_from(back)
    return block_rows.insert().from_select([VERSION, *columns, "n"], select)


def delete_versions(table: sa.Table, versions: Sequence[int]) -> sa.Delete:
    return sa.delete(table).where(table.c[VERSION].in_(list(versions)))


def delete_one_row(rows: sa.Table, version: int, column: str) -> sa.Delete:
    """Test failpoint ``corrupt``: delete the rows of ``version`` sharing one value of ``column``."""
    one = sa.select(rows.c[column]).where(rows.c[VERSION] == version).limit(1).scalar_subquery()
    return sa.delete(rows).where(rows.c[VERSION] == version, rows.c[column] == one)


def set_pointer(publications: sa.Table, name: str, version: int, when: Any) -> sa.Update:
    p = publications
    return sa.update(p).where(p.c.name == name).values(current_version=version, updated_at=when)


def add_pointer(publications: sa.Table, name: str, schema: str, version: int, when: Any) -> sa.Insert:
    return publications.insert().values(name=name, schema=schema, current_version=version, updated_at=when)


def read_pointer(publications: sa.Table, name: str) -> sa.Select[Any]:
    p = publications
    return sa.select(p.c.current_version, p.c.schema).where(p.c.name == name)


def lock_timeout(milliseconds: int) -> sa.Select[Any]:
    """PostgreSQL: give up waiting for a lock after ``milliseconds`` for the rest of the transaction."""
    return sa.select(sa.func.set_config("lock_timeout", f"{int(milliseconds)}ms", True))


def objects_in(schema: str) -> sa.Select[Any]:
    """Names and types (``BASE TABLE``, ``VIEW``, ...) of the relations in ``schema``."""
    info = sa.table(
        "tables",
        sa.column("table_schema"),
        sa.column("table_name"),
        sa.column("table_type"),
        schema="information_schema",
    )
    return sa.select(info.c.table_name, info.c.table_type).where(info.c.table_schema == sa.literal(schema))


def views_mentioning(schema: str, name: str) -> sa.Select[Any]:
    """DuckDB (which does not track view dependencies): views whose text mentions ``name``, other than it."""
    views = sa.func.duckdb_views().table_valued("schema_name", "view_name", "sql").alias("v")
    return sa.select(views.c.schema_name, views.c.view_name).where(
        views.c.sql.contains(name), sa.not_(sa.and_(views.c.view_name == name, views.c.schema_name == schema))
    )


def column_names(schema: str, table: str) -> sa.Select[Any]:
    info = sa.table(
        "columns",
        sa.column("table_schema"),
        sa.column("table_name"),
        sa.column("column_name"),
        sa.column("ordinal_position"),
        schema="information_schema",
    )
    return (
        sa.select(info.c.column_name)
        .where(info.c.table_schema == sa.literal(schema), info.c.table_name == sa.literal(table))
        .order_by(info.c.ordinal_position)
    )


# --- the autocommit publication (``veil.release.autocommit``; docs/spark.md §4–6) ------------------------------
# Where every statement commits on its own: a table per version, views switched to it one catalog operation each,
# carrying the version they show, and a lock table.  The constructs below have no SQL of their own: a dialect
# whose backend publishes this way compiles them (``@compiles(CreateViewAt, "spark")``, ``veil.queries.spark``).


def version_rows(schema: str, name: str, version: int, columns: dict[str, Any]) -> sa.Table:
    """``<name>_rows_v<N>``: version N's rows (``veil_version`` and the published columns), written once."""
    return sa.Table(
        f"{name}_rows_v{version}",
        sa.MetaData(),
        sa.Column("veil_version", sa.Integer),
        *(sa.Column(c, t) for c, t in columns.items()),
        schema=schema,
    )


def version_block_rows(schema: str, name: str, version: int, qis: list[str], sensitive: dict[str, Any]) -> sa.Table:
    """``<name>_block_rows_v<N>``: per block key and sensitive combination of version N, its count."""
    return sa.Table(
        f"{name}_block_rows_v{version}",
        sa.MetaData(),
        sa.Column("veil_version", sa.Integer),
        *(sa.Column(c, sa.Text) for c in qis),
        *(sa.Column(c, t) for c, t in sensitive.items()),
        sa.Column("n", sa.BigInteger),
        schema=schema,
    )


def count_blocks(rows: sa.Table, version: int, qis: list[str], sensitive: list[str]) -> sa.Select[Any]:
    """The ``SELECT`` that ``<name>_block_rows_v<N>`` is created from (counted from the version's rows)."""
    keys = [rows.c[c] for c in (*qis, *sensitive)]
    return sa.select(
        sa.literal(version, sa.Integer).label("veil_version"), *keys, sa.cast(sa.func.count(), sa.BigInteger).label("n")
    ).group_by(*keys)


VERSION_TABLES = r"^{name}_(?:rows|block_rows)_v(\d+)$"  # BASE TABLEs of release {name}
VERSION_VIEWS = r"^{name}_v(\d+)(?:_blocks)?$"  # VIEWs


class CreateViewAt(Executable, ClauseElement):
    """``CREATE OR REPLACE VIEW <view> TBLPROPERTIES ('veil.version'=..., ...) AS <select>``: one catalog
    operation that switches what the view shows and records which version it is."""

    inherit_cache = False

    def __init__(self, view: sa.TableClause, select: Any, properties: dict[str, str]) -> None:
        self.view, self.select, self.properties = view, select, properties


def switched_views(
    schema: str,
    name: str,
    version: int,
    properties: dict[str, str],
    columns: Sequence[str],
    qis: Sequence[str],
    sensitive: Sequence[str],
    releases: sa.Table,
    publications: sa.Table,
) -> list[tuple[str, CreateViewAt]]:
    """Every view of release ``name`` pointed at version ``version``'s tables, in the order they switch: the
    version's own views, then ``<name>_blocks``, ``<name>_releases`` and ``<name>`` (the marker); each carries
    ``properties`` (``veil.version``, ``veil.release_id``)."""
    shown = names(name, version)
    rows = sa.table(f"{name}_rows_v{version}", *(sa.column(c) for c in ("veil_version", *columns)), schema=schema)
    blocks = sa.table(
        f"{name}_block_rows_v{version}", *(sa.column(c) for c in ("veil_version", *qis, *sensitive, "n")), schema=schema
    )
    at = sa.literal(version, sa.Integer)
    steps = [
        (shown["version_view"], rows_view(rows, columns, at)),
        (shown["version_blocks"], blocks_view(blocks, qis, sensitive, at)),
        (shown["blocks"], blocks_view(blocks, qis, sensitive, at)),
        (shown["releases"], releases_view(releases, publications, name, at)),
        (shown["view"], rows_view(rows, columns, at)),
    ]
    return [(view, CreateViewAt(sa.table(view, schema=schema), select, properties)) for view, select in steps]


class CreateLock(Executable, ClauseElement):
    """``CREATE TABLE <lock> (owner STRING) TBLPROPERTIES (...)``: one metastore operation that fails when
    the table exists — the lock of a release name; the properties say who holds it."""

    inherit_cache = False

    def __init__(self, table: sa.TableClause, properties: dict[str, str]) -> None:
        self.table, self.properties = table, properties


class ShowProperties(Executable, ClauseElement):
    """``SHOW TBLPROPERTIES <table>``: (key, value) rows."""

    inherit_cache = False

    def __init__(self, table: sa.TableClause) -> None:
        self.table = table


def show_properties(schema: str, name: str) -> ShowProperties:
    return ShowProperties(sa.table(name, schema=schema))


class RenameTable(Executable, ClauseElement):
    """``ALTER TABLE <table> RENAME TO <new>`` (atomic in the metastore: of two renames, one fails)."""

    inherit_cache = False

    def __init__(self, table: sa.TableClause, new: sa.TableClause) -> None:
        self.table, self.new = table, new


@compiles(CreateViewAt)
@compiles(CreateLock)
@compiles(ShowProperties)
@compiles(RenameTable)
def _autocommit_only(element: ClauseElement, compiler: Any, **kw: Any) -> str:
    raise sa.exc.CompileError(
        f"{type(element).__name__} has no SQL for dialect {compiler.dialect.name!r}: a backend "
        f"that publishes by the autocommit publication registers it (@compiles("
        f"{type(element).__name__}, {compiler.dialect.name!r}), as veil.queries.spark does)"
    )
