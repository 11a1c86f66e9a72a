"""The autocommit publication (``Backend.publication = "autocommit"``: Spark; docs/spark.md).

The transactional publication (``veil.release.transactional``) publishes a version in one transaction.  Here
every statement commits on its own, so a version is published in an order in which every prefix is safe:

1. ``<name>_rows_v<N>`` is written (one ``CREATE TABLE AS``) and recounted independently (``verify``);
   ``<name>_block_rows_v<N>`` is counted from it; the series ledger records N (``staged_ledger`` is False:
   after the recount, never before);
2. the views switch, one ``CREATE OR REPLACE VIEW`` (one catalog operation) each: ``<name>_v<N>``,
   ``<name>_v<N>_blocks``, then ``<name>_blocks``, ``<name>_releases`` and ``<name>`` last — each carries
   ``TBLPROPERTIES ('veil.version'=N, 'veil.release_id'=...)``; ``<name>``'s is the publication's marker;
3. the pointer row and the catalog row (``published``) are appended last; expired versions are marked, then
   their tables and views dropped.

A killed run leaves at most: version tables no view reads (orphans), or views already switched to a verified
version whose catalog row is missing.  The next run, holding the lock, repairs both before it numbers its own
version (``recover``).  One run per release name at a time: ``table_lock``.  Nothing can be rolled back, so
``--dry-run`` is refused; hierarchies are not published as dimension tables (docs/spark.md §8).
"""

from __future__ import annotations

import os
import re
import socket
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, ClassVar, NamedTuple

import sqlalchemy as sa

from veil import catalog, log
from veil import queries as q
from veil.backends.base import Session
from veil.catalog import Status
from veil.errors import BackendError, BusyError, ReleaseError, VeilError
from veil.queries import appendonly
from veil.queries import catalog as qc
from veil.queries.ddl import drop_table, drop_view, relation
from veil.release.publication import PUBLICATIONS, Publication
from veil.release.memberstore import GENERATIONS, MemberStore, generation
from veil.release import compaction
from veil.release.process import failpoint, now
from veil.release.runs import Runs

pub = q.publication
VERSION = "veil.version"
RELEASE = "veil.release_id"


class Recovered(NamedTuple):
    """What ``recover`` did and saw."""

    dropped: list[str]  # the orphans' objects
    changed: bool  # a run's row changed (a version adopted, a number kept)
    ledger_versions: list[tuple[Any, ...]]  # the ledger's versions as read (``q.ledger.versions_of_release``)


