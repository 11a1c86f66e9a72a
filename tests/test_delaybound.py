"""The joiners' delay bound of a cohort series (``veil.release.delaybound``, docs/series.md §2a): the rows a
block needs, and the node the series moves up to — checked by hand and, with hypothesis, against every node of
random lattices."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.blockfloor import BlockFloor
from veil.counts import SizeHistogram
from veil.release.delaybound import discernibility, join_rate, needed_rows, rise


def test_the_rows_a_block_needs_by_hand() -> None:
    # 50 joiners a night into 100,000 rows: 0.0005 a row; 10 of them within 90 nights need 10 / 0.045 = 222.2 rows
    rate = join_rate(50 * 30, 100_000, 30)
    assert rate == 0.0005
    assert needed_rows(10, rate, 90) == 223
    assert needed_rows(10, rate, 30) == 667  # 666.67
    assert needed_rows(10, 0.001, 100) == 100  # exactly 100: not rounded up past it
    assert needed_rows(10, 0.0, 90) is None  # no joiner: nothing to bound
    assert join_rate(5, 0, 3) == 0.0


def test_discernibility_of_sizes_and_of_a_histogram() -> None:
    assert discernibility(np.array([3, 5, 12])) == 9 + 25 + 144
    assert discernibility(SizeHistogram((0,), np.array([3, 12]), np.array([2, 1]))) == 2 * 9 + 144


@st.composite
def tables(draw: st.DrawFn) -> tuple[tuple[int, ...], np.ndarray]:
    """Heights of 1 to 3 quasi-identifiers and up to 60 rows of leaf codes."""
    heights = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)))
    rows = draw(st.integers(1, 60))
    leaves = np.array([[draw(st.integers(0, 2**h - 1)) for h in heights] for _ in range(rows)], dtype=np.int64).reshape(
        rows, len(heights)
    )
    return heights, leaves


def _sizes(leaves: np.ndarray, node: tuple[int, ...]) -> np.ndarray:
    """Block sizes at ``node`` of a table whose hierarchies halve a code per level (leaf >> level)."""
    coded = leaves >> np.asarray(node, dtype=np.int64)
    return np.unique(coded, axis=0, return_counts=True)[1]


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_the_node_moved_to_is_the_best_above_that_admits_the_floor(data: st.DataObject) -> None:
    heights, leaves = data.draw(tables())
    current = tuple(data.draw(st.integers(0, h)) for h in heights)
    floor = BlockFloor(data.draw(st.integers(1, 40)), 1.0)
    fewest = data.draw(st.integers(1, 6))
    asked: list[tuple[int, ...]] = []

    def sizes_of(node: tuple[int, ...]) -> np.ndarray:
        asked.append(node)
        return _sizes(leaves, node)

    found = rise(current, heights, sizes_of, floor, fewest)
    above = [
        n
        for n in itertools.product(*(range(h + 1) for h in heights))
        if all(a >= c for a, c in zip(n, current))
        and floor.admits(_sizes(leaves, n))
        and (len(_sizes(leaves, n)) >= fewest or n == current)
    ]
    assert all(all(a >= c for a, c in zip(n, current)) for n in asked)  # never below or beside the current node
    if not above:
        assert found is None
        return
    assert found is not None and found in above
    if floor.admits(_sizes(leaves, current)):
        assert found == current and asked == [current]
        return
    best = min(discernibility(_sizes(leaves, n)) for n in above)
    assert discernibility(_sizes(leaves, found)) == best


def test_a_move_keeps_an_eighth_of_the_blocks_or_none_happens() -> None:
    # a slow table: blocks large enough only two levels up, with 2 and 1 blocks left of 3 — asked to keep 3, none
    sizes = {(0, 0): np.array([3, 5, 12]), (1, 0): np.array([8, 12]), (0, 1): np.array([20]), (1, 1): np.array([20])}
    assert rise((0, 0), (1, 1), sizes.__getitem__, BlockFloor(8, 1.0), fewest=2) == (1, 0)
    assert rise((0, 0), (1, 1), sizes.__getitem__, BlockFloor(8, 1.0), fewest=3) is None
    assert rise((0, 0), (1, 1), sizes.__getitem__, BlockFloor(3, 1.0), fewest=9) == (0, 0)  # holds: stays
