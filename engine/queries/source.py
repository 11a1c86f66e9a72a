"""The source table as Veil sees it: column types read from ``information_schema`` (no reflection), the table
as a Core object, and the order-independent fingerprint of its published columns."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from veil.hierarchy import ValueKind

class PaddedText(sa.types.TypeDecorator[str]):
    """``CHAR(n)`` (PostgreSQL's ``bpchar``): blank-padded text whose trailing spaces do not count.  Veil reads
    it as text (``CAST(c AS TEXT)`` drops the padding), so values, dimension tables and labels hold ``'ab'``,
    not ``'ab   '``; joins of the source column to a text dimension table compare it as text, which also
    drops the padding.  Without this, ``'ab   '`` (from the driver) never equals ``CAST(c AS TEXT)`` = ``'ab'``.

    >>> from sqlalchemy.dialects import postgresql
    >>> t = sa.Table("t", sa.MetaData(), sa.Column("zip", PaddedText()))
    >>> print(sa.select(t.c.zip).compile(dialect=postgresql.dialect()))
    SELECT CAST(t.zip AS TEXT) AS zip 
    FROM t
    """

    impl = sa.Text
    cache_ok = True

    def column_expression(self, colexpr: Any) -> Any:
        return sa.cast(colexpr, sa.Text())


_TYPES: list[tuple[str, Any, ValueKind]] = [
    (r"^(tinyint|smallint|int2|utinyint|usmallint)$", sa.SmallInteger, ValueKind.INTEGER),
    (r"^(integer|int|int4|uinteger|signed)$", sa.Integer, ValueKind.INTEGER),
    (r"^(bigint|int8|ubigint|hugeint|uhugeint|long)$", sa.BigInteger, ValueKind.INTEGER),
    (r"^(real|float4|float)$", sa.REAL, ValueKind.FLOAT),
    (r"^(double|double precision|float8)$", sa.Double, ValueKind.FLOAT),
    (r"^(decimal|numeric)(\((\d+),\s*(\d+)\))?$", sa.Numeric, ValueKind.DECIMAL),
    (r"^(varchar|character varying|text|string|name)(\(\d+\))?$", sa.Text, ValueKind.TEXT),
    (r"^(char|character|bpchar)(\(\d+\))?$", PaddedText, ValueKind.TEXT),
    (r"^date$", sa.Date, ValueKind.DATE),
    (r"^(timestamp|timestamp without time zone|datetime)(\(\d\))?$", sa.DateTime, ValueKind.TIMESTAMP),
    (r"^(boolean|bool)$", sa.Boolean, ValueKind.BOOLEAN),
]


def column_type(data_type: str, precision: int | None = None, scale: int | None = None) -> tuple[Any, ValueKind]:
    """SQLAlchemy type and value kind for an ``information_schema`` ``data_type``; ``None`` kind if unknown."""
    text = data_type.strip().lower()
    for pattern, sa_type, kind in _TYPES:
        m = re.match(pattern, text)
        if m:
            if sa_type is sa.Numeric:
                p = int(m.group(3)) if m.group(3) else precision
                s = int(m.group(4)) if m.group(4) else scale
                return (sa.Numeric(p, s) if p is not None else sa.Numeric()), kind
            return sa_type(), kind
    raise KeyError(data_type)


def source_table(schema: str | None, name: str, columns: dict[str, Any]) -> sa.Table:
    """The source as a Core table with the given (name → SQLAlchemy type) columns; no reflection."""
    md = sa.MetaData()
    return sa.Table(name, md, *(sa.Column(c, t) for c, t in columns.items()), schema=schema)


def columns_of(schema: str | None, table: str) -> sa.Select[Any]:
    """Column names and types of ``schema.table`` from ``information_schema`` (reflection-free)."""
    info = sa.table("columns", sa.column("table_schema"), sa.column("table_name"), sa.column("column_name"),
                    sa.column("data_type"), sa.column("ordinal_position"), sa.column("numeric_precision"),
                    sa.column("numeric_scale"), schema="information_schema")
    where_schema = info.c.table_schema == (sa.literal(schema) if schema is not None else sa.func.current_schema())
    return (sa.select(info.c.column_name, info.c.data_type, info.c.numeric_precision, info.c.numeric_scale)
            .where(where_schema, info.c.table_name == sa.literal(table))
            .order_by(info.c.ordinal_position))


def tables_in(schema: str) -> sa.Select[Any]:
    """Names of tables and views in ``schema``."""
    info = sa.table("tables", sa.column("table_schema"), sa.column("table_name"), sa.column("table_type"),
                    schema="information_schema")
    return sa.select(info.c.table_name, info.c.table_type).where(info.c.table_schema == sa.literal(schema))


def fingerprint(source: sa.Table, columns: Sequence[str], style: str) -> sa.Select[Any]:
    """Order-independent fingerprint of the source's ``columns``: row count and the sum of 64-bit row
    hashes (``style`` "duckdb": ``hash(...)``; "spark": ``xxhash64(...)``; "postgresql": ``hashtextextended(row::text, 0)``)."""
    cols = [source.c[c] for c in columns]
    if style == "duckdb":
        row_hash = sa.cast(sa.func.hash(*cols), sa.Numeric(38, 0))
    elif style == "spark":  # Spark SQL: xxhash64 of the columns (NULLs hashed as such)
        row_hash = sa.cast(sa.func.xxhash64(*cols), sa.Numeric(38, 0))
    else:
        row_hash = sa.cast(sa.func.hashtextextended(sa.cast(sa.tuple_(*cols), sa.Text), 0), sa.Numeric(38, 0))
    return sa.select(sa.func.count(), sa.func.coalesce(sa.func.sum(row_hash), 0)).select_from(source)

