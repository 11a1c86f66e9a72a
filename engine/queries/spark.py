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
CREATE OR REPLACE TEMPORARY VIEW `veil_sdom_0` AS SELECT CAST(NULL AS STRING) AS `value`, CAST(NULL AS INT) AS `code` WHERE :veil_run IS NULL
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import default
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql import compiler, visitors
from sqlalchemy.sql.expression import ClauseElement, Executable

from veil.queries.ddl import PRIVATE, CreateTableAs, drop_table, private, swapped  # noqa: F401 (private: the examples)
from veil.queries.publication import CreateLock, CreateViewAt, RenameTable, ShowProperties
from veil.queries.nodes import TinyInteger
from veil.queries.release import SameOrBothNull
from veil.queries.source import RowHash


class _Underscore(dict[str, str]):
    """Every character a bind name may not hold becomes ``_``."""

    def __missing__(self, key: str) -> str:
        return "_"


class SparkIdentifierPreparer(compiler.IdentifierPreparer):
    """Backticks around every identifier (Spark keywords vary with ANSI mode); a backtick is doubled."""

    # IdentifierPreparer's own parameters (DefaultDialect passes the dialect alone), backticks the default quotes
    def __init__(
        self,
        dialect: sa.Dialect,
        initial_quote: str = "`",
        final_quote: str | None = None,
        escape_quote: str = "`",
        quote_case_sensitive_collations: bool = True,
        omit_schema: bool = False,
    ) -> None:
        super().__init__(
            dialect, initial_quote, final_quote, escape_quote, quote_case_sensitive_collations, omit_schema
        )
        self.renamed: Mapping[str, str] = {}  # a run's working views: their names on the server (``run_dialect``)

    def quote(self, ident: str) -> str:
        return super().quote(self.renamed.get(ident, ident))

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

    def post_create_table(self, table: Any) -> str:
        """``PARTITIONED BY`` the columns a table's ``info["partitioned_by"]`` names (the catalog's logs)."""
        columns = table.info.get("partitioned_by", ())
        return f" PARTITIONED BY ({', '.join(self.preparer.quote(c) for c in columns)})" if columns else ""


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
    identifier_preparer: SparkIdentifierPreparer  # made from ``preparer`` by DefaultDialect.__init__


DIALECT = SparkDialect()


def compile_sql(stmt: Any, dialect: SparkDialect = DIALECT) -> Any:
    """``stmt`` compiled for Spark SQL: ``str()`` is the text, ``.params`` the named parameters."""
    return stmt.compile(dialect=dialect, compile_kwargs={"render_postcompile": True})  # IN lists: one marker each


def run_dialect(renamed: Mapping[str, str]) -> SparkDialect:
    """The dialect of one run's session: its working views under names of their own (``renamed``, which the
    session fills as it creates them).  Spark 4's cache manager uncaches, when a temporary view is replaced or
    dropped, every cached plan that reads a view of that name, whichever session's: two runs sharing the names
    ``veil_base``, ``veil_dim_0``… would free each other's working data (``run_marker`` keeps equal plans apart).

    >>> d = run_dialect({"veil_base": "veil_base_r1"})
    >>> print(compile_sql(sa.select(sa.table("veil_base", sa.column("n")).c.n), d))
    SELECT `veil_base_r1`.`n`
    FROM `veil_base_r1`
    """
    dialect = SparkDialect()
    dialect.identifier_preparer.renamed = renamed
    return dialect


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
    cols = ", ".join(
        f"CAST(NULL AS {types.process(c.type)}) AS {compiler.preparer.quote(c.name)}" for c in table.columns
    )
    never = f":{RUN} IS NULL"  # no row, and a plan of this run's own (``run_marker``)
    return f"CREATE OR REPLACE TEMPORARY VIEW {compiler.preparer.format_table(table)} AS SELECT {cols} WHERE {never}"


@compiles(TinyInteger, "spark")
def _tiny_integer(type_: TinyInteger, compiler: Any, **kw: Any) -> str:
    """Codes up to 127 as Spark's 1-byte ``TINYINT`` (``queries.nodes.code_type``)."""
    return "TINYINT"