@PUBLICATIONS.register("autocommit")
class AutocommitPublication(Publication):
    """Version N in tables of its own, shown by switching the views; see the module's docstring."""

    member_store: ClassVar[MemberStore] = GENERATIONS  # a cohort series' members: a table per version

    def lock(self, wait: float) -> AbstractContextManager[None]:
        """A lock table in the catalog schema (``table_lock``)."""
        return table_lock(self.session, self.catalog_schema, self.name, wait)

    def repair(self, runs: Runs) -> bool:
        """Create the release's schema (its own statement: nothing here is undone), then repair what a killed
        run left (``recover``)."""
        catalog.ensure_schema(self.session, self.schema)
        recovered = recover(self.session, self.schema, self.name, self.tables, self.qis, self.sensitive, runs)
        self.ledger_versions = recovered.ledger_versions
        return recovered.changed

    def move_pointer(self, version: int, when: Any) -> None:
        """The pointer row appended whole, read by nothing first: the catalog's tables are logs whose views show
        each key's newest entry (``veil.queries.appendonly``), so one append names ``version`` whether a row was
        there or not — where reading the row and moving it (an ``UPDATE``, which reads the log again) were two
        statements of 0.25-0.8 s."""
        t = self.tables.publications
        self.session.execute(
            pub.add_pointer(t, self.name, self.schema, version, when), "moving the publication pointer"
        )

    def rehearse(self) -> None:
        raise ReleaseError(
            f"--dry-run: {self.session.backend.name} commits every statement on its own, so a "
            "release cannot be rehearsed and rolled back there; nothing was written"
        )

    def prepare(self, columns: Mapping[str, Any], release_id: str) -> None:
        """The published columns are fixed by the first release (as on the other backends)."""
        self.use(columns)
        self.release_id = release_id
        if not self.session.has_relation(self.schema, self.name):
            return
        have = [c for c, *_ in self.session.source_columns(self.schema, self.name)]
        if have != list(self.columns):
            raise ReleaseError(
                f"the published columns of release {self.name!r} changed ({', '.join(have)} → "
                f"{', '.join(self.columns)}); Veil never redefines published views on a release: publish under a "
                f"new [release] name, or drop {self.schema}.{self.name}, its views and version tables first"
            )

    def insert(self, version: int, select: Any) -> None:
        self.rows = pub.version_rows(self.schema, self.name, version, dict(self.columns))
        self.session.execute(
            q.create_table_as(self.schema, self.rows.name, select),
            f"writing version {version} into {self.schema}.{self.rows.name}",
        )

    def insert_blocks(self, version: int) -> list[str]:
        sens = {c: self.columns[c] for c in self.sensitive}
        self.block_rows = pub.version_block_rows(self.schema, self.name, version, list(self.qis), sens)
        select = pub.count_blocks(self.rows, version, list(self.qis), list(self.sensitive))
        self.session.execute(
            q.create_table_as(self.schema, self.block_rows.name, select), "counting the release's blocks"
        )
        names = pub.names(self.name, version)
        return [names["version_view"], names["version_blocks"]]

    def point(self, version: int, when: Any) -> None:
        """Switch the views to the verified version N, then append the pointer row."""
        show(
            self.session,
            self.schema,
            self.name,
            self.tables,
            version,
            self.release_id,
            list(self.columns),
            self.qis,
            self.sensitive,
        )
        self.move_pointer(version, when)

    def expire(self, keep: int, current: int, when: Any, published: Sequence[int]) -> list[int]:
        """Versions beyond the newest ``keep``: marked expired, then their views and tables dropped (a table a
        run could not drop is an orphan the next run removes)."""
        gone = self.beyond(keep, current, published)
        if gone:
            self.session.execute(
                qc.expire_versions(self.tables.releases, self.name, gone, when), "marking versions expired"
            )
            for v in gone:
                drop_version(self.session, self.schema, self.name, v)
        return gone

    def cleanup(self) -> list[str]:
        """After the run: the catalog's logs compacted once a week (``veil.release.compaction``), under a lock of
        their own; another run compacting meanwhile is left to it.  A compaction that fails is logged and tried
        again by the next run (the views read what they read before it)."""
        today = appendonly.today()
        try:
            if compaction.due(compaction.layout(self.session, self.tables), today) is None:
                return []
            with table_lock(self.session, self.catalog_schema, compaction.LOCK, 0.0):
                compaction.compact(self.session, self.tables, today)
        except BusyError:
            return []
        except VeilError as exc:
            log.log.warning(f"the catalog's logs were not compacted ({exc}); the next run tries again")
        return []

    def has_rows(self, version: int) -> bool:
        """Whether version ``version``'s tables are still there."""
        found = self.session.relations(self.schema)
        return f"{self.name}_rows_v{version}" in found and f"{self.name}_block_rows_v{version}" in found

    def roll_back(self, version: int, rollback_id: str, when: Any) -> None:
        """Switch the views to kept version ``version`` (its columns read from its table), then move the pointer."""
        table = f"{self.name}_rows_v{version}"
        columns = [c for c, *_ in self.session.source_columns(self.schema, table) if c != "veil_version"]
        show(self.session, self.schema, self.name, self.tables, version, rollback_id, columns, self.qis, self.sensitive)
        failpoint("rollback-switched")  # test hook: the views show ``version``, the pointer not yet
        super().roll_back(version, rollback_id, when)


def show(
    session: Session,
    schema: str,
    name: str,
    tables: catalog.CatalogTables,
    version: int,
    release_id: str,
    columns: Sequence[str],
    qis: Sequence[str],
    sensitive: Sequence[str],
) -> None:
    """Point every view of release ``name`` at version ``version``'s tables: the version's own views, then
    ``<name>_blocks``, ``<name>_releases`` and ``<name>`` (the marker) — one catalog operation each."""
    props = {VERSION: str(version), RELEASE: release_id}
    steps = pub.switched_views(
        schema, name, version, props, columns, qis, sensitive, tables.releases, tables.publications
    )
    for i, (view, statement) in enumerate(steps):
        if i == 3:
            failpoint("switch")  # test hook: <name>_blocks switched, <name> not yet
        session.execute(statement, f"switching view {schema}.{view} to version {version}")


def drop_version(session: Session, schema: str, name: str, version: int) -> None:
    """Drop version ``version``'s views, then its tables (each ``IF EXISTS``)."""
    names = pub.names(name, version)
    for view in (names["version_view"], names["version_blocks"]):
        session.execute(drop_view(view, schema), f"dropping {schema}.{view}")
    for table in (f"{name}_rows_v{version}", f"{name}_block_rows_v{version}"):
        session.execute(drop_table(table, schema), f"dropping {schema}.{table}")


def properties(session: Session, schema: str, view: str) -> dict[str, str]:
    return {
        str(k): str(v)
        for k, v in session.rows(pub.show_properties(schema, view), f"reading the properties of {schema}.{view}")
    }


