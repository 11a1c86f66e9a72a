"""One run of a release name at a time (a release or a rollback), whatever the backend: a PostgreSQL advisory
lock (``veil.catalog.advisory``; DuckDB: the file lock, taken when the connection opened) or, where the backend
has lock tables (Spark), a lock table (``veil.release.spark_publication.table_lock``, docs/spark.md).

Its own module, above both publications: ``runtime`` (which both import) then imports neither, so no import
closes a cycle (``release.publication → runtime → spark_publication → publication`` before)."""

from __future__ import annotations

from typing import Any

from veil import catalog
from veil.backends.base import Session
from veil.release.spark_publication import table_lock


def locked(session: Session, schema: str, name: str, wait: float) -> Any:
    """Exactly one run of a release name at a time (a release or a rollback): a PostgreSQL advisory lock
    (DuckDB: the file lock, taken when the connection opened; Spark: a lock table, docs/spark.md)."""
    if session.backend.lock_tables:
        return table_lock(session, schema, name, wait)
    return catalog.advisory(session, catalog.lock_key("veil", schema, name), wait,
                            f"another `veil release` of {name!r} is running (advisory lock held); nothing was "
                            "published by this run — try again later or pass --wait")
