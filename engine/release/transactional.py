"""The transactional publication (``Backend.publication = "transactional"``: DuckDB, PostgreSQL;
docs/publication.md).

One rows table and one blocks table per release name hold every kept version's rows, tagged with
``veil_version``; the views ``<name>``, ``<name>_blocks`` and ``<name>_releases`` select the current version
through the catalog's pointer row and are created once.  A release inserts its rows and blocks, creates the
views ``<name>_v<N>`` and ``<name>_v<N>_blocks``, publishes its hierarchies (``veil.release.dimensions``), moves
the pointer and deletes the rows of expired versions, all in its one transaction: readers keep their snapshot
(MVCC), never block it and are never blocked by it (only share locks on what readers touch).  Dropping an
expired version's views needs an exclusive lock, so it happens after the commit, each in a short transaction
that gives up at once (``lock_timeout``) when a reader holds it or another view depends on it — retried by the
next run and reported.  One run per release name: a PostgreSQL advisory lock (DuckDB: its file lock).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar

import sqlalchemy as sa

from veil import catalog
from veil import queries as q
from veil.backends.base import Session
from veil.config import Config
from veil.errors import ReleaseError
from veil.queries import catalog as qc
from veil.queries.ddl import create_index, create_table, create_view
from veil.release import dimensions
from veil.release.publication import LOCK_TIMEOUT_MS, PUBLICATIONS, Publication, drop_quietly, limit_lock_waits, pub
from veil.release.process import failpoint, now
from veil.release.runs import Runs

if TYPE_CHECKING:  # a rollback loads no warehouse
    from veil.warehouse import Warehouse


@PUBLICATIONS.register("transactional")
class TransactionalPublication(Publication):
    """Every step of a run in its one transaction (module docstring)."""

    staged_ledger: ClassVar[bool] = True

    def lock(self, wait: float) -> AbstractContextManager[None]:
        """A PostgreSQL advisory lock (DuckDB: the file lock, taken when the connection opened)."""
        return catalog.advisory(
            self.session,
            catalog.lock_key("veil", self.catalog_schema, self.name),
            wait,
            f"another `veil release` of {self.name!r} is running (advisory lock held); nothing "
            "was published by this run — try again later or pass --wait",
        )

    def repair(self, runs: Runs) -> bool:
        """A run killed outright left nothing (its transaction was rolled back); an earlier Veil's tables are
        upgraded once (``upgrade_legacy``: the runs' rows stay as they are)."""
        upgrade_legacy(self)
        return False

    def rehearse(self) -> None:
        """A dry run is the release's own transaction, rolled back at its end: allowed."""

    def objects(self) -> dict[str, str]:
        return {n: t for n, t in self.session.rows(pub.objects_in(self.schema), f"listing schema {self.schema!r}")}

    def prepare(self, columns: Mapping[str, Any], release_id: str) -> None:
        """Create the schema, the rows tables and the three views when missing (inside the release's
        transaction: a first release that fails leaves no schema behind)."""
        self.use(columns)
        self.release_id = release_id
        self.session.create_schema(self.schema)
        found = self.objects()
        names = pub.names(self.name)
        if names["rows"] in found:
            have = [c for (c,) in self.session.rows(pub.column_names(self.schema, names["rows"]), "reading columns")]
            if have[1:] != list(self.columns):
                raise ReleaseError(
                    f"the published columns of release {self.name!r} changed ({', '.join(have[1:])} → "
                    f"{', '.join(self.columns)}); Veil never redefines published views on a release: publish under "
                    f"a new [release] name, or drop {self.schema}.{names['rows']} and the views on it first"
                )
        else:
            for table in (self.rows, self.block_rows):
                self.session.execute(create_table(table), f"creating {self.schema}.{table.name}")
            self.index_versions()
        for view, select in self.views().items():
            if view not in found:
                self.view(view, select)

    def index_versions(self) -> None:
        """Index both tables on ``veil_version`` where the backend wants it (``Backend.version_indexes``)."""
        if self.session.backend.version_indexes:
            for table in (self.rows, self.block_rows):
                self.session.execute(create_index(pub.version_index(table)), f"indexing {table.name}")

    def view(self, view: str, select: Any) -> None:
        self.session.execute(create_view(self.schema, view, select), f"creating view {self.schema}.{view}")

    def insert(self, version: int, select: Any) -> None:
        self.session.execute(
            pub.insert_rows(self.rows, list(self.columns), select),
            f"inserting version {version} into {self.schema}.{self.rows.name}",
        )

    def insert_blocks(self, version: int) -> list[str]:
        """Count the version's blocks (by numbered values where text groups do not spill,
        ``queries.publication.insert_blocks``) and create its views; returns the views' names."""
        what = "counting the release's blocks"
        numbered = not self.session.backend.text_groups_spill
        columns = [*self.qis, *self.sensitive] if numbered else []
        for j, c in enumerate(columns):
            self.session.execute(pub.block_keys(self.rows, version, c, j), what)
        self.session.execute(
            pub.insert_blocks(self.block_rows, self.rows, version, self.qis, self.sensitive, numbered), what
        )
        # statistics that know this version: else PostgreSQL expects no row of it and joins the recount's
        # numbered values by nested loops (1M census, second version: minutes instead of seconds)
        self.session.analyze(self.block_rows, what)
        for j in range(len(columns)):
            self.session.execute(q.drop_table(pub.KEYS.format(j)), what)
        names = pub.names(self.name, version)
        self.view(names["version_view"], pub.version_rows_view(self.rows, list(self.columns), version))
        self.view(names["version_blocks"], pub.version_blocks_view(self.block_rows, self.qis, self.sensitive, version))
        return [names["version_view"], names["version_blocks"]]

    def dimensions(self, version: int, wh: Warehouse, config: Config, node: Sequence[int]) -> list[str]:
        """The hierarchies the version used, as far as it may show them (``veil.release.dimensions``)."""
        return dimensions.publish(
            self.session,
            self.tables,
            self.schema,
            self.name,
            version,
            dimensions.of_run(wh, config, node),
            self.block_rows,
        )

    def point(self, version: int, when: Any) -> None:
        """Move the pointer: from the commit on, the views show ``version``."""
        self.move_pointer(version, when)

    def expire(self, keep: int, current: int, when: Any, published: Sequence[int]) -> list[int]:
        """Delete the rows of published versions beyond the newest ``keep`` (never ``current``), then the
        hierarchies no kept version uses; the catalog keeps the versions, marked expired, and the ARX texts of the
        hierarchies published versions use (``forget_hierarchy_texts``).  Returns the versions expired now."""
        gone = self.beyond(keep, current, published)
        if gone:
            for table in (self.rows, self.block_rows):
                self.session.execute(pub.delete_versions(table, gone), f"deleting expired versions from {table.name}")
            self.session.execute(
                qc.expire_versions(self.tables.releases, self.name, gone, when), "marking versions expired"
            )
            self.session.execute(
                qc.forget_hierarchy_texts(self.tables.hierarchies, self.tables.releases),
                "clearing the hierarchy texts no published version uses",
            )
        dimensions.expire(self.session, self.tables, self.schema, self.name)
        return gone

    def cleanup(self) -> list[str]:
        """After the commit: drop the views of expired versions — their dimension views first — each in a short
        transaction that gives up rather than wait (docs/publication.md §3).  Test failpoints ``cleanup-views``
        (the dimension views dropped) and ``cleaned``."""
        left = dimensions.cleanup(self.session, self.tables, self.schema, self.name)
        failpoint("cleanup-views")
        left += cleanup(self.session, self.schema, self.name, self.tables)
        failpoint("cleaned")
        return left

    def has_rows(self, version: int) -> bool:
        return bool(
            self.session.scalar(
                pub.blocks_of_version(self.schema, self.name, version), "looking for the version's rows"
            )
        )


def upgrade_legacy(publication: TransactionalPublication) -> bool:
    """Once, in its own short transaction: an earlier Veil published one table per version behind views it
    dropped and re-created on every release.  Copy the current version's tables into the rows tables (types
    kept), point at it, and replace the three views in place (``CREATE OR REPLACE``: views built on them stay;
    an exclusive lock on each for an instant, given up after ``5 * LOCK_TIMEOUT_MS`` if a reader holds it —
    the run then fails and the next one retries).  Returns whether it upgraded."""
    session, schema, name, tables = publication.session, publication.schema, publication.name, publication.tables
    names = pub.names(name)
    found = {n: t for n, t in session.rows(pub.objects_in(schema), f"listing schema {schema!r}")}
    if names["view"] not in found or names["rows"] in found:
        session.commit()
        return False
    last = session.rows(qc.published_versions(tables.releases, name, limit=1), "reading the latest version")
    table = pub.names(name, last[0][0])["version_view"] if last else None
    if table is None or table not in found or table + "_blocks" not in found:
        raise ReleaseError(
            f"{schema}.{name} exists but is not a Veil release this catalog knows; drop it or "
            "choose another [release] name"
        )
    version = int(last[0][0])
    columns = [c for (c,) in session.rows(pub.column_names(schema, table), "reading columns")]
    for target, source in ((names["rows"], table), (names["block_rows"], table + "_blocks")):
        session.execute(pub.legacy_copy(schema, target, source, version), f"copying {schema}.{source} into {target}")
    up = replace(publication)
    up.use({c: sa.types.NullType() for c in columns})
    up.index_versions()
    up.move_pointer(version, now())
    limit_lock_waits(session, 5 * LOCK_TIMEOUT_MS)
    for view, select in up.views().items():
        up.view(view, select)
    session.commit()
    return True


def cleanup(session: Session, schema: str, name: str, tables: catalog.CatalogTables) -> list[str]:
    """After the commit: drop the views (or an earlier Veil's tables) of expired versions, each in its own
    short transaction that gives up instead of waiting; returns what stays, with the reason."""
    expired = [v for (v,) in session.rows(qc.expired_versions(tables.releases, name), "listing expired versions")]
    session.commit()
    found = {n: t for n, t in session.rows(pub.objects_in(schema), f"listing schema {schema!r}")}
    session.commit()
    kept = []
    for version in sorted(expired):
        names = pub.names(name, version)
        for obj in (names["version_blocks"], names["version_view"]):
            left = drop_quietly(session, schema, obj, found)
            if left:
                kept.append(left)
    return kept