def recover(
    session: Session,
    schema: str,
    name: str,
    tables: catalog.CatalogTables,
    qis: Sequence[str],
    sensitive: Sequence[str],
    runs: Runs,
) -> Recovered:
    """Under the lock, before a run numbers its version: repair what a killed run left (module docstring).

    - ``<name>`` shows version N whose catalog row is not ``published`` (killed after the switch): the row is
      recorded now — readers already saw N, and N was verified before any view showed it;
    - ``<name>`` was switched by a ``veil rollback`` whose row is missing (killed after the switch): the pointer
      is read, and moved to N if it names another version.  Every run and rollback moves the pointer after the
      views and before its row, so a view whose run's row is there needs no read (on Spark a job of ~1 s);
    - ``<name>_blocks`` or ``<name>_releases`` show another version than ``<name>`` (killed mid-switch): they
      are switched to ``<name>``'s;
    - a version the ledger recorded but no view showed keeps its number (never reused: the ledger compares
      every later version with it, the safe side);
    - version tables and views of any version neither published nor shown (orphans) are dropped.
    ``runs``: the release's runs as read under the lock."""
    found = session.relations(schema)
    status = runs.kept()
    changed = False
    shown = _shown(session, schema, name, found)
    if shown is not None:
        version, release_id = shown
        if status.get(version) != Status.PUBLISHED:
            _adopt(session, tables, name, schema, version, release_id)  # the pointer row too
            status[version], changed = Status.PUBLISHED, True
        elif not runs.finished(release_id, version):  # a `veil rollback` killed after switching the views
            _repoint(session, tables, name, version)
        views = [pub.names(name)["blocks"], pub.names(name)["releases"]]
        if any(properties(session, schema, v).get(VERSION) != str(version) for v in views if v in found) or any(
            v not in found for v in views
        ):
            columns = [c for c, *_ in session.source_columns(schema, name)]
            show(session, schema, name, tables, version, release_id, columns, qis, sensitive)
    versions = session.rows(q.ledger.versions_of_release(tables.series_versions, name), "reading the ledger's versions")
    changed = _burn(session, tables, versions, status, runs.numbered()) or changed
    keep = {v for v, s in status.items() if s == Status.PUBLISHED} | ({shown[0]} if shown else set())
    orphans = _orphans(session, schema, name, found, keep, runs.ids())
    for v in orphans:
        drop_version(session, schema, name, v)
    return Recovered([f"{schema}.{name} version {v}" for v in orphans], changed, versions)


def _orphans(
    session: Session, schema: str, name: str, found: dict[str, str], keep: set[int], runs: set[str]
) -> list[int]:
    """Versions outside ``keep`` with objects in ``schema``: its tables (``BASE TABLE``) and views — a view only
    when it was made by a run of this release (its release id among ``runs``, the ids of the release's runs;
    another release may be named ``<name>_v1``).  A kept version's views are not read: whoever made them, that
    version is no orphan (on Spark a statement a view, every night).  For example ``inp_v1`` (a view),
    ``inp_rows_v2`` (a table) and ``inp_v3`` (a view) with ``keep`` {1}: [2], and [2, 3] if ``inp_v3``'s release
    id names a run of ``inp`` — ``inp_v1``'s properties are not read."""
    out = set()
    tables_re = re.compile(pub.VERSION_TABLES.format(name=re.escape(name)))
    views_re = re.compile(pub.VERSION_VIEWS.format(name=re.escape(name)))
    for obj, kind in found.items():
        if kind != "VIEW" and (m := tables_re.match(obj)):
            out.add(int(m.group(1)))
        elif (
            kind == "VIEW" and (m := views_re.match(obj)) and int(m.group(1)) not in keep and int(m.group(1)) not in out
        ):
            run = properties(session, schema, obj).get(RELEASE)
            if run in runs:
                out.add(int(m.group(1)))
    return sorted(out - keep)


def _shown(session: Session, schema: str, name: str, found: dict[str, str]) -> tuple[int, str] | None:
    if name not in found:
        return None
    props = properties(session, schema, name)
    if VERSION not in props:
        raise ReleaseError(
            f"{schema}.{name} exists but is not a Veil release this catalog knows; drop it or "
            "choose another [release] name"
        )
    return int(props[VERSION]), props.get(RELEASE, "")


def _adopt(
    session: Session, tables: catalog.CatalogTables, name: str, schema: str, version: int, release_id: str
) -> None:
    """Record version ``version``, which the views already show, as published (its run was killed after
    switching them and before writing its catalog row): the pointer first, then the row, as a run does."""
    when = now()
    message = (
        f"recorded by a later run: this run was killed after the views showed version {version} (verified) "
        "and before it wrote its catalog row"
    )
    # appended whole, read by nothing first, as ``move_pointer`` does: the log's view shows the newest entry
    session.execute(pub.add_pointer(tables.publications, name, schema, version, when), "moving the pointer")
    session.execute(
        qc.adopt_run(
            tables.releases,
            release_id,
            version,
            when,
            message,
            f"{schema}.{name}_v{version}",
            tables.series_versions,
            tables.series_state,
            generation(name, version),
        ),
        "recording the version the views show",
    )


