"""The series ledger's statements (docs/series.md §6): what every version of a release published, per block,
in the catalog.  Content rows carry the versions they are valid for (``first_version .. last_version``), so a
version that changes few blocks adds few rows.  Tables are passed in (``veil.catalog`` defines them)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from veil.queries.ddl import count_rows

CHANGED = "veil_changed_blocks"


def of_release(table: sa.Table, name: str, *columns: str) -> sa.Select[Any]:
    """``columns`` of ``table``'s rows for release ``name``."""
    return sa.select(*(table.c[c] for c in columns)).where(table.c.name == name)


def rows_of_release(table: sa.Table, name: str) -> sa.Select[Any]:
    """How many rows of ``table`` belong to release ``name``."""
    return count_rows(table).where(table.c.name == name)


def next_id(table: sa.Table, name: str) -> sa.Select[Any]:
    return sa.select(sa.func.coalesce(sa.func.max(table.c.id), -1) + 1).where(table.c.name == name)


def changed_table() -> sa.Table:
    """Temporary table of the block ids whose content a new version changes."""
    return sa.Table(CHANGED, sa.MetaData(), sa.Column("id", sa.BigInteger), prefixes=["TEMPORARY"])


def close_cells(cells: sa.Table, name: str, version: int, open_version: int) -> sa.Update:
    """End the validity of the changed blocks' current content at ``version - 1``."""
    changed = sa.select(sa.table(CHANGED, sa.column("id")).c.id)
    return (sa.update(cells).where(cells.c.name == name, cells.c.last_version == open_version,
                                   cells.c.block_id.in_(changed))
            .values(last_version=version - 1))
