"""The joiners' delay bound of a cohort series (``[release] series_delay``, docs/series.md §2a): when its blocks
are too small for ``batch`` joiners to gather within the bound at the join rate the series has seen, the series
moves its node up — coarser, never finer — to the node above it whose blocks are large enough.

A block of ``n`` rows at a join rate ``j`` (joiners per row per night) gathers ``batch`` joiners in about
``batch / (j · n)`` nights, so a bound of ``delay`` nights asks every block for at least ``batch / (j · delay)``
rows (a ``BlockFloor`` with share 1).  The rate is read from the series' own members (joiners of the last
``WINDOW`` nights still known), once it has run ``SETTLE`` nights.  Everything here reads block sizes and counts
of joiners, which the adversary of docs/series.md §1 knows: no sensitive value decides whether or where the node
moves, so replaying it tells a reader nothing (and the models need no check: a coarser block is a union of
cohorts that each pass, and the models a cohort series admits are monotone).

>>> needed_rows(batch=10, rate=0.0005, delay=90)   # 10 / (0.0005 * 90) = 222.2
223
>>> sizes = {(0, 0): np.array([3, 5, 12]), (1, 0): np.array([8, 12]), (0, 1): np.array([20]), (1, 1): np.array([20])}
>>> rise((0, 0), (1, 1), sizes.__getitem__, BlockFloor(8, 1.0))   # (1, 0): 8² + 12² = 208 < 20² = 400
(1, 0)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Protocol

import numpy as np
import sqlalchemy as sa

from veil import log
from veil.blockfloor import BlockFloor
from veil.counts import SizeHistogram
from veil.queries import members as mq
from veil.release import memberstore, seriesplan
from veil.release.cohort_series import Series, State, cohort_of, members_of

SETTLE = 7  # nights a series runs before its join rate is read
COARSEST = 8  # a move keeps at least 1/COARSEST of the node's blocks: a slow table stays useful, its joiners wait
WINDOW = 30  # nights of joins the rate is read over

Node = tuple[int, ...]


class Floor(Protocol):
    """What ``rise`` asks of a node's block sizes: a ``BlockFloor``, or the plan's ``seriesplan.Budget``."""

    def admits(self, sizes: SizeHistogram | np.ndarray) -> bool: ...


def join_rate(joined: int, rows: int, nights: int) -> float:
    """Joiners per row per night: ``joined`` people arrived over ``nights`` nights into a table of ``rows``.

    >>> join_rate(1500, 100_000, 30)
    0.0005
    """
    return joined / (rows * nights) if rows > 0 and nights > 0 else 0.0


def needed_rows(batch: int, rate: float, delay: int) -> int | None:
    """The rows a block needs for ``batch`` joiners to arrive within ``delay`` nights at ``rate``, rounded up
    (``None``: no joiner arrived, nothing to bound)."""
    if rate <= 0 or delay <= 0:
        return None
    return math.ceil(batch / (rate * delay) - 1e-9)


def rise(
    current: Sequence[int],
    heights: Sequence[int],
    sizes_of: Callable[[Node], SizeHistogram | np.ndarray],
    floor: Floor,
    fewest: int = 1,
) -> Node | None:
    """``current`` when ``floor`` holds on it; else, among the nodes above it where it holds that keep at least
    ``fewest`` blocks, the one whose blocks' sizes give the least discernibility (Σ size², ties: the smaller node);
    ``None`` when there is none.  The walk goes up from ``current`` level by level and never past a node where the
    floor holds: every node above that one merges its blocks, so its discernibility is at least as large and its
    blocks no more."""
    start = tuple(int(x) for x in current)
    if floor.admits(sizes_of(start)):
        return start
    found: dict[Node, float] = {}
    frontier, seen = {start}, {start}
    while frontier:
        above = {
            tuple(lv + (i == j) for i, lv in enumerate(node))
            for node in frontier
            for j in range(len(node))
            if node[j] < heights[j]
        } - seen
        seen |= above
        frontier = set()
        for node in above:
            sizes = sizes_of(node)
            if floor.admits(sizes):
                if blocks(sizes) >= fewest:
                    found[node] = discernibility(sizes)
            else:
                frontier.add(node)
    if not found:
        return None
    return min(found, key=lambda n: (found[n], n))


def blocks(sizes: SizeHistogram | np.ndarray) -> int:
    """A node's number of blocks (its block sizes, or their histogram)."""
    return int(sizes.n_blocks) if isinstance(sizes, SizeHistogram) else len(sizes)


def discernibility(sizes: SizeHistogram | np.ndarray) -> float:
    """Σ size² over a node's blocks (its block sizes, or their histogram).

    >>> discernibility(np.array([8, 12]))
    208.0
    """
    if isinstance(sizes, SizeHistogram):
        return float(sizes.squares)
    return float(np.square(np.asarray(sizes, dtype=np.float64)).sum())


