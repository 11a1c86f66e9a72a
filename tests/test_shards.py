"""The partition of the series step (``veil.release.shards``): every class of every pair of versions — as
``alignment.attribute_classes`` lines them up, hierarchies changed or not — lies in one shard, and layouts that
do not allow shards get none."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.release.alignment import Chain, Layout, attribute_classes
from veil.release.shards import Sharding


def _age(ages: range, cut: int) -> Chain:
    """Decades starting at ``cut`` under halves at ``50 + cut`` (nested, as a validated hierarchy is)."""
    return Chain.of(
        "age",
        {
            str(a): (f"{(a - cut) // 10 * 10 + cut}s", f"<{50 + cut}" if a < 50 + cut else f">={50 + cut}", "*")
            for a in ages
        },
    )


AGES = [_age(range(20, 80, 3), 0), _age(range(20, 90, 3), 0), _age(range(20, 80, 3), 5)]  # grown; cut moved
ZIPS = [
    Chain.of("zip", {z: (z[:2] + "*", "*") for z in ("1301", "1302", "1401", "1402", "2301")}),
    Chain.of("zip", {z: (z[:2] + "*", "*") for z in ("1301", "1302", "1401", "1402", "2301", "2302", "3301")}),
    Chain.of("zip", {z: (z[:2] + "*", "*") for z in ("1305", "1406", "2307")}),
]  # labels shared, no value


def test_a_quasi_identifier_one_version_lacks_gets_no_shards() -> None:
    a = Layout((0, 0), (AGES[0], ZIPS[0]), ("s",))
    assert Sharding.of([a, Layout((1,), (AGES[0],), ("s",))], 100, 10) is None


def test_a_label_under_two_top_blocks_gets_no_shards() -> None:
    odd = Chain.of("x", {"a": ("b", "*"), "b": ("a", "*")})  # "a" at level 0 lies under "b" at level 1
    assert Sharding.of([Layout((0,), (odd,), ("s",)), Layout((1,), (odd,), ("s",))], 10, 1) is None


def test_shard_count_follows_the_cells() -> None:
    a = Layout((0, 0), (AGES[0], ZIPS[0]), ("s",))
    assert [Sharding.of([a], n, 10).count for n in (0, 10, 11, 95)] == [1, 1, 2, 10]


def test_a_grown_hierarchy_still_shards_by_its_labels() -> None:
    """New values under the same labels (a source's new ages): the classes stay the labels at ``top``."""
    plan = Sharding.of(
        [Layout((1, 1), (AGES[0], ZIPS[0]), ("s",)), Layout((1, 1), (AGES[1], ZIPS[1]), ("s",))], 1000, 1
    )
    assert plan is not None
    assert len(set(plan.codes[0].values())) == len(set(AGES[1].column(1)))


@settings(max_examples=60, deadline=None)
@given(
    versions=st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(0, 2), st.integers(0, 2)), min_size=1, max_size=4
    ),
    count=st.integers(1, 50),
)
def test_every_class_of_every_pair_lies_in_one_shard(versions: list[tuple[int, int, int, int]], count: int) -> None:
    layouts = [Layout((la, lz), (AGES[a], ZIPS[z]), ("s",)) for la, lz, a, z in versions]
    plan = Sharding.of(layouts, count, 1)
    if plan is None:  # only when a label would lie under two classes: never with these hierarchies
        raise AssertionError("no shards")
    assert plan.count == count
    for x, y in itertools.combinations_with_replacement(layouts, 2):
        per_qi = [attribute_classes(x.chains[i], x.node[i], y.chains[i], y.node[i]) for i in range(2)]
        shard_of_class: dict[tuple[int, ...], int] = {}
        for v, side in ((x, 0), (y, 1)):
            for labels in itertools.product(
                *(dict.fromkeys(c.column(min(lv, c.height))) for c, lv in zip(v.chains, v.node))
            ):
                klass = tuple(per_qi[i][side][labels[i]] for i in range(2))
                shard = int(plan.of_labels([labels])[0])
                assert shard_of_class.setdefault(klass, shard) == shard
    v = layouts[-1]
    text = [list(dict.fromkeys(c.column(lv))) for c, lv in zip(v.chains, v.node)]
    codes = np.array([[i, j] for i in range(len(text[0])) for j in range(len(text[1]))])
    by_codes = plan.of_blocks(text, codes)
    by_labels = plan.of_labels([(text[0][i], text[1][j]) for i, j in codes.tolist()])
    assert by_codes.tolist() == by_labels.tolist() and (0 <= by_codes).all() and (by_codes < count).all()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 5))
def test_shards_counts_join_as_one_count_of_all_their_cells(seed: int, shards: int) -> None:
    """``laterversion._joined`` (blocks renumbered, no per-cell key copy) equals counting every shard's cells at once."""
    from veil.counts import NodeCounts, SensitiveDomain
    from veil.release.laterversion import _joined

    rng = np.random.default_rng(seed)
    cards = (4, 3)
    n = int(rng.integers(0, 40))
    qi = np.column_stack([rng.integers(0, c, n) for c in cards])
    values = rng.integers(0, 5, (n, 1))
    count = rng.integers(1, 9, n)
    shard = (qi[:, 0] * 7 + qi[:, 1]) % shards  # a block's cells all in one shard
    dom = (SensitiveDomain("s", np.arange(5), np.ones(5, dtype=np.int64)),)
    parts = [
        NodeCounts.from_cells(("a", "b"), (0, 0), qi[shard == s], values[shard == s], count[shard == s], cards, dom)
        for s in range(shards)
    ]
    whole = NodeCounts.from_cells(("a", "b"), (0, 0), qi, values, count, cards, dom)
    joined = _joined(parts, whole)
    assert joined.keys.tolist() == whole.keys.tolist()
    cells = sorted(zip(joined.cell_block.tolist(), joined.cell_values[:, 0].tolist(), joined.cell_count.tolist()))
    expected = sorted(zip(whole.cell_block.tolist(), whole.cell_values[:, 0].tolist(), whole.cell_count.tolist()))
    assert cells == expected
