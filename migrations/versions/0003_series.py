"""Series and publication: the pointer to each release's current version, the series ledger (what every
version published, per block, never published itself), and per-release deferral details.

docs/series.md describes the ledger, docs/publication.md the pointer.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade(schema: str) -> None:
    op.add_column("releases", sa.Column("rows_deferred", sa.BigInteger), schema=schema)
    op.add_column("releases", sa.Column("series", sa.Text), schema=schema)
    op.add_column("releases", sa.Column("expired_at", sa.DateTime), schema=schema)
    op.create_table(
        "publications",
        sa.Column("name", sa.Text, primary_key=True),
        sa.Column("schema", sa.Text, nullable=False),
        sa.Column("current_version", sa.Integer, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=False),
        schema=schema,
    )
    op.create_table(
        "series_versions",
        sa.Column("name", sa.Text, primary_key=True),
        sa.Column("version", sa.Integer, primary_key=True),
        sa.Column("release_id", sa.String(36), nullable=False),
        sa.Column("node", sa.Text, nullable=False),
        sa.Column("attributes", sa.Text, nullable=False),
        sa.Column("columns", sa.Text, nullable=False),
        sa.Column("hierarchies", sa.Text, nullable=False),
        sa.Column("policy", sa.Text, nullable=False),
        sa.Column("published_at", sa.DateTime, nullable=False),
        schema=schema,
    )
    op.create_table(
        "series_hierarchies",
        sa.Column("name", sa.Text, primary_key=True),
        sa.Column("digest", sa.Text, primary_key=True),
        sa.Column("attribute", sa.Text, nullable=False),
        sa.Column("definition", sa.Text, nullable=False),
        schema=schema,
    )
    for table, column in (("series_blocks", "labels"), ("series_values", "value")):
        op.create_table(
            table,
            sa.Column("name", sa.Text, primary_key=True),
            sa.Column("id", sa.BigInteger, primary_key=True),
            sa.Column(column, sa.Text, nullable=False),
            schema=schema,
        )
    op.create_table(
        "series_cells",
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("block_id", sa.BigInteger, nullable=False),
        sa.Column("value_id", sa.BigInteger, nullable=False),
        sa.Column("count", sa.BigInteger, nullable=False),
        sa.Column("first_version", sa.Integer, nullable=False),
        sa.Column("last_version", sa.Integer, nullable=False),
        schema=schema,
    )
    op.create_index("series_cells_open", "series_cells", ["name", "last_version"], schema=schema)


def downgrade(schema: str) -> None:
    op.drop_index("series_cells_open", table_name="series_cells", schema=schema)
    for table in ("series_cells", "series_values", "series_blocks", "series_hierarchies", "series_versions",
                  "publications"):
        op.drop_table(table, schema=schema)
    for column in ("expired_at", "series", "rows_deferred"):
        op.drop_column("releases", column, schema=schema)
