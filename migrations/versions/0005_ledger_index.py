"""The ledger's index on open cells (``series_cells_open``, revision 0003) dropped where the backend does not
index tables by version (``Backend.version_indexes``: DuckDB).  DuckDB finds a release's open cells by its
zonemaps — the filter matches most of them, so the index is never read — and building the index for a first
version's 8.1M cells (10M census) took 0.85 s of its commit.  PostgreSQL keeps it.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

from alembic import context, op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def _indexed() -> bool:
    """Whether the backend indexes tables by version (``veil.catalog`` passes ``Backend.version_indexes``)."""
    return bool(context.config.attributes.get("version_indexes", True))


def upgrade(schema: str) -> None:
    if not _indexed():
        op.drop_index("series_cells_open", table_name="series_cells", schema=schema)


def downgrade(schema: str) -> None:
    if not _indexed():
        op.create_index("series_cells_open", "series_cells", ["name", "last_version"], schema=schema)
