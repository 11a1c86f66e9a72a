"""Compacting a catalog that takes appends only (``veil.queries.appendonly``; Spark, docs/spark.md §3).

Every append to a catalog log is a file, and a night appends about ten, so a view that read every file would
slow every night down as the nights add up (0.12 s after one append, 1.2 s after a thousand: docs/spark.md §9).
Once a week (``EVERY`` days since the last), after a run, under the catalog's compaction lock:

1. each log's entries up to the day ``upto`` (two days before today: the appends still under way write today's
   partition) become one new table ``<table>_base_<upto>``, from the base the view reads and the log's
   partitions after it — the newest entry of each key where the table's rows change, and where an entry names
   a table of the catalog's schema (``appendonly.NAMING``: ``series_state``'s members tables), only those whose
   table is still there;
2. each view switches to the new base and the partitions after ``upto`` (one metastore operation each;
   ``releases`` last, whose properties say the catalog is compacted: a compaction stopped before it is done
   again whole, keeping the bases of the views it had switched — they were whole, and are read);
3. what only the views before the previous switch read is dropped: the partitions up to the previous base's day,
   and every other base.  A query planned a week ago could still need them; none of Veil's runs that long.

A view shows the same rows before and after (``tests/spark/test_release_spark.py``), and reads the base's one file
and at most ``EVERY + MARGIN + 1`` days' partitions (the night one is due, before it runs).

>>> due(Layout(None, 100), 107), due(Layout(None, 100), 110), due(Layout(107, 100), 116), due(Layout(107, 100), 117)
(None, 107, None, 114)
"""

from __future__ import annotations

import re

import sqlalchemy as sa

from veil.backends.base import Session
from veil.catalog import CatalogTables
from veil.queries import appendonly
from veil.queries import publication as pub
from veil.queries.appendonly import MARGIN, Layout
from veil.queries.ddl import drop_table

EVERY = 7  # days between compactions
LOCK = "veil_compaction"  # the lock table's name is ``veil_lock_`` and this


def due(layout: Layout, today: int) -> int | None:
    """The day a compaction run ``today`` would compact up to, or ``None`` when the last one is recent."""
    upto = today - MARGIN - 1
    return upto if upto - layout.settled >= EVERY else None


def layout(session: Session, tables: CatalogTables) -> Layout:
    """What the catalog's views read, from the ``releases`` view's properties (switched last)."""
    return view_layout(session, tables.releases, "reading the catalog's compaction")


def view_layout(session: Session, table: sa.Table, what: str) -> Layout:
    """What ``table``'s view reads, from its properties."""
    found = session.rows(pub.show_properties(str(table.schema), table.name), what)
    return Layout.read({str(k): str(v) for k, v in found})


def compact(session: Session, tables: CatalogTables, today: int) -> int | None:
    """Compact every log of the catalog when due (module docstring); the day compacted up to, else ``None``.
    Run under the compaction lock."""
    before = layout(session, tables)
    upto = due(before, today)
    if upto is None:
        return None
    schema = str(tables.releases.schema)
    logs = sorted((t for t in tables.all() if appendonly.stored_as_log(t)), key=lambda t: t.name == "releases")
    found = set(session.relations(schema))
    for table in logs:
        base = appendonly.base_table(table, upto)
        if base.name in found:  # left by a compaction stopped before ``releases`` switched
            # a view the stopped compaction switched reads it, whole (every base is written before any view
            # switches): kept, so that its readers never miss it
            if view_layout(session, table, f"reading the properties of {table.name}").watermark == upto:
                continue
            session.execute(drop_table(base.name, schema), f"dropping {schema}.{base.name}")
        session.execute(appendonly.compacted(table, before, upto, found), f"compacting {schema}.{table.name}")
    after = Layout(upto, before.settled)
    for table in logs:
        session.execute(appendonly.view(table, after), f"switching {schema}.{table.name} to its compacted log")
    for table in logs:
        _drop_unread(session, table, before, after, found)
    return upto


def _drop_unread(session: Session, table: sa.Table, before: Layout, after: Layout, found: set[str]) -> None:
    """What no view reads since the switch before this one: the log's partitions up to ``after.dropped``, and
    every base but the two newest."""
    schema = str(table.schema)
    if after.dropped > before.dropped:
        days = range(before.dropped + 1, after.dropped + 1)
        session.execute(
            appendonly.DropPartitions(appendonly.log_table(table), days), f"dropping old days of {table.name}"
        )
    keep = {after.watermark, before.watermark}
    pattern = re.compile(rf"{re.escape(table.name)}_base_(\d+)")
    for name in sorted(found):
        matched = pattern.fullmatch(name)
        if matched and int(matched.group(1)) not in keep:
            session.execute(drop_table(name, schema), f"dropping {schema}.{name}")
