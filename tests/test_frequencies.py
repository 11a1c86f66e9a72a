"""Nodes counted in memory from the fetched base frequency set (``veil.frequencies``, ``[search] local_cells``):
every node's cells and sizes equal the warehouse's ``GROUP BY``, and every search finds what brute force in SQL
finds, on DuckDB and PostgreSQL, with no statement per node."""

from __future__ import annotations

import collections
import contextlib
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil import queries as q
from veil import search
from veil.counts import NodeCounts
from veil.frequencies import Floors, FrequencySet
from veil.grouping import group
from veil.hierarchy import SuppressSpec, ValueKind, build
from veil.lattice import Lattice, finer, meet
from veil.privacy import Specification
from veil.run import metric_for, open_run, search_counts
from veil.workstats import Stats
from tests.conftest import Db
from tests.test_streaming import SETS, all_nodes, config, people


def _naive(f: FrequencySet, node: tuple[int | None, ...]) -> dict[tuple[int, ...], int]:
    """(block codes…, sensitive codes…) → rows, cell by cell in Python."""
    out: collections.Counter[tuple[int, ...]] = collections.Counter()
    for c in range(len(f.n)):
        block = tuple(int(f.levels[i][lv][f.leaves[i][c]]) for i, lv in enumerate(node) if lv is not None)
        out[block + tuple(int(s) for s in f.sensitive[c])] += int(f.n[c])
    return dict(out)


@st.composite
def frequency_sets(draw: st.DrawFn) -> FrequencySet:
    qis = draw(st.integers(1, 3))
    leaves, levels, cards = [], [], []
    cells = draw(st.integers(1, 30))
    for _ in range(qis):
        width = draw(st.integers(1, 6))
        # the leaves' own level: codes as they are, or renumbered (a map that is not the identity)
        maps = [np.asarray(draw(st.one_of(st.just(list(range(width))), st.permutations(list(range(width))))))]
        for _ in range(draw(st.integers(0, 2))):  # each level merges codes of the one below
            parent = np.asarray(
                draw(
                    st.lists(
                        st.integers(0, 2), min_size=len(set(maps[-1].tolist())), max_size=len(set(maps[-1].tolist()))
                    )
                )
            )
            _, parent = np.unique(parent, return_inverse=True)
            maps.append(parent[maps[-1]])
        leaves.append(np.asarray(draw(st.lists(st.integers(0, width - 1), min_size=cells, max_size=cells))))
        levels.append(maps)
        cards.append([int(m.max()) + 1 for m in maps])
    spread = draw(st.lists(st.integers(1, 4), min_size=0, max_size=2))
    sensitive = (
        np.column_stack([draw(st.lists(st.integers(0, s - 1), min_size=cells, max_size=cells)) for s in spread])
        if spread
        else np.zeros((cells, 0), dtype=np.int64)
    )
    n = np.asarray(draw(st.lists(st.integers(1, 9), min_size=cells, max_size=cells)))
    return FrequencySet(leaves, levels, cards, sensitive, n)


def _check_against_naive(f: FrequencySet, node: tuple[int | None, ...]) -> None:
    expected = _naive(f, node)
    got = f.counts(node)
    assert got["n"].dtype == np.int64  # rows, whatever the set weighs its tallies with
    kept = [i for i, lv in enumerate(node) if lv is not None]
    rows = [
        tuple(int(got[f"g{i}"][r]) for i in kept) + tuple(int(got[f"s{j}"][r]) for j in range(len(f.spread)))
        for r in range(len(got["n"]))
    ]
    assert dict(zip(rows, got["n"].tolist())) == expected and len(rows) == len(set(rows))
    assert rows == sorted(rows)  # block-key order, as the warehouse's stream delivers
    blocks: collections.Counter[tuple[int, ...]] = collections.Counter()
    for key, n in expected.items():
        blocks[key[: len(kept)]] += n
    size, count = f.sizes(node)
    assert dict(zip(size.tolist(), count.tolist())) == dict(collections.Counter(blocks.values()))
    assert size.tolist() == sorted(size.tolist())


@settings(max_examples=80, deadline=None)
@given(f=frequency_sets(), data=st.data())
def test_cells_and_sizes_equal_a_naive_group_by(f: FrequencySet, data: st.DataObject) -> None:
    _check_against_naive(f, tuple(data.draw(st.one_of(st.none(), st.integers(0, len(m) - 1))) for m in f.levels))


