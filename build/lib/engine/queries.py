"""The only module that builds SQL: SQLAlchemy Core statements, identifiers quoted, values bound.

It builds, never executes (``backends`` execute), so every statement can be compiled per dialect and
snapshot-tested.  Working tables (``veil_*``) are temporary: they live in the session's temp schema and
vanish with the connection.

The per-node count query (Incognito's rollup): the source is scanned once into ``veil_base_raw`` (one row
per distinct QI × sensitive combination with its count) and re-coded in ``veil_base`` through the dimension
tables into integer codes at every level; every node's ``GROUP BY`` aggregates ``veil_base`` — or the
materialized counts of a finer node — picking each QI's column at the node's level, with no joins:

>>> lay = Layout(heights=(1, 2), sensitive_count=1)
>>> print(node_counts(lay, (1, 2)).compile())
SELECT b.q0_1 AS g0, b.q1_2 AS g1, b.s0, sum(b.n) AS n 
FROM veil_base AS b GROUP BY b.q0_1, b.q1_2, b.s0
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ClauseElement, Executable

from engine.hierarchy import ValueKind

BASE_RAW = "veil_base_raw"
BASE = "veil_base"

# --- DDL constructs SQLAlchemy Core lacks (identifiers quoted by the dialect's preparer) ------------------


class CreateTableAs(Executable, ClauseElement):
    """``CREATE [TEMPORARY] TABLE <table> AS <select>``."""

    inherit_cache = False

    def __init__(self, table: sa.TableClause, select: sa.Select[Any], temporary: bool = True) -> None:
        self.table, self.select, self.temporary = table, select, temporary


@compiles(CreateTableAs)
def _create_table_as(element: CreateTableAs, compiler: Any, **kw: Any) -> str:
    temp = "TEMPORARY " if element.temporary else ""
    body = compiler.process(element.select, **kw)
    return f"CREATE {temp}TABLE {compiler.preparer.format_table(element.table)} AS {body}"


class CreateView(Executable, ClauseElement):
    """``CREATE OR REPLACE VIEW <view> AS <select>``."""

    inherit_cache = False

    def __init__(self, view: sa.TableClause, select: sa.Select[Any]) -> None:
        self.view, self.select = view, select


@compiles(CreateView)
def _create_view(element: CreateView, compiler: Any, **kw: Any) -> str:
    body = compiler.process(element.select, literal_binds=True, **kw)
    return f"CREATE OR REPLACE VIEW {compiler.preparer.format_table(element.view)} AS {body}"


class DropObject(Executable, ClauseElement):
    """``DROP TABLE|VIEW IF EXISTS <name>``."""

    inherit_cache = False

    def __init__(self, kind: str, table: sa.TableClause) -> None:
        assert kind in ("TABLE", "VIEW")
        self.kind, self.table = kind, table


@compiles(DropObject)
def _drop(element: DropObject, compiler: Any, **kw: Any) -> str:
    return f"DROP {element.kind} IF EXISTS {compiler.preparer.format_table(element.table)}"


class CreateSchema(Executable, ClauseElement):
    """``CREATE SCHEMA IF NOT EXISTS <schema>``."""

    inherit_cache = False

    def __init__(self, schema: str) -> None:
        self.schema = schema


@compiles(CreateSchema)
def _create_schema(element: CreateSchema, compiler: Any, **kw: Any) -> str:
    return f"CREATE SCHEMA IF NOT EXISTS {compiler.preparer.format_schema(element.schema)}"


def copy_from_stdin(table: sa.TableClause, columns: Sequence[str], dialect: sa.Dialect) -> str:
    """PostgreSQL ``COPY <table> (<columns>) FROM STDIN`` for bulk loads, quoted by the dialect."""
    prep = dialect.identifier_preparer
    cols = ", ".join(prep.quote(c) for c in columns)
    return f"COPY {prep.format_table(table)} ({cols}) FROM STDIN"


# --- types -------------------------------------------------------------------------------------------------

_TYPES: list[tuple[str, Any, ValueKind]] = [
    (r"^(tinyint|smallint|int2|utinyint|usmallint)$", sa.SmallInteger, ValueKind.INTEGER),
    (r"^(integer|int|int4|uinteger|signed)$", sa.Integer, ValueKind.INTEGER),
    (r"^(bigint|int8|ubigint|hugeint|uhugeint|long)$", sa.BigInteger, ValueKind.INTEGER),
    (r"^(real|float4|float)$", sa.REAL, ValueKind.FLOAT),
    (r"^(double|double precision|float8)$", sa.Double, ValueKind.FLOAT),
    (r"^(decimal|numeric)(\((\d+),\s*(\d+)\))?$", sa.Numeric, ValueKind.DECIMAL),
    (r"^(varchar|character varying|text|string|char|character|bpchar|name)(\(\d+\))?$", sa.Text, ValueKind.TEXT),
    (r"^date$", sa.Date, ValueKind.DATE),
    (r"^(timestamp|timestamp without time zone|datetime)(\(\d\))?$", sa.DateTime, ValueKind.TIMESTAMP),
    (r"^(boolean|bool)$", sa.Boolean, ValueKind.BOOLEAN),
]


def column_type(data_type: str, precision: int | None = None, scale: int | None = None) -> tuple[Any, ValueKind]:
    """SQLAlchemy type and value kind for an ``information_schema`` ``data_type``; ``None`` kind if unknown."""
    text = data_type.strip().lower()
    for pattern, sa_type, kind in _TYPES:
        m = re.match(pattern, text)
        if m:
            if sa_type is sa.Numeric:
                p = int(m.group(3)) if m.group(3) else precision
                s = int(m.group(4)) if m.group(4) else scale
                return (sa.Numeric(p, s) if p is not None else sa.Numeric()), kind
            return sa_type(), kind
    raise KeyError(data_type)


# --- the warehouse's own tables ----------------------------------------------------------------------------


def source_table(schema: str | None, name: str, columns: dict[str, Any]) -> sa.Table:
    """The source as a Core table with the given (name → SQLAlchemy type) columns; no reflection."""
    md = sa.MetaData()
    return sa.Table(name, md, *(sa.Column(c, t) for c, t in columns.items()), schema=schema)


def columns_of(schema: str | None, table: str) -> sa.Select[Any]:
    """Column names and types of ``schema.table`` from ``information_schema`` (reflection-free)."""
    info = sa.table("columns", sa.column("table_schema"), sa.column("table_name"), sa.column("column_name"),
                    sa.column("data_type"), sa.column("ordinal_position"), sa.column("numeric_precision"),
                    sa.column("numeric_scale"), schema="information_schema")
    where_schema = info.c.table_schema == (sa.literal(schema) if schema is not None else sa.func.current_schema())
    return (sa.select(info.c.column_name, info.c.data_type, info.c.numeric_precision, info.c.numeric_scale)
            .where(where_schema, info.c.table_name == sa.literal(table))
            .order_by(info.c.ordinal_position))


def tables_in(schema: str) -> sa.Select[Any]:
    """Names of tables and views in ``schema``."""
    info = sa.table("tables", sa.column("table_schema"), sa.column("table_name"), sa.column("table_type"),
                    schema="information_schema")
    return sa.select(info.c.table_name, info.c.table_type).where(info.c.table_schema == sa.literal(schema))


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


def base_coded(layout: Layout) -> CreateTableAs:
    """``veil_base``: ``veil_base_raw`` with every QI replaced by its codes at all levels (the dimension
    tables joined once, so node queries need no joins) and every sensitive value by its code."""
    raw_cols = [f"q{i}" for i in range(layout.qi_count)] + [f"s{j}" for j in range(layout.sensitive_count)]
    raw = sa.table(BASE_RAW, *(sa.column(c) for c in raw_cols), sa.column("n")).alias("r")
    select_cols: list[Any] = []
    joined: Any = raw
    for i, h in enumerate(layout.heights):
        d = layout.dim(i).alias(f"d{i}")
        joined = joined.join(d, raw.c[f"q{i}"] == d.c.level_0)
        select_cols += [d.c[f"code_{j}"].label(f"q{i}_{j}") for j in range(h + 1)]
    for j in range(layout.sensitive_count):
        sd = layout.sensitive_domain(j).alias(f"v{j}")
        joined = joined.join(sd, raw.c[f"s{j}"] == sd.c.value)
        select_cols.append(sd.c.code.label(f"s{j}"))
    return CreateTableAs(sa.table(BASE), sa.select(*select_cols, raw.c.n).select_from(joined))


def node_counts(layout: Layout, node: Sequence[int | None], floor: Sequence[int | None] | None = None,
                source: str = BASE) -> sa.Select[Any]:
    """The ``GROUP BY`` of lattice node ``node``: ``(g_i…, s_k…, n)`` with integer codes.

    ``node[i]`` is the level of QI ``i`` (``None``: projected out, no column).  ``source`` is ``veil_base``
    or the materialized counts of a finer node holding levels ``floor[i]..h_i`` (Incognito's rollup)."""
    src = layout.wide(source, floor).alias("b")
    keys = [src.c[f"q{i}_{lv}"].label(f"g{i}") for i, lv in enumerate(node) if lv is not None]
    keys += [src.c[f"s{k}"] for k in range(layout.sensitive_count)]
    return sa.select(*keys, sa.func.sum(src.c.n).label("n")).group_by(*keys)


def materialize(layout: Layout, ident: int, node: Sequence[int | None],
                floor: Sequence[int | None] | None = None, source: str = BASE) -> CreateTableAs:
    """Materialize ``node``'s counts in wide form (its levels and every level above) for later rollups."""
    src = layout.wide(source, floor)
    cols = [src.c[f"q{i}_{j}"] for i, levels in enumerate(layout.levels(node)) for j in levels]
    sens = [src.c[f"s{k}"] for k in range(layout.sensitive_count)]
    stmt = sa.select(*cols, *sens, sa.func.sum(src.c.n).label("n")).group_by(*cols, *sens)
    return CreateTableAs(layout.node_table(ident, node), stmt)


def count_rows(table: sa.TableClause) -> sa.Select[Any]:
    return sa.select(sa.func.count()).select_from(table)


def drop_table(name: str, schema: str | None = None) -> DropObject:
    return DropObject("TABLE", sa.table(name, schema=schema))


# --- release: materialization, verification, views, grants, locks, fingerprints ---------------------------

SUPPRESSED = "veil_suppressed"


def suppressed_table(qi_count: int) -> sa.Table:
    """Temporary table of the codes of the blocks a release suppresses."""
    md = sa.MetaData()
    return sa.Table(SUPPRESSED, md, *(sa.Column(f"g{i}", sa.Integer) for i in range(qi_count)),
                    prefixes=["TEMPORARY"])


def release_select(source: sa.Table, layout: Layout, node: Sequence[int], qis: Sequence[str],
                   published: Sequence[str], suppress: bool, not_null: Sequence[str]) -> sa.Select[Any]:
    """The rows of a release: each QI replaced by its generalized value (text) at ``node``, other published
    columns as they are, rows of suppressed blocks dropped, columns in ``published`` order."""
    src = source.alias("src")
    joined: Any = src
    generalized: dict[str, Any] = {}
    codes = []
    for i, (name, level) in enumerate(zip(qis, node)):
        d = layout.dim(i).alias(f"d{i}")
        joined = joined.join(d, src.c[name] == d.c.level_0)
        label = sa.cast(d.c.level_0, sa.Text) if level == 0 else d.c[f"level_{level}"]
        generalized[name] = label.label(name)
        codes.append(d.c[f"code_{level}"])
    where: list[Any] = [src.c[c].is_not(None) for c in not_null]
    if suppress:
        x = sa.table(SUPPRESSED, *(sa.column(f"g{i}") for i in range(len(qis)))).alias("x")
        joined = joined.outerjoin(x, sa.and_(*(x.c[f"g{i}"] == codes[i] for i in range(len(qis)))))
        where.append(x.c.g0.is_(None))
    cols = [generalized[c] if c in generalized else src.c[c].label(c) for c in published]
    return sa.select(*cols).select_from(joined).where(*where)


def create_table_as(schema: str, name: str, select: sa.Select[Any]) -> CreateTableAs:
    return CreateTableAs(sa.table(name, schema=schema), select, temporary=False)


def recount(schema: str, table: str, qis: Sequence[str], sensitive: Sequence[str]) -> sa.Select[Any]:
    """Blocks and joint sensitive histograms counted from a materialized release table itself."""
    t = sa.table(table, *(sa.column(c) for c in (*qis, *sensitive)), schema=schema)
    keys = [t.c[c] for c in (*qis, *sensitive)]
    return sa.select(*keys, sa.func.count().label("n")).group_by(*keys)


def level0_labels(layout: Layout, i: int) -> sa.Select[Any]:
    """Each level-0 code of dimension ``i`` with its value rendered as text by the database."""
    d = layout.dim(i)
    return sa.select(d.c.code_0, sa.cast(d.c.level_0, sa.Text))


def view_of(schema: str, view: str, select: sa.Select[Any]) -> list[Executable]:
    """Statements that (re)point a view atomically inside the release's transaction."""
    target = sa.table(view, schema=schema)
    return [DropObject("VIEW", target), CreateView(target, select)]


def latest_view(schema: str, table: str, columns: Sequence[str]) -> sa.Select[Any]:
    t = sa.table(table, *(sa.column(c) for c in columns), schema=schema)
    return sa.select(*t.c)


def blocks_view(schema: str, table: str, qis: Sequence[str], sensitive: Sequence[str]) -> sa.Select[Any]:
    """Per block: its generalized key, its size, and one row per sensitive-value combination with count."""
    t = sa.table(table, *(sa.column(c) for c in (*qis, *sensitive, "n")), schema=schema)
    size = sa.cast(sa.func.sum(t.c.n).over(partition_by=[t.c[c] for c in qis]), sa.BigInteger).label("block_size")
    return sa.select(*(t.c[c] for c in qis), size, *(t.c[c] for c in sensitive), t.c.n.label("count"))


def releases_view(releases: sa.Table, name: str) -> sa.Select[Any]:
    """Published versions of release ``name`` from the catalog (failed and skipped runs stay there)."""
    r = releases
    return (sa.select(r.c.version, r.c.id.label("release_id"), r.c.published_at, r.c.node,
                      r.c.rows_published, r.c.rows_suppressed, r.c.achieved, r.c.output_table)
            .where(r.c.name == name, r.c.status == "published"))


class Grant(Executable, ClauseElement):
    """``GRANT USAGE ON SCHEMA s TO r`` / ``GRANT SELECT ON s.v TO r`` (PostgreSQL)."""

    inherit_cache = False

    def __init__(self, role: str, schema: str, view: str | None = None) -> None:
        self.role, self.schema, self.view = role, schema, view


@compiles(Grant)
def _grant(element: Grant, compiler: Any, **kw: Any) -> str:
    prep = compiler.preparer
    if element.view is None:
        return f"GRANT USAGE ON SCHEMA {prep.format_schema(element.schema)} TO {prep.quote(element.role)}"
    return (f"GRANT SELECT ON {prep.format_table(sa.table(element.view, schema=element.schema))} "
            f"TO {prep.quote(element.role)}")


def role_exists(role: str) -> sa.Select[Any]:
    roles = sa.table("pg_roles", sa.column("rolname"), schema="pg_catalog")
    return sa.select(sa.func.count()).select_from(roles).where(roles.c.rolname == role)


def try_advisory_lock(key: int) -> sa.Select[Any]:
    return sa.select(sa.func.pg_try_advisory_lock(sa.literal(key, sa.BigInteger)))


def advisory_unlock(key: int) -> sa.Select[Any]:
    return sa.select(sa.func.pg_advisory_unlock(sa.literal(key, sa.BigInteger)))


def fingerprint(source: sa.Table, columns: Sequence[str], style: str) -> sa.Select[Any]:
    """Order-independent fingerprint of the source's ``columns``: row count and the sum of 64-bit row
    hashes (``style`` "duckdb": ``hash(...)``; "postgresql": ``hashtextextended(row::text, 0)``)."""
    cols = [source.c[c] for c in columns]
    if style == "duckdb":
        row_hash = sa.cast(sa.func.hash(*cols), sa.Numeric(38, 0))
    else:
        row_hash = sa.cast(sa.func.hashtextextended(sa.cast(sa.tuple_(*cols), sa.Text), 0), sa.Numeric(38, 0))
    return sa.select(sa.func.count(), sa.func.coalesce(sa.func.sum(row_hash), 0)).select_from(source)


def packed(select: sa.Select[Any]) -> sa.Select[Any]:
    """PostgreSQL: an all-integer result as one row of big-endian int8 blobs, one per column
    (``string_agg(int8send(c), '')``), so a client reads millions of cells without building a Python object
    per value.  All aggregates of one SELECT see the rows in the same order."""
    sub = select.subquery("r")
    empty = sa.literal(b"", sa.LargeBinary)
    return sa.select(*(sa.func.string_agg(sa.func.int8send(sa.cast(sub.c[c], sa.BigInteger)), empty).label(c)
                       for c in sub.c.keys()))
