"""Veil's catalog in the target database: what ``migrations/`` creates, and applying those migrations.

Tables (schema configurable, default ``veil``): ``releases`` (one row per run: status running → published,
skipped or failed, with config and hash, source fingerprint, chosen node, achieved levels, metrics, rows
read / published / suppressed, output table, error), ``release_nodes`` (the nodes each release evaluated)
and ``hierarchies`` (the hierarchies each release loaded, as ARX-format text).  Revision 0003 adds
``publications`` (the pointer to each release's current version, read by the published views:
docs/publication.md) and the series ledger ``series_*`` (what every version published, per block, so that
a new version can be compared with every earlier one even after its rows expired: docs/series.md).  Revision
0004 adds ``publication_dimensions``: per version, the hierarchy of each column it published as a dimension
table (content hash, height, rows table: docs/publication.md §1); revision 0006 the level each version shows
(contents recorded without one are redacted by the next release: ``veil.release.legacy_dimensions``); revision
0007 ``series_state``, the current cohort series of each release (docs/series.md), and clears the analysts'
``rows_deferred``; revision 0008 keeps each hierarchy's ARX text once (``hierarchies.digest``); revision 0009 changes Spark's
catalog alone (its logs partitioned by day and compacted: ``veil.queries.appendonly``).

``veil init`` works with exactly the documented grants: a schema that exists is never created again (``CREATE
SCHEMA IF NOT EXISTS`` alone needs CREATE on the database in PostgreSQL), two runs creating one schema at once
both succeed, and two ``veil init`` at once serialize on an advisory lock.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from veil import queries as q
from veil.backends.base import Session
from veil.errors import BackendError, BusyError, ConfigError, VeilError
from veil.queries import catalog as qc
from veil.queries.catalog import CatalogTables, Status, tables  # the tables' definitions and statements: queries
from veil.queries.ddl import create_table

__all__ = [
    "HEAD",
    "OPEN",
    "STATUSES",
    "CatalogTables",
    "Status",
    "advisory",
    "ensure_schema",
    "lock_key",
    "migrations_dir",
    "require",
    "revision",
    "tables",
    "upgrade",
]

HEAD = "0009"
# a run: running → published | skipped | failed; a published version whose rows were deleted: expired;
# a ``veil rollback``: rollback (its version is the one repointed to)
STATUSES = tuple(Status)
OPEN = 2**31 - 1  # series_cells.last_version of content still current


def migrations_dir() -> Path:
    return Path(str(resources.files("veil.migrations")))


def revision(session: Session, schema: str) -> str | None:
    """The catalog's applied revision, or ``None`` when there is no catalog in ``schema``."""
    if not session.has_relation(schema, "alembic_version"):
        return None
    return session.scalar(qc.revision(tables(schema).version), "reading the catalog's revision")


def upgrade(session: Session, schema: str, target: str = "head") -> tuple[str | None, str | None]:
    """Apply ``migrations/`` up to ``target`` in ``schema`` (creating it); returns (before, after)."""
    ensure_schema(session, schema)
    if not session.backend.migrations:
        return _create(session, schema)
    with _init_lock(session, schema):
        return _migrate(session, schema, target)


def _create(session: Session, schema: str) -> tuple[str | None, str | None]:
    """Where Alembic cannot run (Spark): the head revision's tables created from ``tables(schema)``, each
    missing one with one ``CREATE TABLE``; every one but the revision row as an append-only log behind a view
    (``queries.appendonly``: the backend has no ``UPDATE``, docs/spark.md).  The
    revision row is written last, so an interrupted ``veil init`` is simply run again.  A catalog at an older
    revision is refused (there are no migrations to apply here)."""
    from veil.queries import appendonly

    before = revision(session, schema)
    if before is not None:
        if before != HEAD:
            raise ConfigError(
                f"the Veil catalog in schema {schema!r} is at revision {before} and "
                f"{session.backend.name} has no migrations to {HEAD}: export its history and "
                f"drop the schema, then run `veil init` again"
            )
        return before, before
    found = session.relations(schema)
    cat = tables(schema)
    fresh = appendonly.Layout.fresh(appendonly.today())
    for table in cat.all():
        if not appendonly.stored_as_log(table):
            if table.name not in found:
                session.execute(create_table(table, if_not_exists=True), f"creating {schema}.{table.name}")
            continue
        log = appendonly.log_table(table)
        if log.name not in found:
            session.execute(create_table(log, if_not_exists=True), f"creating {schema}.{log.name}")
        session.execute(appendonly.view(table, fresh), f"creating view {schema}.{table.name}")
    session.execute(qc.record_revision(cat.version, HEAD), "recording the catalog's revision")
    return None, revision(session, schema)


