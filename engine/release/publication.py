"""The publication protocol: how a release name's versions are made visible, kept and rolled back, whatever
the backend (docs/publication.md, docs/spark.md).

A release (``veil.release.job``) and a rollback (``veil.release.history``) call its steps in one order:

1. ``lock`` — one run of a release name at a time;
2. ``repair`` — what an earlier run left (an earlier Veil's tables, a killed run's version tables and views);
3. ``prepare`` / ``insert`` / ``insert_blocks`` / ``dimensions`` — write version N and count its blocks (then
   verified by the job), with the ledger's record written when ``staged_ledger`` says;
4. ``point`` — readers see N;
5. ``expire`` — versions beyond ``keep_versions``; ``cleanup`` — after the commit, their views;
6. ``has_rows`` / ``roll_back`` — ``veil rollback``.

The backend chooses the implementation (``Backend.publication`` names one of ``PUBLICATIONS``, as SQLMesh's
engine adapter makes ``transaction()`` a no-op where there are none):

- ``transactional`` (``veil.release.transactional``; DuckDB, PostgreSQL): every step of a run in one
  transaction — a rows table per release name tagged by version, views that read a pointer row, the ledger
  written as soon as it is known (nobody sees it before the commit);
- ``autocommit`` (``veil.release.autocommit``; Spark): every statement commits on its own — a table per
  version, verified, the ledger recorded, then the views switched, the catalog row last; a lock table; the
  next run repairs what a killed run left.

Also here, for both: the grants (``grant``), and dropping an object without waiting for its readers
(``drop_quietly``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import sqlalchemy as sa

from veil import catalog
from veil import queries as q
from veil.backends.base import Session
from veil.config import Config, require_release
from veil.errors import ConfigError, ReleaseError, VeilError
from veil.queries.ddl import drop_table, drop_view
from veil.registry import Registry
from veil.release.memberstore import IN_PLACE, MemberStore
from veil.release.runs import Runs

if TYPE_CHECKING:  # ``veil releases`` and ``veil rollback`` load no warehouse
    from veil.warehouse import Warehouse

pub = q.publication
LOCK_TIMEOUT_MS = 200

# the protocols, by the name a backend gives (``Backend.publication``): ``@PUBLICATIONS.register("name")``
PUBLICATIONS: Registry[type[Publication]] = Registry("publication", "PUBLICATIONS", "veil.release")


def publication_for(session: Session, tables: catalog.CatalogTables, config: Config) -> Publication:
    """The publication of ``config``'s release on ``session``'s backend (the protocol it names)."""
    rel = require_release(config)
    protocol = PUBLICATIONS.get(session.backend.publication)
    return protocol(session, rel.schema, rel.name, tables, rel.catalog_schema, config.attributes, config.sensitive)


@dataclass
class Publication(ABC):
    """The published objects of release ``name`` in ``schema``, and the steps that change them (module
    docstring).  ``columns`` (published column → type, in published order) are the run's, given to ``prepare``."""

    session: Session
    schema: str
    name: str
    tables: catalog.CatalogTables
    catalog_schema: str
    qis: Sequence[str]
    sensitive: Sequence[str]
    columns: Mapping[str, Any] = field(default_factory=dict)
    release_id: str = ""
    rows: sa.Table = field(init=False)
    block_rows: sa.Table = field(init=False)
    # the ledger's versions (``q.ledger.versions_of_release``) where ``repair`` read them, for the run's ledger
    ledger_versions: Sequence[tuple[Any, ...]] | None = field(default=None, init=False)

    # Whether the ledger may be written as soon as the series step decides, before the version's rows (the run's
    # transaction hides it until the commit and undoes it on a failure): then a first version's cells are copied
    # by the database and a later one's step runs shard by shard (``veil.release.firstversion``, ``.laterversion``).  Else it
    # is written once the version is verified, before any view shows it.
    staged_ledger: ClassVar[bool] = False

    # Where a cohort series keeps its members between nights (``veil.release.memberstore``): changed in place in
    # the run's transaction, or a table per version that the run's catalog row commits.
    member_store: ClassVar[MemberStore] = IN_PLACE

    # --- one run at a time, and what earlier runs left -------------------------------------------------------

    @abstractmethod
    def lock(self, wait: float) -> AbstractContextManager[None]:
        """Held while one release or rollback of ``name`` runs; ``BusyError`` after ``wait`` seconds."""

    @abstractmethod
    def repair(self, runs: Runs) -> bool:
        """Under the lock, before a run numbers its version: put right what an earlier run left (``runs``: the
        release's runs as read under the lock); returns whether that changed the runs' rows."""

    @abstractmethod
    def rehearse(self) -> None:
        """``veil release --dry-run``: refused where what a run writes cannot be rolled back."""

    # --- a version ----------------------------------------------------------------------------------------------

    def use(self, columns: Mapping[str, Any]) -> None:
        """The published columns (name → type): the rows and blocks tables they make."""
        longest = max([*pub.names(self.name, 2**31 - 1).values()], key=lambda n: len(n.encode()))
        if len(longest.encode()) > pub.MAX_IDENTIFIER:
            raise ConfigError(
                f"[release] name {self.name!r} is too long: {longest!r} would exceed PostgreSQL's "
                f"{pub.MAX_IDENTIFIER}-byte identifiers"
            )
        self.columns = dict(columns)
        self.rows = pub.rows_table(self.schema, self.name, self.columns)
        self.block_rows = pub.block_rows_table(
            self.schema, self.name, self.qis, {c: self.columns[c] for c in self.sensitive}
        )

    @abstractmethod
    def prepare(self, columns: Mapping[str, Any], release_id: str) -> None:
        """Before version N is written by run ``release_id``: its columns checked, what it needs created."""

    @abstractmethod
    def insert(self, version: int, select: Any) -> None:
        """Version ``version``'s rows, as ``select`` gives them."""

    @abstractmethod
    def insert_blocks(self, version: int) -> list[str]:
        """Count the version's blocks from its rows (``block_rows``, which the job verifies) and create its own
        views; returns their names."""

    def dimensions(self, version: int, wh: Warehouse, config: Config, node: Sequence[int]) -> list[str]:
        """Publish the hierarchies the version used (``veil.release.dimensions``); returns the views.  None here:
        their contents are shared by versions and pruned with DELETE (docs/spark.md §8)."""
        return []

    @abstractmethod
    def point(self, version: int, when: Any) -> None:
        """From now (or the commit) on, the views show ``version``."""

    @abstractmethod
    def expire(self, keep: int, current: int, when: Any, published: Sequence[int]) -> list[int]:
        """Published versions beyond the newest ``keep`` (never ``current``; ``published``: the others, as the
        run read them): marked expired, their rows gone; returns them."""

    def cleanup(self) -> list[str]:
        """After the commit: what expiry could not do in the run (``veil.release.transactional``); returns what
        stays, with the reason."""
        return []

    # --- veil rollback --------------------------------------------------------------------------------------------

    @abstractmethod
    def has_rows(self, version: int) -> bool:
        """Whether kept version ``version``'s rows can be shown again."""

    def roll_back(self, version: int, rollback_id: str, when: Any) -> None:
        """Show kept version ``version`` again: the pointer moves (the views read it)."""
        self.session.execute(pub.set_pointer(self.tables.publications, self.name, version, when), "moving the pointer")

    # --- shared by the protocols ----------------------------------------------------------------------------------

    def views(self) -> dict[str, Any]:
        """The three views of the release (name → select): ``<name>``, ``<name>_blocks``, ``<name>_releases``."""
        names = pub.names(self.name)
        now = pub.current(self.tables.publications, self.name)
        return {
            names["view"]: pub.rows_view(self.rows, list(self.columns), now),
            names["blocks"]: pub.blocks_view(self.block_rows, self.qis, self.sensitive, now),
            names["releases"]: pub.releases_view(self.tables.releases, self.tables.publications, self.name),
        }

    def move_pointer(self, version: int, when: Any) -> None:
        """The catalog's pointer row names ``version`` (created by the first release)."""
        t = self.tables.publications
        found = self.session.rows(pub.read_pointer(t, self.name), "reading the publication pointer")
        if found:
            self.session.execute(pub.set_pointer(t, self.name, version, when), "moving the publication pointer")
        else:
            self.session.execute(pub.add_pointer(t, self.name, self.schema, version, when), "creating the pointer")

    @staticmethod
    def beyond(keep: int, current: int, published: Sequence[int]) -> list[int]:
        """Of the ``published`` versions and ``current``, those beyond the newest ``keep`` (never ``current``), newest
        first: what expires now.

        >>> Publication.beyond(2, 5, [4, 3, 1])
        [3, 1]
        """
        versions = sorted({*published, current}, reverse=True)
        kept = set(versions[:keep]) | {current}
        return [v for v in versions if v not in kept]


