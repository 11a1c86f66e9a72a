"""A release's first version in the ledger: nothing earlier to compare with, so no cell leaves the database.

The series step compares a candidate with every earlier version (docs/series-ledger.md §4); with none it publishes
every row the search keeps, and the ledger records the cells of the published blocks.  Those cells are as
many as the rows when a published column is nearly unique (an income): read into Python they would make a
first release's memory grow with the table.  Here the database writes them instead, joined to two small
tables of ledger ids, one per published block (``veil_cell_blocks``, loaded from the search's counts at the
node) and one per distinct published value (``veil_cell_value_ids``) — and Python holds only what the lattice
and the sensitive domains bound: the node's blocks, the distinct values, the rows per value.

The cells are read from the version's blocks table (``FromBlocks``), which the publication counts from the
published rows anyway, when every published column is a QI or sensitive: no second ``GROUP BY`` of the
source (10M census: 1.8–2.0 s less).  Kept columns are not in the blocks table, so with those the cells
are counted from the source into ``veil_cells`` first (``record`` without ``FromBlocks``).  Either way the
ledger's rows are the ones ``ledger.record`` writes for the same candidate (``tests/test_series_db.py``
checks both ways give one ledger).

Two sums guard the copy: the distinct values hold every row the search counted (suppressed blocks too), and
the version's content holds every row it publishes.

Example: a node with blocks ``a*`` (3 rows) and ``b*`` (2 rows, suppressed) writes the dictionary entries of
both blocks, the cells of ``a*`` only, and checks 5 rows counted, 3 written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import sqlalchemy as sa

from veil import catalog
from veil import queries as q
from veil.backends.base import Session
from veil.counts import NodeCounts, narrowed
from veil.errors import ReleaseError
from veil.hierarchy import Hierarchy
from veil.queries.ddl import create_table, drop_temporary, relation
from veil.release import ledger as ledger_mod
from veil.release.alignment import Layout
from veil.release.series import Version

WHAT = "recording the version's content"


@dataclass(frozen=True)
class Values:
    """The candidate's distinct published value tuples (``veil_cell_values``, in ``vid`` order), the rows of
    each (every block, suppressed ones too) and whether each column holds NULLs (``queries.value_match``)."""

    distinct: list[tuple[Any, ...]]
    rows: np.ndarray
    nulls: list[str]


@dataclass(frozen=True)
class FromBlocks:
    """Read the version's cells from its blocks table ``block_rows`` (``queries.ledger.copy_published``): the
    warehouse's working tables ``tables`` (dimension tables) and the QI columns."""

    block_rows: sa.Table
    tables: q.Layout
    qis: Sequence[str]


def record(
    session: Session,
    ledger: ledger_mod.Ledger,
    number: int,
    layout: Layout,
    hierarchies: Sequence[Hierarchy],
    counts: NodeCounts,
    suppressed: np.ndarray,
    values: Values,
    numeric: Mapping[str, bool],
    rows: int,
    release_id: str,
    policy: str,
    when: Any,
    blocks: FromBlocks | None = None,
) -> None:
    """Write version ``number`` — the first in ``ledger`` — from ``blocks`` (the version published), else from
    ``veil_cells`` (every row of the node's blocks ``counts``; ``suppressed`` blocks are not published);
    ``values``: the published values of each ``vid``, ``rows``: the rows the search counted."""
    if ledger.versions:
        raise ValueError("the ledger already holds a version: the series step compares the candidate with it")
    d = len(layout.chains)
    ids = ledger_mod.block_ids(ledger, ledger_mod.block_text(layout, hierarchies), counts.keys)
    value_ids = ledger_mod.value_ids_of(ledger, layout, values.distinct)
    if int(values.rows.sum()) != rows:
        raise ReleaseError(
            f"verification failed: the candidate's values hold {int(values.rows.sum())} rows, the search counted {rows}"
        )
    empty = np.zeros(0, dtype=np.int32)
    totals = ledger_mod.column_totals(layout, values.distinct, values.rows)
    ledger_mod.record_version(
        session, ledger, Version(number, layout, empty, empty, empty, totals), numeric, release_id, policy, when
    )
    kept = ~np.asarray(suppressed, dtype=bool)
    block_ids, value_table = _load_ids(session, counts, kept, ids, value_ids, d)
    merge = len(np.unique(value_ids)) < len(value_ids)  # two published tuples with one ledger text: summed
    if blocks is None:
        _copy_cells(session, ledger, number, d, merge, (block_ids, value_table))
    else:
        _copy_published(session, ledger, number, layout, values, blocks, merge)
    _check_written(session, ledger, number, int(counts.sizes[kept].sum()))
    for table in (block_ids, value_table):
        session.execute(drop_temporary(table), WHAT)


