"""The release job: config → hierarchies → search → series → publish → verify → repoint → catalog.
The only writer of release objects.

A release is never half-published.  After a short committed "running" row in the catalog, everything
happens in one transaction that reads one snapshot of the source: the base frequency set, the node (the
previous version's while it still satisfies the models, else the search's optimum), the candidate's cells
(a first version's stay in the database, which writes them to the ledger: ``veil.release.firstversion``),
the series step (docs/series.md: compare with every earlier version, hold back what would expose someone),
the ledger's record of the version (written first, so that no array of cells is held while the rows are), the
rows inserted into ``<schema>.<name>_rows`` as version N, the hierarchies it used published as dimension
tables (``veil.release.dimensions``), an independent recount with every checker run again, the pointer moved
to N, expired versions' rows deleted, and the catalog row marked published (docs/publication.md).  Any
failure — an error, Ctrl-C, SIGTERM or a killed process — rolls all of it back: the previous version stays
published and the catalog row says ``failed`` (a run killed outright is marked failed by the next run, which
holds the lock).  That is the transactional publication; the backend chooses the protocol
(``veil.release.publication``): where statements commit on their own (Spark), the autocommit one runs its steps
in the order of docs/spark.md instead — version table, recount, ledger, views last, catalog row last — and the
next run repairs what a killed run left.  This module only calls the protocol's steps.

Once the commit happened, the version is published whatever happens next: a step after it (the clean-up of
expired versions' views, the report) that fails or is interrupted leaves the row ``published``, and the run
ends with a warning and exit 0; the next run, a skipped one too, finishes the clean-up (``_stopped``).

Test failpoints: ``VEIL_FAILPOINT=<step>`` raises at that step (search, materialize, verify, views,
catalog; after the commit: committed, cleanup-views, cleaned, report); ``VEIL_FAILPOINT=corrupt`` deletes rows
of the new version before verification (which must then fail); ``VEIL_FAILPOINT=pause:<step>`` sleeps there
so a test can kill or interrupt the process; ``stall:<step>`` runs a long statement there instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import sqlalchemy as sa

from veil import catalog, log
from veil import queries as q
from veil.backends.base import Session
from veil.catalog import Status
from veil.blockfloor import BlockFloor
from veil.config import Config, ReleaseConfig, require_release, sensitive_needed
from veil.counts import NodeCounts
from veil.errors import CTRL_C, ConfigError, NoSolutionError, ReleaseError, SourceError, VeilError, redact
from veil.hierarchy import Hierarchy
from veil.hierarchytables import resolve as resolve_hierarchies
from veil.lattice import Lattice
from veil.privacy import Specification
from veil.queries import catalog as qc
from veil.queries.ddl import create_table, relation
from veil.release import cohort_series, fetchedcells, firstversion, laterversion
from veil.release import ledger as ledger_mod
from veil.release import series
from veil.release.alignment import Layout
from veil.release.differences import Judge
from veil.release.outcome import VERSION_VIEW, WOULD_PUBLISH, Outcome, Written
from veil.release.publication import Publication, check_grants, grant, publication_for
from veil.release.runs import Runs
from veil.release.process import connect, failpoint, interruptible, now
from veil.release.verify import Counted, same, verify
from veil.run import metric_for, no_solution, search_lattice
from veil.search import SearchResult
from veil.warehouse import Warehouse

CELL_CHUNK = 1 << 18  # candidate cells per fetched chunk
CANDIDATE = "counting the candidate's cells"
INIT_WAIT = 60.0  # seconds ``veil init`` waits by default for a DuckDB file another process holds


def init(config: Config, wait: float = INIT_WAIT) -> tuple[str | None, str | None]:
    """``veil init``: apply the catalog migrations (create or upgrade).  Two at once serialize (docs/publication.md
    §5): on PostgreSQL on an advisory lock; on DuckDB, where the first holds the file, the second waits for it up
    to ``wait`` seconds (``veil.lockwait``) and then finds the catalog up to date."""
    _backend, session, ctx = connect(config, wait)
    try:
        failpoint("init")
        return catalog.upgrade(session, config.catalog_schema)
    finally:
        ctx.__exit__(None, None, None)


def release(
    config: Config,
    *,
    force: bool = False,
    wait: float = 0.0,
    on_step: Callable[[str], None] = lambda _m: None,
    dry_run: bool = False,
) -> Outcome:
    """``veil release``: publish a new version of the release, or say why not; ``dry_run``: what it would
    publish, with nothing written (``_rehearse``)."""
    rel = require_release(config)
    started = time.perf_counter()
    backend, session, ctx = connect(config, wait)
    try:
        tables = catalog.require(session, rel.catalog_schema)
        publication = publication_for(session, tables, config)
        if dry_run:
            outcome = _rehearse(config, publication, force, wait, on_step)
            return replace(outcome, seconds=time.perf_counter() - started, statements=session.statements)
        with publication.lock(wait), interruptible():
            runs = Runs.read(session, tables.releases, rel.name)
            if runs.running:
                _close_interrupted(session, tables, rel.name)
            if publication.repair(runs):
                runs = Runs.read(session, tables.releases, rel.name)
            release_id = str(uuid.uuid4())
            session.execute(
                qc.start_run(tables.releases, release_id, rel.name, now(), config.text, config.digest, backend.name),
                "recording the release as running",
            )
            session.commit()
            try:
                outcome = _run(config, publication, release_id, force, on_step, runs)
            except (KeyboardInterrupt, Exception) as exc:  # an error, Ctrl-C or SIGTERM, a bug: the row says so now
                outcome = _stopped(session, tables, rel, release_id, exc)
    finally:
        ctx.__exit__(None, None, None)
    return replace(outcome, seconds=time.perf_counter() - started, statements=session.statements)


def _rehearse(
    config: Config, publication: Publication, force: bool, wait: float, on_step: Callable[[str], None]
) -> Outcome:
    """``veil release --dry-run``: the whole run — node, series step, rows, verification — in the release's
    transaction, rolled back where a release commits (``_publish``); no catalog row, not even ``running``, and
    no repair of what earlier runs left (``_close_interrupted``, ``upgrade_legacy``, expired views).  It holds the
    release's lock like a run (its statements would otherwise wait on a concurrent run's rows) and the DuckDB
    file while it works.  Where statements commit on their own (Spark) nothing can be rolled back: refused
    (``Publication.rehearse``)."""
    publication.rehearse()
    with publication.lock(wait), interruptible():
        on_step("dry run: every step in one transaction, rolled back at the end; nothing is written")
        try:
            runs = Runs.read(publication.session, publication.tables.releases, publication.name)
            outcome = _run(config, publication, str(uuid.uuid4()), force, on_step, runs, dry_run=True)
        finally:
            publication.session.rollback()
    if outcome.status == Status.SKIPPED:
        return replace(outcome, dry_run=True, message=f"dry run: {outcome.message}")
    return outcome


def _stopped(
    session: Session, tables: catalog.CatalogTables, rel: ReleaseConfig, release_id: str, exc: BaseException
) -> Outcome:
    """A run that raised ``exc``: what the database committed decides.  A row still ``running`` (nothing was
    committed) is marked failed and the error raised again; a row ``published`` or ``skipped`` was committed
    before a step after the commit failed or was interrupted (the clean-up of expired views, the report; a
    connection lost during COMMIT itself): the run's outcome stands, with a warning (exit 0)."""
    # a driver's interrupt that reached here unwrapped (DuckDB's "Query interrupted" on a fetch)
    stopped = (
        session.backend.interruption(exc) if isinstance(exc, Exception) and not isinstance(exc, VeilError) else None
    )
    reason = _reason(stopped or exc)
    status = _fail(
        session,
        tables,
        release_id,
        f"{reason}; nothing was published" if isinstance(stopped or exc, KeyboardInterrupt) else reason,
    )
    if status not in (Status.PUBLISHED, Status.SKIPPED):
        if stopped is not None:
            raise stopped from None
        raise exc
    return _committed(session, tables, rel, release_id, reason)


