"""DDL and other statements SQLAlchemy Core lacks, compiled per dialect (identifiers quoted by the dialect's
preparer, never by hand)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ClauseElement, Executable


class CreateTableAs(Executable, ClauseElement):
    """``CREATE [TEMPORARY] TABLE <table> AS <select>``; a ``working`` table outside the temporary schema is
    ``UNLOGGED`` on PostgreSQL (no WAL: a run's scratch, dropped when it ends).

    >>> from sqlalchemy.dialects import postgresql
    >>> stmt = CreateTableAs(sa.table("t", schema="w"), sa.select(sa.literal_column("1")), False, working=True)
    >>> print(stmt.compile(dialect=postgresql.dialect()), "|", stmt.compile())
    CREATE UNLOGGED TABLE w.t AS SELECT 1 | CREATE TABLE w.t AS SELECT 1
    """

    inherit_cache = False

    def __init__(
        self, table: sa.TableClause, select: sa.Select[*tuple[Any, ...]], temporary: bool = True, working: bool = False
    ) -> None:
        self.table, self.select, self.temporary, self.working = table, select, temporary, working


def _create_as(element: CreateTableAs, compiler: Any, kind: str, **kw: Any) -> str:
    body = compiler.process(element.select, **kw)
    return f"CREATE {kind}TABLE {compiler.preparer.format_table(element.table)} AS {body}"


@compiles(CreateTableAs)
def _create_table_as(element: CreateTableAs, compiler: Any, **kw: Any) -> str:
    return _create_as(element, compiler, "TEMPORARY " if element.temporary else "", **kw)


@compiles(CreateTableAs, "postgresql")
def _create_table_as_postgresql(element: CreateTableAs, compiler: Any, **kw: Any) -> str:
    kind = "TEMPORARY " if element.temporary else "UNLOGGED " if element.working else ""
    return _create_as(element, compiler, kind, **kw)


class CreateView(Executable, ClauseElement):
    """``CREATE OR REPLACE VIEW <view> AS <select>``."""

    inherit_cache = False

    def __init__(self, view: sa.TableClause, select: sa.Select[Any]) -> None:
        self.view, self.select = view, select


@compiles(CreateView)
def _create_view(element: CreateView, compiler: Any, **kw: Any) -> str:
    body = compiler.process(element.select, literal_binds=True, **kw)
    return f"CREATE OR REPLACE VIEW {compiler.preparer.format_table(element.view)} AS {body}"


class DropObject(Executable, ClauseElement):
    """``DROP TABLE|VIEW IF EXISTS <name>``."""

    inherit_cache = False

    def __init__(self, kind: str, table: sa.TableClause) -> None:
        assert kind in ("TABLE", "VIEW")
        self.kind, self.table = kind, table


@compiles(DropObject)
def _drop(element: DropObject, compiler: Any, **kw: Any) -> str:
    return f"DROP {element.kind} IF EXISTS {compiler.preparer.format_table(element.table)}"


class Analyze(Executable, ClauseElement):
    """``ANALYZE <table>``: statistics for the planner (PostgreSQL; autovacuum never visits temporary tables)."""

    inherit_cache = False

    def __init__(self, table: sa.TableClause) -> None:
        self.table = table


@compiles(Analyze)
def _analyze(element: Analyze, compiler: Any, **kw: Any) -> str:
    return f"ANALYZE {compiler.preparer.format_table(element.table)}"


class CreateSchema(Executable, ClauseElement):
    """``CREATE SCHEMA IF NOT EXISTS <schema>``."""

    inherit_cache = False

    def __init__(self, schema: str) -> None:
        self.schema = schema


@compiles(CreateSchema)
def _create_schema(element: CreateSchema, compiler: Any, **kw: Any) -> str:
    return f"CREATE SCHEMA IF NOT EXISTS {compiler.preparer.format_schema(element.schema)}"


STALL_ROWS_PER_SECOND = 200_000_000  # DuckDB hashes about this many integers a second (one core, 2025)


class Stall(Executable, ClauseElement):
    """A statement that keeps the database busy for about ``seconds`` (the test failpoint ``stall:<step>``:
    a signal must land while the driver, not Python, is running): ``pg_sleep`` on PostgreSQL, a sum of hashes
    elsewhere (DuckDB has no sleep).

    >>> from sqlalchemy.dialects import postgresql
    >>> print(Stall(2).compile(dialect=postgresql.dialect()), "|", Stall(2).compile())
    SELECT pg_sleep(2.0) | SELECT sum(hash(range)) FROM range(400000000)
    """

    inherit_cache = False

    def __init__(self, seconds: float) -> None:
        self.seconds = float(seconds)


@compiles(Stall)
def _stall(element: Stall, compiler: Any, **kw: Any) -> str:
    return f"SELECT sum(hash(range)) FROM range({int(element.seconds * STALL_ROWS_PER_SECOND)})"


@compiles(Stall, "postgresql")
def _stall_postgresql(element: Stall, compiler: Any, **kw: Any) -> str:
    return f"SELECT pg_sleep({element.seconds!r})"


class DropSchema(Executable, ClauseElement):
    """``DROP SCHEMA IF EXISTS <schema> CASCADE`` (PostgreSQL: a run's work schema with its tables).

    >>> print(DropSchema("veil_work_1_2").compile())
    DROP SCHEMA IF EXISTS veil_work_1_2 CASCADE
    """

    inherit_cache = False

    def __init__(self, schema: str) -> None:
        self.schema = schema


@compiles(DropSchema)
def _drop_schema(element: DropSchema, compiler: Any, **kw: Any) -> str:
    return f"DROP SCHEMA IF EXISTS {compiler.preparer.format_schema(element.schema)} CASCADE"


def owned_schemas(prefix: str) -> sa.Select[Any]:
    """PostgreSQL: the schemas whose name starts with ``prefix`` (bound, ``LIKE`` wildcards escaped) that the
    current user owns."""
    ns = sa.table("pg_namespace", sa.column("nspname"), sa.column("nspowner"), schema="pg_catalog")
    return sa.select(ns.c.nspname).where(
        ns.c.nspname.startswith(prefix, autoescape=True),
        sa.func.pg_get_userbyid(ns.c.nspowner) == sa.func.current_user(),
    )


def backend_sessions(own: bool = False) -> sa.Select[Any]:
    """PostgreSQL: ``(pid, started)`` of the server's sessions (``own``: this one's), ``started`` its start in
    whole seconds since the epoch: a session is known by both (a pid is reused)."""
    act = sa.table("pg_stat_activity", sa.column("pid"), sa.column("backend_start"), schema="pg_catalog")
    started = sa.cast(sa.func.floor(sa.extract("epoch", act.c.backend_start)), sa.BigInteger)
    stmt = sa.select(act.c.pid, started.label("started")).where(act.c.backend_start.is_not(None))
    return stmt.where(act.c.pid == sa.func.pg_backend_pid()) if own else stmt


class Attach(Executable, ClauseElement):
    """DuckDB: ``ATTACH '<path>' AS <alias>`` (a database file of working tables, ``veil.backends.scratch``), or
    with no ``path`` ``DETACH <alias>``; the path is a literal rendered by the dialect.

    >>> from duckdb_engine import Dialect
    >>> print(Attach("veil_work_1", "/tmp/it's.db").compile(dialect=Dialect()), Attach("veil_work_1").compile())
    ATTACH '/tmp/it''s.db' AS veil_work_1 DETACH veil_work_1
    """

    inherit_cache = False

    def __init__(self, alias: str, path: str | None = None) -> None:
        self.alias, self.path = alias, path


@compiles(Attach)
def _attach(element: Attach, compiler: Any, **kw: Any) -> str:
    alias = compiler.preparer.quote(element.alias)
    if element.path is None:
        return f"DETACH {alias}"
    return f"ATTACH {compiler.render_literal_value(element.path, sa.String())} AS {alias}"


class SetSearchPath(Executable, ClauseElement):
    """DuckDB: ``SET search_path = '<schemas>'`` (where unqualified table names are looked up after the
    temporary ones), the value a literal rendered by the dialect."""

    inherit_cache = False

    def __init__(self, schemas: Sequence[str]) -> None:
        self.schemas = tuple(schemas)


@compiles(SetSearchPath)
def _set_search_path(element: SetSearchPath, compiler: Any, **kw: Any) -> str:
    return f"SET search_path = {compiler.render_literal_value(','.join(element.schemas), sa.String())}"


class SetOption(Executable, ClauseElement):
    """DuckDB: ``SET <name> = <value>`` for this connection (``name`` a setting Veil names, the value a literal
    rendered by the dialect).

    >>> from duckdb_engine import Dialect
    >>> print(SetOption("enable_progress_bar", False).compile(dialect=Dialect()))
    SET enable_progress_bar = false
    """

    inherit_cache = False

    def __init__(self, name: str, value: bool | int | str) -> None:
        if not name.isidentifier():
            raise ValueError(f"not a setting's name: {name!r}")
        self.name, self.value = name, value


@compiles(SetOption)
def _set_option(element: SetOption, compiler: Any, **kw: Any) -> str:
    kind = (
        sa.Boolean()
        if isinstance(element.value, bool)
        else sa.Integer()
        if isinstance(element.value, int)
        else sa.String()
    )
    return f"SET {element.name} = {compiler.render_literal_value(element.value, kind)}"


def current_setting(name: str) -> sa.Select[Any]:
    """DuckDB and PostgreSQL: a setting's current value as text (``name`` bound)."""
    return sa.select(sa.func.current_setting(name))


def copy_from_stdin(table: sa.TableClause, columns: Sequence[str], dialect: sa.Dialect) -> str:
    """PostgreSQL ``COPY <table> (<columns>) FROM STDIN`` for bulk loads, quoted by the dialect."""
    prep = dialect.identifier_preparer
    cols = ", ".join(prep.quote(c) for c in columns)
    return f"COPY {prep.format_table(table)} ({cols}) FROM STDIN"


class Grant(Executable, ClauseElement):
    """``GRANT USAGE ON SCHEMA s TO r`` / ``GRANT SELECT ON s.v TO r`` (PostgreSQL)."""

    inherit_cache = False

    def __init__(self, role: str, schema: str, view: str | None = None) -> None:
        self.role, self.schema, self.view = role, schema, view


@compiles(Grant)
def _grant(element: Grant, compiler: Any, **kw: Any) -> str:
    prep = compiler.preparer
    if element.view is None:
        return f"GRANT USAGE ON SCHEMA {prep.format_schema(element.schema)} TO {prep.quote(element.role)}"
    return (
        f"GRANT SELECT ON {prep.format_table(sa.table(element.view, schema=element.schema))} "
        f"TO {prep.quote(element.role)}"
    )


def count_rows(table: sa.TableClause) -> sa.Select[Any]:
    return sa.select(sa.func.count()).select_from(table)


PRIVATE = "veil.private"  # ``Table.info`` key: the run's own table until its version commits (``private``)


def private(table: sa.Table) -> sa.Table:
    """``table`` marked as the run's own until its version commits — a cohort series' members generation
    (``veil.release.memberstore``): where statements commit on their own (Spark) the session may apply an
    ``UPDATE`` or ``DELETE`` of it as a copy swapped in (``veil.queries.spark.rewritten``), which is not atomic, so
    no other table is marked.  Backends with transactions ignore the mark.

    >>> private(sa.Table("m", sa.MetaData())).info[PRIVATE]
    True
    """
    table.info[PRIVATE] = True
    return table


def swapped(name: str) -> str:
    """Where a private table's changed rows are written before they replace it (``veil.queries.spark.rewritten``).

    >>> swapped("m")
    'm_veil_next'
    """
    return f"{name}_veil_next"


def drop_table(name: str, schema: str | None = None) -> DropObject:
    return DropObject("TABLE", sa.table(name, schema=schema))


def replaced(table: sa.Table, rows: sa.Select[Any], scratch: sa.Table) -> list[Any]:
    """``table``'s rows replaced by ``rows`` (a ``SELECT`` of its columns, in order, that may read ``table``): written
    into ``scratch`` (a table of the same columns), the table made again and the rows copied back — a copy, not an
    ``UPDATE``, where the rows are the whole table (DuckDB keeps an update's new values in memory).  Where a private
    table is changed as a copy swapped in, the copy is written once (``veil.queries.spark.replaced``).

    >>> t = sa.Table("m", sa.MetaData(), sa.Column("id", sa.BigInteger), schema="c")
    >>> s = sa.Table("m_moving", sa.MetaData(), sa.Column("id", sa.BigInteger), schema="c")
    >>> for stmt in replaced(t, sa.select(t.c.id + 1), s):
    ...     print(str(stmt).strip().replace(chr(10), " "))
    DROP TABLE IF EXISTS c.m_moving
    CREATE TABLE c.m_moving (  id BIGINT )
    INSERT INTO c.m_moving (id) SELECT c.m.id + :id_1 AS anon_1  FROM c.m
    DROP TABLE IF EXISTS c.m
    CREATE TABLE c.m (  id BIGINT )
    INSERT INTO c.m (id) SELECT c.m_moving.id  FROM c.m_moving
    DROP TABLE IF EXISTS c.m_moving
    """
    names = [c.name for c in table.c]
    return [
        drop_table(scratch.name, scratch.schema),
        create_table(scratch),
        scratch.insert().from_select(names, rows),
        drop_table(table.name, table.schema),
        create_table(table),
        table.insert().from_select(names, sa.select(*(scratch.c[n] for n in names))),
        drop_table(scratch.name, scratch.schema),
    ]


def working_table(table: sa.TableClause, select: sa.Select[*tuple[Any, ...]], into: str | None = None) -> CreateTableAs:
    """A working table: temporary, or in the scratch database ``into`` (DuckDB, ``veil.backends.scratch``) or the
    run's work schema ``into`` (PostgreSQL, unlogged: ``veil.backends.postgres``), found by name through the
    session's search path."""
    if into is None:
        return CreateTableAs(table, select)
    return CreateTableAs(sa.table(table.name, schema=into), select, temporary=False, working=True)


def create_table_as(schema: str, name: str, select: sa.Select[Any]) -> CreateTableAs:
    return CreateTableAs(sa.table(name, schema=schema), select, temporary=False)


def session_settings(settings: dict[str, str]) -> sa.Select[Any]:
    """PostgreSQL: set run-time parameters for the rest of the session, names and values bound.

    >>> print(session_settings({"work_mem": "256MB"}))
    SELECT set_config(:set_config_2, :set_config_3, :set_config_4) AS set_config_1
    """
    return sa.select(*(sa.func.set_config(name, value, False) for name, value in settings.items()))


def create_table(table: sa.Table, if_not_exists: bool = False) -> sa.schema.CreateTable:
    """``CREATE [TEMPORARY] TABLE [IF NOT EXISTS] <table> (...)`` for a table defined by a builder."""
    return sa.schema.CreateTable(table, if_not_exists=if_not_exists)


def create_index(index: sa.Index) -> sa.schema.CreateIndex:
    return sa.schema.CreateIndex(index)


def drop_temporary(table: sa.Table) -> sa.schema.DropTable:
    """``DROP TABLE <table>`` of a temporary table this run created (no ``IF EXISTS``: it must be there)."""
    return sa.schema.DropTable(table)


def create_view(schema: str | None, name: str, select: sa.Select[Any]) -> CreateView:
    """``CREATE OR REPLACE VIEW <schema>.<name> AS <select>``."""
    return CreateView(sa.table(name, schema=schema), select)


def drop_view(name: str, schema: str | None = None) -> DropObject:
    return DropObject("VIEW", sa.table(name, schema=schema))


def relation(name: str, schema: str | None = None, *columns: str) -> sa.TableClause:
    """A table or view known by name (a working table, a published object), with the ``columns`` a statement
    names: what a caller hands back to a builder or to the backend (``Session.analyze``)."""
    return sa.table(name, *(sa.column(c) for c in columns), schema=schema)
