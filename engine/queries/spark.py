"""Spark SQL: a SQLAlchemy dialect for *compiling* Veil's statements (there is no DBAPI driver; the Spark
backend sends the text and its named parameters with ``spark.sql(text, args=...)``), and the ``spark``
variants of the DDL constructs Core lacks.

Identifiers are always backtick-quoted by the dialect's preparer (a backtick inside a name is doubled);
values stay named parameter markers ``:name``, never formatted in.  Spark has no temporary tables: a
working table (``veil_*``, a ``TEMPORARY`` table on DuckDB and PostgreSQL) is a temporary view of the
Spark session — ``CACHE TABLE <name> AS <select>`` (a session view whose rows Spark computes once and
keeps, compressed and columnar, in the executors' memory, spilling to their disks), or an empty typed view
that the backend's bulk load fills:

>>> import sqlalchemy as sa
>>> t = sa.table("veil_base", sa.column("q0_1"), sa.column("n"))
>>> print(compile_sql(sa.select(t.c.q0_1, sa.func.sum(t.c.n)).where(t.c.q0_1 == 3).group_by(t.c.q0_1)))
SELECT `veil_base`.`q0_1`, sum(`veil_base`.`n`) AS `sum_1` 
FROM `veil_base` 
WHERE `veil_base`.`q0_1` = :q0_1_1 GROUP BY `veil_base`.`q0_1`
>>> print(compile_sql(sa.schema.CreateTable(sa.Table("veil_sdom_0", sa.MetaData(), sa.Column("value", sa.Text),
...       sa.Column("code", sa.Integer), prefixes=["TEMPORARY"]))))
CREATE OR REPLACE TEMPORARY VIEW `veil_sdom_0` AS SELECT CAST(NULL AS STRING) AS `value`, CAST(NULL AS INT) AS `code` WHERE false
"""

from __future__ import annotations

import re
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import default
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql import compiler
from sqlalchemy.sql.expression import ClauseElement, Executable

from veil.queries.ddl import CreateTableAs


class _Underscore(dict[str, str]):
    """Every character a bind name may not hold becomes ``_``."""

    def __missing__(self, key: str) -> str:
        return "_"


class SparkIdentifierPreparer(compiler.IdentifierPreparer):
    """Backticks around every identifier (Spark keywords vary with ANSI mode); a backtick is doubled."""

    def __init__(self, dialect: sa.Dialect) -> None:
        super().__init__(dialect, initial_quote="`", escape_quote="`")

    def _requires_quotes(self, value: str) -> bool:
        return True


class SparkCompiler(compiler.SQLCompiler):
    """Named markers ``:name`` with names Spark accepts; string literals (views only) Spark's way."""

    @classmethod
    def _init_bind_translate(cls) -> None:
        cls._bind_translate_re = re.compile(r"[^A-Za-z0-9_]")
        cls._bind_translate_chars = _Underscore()

    def render_literal_value(self, value: Any, type_: Any) -> str:
        if isinstance(value, str):  # Spark reads backslash escapes inside string literals
            return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
        return super().render_literal_value(value, type_)


class SparkDDLCompiler(compiler.DDLCompiler):
    def visit_primary_key_constraint(self, constraint: Any, **kw: Any) -> str:
        return ""  # Spark's built-in catalog has no key constraints


class SparkTypeCompiler(compiler.GenericTypeCompiler):
    """Spark SQL type names for the SQLAlchemy types Veil uses."""

    def visit_TEXT(self, type_: Any, **kw: Any) -> str:
        return "STRING"

    visit_VARCHAR = visit_CHAR = visit_NVARCHAR = visit_NCHAR = visit_TEXT

    def visit_INTEGER(self, type_: Any, **kw: Any) -> str:
        return "INT"

    def visit_FLOAT(self, type_: Any, **kw: Any) -> str:
        return "DOUBLE"  # SQLAlchemy's Float is a double elsewhere; Spark's FLOAT is 4 bytes

    def visit_REAL(self, type_: Any, **kw: Any) -> str:
        return "FLOAT"

    def visit_DOUBLE_PRECISION(self, type_: Any, **kw: Any) -> str:
        return "DOUBLE"

    def visit_NUMERIC(self, type_: Any, **kw: Any) -> str:
        if type_.precision is None:
            return "DECIMAL"
        return f"DECIMAL({type_.precision}, {type_.scale or 0})"

    visit_DECIMAL = visit_NUMERIC

    def visit_DATETIME(self, type_: Any, **kw: Any) -> str:
        return "TIMESTAMP"

    visit_TIMESTAMP = visit_DATETIME

    def visit_BLOB(self, type_: Any, **kw: Any) -> str:
        return "BINARY"

    visit_BINARY = visit_VARBINARY = visit_BLOB


