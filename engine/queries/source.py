"""The source table as Veil sees it: column types read from ``information_schema`` (no reflection), the table
as a Core object, and the order-independent fingerprint of its published columns."""

from __future__ import annotations

import decimal
import re
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.functions import FunctionElement

from veil.hierarchy import ValueKind, exact_number


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


class WideInteger(sa.types.Integer):
    """DuckDB's unsigned and 128-bit integers (``UTINYINT`` .. ``UBIGINT``, ``HUGEINT``, ``UHUGEINT``), named as
    the source names them: a dimension table's ``level_0`` must hold every value of the source column, and a
    signed type of the same width does not (``HUGEINT`` 2^127 - 1 in a ``BIGINT``: out of range).

    >>> from sqlalchemy.dialects import postgresql
    >>> print(sa.cast(sa.column("x"), WideInteger("HUGEINT")).compile(dialect=postgresql.dialect()))
    CAST(x AS HUGEINT)
    """

    RANGES = {
        "utinyint": (0, 2**8),
        "usmallint": (0, 2**16),
        "uinteger": (0, 2**32),
        "ubigint": (0, 2**64),
        "hugeint": (-(2**127), 2**127),
        "uhugeint": (0, 2**128),
    }  # [low, high)
    cache_ok = True

    def __init__(self, name: str) -> None:
        self.name = name.lower()


@compiles(WideInteger)
def _wide_integer(type_: WideInteger, compiler: Any, **kw: Any) -> str:
    return type_.name.upper()


