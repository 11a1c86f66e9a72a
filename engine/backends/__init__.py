"""Backends: the only place that executes SQL.  ``open_backend(url)`` picks one by URL scheme."""

from __future__ import annotations

import sqlalchemy as sa

from veil.backends.base import Backend, Session
from veil.errors import BackendError


def open_backend(url: str) -> Backend:
    """A backend for a URL: ``duckdb:///file``, ``postgresql[+psycopg]://…`` or Spark Connect's ``sc://host:port``."""
    if url.startswith("sc://"):
        from veil.backends.spark import SparkBackend

        return SparkBackend(url)
    try:
        parsed = sa.make_url(url)
    except sa.exc.ArgumentError:
        raise BackendError("the database URL is not a valid SQLAlchemy URL (check [source] url / url_env)") from None
    backend = parsed.get_backend_name()
    if backend == "duckdb":
        from veil.backends.duckdb import DuckDBBackend

        return DuckDBBackend(parsed)
    if backend in ("postgresql", "postgres"):
        from veil.backends.postgres import PostgresBackend

        return PostgresBackend(parsed.set(drivername="postgresql+psycopg"))
    raise BackendError(f"unsupported database {backend!r} in URL {parsed.render_as_string(hide_password=True)}; "
                       "Veil runs on DuckDB, PostgreSQL and Spark (sc://)")


__all__ = ["Backend", "Session", "open_backend"]
