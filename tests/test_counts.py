"""NodeCounts: blocks, per-attribute matrices, sub-blocks and rollups against brute-force recounts."""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.counts import NodeCounts, SensitiveDomain
from veil.hierarchy import IntervalsSpec, MaskSpec, ValueKind, build

ZIPS = ["13053", "13068", "14850", "14853", "13121"]


def _hierarchies():
    return (
        build(MaskSpec(), "zip", ZIPS, ValueKind.TEXT),
        build(IntervalsSpec(widths=(10, 20)), "age", list(range(20, 60)), ValueKind.INTEGER),
    )


rows_strategy = st.lists(
    st.tuples(st.sampled_from(ZIPS), st.integers(20, 59), st.integers(0, 2), st.integers(0, 1)), min_size=1, max_size=60
)


def _bottom(rows, hs) -> NodeCounts:
    dom_a = SensitiveDomain(
        "a", np.array(["x", "y", "z"], dtype=object), np.bincount([r[2] for r in rows], minlength=3)
    )
    dom_b = SensitiveDomain("b", np.array([0, 1]), np.bincount([r[3] for r in rows], minlength=2), numeric=True)
    cells = Counter((hs[0].leaves.index(z), hs[1].leaves.index(a), s, t) for z, a, s, t in rows)
    keys = list(cells)
    return NodeCounts.from_cells(
        ("zip", "age"),
        (0, 0),
        np.array([k[:2] for k in keys]),
        np.array([k[2:] for k in keys]),
        np.array([cells[k] for k in keys]),
        (hs[0].cardinality(0), hs[1].cardinality(0)),
        (dom_a, dom_b),
        hs,
    )


@settings(max_examples=150, deadline=None)
@given(rows=rows_strategy, z=st.integers(0, 5), a=st.one_of(st.none(), st.integers(0, 3)))
def test_rollup_equals_a_recount(rows, z, a) -> None:
    hs = _hierarchies()
    nc = _bottom(rows, hs).rollup((z, a))
    expected: dict[tuple, Counter] = {}
    for zip_, age, s, t in rows:
        key = (hs[0].labels_of(zip_)[z], "*" if a is None else str(hs[1].labels_of(age)[a]))
        expected.setdefault(key, Counter())[s] += 1
    labels = [tuple(lab) for lab in nc.labels()]
    got = {
        lab: Counter({i: int(c) for i, c in enumerate(row) if c}) for lab, row in zip(labels, nc.blocks("a").dense())
    }
    assert got == expected
    assert nc.sizes.sum() == len(rows) and (nc.blocks("b").sizes == nc.sizes).all()


@settings(max_examples=100, deadline=None)
@given(rows=rows_strategy)
def test_sub_blocks_put_the_other_attribute_in_the_key(rows) -> None:
    hs = _hierarchies()
    nc = _bottom(rows, hs).rollup((3, 2))
    sub, parent = nc.sub_blocks("a")
    expected = Counter()
    for zip_, age, s, t in rows:
        expected[(hs[0].labels_of(zip_)[3], hs[1].labels_of(age)[2], t, s)] += 1
    labels = nc.labels()
    got = Counter()
    # recover each sub-block's "b" value: cells of its q*-block with that histogram
    for i, (row, p) in enumerate(zip(sub.dense(), parent)):
        for s, c in enumerate(row):
            if c:
                got[(*labels[p], None, s)] += int(c)
    flattened = Counter()
    for (z, a, t, s), c in expected.items():
        flattened[(z, a, None, s)] += c
    assert got == flattened
    # the number of sub-blocks is the number of distinct (block, b) pairs
    assert sub.blocks == len({(hs[0].labels_of(z)[3], hs[1].labels_of(a)[2], t) for z, a, _, t in rows})


def test_restrict_keeps_reference_distribution() -> None:
    hs = _hierarchies()
    nc = _bottom([("13053", 20, 0, 0), ("13068", 21, 1, 1), ("14850", 55, 2, 1)], hs).rollup((2, 1))
    kept = nc.restrict(nc.sizes >= 2)
    assert kept.n_blocks == 1 and kept.sizes.tolist() == [2]
    assert kept.domain("a").total.tolist() == [1, 1, 1]  # P is the original table's


