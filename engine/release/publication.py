"""Publishing versions safely for every reader (docs/publication.md).

One rows table and one blocks table per release name hold every kept version's rows, tagged with
``veil_version``; the views ``<name>``, ``<name>_blocks`` and ``<name>_releases`` select the current version
through the catalog's pointer row and are created once.  A release inserts its rows and blocks, creates the
views ``<name>_v<N>`` and ``<name>_v<N>_blocks``, moves the pointer and deletes the rows of expired versions,
all in its one transaction: readers keep their snapshot (MVCC), never block it and are never blocked by it
(only share locks on what readers touch).  Dropping an expired version's views needs an exclusive lock, so it
happens after the commit, each in a short transaction that gives up at once (``lock_timeout``) when a reader
holds it or another view depends on it — retried by the next run and reported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from veil import catalog
from veil import queries as q
from veil.backends.base import Session
from veil.errors import ConfigError, ReleaseError, VeilError
from veil.queries import catalog as qc
from veil.queries.ddl import create_index, create_table, create_view, drop_table, drop_view
from veil.release.runtime import now as now_utc

pub = q.publication
LOCK_TIMEOUT_MS = 200


@dataclass
class Publication:
    """The published objects of one release name in ``schema``."""

    session: Session
    schema: str
    name: str
    tables: catalog.CatalogTables
    columns: Mapping[str, Any]          # published column → type, in published order
    qis: Sequence[str]
    sensitive: Sequence[str]
    rows: sa.Table = field(init=False)
    block_rows: sa.Table = field(init=False)

    def __post_init__(self) -> None:
        longest = max([*pub.names(self.name, 2**31 - 1).values()], key=lambda n: len(n.encode()))
        if len(longest.encode()) > pub.MAX_IDENTIFIER:
            raise ConfigError(f"[release] name {self.name!r} is too long: {longest!r} would exceed PostgreSQL's "
                              f"{pub.MAX_IDENTIFIER}-byte identifiers")
        self.rows = pub.rows_table(self.schema, self.name, self.columns)
        self.block_rows = pub.block_rows_table(self.schema, self.name, self.qis,
                                               {c: self.columns[c] for c in self.sensitive})

    def objects(self) -> dict[str, str]:
        return {n: t for n, t in self.session.rows(pub.objects_in(self.schema), f"listing schema {self.schema!r}")}

    def prepare(self) -> None:
        """Create the schema, the rows tables and the three views when missing (inside the release's
        transaction: a first release that fails leaves no schema behind)."""
        self.session.create_schema(self.schema)
        found = self.objects()
        names = pub.names(self.name)
        if names["rows"] in found:
            have = [c for (c,) in self.session.rows(pub.column_names(self.schema, names["rows"]), "reading columns")]
            if have[1:] != list(self.columns):
                raise ReleaseError(
                    f"the published columns of release {self.name!r} changed ({', '.join(have[1:])} → "
                    f"{', '.join(self.columns)}); Veil never redefines published views on a release: publish under "
                    f"a new [release] name, or drop {self.schema}.{names['rows']} and the views on it first")
        else:
            for table in (self.rows, self.block_rows):
                self.session.execute(create_table(table), f"creating {self.schema}.{table.name}")
            self.index_versions()
        for view, select in self.views().items():
            if view not in found:
                self._view(view, select)

    def index_versions(self) -> None:
        """Index both tables on ``veil_version`` where the backend wants it (``Backend.version_indexes``)."""
        if self.session.backend.version_indexes:
            for table in (self.rows, self.block_rows):
                self.session.execute(create_index(pub.version_index(table)), f"indexing {table.name}")

    def views(self) -> dict[str, Any]:
        names = pub.names(self.name)
        now = pub.current(self.tables.publications, self.name)
        return {names["view"]: pub.rows_view(self.rows, list(self.columns), now),
                names["blocks"]: pub.blocks_view(self.block_rows, self.qis, self.sensitive, now),
                names["releases"]: pub.releases_view(self.tables.releases, self.tables.publications, self.name)}

    def _view(self, view: str, select: Any) -> None:
        self.session.execute(create_view(self.schema, view, select), f"creating view {self.schema}.{view}")

    def insert(self, version: int, select: Any) -> None:
        self.session.execute(pub.insert_rows(self.rows, list(self.columns), select),
                             f"inserting version {version} into {self.schema}.{self.rows.name}")

    def insert_blocks(self, version: int) -> list[str]:
        """Count the version's blocks (by numbered values where text groups do not spill,
        ``queries.publication.insert_blocks``) and create its views; returns the views' names."""
        what = "counting the release's blocks"
        numbered = not self.session.backend.text_groups_spill
        columns = [*self.qis, *self.sensitive] if numbered else []
        for j, c in enumerate(columns):
            self.session.execute(pub.block_keys(self.rows, version, c, j), what)
        self.session.execute(pub.insert_blocks(self.block_rows, self.rows, version, self.qis, self.sensitive,
                                               numbered), what)
        # statistics that know this version: else PostgreSQL expects no row of it and joins the recount's
        # numbered values by nested loops (1M census, second version: minutes instead of seconds)
        self.session.analyze(self.block_rows, what)
        for j in range(len(columns)):
            self.session.execute(q.drop_table(pub.KEYS.format(j)), what)
        names = pub.names(self.name, version)
        self._view(names["version_view"], pub.version_rows_view(self.rows, list(self.columns), version))
        self._view(names["version_blocks"], pub.version_blocks_view(self.block_rows, self.qis, self.sensitive, version))
        return [names["version_view"], names["version_blocks"]]

    def point(self, version: int, when: Any) -> None:
        """Move the pointer: from the commit on, the views show ``version``."""
        t = self.tables.publications
        found = self.session.rows(pub.read_pointer(t, self.name), "reading the publication pointer")
        if found:
            self.session.execute(pub.set_pointer(t, self.name, version, when), "moving the publication pointer")
        else:
            self.session.execute(pub.add_pointer(t, self.name, self.schema, version, when), "creating the pointer")

    def beyond(self, keep: int, current: int) -> list[int]:
        """Published versions beyond the newest ``keep`` (never ``current``), newest first: what expires now."""
        published = [v for (v,) in self.session.rows(qc.published_versions(self.tables.releases, self.name),
                                                     "listing published versions")]
        kept = set(published[:keep]) | {current}
        return [v for v in published if v not in kept]

    def expire(self, keep: int, current: int, when: Any) -> list[int]:
        """Delete the rows of published versions beyond the newest ``keep`` (never ``current``); the catalog
        keeps them, marked expired.  Returns the versions expired now."""
        gone = self.beyond(keep, current)
        if gone:
            for table in (self.rows, self.block_rows):
                self.session.execute(pub.delete_versions(table, gone), f"deleting expired versions from {table.name}")
            self.session.execute(qc.expire_versions(self.tables.releases, self.name, gone, when),
                                 "marking versions expired")
        return gone



