"""The partition of the series step (``veil.release.shards``): every class of every pair of versions lies in one
shard, and layouts that do not allow shards get none."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.release.alignment import Chain, Layout
from veil.release.shards import Sharding

AGE = Chain.of("age", {str(a): (f"{a // 10 * 10}s", "<50" if a < 50 else ">=50", "*") for a in range(20, 80, 3)})
ZIP = Chain.of("zip", {z: (z[:2] + "*", "*") for z in ("1301", "1302", "1401", "1402", "2301")})


def test_equal_hierarchies_only() -> None:
    other = Chain.of("zip", {z: (z[:1] + "*", "*") for z in ("1301", "1302", "1401", "1402", "2301")})
    a = Layout((0, 0), (AGE, ZIP), ("s",))
    assert Sharding.of([a, Layout((1, 1), (AGE, other), ("s",))], 100, 10) is None
    assert Sharding.of([a, Layout((1,), (AGE,), ("s",))], 100, 10) is None  # a QI one version lacks


def test_a_label_under_two_top_blocks_gets_no_shards() -> None:
    odd = Chain.of("x", {"a": ("b", "*"), "b": ("a", "*")})  # "a" at level 0 lies under "b" at level 1
    assert Sharding.of([Layout((0,), (odd,), ("s",)), Layout((1,), (odd,), ("s",))], 10, 1) is None


def test_shard_count_follows_the_cells() -> None:
    a = Layout((0, 0), (AGE, ZIP), ("s",))
    assert [Sharding.of([a], n, 10).count for n in (0, 10, 11, 95)] == [1, 1, 2, 10]


@settings(max_examples=60, deadline=None)
@given(nodes=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2)), min_size=1, max_size=4),
       count=st.integers(1, 50))
def test_every_class_of_every_pair_lies_in_one_shard(nodes: list[tuple[int, int]], count: int) -> None:
    layouts = [Layout(n, (AGE, ZIP), ("s",)) for n in nodes]
    plan = Sharding.of(layouts, count, 1)
    assert plan is not None and plan.count == count
    for x in layouts:
        for y in layouts:
            g = tuple(max(a, b) for a, b in zip(x.node, y.node))
            shard_of_class: dict[tuple[str, ...], int] = {}
            for age in AGE.leaves:
                for z in ZIP.leaves:
                    for v in (x, y):
                        labels = (AGE.up(0, v.node[0])[age], ZIP.up(0, v.node[1])[z])
                        klass = (AGE.up(0, g[0])[age], ZIP.up(0, g[1])[z])
                        shard = int(plan.of_labels([labels])[0])
                        assert shard_of_class.setdefault(klass, shard) == shard
    text = [list(dict.fromkeys(AGE.column(layouts[0].node[0]))), list(dict.fromkeys(ZIP.column(layouts[0].node[1])))]
    codes = np.array([[i, j] for i in range(len(text[0])) for j in range(len(text[1]))])
    by_codes = plan.of_blocks(text, codes)
    by_labels = plan.of_labels([(text[0][i], text[1][j]) for i, j in codes.tolist()])
    assert by_codes.tolist() == by_labels.tolist() and (0 <= by_codes).all() and (by_codes < count).all()
