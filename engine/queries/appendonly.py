"""The catalog where tables take appends only (Spark's built-in tables: no ``UPDATE``, no ``DELETE``;
docs/spark.md §3): every catalog table but the revision row is a *log* behind a view of its own name.

- ``<table>_log`` holds the table's columns, ``veil_seq`` (the order of the entries: nanoseconds since the
  epoch, strictly increasing within a run) and ``veil_day`` (``veil_seq``'s day since the epoch), partitioned by
  ``veil_day``.  An ``INSERT`` (``VALUES`` or ``SELECT``) or ``UPDATE`` becomes one append to it, visible whole
  when its Spark job commits (``logged``).
- ``<table>_base_<W>``, once the catalog has been compacted (``veil.release.compaction``): the entries of the
  days up to ``W``, in one file.
- The view ``<table>``: the base and the log's partitions after ``W`` (Spark lists no other partition); for a
  table whose rows change (``LOGGED``: ``releases``, ``publications``, ``series_cells``), the newest entry of
  every key.  Its properties (``Layout``) say which base it reads and which partitions are gone.

Every append is a file, so without compaction a view's read grows with the nights (docs/spark.md §9); a
compaction writes a new base, switches the view (one metastore operation), and drops what only the view before
the previous switch read.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from collections.abc import Collection
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ClauseElement, Executable

from veil.queries.catalog import tables
from veil.queries.ddl import CreateTableAs
from veil.queries.publication import CreateViewAt
from veil.queries.spark import DIALECT, compile_sql  # noqa: F401 (compile_sql: the examples)

SEQ = "veil_seq"
DAY = "veil_day"
NANOS_A_DAY = 86_400 * 10**9
MARGIN = 2  # days: a compaction leaves the partitions of the last two days to the appends still under way
# the tables whose rows change: their key (the view shows the newest entry of each)
LOGGED: dict[str, tuple[str, ...]] = {
    "releases": ("id",),
    "publications": ("name",),
    "series_cells": ("name", "block_id", "value_id", "first_version"),
}
# the tables whose entries each name a table of the catalog's schema (by this column): a compaction leaves out the
# entries whose table is gone — ``series_state``'s rows of the cohort series' versions whose members tables later
# nights dropped (docs/spark.md §7; nothing reads them again), so it keeps a few rows a series, not one a version
NAMING: dict[str, str] = {"series_state": "members"}
UNLOGGED = frozenset({"alembic_version"})  # the revision row: written once, by ``veil init``
_CATALOG = frozenset(t.name for t in tables("catalog").all())


def day_of(seq: int) -> int:
    """The day (since the epoch, UTC) of an entry numbered ``seq`` (nanoseconds since the epoch).

    >>> day_of(86_400 * 10**9 * 3 + 5)
    3
    """
    return seq // NANOS_A_DAY


def today() -> int:
    """The day an append made now is numbered in (the Spark session numbers its appends by ``time.time_ns``)."""
    return day_of(time.time_ns())


def stored_as_log(table: sa.Table) -> bool:
    """Whether a table of that name is, in a catalog, kept as a log behind a view (every one but the revision
    row).

    >>> stored_as_log(sa.Table("releases", sa.MetaData())), stored_as_log(sa.Table("alembic_version", sa.MetaData()))
    (True, False)
    """
    return table.name in _CATALOG and table.name not in UNLOGGED


@dataclass(frozen=True)
class Layout:
    """What a catalog view reads: the base of the days up to ``watermark`` (none while it is ``None``) and the
    log's partitions after it; the partitions up to ``dropped`` are gone (the next compaction drops those up to
    ``watermark``).  Kept in the view's properties; a new catalog's (``fresh``) reads the whole log.

    >>> Layout.read(Layout(20, 13).properties())
    Layout(watermark=20, dropped=13)
    """

    watermark: int | None
    dropped: int

    @property
    def settled(self) -> int:
        """The day up to which every entry is in the base or gone: where the next compaction starts from."""
        return self.dropped if self.watermark is None else self.watermark

    def properties(self) -> dict[str, str]:
        mark = "" if self.watermark is None else str(self.watermark)
        return {"veil.compacted": mark, "veil.dropped": str(self.dropped)}

    @staticmethod
    def fresh(day: int) -> Layout:
        """A catalog made on ``day``: no base; its log's partitions begin at that day (two days' margin for
        clocks that disagree)."""
        return Layout(None, day - MARGIN - 1)

    @staticmethod
    def read(properties: dict[str, str]) -> Layout:
        mark = properties.get("veil.compacted", "")
        return Layout(int(mark) if mark else None, int(properties.get("veil.dropped", "-1")))


def log_table(table: sa.Table) -> sa.Table:
    """``<table>_log``: the table's columns, ``veil_seq`` and ``veil_day`` (its partitions)."""
    return _with_order(f"{table.name}_log", table, partitioned=True)