def keep_bound(s: Series, state: State, version: int) -> tuple[State, dict[str, Any], int]:
    """Tonight's node of a series whose ``[release] series_delay`` is set, and the fewest rows a joiners' cohort
    forms with tonight.  With ``[release] series_budget``, first the plan's (``seriesplan``: the finest node at or
    above the series' where some cohort size keeps the rows withheld and standing in within the budget); then, from
    there, the node ``rise`` finds for the bound at the join rate seen so far.  The members' labels move up with
    the node (``series_state`` records it at the night's end); the note says why."""
    rel = s.config.release
    delay = rel.series_delay if rel is not None else 0
    least = max(state.batch, cohort_of(s))
    nights = min(WINDOW, version - 1 - state.started)
    if delay == 0 or version - state.started < SETTLE or nights < 1:
        return state, {}, least
    members = s.members(state)
    what = "reading the series' joiners"
    joined = int(s.session.scalar(mq.joined_after(members, version - 1 - nights), what))
    rate = join_rate(joined, s.wh.rows, nights)
    if rate <= 0:
        return state, {}, least
    budget = rel.series_budget if rel is not None else 0.0
    planned = _planned(s, state, members, rate, least, budget) if budget else None
    start, size = (planned[0], planned[1]) if planned is not None else (state.node, least)
    floor = BlockFloor(needed_rows(size, rate, delay) or 1, 1.0)
    why = f"{joined} joiners in {nights} nights; to publish them within {delay} nights, {floor.describe()}"
    note: dict[str, Any] = {}
    if planned is not None:
        kept = f"cohorts of {size} keep {planned[2]:.1%} withheld or standing in"
        why += f"; {kept} (series_budget {budget:g})" if planned[3] else f"; at best {kept}"
        note = {"joiners_cohort": size, **({} if planned[3] else {"node_budget": f"no node keeps {budget:g}"})}
    fewest = math.ceil(blocks(s.wh.sizes(start)) / COARSEST)
    target = rise(start, s.wh.heights, s.wh.sizes, floor, fewest)
    if target is None:
        log.log.warning(
            f"release {s.name!r}: no node above {list(start)} with at least {fewest} blocks holds "
            f"{floor.describe()}; [release] series_delay cannot hold at this churn"
        )
        note["node_delay"] = f"unreachable with at least {fewest} blocks: {why}"
        target = start
    if target == state.node:
        return state, note, size
    moved, more = _move(s, state, members, target, why)
    return moved, {**note, **more}, size


def _planned(
    s: Series, state: State, members: sa.Table, rate: float, least: int, budget: float
) -> tuple[Node, int, float, bool]:
    """The plan's node, cohort size and predicted share (``seriesplan``), and whether it keeps the budget: the
    finest node of at least ``seriesplan.FEWEST`` blocks (or the series' own number) that keeps it, else the one
    whose prediction is least (ties: the finer), which the walk has then visited whole."""
    what = "reading the series' cohorts"
    formed = {(int(live), int(gone)): int(n) for live, gone, n in s.session.rows(mq.cohort_rows(members), what)}
    outlook = seriesplan.Outlook(s.wh.rows, rate, state.batch, formed)
    planned: dict[Node, tuple[int, float, float]] = {}  # the nodes walked: cohort size, share, Σ size²

    @functools.cache
    def best(n_blocks: int) -> tuple[int, float]:
        return outlook.cohort(n_blocks, least)

    def sized(node: Node) -> SizeHistogram | np.ndarray:
        sizes = s.wh.sizes(node)
        if blocks(sizes) >= fewest:
            planned[tuple(node)] = (*best(blocks(sizes)), discernibility(sizes))
        return sizes

    fewest = min(seriesplan.FEWEST, blocks(s.wh.sizes(state.node)))
    target = rise(state.node, s.wh.heights, sized, seriesplan.Budget(lambda h: best(blocks(h)), budget), fewest)
    if target is not None:
        size, share, _ = planned[target]
        return target, size, share, True
    nearest = min(planned, key=lambda n: (planned[n][1], planned[n][2], n))
    log.log.warning(f"release {s.name!r}: no node above {list(state.node)} keeps [release] series_budget")
    return nearest, planned[nearest][0], planned[nearest][1], False


def _move(s: Series, state: State, members: sa.Table, target: Node, why: str) -> tuple[State, dict[str, Any]]:
    """The series moved up to ``target``: the members' labels (``series_state`` records the node at the night's
    end, ``cohort_series.night``)."""
    changed = [(i, a, b) for i, (a, b) in enumerate(zip(state.node, target)) if a != b]
    qis = list(s.wh.attributes)
    what = "moving the series' node up"
    for i, a, _b in changed:
        missing = int(s.session.scalar(mq.unmapped(members, qis[i], s.wh.layout.dim(i), a), what))
        if missing:
            log.log.warning(f"release {s.name!r}: {missing} member(s) show a label of {qis[i]!r} its hierarchy lacks")
            return state, {"node_delay": f"not moved ({missing} labels of {qis[i]!r} unknown): {why}"}
    log.log.info(f"release {s.name!r}: moving the series' node up from {list(state.node)} to {list(target)}: {why}")
    _relabel(s, state, [(qis[i], s.wh.layout.dim(i), a, b) for i, a, b in changed])
    note = {"node": "series, moved up", "previous_node": list(state.node), "node_reason": why}
    return replace(state, node=target), note


def _relabel(s: Series, state: State, changes: list[tuple[str, Any, int, int]]) -> None:
    """The members table's rows again, with ``changes``' labels moved up (``Session.replace``: beside the table, then
    back; on Spark one copy swapped in)."""
    schema, what = s.tables.series_state.schema or "", "moving the series' node up"
    members = s.members(state)
    moving = members_of(s.wh, schema, memberstore.moving(state.members), s.published)
    s.session.replace(members, mq.relabeled(members, changes), moving, what)