def test_block_counts_views() -> None:
    dom = SensitiveDomain("s", np.array(["a", "b", "c"], dtype=object), np.array([3, 3, 1]))
    nc = NodeCounts.from_cells(
        ("q",),
        (0,),
        np.array([[0], [0], [1], [1]]),
        np.array([[0], [1], [1], [2]]),
        np.array([2, 1, 2, 1]),
        (2,),
        (dom,),
    )
    bc = nc.blocks("s")
    assert bc.dense().tolist() == [[2, 1, 0], [0, 2, 1]]
    # sparse: cells sorted by (block, value code)
    assert bc.indptr.tolist() == [0, 2, 4] and bc.codes.tolist() == [0, 1, 1, 2] and bc.counts.tolist() == [2, 1, 2, 1]
    assert bc.distinct.tolist() == [2, 2] and bc.sizes.tolist() == [3, 3]
    assert bc.cumulative().tolist() == [2, 3, 2, 3]
    assert bc.take(np.array([1])).dense().tolist() == [[0, 2, 1]]


@settings(max_examples=100, deadline=None)
@given(
    cells=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 6), st.integers(0, 4)), max_size=40),
    max_cells=st.integers(1, 6),
)
def test_sparse_histograms_equal_a_dense_recount(cells, max_cells) -> None:
    """Cells in any order, repeated, with zero counts: the CSR histograms are the dense recount, canonical,
    and slices / takes / chunks / reductions agree with it."""
    from veil.counts import BlockCounts

    dom = SensitiveDomain("s", np.arange(7), np.ones(7, dtype=np.int64), numeric=True)
    dense = np.zeros((6, 7), dtype=np.int64)
    for b, v, c in cells:
        dense[b, v] += c
    arr = np.array(cells, dtype=np.int64).reshape(-1, 3)
    bc = BlockCounts.from_cells(arr[:, 0], arr[:, 1], arr[:, 2], 6, dom)
    assert (bc.dense() == dense).all() and (bc.counts > 0).all()
    assert bc.same(BlockCounts.from_dense(dense, dom))
    assert bc.sizes.tolist() == dense.sum(axis=1).tolist()
    assert bc.distinct.tolist() == np.count_nonzero(dense, axis=1).tolist()
    assert bc.block_max(bc.counts).tolist() == dense.max(axis=1).tolist()
    order = np.array([5, 0, 3])
    assert (bc.take(order).dense() == dense[order]).all()
    ranges = bc.chunks(max_cells)
    assert [a for a, _ in ranges] == [0] + [b for _, b in ranges[:-1]] and ranges[-1][1] == 6
    for a, b in ranges:
        part = bc.slice(a, b)
        assert (part.dense() == dense[a:b]).all()
        assert part.cells <= max_cells or b - a == 1
    expected_cum = [int(dense[b, : v + 1].sum()) for b, v in zip(bc.block_of_cell, bc.codes)]
    assert bc.cumulative().tolist() == expected_cum


@settings(max_examples=100, deadline=None)
@given(
    rows=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(0, 4)), min_size=0, max_size=30),
    ordered=st.booleans(),
)
def test_blocks_of_cells_in_block_order_are_found_without_a_sort(rows, ordered) -> None:
    """Cells streamed in block order (the search's chunks) take the one-pass path; in any other order the
    sort: both give ``np.unique``'s distinct keys and inverse, and the same ``NodeCounts``."""
    from veil.counts import _combine, _distinct

    arr = np.array(rows, dtype=np.int64).reshape(-1, 3)
    if ordered:
        arr = arr[np.lexsort((arr[:, 1], arr[:, 0]))]
    key = arr[:, 0] * 3 + arr[:, 1]
    uniq, inverse = _distinct(key)
    want_uniq, want_inverse = np.unique(key, return_inverse=True)
    assert uniq.tolist() == want_uniq.tolist() and inverse.tolist() == want_inverse.reshape(-1).tolist()
    keys, block = _combine(arr[:, :2], (4, 3))
    assert (keys[block] == arr[:, :2]).all()
    assert list(map(tuple, keys.tolist())) == sorted(set(map(tuple, arr[:, :2].tolist())))
    dom = SensitiveDomain("s", np.arange(5), np.ones(5, dtype=np.int64), numeric=True)
    nc = NodeCounts.from_cells(
        ("a", "b"), (0, 0), arr[:, :2], arr[:, 2:], np.ones(len(arr), dtype=np.int64), (4, 3), (dom,)
    )
    recount = Counter(map(tuple, arr[:, :2].tolist()))
    assert nc.sizes.tolist() == [recount[tuple(k)] for k in nc.keys.tolist()]
