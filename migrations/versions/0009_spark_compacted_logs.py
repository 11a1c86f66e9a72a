"""Spark's catalog: every table but the revision row an append-only log partitioned by day behind a view, and
compacted once a week (``veil.queries.appendonly``, ``veil.release.compaction``, docs/spark.md §3).  Nothing
changes in a DuckDB or PostgreSQL catalog: the revision number is the catalog's format on every backend, and a
Spark catalog, which has no migrations, is made again at this revision by ``veil init`` (after exporting its
history).

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade(schema: str) -> None:
    """DuckDB and PostgreSQL: nothing to change."""


def downgrade(schema: str) -> None:
    """DuckDB and PostgreSQL: nothing to change."""