@compiles(SameOrBothNull, "spark")
def _same_or_both_null(element: SameOrBothNull, compiler: Any, **kw: Any) -> str:
    """Spark's null-safe equality, which it hashes in a join (``EqualNullSafe``)."""
    return f"({compiler.process(element.a, **kw)} <=> {compiler.process(element.b, **kw)})"


@compiles(RowHash, "spark")
def _row_hash(element: RowHash, compiler: Any, **kw: Any) -> str:
    """The source's fingerprint on Spark: ``xxhash64`` of the columns (NULLs hashed as such)."""
    return str(compiler.process(sa.cast(sa.func.xxhash64(*element.clauses), sa.Numeric(38, 0)), **kw))


# Spark catalog type names (``DataType.simpleString``) that the information_schema names of
# ``veil.queries.source.column_type`` spell differently.
_SOURCE_TYPES = {
    "timestamp_ntz": "timestamp",
    "byte": "tinyint",
    "short": "smallint",
    "long": "bigint",
    "integer": "int",
}


def source_type(spark_type: str) -> str:
    """A Spark column type as ``column_type`` reads it; others (collated strings, arrays, ...) unchanged,
    so Veil names them as types it cannot generalize.

    >>> source_type("timestamp_ntz"), source_type("decimal(10,2)"), source_type("string collate UTF8_LCASE")
    ('timestamp', 'decimal(10,2)', 'string collate utf8_lcase')
    """
    text = spark_type.strip().lower()
    return _SOURCE_TYPES.get(text, text)


RUN = "veil_run"  # the bound parameter the session fills with its run's marker (``SparkSQLSession._sql``)


def run_marker() -> sa.BindParameter[Any]:
    """``:veil_run``, which the session binds to a marker of its own run: working views whose plans hold it are
    this run's own.  Spark's cache manager shares one cache among equal plans across sessions, and replacing or
    dropping a view defined by SQL uncaches every cached plan that contains the view's plan, so two runs over
    one source would otherwise free each other's working data (computed again from the source at every node).
    The optimizer folds the marker away; the cache manager, which compares analyzed plans, does not."""
    return sa.bindparam(RUN, None, type_=sa.Text)


def run_owned(stmt: CreateTableAs) -> CreateTableAs:
    """A working view's query made this run's own plan (``run_marker``): a filter that holds for every row.

    >>> t = sa.table("patients", sa.column("zip"))
    >>> print(compile_sql(run_owned(CreateTableAs(sa.table("veil_base"), sa.select(t.c.zip))).select))
    SELECT `veil_run`.`zip`
    FROM (SELECT `patients`.`zip` AS `zip`
    FROM `patients`) AS `veil_run`
    WHERE :veil_run = :veil_run
    """
    body = stmt.select.subquery(RUN)
    mark = run_marker()
    return CreateTableAs(stmt.table, sa.select(*body.c).where(mark == mark), stmt.temporary)


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
    # every column, listed in the DELETE or not
    select: sa.Select[Any] = sa.select(sa.literal_column("*")).select_from(table)
    if where is None:
        return select.where(sa.false())
    return select.where(sa.not_(sa.func.coalesce(where, sa.false())))


def is_private(table: Any) -> bool:
    """Whether ``table`` is a catalog table marked as the run's own (``queries.ddl.private``)."""
    return isinstance(table, sa.Table) and table.schema is not None and bool(table.info.get(PRIVATE))