def _reason(exc: BaseException) -> str:
    """Why a run stopped, in one line: its error, ``interrupted: <what>`` (never empty: a bare Ctrl-C's
    ``KeyboardInterrupt`` has no message), or a bug's ``internal error``."""
    if isinstance(exc, KeyboardInterrupt):
        return f"interrupted: {str(exc) or CTRL_C}"
    if isinstance(exc, VeilError):
        return str(exc)
    return f"internal error: {type(exc).__name__}: {exc}"


def _fail(session: Session, tables: catalog.CatalogTables, release_id: str, error: str) -> str | None:
    """Mark the run failed, unless its row is no longer ``running``: a version whose commit happened stays
    published whatever failed after it (even a commit whose answer was lost, on a new connection).  Returns
    the row's status as the database has it, ``None`` when the database cannot be reached (the next run marks
    a row left running failed)."""
    r = tables.releases
    try:
        session.rollback()
        session.execute(qc.fail_run(r, release_id, now(), redact(error)[:4000]), "recording the failure")
        session.commit()
        return str(session.scalar(q.runs.status(r, release_id), "reading the run's status"))
    except VeilError:
        return None  # the connection is gone: the next run marks the row failed


def _close_interrupted(session: Session, tables: catalog.CatalogTables, name: str) -> None:
    """Runs still 'running' while we hold the lock died mid-release (killed): mark them failed."""
    session.execute(
        qc.close_interrupted(
            tables.releases, name, now(), "interrupted: the process ended before the release finished"
        ),
        "closing interrupted runs",
    )
    session.commit()


@dataclass
class _Run:
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
    dry_run: bool = False  # ``--dry-run``: rolled back where a release commits (``_rehearse``)


def _run(
    config: Config,
    publication: Publication,
    release_id: str,
    force: bool,
    on_step: Callable[[str], None],
    runs: Runs,
    dry_run: bool = False,
) -> Outcome:
    session, tables = publication.session, publication.tables
    session.begin_snapshot()
    config = resolve_hierarchies(session, config)  # table-backed hierarchies, read in the release's snapshot
    rel = require_release(config)
    run = _Run(config, rel, session, tables, publication, release_id, on_step, runs, dry_run=dry_run)
    skipped = _inspect(run, force)
    if skipped is not None:
        _expire_views(run, {})  # what an earlier run's clean-up left
        return skipped
    wh = run.wh
    wh.prepare()
    domains = {d.name: d for d in wh.domains}
    for model in config.models:
        model.validate(domains)
    run.spec = Specification(config.models, config.search.max_suppression)
    if run.rel.series == "cohort":
        return _cohort(run)
    ledger = ledger_mod.load(session, tables, run.rel.name, cells=False)
    node, note, result = _choose_node(run, ledger)
    counts = wh.counts(node)
    held = _held(run, node)  # before the base held here is dropped
    wh.end_counting()  # no node is counted again: the memory of the search's tables goes to the candidate's
    suppressed = run.spec.evaluate(counts, wh.rows).failing
    counts = counts.uncached()  # the checkers' cached tables (73 MB at the 10M t-closeness optimum) freed
    version = _next_version(run)
    on_step("counting the candidate's cells")
    content, info = _series_step(run, ledger, node, version, counts, suppressed, held)
    info.update(note)
    del ledger
    outcome = _publish(run, content, counts, suppressed, info, result)
    return _report(run, outcome, result, counts, suppressed)


