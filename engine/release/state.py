"""One release run's state as the job builds it (``Run``), and a version as publishing needs it once the series step
decided (``Content``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from veil import catalog
from veil.backends.base import Session
from veil.config import Config, ReleaseConfig
from veil.counts import NodeCounts
from veil.privacy import Specification
from veil.release.publication import Publication
from veil.release.runs import Runs
from veil.warehouse import Warehouse


@dataclass
class Run:
    """One run's state, built step by step."""

    config: Config
    rel: ReleaseConfig
    session: Session
    tables: catalog.CatalogTables
    publication: Publication
    release_id: str
    on_step: Callable[[str], None]
    runs: Runs  # the release's runs, read under the lock before this one started
    wh: Warehouse = field(init=False)
    published: list[str] = field(default_factory=list)
    source: Any = None
    fingerprint: str = ""
    spec: Specification = field(init=False)
    dry_run: bool = False  # ``--dry-run``: rolled back where a release commits (``job._rehearse``)


@dataclass(frozen=True)
class Content:
    """A version as publishing it needs it once the series step decided: the counts its rows must recount to
    (published, and held back as their blocks' context), the rows held back, and its ledger record — written
    already where the run's transaction holds it (nothing is seen before the commit), else ``record`` after
    the checks, given the version's blocks table (a first version's cells are read from it).  The candidate's
    cells are gone by then."""

    number: int
    node: tuple[int, ...]
    columns: tuple[str, ...]
    rows_published: int
    shown: NodeCounts
    hidden: NodeCounts
    held: list[tuple[Any, ...]]
    when: Any
    record: Callable[[sa.Table], None] | None
    rows: Any = None  # the version's rows as a statement (a cohort series' members), else the source at the node
    check: Callable[[sa.Table], dict[str, float | None]] | None = None  # its verification, else ``verify``
