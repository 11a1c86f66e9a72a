"""The series step of a release (docs/series-ledger.md §4): the candidate compared with every earlier version of the
ledger — in memory, or shard by shard (``veil.release.laterversion``) — what of it to publish, and the ledger's
record of the version, written as the publication allows (``Publication.staged_ledger``): at once where the run's
transaction hides it, else once the version is verified.  A first version compares nothing: where the ledger is
staged its cells stay in the database (``veil.release.firstversion``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import sqlalchemy as sa

from veil import queries as q
from veil.counts import NodeCounts
from veil.errors import NoSolutionError, ReleaseError
from veil.queries.ddl import relation
from veil.release import candidate, fetchedcells, firstversion, laterversion, series
from veil.release import ledger as ledger_mod
from veil.release.alignment import Layout
from veil.release.differences import Judge
from veil.release.process import now
from veil.release.state import Content, Run
from veil.release.verify import Counted, same


def series_step(
    run: Run,
    ledger: ledger_mod.Ledger,
    node: tuple[int, ...],
    version: int,
    counts: NodeCounts,
    suppressed: np.ndarray,
    held: candidate.Cells | None = None,
) -> tuple[Content, dict[str, Any]]:
    """The series step and the ledger's record of the version, as the publication allows
    (``Publication.staged_ledger``): staged — a first version's cells copied by the database (nothing to compare:
    they stay there), a later one compared shard by shard, the ledger written at once — or else recorded once the
    version is verified."""
    staged = run.publication.staged_ledger
    if staged and not ledger.versions:
        ledger_mod.read_cells(run.session, ledger)
        return _first(run, ledger, node, version, counts, suppressed), series_info(run.rel.series)
    return _later(run, ledger, node, version, counts, suppressed, staged, held)


def _first(
    run: Run,
    ledger: ledger_mod.Ledger,
    node: tuple[int, ...],
    version: int,
    counts: NodeCounts,
    suppressed: np.ndarray,
) -> Content:
    """The release's first version (``veil.release.firstversion``): its ledger written by the database, from the version's
    blocks table once published (``firstversion.FromBlocks``) or, with kept columns, from the candidate's cells counted
    before; no cell reaches Python.  What it publishes is the search's counts less suppressed blocks."""
    layout = candidate.layout_of(run, node)
    values = candidate.count_values(run, layout)
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
            candidate.numeric_of(run, layout),
            run.wh.rows,
            run.release_id,
            run.rel.series,
            when,
            blocks,
        )

    record: Callable[[sa.Table], None] | None = None
    if layout.keep:  # the blocks table has no kept column: the cells are counted from the source
        into = candidate.count_cells(run, node, narrow=True, values=values)[2]
        run.session.settle()  # the cells' transaction (a scratch database's) ends before the ledger is written
        write(None)
        candidate.drop_counted(run, into)
    else:

        def record(block_rows: sa.Table) -> None:
            write(firstversion.FromBlocks(block_rows, run.wh.layout, run.wh.attributes))
            run.session.execute(q.drop_table(q.VALUES), "recording the version's content")

    shown = counts.restrict(~suppressed)
    return Content(
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


def _later(
    run: Run,
    ledger: ledger_mod.Ledger,
    node: tuple[int, ...],
    version: int,
    counts: NodeCounts,
    suppressed: np.ndarray,
    staged: bool,
    held: candidate.Cells | None = None,
) -> tuple[Content, dict[str, Any]]:
    """A version after the first (or any, unless ``staged``): compared with every earlier one shard by shard
    (``veil.release.laterversion``) where the ledger is ``staged`` and the versions and models allow shards, else with
    every cell in memory — unless ``staged``, the candidate's ``held`` here or fetched whole with its values
    (``fetchedcells``)."""
    if not staged:  # written after the checks: the cells come here whole — held, else in one statement
        if held is None:
            layout = candidate.layout_of(run, node)
            distinct, chunks = fetchedcells.fetch(
                run.session,
                candidate.valued_cells(run, layout),
                len(run.wh.attributes),
                len(layout.columns),
                candidate.CANDIDATE,
            )
            held = candidate.Cells(layout, distinct, chunks)
        return _in_memory(run, ledger, version, counts, suppressed, held, staged)
    # cells compared in shards are read from a copy sorted by shard (``laterversion.run``): counted narrow, as the first
    # version's, since a GROUP BY of 64-bit keys reached DuckDB's 512 MB at 100M rows (2 of 3 runs)
    shardable = laterversion.plan(ledger, candidate.layout_of(run, node), run.spec, 0) is not None
    cells = candidate.count_cells(run, node, narrow=shardable)
    total = int(run.session.scalar(q.count_rows(relation(q.CELLS)), candidate.CANDIDATE))
    sharding = laterversion.plan(ledger, cells[0], run.spec, total + ledger_mod.cell_rows(run.session, ledger))
    if sharding is None:
        in_memory = candidate.Cells(cells[0], cells[1], candidate.streamed(run))
        return _in_memory(run, ledger, version, counts, suppressed, in_memory, staged)
    return _sharded(run, ledger, node, version, counts, suppressed, cells, sharding)


def _in_memory(
    run: Run,
    ledger: ledger_mod.Ledger,
    version: int,
    counts: NodeCounts,
    suppressed: np.ndarray,
    cells: candidate.Cells,
    staged: bool,
) -> tuple[Content, dict[str, Any]]:
    """The version compared with every earlier one with all their cells in memory, the candidate's ``cells``."""
    ledger_mod.read_cells(run.session, ledger)
    cand, counted, start = _candidate(run, ledger, version, counts, suppressed, cells)
    published, info = _series(run, ledger, cand, counted, start)
    content = _settle(run, ledger, cand, counted, start, published, staged)
    return content, info  # the version's rows are written with none of its cells in memory


def _sharded(
    run: Run,
    ledger: ledger_mod.Ledger,
    node: tuple[int, ...],
    version: int,
    counts: NodeCounts,
    suppressed: np.ndarray,
    cells: tuple[Layout, list[tuple[Any, ...]], str | None],
    sharding: laterversion.Sharding,
) -> tuple[Content, dict[str, Any]]:
    """A later version compared with every earlier one shard by shard (``laterversion.run``, the candidate's ``cells`` as
    ``candidate.count_cells`` left them), recorded in the ledger at once and its working tables dropped."""
    layout, distinct, into = cells
    run.session.settle()  # the cells' transaction (a scratch database's) ends before anything is written
    ledger_mod.read_dictionary(run.session, ledger)
    if len(ledger.versions):
        run.on_step(f"comparing with {len(ledger.versions)} earlier version(s) in {sharding.count} shard(s)")
    numeric = candidate.numeric_of(run, layout)
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
    candidate.drop_counted(run, into)
    content = Content(
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


def _candidate(
    run: Run,
    ledger: ledger_mod.Ledger,
    version: int,
    counts: NodeCounts,
    suppressed: np.ndarray,
    cells: candidate.Cells,
) -> tuple[ledger_mod.Candidate, Counted, np.ndarray]:
    """The source's ``cells`` at their layout's node (every row, suppressed blocks included), checked against the
    search's counts; ``start``: the rows the search keeps."""
    wh, layout, distinct, chunks = run.wh, cells.layout, cells.distinct, cells.chunks
    node = layout.node
    sizes = [len(h.domain(level)) for h, level in zip(wh.hierarchies, node)]
    ordered = not ledger_mod.packs(sizes, len(distinct))  # else numpy sorts the cells: the database need not
    cand = ledger_mod.candidate(
        ledger, version, layout, wh.hierarchies, chunks(ordered), distinct, candidate.numeric_of(run, layout), ordered
    )
    counted = Counted(wh, tuple(node), cand, layout.columns)
    if not same(counted.counts(cand.version.counts), counts):
        raise ReleaseError("verification failed: the source's rows at the chosen node differ from the search's counts")
    keep = ~laterversion.among(cand.block_codes, counts.keys[suppressed])[cand.cell_block]
    return cand, counted, cand.version.counts if keep.all() else np.where(keep, cand.version.counts, 0)


def _settle(
    run: Run,
    ledger: ledger_mod.Ledger,
    cand: ledger_mod.Candidate,
    counted: Counted,
    start: np.ndarray,
    published: np.ndarray,
    early: bool,
) -> Content:
    """What publishing needs of the candidate (``Content``), the ledger recorded first when ``early``
    (``Publication.staged_ledger``): every array of cells is then free before the version's rows are written."""
    held = start - published
    rows = [(k, *cand.codes(i), *cand.raw(i), int(held[i])) for k, i in enumerate(np.flatnonzero(held > 0).tolist())]
    when = now()

    def record(_block_rows: sa.Table | None = None) -> None:
        ledger_mod.record(run.session, ledger, cand, published, run.release_id, run.rel.series, when)

    if early:
        record()
    layout = cand.version.layout
    return Content(
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


def _series(
    run: Run, ledger: ledger_mod.Ledger, cand: ledger_mod.Candidate, counted: Counted, start: np.ndarray
) -> tuple[np.ndarray, dict[str, Any]]:
    """The series step (docs/series-ledger.md §4): what of the candidate to publish, and the catalog's record of it."""
    policy = run.rel.series
    info = series_info(policy)
    if policy == "off" or not ledger.versions:
        return start, info
    run.on_step(f"comparing with {len(ledger.versions)} earlier version(s)")
    judge = Judge(run.config.models, run.config.sensitive, cand.numeric)
    exposures = series.check(ledger.dictionary, judge, replace(cand.version, counts=start), ledger.versions)
    if exposures:
        _refuse(run, exposures)
    info["versions_compared"] = len(ledger.versions)
    return start, info


def _refuse(run: Run, exposures: list[series.Exposure]) -> None:
    """The series step cannot publish this version: exit 2, counts only (docs/series-ledger.md §4)."""
    raise NoSolutionError(
        exposing(run.rel.name, exposures, "publishing this version would expose")
        + '; nothing was published (series = "cohort", the default, lets such changes wait)'
    )


def series_info(policy: str) -> dict[str, Any]:
    """The catalog's record of the series step before it compares anything."""
    return {"policy": policy, "versions_compared": 0, "rows_deferred": 0}


def exposing(name: str, exposures: list[series.Exposure], what: str) -> str:
    parts = [e.describe() for e in exposures[:6]]
    more = f"; and {len(exposures) - 6} more" if len(exposures) > 6 else ""
    return f"series of {name!r}: {what}: " + "; ".join(parts) + more
