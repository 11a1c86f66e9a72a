"""The node a release publishes: the previous version's while it still satisfies the models, else the search's
optimum (never finer than or incomparable with the previous node under ``series = "refuse"``; among the nodes
a cohort series' floor admits), and the note that says which and why."""

from __future__ import annotations

from typing import Any

from veil import log
from veil.blockfloor import BlockFloor
from veil.config import Config
from veil.errors import NoSolutionError
from veil.lattice import Lattice
from veil.release import ledger as ledger_mod
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


def block_floor(config: Config) -> BlockFloor | None:
    """A cohort series' floor on its node's block sizes (``[release] series_block``), if the config sets one."""
    rel = config.release
    if rel is None or rel.series_block is None:
        return None
    return BlockFloor(rel.series_block, rel.series_block_share)


def search(
    run: Run, previous: list[int] | None, reason: str, floor: BlockFloor | None = None
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