def _load_ids(
    session: Session, counts: NodeCounts, kept: np.ndarray, ids: np.ndarray, value_ids: np.ndarray, qi_count: int
) -> tuple[sa.Table, sa.Table]:
    """The temporary tables joining the candidate to the ledger's ids: each published (``kept``) block's codes
    with its ``block_id``, each value's ``vid`` (its rank) with its ``value_id``."""
    block_ids, value_table = q.ledger.block_ids_table(qi_count), q.ledger.value_ids_table()
    load_table(
        session,
        block_ids,
        {**{f"g{i}": narrowed(counts.keys[kept, i]) for i in range(qi_count)}, "block_id": ids[kept]},
    )
    load_table(session, value_table, {"vid": np.arange(len(value_ids), dtype=np.int64), "value_id": value_ids})
    return block_ids, value_table


def _copy_cells(
    session: Session, ledger: ledger_mod.Ledger, number: int, qi_count: int, merge: bool, id_tables: Sequence[sa.Table]
) -> None:
    """The version's cells copied from ``veil_cells``, joined to the ledger's ids (``id_tables``)."""
    for table in (*id_tables, relation(q.CELLS)):
        session.analyze(table, WHAT)  # else PostgreSQL joins the cells to the ids by nested loops
    session.execute(
        q.ledger.copy_cells(ledger.tables.series_cells, ledger.name, number, catalog.OPEN, qi_count, merge), WHAT
    )


def _copy_published(
    session: Session,
    ledger: ledger_mod.Ledger,
    number: int,
    layout: Layout,
    values: Values,
    blocks: FromBlocks,
    merge: bool,
) -> None:
    """The version's cells read from its blocks table as published, through temporary tables of each published
    block's and each value's labels beside their ledger ids."""
    labels = (q.ledger.block_labels_table(blocks.tables, layout.node), q.ledger.value_labels_table(len(layout.columns)))
    for statement in labels:
        session.execute(statement, WHAT)
        session.analyze(statement.table, WHAT)  # else PostgreSQL loops over the blocks (1M census: minutes)
    session.execute(
        q.ledger.copy_published(
            ledger.tables.series_cells,
            ledger.name,
            number,
            catalog.OPEN,
            blocks.block_rows,
            blocks.qis,
            layout.columns,
            values.nulls,
            merge,
        ),
        WHAT,
    )
    for statement in labels:
        session.execute(q.drop_table(statement.table.name), WHAT)


def _check_written(session: Session, ledger: ledger_mod.Ledger, number: int, published: int) -> None:
    """The ledger's cells of version ``number`` hold the ``published`` rows, or the release fails."""
    written, _cells = session.rows(q.ledger.version_rows(ledger.tables.series_cells, ledger.name, number), WHAT)[0]
    if int(written) != published:
        raise ReleaseError(
            f"verification failed: the ledger recorded {int(written)} rows of version {number}, "
            f"which publishes {published}"
        )


def load_table(session: Session, table: sa.Table, columns: Mapping[str, np.ndarray]) -> None:
    session.execute(create_table(table), WHAT)
    if len(next(iter(columns.values()))):
        session.load_columns(table, columns, WHAT)
