"""Published dimension tables: per version of a release, the hierarchy of each column it published as a
dimension table (``<name>_dim_<column>``), by content hash, so that unchanged hierarchies are published once
and expiry keeps what a kept version still uses (docs/publication.md §1).

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade(schema: str) -> None:
    op.create_table(
        "publication_dimensions",
        sa.Column("name", sa.Text, primary_key=True),
        sa.Column("version", sa.Integer, primary_key=True),
        sa.Column("attribute", sa.Text, primary_key=True),
        sa.Column("role", sa.Text, nullable=False),
        sa.Column("digest", sa.Text, nullable=False),
        sa.Column("height", sa.Integer, nullable=False),
        sa.Column("dim_table", sa.Text, nullable=False),
        schema=schema,
    )


def downgrade(schema: str) -> None:
    op.drop_table("publication_dimensions", schema=schema)
