"""The node a release publishes: the previous version's while it still satisfies the models, else the search's
optimum (never finer than or incomparable with the previous node under ``series = "refuse"``; among the nodes
a cohort series' floor admits), and the note that says which and why."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from veil import log
from veil.blockfloor import BlockFloor
from veil.config import Config
from veil.errors import NoSolutionError
from veil.lattice import Lattice
from veil.release import ledger as ledger_mod
from veil.release.cohort_series import batch_of
from veil.release.process import failpoint
from veil.release.state import Run
from veil.run import no_solution, search_lattice
from veil.search import SearchResult


def choose_node(run: Run, ledger: ledger_mod.Ledger) -> tuple[tuple[int, ...], dict[str, Any], SearchResult | None]:
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
            return search(run, previous, reason)
        found = search(run, previous, reason)
        return _upward(run, prev, found) if run.rel.series == "refuse" else found
    return search(run, previous, reason)


def _upward(
    run: Run, previous: tuple[int, ...], found: tuple[tuple[int, ...], dict[str, Any], SearchResult]
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


FEWEST = 8  # blocks a first version may always have: a release of a few blocks serves nobody


def block_floors(config: Config, rows: int) -> tuple[BlockFloor, ...]:
    """A cohort series' floors on its first version's blocks over a table of ``rows`` rows
    (``veil.blockfloor``): by default (``[release] series_standing``, docs/series.md §9.5) every block at least
    2 · ``batch`` rows — a cohort sheds its stand-ins in batches only while ``batch`` of its people remain — and at
    most 2 · ``series_standing`` · rows / (``batch`` − 1) blocks — each keeps about (``batch`` − 1) / 2 stand-ins
    for as long as its people stay — or at most ``FEWEST`` blocks; and ``[release] series_block``'s, if set.

    >>> from pathlib import Path
    >>> from veil.config import Config, ReleaseConfig, SourceConfig
    >>> from veil.models import KAnonymity
    >>> c = Config(Path("v.toml"), SourceConfig("t"), (), (), (KAnonymity(k=10),), release=ReleaseConfig("r"))
    >>> block_floors(c, 100_000)   # 2 · 10 rows; 2 · 0.01 · 100,000 / 9 blocks
    (BlockFloor(rows=20, share=1.0, most=222, fewest=8),)
    """
    rel = config.release
    floors: list[BlockFloor] = []
    if rel is not None and rel.series_standing:
        batch = batch_of(config)
        most = max(1, math.floor(2 * rel.series_standing * rows / (batch - 1) + 1e-9))
        floors.append(BlockFloor(2 * batch, 1.0, most, FEWEST))
    if rel is not None and rel.series_block is not None:
        floors.append(BlockFloor(rel.series_block, rel.series_block_share))
    return tuple(floors)


def search(
    run: Run, previous: list[int] | None, reason: str, floors: Sequence[BlockFloor] = ()
) -> tuple[tuple[int, ...], dict[str, Any], SearchResult]:
    """The search's optimum — among the nodes where every one of ``floors`` holds — and the note saying the node
    was searched (and why)."""
    wh, spec = run.wh, run.spec
    run.on_step("searching the lattice")
    lattice = Lattice(wh.heights)
    with log.progress("searching", lattice.size) as update:
        admits = (lambda counts: all(f.admits(counts) for f in floors)) if floors else None
        result = search_lattice(wh, run.config, ["optimal"], spec, update, admits)
    floor = "; ".join(f.describe() for f in floors)
    if result.optimal is None and floors and spec.evaluate(wh.counts(lattice.top), wh.rows).passed:
        raise NoSolutionError(
            f"release {run.rel.name!r}: no node passes the models with {floor} "
            "([release] series_block); lower series_block or series_block_share"
        )
    if result.optimal is None:
        raise no_solution(wh, spec)
    changed = "searched" if previous is None or tuple(previous) != result.optimal.node else "searched (same node)"
    note = {"node": changed, "previous_node": previous, "node_reason": reason}
    if floors:
        note["node_floor"] = floor
    return result.optimal.node, note, result