def _migrate(session: Session, schema: str, target: str) -> tuple[str | None, str | None]:
    from alembic import command
    from alembic.config import Config as AlembicConfig
    from alembic.util.exc import CommandError

    before = revision(session, schema)
    cfg = AlembicConfig()
    cfg.set_main_option("script_location", str(migrations_dir()))
    cfg.attributes["connection"] = session.conn
    cfg.attributes["schema"] = schema
    cfg.attributes["version_indexes"] = session.backend.version_indexes  # migrations/versions/0005
    try:
        command.upgrade(cfg, target)
    except CommandError as exc:
        raise ConfigError(f"cannot migrate the catalog in schema {schema!r}: {exc}") from None
    except sa.exc.SQLAlchemyError as exc:
        session.rollback()
        raise session.fail(exc, f"migrating the catalog in schema {schema!r}") from None
    session.commit()
    return before, revision(session, schema)


def ensure_schema(session: Session, schema: str) -> None:
    """Create ``schema`` unless it exists (checked first: with only USAGE and CREATE on a pre-created schema,
    ``CREATE SCHEMA IF NOT EXISTS`` is refused in PostgreSQL).  Runs in its own short transaction; when another
    run creates the schema at the same moment, its error is ignored once the schema is there."""
    session.commit()
    if session.has_schema(schema):
        session.commit()
        return
    try:
        session.execute(q.CreateSchema(schema), f"creating schema {schema!r}")
        session.commit()
    except BackendError:
        session.rollback()
        if not session.has_schema(schema):
            raise
        session.commit()


def lock_key(*parts: str) -> int:
    """A PostgreSQL advisory lock key for ``parts`` (stable across processes)."""
    return int.from_bytes(hashlib.sha256(":".join(parts).encode()).digest()[:8], "big", signed=True)


@contextmanager
def advisory(session: Session, key: int, wait: float | None, busy: str) -> Iterator[None]:
    """Hold PostgreSQL advisory lock ``key`` (session level) while the block runs: wait for it (``wait`` None),
    or try for ``wait`` seconds and raise ``BusyError(busy)``.  DuckDB: nothing to do, its file lock already
    lets one process in."""
    if not session.backend.advisory_locks:
        yield
        return
    if wait is None:
        session.execute(q.advisory_lock(key), busy)
    else:
        deadline = time.monotonic() + wait
        while not session.scalar(q.try_advisory_lock(key), "taking the lock"):
            if time.monotonic() >= deadline:
                raise BusyError(busy)
            time.sleep(0.5)
    session.commit()
    try:
        yield
    finally:
        try:
            session.rollback()
            session.scalar(q.advisory_unlock(key), "releasing the lock")
            session.commit()
        except VeilError:
            pass


def _init_lock(session: Session, schema: str) -> Any:
    """Two ``veil init`` on one catalog at once: the second waits for the first."""
    return advisory(session, lock_key("veil-init", schema), None, "waiting for another `veil init`")


def require(session: Session, schema: str) -> CatalogTables:
    """The catalog's tables, or a clear error when ``veil init`` has not run (or is out of date)."""
    found = revision(session, schema)
    if found is None:
        raise BackendError(
            f"no Veil catalog in schema {schema!r} of {session.backend.display_url}; run `veil init --config ...` first"
        )
    if found != HEAD:
        raise BackendError(
            f"the Veil catalog in schema {schema!r} is at revision {found}, this Veil needs "
            f"{HEAD}; run `veil init --config ...` to upgrade it"
        )
    return tables(schema)
