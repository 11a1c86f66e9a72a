"""What a scheduled release needs, checked at once: ``veil schedule`` runs this at start so that a wrong
setup fails now with the usual one-line error, not at 2 a.m.  Read-only: it writes nothing anywhere.

Checked: the config (parsed by the caller) has a ``[release]`` table; the URL's environment variable is
set; the database accepts a connection; the source table and every column the release reads exist with
types Veil can handle; the catalog exists at the revision this Veil needs (``veil init``).
"""

from __future__ import annotations

from veil import catalog
from veil.backends import open_backend
from veil.config import Config, require_release
from veil.errors import SourceError
from veil.warehouse import Warehouse


def preflight(config: Config) -> str:
    """Check everything a release of ``config`` needs before its first run; a line saying what was found."""
    rel = require_release(config)
    backend = open_backend(config.source.resolved_url())
    with backend.session() as session:
        wh = Warehouse(session, config.source, config.quasi_identifiers, tuple(config.sensitive))
        columns = wh.inspect()
        missing = [c for c in (*rel.keep_columns, *rel.drop_columns) if c not in columns]
        if missing:
            raise SourceError(
                f"[release] names column(s) {', '.join(map(repr, missing))} that source table "
                f"{wh.table_name!r} does not have"
            )
        catalog.require(session, rel.catalog_schema)
    return (
        f"preflight passed: {backend.name} at {backend.display_url}, source table {config.source.qualified} "
        f"({len(columns)} columns), catalog in schema {rel.catalog_schema!r} is current"
    )