def _cohort(run: _Run) -> Outcome:
    """A version of a cohort series (docs/series.md): the series' node and members, tonight's step, published.
    A series' first version — the release's first, or ``--new-series`` — searches the node; a later one keeps it,
    and refuses a config that changed what the series keeps (its shape)."""
    config, session, wh, rel = run.config, run.session, run.wh, run.rel
    run.publication.check_policy(rel.series, str(config.path))
    cohort_series.require_monotone(config)
    s = cohort_series.Series(session, run.tables, rel.name, config, wh, tuple(run.published), _identity(run))
    state = cohort_series.load(session, run.tables, rel.name)
    version = _next_version(run)
    first = state is None or rel.new_series
    if not first and state is not None and state.shape != cohort_series.shape(config, wh, s.published, s.identity):
        raise ConfigError(
            f"{config.path}: the quasi-identifiers, hierarchies, published columns, key or models of "
            f"release {rel.name!r} changed since its series {state.series} began (version "
            f"{state.started}); a series keeps them (docs/series.md §5): run `veil release "
            "--new-series` to start a new one (`veil audit --series` shows what that exposes)"
        )
    result: SearchResult | None = None
    failpoint("search")
    if first:
        previous = list(state.node) if state is not None else None
        reason = "a new series" if state is not None else "first version"
        node, note, result = _search(run, previous, reason, _floor(config))
    else:
        assert state is not None
        node, note = state.node, {"node": "series", "previous_node": list(state.node)}
    counts = wh.counts(node)
    wh.end_counting()
    suppressed = run.spec.evaluate(counts, wh.rows).failing if first else np.zeros(counts.n_blocks, dtype=bool)
    counts = counts.uncached()
    run.on_step("the series step: tonight's arrivals and departures")
    state = cohort_series.start(s, node, version, state) if first else state
    assert state is not None
    night = cohort_series.night(s, state, version, first, rel.erase_departed)
    info = {**night.info, **note}
    if first:  # the search's suppressed rows are its own count; what else waits is deferred
        info["rows_deferred"] = night.waiting - int(counts.sizes[suppressed].sum())
    content = _Content(
        version,
        tuple(node),
        tuple(run.published),
        night.published,
        counts,
        counts,
        [],
        now(),
        None,
        night.rows,
        night.check,
    )
    outcome = _publish(run, content, counts, suppressed, info, result)
    return _report(run, outcome, result, counts, suppressed)


def _identity(run: _Run) -> tuple[str, ...]:
    """The columns that tell people apart: ``[release] key`` with the published columns (a change of what is
    published is a departure and an arrival), else every column of the source."""
    key = run.rel.key
    missing = [c for c in key if c not in run.wh.columns]
    if missing:
        raise SourceError(
            f"[release] key names column(s) {', '.join(map(repr, missing))} that {run.wh.table_name!r} does not have"
        )
    if key:
        return tuple(dict.fromkeys([*key, *run.published]))
    return tuple(run.wh.columns)


def _next_version(run: _Run) -> int:
    return run.runs.highest() + 1


@dataclass(frozen=True)
class _Content:
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


def _settle(
    run: _Run,
    ledger: ledger_mod.Ledger,
    cand: ledger_mod.Candidate,
    counted: Counted,
    start: np.ndarray,
    published: np.ndarray,
    early: bool,
) -> _Content:
    """What publishing needs of the candidate (``_Content``), the ledger recorded first when ``early``
    (``Publication.staged_ledger``): every array of cells is then free before the version's rows are written."""
    held = start - published
    rows = [(k, *cand.codes(i), *cand.raw(i), int(held[i])) for k, i in enumerate(np.flatnonzero(held > 0).tolist())]
    when = now()

    def record(_block_rows: sa.Table | None = None) -> None:
        ledger_mod.record(run.session, ledger, cand, published, run.release_id, run.rel.series, when)

    if early:
        record()
    layout = cand.version.layout
    return _Content(
        cand.version.number,
        tuple(layout.node),
        tuple(layout.columns),
        int(published.sum()),
        counted.counts(published),
        counted.counts(cand.version.counts - published),
        rows,
        when,
        None if early else record,
    )


def _series_step(
    run: _Run,
    ledger: ledger_mod.Ledger,
    node: tuple[int, ...],
    version: int,
    counts: NodeCounts,
    suppressed: np.ndarray,
    held: _Cells | None = None,
) -> tuple[_Content, dict[str, Any]]:
    """The series step and the ledger's record of the version, as the publication allows
    (``Publication.staged_ledger``): staged — a first version's cells copied by the database (nothing to compare:
    they stay there), a later one compared shard by shard, the ledger written at once — or else recorded once the
    version is verified."""
    staged = run.publication.staged_ledger
    if staged and not ledger.versions:
        ledger_mod.read_cells(run.session, ledger)
        return _first(run, ledger, node, version, counts, suppressed), _series_info(run.rel.series)
    return _later(run, ledger, node, version, counts, suppressed, staged, held)


def _later(
    run: _Run,
    ledger: ledger_mod.Ledger,
    node: tuple[int, ...],
    version: int,
    counts: NodeCounts,
    suppressed: np.ndarray,
    staged: bool,
    held: _Cells | None = None,
) -> tuple[_Content, dict[str, Any]]:
    """A version after the first (or any, unless ``staged``): compared with every earlier one shard by shard
    (``veil.release.laterversion``) where the ledger is ``staged`` and the versions and models allow shards, else with
    every cell in memory — unless ``staged``, the candidate's ``held`` here or fetched whole with its values
    (``fetchedcells``)."""
    if not staged:  # written after the checks: the cells come here whole — held, else in one statement
        if held is None:
            layout = _layout(run, node)
            distinct, chunks = fetchedcells.fetch(
                run.session, _valued_cells(run, layout), len(run.wh.attributes), len(layout.columns), CANDIDATE
            )
            held = _Cells(layout, distinct, chunks)
        return _in_memory(run, ledger, version, counts, suppressed, held, staged)
    # cells compared in shards are read from a copy sorted by shard (``laterversion.run``): counted narrow, as the first
    # version's, since a GROUP BY of 64-bit keys reached DuckDB's 512 MB at 100M rows (2 of 3 runs)
    shardable = laterversion.plan(ledger, _layout(run, node), run.spec, 0) is not None
    cells = _count_cells(run, node, narrow=shardable)
    total = int(run.session.scalar(q.count_rows(relation(q.CELLS)), CANDIDATE))
    sharding = laterversion.plan(ledger, cells[0], run.spec, total + ledger_mod.cell_rows(run.session, ledger))
    if sharding is None:
        in_memory = _Cells(cells[0], cells[1], _streamed(run))
        return _in_memory(run, ledger, version, counts, suppressed, in_memory, staged)
    return _sharded(run, ledger, node, version, counts, suppressed, cells, sharding)


@dataclass(frozen=True)
class _Cells:
    """A candidate's cells as they come: its layout, its distinct published value tuples (in ``vid`` order) and
    its cells (``fetchedcells.Chunks``)."""

    layout: Layout
    distinct: list[tuple[Any, ...]]
    chunks: fetchedcells.Chunks


