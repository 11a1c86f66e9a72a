"""Veil's catalog in the target database: what ``migrations/`` creates, and applying those migrations.

Tables (schema configurable, default ``veil``): ``releases`` (one row per run: status running → published,
skipped or failed, with config and hash, source fingerprint, chosen node, achieved levels, metrics, rows
read / published / suppressed, output table, error), ``release_nodes`` (the nodes each release evaluated)
and ``hierarchies`` (the hierarchies each release loaded, as ARX-format text).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import sqlalchemy as sa

from engine import queries as q
from engine.backends.base import Session
from engine.errors import BackendError, ConfigError

HEAD = "0002"
STATUSES = ("running", "published", "skipped", "failed")


@dataclass(frozen=True)
class CatalogTables:
    releases: sa.Table
    release_nodes: sa.Table
    hierarchies: sa.Table
    version: sa.Table


def tables(schema: str) -> CatalogTables:
    """The catalog's tables at the head revision (for queries; ``migrations/`` creates them)."""
    md = sa.MetaData(schema=schema)
    releases = sa.Table(
        "releases", md,
        sa.Column("id", sa.String(36), primary_key=True), sa.Column("name", sa.Text), sa.Column("version", sa.Integer),
        sa.Column("status", sa.Text), sa.Column("started_at", sa.DateTime), sa.Column("finished_at", sa.DateTime),
        sa.Column("published_at", sa.DateTime), sa.Column("config", sa.Text), sa.Column("config_hash", sa.Text),
        sa.Column("source_fingerprint", sa.Text), sa.Column("node", sa.Text), sa.Column("achieved", sa.Text),
        sa.Column("metrics", sa.Text), sa.Column("rows_read", sa.BigInteger), sa.Column("rows_published", sa.BigInteger),
        sa.Column("rows_suppressed", sa.BigInteger), sa.Column("output_table", sa.Text), sa.Column("error", sa.Text),
        sa.Column("backend", sa.Text), sa.Column("rows_dropped_null", sa.BigInteger),
    )
    nodes = sa.Table(
        "release_nodes", md,
        sa.Column("release_id", sa.String(36)), sa.Column("node", sa.Text), sa.Column("passed", sa.Boolean),
        sa.Column("suppressed_rows", sa.BigInteger), sa.Column("metric", sa.Float),
    )
    hierarchies = sa.Table(
        "hierarchies", md,
        sa.Column("release_id", sa.String(36)), sa.Column("attribute", sa.Text), sa.Column("height", sa.Integer),
        sa.Column("source", sa.Text), sa.Column("leaves", sa.Integer), sa.Column("definition", sa.Text),
    )
    version = sa.Table("alembic_version", md, sa.Column("version_num", sa.String(32)))
    return CatalogTables(releases, nodes, hierarchies, version)


def migrations_dir() -> Path:
    return Path(str(resources.files("engine.migrations")))


def revision(session: Session, schema: str) -> str | None:
    """The catalog's applied revision, or ``None`` when there is no catalog in ``schema``."""
    names = {r[0] for r in session.rows(q.tables_in(schema), "looking for Veil's catalog")}
    if "alembic_version" not in names:
        return None
    return session.scalar(sa.select(tables(schema).version.c.version_num), "reading the catalog's revision")


def upgrade(session: Session, schema: str, target: str = "head") -> tuple[str | None, str | None]:
    """Apply ``migrations/`` up to ``target`` in ``schema`` (creating it); returns (before, after)."""
    from alembic import command
    from alembic.config import Config as AlembicConfig
    from alembic.util.exc import CommandError

    before = revision(session, schema)
    session.execute(q.CreateSchema(schema), f"creating schema {schema!r}")
    cfg = AlembicConfig()
    cfg.set_main_option("script_location", str(migrations_dir()))
    cfg.attributes["connection"] = session.conn
    cfg.attributes["schema"] = schema
    try:
        command.upgrade(cfg, target)
    except CommandError as exc:
        raise ConfigError(f"cannot migrate the catalog in schema {schema!r}: {exc}") from None
    except sa.exc.SQLAlchemyError as exc:
        session.rollback()
        raise session.fail(exc, f"migrating the catalog in schema {schema!r}") from None
    session.commit()
    return before, revision(session, schema)


def require(session: Session, schema: str) -> CatalogTables:
    """The catalog's tables, or a clear error when ``veil init`` has not run (or is out of date)."""
    found = revision(session, schema)
    if found is None:
        raise BackendError(f"no Veil catalog in schema {schema!r} of {session.backend.display_url}; "
                           "run `veil init --config ...` first")
    if found != HEAD:
        raise BackendError(f"the Veil catalog in schema {schema!r} is at revision {found}, this Veil needs "
                           f"{HEAD}; run `veil init --config ...` to upgrade it")
    return tables(schema)
