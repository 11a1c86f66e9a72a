"""``veil seed``: load the synthetic census (``sql/census.sql``, generated inside DuckDB) into the source table
a config names, on DuckDB or PostgreSQL — docker-compose's first start, or a first try of Veil against your
own PostgreSQL.  It never touches an existing table: if the table exists, it says so and does nothing.

The rows go in chunks through Veil's own backends (PostgreSQL: COPY) in one transaction, so a failed or
interrupted seed leaves no half-loaded table.
"""

from __future__ import annotations

from collections.abc import Callable

import duckdb
import sqlalchemy as sa

from veil import queries as q
from veil.backends import open_backend
from veil.config import Config
from veil.demo import census_sql

CENSUS_COLUMNS = {"person_id": sa.BigInteger, "age": sa.Integer, "sex": sa.Text, "race": sa.Text,
                  "marital_status": sa.Text, "education": sa.Text, "zip": sa.Text, "occupation": sa.Text,
                  "income": sa.Integer}
CHUNK = 50_000


def census_table(schema: str | None, name: str) -> sa.Table:
    return sa.Table(name, sa.MetaData(), *(sa.Column(c, t) for c, t in CENSUS_COLUMNS.items()), schema=schema)


def seed(config: Config, rows: int = 100_000, seed: int = 42, step: Callable[[str], None] = lambda _m: None) -> str:
    """Create ``[source] table`` with ``rows`` synthetic people unless it exists; what was done, in a line."""
    source = config.source
    backend = open_backend(source.resolved_url())
    backend.create_missing = True  # seeding a new DuckDB file creates it
    table = census_table(source.schema, source.table)
    with backend.session() as session:
        names = {name for name, _ in session.rows(q.tables_in(source.schema or backend.default_schema),
                                                  "listing the source schema's tables")}
        if source.table in names:
            count = session.scalar(q.count_rows(table), "counting the existing rows")
            return f"{source.qualified} exists ({count:,} rows): nothing to seed"
        if source.schema:
            session.execute(q.CreateSchema(source.schema), f"creating schema {source.schema!r}")
        session.execute(sa.schema.CreateTable(table), f"creating {source.qualified}")
        generator = duckdb.connect()
        try:
            cursor = generator.execute(census_sql(), {"rows": rows, "seed": seed})
            loaded = 0
            while chunk := cursor.fetchmany(CHUNK):
                session.bulk_load(table, chunk, f"loading the census into {source.qualified}")
                loaded += len(chunk)
                step(f"loaded {loaded:,} of {rows:,} rows into {source.qualified}")
        finally:
            generator.close()
        session.commit()
    return f"seeded {source.qualified} with {rows:,} synthetic census rows ({backend.name})"
