"""A release's first version in the ledger: nothing earlier to compare with, so no cell leaves the database.

The series step compares a candidate with every earlier version (docs/series.md §4); with none it publishes
every row the search keeps, and the ledger records the candidate's cells of the published blocks.  Those cells
are as many as the rows when a published column is nearly unique (an income): read into Python they would
make a first release's memory grow with the table.  Here the database writes them instead — the working
table ``veil_cells`` (block codes, ``vid``, rows) joined to two small tables of ledger ids, one per published
block (``veil_cell_blocks``, loaded from the search's counts at the node) and one per distinct published value
(``veil_cell_value_ids``) — and Python holds only what the lattice and the sensitive domains bound: the node's
blocks, the distinct values, the rows per value.  The ledger's rows are the ones ``ledger.record`` writes for
the same candidate (``tests/test_series_db.py`` checks both ways give one ledger).

Two sums guard the copy: the cells hold every row the search counted (suppressed blocks too), and the
version's content holds every row it publishes.

Example: a node with blocks ``a*`` (3 rows) and ``b*`` (2 rows, suppressed) writes the dictionary entries of
both blocks, the cells of ``a*`` only, and checks 5 rows counted, 3 written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import sqlalchemy as sa

from veil import catalog
from veil import queries as q
from veil.backends.base import Session
from veil.counts import NodeCounts, narrowed
from veil.errors import ReleaseError
from veil.hierarchy import Hierarchy
from veil.release import ledger as ledger_mod
from veil.release.alignment import Layout
from veil.release.series import Version

WHAT = "recording the version's content"


def record(session: Session, ledger: ledger_mod.Ledger, number: int, layout: Layout,
           hierarchies: Sequence[Hierarchy], counts: NodeCounts, suppressed: np.ndarray,
           distinct: Sequence[tuple[Any, ...]], numeric: Mapping[str, bool], rows: int, release_id: str,
           policy: str, when: Any) -> None:
    """Write version ``number`` — the first in ``ledger`` — from ``veil_cells`` (every row of the node's blocks
    ``counts``; ``suppressed`` blocks are not published; ``distinct``: the published values of each ``vid``,
    ``rows``: the rows the search counted)."""
    if ledger.versions:
        raise ValueError("the ledger already holds a version: the series step compares the candidate with it")
    d = len(layout.chains)
    ids = ledger_mod.block_ids(ledger, ledger_mod.block_text(layout, hierarchies), counts.keys)
    value_ids = ledger_mod.value_ids_of(ledger, layout, distinct)
    per_value = ledger_mod.rows_per_value(session, d, len(distinct))
    if int(per_value.sum()) != rows:
        raise ReleaseError(f"verification failed: the candidate's cells hold {int(per_value.sum())} rows, the "
                           f"search counted {rows}")
    empty = np.zeros(0, dtype=np.int32)
    totals = ledger_mod.column_totals(layout, distinct, per_value)
    ledger_mod.record_version(session, ledger, Version(number, layout, empty, empty, empty, totals), numeric,
                              release_id, policy, when)
    kept = ~np.asarray(suppressed, dtype=bool)
    blocks, values = q.ledger.block_ids_table(d), q.ledger.value_ids_table()
    load_table(session, blocks, {**{f"g{i}": narrowed(counts.keys[kept, i]) for i in range(d)}, "block_id": ids[kept]})
    load_table(session, values, {"vid": np.arange(len(distinct), dtype=np.int64), "value_id": value_ids})
    for table in (blocks, values, sa.table(q.CELLS)):
        session.analyze(table, WHAT)  # else PostgreSQL joins the cells to the ids by nested loops
    merge = len(np.unique(value_ids)) < len(value_ids)  # two published tuples with one ledger text: summed
    session.execute(q.ledger.copy_cells(ledger.tables.series_cells, ledger.name, number, catalog.OPEN, d, merge), WHAT)
    written, _cells = session.rows(q.ledger.version_rows(ledger.tables.series_cells, ledger.name, number), WHAT)[0]
    published = int(counts.sizes[kept].sum())
    if int(written) != published:
        raise ReleaseError(f"verification failed: the ledger recorded {int(written)} rows of version {number}, "
                           f"which publishes {published}")
    for table in (blocks, values):
        session.execute(sa.schema.DropTable(table), WHAT)


def load_table(session: Session, table: sa.Table, columns: Mapping[str, np.ndarray]) -> None:
    session.execute(sa.schema.CreateTable(table), WHAT)
    if len(next(iter(columns.values()))):
        session.load_columns(table, columns, WHAT)