def upgrade_legacy(session: Session, schema: str, name: str, tables: catalog.CatalogTables, qis: Sequence[str],
                   sensitive: Sequence[str]) -> bool:
    """Once, in its own short transaction: an earlier Veil published one table per version behind views it
    dropped and re-created on every release.  Copy the current version's tables into the rows tables (types
    kept), point at it, and replace the three views in place (``CREATE OR REPLACE``: views built on them stay;
    an exclusive lock on each for an instant, given up after ``5 * LOCK_TIMEOUT_MS`` if a reader holds it —
    the run then fails and the next one retries).  Returns whether it upgraded."""
    names = pub.names(name)
    found = {n: t for n, t in session.rows(pub.objects_in(schema), f"listing schema {schema!r}")}
    if names["view"] not in found or names["rows"] in found:
        session.commit()
        return False
    last = session.rows(qc.published_versions(tables.releases, name, limit=1), "reading the latest version")
    table = pub.names(name, last[0][0])["version_view"] if last else None
    if table is None or table not in found or table + "_blocks" not in found:
        raise ReleaseError(f"{schema}.{name} exists but is not a Veil release this catalog knows; drop it or "
                           "choose another [release] name")
    version = int(last[0][0])
    columns = [c for (c,) in session.rows(pub.column_names(schema, table), "reading columns")]
    for target, source in ((names["rows"], table), (names["block_rows"], table + "_blocks")):
        session.execute(pub.legacy_copy(schema, target, source, version), f"copying {schema}.{source} into {target}")
    up = Publication(session, schema, name, tables, {c: sa.types.NullType() for c in columns}, qis, sensitive)
    up.index_versions()
    up.point(version, now_utc())
    if session.backend.lock_timeout:
        session.execute(pub.lock_timeout(5 * LOCK_TIMEOUT_MS), "limiting lock waits")
    for view, select in up.views().items():
        up._view(view, select)
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