def base_table(table: sa.Table, watermark: int) -> sa.Table:
    """``<table>_base_<watermark>``: the entries of the days up to ``watermark`` (the newest of each key)."""
    return _with_order(f"{table.name}_base_{watermark}", table, partitioned=False)


def _with_order(name: str, table: sa.Table, partitioned: bool) -> sa.Table:
    t = sa.Table(
        name,
        sa.MetaData(),
        *(sa.Column(c.name, c.type) for c in table.columns),
        sa.Column(SEQ, sa.BigInteger),
        sa.Column(DAY, sa.Integer),
        schema=table.schema,
    )
    if partitioned:
        t.info["partitioned_by"] = (DAY,)
    return t


def _entries(table: sa.Table, layout: Layout, upto: int | None = None) -> dict[str, sa.ColumnElement[Any]]:
    """The entries a view with ``layout`` reads (up to day ``upto``), the newest of each key where it has one: the
    log's columns by name.  The base and the log are read with their columns named as they are (not ``x AS x``:
    a window over a ``UNION ALL`` of such aliases fails Spark 4's plan validation, ``RemoveRedundantAliases``)."""
    log = log_table(table)
    names = [c.name for c in log.columns]
    quoted: list[sa.ColumnClause[Any]] = [sa.literal_column(DIALECT.identifier_preparer.quote(n)) for n in names]
    recent = sa.select(*quoted).select_from(log)
    if layout.watermark is not None:
        recent = recent.where(log.c[DAY] > layout.watermark)
    if upto is not None:
        recent = recent.where(log.c[DAY] <= upto)
    rows: Any = recent
    if layout.watermark is not None:
        rows = sa.union_all(sa.select(*quoted).select_from(base_table(table, layout.watermark)), recent)
    entries = rows.subquery("entries")
    found = {n: entries.c[q.key] for n, q in zip(names, quoted)}
    if table.name not in LOGGED:
        return found
    key = [found[k] for k in LOGGED[table.name]]
    rn = sa.func.row_number().over(partition_by=key, order_by=found[SEQ].desc()).label("veil_rn")
    ranked = sa.select(*(found[n].label(n) for n in names), rn).subquery("ranked")
    return {n: ranked.c[n] for n in names} | {"veil_rn": ranked.c.veil_rn}


def _shown(
    table: sa.Table, layout: Layout, names: list[str], upto: int | None = None, existing: Collection[str] | None = None
) -> sa.Select[Any]:
    """Columns ``names`` of the entries ``layout`` reads (``_entries``): the newest of each key where it has one;
    with ``existing``, for a table of ``NAMING``, those whose table is one of ``existing``."""
    found = _entries(table, layout, upto)
    select = sa.select(*(found[n] for n in names))
    if existing is not None and table.name in NAMING:
        select = select.where(sa.func.lower(found[NAMING[table.name]]).in_(sorted({n.lower() for n in existing})))
    return select.where(found["veil_rn"] == 1) if "veil_rn" in found else select


def view(table: sa.Table, layout: Layout) -> CreateViewAt:
    """``CREATE OR REPLACE VIEW <table>``: what ``layout`` reads, the table's columns, its properties recorded.

    >>> md = sa.MetaData()
    >>> t = sa.Table("publications", md, sa.Column("name", sa.Text), sa.Column("current_version", sa.Integer))
    >>> print(compile_sql(view(t, Layout(20, 13))))  # doctest: +NORMALIZE_WHITESPACE
    CREATE OR REPLACE VIEW `publications` TBLPROPERTIES ('veil.compacted'='20', 'veil.dropped'='13') AS
    SELECT `ranked`.`name`, `ranked`.`current_version`
    FROM (SELECT `entries`.`name` AS `name`, `entries`.`current_version` AS `current_version`,
    `entries`.`veil_seq` AS `veil_seq`, `entries`.`veil_day` AS `veil_day`, row_number() OVER (PARTITION BY
    `entries`.`name` ORDER BY `entries`.`veil_seq` DESC) AS `veil_rn`
    FROM (SELECT `name`, `current_version`, `veil_seq`, `veil_day`
    FROM `publications_base_20` UNION ALL SELECT `name`, `current_version`, `veil_seq`, `veil_day`
    FROM `publications_log`
    WHERE `publications_log`.`veil_day` > 20) AS `entries`) AS `ranked`
    WHERE `ranked`.`veil_rn` = 1
    """
    return CreateViewAt(table, _shown(table, layout, [c.name for c in table.columns]), layout.properties())


