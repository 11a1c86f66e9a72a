"""Alembic environment for Veil's catalog.  ``veil init`` runs it programmatically on the run's own
connection (``config.attributes["connection"]``) with the catalog schema in ``config.attributes["schema"]``;
the version table lives in that schema too."""

from __future__ import annotations

from alembic import context
from alembic.ddl.impl import DefaultImpl


class AlembicDuckDBImpl(DefaultImpl):
    """Alembic implementation for DuckDB (as duckdb-engine's README shows)."""

    __dialect__ = "duckdb"
    transactional_ddl = True


def run_migrations_online() -> None:
    connection = context.config.attributes["connection"]
    schema = context.config.attributes["schema"]
    context.configure(connection=connection, version_table_schema=schema, transactional_ddl=True,
                      render_as_batch=False)
    with context.begin_transaction():
        context.run_migrations(schema=schema)


if context.is_offline_mode():
    raise RuntimeError("Veil's catalog migrations run online only (veil init)")
run_migrations_online()
