"""The catalog's tables and the statements that read and write them (``veil.catalog`` applies the migrations;
``veil.release`` runs these).  A run is one row of ``releases``: ``running`` → ``published``, ``skipped`` or
``failed``; a published version whose rows were deleted is ``expired``; a ``veil rollback`` is a row of its own
(``rollback``).  ``Status`` names them; statements bind the stored text (``Status.X.value``), so no driver ever
sees the enum.

>>> r = tables("veil").releases
>>> print(published_versions(r, "census"))
SELECT veil.releases.version
FROM veil.releases
WHERE veil.releases.name = :name_1 AND veil.releases.status = :status_1 ORDER BY veil.releases.version DESC
>>> sorted(published_versions(r, "census").compile().params.values())
['census', 'published']
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa


class Status(enum.StrEnum):
    """The ``status`` of a ``releases`` row, as stored (the values are the catalog's text)."""

    RUNNING = "running"
    PUBLISHED = "published"
    SKIPPED = "skipped"
    FAILED = "failed"
    EXPIRED = "expired"
    ROLLBACK = "rollback"


KEPT = (Status.PUBLISHED.value, Status.EXPIRED.value)  # the versions a release ever published, in the history


@dataclass(frozen=True)
class CatalogTables:
    releases: sa.Table
    release_nodes: sa.Table
    hierarchies: sa.Table
    version: sa.Table
    publications: sa.Table
    series_versions: sa.Table
    series_hierarchies: sa.Table
    series_blocks: sa.Table
    series_values: sa.Table
    series_cells: sa.Table
    publication_dimensions: sa.Table
    series_state: sa.Table

    def all(self) -> list[sa.Table]:
        """Every table, in the order of the fields."""
        return [getattr(self, f) for f in self.__dataclass_fields__]


def tables(schema: str) -> CatalogTables:
    """The catalog's tables at the head revision (for queries; ``migrations/`` creates them)."""
    md = sa.MetaData(schema=schema)
    return CatalogTables(  # made in the order of the fields (the order ``md`` holds them in)
        releases=_releases(md),
        release_nodes=_release_nodes(md),
        hierarchies=_hierarchies(md),
        version=_alembic_version(md),
        publications=_publications(md),
        series_versions=_series_versions(md),
        series_hierarchies=_series_hierarchies(md),
        series_blocks=_series_blocks(md),
        series_values=_series_values(md),
        series_cells=_series_cells(md),
        publication_dimensions=_publication_dimensions(md),
        series_state=_series_state(md),
    )


def _releases(md: sa.MetaData) -> sa.Table:
    """One row per run (and per ``veil rollback``): its status, configuration, node, metrics and row counts."""
    return sa.Table(
        "releases",
        md,
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("name", sa.Text),
        sa.Column("version", sa.Integer),
        sa.Column("status", sa.Text),
        sa.Column("started_at", sa.DateTime),
        sa.Column("finished_at", sa.DateTime),
        sa.Column("published_at", sa.DateTime),
        sa.Column("config", sa.Text),
        sa.Column("config_hash", sa.Text),
        sa.Column("source_fingerprint", sa.Text),
        sa.Column("node", sa.Text),
        sa.Column("achieved", sa.Text),
        sa.Column("metrics", sa.Text),
        sa.Column("rows_read", sa.BigInteger),
        sa.Column("rows_published", sa.BigInteger),
        sa.Column("rows_suppressed", sa.BigInteger),
        sa.Column("output_table", sa.Text),
        sa.Column("error", sa.Text),
        sa.Column("backend", sa.Text),
        sa.Column("rows_dropped_null", sa.BigInteger),
        sa.Column("rows_deferred", sa.BigInteger),
        sa.Column("series", sa.Text),
        sa.Column("expired_at", sa.DateTime),
    )


def _release_nodes(md: sa.MetaData) -> sa.Table:
    """Each node a run evaluated: passed, suppressed rows, metric."""
    return sa.Table(
        "release_nodes",
        md,
        sa.Column("release_id", sa.String(36)),
        sa.Column("node", sa.Text),
        sa.Column("passed", sa.Boolean),
        sa.Column("suppressed_rows", sa.BigInteger),
        sa.Column("metric", sa.Float),
    )


def _hierarchies(md: sa.MetaData) -> sa.Table:
    """Each hierarchy a run loaded; its ARX text (``definition``) once per distinct text (``digest``, its
    SHA-256): a later row with the same digest has none (revision 0008)."""
    return sa.Table(
        "hierarchies",
        md,
        sa.Column("release_id", sa.String(36)),
        sa.Column("attribute", sa.Text),
        sa.Column("height", sa.Integer),
        sa.Column("source", sa.Text),
        sa.Column("leaves", sa.Integer),
        sa.Column("definition", sa.Text),
        sa.Column("digest", sa.Text),
    )


def _alembic_version(md: sa.MetaData) -> sa.Table:
    """Alembic's record of the applied revision."""
    return sa.Table("alembic_version", md, sa.Column("version_num", sa.String(32)))


def _publications(md: sa.MetaData) -> sa.Table:
    """Each release's current version."""
    return sa.Table(
        "publications",
        md,
        sa.Column("name", sa.Text, primary_key=True),
        sa.Column("schema", sa.Text),
        sa.Column("current_version", sa.Integer),
        sa.Column("updated_at", sa.DateTime),
    )


def _series_versions(md: sa.MetaData) -> sa.Table:
    """The series ledger, per version: node, quasi-identifiers, published columns, hierarchy digests, policy."""
    return sa.Table(
        "series_versions",
        md,
        sa.Column("name", sa.Text),
        sa.Column("version", sa.Integer),
        sa.Column("release_id", sa.String(36)),
        sa.Column("node", sa.Text),
        sa.Column("attributes", sa.Text),
        sa.Column("columns", sa.Text),
        sa.Column("hierarchies", sa.Text),
        sa.Column("policy", sa.Text),
        sa.Column("published_at", sa.DateTime),
    )


def _series_hierarchies(md: sa.MetaData) -> sa.Table:
    """The series ledger: each distinct hierarchy once (leaves and labels per level, as published text)."""
    return sa.Table(
        "series_hierarchies",
        md,
        sa.Column("name", sa.Text),
        sa.Column("digest", sa.Text),
        sa.Column("attribute", sa.Text),
        sa.Column("definition", sa.Text),
    )


def _series_blocks(md: sa.MetaData) -> sa.Table:
    """The series ledger: block labels (canonical text), each stored once with an id."""
    return sa.Table(
        "series_blocks", md, sa.Column("name", sa.Text), sa.Column("id", sa.BigInteger), sa.Column("labels", sa.Text)
    )


def _series_values(md: sa.MetaData) -> sa.Table:
    """The series ledger: value tuples (canonical text), each stored once with an id."""
    return sa.Table(
        "series_values", md, sa.Column("name", sa.Text), sa.Column("id", sa.BigInteger), sa.Column("value", sa.Text)
    )


def _series_cells(md: sa.MetaData) -> sa.Table:
    """The series ledger: (block, value, rows) from ``first_version`` to ``last_version``."""
    return sa.Table(
        "series_cells",
        md,
        sa.Column("name", sa.Text),
        sa.Column("block_id", sa.BigInteger),
        sa.Column("value_id", sa.BigInteger),
        sa.Column("count", sa.BigInteger),
        sa.Column("first_version", sa.Integer),
        sa.Column("last_version", sa.Integer),
    )


def _publication_dimensions(md: sa.MetaData) -> sa.Table:
    """Which published hierarchy content (by digest) each version used, per attribute."""
    return sa.Table(
        "publication_dimensions",
        md,
        sa.Column("name", sa.Text, primary_key=True),
        sa.Column("version", sa.Integer, primary_key=True),
        sa.Column("attribute", sa.Text, primary_key=True),
        sa.Column("role", sa.Text),
        sa.Column("digest", sa.Text),
        sa.Column("height", sa.Integer),
        sa.Column("dim_table", sa.Text),
        sa.Column("level", sa.Integer),
    )


def _series_state(md: sa.MetaData) -> sa.Table:
    """A series' state: the node, the digest of what it keeps, the secret, the next cohort id, the smallest batch."""
    return sa.Table(
        "series_state",
        md,
        sa.Column("name", sa.Text, primary_key=True),
        sa.Column("series", sa.Integer),
        sa.Column("started_version", sa.Integer),
        sa.Column("node", sa.Text),
        sa.Column("attributes", sa.Text),
        sa.Column("columns", sa.Text),
        sa.Column("shape", sa.Text),
        sa.Column("members", sa.Text),
        sa.Column("batch", sa.Integer),
        sa.Column("next_cohort", sa.BigInteger),
        sa.Column("secret", sa.Text),
    )


# --- the revision (``alembic_version``) --------------------------------------------------------------------------


def stored_hierarchies(hierarchies: sa.Table, digests: Sequence[str]) -> sa.Select[Any]:
    """Which of ``digests`` the catalog already holds the ARX text of.

    >>> print(stored_hierarchies(tables("veil").hierarchies, ["ab"]))
    SELECT DISTINCT veil.hierarchies.digest
    FROM veil.hierarchies
    WHERE veil.hierarchies.digest IN (__[POSTCOMPILE_digest_1]) AND veil.hierarchies.definition IS NOT NULL
    """
    h = hierarchies.c
    return sa.select(h.digest).distinct().where(h.digest.in_(list(digests)), h.definition.is_not(None))


def forget_hierarchy_texts(hierarchies: sa.Table, releases: sa.Table) -> sa.Update:
    """The ARX texts of expired versions' hierarchies that no published version uses, cleared: the catalog keeps
    a text while a version it describes can be read.  A hierarchy built from the source's values (``mask``,
    ``intervals``) changes whenever they do, so its texts would otherwise pile up by one a night (220 KB each for
    the census's ZIP codes).  A digest that returns is written again (``stored_hierarchies``).

    >>> t = tables("veil")
    >>> print(forget_hierarchy_texts(t.hierarchies, t.releases))  # doctest: +NORMALIZE_WHITESPACE
    UPDATE veil.hierarchies SET definition=:definition
    WHERE veil.hierarchies.definition IS NOT NULL AND veil.hierarchies.release_id IN
    (SELECT veil.releases.id FROM veil.releases WHERE veil.releases.status = :status_1)
    AND (veil.hierarchies.digest NOT IN (SELECT used.digest FROM veil.hierarchies AS used
    JOIN veil.releases ON veil.releases.id = used.release_id
    WHERE veil.releases.status = :status_2 AND used.digest IS NOT NULL))
    """
    h, r = hierarchies.c, releases.c
    used = hierarchies.alias("used")
    in_use = (
        sa.select(used.c.digest)
        .join(releases, r.id == used.c.release_id)
        .where(r.status == Status.PUBLISHED.value, used.c.digest.is_not(None))
    )
    expired = sa.select(r.id).where(r.status == Status.EXPIRED.value)
    return (
        sa.update(hierarchies)
        .where(h.definition.is_not(None), h.release_id.in_(expired), h.digest.not_in(in_use))
        .values(definition=None)
    )


def revision(version: sa.Table) -> sa.Select[Any]:
    """The catalog's applied revision."""
    return sa.select(version.c.version_num)


def record_revision(version: sa.Table, head: str) -> sa.Insert:
    """Where Alembic cannot run (Spark): the revision row, written once every table exists."""
    return version.insert().values(version_num=head)


# --- a run's row (``releases``) ------------------------------------------------------------------------------------


def start_run(
    releases: sa.Table, release_id: str, name: str, when: Any, config: str, config_hash: str, backend: str
) -> sa.Insert:
    """A run's row, ``running``: committed before the release's transaction begins."""
    return releases.insert().values(
        id=release_id,
        name=name,
        status=Status.RUNNING.value,
        started_at=when,
        config=config,
        config_hash=config_hash,
        backend=backend,
    )


def fail_run(releases: sa.Table, release_id: str, when: Any, error: str) -> sa.Update:
    """Mark the run failed, unless its row is no longer ``running`` (a committed version stays published)."""
    r = releases
    return (
        sa.update(r)
        .where(r.c.id == release_id, r.c.status == Status.RUNNING.value)
        .values(status=Status.FAILED.value, finished_at=when, error=error)
    )


def close_interrupted(releases: sa.Table, name: str, when: Any, error: str) -> sa.Update:
    """Every run of ``name`` still ``running`` (seen while holding the release's lock: killed mid-run): failed."""
    r = releases
    return (
        sa.update(r)
        .where(r.c.name == name, r.c.status == Status.RUNNING.value)
        .values(status=Status.FAILED.value, finished_at=when, error=error)
    )


def runs_of(releases: sa.Table, name: str) -> sa.Select[Any]:
    """``(version, status, config_hash, source_fingerprint, id)`` of every run of ``name``
    (``veil.release.runs``)."""
    r = releases
    return sa.select(r.c.version, r.c.status, r.c.config_hash, r.c.source_fingerprint, r.c.id).where(r.c.name == name)


def skip_run(releases: sa.Table, release_id: str, when: Any, fingerprint: str, message: str) -> sa.Update:
    """The run found nothing changed since the latest version: ``skipped``, and why."""
    r = releases
    return (
        sa.update(r)
        .where(r.c.id == release_id)
        .values(status=Status.SKIPPED.value, finished_at=when, source_fingerprint=fingerprint, error=message)
    )


def publish_run(releases: sa.Table, release_id: str, version: int, when: Any, values: Mapping[str, Any]) -> sa.Update:
    """The run's row once its version is written and verified: ``published`` at ``when``, with ``values`` (node,
    achieved levels, metrics, rows, series record, output table ...)."""
    r = releases
    return (
        sa.update(r)
        .where(r.c.id == release_id)
        .values(status=Status.PUBLISHED.value, version=version, finished_at=when, published_at=when, **values)
    )


def adopt_run(
    releases: sa.Table,
    release_id: str,
    version: int,
    when: Any,
    error: str,
    output_table: str,
    ledger: sa.Table,
    state: sa.Table,
    members: str,
) -> sa.Update:
    """Spark: a run killed after its views showed ``version`` (verified) and before its row said so — recorded
    ``published`` by the next run (``veil.release.autocommit.recover``), with the node the series recorded for it
    before the views: the ledger's (``ledger``: ``series_versions``), or for a cohort series the ``series_state``
    row (``state``) of the version's members table ``members``."""
    r, v, s = releases, ledger, state
    ledgered = sa.select(sa.func.max(v.c.node)).where(v.c.version == version, v.c.release_id == release_id)
    kept = sa.select(sa.func.max(s.c.node)).where(s.c.members == members)
    return (
        sa.update(r)
        .where(r.c.id == release_id)
        .values(
            status=Status.PUBLISHED.value,
            version=version,
            node=sa.func.coalesce(ledgered.scalar_subquery(), kept.scalar_subquery()),
            published_at=when,
            finished_at=when,
            error=error,
            output_table=output_table,
        )
    )


def keep_number(releases: sa.Table, release_id: str, version: int, error: str) -> sa.Update:
    """Spark: a version the ledger recorded but no view showed keeps its number on its (failed) run."""
    r = releases
    return sa.update(r).where(r.c.id == release_id).values(version=version, error=error)


def record_rollback(
    releases: sa.Table,
    rollback_id: str,
    name: str,
    version: int,
    when: Any,
    config: str,
    config_hash: str,
    backend: str,
    message: str,
) -> sa.Insert:
    """``veil rollback``'s own row: the version the views show again, and what moved."""
    return releases.insert().values(
        id=rollback_id,
        name=name,
        version=version,
        status=Status.ROLLBACK.value,
        started_at=when,
        finished_at=when,
        config=config,
        config_hash=config_hash,
        backend=backend,
        error=message,
    )


# --- a release's versions (``releases``) ---------------------------------------------------------------------------


def history(releases: sa.Table, name: str) -> sa.Select[Any]:
    """Every run of ``name``, oldest first (``veil releases``)."""
    r = releases
    return (
        sa.select(
            r.c.version,
            r.c.status,
            r.c.node,
            r.c.rows_published,
            r.c.rows_suppressed,
            r.c.rows_deferred,
            r.c.achieved,
            r.c.started_at,
            r.c.published_at,
            r.c.error,
            r.c.series,
        )
        .where(r.c.name == name)
        .order_by(r.c.started_at)
    )


def kept_versions(releases: sa.Table, name: str) -> sa.Select[Any]:
    """``(version, status)`` of ``name``'s published and expired versions."""
    r = releases
    return sa.select(r.c.version, r.c.status).where(r.c.name == name, r.c.status.in_(KEPT))


def rows_published(releases: sa.Table, name: str, version: int) -> sa.Select[Any]:
    """The rows published version ``version`` of ``name`` holds, while it is published."""
    r = releases
    return sa.select(r.c.rows_published).where(
        r.c.name == name, r.c.version == version, r.c.status == Status.PUBLISHED.value
    )


def series_records(releases: sa.Table, name: str) -> sa.Select[Any]:
    """``(version, node, series, rows_published)`` of each published or expired version of ``name``, oldest
    first."""
    r = releases
    return (
        sa.select(r.c.version, r.c.node, r.c.series, r.c.rows_published)
        .where(r.c.name == name, r.c.status.in_(KEPT))
        .order_by(r.c.version)
    )


def published_versions(releases: sa.Table, name: str, limit: int | None = None) -> sa.Select[Any]:
    """The versions of ``name`` still published, newest first (``limit``: only so many)."""
    r = releases
    stmt = (
        sa.select(r.c.version)
        .where(r.c.name == name, r.c.status == Status.PUBLISHED.value)
        .order_by(r.c.version.desc())
    )
    return stmt if limit is None else stmt.limit(limit)


def expired_versions(releases: sa.Table, name: str) -> sa.Select[Any]:
    """The versions of ``name`` whose rows were deleted."""
    r = releases
    return sa.select(r.c.version).where(r.c.name == name, r.c.status == Status.EXPIRED.value)


def expire_versions(releases: sa.Table, name: str, versions: Sequence[int], when: Any) -> sa.Update:
    """Published versions ``versions`` of ``name``, their rows deleted: ``expired`` at ``when``."""
    r = releases
    return (
        sa.update(r)
        .where(r.c.name == name, r.c.version.in_(list(versions)), r.c.status == Status.PUBLISHED.value)
        .values(status=Status.EXPIRED.value, expired_at=when)
    )
