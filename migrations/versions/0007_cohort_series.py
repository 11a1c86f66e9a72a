"""The cohort series (docs/series.md): ``series_state``, one row per release name — the current series'
number, the version it began at, its node, quasi-identifiers and published columns, what defines it (its
``shape``), the members table's name, its smallest batch, the next cohort id and its secret (the key of its
coins; this table is never published, never granted).

Also: ``releases.rows_deferred`` is cleared.  The analysts' ``<name>_releases`` view showed it, and how many
rows a night held back tells a reader about the held rows' values (docs/series.md §6); the catalog's own record
of it is the ``series`` document, which analysts cannot read.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade(schema: str) -> None:
    op.create_table(
        "series_state",
        sa.Column("name", sa.Text, primary_key=True),
        sa.Column("series", sa.Integer, nullable=False),
        sa.Column("started_version", sa.Integer, nullable=False),
        sa.Column("node", sa.Text, nullable=False),
        sa.Column("attributes", sa.Text, nullable=False),
        sa.Column("columns", sa.Text, nullable=False),
        sa.Column("shape", sa.Text, nullable=False),
        sa.Column("members", sa.Text, nullable=False),
        sa.Column("batch", sa.Integer, nullable=False),
        sa.Column("next_cohort", sa.BigInteger, nullable=False),
        sa.Column("secret", sa.Text, nullable=False),
        schema=schema,
    )
    releases = sa.table("releases", sa.column("rows_deferred"), schema=schema)
    op.execute(sa.update(releases).values(rows_deferred=None))


def downgrade(schema: str) -> None:
    op.drop_table("series_state", schema=schema)