def _in_memory(
    run: _Run,
    ledger: ledger_mod.Ledger,
    version: int,
    counts: NodeCounts,
    suppressed: np.ndarray,
    cells: _Cells,
    staged: bool,
) -> tuple[_Content, dict[str, Any]]:
    """The version compared with every earlier one with all their cells in memory, the candidate's ``cells``."""
    ledger_mod.read_cells(run.session, ledger)
    cand, counted, start = _candidate(run, ledger, version, counts, suppressed, cells)
    published, info = _series(run, ledger, cand, counted, start)
    content = _settle(run, ledger, cand, counted, start, published, staged)
    return content, info  # the version's rows are written with none of its cells in memory


def _held(run: _Run, node: tuple[int, ...]) -> _Cells | None:
    """The candidate's cells rolled up from the base held here (``Warehouse.local``), with no statement, where they
    come into Veil whole and the base counts every published column (the models read them all: k + entropy on the
    1M census, one statement of 2.7 s less on Spark); else ``None``.  A base does not count a column for this alone:
    the source's grouped cells would hold its values where they hold a NULL flag, 60-80 MiB more at 1M rows."""
    wh = run.wh
    if run.publication.staged_ledger or wh.local is None:
        return None
    layout = _layout(run, node)
    if not set(layout.columns) <= set(wh.sensitive):
        return None
    cells = wh.local.counts(node)
    # a counted column's codes index its values, which hold no NULL (the scan counts those apart: SourceScan.scan)
    values = [(cells[f"s{wh.sensitive.index(c)}"].astype(np.int64), wh.raw_values[c]) for c in layout.columns]
    codes = {f"g{i}": cells[f"g{i}"] for i in range(len(wh.attributes))}
    distinct, chunks = fetchedcells.held(codes, values, cells["n"])
    return _Cells(layout, distinct, chunks)


def _valued_cells(run: _Run, layout: Layout) -> Any:
    not_null = list(run.config.sensitive) if run.config.source.nulls == "drop" else []
    return q.valued_cells(run.source, run.wh.layout, layout.node, run.wh.attributes, layout.columns, not_null)


def _streamed(run: _Run) -> fetchedcells.Chunks:
    """The candidate's cells streamed from ``veil_cells`` (``_count_cells``), ordered by the database when asked;
    its working tables dropped once read."""
    d = len(run.wh.attributes)

    def chunks(ordered: bool) -> Iterator[dict[str, np.ndarray]]:
        order = [*(f"g{i}" for i in range(d)), "vid"] if ordered else []
        return _then(run.session.stream(q.coded_cells(d), order, CELL_CHUNK, CANDIDATE), lambda: _drop_cells(run))

    return chunks


def _sharded(
    run: _Run,
    ledger: ledger_mod.Ledger,
    node: tuple[int, ...],
    version: int,
    counts: NodeCounts,
    suppressed: np.ndarray,
    cells: tuple[Layout, list[tuple[Any, ...]], str | None],
    sharding: laterversion.Sharding,
) -> tuple[_Content, dict[str, Any]]:
    """A later version compared with every earlier one shard by shard (``laterversion.run``, the candidate's ``cells`` as
    ``_count_cells`` left them), recorded in the ledger at once and its working tables dropped."""
    layout, distinct, into = cells
    run.session.settle()  # the cells' transaction (a scratch database's) ends before anything is written
    ledger_mod.read_dictionary(run.session, ledger)
    if len(ledger.versions):
        run.on_step(f"comparing with {len(ledger.versions)} earlier version(s) in {sharding.count} shard(s)")
    numeric = _numeric(run, layout)
    task = laterversion.Task(
        run.session,
        ledger,
        run.wh,
        run.spec,
        Judge(run.config.models, run.config.sensitive, numeric),
        run.rel.series,
        version,
        tuple(node),
        layout,
        distinct,
        numeric,
        into,
    )
    result = laterversion.run(task, sharding, counts, suppressed)
    if result.exposures:
        _refuse(run, result.exposures)
    when = now()
    laterversion.record(task, result, run.release_id, when)
    _drop_counted(run, into)
    content = _Content(
        version,
        tuple(node),
        tuple(layout.columns),
        result.rows_published,
        result.shown,
        result.hidden,
        result.held,
        when,
        None,
    )
    return content, result.info


def _first(
    run: _Run,
    ledger: ledger_mod.Ledger,
    node: tuple[int, ...],
    version: int,
    counts: NodeCounts,
    suppressed: np.ndarray,
) -> _Content:
    """The release's first version (``veil.release.firstversion``): its ledger written by the database, from the version's
    blocks table once published (``firstversion.FromBlocks``) or, with kept columns, from the candidate's cells counted
    before; no cell reaches Python.  What it publishes is the search's counts less suppressed blocks."""
    layout = _layout(run, node)
    values = _count_values(run, layout)
    when = now()

    def write(blocks: firstversion.FromBlocks | None) -> None:
        firstversion.record(
            run.session,
            ledger,
            version,
            layout,
            run.wh.hierarchies,
            counts,
            suppressed,
            values,
            _numeric(run, layout),
            run.wh.rows,
            run.release_id,
            run.rel.series,
            when,
            blocks,
        )

    record: Callable[[sa.Table], None] | None = None
    if layout.keep:  # the blocks table has no kept column: the cells are counted from the source
        into = _count_cells(run, node, narrow=True, values=values)[2]
        run.session.settle()  # the cells' transaction (a scratch database's) ends before the ledger is written
        write(None)
        _drop_counted(run, into)
    else:

        def record(block_rows: sa.Table) -> None:
            write(firstversion.FromBlocks(block_rows, run.wh.layout, run.wh.attributes))
            run.session.execute(q.drop_table(q.VALUES), "recording the version's content")

    shown = counts.restrict(~suppressed)
    return _Content(
        version,
        tuple(node),
        tuple(layout.columns),
        int(shown.sizes.sum()),
        shown,
        counts.restrict(suppressed),
        [],
        when,
        record,
    )


