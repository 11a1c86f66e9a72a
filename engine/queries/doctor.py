"""What ``veil doctor`` asks PostgreSQL about the role Veil connects as: who it is, and whether it may use and
create in the schemas a release writes to, read the source table and grant what ``grant_select_to`` asks for.
Read-only: ``has_*_privilege`` answers for the role as it stands (direct grants, inherited roles, PUBLIC).

>>> sorted(schema_privileges("published").selected_columns.keys())
['create', 'exists', 'grantable', 'usage']
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

_NAMESPACES = sa.table("pg_namespace", sa.column("nspname"), schema="pg_catalog")
_ROLES = sa.table("pg_roles", sa.column("rolname"), sa.column("rolsuper"), schema="pg_catalog")


def whoami() -> sa.Select[Any]:
    """One row: the current user, whether it is a superuser, whether it may create schemas and temporary tables
    in the database, and the database's name."""
    return sa.select(
        sa.func.current_user(),
        _ROLES.c.rolsuper,
        sa.func.has_database_privilege(sa.func.current_database(), "CREATE"),
        sa.func.has_database_privilege(sa.func.current_database(), "TEMPORARY"),
        sa.func.current_database(),
    ).where(_ROLES.c.rolname == sa.func.current_user())


def schema_privileges(schema: str) -> sa.Select[Any]:
    """One row: whether ``schema`` exists and, if so, whether the current user holds USAGE, CREATE, and USAGE
    with the grant option on it (an owner holds all three).  The privileges are asked only of a schema that
    exists (``has_schema_privilege`` fails on a missing one)."""
    exists = sa.func.count() > 0
    name = sa.literal(schema)

    def held(privilege: str) -> Any:
        return sa.func.has_schema_privilege(sa.func.max(_NAMESPACES.c.nspname), privilege)

    return (
        sa.select(
            exists.label("exists"),
            held("USAGE").label("usage"),
            held("CREATE").label("create"),
            held("USAGE WITH GRANT OPTION").label("grantable"),
        )
        .select_from(_NAMESPACES)
        .where(_NAMESPACES.c.nspname == name)
    )


def table_select(schema: str | None, table: str) -> sa.Select[Any]:
    """One row: whether the current user may SELECT from ``schema.table`` (a table that exists)."""
    qualified = sa.func.format("%I.%I", schema, table) if schema else sa.func.format("%I", table)
    return sa.select(sa.func.has_table_privilege(qualified, "SELECT"))


def roles_found(roles: list[str]) -> sa.Select[Any]:
    """The names among ``roles`` that exist."""
    return sa.select(_ROLES.c.rolname).where(_ROLES.c.rolname.in_(roles))
