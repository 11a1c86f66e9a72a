"""Backends: the only place that executes SQL.  ``open_backend(url)`` picks one by URL scheme, from the backends
that registered theirs (``@BACKENDS.register("duckdb")`` on the class, ``veil.registry``)."""

from __future__ import annotations

from veil.backends.base import Backend, Session, parse_url
from veil.errors import BackendError
from veil.registry import BACKENDS


def open_backend(url: str) -> Backend:
    """A backend for a URL: ``duckdb:///file``, ``postgresql[+psycopg]://…`` or Spark Connect's ``sc://host:port``
    — a URL whose scheme (before any ``+driver``) a backend registered."""
    scheme = url.split("://", 1)[0] if "://" in url else ""
    if scheme not in BACKENDS:
        parsed = parse_url(url)  # not a valid URL: say so
        scheme = parsed.get_backend_name()
        if scheme not in BACKENDS:
            raise BackendError(
                f"unsupported database {scheme!r} in URL {parsed.render_as_string(hide_password=True)}; "
                f"Veil runs on {', '.join(f'{s}://' for s in BACKENDS.names())}"
            )
    backend: Backend = BACKENDS.get(scheme).open(url)
    return backend


__all__ = ["BACKENDS", "Backend", "Session", "open_backend"]