def drop_quietly(session: Session, schema: str, obj: str, found: Mapping[str, str]) -> str | None:
    """Drop view (or table) ``obj`` when it is in ``found`` (name → type), in its own short transaction that
    gives up instead of waiting; returns why it stays, or ``None``."""
    if obj not in found:
        return None
    kind = "VIEW" if "VIEW" in str(found[obj]).upper() else "TABLE"
    if not session.backend.view_dependencies:
        readers = session.rows(pub.views_mentioning(schema, obj), f"looking for views on {schema}.{obj}")
        session.commit()
        if readers:
            return f"{schema}.{obj} (view(s) {', '.join(f'{s}.{v}' for s, v in readers)} read it)"
    try:
        if session.backend.lock_timeout:
            session.execute(pub.lock_timeout(LOCK_TIMEOUT_MS), "limiting lock waits")
        drop = drop_view(obj, schema) if kind == "VIEW" else drop_table(obj, schema)
        session.execute(drop, f"dropping {schema}.{obj}")
        session.commit()
    except VeilError as exc:
        session.rollback()
        return f"{schema}.{obj} ({exc})"
    return None


def grant(session: Session, schema: str, views: Sequence[str], roles: Sequence[str]) -> None:
    """GRANT USAGE on ``schema`` and SELECT on ``views`` to each of ``roles``, then check that each role holds
    them (``granted``): a grant PostgreSQL does not apply is an error, never a silent success."""
    if not roles:
        return
    if not session.backend.grants:
        raise ConfigError(f"[release] grant_select_to is set, but {session.backend.name} has no roles to grant to")
    for role in roles:
        if not session.scalar(q.role_exists(role), "looking up a role"):
            raise ConfigError(f"[release] grant_select_to names role {role!r}, which does not exist")
        session.execute(q.Grant(role, schema), f"granting schema {schema!r} to {role!r}")
        for view in views:
            session.execute(q.Grant(role, schema, view), f"granting {schema}.{view} to {role!r}")
        granted(session, schema, views, role)


def granted(session: Session, schema: str, views: Sequence[str], role: str) -> None:
    """Raise ``ReleaseError`` naming each privilege ``role`` lacks after the GRANTs: PostgreSQL applies a GRANT
    only from the object's owner or a holder of the grant option and otherwise only *warns* ("no privileges
    were granted") — e.g. when an administrator created ``schema`` and gave Veil's role USAGE and CREATE on it.
    The release's transaction then rolls back: nothing is published that the roles could not read."""
    held = session.rows(q.privileges_held(role, schema, views), f"checking the grants to {role!r}")[0]
    usage, selects, grantable, me = held[0], held[1:-2], held[-2], held[-1]
    missing = ([] if usage else [f"USAGE on schema {schema!r}"]) + \
        [f"SELECT on {schema}.{v}" for v, ok in zip(views, selects) if not ok]
    if not missing:
        return
    shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
    if not usage and not grantable:
        why = (f"Veil's role {me!r} neither owns schema {schema!r} nor holds USAGE on it WITH GRANT OPTION; an "
               f"administrator should make {me!r} its owner (ALTER SCHEMA ... OWNER TO) or grant USAGE on it to "
               f"{role!r}")
    else:
        why = f"only an object's owner or a holder of the grant option can grant on it, and Veil's role is {me!r}"
    raise ReleaseError(f"[release] grant_select_to: PostgreSQL did not grant role {role!r} {shown} (it only warned "
                       f"'no privileges were granted'): {why} (docs/how-to/postgresql-least-privilege.md); "
                       "nothing was published")