def _report(
    run: _Run, outcome: Outcome, result: SearchResult | None, counts: NodeCounts, suppressed: np.ndarray
) -> Outcome:
    """``[release] report``: the published version's report next to the others (README "Audit and report").
    Written after the commit — the version is published either way; a report that cannot be written is said
    in the outcome's message and the log, and the job still exits 0."""
    failpoint("report")
    folder = run.rel.report
    if folder is None or outcome.version is None or outcome.node is None or run.dry_run:
        return outcome
    from veil.report import write_report  # the report's modules load only when a report is asked for

    run.on_step(f"writing the report into {folder}")
    if result is None:  # the previous node was kept: the report shows that one evaluation
        result = SearchResult(
            run.wh.attributes,
            run.wh.heights,
            Lattice(run.wh.heights).size,
            nodes_evaluated=1,
            evaluations=[(outcome.node, True, int(counts.sizes[suppressed].sum()), None)],
            any_passing=True,
        )
    try:
        path = write_report(
            Path(folder), run.config, run.wh, result, outcome.node, name=run.rel.name, version=outcome.version
        )
    except (OSError, VeilError) as exc:
        log.log.warning(
            f"release {run.rel.name!r} version {outcome.version} is published; its report was not written: {exc}"
        )
        return replace(outcome, message=f"{outcome.message}; the report was not written: {exc}")
    return replace(outcome, report=str(path), message=f"{outcome.message}; report {path}")


def _inspect(run: _Run, force: bool) -> Outcome | None:
    """Columns, the source's fingerprint, and the skip when neither it nor the config changed."""
    config, rel, session = run.config, run.rel, run.session
    r = run.tables.releases
    counted = tuple(sensitive_needed(config))  # the search counts what the models read; the rest is published
    run.wh = wh = Warehouse(
        session,
        config.source,
        config.quasi_identifiers,
        counted,
        null_checked=tuple(c for c in config.sensitive if c not in counted),
        on_step=run.on_step,
    )
    columns = wh.inspect()
    missing = [c for c in (*rel.keep_columns, *rel.drop_columns) if c not in columns]
    if missing:
        raise SourceError(
            f"[release] names column(s) {', '.join(map(repr, missing))} that source table "
            f"{wh.table_name!r} does not have"
        )
    run.published = [c for c in columns if c in set(wh.attributes) | set(config.sensitive) | set(rel.keep_columns)]
    for c in rel.keep_columns:
        if columns[c].sa_type is None:
            raise SourceError(f"keep_columns: column {c!r} of {wh.table_name!r} has a type Veil cannot copy")
    run.source = wh.source_table(run.published)
    run.on_step("fingerprinting the source")
    count, total = session.rows(q.fingerprint(run.source, run.published), "fingerprinting the source")[0]
    run.fingerprint = f"{int(count)}:{int(total)}"
    wh.source_scan.counted = int(count)  # the source's rows: the search need not count them again
    last = run.runs.latest()
    if not (last and not force and last[1] == config.digest and last[2] == run.fingerprint):
        return None
    session.rollback()
    message = (
        f"release {rel.name!r} is unchanged since version {last[0]} (same source fingerprint and "
        "config): nothing published (use --force to publish anyway)"
    )
    session.execute(qc.skip_run(r, run.release_id, now(), run.fingerprint, message), "recording the skip")
    session.commit()
    return Outcome(Status.SKIPPED, rel.name, run.release_id, message, version=last[0])


def _choose_node(run: _Run, ledger: ledger_mod.Ledger) -> tuple[tuple[int, ...], dict[str, Any], SearchResult | None]:
    """The previous version's node while it still satisfies the models (fewer cuts for a reader to intersect;
    ``series = "off"`` searches every time), else the search's optimum; the note says which and why."""
    wh, spec = run.wh, run.spec
    failpoint("search")
    last = ledger.latest
    previous = list(last.layout.node) if last is not None else None
    reason = "first version" if last is None else 'series = "off": searched'
    if last is not None and run.rel.series != "off":
        prev = tuple(last.layout.node)
        if last.layout.attributes == wh.attributes and all(0 <= lv <= h for lv, h in zip(prev, wh.heights)):
            if spec.evaluate(wh.counts(prev), wh.rows).passed:
                return prev, {"node": "kept", "previous_node": previous}, None
            reason = "the previous node no longer satisfies the models"
        else:
            reason = "the quasi-identifiers or their hierarchies' heights changed"
            return _search(run, previous, reason)
        found = _search(run, previous, reason)
        return _upward(run, prev, found) if run.rel.series == "refuse" else found
    return _search(run, previous, reason)


def _upward(
    run: _Run, previous: tuple[int, ...], found: tuple[tuple[int, ...], dict[str, Any], SearchResult]
) -> tuple[tuple[int, ...], dict[str, Any], SearchResult]:
    """``series = "refuse"`` never moves to a node finer than or incomparable with the previous one (a reader
    would intersect the two: docs/series.md §5): the search's optimum joined with the previous node, if that
    passes; else exit 2."""
    node, note, result = found
    joined = tuple(max(a, b) for a, b in zip(previous, node))
    if joined == node:
        return found
    if not run.spec.evaluate(run.wh.counts(joined), run.wh.rows).passed:
        raise NoSolutionError(
            f"series of {run.rel.name!r}: the models now need node {list(node)}, which is finer than "
            f"or incomparable with the previous node {list(previous)}, and {list(joined)} above both "
            "fails them; a series never moves down or sideways (docs/series.md §5): start a new "
            'series with --new-series (series = "cohort") or change the models'
        )
    return joined, {**note, "node": "searched, joined with the previous node"}, result


def _floor(config: Config) -> BlockFloor | None:
    """A cohort series' floor on its node's block sizes (``[release] series_block``), if the config sets one."""
    rel = config.release
    if rel is None or rel.series_block is None:
        return None
    return BlockFloor(rel.series_block, rel.series_block_share)


def _search(
    run: _Run, previous: list[int] | None, reason: str, floor: BlockFloor | None = None
) -> tuple[tuple[int, ...], dict[str, Any], SearchResult]:
    """The search's optimum — among the nodes where ``floor`` holds, if given — and the note saying the node
    was searched (and why)."""
    wh, spec = run.wh, run.spec
    run.on_step("searching the lattice")
    lattice = Lattice(wh.heights)
    with log.progress("searching", lattice.size) as update:
        admits = None if floor is None else floor.admits
        result = search_lattice(wh, run.config, ["optimal"], spec, update, admits)
    if result.optimal is None and floor is not None and spec.evaluate(wh.counts(lattice.top), wh.rows).passed:
        raise NoSolutionError(
            f"release {run.rel.name!r}: no node passes the models with {floor.describe()} "
            "([release] series_block); lower series_block or series_block_share"
        )
    if result.optimal is None:
        raise no_solution(wh, spec)
    changed = "searched" if previous is None or tuple(previous) != result.optimal.node else "searched (same node)"
    note = {"node": changed, "previous_node": previous, "node_reason": reason}
    if floor is not None:
        note["node_floor"] = floor.describe()
    return result.optimal.node, note, result


