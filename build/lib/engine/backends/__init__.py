"""Backends: the only place that executes SQL.  ``open_backend(url)`` picks one by URL scheme."""

from __future__ import annotations

import sqlalchemy as sa

from engine.backends.base import Backend, Session
from engine.errors import BackendError


def open_backend(url: str) -> Backend:
    """A backend for a SQLAlchemy URL: ``duckdb:///file`` or ``postgresql[+psycopg]://…``."""
    try:
        parsed = sa.make_url(url)
    except sa.exc.ArgumentError:
        raise BackendError("the database URL is not a valid SQLAlchemy URL (check [source] url / url_env)") from None
    backend = parsed.get_backend_name()
    if backend == "duckdb":
        from engine.backends.duckdb import DuckDBBackend

        return DuckDBBackend(parsed)
    if backend in ("postgresql", "postgres"):
        from engine.backends.postgres import PostgresBackend

        return PostgresBackend(parsed.set(drivername="postgresql+psycopg"))
    raise BackendError(f"unsupported database {backend!r} in URL {parsed.render_as_string(hide_password=True)}; "
                       "Veil runs on DuckDB and PostgreSQL")


__all__ = ["Backend", "Session", "open_backend"]
