"""The block floor (``veil.blockfloor``): its arithmetic by hand, its monotonicity on random lattices (which the
search's pruning relies on), and the search with it equal to brute force."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_search import Table, specs, tables
from veil.blockfloor import BlockFloor
from veil.config import Config, ReleaseConfig, SourceConfig
from veil.models import KAnonymity
from veil.release.nodechoice import block_floors
from veil.counts import SizeHistogram
from veil.lattice import Lattice
from veil.metrics import make_metric
from veil.privacy import Specification
from veil.search import run


def test_share_of_rows_in_large_blocks_by_hand() -> None:
    # blocks 10, 6, 3, 1 (20 rows); blocks of at least 6 rows hold 16 rows = 80%
    sizes = np.array([10, 6, 3, 1])
    assert BlockFloor(6, 0.8).admits(sizes)
    assert not BlockFloor(6, 0.81).admits(sizes)
    assert BlockFloor(7, 0.5).admits(sizes)  # only the 10: 10 of 20, exactly one half
    assert not BlockFloor(7, 0.51).admits(sizes)
    assert BlockFloor(1, 1.0).admits(sizes)
    assert not BlockFloor(2, 1.0).admits(sizes)


def test_a_size_histogram_counts_blocks_by_weight() -> None:
    # two blocks of 3 and one of 8 (14 rows): 8 / 14 = 57% in blocks of at least 4
    hist = SizeHistogram((0,), np.array([3, 8]), np.array([2, 1]))
    assert BlockFloor(4, 0.57).admits(hist)
    assert not BlockFloor(4, 0.58).admits(hist)
    assert BlockFloor(3, 1.0).admits(hist)


def test_the_share_is_exact_as_written() -> None:
    # 95 of 100 rows: 0.95 as a binary float is above 95/100, the floor compares the fraction as written
    sizes = np.array([95, *([1] * 5)])
    assert BlockFloor(2, 0.95).admits(sizes)


def test_a_cap_on_blocks_counts_blocks_not_rows() -> None:
    # blocks 10, 6, 3, 1: four blocks; a histogram's blocks by weight (two of 3 and one of 8: three)
    sizes = np.array([10, 6, 3, 1])
    assert BlockFloor(most=4).admits(sizes) and not BlockFloor(most=3).admits(sizes)
    hist = SizeHistogram((0,), np.array([3, 8]), np.array([2, 1]))
    assert BlockFloor(most=3).admits(hist) and not BlockFloor(most=2).admits(hist)
    # both parts must hold: 16 of 20 rows in blocks of at least 6 (80%), in four blocks
    assert BlockFloor(6, 0.8, most=4).admits(sizes)
    assert not BlockFloor(6, 0.8, most=3).admits(sizes) and not BlockFloor(6, 0.81, most=4).admits(sizes)
    assert BlockFloor(most=3).describe() == "at most 3 blocks"
    assert BlockFloor(most=1).describe() == "at most 1 block"


def test_few_enough_blocks_are_admitted_whatever_their_sizes() -> None:
    # four blocks, the smallest of 1 row: every block of 2 rows or more fails, unless four blocks are few enough
    sizes = np.array([10, 6, 3, 1])
    assert not BlockFloor(2, 1.0).admits(sizes) and not BlockFloor(2, 1.0, fewest=3).admits(sizes)
    assert BlockFloor(2, 1.0, fewest=4).admits(sizes)
    assert BlockFloor(2, 1.0, most=1, fewest=4).admits(sizes)  # at most `fewest` blocks: the cap does not apply
    assert not BlockFloor(most=3, fewest=2).admits(sizes)
    assert BlockFloor(20, 1.0, most=222, fewest=8).describe() == (
        "at least 100% of the rows in blocks of at least 20 rows, in at most 222 blocks (or at most 8 blocks)"
    )


@st.composite
def floors(draw: st.DrawFn) -> BlockFloor:
    most = draw(st.one_of(st.none(), st.integers(1, 12)))
    fewest = draw(st.integers(0, 4))
    if draw(st.booleans()):
        return BlockFloor(most=most, fewest=fewest)
    return BlockFloor(draw(st.integers(1, 12)), draw(st.sampled_from([0.3, 0.5, 0.8, 0.95, 1.0])), most, fewest)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=tables(), floor=floors())
def test_the_floor_holds_on_every_node_above_one_where_it_holds(table: Table, floor: BlockFloor) -> None:
    bottom = table.bottom()
    lattice = Lattice(tuple(h.height for h in table.hierarchies))
    admitted = {node: floor.admits(bottom.rollup(node)) for node in lattice.ordered}
    for node, ok in admitted.items():
        if ok:
            for above in lattice.ordered:
                if all(a >= b for a, b in zip(above, node)):
                    assert admitted[above], (node, above)


def _search(table: Table, spec: Specification, metric_name: str, strategy: str, floor: BlockFloor, probe: bool):
    bottom = table.bottom()
    lattice = Lattice(tuple(h.height for h in table.hierarchies))
    leaf = [[h.leaf_counts(j) for j in range(h.height + 1)] for h in table.hierarchies]
    metric = make_metric(metric_name, lattice.heights, leaf, bottom.sizes)
    return run(
        [strategy],
        lattice,
        bottom.attributes,
        bottom.rollup,
        spec,
        metric,
        rows=len(table.rows),
        probe=bottom.rollup if probe else None,
        admits=floor.admits,
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=tables(), spec_metric=specs(), floor=floors())
def test_the_search_with_a_floor_equals_brute_force(table: Table, spec_metric, floor: BlockFloor) -> None:
    spec, metric = spec_metric
    brute = _search(table, spec, metric, "brute-force", floor, False)
    opt = _search(table, spec, metric, "optimal", floor, False)
    probed = _search(table, spec, metric, "optimal", floor, True)
    inc = _search(table, spec, metric, "incognito", floor, False)
    bottom = table.bottom()
    passing = {
        node
        for node in Lattice(tuple(h.height for h in table.hierarchies)).ordered
        if spec.evaluate(bottom.rollup(node), len(table.rows)).passed and floor.admits(bottom.rollup(node))
    }
    assert set(brute.minimal or []) <= passing
    assert inc.minimal == brute.minimal
    if brute.optimal is None:
        assert not passing and opt.optimal is None and probed.optimal is None
    else:
        assert brute.optimal.node in passing
        assert opt.optimal is not None and probed.optimal is not None
        assert opt.optimal.node == brute.optimal.node == probed.optimal.node
        assert opt.optimal.value == brute.optimal.value == probed.optimal.value


def test_a_series_first_version_takes_the_standing_floor_by_default() -> None:
    # batch = k = 5: blocks of at least 10 rows, at most 2 · 0.01 · 9,000 / 4 = 45 of them, or at most 8 blocks
    base = Config(Path("v.toml"), SourceConfig("t"), (), (), (KAnonymity(k=5),), release=ReleaseConfig("r"))
    assert block_floors(base, 9_000) == (BlockFloor(10, 1.0, 45, 8),)
    assert block_floors(base, 100) == (BlockFloor(10, 1.0, 1, 8),)  # 0.5 blocks: the 8 blocks stand
    none = replace(base, release=ReleaseConfig("r", series_standing=0.0))
    assert block_floors(none, 9_000) == ()
    both = replace(base, release=ReleaseConfig("r", series_standing=0.02, series_block=100, series_block_share=0.9))
    assert block_floors(both, 9_000) == (BlockFloor(10, 1.0, 90, 8), BlockFloor(100, 0.9))
    assert block_floors(replace(base, release=ReleaseConfig("r", batch=3)), 9_000) == (BlockFloor(6, 1.0, 90, 8),)