def _candidate(
    run: _Run, ledger: ledger_mod.Ledger, version: int, counts: NodeCounts, suppressed: np.ndarray, cells: _Cells
) -> tuple[ledger_mod.Candidate, Counted, np.ndarray]:
    """The source's ``cells`` at their layout's node (every row, suppressed blocks included), checked against the
    search's counts; ``start``: the rows the search keeps."""
    wh, layout, distinct, chunks = run.wh, cells.layout, cells.distinct, cells.chunks
    node = layout.node
    sizes = [len(h.domain(level)) for h, level in zip(wh.hierarchies, node)]
    ordered = not ledger_mod.packs(sizes, len(distinct))  # else numpy sorts the cells: the database need not
    cand = ledger_mod.candidate(
        ledger, version, layout, wh.hierarchies, chunks(ordered), distinct, _numeric(run, layout), ordered
    )
    counted = Counted(wh, tuple(node), cand, layout.columns)
    if not same(counted.counts(cand.version.counts), counts):
        raise ReleaseError("verification failed: the source's rows at the chosen node differ from the search's counts")
    keep = ~laterversion.among(cand.block_codes, counts.keys[suppressed])[cand.cell_block]
    return cand, counted, cand.version.counts if keep.all() else np.where(keep, cand.version.counts, 0)


def _count_values(run: _Run, layout: Layout) -> firstversion.Values:
    """The candidate's distinct published values ranked, with their rows (``veil_cell_values``, read in rank
    order)."""
    not_null = list(run.config.sensitive) if run.config.source.nulls == "drop" else []
    what = "counting the candidate's values"
    width = len(layout.columns)
    run.session.execute(q.values_table(run.source, run.wh.attributes, layout.columns, not_null), what)
    ranked = run.session.rows(q.cell_values(width), what)
    if any(int(r[-1]) != k for k, r in enumerate(ranked)):
        raise ReleaseError("the candidate's distinct published values came back without consecutive ranks")
    distinct = [tuple(r[:-2]) for r in ranked]
    nulls = [
        "none" if all(v[j] is not None for v in distinct) else "all" if all(v[j] is None for v in distinct) else "some"
        for j in range(width)
    ]
    return firstversion.Values(distinct, np.asarray([int(r[-2]) for r in ranked], dtype=np.int64), nulls)


def _count_cells(
    run: _Run, node: tuple[int, ...], narrow: bool = False, values: firstversion.Values | None = None
) -> tuple[Layout, list[tuple[Any, ...]], str | None]:
    """The candidate's working tables: its distinct published values ranked (``_count_values`` unless given,
    returned in rank order) and its cells (``veil_cells``: every row, suppressed blocks included), created in the
    scratch database returned (``None``: temporary) — read, and dropped there, before the release writes.

    ``narrow``: the cells' keys as the narrowest integers (``queries.cells_table``) — for cells that stay in the
    database or are copied (shards read a copy with 64-bit keys).  Cells streamed into Veil from ``veil_cells``
    keep 64-bit keys: with narrow ones a 10M census's second version peaked at 1,151 MB against 1,032 MB
    (``/usr/bin/time``, same run; the cause is inside DuckDB, not found)."""
    config, wh = run.config, run.wh
    layout = _layout(run, node)
    values = values if values is not None else _count_values(run, layout)
    not_null = list(config.sensitive) if config.source.nulls == "drop" else []
    into = run.session.scratch(wh.rows * q.cell_bytes(len(wh.attributes)))
    sizes = [len(h.domain(level)) for h, level in zip(wh.hierarchies, node)] if narrow else None
    run.session.execute(
        q.cells_table(
            run.source,
            wh.layout,
            node,
            wh.attributes,
            layout.columns,
            not_null,
            values.nulls,
            into,
            sizes,
            len(values.distinct),
        ),
        CANDIDATE,
    )
    return layout, values.distinct, into


def _layout(run: _Run, node: tuple[int, ...]) -> Layout:
    """The candidate's layout: its node, each QI's hierarchy chain, the published columns."""
    return Layout(
        node,
        tuple(ledger_mod.chain_of(h) for h in run.wh.hierarchies),
        tuple(run.config.sensitive),
        tuple(run.rel.keep_columns),
    )


def _drop_counted(run: _Run, into: str | None) -> None:
    """The candidate's working tables once the ledger holds the version (a scratch file or work schema goes with the session)."""
    for table in (q.VALUES,) if into is not None else (q.CELLS, q.VALUES):
        run.session.execute(q.drop_table(table), CANDIDATE)


def _numeric(run: _Run, layout: Layout) -> dict[str, bool]:
    return {c: bool(run.wh.columns[c].kind is not None and run.wh.columns[c].kind.numeric) for c in layout.columns}


def _then(chunks: Iterator[dict[str, np.ndarray]], done: Callable[[], None]) -> Iterator[dict[str, np.ndarray]]:
    """``chunks``, then ``done()`` once the last one was taken."""
    yield from chunks
    done()


def _drop_cells(run: _Run) -> None:
    """The candidate's working tables, once read: dropped, and (nothing is written yet) freed by the database
    before numpy sorts the cells (``Session.discard``)."""
    run.session.discard((q.CELLS, q.VALUES), CANDIDATE)


def _series(
    run: _Run, ledger: ledger_mod.Ledger, cand: ledger_mod.Candidate, counted: Counted, start: np.ndarray
) -> tuple[np.ndarray, dict[str, Any]]:
    """The series step (docs/series-ledger.md §4): what of the candidate to publish, and the catalog's record of it."""
    policy = run.rel.series
    info = _series_info(policy)
    if policy == "off" or not ledger.versions:
        return start, info
    run.on_step(f"comparing with {len(ledger.versions)} earlier version(s)")
    judge = Judge(run.config.models, run.config.sensitive, cand.numeric)
    exposures = series.check(ledger.dictionary, judge, replace(cand.version, counts=start), ledger.versions)
    if exposures:
        _refuse(run, exposures)
    info["versions_compared"] = len(ledger.versions)
    return start, info