def changed_rows(*stmts: sa.Update | sa.Delete) -> sa.Select[Any]:
    """The rows of a table once ``UPDATE`` s and ``DELETE`` s of it ran, in order (``NULL`` conditions change nothing,
    as in SQL): an updated row is told by a flag computed once (``veil_hit_<i>``: a condition's subqueries are
    joined once, not once a set column), a set column becomes ``CASE WHEN <flag> THEN <value> ELSE <column> END``,
    cast to its type; a deleted row is left out.  Each statement after the first reads the rows the ones before it
    left (its table's columns rebased on them), so several changes are one copy of the table.

    >>> t = sa.Table("m", sa.MetaData(), sa.Column("id", sa.BigInteger), sa.Column("st", sa.SmallInteger), schema="c")
    >>> print(compile_sql(changed_rows(sa.update(t).where(t.c.id > 5).values(st=2))))  # doctest: +NORMALIZE_WHITESPACE
    SELECT `veil_hit_0`.`id`, CAST(CASE WHEN `veil_hit_0`.`veil_hit` THEN :param_1 ELSE `veil_hit_0`.`st` END
    AS SMALLINT) AS `st`
    FROM (SELECT `c`.`m`.`id` AS `id`, `c`.`m`.`st` AS `st`, coalesce(`c`.`m`.`id` > :id_1, false) AS `veil_hit`
    FROM `c`.`m`) AS `veil_hit_0`
    >>> print(compile_sql(changed_rows(sa.delete(t).where(t.c.st == 0))))  # doctest: +NORMALIZE_WHITESPACE
    SELECT *
    FROM `c`.`m`
    WHERE NOT coalesce(`c`.`m`.`st` = :st_1, false)
    >>> both = changed_rows(sa.update(t).where(t.c.id > 5).values(st=2), sa.delete(t).where(t.c.st == 2))
    >>> print(compile_sql(both))  # doctest: +NORMALIZE_WHITESPACE
    SELECT `veil_change_0`.`id`, `veil_change_0`.`st`
    FROM (SELECT `veil_hit_0`.`id` AS `id`, CAST(CASE WHEN `veil_hit_0`.`veil_hit` THEN :param_1
    ELSE `veil_hit_0`.`st` END AS SMALLINT) AS `st`
    FROM (SELECT `c`.`m`.`id` AS `id`, `c`.`m`.`st` AS `st`, coalesce(`c`.`m`.`id` > :id_1, false) AS `veil_hit`
    FROM `c`.`m`) AS `veil_hit_0`) AS `veil_change_0`
    WHERE NOT coalesce(`veil_change_0`.`st` = :st_1, false)
    """
    table = stmts[0].table
    assert isinstance(table, sa.Table)
    if any(stmt.table is not table for stmt in stmts):
        raise ValueError("changed_rows: every statement changes one table")
    if len(stmts) == 1 and isinstance(stmts[0], sa.Delete):
        return kept_rows(stmts[0])
    rows: Any = table
    for i, stmt in enumerate(stmts):
        select = _changed(stmt, table, rows, i)
        rows = select.subquery(f"veil_change_{i}")
    return select


def _changed(stmt: sa.Update | sa.Delete, table: sa.Table, rows: Any, step: int) -> sa.Select[Any]:
    """``stmt`` on ``rows``: the table itself, or what earlier statements left of it (``changed_rows``)."""

    def on(expr: Any, source: Any) -> Any:
        return expr if source is table else _rebased(expr, table, source)

    where = stmt.whereclause
    hit = sa.true() if where is None else sa.func.coalesce(on(where, rows), sa.false())
    columns = [rows.c[c.name] for c in table.columns]
    if isinstance(stmt, sa.Delete):
        return sa.select(*columns).select_from(rows).where(sa.not_(hit))
    flagged = sa.select(*columns, hit.label("veil_hit")).select_from(rows).subquery(f"veil_hit_{step}")
    values = {k if isinstance(k, str) else k.key: v for k, v in (getattr(stmt, "_values", None) or {}).items()}
    out: list[Any] = []
    for c in table.columns:
        column = flagged.c[c.name]
        if c.name not in values:
            out.append(column)
            continue
        value = values[c.name]
        value = on(value, flagged) if isinstance(value, sa.ClauseElement) else sa.literal(value)
        out.append(sa.cast(sa.case((flagged.c.veil_hit, value), else_=column), c.type).label(c.name))
    return sa.select(*out).select_from(flagged)


def _rebased(expr: Any, table: sa.Table, rows: Any) -> Any:
    """``expr`` with ``table``'s columns read from ``rows`` (a subquery of the same columns), nested selects too."""

    def swap(element: Any, **_kw: Any) -> Any:
        if isinstance(element, sa.Column) and element.table is table:
            return rows.c[element.name]
        return None

    return visitors.replacement_traverse(expr, {}, swap)


class RefreshTable(Executable, ClauseElement):
    """``REFRESH TABLE <table>``: the session forgets the files it listed for the table (a table renamed to its
    name has others)."""

    inherit_cache = False

    def __init__(self, table: sa.TableClause) -> None:
        self.table = table


