"""Release details: the backend and the rows left out for NULLs; an index for the latest-release lookup.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade(schema: str) -> None:
    op.add_column("releases", sa.Column("backend", sa.Text), schema=schema)
    op.add_column("releases", sa.Column("rows_dropped_null", sa.BigInteger), schema=schema)
    op.create_index("releases_name_status", "releases", ["name", "status"], schema=schema)


def downgrade(schema: str) -> None:
    op.drop_index("releases_name_status", table_name="releases", schema=schema)
    op.drop_column("releases", "rows_dropped_null", schema=schema)
    op.drop_column("releases", "backend", schema=schema)
