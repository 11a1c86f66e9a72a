"""The catalog's statements about one run of a release (``<catalog_schema>.releases``, one row per run): what
the database committed for it, read back when a run stops, and notes added to its row after the commit."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

SUMMARY = (
    "status",
    "version",
    "node",
    "rows_published",
    "rows_suppressed",
    "rows_deferred",
    "achieved",
    "series",
    "output_table",
    "error",
)


def status(releases: sa.Table, release_id: str) -> sa.Select[Any]:
    """The run's status as committed (``running`` until its transaction commits it ``published`` or ``skipped``)."""
    return sa.select(releases.c.status).where(releases.c.id == release_id)


def summary(releases: sa.Table, release_id: str) -> sa.Select[Any]:
    """What the run's outcome says, as the catalog row recorded it (columns ``SUMMARY``)."""
    return sa.select(*(releases.c[c] for c in SUMMARY)).where(releases.c.id == release_id)


def set_series(releases: sa.Table, release_id: str, series: str) -> sa.Update:
    """The run's ``series`` document (JSON text), rewritten: notes added after the commit."""
    return sa.update(releases).where(releases.c.id == release_id).values(series=series)