def limit_lock_waits(session: Session, milliseconds: int) -> None:
    """Make the transaction's statements give up waiting for a lock after ``milliseconds`` where the backend
    can (``Backend.lock_timeout``); elsewhere they do not wait (DuckDB) or nobody holds one."""
    if session.backend.lock_timeout:
        session.execute(pub.lock_timeout(milliseconds), "limiting lock waits")


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
        limit_lock_waits(session, LOCK_TIMEOUT_MS)
        drop = drop_view(obj, schema) if kind == "VIEW" else drop_table(obj, schema)
        session.execute(drop, f"dropping {schema}.{obj}")
        session.commit()
    except VeilError as exc:
        session.rollback()
        return f"{schema}.{obj} ({exc})"
    return None


def check_grants(session: Session, roles: Sequence[str]) -> None:
    """Refuse ``grant_select_to`` where the backend has no roles (``Backend.grants``) — before anything is written
    (an autocommit publication could not undo it)."""
    if roles and not session.backend.grants:
        raise ConfigError(f"[release] grant_select_to is set, but {session.backend.name} has no roles to grant to")


def grant(session: Session, schema: str, views: Sequence[str], roles: Sequence[str]) -> None:
    """GRANT USAGE on ``schema`` and SELECT on ``views`` to each of ``roles``, then check that each role holds
    them (``granted``): a grant PostgreSQL does not apply is an error, never a silent success."""
    if not roles:
        return
    check_grants(session, roles)
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
    missing = ([] if usage else [f"USAGE on schema {schema!r}"]) + [
        f"SELECT on {schema}.{v}" for v, ok in zip(views, selects) if not ok
    ]
    if not missing:
        return
    shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
    if not usage and not grantable:
        why = (
            f"Veil's role {me!r} neither owns schema {schema!r} nor holds USAGE on it WITH GRANT OPTION; an "
            f"administrator should make {me!r} its owner (ALTER SCHEMA ... OWNER TO) or grant USAGE on it to "
            f"{role!r}"
        )
    else:
        why = f"only an object's owner or a holder of the grant option can grant on it, and Veil's role is {me!r}"
    raise ReleaseError(
        f"[release] grant_select_to: PostgreSQL did not grant role {role!r} {shown} (it only warned "
        f"'no privileges were granted'): {why} (docs/how-to/postgresql-least-privilege.md); "
        "nothing was published"
    )
