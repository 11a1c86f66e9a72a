"""The catalog: releases, the nodes each release evaluated, and the hierarchies it loaded.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade(schema: str) -> None:
    op.create_table(
        "releases",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("version", sa.Integer),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("started_at", sa.DateTime, nullable=False),
        sa.Column("finished_at", sa.DateTime),
        sa.Column("published_at", sa.DateTime),
        sa.Column("config", sa.Text, nullable=False),
        sa.Column("config_hash", sa.Text, nullable=False),
        sa.Column("source_fingerprint", sa.Text),
        sa.Column("node", sa.Text),
        sa.Column("achieved", sa.Text),
        sa.Column("metrics", sa.Text),
        sa.Column("rows_read", sa.BigInteger),
        sa.Column("rows_published", sa.BigInteger),
        sa.Column("rows_suppressed", sa.BigInteger),
        sa.Column("output_table", sa.Text),
        sa.Column("error", sa.Text),
        schema=schema,
    )
    op.create_table(
        "release_nodes",
        sa.Column("release_id", sa.String(36), nullable=False),
        sa.Column("node", sa.Text, nullable=False),
        sa.Column("passed", sa.Boolean, nullable=False),
        sa.Column("suppressed_rows", sa.BigInteger, nullable=False),
        sa.Column("metric", sa.Float),
        schema=schema,
    )
    op.create_table(
        "hierarchies",
        sa.Column("release_id", sa.String(36), nullable=False),
        sa.Column("attribute", sa.Text, nullable=False),
        sa.Column("height", sa.Integer, nullable=False),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("leaves", sa.Integer, nullable=False),
        sa.Column("definition", sa.Text, nullable=False),
        schema=schema,
    )


def downgrade(schema: str) -> None:
    op.drop_table("hierarchies", schema=schema)
    op.drop_table("release_nodes", schema=schema)
    op.drop_table("releases", schema=schema)
