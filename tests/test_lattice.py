from __future__ import annotations

import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

from veil.lattice import Lattice, NodeSet, finer, leq, level_rows, parse_node


def test_size_order_and_neighbours() -> None:
    lat = Lattice((2, 1, 3))
    assert lat.size == 3 * 2 * 4
    assert lat.ordered[0] == lat.bottom == (0, 0, 0) and lat.ordered[-1] == lat.top == (2, 1, 3)
    heights = [sum(n) for n in lat.ordered]
    assert heights == sorted(heights)
    assert lat.successors((2, 0, 3)) == [(2, 1, 3)]
    assert lat.predecessors((1, 0, 0)) == [(0, 0, 0)]
    assert sorted(lat.predecessors((1, 1, 1))) == [(0, 1, 1), (1, 0, 1), (1, 1, 0)]


def test_above_and_below_masks() -> None:
    lat = Lattice((1, 2))
    above = [n for n, m in zip(lat.ordered, lat.above((0, 1))) if m]
    below = [n for n, m in zip(lat.ordered, lat.below((1, 1))) if m]
    assert sorted(above) == [(0, 1), (0, 2), (1, 1), (1, 2)]
    assert sorted(below) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert all(leq((0, 1), n) for n in above)


def test_parse_node() -> None:
    assert parse_node("1, 0,2", (1, 1, 2)) == (1, 0, 2)
    for bad, msg in [("1,0", "has 2 levels"), ("1,x,0", "not a whole number"), ("1,0,3", "exceeds")]:
        with pytest.raises(ValueError, match=msg):
            parse_node(bad, (1, 1, 2))


_level = st.one_of(st.none(), st.integers(0, 3))


@settings(max_examples=200, deadline=None)
@given(data=st.data(), width=st.integers(1, 4))
def test_rows_of_levels_compare_as_finer_does(data: st.DataObject, width: int) -> None:
    # the one-comparison test (``level_rows``, ``NodeSet``) agrees with ``finer`` on nodes with projected-out QIs
    nodes = data.draw(st.lists(st.tuples(*[_level] * width), min_size=1, max_size=20))
    node = data.draw(st.tuples(*[_level] * width))
    rows = level_rows(nodes, width)
    assert [bool((r <= level_rows([node], width)[0]).all()) for r in rows] == [finer(n, node) for n in nodes]
    found = NodeSet(width)
    for n in nodes:
        found.add(n)
    assert found.any_finer(node) == any(finer(n, node) for n in nodes)