def _refuse(run: _Run, exposures: list[series.Exposure]) -> None:
    """The series step cannot publish this version: exit 2, counts only (docs/series-ledger.md §4)."""
    raise NoSolutionError(
        _exposing(run.rel.name, exposures, "publishing this version would expose")
        + '; nothing was published (series = "cohort", the default, lets such changes wait)'
    )


def _series_info(policy: str) -> dict[str, Any]:
    """The catalog's record of the series step before it compares anything."""
    return {"policy": policy, "versions_compared": 0, "rows_deferred": 0}


def _exposing(name: str, exposures: list[series.Exposure], what: str) -> str:
    parts = [e.describe() for e in exposures[:6]]
    more = f"; and {len(exposures) - 6} more" if len(exposures) > 6 else ""
    return f"series of {name!r}: {what}: " + "; ".join(parts) + more


def _publish(
    run: _Run,
    content: _Content,
    counts: NodeCounts,
    suppressed: np.ndarray,
    info: dict[str, Any],
    result: SearchResult | None,
) -> Outcome:
    """The version written, verified, pointed to and recorded; committed (a dry run: rolled back)."""
    rel, session, pub = run.rel, run.session, run.publication
    version, node = content.number, content.node
    _materialize(run, content, counts, suppressed)
    rows_suppressed = int(counts.sizes[suppressed].sum())
    views, achieved = _verified(run, content, rows_suppressed)
    when = content.when
    run.on_step("repointing the views")
    failpoint("views")
    pub.point(version, when)
    failpoint("catalog")
    rows_published = content.rows_published
    _record(run, result, counts, suppressed, version, node, achieved, rows_published, rows_suppressed, info, when)
    expired = pub.expire(rel.keep_versions, version, when, run.runs.published())
    written = Written(
        rel.name,
        rel.schema,
        rel.series,
        version,
        node,
        rows_published,
        rows_suppressed,
        achieved,
        info.get("rows_deferred", 0),
        info,
        expired,
    )
    grant(session, rel.schema, [*pub.views(), *views], rel.grant_select_to)
    if run.dry_run:  # ``--dry-run``: decided, written and verified in the transaction, which ends here
        run.session.rollback()
        return written.outcome(WOULD_PUBLISH, run.release_id, written.rehearsed())
    session.commit()  # from here on the version is published, whatever happens (``_stopped``)
    _expire_views(run, info)
    return written.outcome(Status.PUBLISHED, run.release_id, written.published())


def _materialize(run: _Run, content: _Content, counts: NodeCounts, suppressed: np.ndarray) -> None:
    """The version's rows inserted into ``<name>_rows``: ``content.rows``, else the source at the node less
    suppressed blocks and the rows held back (``VEIL_FAILPOINT=corrupt``: one of them deleted again)."""
    config, rel, session, wh = run.config, run.rel, run.session, run.wh
    version, node = content.number, content.node
    run.on_step(f"materializing version {version} into {rel.schema}.{rel.name}_rows")
    failpoint("materialize", session)
    check_grants(session, rel.grant_select_to)  # before anything is written (an autocommit one stays written)
    types = {c: sa.Text() if c in wh.attributes else wh.columns[c].sa_type for c in run.published}  # QIs: labels
    pub = run.publication
    pub.prepare(types, run.release_id)
    if content.rows is not None:
        pub.insert(version, content.rows)
    else:
        withheld = _stage(session, wh, counts, suppressed, content)
        not_null = list(config.sensitive) if config.source.nulls == "drop" else []
        pub.insert(
            version,
            q.release_select(
                run.source,
                wh.layout,
                node,
                wh.attributes,
                run.published,
                bool(suppressed.any()),
                not_null,
                withheld,
                version,
            ),
        )
    if os.environ.get("VEIL_FAILPOINT") == "corrupt":
        session.execute(
            q.publication.delete_one_row(
                pub.rows, version, config.sensitive[0] if config.sensitive else wh.attributes[0]
            ),
            "test failpoint corrupt",
        )


def _verified(run: _Run, content: _Content, rows_suppressed: int) -> tuple[list[str], dict[str, float | None]]:
    """The version's blocks and dimension tables created, its rows verified independently (``verify``, or the
    content's own check) and its ledger record written if still due; returns the views created and the levels
    achieved."""
    pub, wh, version = run.publication, run.wh, content.number
    run.on_step("verifying the release independently")
    failpoint("verify")
    views = pub.insert_blocks(version)
    views += pub.dimensions(version, wh, run.config, content.node)
    achieved = (
        content.check(pub.block_rows)
        if content.check is not None
        else verify(run.session, wh, run.spec, pub.block_rows, version, content.shown, content.hidden, rows_suppressed)
    )
    if content.record is not None:
        content.record(pub.block_rows)
    return views, achieved


def _stage(
    session: Session, wh: Warehouse, counts: NodeCounts, suppressed: np.ndarray, content: _Content
) -> list[str] | None:
    """Temporary tables the rows' INSERT reads: suppressed blocks' codes and the rows held back; returns the
    held-back rows' value columns (``None`` when nothing is held back; empty when only QIs are published)."""
    if suppressed.any():
        sup = q.suppressed_table(len(wh.attributes))
        session.execute(create_table(sup), "listing suppressed blocks")
        session.bulk_load(
            sup, [tuple(int(c) for c in row) for row in counts.keys[suppressed]], "listing suppressed blocks"
        )
    if not content.held:
        return None
    columns = list(content.columns)
    table = q.withheld_table(len(wh.attributes), [wh.columns[c].sa_type for c in columns])
    session.execute(create_table(table), "listing the rows held back")
    session.bulk_load(table, content.held, "listing the rows held back")
    return columns


