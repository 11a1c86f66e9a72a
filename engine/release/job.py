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
next run repairs what a killed run left.  This module only calls the protocol's steps, through a module for each
step of its own: ``nodechoice`` (the node), ``candidate`` (its cells), ``seriesstep`` (what of it to publish, and
the ledger), ``publishing`` (written, verified, pointed to, recorded) and ``stops`` (a run that stopped).

Once the commit happened, the version is published whatever happens next: a step after it (the clean-up of
expired versions' views, the report) that fails or is interrupted leaves the row ``published``, and the run
ends with a warning and exit 0; the next run, a skipped one too, finishes the clean-up (``veil.release.stops``).

Test failpoints: ``VEIL_FAILPOINT=<step>`` raises at that step (search, series — a cohort series' members
changed, its row not written —, materialize, verify, views, catalog; after the commit: committed, cleanup-views,
cleaned, report); ``VEIL_FAILPOINT=corrupt`` deletes rows of the new version before verification (which must then
fail); ``VEIL_FAILPOINT=pause:<step>`` sleeps there so a test can kill or interrupt the process; ``stall:<step>``
runs a long statement there instead.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np

from veil import catalog, log
from veil import queries as q
from veil.catalog import Status
from veil.config import Config, require_release, sensitive_needed
from veil.counts import NodeCounts
from veil.errors import ConfigError, SourceError, VeilError
from veil.hierarchytables import resolve as resolve_hierarchies
from veil.lattice import Lattice
from veil.privacy import Specification
from veil.queries import catalog as qc
from veil.release import candidate, cohort_series, delaybound, nodechoice, publishing, seriesstep, stops
from veil.release import ledger as ledger_mod
from veil.release.outcome import Outcome
from veil.release.process import connect, failpoint, interruptible, now
from veil.release.publication import Publication, publication_for
from veil.release.runs import Runs
from veil.release.state import Content, Run
from veil.search import SearchResult
from veil.warehouse import Warehouse

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
                stops.close_interrupted(session, tables, rel.name)
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
                outcome = stops.stopped(session, tables, rel, release_id, exc)
    finally:
        ctx.__exit__(None, None, None)
    return replace(outcome, seconds=time.perf_counter() - started, statements=session.statements)


def _rehearse(
    config: Config, publication: Publication, force: bool, wait: float, on_step: Callable[[str], None]
) -> Outcome:
    """``veil release --dry-run``: the whole run — node, series step, rows, verification — in the release's
    transaction, rolled back where a release commits (``publishing.publish``); no catalog row, not even
    ``running``, and no repair of what earlier runs left (``stops.close_interrupted``, ``upgrade_legacy``, expired
    views).  It holds the release's lock like a run (its statements would otherwise wait on a concurrent run's
    rows) and the DuckDB file while it works.  Where statements commit on their own (Spark) nothing can be rolled back: refused
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
    run = Run(config, rel, session, tables, publication, release_id, on_step, runs, dry_run=dry_run)
    skipped = _inspect(run, force)
    if skipped is not None:
        publishing.expire_views(run, {})  # what an earlier run's clean-up left
        return skipped
    wh = run.wh
    wh.prepare()
    domains = {d.name: d for d in wh.domains}
    for model in config.models:
        model.validate(domains)
    run.spec = Specification(config.models, config.search.max_suppression)
    if run.rel.series == "cohort":
        return _cohort(run)
    ledger = ledger_mod.load(session, tables, run.rel.name, cells=False, versions=run.publication.ledger_versions)
    node, note, result = nodechoice.choose_node(run, ledger)
    counts = wh.counts(node)
    wh.end_search()  # the search's floors and kept counts go before the candidate's cells are rolled up
    held = candidate.held(run, node)  # before the base held here is dropped
    wh.end_counting()  # no node is counted again: the memory of the search's tables goes to the candidate's
    suppressed = run.spec.evaluate(counts, wh.rows).failing
    counts = counts.uncached()  # the checkers' cached tables (73 MB at the 10M t-closeness optimum) freed
    version = _next_version(run)
    on_step("counting the candidate's cells")
    content, info = seriesstep.series_step(run, ledger, node, version, counts, suppressed, held)
    info.update(note)
    del ledger
    outcome = publishing.publish(run, content, counts, suppressed, info, result)
    return _report(run, outcome, result, counts, suppressed)


def _cohort(run: Run) -> Outcome:
    """A version of a cohort series (docs/series.md): the series' node and members, tonight's step, published.
    A series' first version — the release's first, or ``--new-series`` — searches the node; a later one keeps it
    or moves it up for the joiners' delay bound (``veil.release.delaybound``), and refuses a config that changed
    what the series keeps (its shape)."""
    config, session, wh, rel = run.config, run.session, run.wh, run.rel
    cohort_series.require_monotone(config)
    store = run.publication.member_store
    s = cohort_series.Series(session, run.tables, rel.name, config, wh, tuple(run.published), _identity(run), store)
    state = cohort_series.load(session, run.tables, rel.name, run.runs)
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
    cohort = 0  # tonight's fewest rows a joiners' cohort forms with (none in a first version: keep_bound's after)
    if first:
        previous = list(state.node) if state is not None else None
        reason = "a new series" if state is not None else "first version"
        node, note, result = nodechoice.search(run, previous, reason, nodechoice.block_floors(config, wh.rows))
    members = s.tonight(state, version, run.runs, fresh=first)  # the members table tonight's step changes
    if not first:
        assert state is not None
        note = {"node": "series", "previous_node": list(state.node)}
        state, moved, cohort = delaybound.keep_bound(s, replace(state, members=members), version)
        node, note = state.node, {**note, **moved}
    counts = wh.counts(node)
    wh.end_counting()
    suppressed = run.spec.evaluate(counts, wh.rows).failing if first else np.zeros(counts.n_blocks, dtype=bool)
    counts = counts.uncached()
    run.on_step("the series step: tonight's arrivals and departures")
    state = cohort_series.start(s, node, version, state, members) if first else state
    assert state is not None
    night = cohort_series.night(s, state, version, first, rel.erase_departed, cohort)
    info = {**night.info, **note}
    if first:  # the search's suppressed rows are its own count; what else waits is deferred
        info["rows_deferred"] = night.waiting - int(counts.sizes[suppressed].sum())
    content = Content(
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
    outcome = publishing.publish(run, content, counts, suppressed, info, result)
    return _report(run, outcome, result, counts, suppressed)


def _identity(run: Run) -> tuple[str, ...]:
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


def _next_version(run: Run) -> int:
    return run.runs.highest() + 1


def _report(
    run: Run, outcome: Outcome, result: SearchResult | None, counts: NodeCounts, suppressed: np.ndarray
) -> Outcome:
    """``[release] report``: the published version's report next to the others (README "Audit and report").
    Written after the commit — the version is published either way; a report that cannot be written is said
    in the outcome's message and the log, and the job still exits 0."""
    failpoint("report")
    folder = run.rel.report
    if folder is None or outcome.version is None or outcome.node is None or run.dry_run:
        return outcome
    from veil.release.history import releases
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
            Path(folder),
            run.config,
            run.wh,
            result,
            outcome.node,
            name=run.rel.name,
            version=outcome.version,
            history=releases(run.config)["releases"],
        )
    except (OSError, VeilError) as exc:
        log.log.warning(
            f"release {run.rel.name!r} version {outcome.version} is published; its report was not written: {exc}"
        )
        return replace(outcome, message=f"{outcome.message}; the report was not written: {exc}")
    return replace(outcome, report=str(path), message=f"{outcome.message}; report {path}")


def _inspect(run: Run, force: bool) -> Outcome | None:
    """Columns, the source's fingerprint, and the skip when neither it nor the config changed."""
    config, rel, session = run.config, run.rel, run.session
    r = run.tables.releases
    counted = tuple(sensitive_needed(config))  # the search counts what the models read; the rest is published
    published = tuple(c for c in config.sensitive if c not in counted)
    # the candidate's cells rolled up here where the publication takes them whole (``candidate.held``): the source,
    # if held first, is grouped by the published columns too — one statement less (1M census on Spark: 1.4-1.9 s)
    carried = () if run.publication.staged_ledger or rel.keep_columns else published
    run.wh = wh = Warehouse(
        session,
        config.source,
        config.quasi_identifiers,
        counted,
        null_checked=published,
        carried=carried,
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
