"""The demo's statements (``veil demo``, ``veil seed``): the synthetic census (``sql/census.sql``, generated
inside DuckDB) as a textual SELECT with ``rows`` and ``seed`` bound, the table it is loaded into, the demo
warehouse's ``raw.census``, and what ``veil demo`` shows of the release it made."""

from __future__ import annotations

import re
from importlib import resources
from typing import Any

import sqlalchemy as sa

from veil.queries.ddl import CreateSchema, CreateTableAs, DropObject

CENSUS_COLUMNS = {
    "person_id": sa.BigInteger,
    "age": sa.Integer,
    "sex": sa.Text,
    "race": sa.Text,
    "marital_status": sa.Text,
    "education": sa.Text,
    "zip": sa.Text,
    "occupation": sa.Text,
    "income": sa.Integer,
}
_PARAMETER = re.compile(r"\$(rows|seed)\b")  # census.sql's DuckDB parameters, bound here as :rows and :seed


def census_table(schema: str | None, name: str) -> sa.Table:
    """The census's columns and types (``veil seed`` creates it on DuckDB or PostgreSQL)."""
    return sa.Table(name, sa.MetaData(), *(sa.Column(c, t) for c, t in CENSUS_COLUMNS.items()), schema=schema)


def census(rows: int, seed: int) -> sa.TextClause:
    """The generator's SELECT: ``rows`` people drawn from ``seed`` (both bound, never formatted).

    >>> from duckdb_engine import Dialect
    >>> "range(" in str(census(10, 1).compile(dialect=Dialect()))
    True
    """
    sql = (resources.files("veil.sql") / "census.sql").read_text(encoding="utf-8")  # veil.demo.census_sql
    return sa.text(_PARAMETER.sub(r":\1", sql)).bindparams(rows=rows, seed=seed)


def census_warehouse(rows: int, seed: int, schema: str = "raw", name: str = "census") -> list[Any]:
    """``raw.census`` in the demo's DuckDB warehouse, created or replaced from the generator: the schema unless
    it exists, the table dropped if there, created from ``census(rows, seed)``."""
    table = sa.table(name, schema=schema)
    return [CreateSchema(schema), DropObject("TABLE", table), CreateTableAs(table, census(rows, seed), temporary=False)]  # type: ignore[arg-type]


def first_rows(schema: str, name: str, limit: int = 5) -> sa.Select[Any]:
    """``SELECT * FROM <schema>.<name> LIMIT <limit>``: what ``veil demo`` shows of the published view."""
    return sa.select(sa.literal_column("*")).select_from(sa.table(name, schema=schema)).limit(limit)


def release_history(schema: str, name: str) -> sa.Select[Any]:
    """The releases of ``<schema>.<name>`` (its ``_releases`` view), oldest first."""
    releases = sa.table(
        f"{name}_releases",
        *(sa.column(c) for c in ("version", "published_at", "node", "rows_published", "rows_suppressed")),
        schema=schema,
    )
    return sa.select(*releases.c).order_by(releases.c.version)