def _record(
    run: _Run,
    result: SearchResult | None,
    counts: NodeCounts,
    suppressed: np.ndarray,
    version: int,
    node: tuple[int, ...],
    achieved: dict[str, float | None],
    rows_published: int,
    rows_suppressed: int,
    info: dict[str, Any],
    when: Any,
) -> None:
    """The catalog row of a published version, its evaluated nodes and hierarchies."""
    wh, rel = run.wh, run.rel
    if result is not None and result.optimal is not None:
        metrics = {
            "metric": result.optimal.metric,
            "value": result.optimal.value,
            "nodes_evaluated": result.nodes_evaluated,
            "lattice_size": result.lattice_size,
        }
        evaluations = result.evaluations
    else:
        metric = metric_for(wh, run.config.search.metric, run.config)
        value = metric.score(counts, suppressed, wh.rows)
        metrics = {
            "metric": metric.name,
            "value": value,
            "nodes_evaluated": 1,
            "lattice_size": Lattice(wh.heights).size,
        }
        evaluations = [(node, True, rows_suppressed, value)]
    run.session.execute(
        qc.publish_run(
            run.tables.releases,
            run.release_id,
            version,
            when,
            dict(
                config_hash=run.config.digest,  # with the rows of hierarchies read from tables in this snapshot
                source_fingerprint=run.fingerprint,
                node=json.dumps(list(node)),
                achieved=json.dumps(achieved),
                metrics=json.dumps(metrics),
                rows_read=wh.stats.rows_read,
                rows_published=rows_published,
                rows_suppressed=rows_suppressed,
                rows_deferred=None,  # analysts read it (``<name>_releases``): info has it
                series=json.dumps(info),
                output_table=f"{rel.schema}.{VERSION_VIEW.format(name=rel.name, version=version)}",
                rows_dropped_null=wh.stats.rows_dropped_null,
            ),
        ),
        "recording the release",
    )
    _record_details(run.session, run.tables, run.release_id, wh, evaluations)


def _expire_views(run: _Run, info: dict[str, Any]) -> None:
    """After a run's commit (a version published, or a run skipped): drop the views of expired versions — their
    dimension views first — each in a short transaction that gives up rather than wait (docs/publication.md §3).
    What stays is noted in the run's catalog row; every later run, a skipped one too, tries again
    (``Publication.cleanup``; the autocommit publication dropped them in the run and repairs at the next one).
    Test failpoints at each step boundary after the commit: ``committed``, ``cleanup-views`` (the dimension views
    dropped), ``cleaned`` (and ``report``)."""
    if run.dry_run:  # a dry run's skip: nothing committed, nothing dropped
        return
    failpoint("committed")
    left = run.publication.cleanup()
    if left:
        _note_left(run, info, left)


def _committed(
    session: Session, tables: catalog.CatalogTables, rel: ReleaseConfig, release_id: str, reason: str
) -> Outcome:
    """The outcome of a run whose commit happened (its row ``published`` or ``skipped``) but a step after it
    failed: what the catalog row recorded, and a warning — logged, and kept in the row's ``series`` document
    (``cleanup``) where the database can still be written."""
    row = dict(zip(q.runs.SUMMARY, session.rows(q.runs.summary(tables.releases, release_id), "reading the run")[0]))
    info = json.loads(row["series"]) if row["series"] else {}
    version = row["version"]
    if row["status"] == Status.PUBLISHED:
        warning = (
            f"release {rel.name!r} version {version} is published, but the steps after its commit did not "
            f"finish ({reason}): the next `veil release` drops the views of expired versions"
            + (f"; write its report with `veil report --release {version} --out FILE`" if rel.report else "")
        )
    else:
        warning = (
            f"release {rel.name!r} is unchanged, but the clean-up after its skip did not finish ({reason}): "
            "the next `veil release` drops the views of expired versions"
        )
    info["cleanup"] = warning
    try:
        session.rollback()
        session.execute(q.runs.set_series(tables.releases, release_id, json.dumps(info)), "recording the warning")
        session.commit()
    except VeilError:
        pass  # the warning is still logged and printed
    log.log.warning(redact(warning))
    if row["status"] != Status.PUBLISHED:
        return Outcome(
            Status.SKIPPED,
            rel.name,
            release_id,
            f"{row['error']}; warning: {warning}",
            version=version,
            warning=warning,
        )
    written = Written(
        rel.name,
        rel.schema,
        rel.series,
        version,
        tuple(json.loads(row["node"])),
        row["rows_published"],
        row["rows_suppressed"],
        json.loads(row["achieved"] or "null"),
        row["rows_deferred"],
        info,
        [],
    )
    return written.outcome(Status.PUBLISHED, release_id, f"{written.published()}; warning: {warning}", warning)


def _note_left(run: _Run, info: dict[str, Any], left: list[str]) -> None:
    """Expired versions' views that could not be dropped now (a reader or a dependent view): recorded, retried."""
    info["expired_objects_kept"] = left
    run.session.execute(
        q.runs.set_series(run.tables.releases, run.release_id, json.dumps(info)), "recording the views kept"
    )
    run.session.commit()


def _record_details(
    session: Session,
    tables: catalog.CatalogTables,
    release_id: str,
    wh: Warehouse,
    evaluations: list[tuple[Any, bool, int, float | None]],
) -> None:
    rows = [
        (release_id, json.dumps([lv for lv in node]), bool(passed), int(supp), None if score is None else float(score))
        for node, passed, supp, score in evaluations
    ]
    session.bulk_load(tables.release_nodes, rows, "recording the evaluated nodes")
    texts = {h.attribute: _arx_text(h) for h in wh.hierarchies}
    digests = {a: hashlib.sha256(t.encode()).hexdigest() for a, t in texts.items()}
    stored = {d for (d,) in session.rows(qc.stored_hierarchies(tables.hierarchies, list(digests.values())))}
    hrows, new = [], set()
    for qi, h in zip(wh.quasi_identifiers, wh.hierarchies):
        digest = digests[h.attribute]
        text = None if digest in stored or digest in new else texts[h.attribute]  # each text once (0008)
        new.add(digest)
        hrows.append((release_id, h.attribute, h.height, qi.hierarchy.describe(), len(h.leaves), text, digest))
    session.bulk_load(tables.hierarchies, hrows, "recording the hierarchies")


def _arx_text(h: Hierarchy) -> str:
    """A hierarchy as ARX text: a line per leaf, its labels from level 1 up, ``;``-separated."""
    return "\n".join(";".join([str(leaf), *(col[k] for col in h.labels)]) for k, leaf in enumerate(h.leaves))