def _repoint(session: Session, tables: catalog.CatalogTables, name: str, version: int) -> None:
    """The pointer names ``version``, the version the views show."""
    pointer = session.rows(pub.read_pointer(tables.publications, name), "reading the pointer")
    if pointer and int(pointer[0][0]) != version:
        session.execute(pub.set_pointer(tables.publications, name, version, now()), "moving the pointer")


def _burn(
    session: Session,
    tables: catalog.CatalogTables,
    versions: Sequence[tuple[Any, ...]],
    status: dict[int, str],
    numbered: set[int],
) -> bool:
    """A version the ledger recorded (``versions``: its rows) but that was never published (neither kept in
    ``status`` nor held by a run, ``numbered``) keeps its number on its (failed) run; returns whether one did."""
    r = tables.releases
    kept = False
    for version, release_id, *_layout in versions:
        if int(version) in status or int(version) in numbered:
            continue
        session.execute(
            qc.keep_number(
                r,
                release_id,
                int(version),
                f"interrupted after the ledger recorded version {version}, before any view "
                "showed it; its number is not reused",
            ),
            "keeping a version number",
        )
        kept = True
    return kept


# --- one run per release name: a lock table -------------------------------------------------------------------


def lock_name(name: str) -> str:
    return f"veil_lock_{name}"


@contextmanager
def table_lock(session: Session, schema: str, name: str, wait: float) -> Iterator[None]:
    """Hold ``<catalog schema>.veil_lock_<name>`` while the block runs.  Creating a table is one metastore
    operation that fails when it exists, so of two runs exactly one gets it; its properties name the holder
    (host, PID, start).  A lock whose holder was on this host and whose PID no longer runs (a killed run) is
    taken over: renamed away (of two runs renaming it, one fails), dropped, taken again.  Any other holder:
    retried for ``wait`` seconds, then ``BusyError`` naming the lock table and how to clear it."""
    lock = relation(lock_name(name), schema)
    token = uuid.uuid4().hex
    mine = {
        "veil.host": socket.gethostname(),
        "veil.pid": str(os.getpid()),
        "veil.started_at": now().isoformat(sep=" ", timespec="seconds"),
        "veil.run": token,
    }
    deadline = time.monotonic() + wait
    while not _take(session, lock, mine):
        holder = _holder(session, lock)
        if holder is not None and _dead(holder):
            _take_over(session, lock)
            continue
        if time.monotonic() >= deadline:
            raise BusyError(_busy(schema, name, holder))
        time.sleep(1.0)
    try:
        yield
    finally:
        try:
            if (_holder(session, lock) or {}).get("veil.run") == token:
                session.execute(drop_table(lock.name, schema), f"releasing the lock {schema}.{lock.name}")
        except VeilError:
            pass  # the connection is gone: the next run on this host takes the lock over


def _take(session: Session, lock: sa.TableClause, mine: dict[str, str]) -> bool:
    try:
        session.execute(pub.CreateLock(lock, mine), f"taking the lock {lock.schema}.{lock.name}")
        return True
    except BackendError as exc:
        if "ALREADY_EXISTS" in str(exc):
            return False
        raise


def _holder(session: Session, lock: sa.TableClause) -> dict[str, str] | None:
    try:
        return properties(session, str(lock.schema), lock.name)
    except BackendError:
        return None  # released meanwhile


def _dead(holder: dict[str, str]) -> bool:
    """The holder ran on this host and its PID is gone (a reused PID looks alive: the safe side)."""
    if holder.get("veil.host") != socket.gethostname() or not holder.get("veil.pid", "").isdigit():
        return False
    try:
        os.kill(int(holder["veil.pid"]), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _take_over(session: Session, lock: sa.TableClause) -> None:
    stale = relation(f"{lock.name}_stale_{uuid.uuid4().hex[:8]}", lock.schema)
    try:
        session.execute(pub.RenameTable(lock, stale), f"taking over the stale lock {lock.schema}.{lock.name}")
    except BackendError:
        return  # another run took it over first
    session.execute(drop_table(stale.name, lock.schema), f"dropping the stale lock {lock.schema}.{stale.name}")


def _busy(schema: str, name: str, holder: dict[str, str] | None) -> str:
    who = (
        f"held by PID {holder.get('veil.pid')} on {holder.get('veil.host')} since {holder.get('veil.started_at')}"
        if holder
        else "held"
    )
    return (
        f"another `veil release` of {name!r} is running (lock table {schema}.{lock_name(name)} {who}); nothing "
        f"was published by this run — try again later or pass --wait; if that run is gone (its host went "
        f"down), clear the lock with DROP TABLE {schema}.{lock_name(name)}"
    )