@settings(max_examples=80, deadline=None)
@given(f=frequency_sets(), data=st.data())
def test_nodes_rolled_up_from_the_last_nodes_groupings_equal_a_naive_group_by(
    f: FrequencySet, data: st.DataObject
) -> None:
    # one long-lived set asked for a walk of nodes, as a search asks: most roll up from a kept finer grouping
    # (``Grouping``), sizes before cells or cells alone; then with room for 2 groupings only
    for held in (f, FrequencySet(f.leaves, f.levels, f.cards, f.sensitive, f.n, keep_groupings=2)):
        level = st.one_of(st.none(), *(st.just(j) for j in range(3)))
        for _ in range(data.draw(st.integers(1, 8))):
            node = tuple(min(lv, len(m) - 1) if lv is not None else None for lv, m in zip(data.draw(
                st.tuples(*(level for _ in f.levels))), f.levels))  # fmt: skip
            if data.draw(st.booleans()):
                held.sizes(node)
            _check_against_naive(held, node)
        assert len(held._groupings) <= held._groupings.limit


def test_cells_kept_in_narrow_types_count_exactly_where_their_keys_do_not_fit_them() -> None:
    # a floor's codes are kept as narrow as their cardinality allows (``narrow``: QI 0's 40,000 leaves in int32, QI 1
    # and two sensitive columns of 300 values in int16), while a block and its sensitive codes packed reach 400 * 300 * 300
    rng = np.random.default_rng(7)
    cells = 4000
    leaves = [rng.integers(0, 40_000, cells), rng.integers(0, 3, cells)]
    levels = [[np.arange(40_000), np.arange(40_000) // 100], [np.arange(3), np.zeros(3, dtype=np.int64)]]
    sensitive = np.column_stack([rng.integers(0, 300, cells), rng.integers(0, 300, cells)])
    n = rng.integers(1, 5, cells)
    f = FrequencySet(leaves, levels, [[40_000, 400], [3, 1]], sensitive, n, narrow=True)
    assert [c.dtype for c in f.leaves] == [np.int32, np.int16] and f.sensitive.dtype == np.int16
    assert f.nbytes == cells * (4 + 2 + 2 * 2 + 8)
    for node in [(1, 0), (1, None), (0, 1), (1, 1)]:
        f.sizes(node)  # the grouping found first: cells packed with their sensitive codes from it
        _check_against_naive(f, node)
    _check_against_naive(FrequencySet(leaves, levels, [[40_000, 400], [3, 1]], sensitive, n, narrow=True), (1, 0))


def test_codes_too_wide_for_one_integer_are_grouped_by_rows() -> None:
    # three QIs of 2^21 codes each: their product exceeds 2^62, so cells are grouped as rows of codes
    width = 1 << 21
    leaves = [np.array([0, width - 1, 0, width - 1]), np.array([5, 5, 5, 6]), np.array([7, 7, 7, 7])]
    f = FrequencySet(
        leaves, [[np.arange(width)]] * 3, [[width]] * 3, np.zeros((4, 0), dtype=np.int64), np.array([1, 2, 3, 4])
    )
    assert math.prod([width] * 3) >= 2**62
    got = f.counts((0, 0, 0))
    assert got["g0"].tolist() == [0, width - 1, width - 1] and got["n"].tolist() == [4, 2, 4]
    assert [a.tolist() for a in f.sizes((0, 0, 0))] == [[2, 4], [1, 2]]


def test_every_node_counted_in_memory_equals_the_warehouse(db: Db) -> None:
    table = people(db, seed=5, n=150)
    conf = config(db, table, SETS["k+entropy"], 0.0)
    with open_run(conf, local_cells=0) as (conf, sql), open_run(conf) as (_, here):
        assert here.local is not None and sql.local is None and here.stats.local_cells == sql.stats.base_cells
        for node in all_nodes(sql.heights):
            a, b = sql.counts(node), here.counts(node)
            assert (a.keys == b.keys).all() and a.rows == b.rows, node
            for name in ("score",):
                ba, bb = a.blocks(name), b.blocks(name)
                assert (
                    (ba.indptr == bb.indptr).all() and (ba.codes == bb.codes).all() and (ba.counts == bb.counts).all()
                )
            if None not in node:
                sa_, sb = sql.sizes(node), here.sizes(node)
                assert sa_.sizes.tolist() == sb.sizes.tolist() and sa_.blocks.tolist() == sb.blocks.tolist()
        assert here.stats.node_queries == 0 and here.stats.local_nodes > 0


def test_a_base_above_the_bound_is_counted_in_the_warehouse(db: Db) -> None:
    # DuckDB and PostgreSQL: every node a statement over the warehouse's rollups, no floor kept
    table = people(db, seed=6, n=80)
    conf = config(db, table, SETS["k"], 0.0)
    with open_run(conf, local_cells=10) as (conf, wh):
        assert wh.stats.base_cells > 10 and wh.local is None
        for node in [(0, 0, 0), (4, 1, 2), (3, 1, 2)]:
            wh.sizes(node)
        assert wh.stats.node_queries == 3 and wh.stats.local_nodes == 0 and wh.stats.floors == 0


@pytest.mark.parametrize("spare", [0, -1])
def test_a_batched_run_fetches_the_cells_before_checking_them(db: Db, monkeypatch, spare: int) -> None:
    """Where a statement costs more than a pass (``batch``: Spark) and the source's rows fit ``local_cells`` (so its
    cells do too), the base's cells are fetched first and give the check's rows and cells: no ``base_total``
    statement.  With one row more than the bound the check counts them in the warehouse first, and the cells
    (fewer than the rows) are fetched after it."""
    import veil.baseset

    table = people(db, seed=7, n=90)
    conf = config(db, table, SETS["k+entropy"], 0.0)
    with open_run(conf, local_cells=0) as (conf, sql):
        cells, rows = sql.stats.base_cells, sql.rows
    assert cells < rows
    checks = []
    plain = veil.baseset.base_total
    monkeypatch.setattr(veil.baseset, "base_total", lambda *a: checks.append(1) or plain(*a))
    with open_run(conf, local_cells=rows + spare, batch=True) as (conf, wh):
        assert (wh.stats.base_cells, wh.rows, wh.stats.local_cells) == (cells, rows, cells)
        assert wh.local is not None and int(wh.local.n.sum()) == rows and wh.local.cells == cells
        assert len(checks) == (0 if spare == 0 else 1)


@pytest.mark.parametrize("models", list(SETS))
@pytest.mark.parametrize("metric", ["discernibility", "kl-divergence"])
@pytest.mark.parametrize("budget", [0.0, 0.05])
def test_search_in_memory_equals_brute_force_in_the_warehouse(db: Db, models: str, metric: str, budget: float) -> None:
    table = people(db, seed=11, n=120)
    conf = config(db, table, SETS[models], budget, metric)
    with open_run(conf, local_cells=0) as (conf, sql):
        spec = Specification(conf.models, budget)
        brute = search.run(
            ["brute-force"], Lattice(sql.heights), sql.attributes, sql.counts, spec, metric_for(sql, metric), sql.rows
        )
    with open_run(conf) as (conf, wh):
        fast = _searched(wh, Specification(conf.models, budget), ["incognito", "optimal"], metric)
        assert wh.stats.node_queries == 0 and wh.stats.local_nodes > 0 and wh.stats.test_queries == 0
    assert fast.minimal == brute.minimal
    assert (fast.optimal is None) == (brute.optimal is None)
    if brute.optimal is not None:
        assert fast.optimal.node == brute.optimal.node and fast.optimal.value == brute.optimal.value


@settings(max_examples=150, deadline=None)
@given(
    keys=st.lists(st.integers(0, 2**40), min_size=1, max_size=60),
    space=st.sampled_from([None, 1 << 41, 1 << 61, 1 << 62]),
)
def test_grouping_equals_numpys_unique_on_every_path(keys: list[int], space: int | None) -> None:
    key = np.asarray(keys, dtype=np.int64)
    if space is None:  # the dense table: keys folded into a small space
        key %= 97
        space = 97
    unique, inverse = group(key, space)
    want_unique, want_inverse = np.unique(key, return_inverse=True)
    assert unique.tolist() == want_unique.tolist() and inverse.tolist() == want_inverse.reshape(-1).tolist()


def _content(nc: NodeCounts) -> tuple[list[list[int]], list[int], list[list[int]]]:
    """Block keys, rows per block, and (when a sensitive column is counted) every block's histogram."""
    rows = np.bincount(nc.cell_block, weights=nc.cell_count, minlength=len(nc.keys)).astype(int).tolist()
    if not nc.sensitive:
        return nc.keys.tolist(), rows, []
    bc = nc.blocks("score")
    return nc.keys.tolist(), rows, [np.diff(bc.indptr).tolist(), bc.codes.tolist(), bc.counts.tolist()]


@pytest.mark.parametrize("models", list(SETS))
@pytest.mark.parametrize("budget", [0.0, 0.05])
def test_nodes_above_a_kept_floor_equal_brute_force_in_the_warehouse(db: Db, models: str, budget: float) -> None:
    # the base (about 110 cells) exceeds local_cells = 40: nodes are counted in the warehouse until one with at
    # most 40 cells is, whose cells are kept; the nodes above it roll up here.  Floors are fetched where a
    # statement's fixed cost dominates (Spark's ``batch_sizes``), forced here with ``batch``.
    table = people(db, seed=11, n=120)
    conf = config(db, table, SETS[models], budget, "discernibility")
    with open_run(conf, local_cells=0) as (conf, sql):
        spec = Specification(conf.models, budget)
        plain = metric_for(sql, "discernibility")
        brute = search.run(["brute-force"], Lattice(sql.heights), sql.attributes, sql.counts, spec, plain, sql.rows)
        every = {node: _content(sql.counts(node)) for node in all_nodes(sql.heights) if None not in node}
    with open_run(conf, local_cells=0, batch=True) as (conf, sql):  # the same search, every node a statement
        spec = Specification(conf.models, budget)
        counts_for, sized, probe, prefetch = search_counts(sql, spec, metric_for(sql, "discernibility"))
        search.run(
            ["incognito", "optimal"],
            Lattice(sql.heights),
            sql.attributes,
            counts_for,
            spec,
            sized,
            sql.rows,
            probe=probe,
            prefetch=prefetch,
        )
        statements = sql.stats.node_queries
    with open_run(conf, local_cells=40, batch=True) as (conf, wh):
        assert wh.stats.base_cells > 40 and wh.local is None
        spec = Specification(conf.models, budget)
        counts_for, sized, probe, prefetch = search_counts(wh, spec, metric_for(wh, "discernibility"))
        fast = search.run(
            ["incognito", "optimal"],
            Lattice(wh.heights),
            wh.attributes,
            counts_for,
            spec,
            sized,
            wh.rows,
            probe=probe,
            prefetch=prefetch,
        )
        # a node rolled up here costs no statement; keeping a floor costs one (its cells), at most once a floor
        assert wh.stats.node_queries <= statements - wh.stats.local_nodes + wh.stats.floors
        for node, expected in every.items():  # every node: from a floor or a statement, the same cells
            parts = [_content(c) for c in wh.stream(node)]  # chunks of whole blocks, in block-key order
            got = (
                sum((p[0] for p in parts), []),
                sum((p[1] for p in parts), []),
                [sum((p[2][j] for p in parts), []) for j in range(3)] if expected[2] else [],
            )
            assert got == expected, node
        assert wh.stats.floors > 0 and wh.stats.local_nodes > 0
    assert fast.minimal == brute.minimal
    assert (fast.optimal is None) == (brute.optimal is None)
    if brute.optimal is not None:
        assert fast.optimal.node == brute.optimal.node and fast.optimal.value == brute.optimal.value


def test_sizes_alone_count_a_nodes_cells_only_where_they_may_be_kept() -> None:
    """``HeldCells.sized``: a node with more than a quarter of the held cells in blocks gets its sizes alone; one
    with fewer blocks — a full node or a subset one (Incognito's) — is counted whole and kept as a floor, and a
    subset floor serves only nodes that project out the same QIs.  Each node counts once in ``local_nodes``."""
    from veil.heldcells import HeldCells
    from veil.hierarchy import IntervalsSpec, ValueKind, build
    from veil.workstats import Stats

    h = build(IntervalsSpec((2, 4)), "a", list(range(8)), ValueKind.INTEGER)
    local = FrequencySet(
        [np.arange(8)],
        [[h.ancestors(0, j) for j in range(h.height + 1)]],
        [[h.cardinality(j) for j in range(4)]],
        np.zeros((8, 0), dtype=np.int64),
        np.ones(8, dtype=np.int64),
    )
    stats = Stats()
    held = HeldCells(local, Floors([h], 8), 0, stats)
    counted: list[tuple[int | None, ...]] = []
    plain = local.counts
    local.counts = lambda node: counted.append(tuple(node)) or plain(node)  # type: ignore[method-assign]
    assert [a.tolist() for a in held.sized((None,), local)] == [[8], [1]] and counted == [(None,)]  # kept
    assert held.floors is not None and held.floors.holder((None,)) is not None
    assert held.floors.holder((3,)) is None  # a subset floor serves no node that keeps its QI
    assert [a.tolist() for a in held.sized((0,), local)] == [[1], [8]] and counted == [(None,)]  # 8 blocks of 8
    assert [a.tolist() for a in held.sized((2,), local)] == [[4], [2]] and counted == [(None,), (2,)]  # kept
    assert stats.floors == 2 and held.floors.holder((3,)) is not None
    held.counted((2,), local)  # its cells, asked next, are the ones just counted
    held.sized((1,), local)
    held.counted((1,), local)  # sized alone first (4 blocks of 8 cells), counted when asked
    assert stats.local_nodes == 4 and counted == [(None,), (2,), (1,)]


def _grid(sensitive: bool) -> tuple[Any, FrequencySet, Stats]:
    """Cells held with room for floors: the 64 pairs of two QIs ``a0``, ``a1`` of 8 values (intervals of 2, then 4:
    8, 4, 2, 1 codes a level), each one row, with 4 sensitive values (``sensitive``) or none."""
    from veil.heldcells import HeldCells
    from veil.hierarchy import IntervalsSpec

    hs = [build(IntervalsSpec((2, 4)), f"a{i}", list(range(8)), ValueKind.INTEGER) for i in range(2)]
    a, b = np.meshgrid(np.arange(8), np.arange(8))
    values = ((a + b) % 4).reshape(64, 1) if sensitive else np.zeros((64, 0), dtype=np.int64)
    local = FrequencySet(
        [a.ravel(), b.ravel()],
        [[h.ancestors(0, j) for j in range(h.height + 1)] for h in hs],
        [[h.cardinality(j) for j in range(h.height + 1)] for h in hs],
        values,
        np.ones(64, dtype=np.int64),
    )
    stats = Stats()
    return HeldCells(local, Floors(hs, 64), values.shape[1], stats), local, stats


def _same_cells(a: FrequencySet, b: FrequencySet, node: tuple[int | None, ...]) -> None:
    want, got = a.counts(node), b.counts(node)
    assert {k: v.tolist() for k, v in want.items()} == {k: v.tolist() for k, v in got.items()}


@pytest.mark.parametrize("sensitive", [False, True])
def test_a_subset_node_only_the_base_covers_gets_a_hub_its_subset_rolls_up_from(sensitive: bool) -> None:
    """``HeldCells.hub``: a subset node (Incognito's) no floor covers is rolled up from a node of its subset kept
    as a floor, its QIs lowered as far as the hub surely has at most a quarter of the base's cells (8 values of
    ``a1`` at level 0, 4 at level 1; times 4 sensitive values) — and so is every later node of the subset, with
    the same cells as from the base.  One whose own level is already too wide reads the base."""
    held, local, stats = _grid(sensitive)
    hub = held.holder((None, 2))
    assert hub is not None and hub is not local and stats.floors == 1
    assert hub.floor == ((None, 1) if sensitive else (None, 0))  # 4 x 4 values of 64 cells; 8 without values
    for node in [(None, 2), (None, 3), (None, 1)]:
        assert held.holder(node) is hub  # the subset's other nodes roll up from it, with no other hub
        _same_cells(local, hub, node)
    assert stats.floors == 1
    assert held.floors is not None
    assert held.holder((0, None)) is (local if sensitive else held.floors.holder((0, None)))  # 8 x 4 x 4 > 64
    assert stats.floors == (1 if sensitive else 2)


@pytest.mark.parametrize("sensitive", [False, True])
def test_a_full_node_no_floor_covers_gets_a_hub_too(sensitive: bool) -> None:
    """``HeldCells.hub`` for a node that keeps every QI: lowered the same way (a0 of 2 values at level 2, a1 of 1 at
    level 3; 4 sensitive values: a0 lowered to level 1, 4 x 1 x 4 = 16 cells at most, a quarter of 64; without them
    to (0, 2), 8 x 2), kept as a floor the nodes above it roll up from, with the base's cells; a node whose own
    levels are already too wide reads the base."""
    held, local, stats = _grid(sensitive)
    hub = held.holder((2, 3))
    assert hub is not None and hub is not local and hub.floor == ((1, 3) if sensitive else (0, 2))
    for node in [(2, 3), (3, 3), (1, 3)]:
        assert held.holder(node) is hub
        _same_cells(local, hub, node)
    assert stats.floors == 1
    assert held.holder((0, 0)) is local  # 8 x 8 (x 4) cells at most: no hub


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_node_rolled_up_from_a_kept_floor_equals_the_base(data: st.DataObject) -> None:
    """Any node a kept floor covers — full or subset floor, the node projecting out at least the floor's QIs —
    has the same cells rolled up from the floor as from the base."""
    from veil.hierarchy import IntervalsSpec, ValueKind, build

    hs = [build(IntervalsSpec((2, 4)), f"a{i}", list(range(8)), ValueKind.INTEGER) for i in range(2)]
    cells = data.draw(st.integers(1, 25))
    leaves = [np.asarray(data.draw(st.lists(st.integers(0, 7), min_size=cells, max_size=cells))) for _ in hs]
    spread = data.draw(st.sampled_from([0, 3]))
    sensitive = (
        np.asarray(data.draw(st.lists(st.integers(0, 2), min_size=cells, max_size=cells))).reshape(cells, 1)
        if spread
        else np.zeros((cells, 0), dtype=np.int64)
    )
    n = np.asarray(data.draw(st.lists(st.integers(1, 5), min_size=cells, max_size=cells)))
    levels = [[h.ancestors(0, j) for j in range(h.height + 1)] for h in hs]
    cards = [[h.cardinality(j) for j in range(h.height + 1)] for h in hs]
    base = FrequencySet(leaves, levels, cards, sensitive, n)
    level = st.one_of(st.none(), st.integers(0, 3))
    below = (data.draw(level), data.draw(level))
    floors = Floors(hs, 1000)
    floor = floors.keep(below, base.counts(below), sensitive.shape[1])
    assert floor is not None
    above = tuple(None if b is None else data.draw(st.one_of(st.none(), st.integers(b, 3))) for b in below)
    assert floor.covers(above) and floors.holder(above) is floor
    want, got = base.counts(above), floor.counts(above)
    assert {k: v.tolist() for k, v in want.items()} == {k: v.tolist() for k, v in got.items()}
    kept_elsewhere = [i for i, b in enumerate(below) if b is None]
    if kept_elsewhere:  # a node keeping a QI the floor projected out does not roll up from it
        assert not floor.covers(tuple(0 if i == kept_elsewhere[0] else a for i, a in enumerate(above)))


@pytest.mark.parametrize("models", list(SETS))
def test_a_hub_whose_cells_fit_is_fetched_and_counts_the_nodes_above_it_here(db: Db, models: str) -> None:
    # the base (about 110 cells) exceeds local_cells = 40, but a hub of at most 0.3 of them fits: where a
    # statement's fixed cost dominates (``batch``: Spark) the hub materialized before a node would read the base
    # is fetched and kept as a floor, and every node above it is counted here (``BaseSet.holder``)
    table = people(db, seed=11, n=120)
    conf = config(db, table, SETS[models], 0.0, "discernibility")
    with open_run(conf, local_cells=0) as (conf, sql):
        spec = Specification(conf.models, 0.0)
        plain = metric_for(sql, "discernibility")
        brute = search.run(["brute-force"], Lattice(sql.heights), sql.attributes, sql.counts, spec, plain, sql.rows)
        every = {node: _content(sql.counts(node)) for node in all_nodes(sql.heights)}
    tuning = {"local_cells": 40, "batch": True, "rollup_min_cells": 1, "hub_ratio": 0.3}
    for strategy in ("optimal", "incognito"):
        with open_run(conf, **tuning) as (conf, wh):
            assert wh.stats.base_cells > 40 and wh.local is None
            fast = _searched(wh, Specification(conf.models, 0.0), [strategy])
            if strategy == "incognito":
                assert sorted(fast.minimal or []) == sorted(brute.minimal or [])
            else:
                assert fast.optimal == brute.optimal
            hubs, floors, local = wh.stats.rollups.hubs, wh.stats.floors, wh.stats.local_nodes
            # Incognito's subset nodes too: their hubs keep every QI (``Rollups.hub``), so a hub fetched for one
            # subset's node counts other subsets' nodes here as well
            assert hubs >= 1 and floors >= 1 and local > 0, (strategy, hubs, floors, local)
            held = wh.base.held
            # the base not held, fetched floors take its share of ``local_cells`` too (``BaseSet._fetched``)
            assert held.floors is not None and held.floors.budget == 2 * tuning["local_cells"]
            # with a sensitive column counted, block sizes have floors of their own (the blocks' rollups' hubs)
            assert (held.block_floors is None) == (models == "k")
            assert models == "k" or len(held.block_floors.kept) >= 1
            for node, expected in every.items():  # from a fetched floor of blocks or a statement: the same sizes
                hist = wh.sizes(node)
                got = collections.Counter(dict(zip(hist.sizes.tolist(), hist.blocks.tolist())))
                assert got == collections.Counter(expected[1]), node
            for node, expected in every.items():  # every node, from a fetched hub or a statement: the same cells
                assert _content(wh.counts(node)) == expected, node


def test_a_subset_nodes_hub_keeps_every_qi_and_counts_other_subsets_here(db: Db) -> None:
    # Incognito's subset node at the bottom of its QI's hierarchy has no level to lower: its hub brings the
    # projected-out QIs back at their top level and lowers them (``Rollups.hub``), so the hub fetched for it
    # also counts, with no statement, a node of another subset of QIs above it
    with _hub_run(db) as (expected, wh):
        rollups = wh.base.cell_rollups
        bottoms = [tuple(0 if j == i else None for j in range(len(wh.heights))) for i in range(len(wh.heights))]
        first = next(n for n in bottoms if rollups.hub(n) is not None)  # (with its own QI alone, none would)
        hub = rollups.hub(first)
        assert None not in hub, hub
        assert _hist(wh.sizes(first)) == expected[first] and wh.stats.rollups.hubs == 1
        i = first.index(0)
        j = (i + 1) % len(hub)
        other = tuple(hub[j] if k == j else None for k in range(len(hub)))  # QI i projected out, QI j kept
        queries = wh.stats.node_queries
        assert _hist(wh.sizes(other)) == expected[other]
        assert wh.stats.node_queries == queries and wh.stats.rollups.hubs == 1


def test_a_hub_made_to_be_fetched_is_counted_by_its_fetch(db: Db) -> None:
    # a hub whose cells' bound fits the floors is materialized and fetched: two statements, the fetch counting its
    # cells — no statement counts the hub's rows on its own (``Rollups._materialize``); its cells are as many as
    # the hub has, and the node is sized from it here
    with _hub_run(db) as (expected, wh):
        rollups = wh.base.cell_rollups
        node = next(n for n in all_nodes(wh.heights) if None not in n and rollups.hub(n) is not None)
        hub = rollups.hub(node)
        before = wh.work_done().statements
        assert _hist(wh.sizes(node)) == expected[node]
        assert wh.work_done().statements - before == 2 and wh.stats.rollups.hubs == 1
        number, cells = rollups.kept[hub]
        table = wh.base.layout.node_table(number, hub)
        assert cells == wh.session.scalar(q.count_rows(table), "test") == wh.base.held.floors.holder(node).cells


def test_a_frontier_whose_meet_has_no_hub_fetches_each_nodes_own_instead_of_a_batch(db: Db) -> None:
    # two nodes announced together (``prefetch_sizes``, Incognito's frontier) whose meet would read the base: each
    # node's own hub is fetched as a floor (``BlockSizes.prefetch``) and both are counted here — no statement
    # counts them together from the base
    with _hub_run(db) as (expected, wh):
        rollups = wh.base.cell_rollups
        full = [n for n in all_nodes(wh.heights) if None not in n and rollups.hub(n) is not None]
        a, b = next(
            (a, b) for a in full for b in full if rollups.hub(meet([a, b])) is None and not finer(a, b) and a != b
        )
        wh.prefetch_sizes([a, b])
        assert wh.stats.batched == 0 and wh.stats.rollups.hubs >= 1
        queries = wh.stats.node_queries
        assert _hist(wh.sizes(a)) == expected[a] and _hist(wh.sizes(b)) == expected[b]
        assert wh.stats.node_queries == queries


def test_floors_beyond_the_budget_let_the_least_recently_used_go() -> None:
    # three floors of 2 cells that cover one another's nodes not at all, a budget of 4: the third keeps the one
    # just read (a search returns to the region it is in) and lets the other go — the oldest kept, but used least
    hs = [build(SuppressSpec(), name, ["1", "2"], ValueKind.TEXT) for name in "abc"]
    floors = Floors(hs, budget=4)
    cells = {f"g{i}": np.array([0, 1]) for i in range(3)} | {"n": np.array([3, 4])}
    first, second, third = (0, None, None), (None, 0, None), (None, None, 0)
    for node in (first, second):
        assert floors.keep(node, cells, 0) is not None
    assert floors.holder((1, None, None)).floor == first  # read: now the most recently used
    assert floors.keep(third, cells, 0) is not None
    assert [f.floor for f in floors.kept] == [first, third]
    assert floors.holder((None, 1, None)) is None
    assert [a.tolist() for a in floors.holder((0, None, None)).sizes((0, None, None))] == [[3, 4], [1, 1]]


def test_floors_rolled_up_here_go_before_floors_fetched_from_the_warehouse() -> None:
    # a floor fetched (a hub: a statement to fetch again) and two rolled up here (no statement to count again),
    # a budget of 4 cells: the fetched one stays though it is the least recently used; with every floor fetched,
    # the least recently used goes, as before
    hs = [build(SuppressSpec(), name, ["1", "2"], ValueKind.TEXT) for name in "abc"]
    cells = {f"g{i}": np.array([0, 1]) for i in range(3)} | {"n": np.array([3, 4])}
    first, second, third = (0, None, None), (None, 0, None), (None, None, 0)
    floors = Floors(hs, budget=4)
    assert floors.keep(first, cells, 0, fetched=True) is not None
    assert floors.keep(second, cells, 0) is not None
    assert floors.holder((None, 1, None)).floor == second  # read: the most recently used
    assert floors.keep(third, cells, 0) is not None
    assert [f.floor for f in floors.kept] == [first, third]
    fetched = Floors(hs, budget=4)
    for node in (first, second):
        assert fetched.keep(node, cells, 0, fetched=True) is not None
    assert fetched.keep(third, cells, 0, fetched=True) is not None
    assert [f.floor for f in fetched.kept] == [second, third]
    assert fetched.keep(first, cells, 0) is None  # rolled up here, with the fetched ones filling the budget: not kept
    assert [f.floor for f in fetched.kept] == [second, third]


def test_a_kept_hub_let_go_from_memory_is_fetched_again_instead_of_queried(db: Db) -> None:
    # a hub fetched as a floor and later let go (the floors' budget) stays kept in the warehouse: a node above it
    # then fetches it again (``Rollups.prepare`` tells ``BaseSet._fetch`` of it) rather than querying it, and the
    # nodes above it are counted here again
    with _hub_run(db) as (expected, wh):
        rollups = wh.base.cell_rollups
        full = [n for n in all_nodes(wh.heights) if None not in n]
        node = max((n for n in full if rollups.hub(n) is not None), key=lambda n: sum(n))
        hub = rollups.hub(node)
        assert _hist(wh.sizes(node)) == expected[node] and hub in rollups.kept
        above = [n for n in all_nodes(wh.heights) if finer(hub, n) and wh.counted_sizes(n) is None]
        assert above
        wh.base.held.floors.clear()  # let go from memory, as the floors' budget does
        queries, floors = wh.stats.node_queries, wh.stats.floors
        for n in above:
            assert _hist(wh.sizes(n)) == expected[n], n
        assert wh.stats.node_queries == queries and wh.stats.floors > floors


@contextlib.contextmanager
def _hub_run(db: Db) -> Iterator[tuple[dict[tuple[int | None, ...], dict[int, int]], Any]]:
    """Every node's block sizes counted by statements, and a run over the same table (k, about 110 base cells)
    where a statement's fixed cost dominates (``batch``: Spark) and hubs of at most 0.3 of the base's cells are
    fetched as floors of at most 40 cells in all."""
    table = people(db, seed=11, n=120)
    conf = config(db, table, SETS["k"], 0.0, "discernibility")
    with open_run(conf, local_cells=0) as (conf, sql):
        expected = {node: _hist(sql.sizes(node)) for node in all_nodes(sql.heights)}
    with open_run(conf, local_cells=40, batch=True, rollup_min_cells=1, hub_ratio=0.3) as (conf, wh):
        yield expected, wh


def _hist(hist) -> dict[int, int]:  # type: ignore[no-untyped-def]
    return dict(zip(hist.sizes.tolist(), hist.blocks.tolist()))


def test_with_no_room_for_floors_a_batched_run_materializes_no_hub_to_fetch(db: Db) -> None:
    # local_cells = 0 on a batched backend (Spark): no floor can be kept, so a node's sizes or counts read as
    # without batching — no hub is materialized only to be fetched (``BaseSet._fetched``); the same statements
    table = people(db, seed=11, n=120)
    conf = config(db, table, SETS["k+entropy"], 0.0, "discernibility")
    spent = {}
    for batch in (False, True):
        with open_run(conf, local_cells=0, batch=batch, rollup_min_cells=1, hub_ratio=0.3) as (conf, wh):
            held = wh.base.held
            assert held is not None and held.floors is None and held.block_floors is None
            before = wh.work_done().statements
            for node in sorted(all_nodes(wh.heights), key=lambda n: [(a or 0) for a in n]):
                wh.sizes(node)  # bottom up, sizes alone, as a search asks them: 136 statements, 14 hubs before
            spent[batch] = (wh.work_done().statements - before, wh.stats.rollups.hubs)
    assert spent[True] == spent[False], spent


def _searched(wh, spec: Specification, strategies: list[str], metric: str = "discernibility") -> search.SearchResult:  # type: ignore[no-untyped-def]
    """``strategies`` run over ``wh`` as ``veil search`` runs them: its counts function, probe and prefetch."""
    counts_for, sized, probe, prefetch = search_counts(wh, spec, metric_for(wh, metric))
    lattice = Lattice(wh.heights)
    return search.run(
        strategies, lattice, wh.attributes, counts_for, spec, sized, wh.rows, probe=probe, prefetch=prefetch
    )


@pytest.mark.parametrize("models", list(SETS))
def test_floors_over_a_held_base_only_from_local_floors_from_cells(
    db: Db, models: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a base held here below ``LOCAL_FLOORS_FROM`` cells keeps no floors (rolling up from it is cheaper); with the
    # threshold lowered to 1 the same searches keep floors, and both find what brute force finds
    import veil.baseset

    table = people(db, seed=5, n=120)
    conf = config(db, table, SETS[models], 0.02, "discernibility")
    spec = Specification(conf.models, 0.02)
    with open_run(conf, local_cells=0) as (conf, sql):
        plain = metric_for(sql, "discernibility")
        brute = search.run(["brute-force"], Lattice(sql.heights), sql.attributes, sql.counts, spec, plain, sql.rows)
    for threshold in (veil.baseset.LOCAL_FLOORS_FROM, 1):
        monkeypatch.setattr(veil.baseset, "LOCAL_FLOORS_FROM", threshold)
        for strategy in ("optimal", "incognito"):
            with open_run(conf, local_cells=10_000) as (conf, wh):
                held = wh.base.held
                assert held is not None and held.local is not None and 0 < held.local.cells < 10_000
                fast = _searched(wh, spec, [strategy])
                assert (held.floors is None) == (threshold > 1)
                assert (wh.stats.floors > 0) == (threshold == 1), (strategy, wh.stats.floors)
            if strategy == "incognito":
                assert sorted(fast.minimal or []) == sorted(brute.minimal or [])
            else:
                assert fast.optimal == brute.optimal
