"""``veil seed``: load the synthetic census (``sql/census.sql``, generated inside DuckDB) into the source table
a config names, on DuckDB or PostgreSQL — docker-compose's first start, or a first try of Veil against your
own PostgreSQL.  It never touches an existing table: if the table exists, it says so and does nothing.

The rows go in chunks through Veil's own backends (PostgreSQL: COPY) in one transaction, so a failed or
interrupted seed leaves no half-loaded table.
"""

from __future__ import annotations

from collections.abc import Callable

from veil import queries as q
from veil.backends import open_backend
from veil.config import Config
from veil.queries.ddl import create_table
from veil.queries.demo import CENSUS_COLUMNS, census, census_table

__all__ = ["CENSUS_COLUMNS", "CHUNK", "census_table", "seed"]

CHUNK = 50_000
GENERATOR = "duckdb:///:memory:"  # the census is drawn inside an in-memory DuckDB, whatever the target


def seed(config: Config, rows: int = 100_000, seed: int = 42, step: Callable[[str], None] = lambda _m: None) -> str:
    """Create ``[source] table`` with ``rows`` synthetic people unless it exists; what was done, in a line."""
    source = config.source
    backend = open_backend(source.resolved_url())
    backend.create_missing = True  # seeding a new DuckDB file creates it
    table = census_table(source.schema, source.table)
    with backend.session() as session:
        names = {
            name
            for name, _ in session.rows(
                q.tables_in(source.schema or backend.default_schema), "listing the source schema's tables"
            )
        }
        if source.table in names:
            count = session.scalar(q.count_rows(table), "counting the existing rows")
            return f"{source.qualified} exists ({count:,} rows): nothing to seed"
        if source.schema:
            session.execute(q.CreateSchema(source.schema), f"creating schema {source.schema!r}")
        session.execute(create_table(table), f"creating {source.qualified}")
        with open_backend(GENERATOR).session() as generator_session:
            loaded = 0
            for chunk in generator_session.row_chunks(census(rows, seed), "generating the census", CHUNK):
                session.bulk_load(table, chunk, f"loading the census into {source.qualified}")
                loaded += len(chunk)
                step(f"loaded {loaded:,} of {rows:,} rows into {source.qualified}")
        session.commit()
    return f"seeded {source.qualified} with {rows:,} synthetic census rows ({backend.name})"