class SparkDialect(default.DefaultDialect):
    """Spark SQL (Spark 3.4+, parameterized ``spark.sql``) for compilation only."""

    name = "spark"
    driver = "connect"
    default_paramstyle = "named"
    statement_compiler = SparkCompiler
    ddl_compiler = SparkDDLCompiler
    type_compiler_cls = SparkTypeCompiler
    preparer = SparkIdentifierPreparer
    supports_statement_cache = True
    supports_native_boolean = True
    supports_native_decimal = True
    supports_alter = True
    supports_schemas = True
    max_identifier_length = 255


DIALECT = SparkDialect()


def compile_sql(stmt: Any) -> Any:
    """``stmt`` compiled for Spark SQL: ``str()`` is the text, ``.params`` the named parameters."""
    return stmt.compile(dialect=DIALECT)


class CacheTable(Executable, ClauseElement):
    """``CACHE TABLE <view>``: compute a working view's rows once and keep them on the executors."""

    inherit_cache = False

    def __init__(self, name: str) -> None:
        self.name = name


@compiles(CacheTable, "spark")
def _cache_table(element: CacheTable, compiler: Any, **kw: Any) -> str:
    return f"CACHE TABLE {compiler.preparer.quote(element.name)}"


@compiles(CreateTableAs, "spark")
def _create_table_as(element: CreateTableAs, compiler: Any, **kw: Any) -> str:
    """A working table is a cached session view; a release table a catalog table (default format)."""
    body = compiler.process(element.select, **kw)
    name = compiler.preparer.format_table(element.table)
    if element.temporary:
        return f"CACHE TABLE {name} AS {body}"
    return f"CREATE TABLE {name} AS {body}"


@compiles(sa.schema.CreateTable, "spark")
def _create_table(element: sa.schema.CreateTable, compiler: Any, **kw: Any) -> str:
    """A ``TEMPORARY`` table becomes an empty typed session view (the backend's bulk load fills it)."""
    table = element.element
    if "TEMPORARY" not in (p.upper() for p in table._prefixes):
        return compiler.visit_create_table(element, **kw)
    types = compiler.dialect.type_compiler_instance
    cols = ", ".join(f"CAST(NULL AS {types.process(c.type)}) AS {compiler.preparer.quote(c.name)}"
                     for c in table.columns)
    return f"CREATE OR REPLACE TEMPORARY VIEW {compiler.preparer.format_table(table)} AS SELECT {cols} WHERE false"


# Spark catalog type names (``DataType.simpleString``) that the information_schema names of
# ``veil.queries.source.column_type`` spell differently.
_SOURCE_TYPES = {"timestamp_ntz": "timestamp", "byte": "tinyint", "short": "smallint", "long": "bigint",
                 "integer": "int"}


def source_type(spark_type: str) -> str:
    """A Spark column type as ``column_type`` reads it; others (collated strings, arrays, ...) unchanged,
    so Veil names them as types it cannot generalize.

    >>> source_type("timestamp_ntz"), source_type("decimal(10,2)"), source_type("string collate UTF8_LCASE")
    ('timestamp', 'decimal(10,2)', 'string collate utf8_lcase')
    """
    text = spark_type.strip().lower()
    return _SOURCE_TYPES.get(text, text)


def kept_rows(delete: sa.Delete) -> sa.Select[Any]:
    """The rows a ``DELETE`` on a working view keeps (``NULL`` conditions keep the row, as in SQL):

    >>> t = sa.table("veil_base_raw", sa.column("q0"), sa.column("n"))
    >>> print(compile_sql(kept_rows(sa.delete(t).where(t.c.q0.is_(None)))))
    SELECT * 
    FROM `veil_base_raw` 
    WHERE NOT coalesce(`veil_base_raw`.`q0` IS NULL, false)
    """
    table = delete.table
    where = delete.whereclause
    select = sa.select(sa.literal_column("*")).select_from(table)  # every column, listed in the DELETE or not
    if where is None:
        return select.where(sa.false())
    return select.where(sa.not_(sa.func.coalesce(where, sa.false())))