@compiles(RefreshTable, "spark")
def _refresh_table(element: RefreshTable, compiler: Any, **kw: Any) -> str:
    return f"REFRESH TABLE {compiler.preparer.format_table(element.table)}"


def rewritten(*stmts: sa.Update | sa.Delete) -> list[Any]:
    """``UPDATE`` s or ``DELETE`` s of a private table (``queries.ddl.private``), in order, as Spark can run them: the
    changed rows (``changed_rows``: one copy for them all) into a table beside it, the table dropped, that one renamed
    to its name, and the files listed for the name forgotten.

    >>> t = private(sa.Table("m", sa.MetaData(), sa.Column("id", sa.BigInteger), schema="c"))
    >>> for s in rewritten(sa.delete(t).where(t.c.id == 1)):
    ...     print(str(compile_sql(s)).split(" AS ")[0].replace(chr(10), " "))
    DROP TABLE IF EXISTS `c`.`m_veil_next`
    CREATE TABLE `c`.`m_veil_next`
    DROP TABLE IF EXISTS `c`.`m`
    ALTER TABLE `c`.`m_veil_next` RENAME TO `c`.`m`
    REFRESH TABLE `c`.`m`
    """
    table = stmts[0].table
    assert isinstance(table, sa.Table)
    return replaced(table, changed_rows(*stmts))


def replaced(table: sa.Table, rows: sa.Select[Any]) -> list[Any]:
    """A private table's rows replaced by ``rows`` (a ``SELECT`` of its columns that may read it) as Spark can: one
    copy into a table beside it, the table dropped, that one renamed to its name, the files listed for the name
    forgotten (``queries.ddl.replaced`` copies twice, the rows written and copied back).

    >>> t = private(sa.Table("m", sa.MetaData(), sa.Column("id", sa.BigInteger), schema="c"))
    >>> for s in replaced(t, sa.select(t.c.id)):
    ...     print(str(compile_sql(s)).replace(chr(10), " "))
    DROP TABLE IF EXISTS `c`.`m_veil_next`
    CREATE TABLE `c`.`m_veil_next` AS SELECT `c`.`m`.`id`  FROM `c`.`m`
    DROP TABLE IF EXISTS `c`.`m`
    ALTER TABLE `c`.`m_veil_next` RENAME TO `c`.`m`
    REFRESH TABLE `c`.`m`
    """
    assert table.schema is not None
    swap = sa.table(swapped(table.name), schema=table.schema)
    return [
        drop_table(swap.name, table.schema),
        CreateTableAs(swap, rows, temporary=False),
        drop_table(table.name, table.schema),
        RenameTable(swap, table),
        RefreshTable(table),
    ]


# --- the autocommit publication's statements (``veil.queries.publication``) as Spark SQL (docs/spark.md) --------


def _properties(compiler: Any, properties: dict[str, str]) -> str:
    """``'key'='value', ...`` as Spark string literals (DDL takes no parameters)."""
    text = [
        f"{compiler.render_literal_value(k, sa.String())}={compiler.render_literal_value(v, sa.String())}"
        for k, v in properties.items()
    ]
    return ", ".join(text)


@compiles(CreateViewAt, "spark")
def _create_view_at(element: CreateViewAt, compiler: Any, **kw: Any) -> str:
    props = _properties(compiler, element.properties)
    body = compiler.process(element.select, literal_binds=True, **kw)
    return f"CREATE OR REPLACE VIEW {compiler.preparer.format_table(element.view)} TBLPROPERTIES ({props}) AS {body}"


@compiles(CreateLock, "spark")
def _create_lock(element: CreateLock, compiler: Any, **kw: Any) -> str:
    props = _properties(compiler, element.properties)
    return f"CREATE TABLE {compiler.preparer.format_table(element.table)} (`owner` STRING) TBLPROPERTIES ({props})"


@compiles(ShowProperties, "spark")
def _show_properties(element: ShowProperties, compiler: Any, **kw: Any) -> str:
    return f"SHOW TBLPROPERTIES {compiler.preparer.format_table(element.table)}"


@compiles(RenameTable, "spark")
def _rename(element: RenameTable, compiler: Any, **kw: Any) -> str:
    return (
        f"ALTER TABLE {compiler.preparer.format_table(element.table)} RENAME TO "
        f"{compiler.preparer.format_table(element.new)}"
    )
