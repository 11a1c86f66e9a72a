"""The level each version's published dimension shows (``publication_dimensions.level``): a version at level
``k`` of a column publishes only the levels ``k .. h`` of the labels its rows hold (docs/publication.md §1).
Rows recorded before have no level: their contents may list every source value under each label, and the next
release redacts them (``veil.release.legacy_dimensions``).

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade(schema: str) -> None:
    op.add_column("publication_dimensions", sa.Column("level", sa.Integer, nullable=True), schema=schema)


def downgrade(schema: str) -> None:
    op.drop_column("publication_dimensions", "level", schema=schema)
