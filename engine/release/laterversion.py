"""A release's later version: the series step and the ledger's record shard by shard, so that neither the
candidate's cells nor the ledger's are ever in Python whole (docs/series-ledger.md §6).

The candidate's cells are as many as the rows when a published column is nearly unique (an income), and the
ledger holds as many per version.  ``veil.release.shards`` partitions the blocks so that no comparison between
versions crosses a shard; here each shard's cells — the candidate's (``veil_cells`` joined to each block's
shard) and the ledger's (``series_cells`` joined to each block id's) — are read, checked against the search's
counts of those blocks, put through the series step (``series.check``) and their changes staged,
one shard after the other.  The version's ledger record is written at the end, in the run's transaction.  What
Python holds across shards is what the node's blocks and the sensitive domains bound: the blocks' shards, the
published and held-back counts per block (as the checkers count them), the rows held back.

Each shard's step is the one the whole version would run on its blocks: the differences
all stay within a class of the pair compared, which stays within a shard
(``tests/test_series_db.py`` compares a series released in many shards with the same series in one).

Example: with 1,000,000 cells and ``SHARD_CELLS`` at 2**20, one shard; with 10,000,000 (a candidate and a ledger of 5,000,000 each), ten.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from veil import catalog
from veil import queries as q
from veil.backends.base import Session
from veil.counts import NodeCounts, narrowed
from veil.errors import ReleaseError
from veil.privacy import Specification
from veil.queries.ddl import create_table, relation
from veil.release import ledger as ledger_mod
from veil.release import series
from veil.release.alignment import Layout
from veil.release.differences import Judge
from veil.release.firstversion import load_table
from veil.release.shards import Sharding
from veil.release.verify import Counted, same
from veil.warehouse import Warehouse

SHARD_CELLS = 1 << 20  # candidate and ledger cells per shard, about (2**21: 40 MB more at 10M and 100M, no faster)
CHUNK = 1 << 18  # candidate cells per fetched chunk
WHAT = "comparing the candidate with the ledger, shard by shard"


@dataclass(frozen=True)
class Task:
    """What one later version's series step reads: the run's session and ledger (dictionary read, cells not),
    the warehouse and models, the series policy, and the candidate (``veil_cells``, its layout and values)."""

    session: Session
    ledger: ledger_mod.Ledger
    wh: Warehouse
    spec: Specification
    judge: Judge
    policy: str
    number: int
    node: tuple[int, ...]
    layout: Layout
    distinct: list[tuple[Any, ...]]
    numeric: Mapping[str, bool]
    into: str | None = None  # the scratch database holding ``veil_cells`` (None: temporary tables)


@dataclass
class Result:
    """The series step's outcome over every shard: the counts published and held back (as the checkers count
    them), the rows held back (``_stage``'s), the catalog's record, and failures it could not repair."""

    rows_published: int
    shown: NodeCounts
    hidden: NodeCounts
    held: list[tuple[Any, ...]]
    info: dict[str, Any]
    totals: Mapping[str, Mapping[str, int]]
    exposures: list[series.Exposure] = field(default_factory=list)


def plan(ledger: ledger_mod.Ledger, layout: Layout, spec: Specification, cells: int) -> Sharding | None:
    """The shards of this version's series step (``cells``: the candidate's and the ledger's), or ``None`` when
    the versions or the models do not allow them (``veil.release.shards``)."""
    if not ledger.versions or not spec.streamable:
        return None
    return Sharding.of([*(v.layout for v in ledger.versions), layout], cells, SHARD_CELLS)


def run(task: Task, sharding: Sharding, counts: NodeCounts, suppressed: np.ndarray) -> Result:
    """Every shard's series step, its changes to the ledger staged; the ledger's cells of the version are
    written by :func:`record` once the caller accepts the result."""
    session, wh, d = task.session, task.wh, len(task.wh.attributes)
    value_ids = ledger_mod.value_ids_of(task.ledger, task.layout, task.distinct)
    per_value = ledger_mod.rows_per_value(session, d, len(task.distinct))
    if int(per_value.sum()) != wh.rows:
        raise ReleaseError(
            f"verification failed: the candidate's cells hold {int(per_value.sum())} rows, the search counted {wh.rows}"
        )
    totals = ledger_mod.column_totals(task.layout, task.distinct, per_value)
    block_shard = sharding.of_blocks(ledger_mod.block_text(task.layout, wh.hierarchies), counts.keys)
    _stage_shards(task, sharding, counts, block_shard)
    acc = _Totals(task)
    coded = Counted.code(wh, task.distinct, task.layout.columns)
    sup_keys, sup_shard = counts.keys[suppressed], block_shard[suppressed]
    sizes = [len(h.domain(level)) for h, level in zip(wh.hierarchies, task.node)]
    ordered = not ledger_mod.packs(sizes, len(task.distinct))  # else numpy sorts a shard's cells
    for s in range(sharding.count):
        chunks = session.stream(
            q.ledger.shard_cells(d, s), [*(f"g{i}" for i in range(d)), "vid"] if ordered else [], CHUNK, WHAT
        )
        cand = ledger_mod.candidate(
            task.ledger,
            task.number,
            task.layout,
            wh.hierarchies,
            chunks,
            task.distinct,
            task.numeric,
            ordered,
            value_ids=value_ids,
            totals=totals,
        )
        sub = _history(task, s, acc)
        if not len(cand.version.counts) and not any(len(v.counts) for v in sub.versions):
            continue
        counted = Counted(wh, task.node, cand, task.layout.columns, coded)
        if not same(counted.counts(cand.version.counts), counts.restrict(block_shard == s)):
            raise ReleaseError(
                "verification failed: the source's rows at the chosen node differ from the search's counts"
            )
        keep = ~among(cand.block_codes, sup_keys[sup_shard == s])[cand.cell_block]
        start = cand.version.counts if keep.all() else np.where(keep, cand.version.counts, 0)
        acc.add(sub, cand, counted, start, *_series(task, sub, cand, counted, start))
    if acc.ledger_cells != ledger_mod.cell_rows(session, task.ledger):
        raise ReleaseError(f"the ledger's cells changed while they were read ({acc.ledger_cells} read)")
    return acc.result(counts, totals)


def record(task: Task, result: Result, release_id: str, when: Any) -> None:
    """The version's ledger record: its row and dictionary entries, the changed blocks' cells closed and the
    staged new cells written (in the run's transaction)."""
    session, ledger = task.session, task.ledger
    empty = np.zeros(0, dtype=np.int32)
    ledger_mod.record_version(
        session,
        ledger,
        series.Version(task.number, task.layout, empty, empty, empty, dict(result.totals)),
        task.numeric,
        release_id,
        task.policy,
        when,
    )
    ledger_mod.close_changed(session, ledger, task.number)
    session.execute(
        q.ledger.write_new_cells(ledger.tables.series_cells, ledger.name, task.number, catalog.OPEN),
        "recording the version's content",
    )
    # in a scratch file or work schema they go with the session
    sharded = (q.ledger.SHARDED_CELLS, q.ledger.SHARDED_LEDGER) if task.into is None else ()
    for name in (q.ledger.CHANGED, q.ledger.NEW_CELLS, q.ledger.CELL_SHARDS, q.ledger.BLOCK_SHARDS, *sharded):
        session.execute(q.drop_table(name), "recording the version's content")


def _stage_shards(task: Task, sharding: Sharding, counts: NodeCounts, block_shard: np.ndarray) -> None:
    """The shard of every block of the node and of every block id of the ledger, and the empty tables the
    shards' changes gather in."""
    session, d = task.session, len(task.wh.attributes)
    blocks = q.ledger.cell_shards_table(d)
    load_table(session, blocks, {**{f"g{i}": narrowed(counts.keys[:, i]) for i in range(d)}, "shard": block_shard})
    known = task.ledger.dictionary.blocks[: task.ledger.first_block]
    ids = q.ledger.block_shards_table()
    load_table(session, ids, {"block_id": np.arange(len(known), dtype=np.int64), "shard": sharding.of_labels(known)})
    for table in (blocks, ids, relation(q.CELLS)):
        session.analyze(table, WHAT)  # else PostgreSQL joins the cells to the shards by nested loops
    session.settle()  # DuckDB: the shards' tables committed before the scratch database is written
    session.execute(q.ledger.sharded_cells(d, task.into), WHAT)  # one sort each: a shard then reads only its own
    session.execute(
        q.ledger.sharded_ledger(task.ledger.tables.series_cells, task.ledger.name, ledger_mod.CELL_COLUMNS, task.into),
        WHAT,
    )
    session.settle()
    for name in (q.ledger.SHARDED_CELLS, q.ledger.SHARDED_LEDGER):
        session.analyze(relation(name), WHAT)
    session.execute(create_table(q.ledger.changed_table()), WHAT)
    session.execute(create_table(q.ledger.new_cells_table()), WHAT)


def _history(task: Task, shard: int, acc: _Totals) -> ledger_mod.Ledger:
    """The ledger with every version's cells of one shard (the dictionary shared)."""
    cells = ledger_mod.read_columns(
        task.session, q.ledger.ledger_shard_cells(shard, ledger_mod.CELL_COLUMNS), None, "reading the ledger's cells"
    )
    acc.ledger_cells += len(cells["count"])
    return replace(task.ledger, versions=ledger_mod.with_cells(task.ledger.versions, cells))


def _series(
    task: Task, sub: ledger_mod.Ledger, cand: ledger_mod.Candidate, counted: Counted, start: np.ndarray
) -> tuple[np.ndarray, dict[str, int] | None, int, list[series.Exposure]]:
    """One shard's series step (docs/series-ledger.md §4): rows published per cell, rows held per reason (``None``:
    nothing compared or ``refuse``), rounds, failures left."""
    if task.policy == "off" or not sub.versions:
        return start, None, 0, []
    return start, None, 0, series.check(sub.dictionary, task.judge, replace(cand.version, counts=start), sub.versions)


class _Totals:
    """What the shards add up to: published and held-back counts per checker cell, rows held back, the
    catalog's record, failures, and the changes staged for the ledger."""

    def __init__(self, task: Task) -> None:
        self.task = task
        self.shown: list[NodeCounts] = []
        self.hidden: list[NodeCounts] = []
        self.held: list[tuple[Any, ...]] = []
        self.reasons: dict[str, int] = {}
        self.rounds = 0
        self.deferred = 0
        self.published = 0
        self.exposures: list[series.Exposure] = []
        self.ledger_cells = 0

    def add(
        self,
        sub: ledger_mod.Ledger,
        cand: ledger_mod.Candidate,
        counted: Counted,
        start: np.ndarray,
        published: np.ndarray,
        held: dict[str, int] | None,
        rounds: int,
        exposures: list[series.Exposure],
    ) -> None:
        back = start - published
        for i in np.flatnonzero(back > 0).tolist():
            self.held.append((len(self.held), *cand.codes(i), *cand.raw(i), int(back[i])))
        for reason, rows in (held or {}).items():
            self.reasons[reason] += rows
        self.rounds, self.exposures = max(self.rounds, rounds), self.exposures + exposures
        self.deferred += int(back.sum())
        self.published += int(published.sum())
        self.shown.append(counted.counts(published))
        self.hidden.append(counted.counts(cand.version.counts - published))
        change = ledger_mod.changes(sub, cand, published)
        if change is not None:
            session, (changed, block, value, rows_of) = self.task.session, change
            session.load_columns(q.ledger.changed_table(), {"id": changed}, WHAT)
            session.load_columns(
                q.ledger.new_cells_table(), {"block_id": block, "value_id": value, "count": rows_of}, WHAT
            )

    def result(self, counts: NodeCounts, totals: Mapping[str, Mapping[str, int]]) -> Result:
        task = self.task
        info: dict[str, Any] = {"policy": task.policy, "versions_compared": 0, "rows_deferred": 0}
        if task.policy != "off":
            info["versions_compared"] = len(task.ledger.versions)
        return Result(
            self.published,
            _joined(self.shown, counts),
            _joined(self.hidden, counts),
            self.held,
            info,
            totals,
            merged(self.exposures),
        )


def _joined(parts: Sequence[NodeCounts], like: NodeCounts) -> NodeCounts:
    """NodeCounts of disjoint blocks put together, blocks in lexicographic order again: only the blocks are
    sorted, and each cell keeps its values and count and gets its block's new number — no (cells × QIs) copy of
    the keys (100M census: 1.5M cells of 118k blocks).

    >>> a = NodeCounts.from_cells(("q",), (0,), np.array([[2], [2]]), np.zeros((2, 0)), np.array([1, 2]), (3,))
    >>> b = NodeCounts.from_cells(("q",), (0,), np.array([[0]]), np.zeros((1, 0)), np.array([4]), (3,))
    >>> j = _joined([a, b], a)
    >>> j.keys.ravel().tolist(), j.cell_block.tolist(), j.cell_count.tolist()
    ([0, 2], [1, 1, 0], [1, 2, 4])
    """
    parts = [p for p in parts if len(p.cell_count)]
    width = like.cell_values.shape[1] if like.cell_values.ndim == 2 else 0
    if not parts:
        return NodeCounts.from_cells(
            like.attributes,
            like.node,
            np.zeros((0, len(like.attributes)), np.int64),
            np.zeros((0, width), np.int64),
            np.zeros(0, np.int64),
            like.cardinalities,
            like.sensitive,
            like.generalizers,
        )
    keys = np.vstack([p.keys for p in parts])
    order = np.lexsort(keys.T[::-1]) if keys.shape[1] else np.arange(len(keys))
    number = np.empty(len(keys), dtype=np.int64)
    number[order] = np.arange(len(keys), dtype=np.int64)
    offsets = np.cumsum([0] + [p.n_blocks for p in parts[:-1]])
    return NodeCounts(
        attributes=like.attributes,
        node=like.node,
        keys=keys[order],
        cardinalities=like.cardinalities,
        cell_block=np.concatenate([number[o + p.cell_block] for o, p in zip(offsets.tolist(), parts)]),
        cell_values=np.vstack([p.cell_values for p in parts]),
        cell_count=np.concatenate([p.cell_count for p in parts]),
        sensitive=like.sensitive,
        generalizers=like.generalizers,
    )


def merged(exposures: Sequence[series.Exposure]) -> list[series.Exposure]:
    """Failures of several shards as one list: blocks and rows added up per pair, projection and side.

    >>> e = series.Exposure(1, 2, "rows", "added", 1, 1, (0,))
    >>> [x.blocks for x in merged([e, e, replace(e, side="removed")])]
    [2, 1]
    """
    out: dict[tuple[Any, ...], series.Exposure] = {}
    for e in exposures:
        key = (e.earlier, e.later, e.projection, e.side)
        had = out.get(key)
        out[key] = e if had is None else replace(had, blocks=had.blocks + e.blocks, rows=had.rows + e.rows)
    return [out[k] for k in sorted(out)]


def among(codes: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Per row of ``codes``: whether it is one of the rows of ``wanted`` (both (n, QIs) integer arrays).

    >>> among(np.array([[0, 1], [2, 3]]), np.array([[2, 3]])).tolist()
    [False, True]
    """
    if len(wanted) == 0 or len(codes) == 0:
        return np.zeros(len(codes), dtype=bool)
    width = int(max(codes.max(), wanted.max())) + 1
    if width ** codes.shape[1] >= 2**62:  # too wide for one integer key: compare row tuples
        listed = {tuple(r) for r in wanted.tolist()}
        return np.fromiter((tuple(r) in listed for r in codes.tolist()), dtype=bool, count=len(codes))
    radix = width ** np.arange(codes.shape[1] - 1, -1, -1, dtype=np.int64)
    return np.isin(codes.astype(np.int64) @ radix, wanted.astype(np.int64) @ radix)