_TYPES: list[tuple[str, Any, ValueKind]] = [
    (r"^(utinyint|usmallint|uinteger|ubigint|hugeint|uhugeint)$", WideInteger, ValueKind.INTEGER),
    (r"^(tinyint|smallint|int2)$", sa.SmallInteger, ValueKind.INTEGER),
    (r"^(integer|int|int4|signed)$", sa.Integer, ValueKind.INTEGER),
    (r"^(bigint|int8|long)$", sa.BigInteger, ValueKind.INTEGER),
    (r"^(real|float4|float)$", sa.REAL, ValueKind.REAL),
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
            return (WideInteger(text) if sa_type is WideInteger else sa_type()), kind
    raise KeyError(data_type)


def _fits_decimal(value: int | float | decimal.Decimal, precision: int, scale: int) -> bool:
    """At most ``precision - scale`` digits before the point and ``scale`` after it, exactly."""
    if isinstance(value, decimal.Decimal) and value.is_finite() and int(value.as_tuple().exponent) >= -scale:
        return not value or value.adjusted() < precision - scale  # as the column gives it: no digit too many after
    try:
        exact = exact_number(value)
    except ValueError:  # NaN, infinities
        return False
    return (exact * 10**scale).denominator == 1 and abs(exact) < 10 ** (precision - scale)


_INTEGER_RANGES: list[tuple[type, tuple[int, int]]] = [
    (sa.SmallInteger, (-(2**15), 2**15)),
    (sa.BigInteger, (-(2**63), 2**63)),
    (sa.Integer, (-(2**31), 2**31)),
]


def fits(sa_type: Any, value: Any) -> bool:
    """Whether a column of ``sa_type`` (as ``column_type`` gives it) holds ``value`` exactly: an integer type's
    range, a ``NUMERIC(p, s)``'s digits (at most ``p - s`` before the point and ``s`` after it).  A value that
    does not fit would be refused by one backend's cast and rounded by another's, so that two values of a
    hierarchy meet in one; other types hold whatever their kind parses.

    >>> fits(sa.Numeric(38, 0), 10**38 - 1), fits(sa.Numeric(38, 0), 10**38), fits(sa.Numeric(18, 3), 0.0005)
    (True, False, False)
    >>> fits(sa.SmallInteger(), 2**15), fits(WideInteger("hugeint"), 2**127 - 1), fits(sa.Text(), "x")
    (False, True, True)
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, decimal.Decimal)):
        return True
    if isinstance(sa_type, sa.Numeric) and not isinstance(sa_type, sa.Float) and sa_type.precision is not None:
        return _fits_decimal(value, sa_type.precision, sa_type.scale or 0)
    if isinstance(sa_type, WideInteger):
        low, high = WideInteger.RANGES[sa_type.name]
        return low <= value < high
    for integer, (low, high) in _INTEGER_RANGES:
        if isinstance(sa_type, integer):
            return low <= value < high
    return True


def source_table(schema: str | None, name: str, columns: dict[str, Any]) -> sa.Table:
    """The source as a Core table with the given (name → SQLAlchemy type) columns; no reflection."""
    md = sa.MetaData()
    return sa.Table(name, md, *(sa.Column(c, t) for c, t in columns.items()), schema=schema)


def columns_of(schema: str | None, table: str) -> sa.Select[Any]:
    """Column names and types of ``schema.table`` from ``information_schema`` (reflection-free)."""
    info = sa.table(
        "columns",
        sa.column("table_schema"),
        sa.column("table_name"),
        sa.column("column_name"),
        sa.column("data_type"),
        sa.column("ordinal_position"),
        sa.column("numeric_precision"),
        sa.column("numeric_scale"),
        schema="information_schema",
    )
    where_schema = info.c.table_schema == (sa.literal(schema) if schema is not None else sa.func.current_schema())
    return (
        sa.select(info.c.column_name, info.c.data_type, info.c.numeric_precision, info.c.numeric_scale)
        .where(where_schema, info.c.table_name == sa.literal(table))
        .order_by(info.c.ordinal_position)
    )


def tables_in(schema: str) -> sa.Select[Any]:
    """Names of tables and views in ``schema``."""
    info = sa.table(
        "tables",
        sa.column("table_schema"),
        sa.column("table_name"),
        sa.column("table_type"),
        schema="information_schema",
    )
    return sa.select(info.c.table_name, info.c.table_type).where(info.c.table_schema == sa.literal(schema))


class RowHash(FunctionElement[Any]):
    """A 64-bit hash of one row's columns as ``NUMERIC(38, 0)`` (summed over millions of rows without overflow),
    compiled per dialect: DuckDB ``hash(...)``, PostgreSQL ``hashtextextended(row::text, 0)``, Spark
    ``xxhash64(...)`` (``veil.queries.spark``).  A new backend registers its dialect's with
    ``@compiles(RowHash, "<dialect>")``; a dialect without one is refused when the statement is compiled.

    >>> from sqlalchemy.dialects import postgresql
    >>> print(RowHash(sa.column("a"), sa.column("b")).compile(dialect=postgresql.dialect()))
    CAST(hashtextextended(CAST((a, b) AS TEXT), %(hashtextextended_1)s::INTEGER) AS NUMERIC(38, 0))
    """

    type = sa.Numeric(38, 0)
    name = "row_hash"
    inherit_cache = True


@compiles(RowHash)
def _row_hash(element: RowHash, compiler: Any, **kw: Any) -> str:
    raise sa.exc.CompileError(
        f"no row hash for dialect {compiler.dialect.name!r}: register one with "
        f"@compiles(RowHash, {compiler.dialect.name!r}) (veil.queries.source)"
    )


@compiles(RowHash, "duckdb")
def _row_hash_duckdb(element: RowHash, compiler: Any, **kw: Any) -> str:
    return str(compiler.process(sa.cast(sa.func.hash(*element.clauses), sa.Numeric(38, 0)), **kw))


@compiles(RowHash, "postgresql")
def _row_hash_postgresql(element: RowHash, compiler: Any, **kw: Any) -> str:
    row = sa.cast(sa.tuple_(*element.clauses), sa.Text)
    return str(compiler.process(sa.cast(sa.func.hashtextextended(row, 0), sa.Numeric(38, 0)), **kw))


def fingerprint(source: sa.Table, columns: Sequence[str]) -> sa.Select[int, Any]:
    """Order-independent fingerprint of the source's ``columns``: row count and the sum of 64-bit row hashes
    (``RowHash``, compiled for the session's dialect)."""
    row_hash = RowHash(*(source.c[c] for c in columns))
    return sa.select(sa.func.count(), sa.func.coalesce(sa.func.sum(row_hash), 0)).select_from(source)