def compacted(table: sa.Table, layout: Layout, upto: int, existing: Collection[str] | None = None) -> CreateTableAs:
    """``CREATE TABLE <table>_base_<upto>``, one file: the entries a view with ``layout`` reads, up to day ``upto``
    — for a table of ``NAMING``, those whose table is one of ``existing`` (the catalog schema's tables now).

    >>> t = sa.Table("release_nodes", sa.MetaData(), sa.Column("release_id", sa.Text))
    >>> print(compile_sql(compacted(t, Layout(None, 5), 9)))  # doctest: +NORMALIZE_WHITESPACE
    CREATE TABLE `release_nodes_base_9` AS SELECT /*+ COALESCE(1) */ `entries`.`release_id`, `entries`.`veil_seq`,
    `entries`.`veil_day`
    FROM (SELECT `release_id`, `veil_seq`, `veil_day`
    FROM `release_nodes_log`
    WHERE `release_nodes_log`.`veil_day` <= :veil_day_1) AS `entries`
    >>> t = sa.Table("series_state", sa.MetaData(), sa.Column("members", sa.Text))
    >>> print(compile_sql(compacted(t, Layout(None, 5), 9, ["c_members_v8"])))  # doctest: +NORMALIZE_WHITESPACE
    CREATE TABLE `series_state_base_9` AS SELECT /*+ COALESCE(1) */ `entries`.`members`, `entries`.`veil_seq`,
    `entries`.`veil_day`
    FROM (SELECT `members`, `veil_seq`, `veil_day`
    FROM `series_state_log`
    WHERE `series_state_log`.`veil_day` <= :veil_day_1) AS `entries`
    WHERE lower(`entries`.`members`) IN (:lower_1_1)
    """
    select = _shown(table, layout, [c.name for c in log_table(table).columns], upto, existing)
    return CreateTableAs(base_table(table, upto), select.prefix_with("/*+ COALESCE(1) */"), temporary=False)


class DropPartitions(Executable, ClauseElement):
    """``ALTER TABLE <log> DROP IF EXISTS PARTITION (veil_day = d), ...`` (Spark takes no range here)."""

    inherit_cache = False

    def __init__(self, log: sa.Table, days: range) -> None:
        self.log, self.days = log, days


@compiles(DropPartitions, "spark")
def _drop_partitions(element: DropPartitions, compiler: Any, **kw: Any) -> str:
    """>>> log = log_table(sa.Table("releases", sa.MetaData(), sa.Column("id", sa.Text), schema="c"))
    >>> print(compile_sql(DropPartitions(log, range(4, 6))))
    ALTER TABLE `c`.`releases_log` DROP IF EXISTS PARTITION (`veil_day` = 4), PARTITION (`veil_day` = 5)
    """
    column = compiler.preparer.quote(DAY)
    specs = ", ".join(f"PARTITION ({column} = {int(d)})" for d in element.days)
    return f"ALTER TABLE {compiler.preparer.format_table(element.log)} DROP IF EXISTS {specs}"


def _values(stmt: sa.Insert | sa.Update) -> dict[str, Any]:
    found = getattr(stmt, "_values", None)
    if not found:
        raise TypeError("an append-only catalog table takes INSERT ... VALUES and UPDATE ... SET only")
    return {k if isinstance(k, str) else k.key: v for k, v in found.items()}


def logged(stmt: sa.Insert | sa.Update, log: sa.Table, seq: int) -> sa.Insert:
    """An ``INSERT`` or ``UPDATE`` of a catalog table as one append to its log; columns an ``INSERT`` leaves out
    are ``NULL``, columns an ``UPDATE`` does not set keep their value.

    >>> md = sa.MetaData()
    >>> t = sa.Table("publications", md, sa.Column("name", sa.Text), sa.Column("current_version", sa.Integer))
    >>> print(compile_sql(logged(sa.update(t).where(t.c.name == "x").values(current_version=2), log_table(t), 7)))
    INSERT INTO `publications_log` (`name`, `current_version`, `veil_seq`, `veil_day`) SELECT `publications`.`name`, CAST(:param_1 AS INT) AS `current_version`, :param_2 AS `veil_seq`, :param_3 AS `veil_day`
    FROM `publications`
    WHERE `publications`.`name` = :name_1
    """
    table = stmt.table
    assert isinstance(table, sa.Table)
    if isinstance(stmt, sa.Update) and table.name not in LOGGED:
        raise TypeError(f"catalog table {table.name!r} takes appends only: its entries have no key to update")
    order = (sa.literal(seq, sa.BigInteger).label(SEQ), sa.literal(day_of(seq), sa.Integer).label(DAY))
    names = [*(c.name for c in table.columns), SEQ, DAY]
    values = _values(stmt)
    update = isinstance(stmt, sa.Update)
    out: list[sa.ColumnElement[Any]] = []
    for c in table.columns:
        if c.name in values:
            value = values[c.name]
            value = value if isinstance(value, sa.ClauseElement) else sa.literal(value)
            out.append(sa.cast(value, c.type).label(c.name))
        else:
            out.append(c if update else sa.cast(sa.null(), c.type).label(c.name))
    select = sa.select(*out, *order)
    if isinstance(stmt, sa.Update):
        where = stmt.whereclause
        select = select.where(where) if where is not None else select.select_from(table)
    return log.insert().from_select(names, select)
