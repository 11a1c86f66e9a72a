"""Where a cohort series keeps its members between nights (docs/series.md §2, docs/spark.md §7): the members
table and the ``series_state`` row that names it, as the backend's publication protocol can keep them
(``Publication.member_store``).

- ``IN_PLACE`` (the transactional protocol: DuckDB, PostgreSQL): one table ``<name>_members``, changed by each
  night's statements in the release's transaction, and one ``series_state`` row per release, replaced at the
  night's end.  A run that fails rolls them back with everything else.
- ``GENERATIONS`` (the autocommit protocol: Spark): version N's members are a table of its own,
  ``<name>_members_v<N>``, copied from the last committed version's and changed by copies swapped in
  (``queries.ddl.private``) while nothing reads it; its ``series_state`` row is appended at the night's end.  A
  run that fails leaves that table and row behind and nothing reads them: ``current`` takes the row of the
  newest version the catalog holds as published or expired (a run's catalog row is its commit, docs/spark.md
  §4), and the next night drops the members tables of every other version.

``current`` is the one rule for both: a release's row for ``<name>_members`` where it has one, else the row of
its newest kept version's generation.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from veil import queries as q
from veil.backends.base import Session
from veil.queries import members as mq
from veil.queries.ddl import private, swapped
from veil.release.runs import Runs


def plain(name: str) -> str:
    """The one members table of release ``name`` kept in place.

    >>> plain("census")
    'census_members'
    """
    return q.dimensions.fit(f"{name}_members")


def generation(name: str, version: int) -> str:
    """Version ``version``'s members table of release ``name`` kept as generations.

    >>> generation("census", 12)
    'census_members_v12'
    """
    return q.dimensions.fit(f"{name}_members_v{version}")


def moving(members: str) -> str:
    """Where a members table's rows are relabeled when the series' node moves up (``delaybound``).

    >>> moving("census_members_v12")
    'census_members_v12_moving'
    """
    return q.dimensions.fit(f"{members}_moving")


def current(name: str, members: Collection[str], kept: Iterable[int]) -> str | None:
    """Which of the ``series_state`` rows of release ``name`` (by the members table each names) holds the series
    now: ``<name>_members`` kept in place, else the newest of the ``kept`` versions' generations (a version some
    run left unpublished is never one); ``None``: no series.

    >>> current("c", ["c_members_v3", "c_members_v4", "c_members_v5"], kept=[1, 3, 4])
    'c_members_v4'
    >>> current("c", ["c_members"], kept=[7]), current("c", ["c_members_v5"], kept=[1, 3])
    ('c_members', None)
    """
    if plain(name) in members:
        return plain(name)
    for version in sorted(kept, reverse=True):
        if generation(name, version) in members:
            return generation(name, version)
    return None


@dataclass(frozen=True)
class InPlace:
    """One members table changed in the release's transaction; one ``series_state`` row replaced."""

    def table(self, members: sa.Table) -> sa.Table:
        return members

    def tonight(
        self, session: Session, schema: str, name: str, previous: str | None, version: int, runs: Runs, fresh: bool
    ) -> str:
        """The members table version ``version`` works on: the one table (a new series makes it again)."""
        return plain(name)

    def record(self, session: Session, state: sa.Table, values: Mapping[str, Any]) -> None:
        """The series' row once tonight's step is done (in the release's transaction)."""
        session.execute(mq.forget_state(state, str(values["name"])), "recording the series")
        session.execute(mq.record_state(state, values), "recording the series")


@dataclass(frozen=True)
class Generations:
    """A members table per version, the run's own until its catalog row commits it; a ``series_state`` row
    appended per version."""

    def table(self, members: sa.Table) -> sa.Table:
        return private(members)

    def tonight(
        self, session: Session, schema: str, name: str, previous: str | None, version: int, runs: Runs, fresh: bool
    ) -> str:
        """Version ``version``'s generation: every other version's members tables dropped but ``previous`` (those
        of runs that failed, the one before ``previous``), then ``previous`` copied into it — unless the version
        begins a new series (``fresh``: its caller makes the table, and drops nothing it reads)."""
        ours = {generation(name, v) for v in runs.numbered() | {version}} - {previous}
        leftovers = {n for g in ours for n in (g, swapped(g), moving(g))}
        what = "dropping the members tables of other versions"
        for found in sorted(leftovers & set(session.relations(schema))):
            session.execute(q.drop_table(found, schema), what)
        target = generation(name, version)
        if previous is not None and not fresh:
            what = f"copying {schema}.{previous} into {schema}.{target}"
            session.execute(mq.generation(schema, previous, target), what)
        return target

    def record(self, session: Session, state: sa.Table, values: Mapping[str, Any]) -> None:
        """The series' row for this version's generation, appended (``current`` reads it once the version is
        published)."""
        session.execute(mq.record_state(state, values), "recording the series")


IN_PLACE, GENERATIONS = InPlace(), Generations()
MemberStore = InPlace | Generations
