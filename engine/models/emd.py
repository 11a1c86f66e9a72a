"""Earth Mover's Distances between sparse histograms (docs/models.md §3): each block of a ``BlockCounts``
against its own reference histogram (one row of another ``BlockCounts``: the whole table for t-closeness, a
natural superset for (n,t)-closeness), in time near-linear in the non-zero cells, never blocks × domain.

Every distance is rational in the counts.  ``exact=False`` evaluates it in float64; ``exact=True`` in Python
integers, returning ``Fraction`` s (used on the knife-edge only, docs/models.md §7).  With ``n``/``N`` the
sizes of the block and of its reference, ``c``/``R`` their counts:

- ``equal``: ``n·N·EMD = sum over the block's values of max(0, c·N - R·n)`` (the positive part of ``p - q``);
- ``ordered``: ``(m-1)·EMD = sum_i |F(i) - G(i)|`` over the m positions of the sorted domain, F and G the
  cumulative distributions.  F is constant between the block's cells; on each such run the sum of
  ``|s - G(i)|`` splits where G (non-decreasing) crosses s, found by a search in the reference's cumulative
  counts, with G's running integral from prefix sums: O(log) per cell;
- ``hierarchical`` (``Taxonomy.distances``): the tree-metric form ``2H·EMD = sum over the nodes v of levels
  0..H-1 of |p(v) - q(v)|``; per level, the nodes the block does not touch add ``q(v)``, so the sum is
  ``1 + sum over touched v of (|p(v) - q(v)| - q(v))``: only the block's cells are aggregated.

Li et al.'s salary example (docs/models.md §3): salaries 3K..11K once each; {3K,4K,5K} is at ordered EMD
0.375 (3/8), {3K,5K,9K} at 1/6.

>>> from veil.counts import BlockCounts, SensitiveDomain
>>> dom = SensitiveDomain("salary", np.arange(3, 12), np.ones(9, dtype=np.int64), numeric=True)
>>> bc = BlockCounts.from_cells([0, 0, 0, 1, 1, 1], [0, 1, 2, 0, 2, 6], np.ones(6), 2, dom)
>>> table = whole_table(dom)
>>> ordered(bc, table, np.zeros(2, dtype=np.int64)).round(4).tolist()
[0.375, 0.1667]
>>> ordered(bc, table, np.zeros(2, dtype=np.int64), exact=True).tolist()
[Fraction(3, 8), Fraction(1, 6)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any

import numpy as np

from veil.counts import BlockCounts, SensitiveDomain, segment_reduce


def whole_table(domain: SensitiveDomain) -> BlockCounts:
    """The whole table's distribution ``P`` as a one-block reference."""
    codes = np.flatnonzero(domain.total)
    return BlockCounts(
        np.array([0, len(codes)], dtype=np.int64), codes.astype(np.int64), domain.total[codes].astype(np.int64), domain
    )


def _lift(a: np.ndarray, exact: bool) -> np.ndarray:
    return a.astype(object) if exact else a.astype(np.float64)


def _divide(num: np.ndarray, den: np.ndarray, exact: bool) -> np.ndarray:
    if exact:
        return np.array([Fraction(int(a), int(b)) if b else Fraction(0) for a, b in zip(num, den)], dtype=object)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), 0.0)


def first_at_least(refs: BlockCounts, values: np.ndarray, ref: np.ndarray, threshold: np.ndarray) -> np.ndarray:
    """Per query, the index of the first cell of reference ``ref`` whose ``values`` (non-decreasing within a
    reference, non-negative) is ``>= threshold``; the reference's end when none is."""
    top = int(values.max()) + 1 if len(values) else 1
    threshold = np.clip(threshold, 0, top).astype(np.int64)
    if refs.blocks * (top + 1) < 2**62:
        keys = refs.block_of_cell * (top + 1) + values
        return np.searchsorted(keys, ref * (top + 1) + threshold, side="left")
    out = np.empty(len(ref), dtype=np.int64)  # keys would overflow: one search per reference
    for r in np.unique(ref).tolist():
        lo, hi = int(refs.indptr[r]), int(refs.indptr[r + 1])
        sel = ref == r
        out[sel] = lo + np.searchsorted(values[lo:hi], threshold[sel], side="left")
    return out


DENSE_TABLE = 1 << 22  # references × domain entries up to which lookups go through a dense table (32 MiB)


def _dense(refs: BlockCounts, width: int) -> bool:
    """Few enough references for a references × domain lookup table (domain-sized per reference, never
    blocks × domain)."""
    return refs.blocks * width <= max(DENSE_TABLE, refs.cells)


def reference_counts(refs: BlockCounts, ref: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """``R``: the count of each (reference, code) pair in ``refs`` (0 where absent)."""
    if refs.cells == 0:
        return np.zeros(len(codes), dtype=np.int64)
    width = int(max(refs.codes.max(), codes.max() if len(codes) else 0)) + 1
    if _dense(refs, width):
        table = np.zeros(refs.blocks * width, dtype=np.int64)
        table[refs.block_of_cell * width + refs.codes] = refs.counts
        return table[ref * width + codes]
    k = first_at_least(refs, refs.codes, ref, codes)
    k = np.minimum(k, refs.cells - 1)
    found = (refs.block_of_cell[k] == ref) & (refs.codes[k] == codes)
    return np.where(found, refs.counts[k], 0)


def equal(bc: BlockCounts, refs: BlockCounts, ref_of: np.ndarray, exact: bool = False) -> np.ndarray:
    """Equal ground distance: ``1/2 sum |p - q| = sum over the block's values of max(0, p - q)``."""
    r = ref_of[bc.block_of_cell]
    c = _lift(bc.counts, exact)
    big_r = _lift(reference_counts(refs, r, bc.codes), exact)
    n_c = _lift(bc.sizes[bc.block_of_cell], exact)
    n_ref = _lift(refs.sizes[r], exact)
    term = c * n_ref - big_r * n_c
    num = bc.block_sum(np.where(term > 0, term, 0))
    return _divide(num, _lift(bc.sizes, exact) * _lift(refs.sizes[ref_of], exact), exact)


def ordered(bc: BlockCounts, refs: BlockCounts, ref_of: np.ndarray, exact: bool = False) -> np.ndarray:
    """Ordered ground distance ``|i-j|/(m-1)`` over the m sorted values of the domain (see the module)."""
    m = bc.domain.size
    if m <= 1 or bc.blocks == 0:
        return _divide(np.zeros(bc.blocks), np.ones(bc.blocks), exact)
    cum_ref = refs.cumulative()  # C_k: reference count up to cell k
    r = ref_of[bc.block_of_cell]
    n = bc.sizes[bc.block_of_cell]
    big_n = refs.sizes[r]
    integral = _integrals(refs, cum_ref, r, m, exact)  # x -> N·sum_{i<x} G(i)
    s = bc.cumulative()
    a = bc.codes
    b = np.append(bc.codes[1:], m)
    b[bc.indptr[1:][bc.distinct > 0] - 1] = m
    sn, nn = _lift(s, exact) * _lift(big_n, exact), _lift(n, exact)
    threshold = -((-sn) // nn) if exact else np.ceil(sn / nn)  # first G >= s: C·n >= S·N
    k = np.minimum(first_at_least(refs, cum_ref, r, threshold.astype(np.int64)), refs.indptr[r + 1] - 1)
    split = np.clip(refs.codes[k], a, b)
    ia, isplit = integral(a), integral(split)
    ib = np.empty_like(ia)  # b is the next cell's a, or m
    ib[:-1] = ia[1:]
    ends = bc.indptr[1:][bc.distinct > 0] - 1
    ib[ends] = integral(np.full(len(ends), m, dtype=np.int64), ends)
    run = sn * _lift(split - a, exact) - nn * (isplit - ia) + nn * (ib - isplit) - sn * _lift(b - split, exact)
    has = bc.distinct > 0  # before a block's first value F = 0:
    lead = _lift(bc.sizes, exact) * 0  # sum G over [0, first) = I(first)
    lead[has] = _lift(bc.sizes[has], exact) * ia[bc.indptr[:-1][has]]
    num = lead + bc.block_sum(run)
    den = _lift(bc.sizes, exact) * _lift(refs.sizes[ref_of], exact) * (m - 1)
    return _divide(num, den, exact)


def _integrals(refs: BlockCounts, cum_ref: np.ndarray, r: np.ndarray, m: int, exact: bool):  # noqa: ANN202
    """``x -> N·sum_{i<x} G(i)`` for the reference ``r`` of each query: G steps up at the reference's cells.
    A references × (m+1) table when affordable, else a search for the last reference cell before x."""
    width = np.diff(np.append(refs.codes, m))
    last = refs.indptr[1:][refs.distinct > 0] - 1
    width[last] = m - refs.codes[last]
    if _dense(refs, m + 1):
        steps = np.zeros((refs.blocks, m), dtype=np.int64)
        steps[refs.block_of_cell, refs.codes] = cum_ref
        np.maximum.accumulate(steps, axis=1, out=steps)  # G·N at every position (non-decreasing)
        table = np.zeros((refs.blocks, m + 1), dtype=np.int64)
        np.cumsum(steps, axis=1, out=table[:, 1:])
        flat = table.reshape(-1)
        return lambda x, rows=slice(None): _lift(flat[r[rows] * (m + 1) + x], exact)
    area = np.cumsum(cum_ref * width)  # prefix integrals N·I(u_k), within a ref
    area -= np.repeat(np.append(0, area)[refs.indptr[:-1]], refs.distinct) + cum_ref * width

    def integral(x: np.ndarray, rows: Any = slice(None)) -> np.ndarray:
        k = first_at_least(refs, refs.codes, r[rows], x) - 1
        ok = k >= refs.indptr[r[rows]]
        kk = np.where(ok, k, 0)
        return np.where(ok, _lift(area[kk], exact) + _lift(x - refs.codes[kk], exact) * _lift(cum_ref[kk], exact), 0)

    return integral


@dataclass(frozen=True, eq=False)
class Taxonomy:
    """The tree above the sensitive values: ``parents[j-1][i]`` is the level-``j`` node of level-``(j-1)`` node
    ``i`` (level 0 = the domain's columns); ``height`` = H.  A taxonomy whose top level has several nodes
    gets an implicit root one level higher (so H is its height + 1).

    Example (hand-computed): flu, cold under "respiratory"; gastritis, ulcer under "stomach"; root "*" (H=2).
    Table uniform (¼ each).  Block (½,½,0,0): extra = (¼,¼,-¼,-¼); "respiratory" and "stomach" each have one
    sign only (cost 0); at the root pos = neg = ½, cost 2/2·½ = ½.  Block (½,0,½,0): each level-1 node has
    pos = neg = ¼, cost ½·¼ twice; the root sees 0 and 0: EMD ¼.

    >>> tax = Taxonomy.from_labels([["respiratory", "*"], ["respiratory", "*"], ["stomach", "*"], ["stomach", "*"]])
    >>> tax.emd(np.array([[0.5, 0.5, 0, 0], [0.5, 0, 0.5, 0]]), np.full(4, 0.25)).tolist()
    [0.5, 0.25]
    >>> values = np.array(["cold", "flu", "gastritis", "ulcer"], dtype=object)
    >>> dom = SensitiveDomain("d", values, np.ones(4, dtype=np.int64))
    >>> bc = BlockCounts.from_cells([0, 0, 1, 1], [0, 1, 0, 2], np.ones(4), 2, dom)
    >>> tax.distances(bc, whole_table(dom), np.zeros(2, dtype=np.int64), exact=True).tolist()
    [Fraction(1, 2), Fraction(1, 4)]
    """

    parents: tuple[np.ndarray, ...]
    height: int

    @classmethod
    def from_labels(cls, labels: Sequence[Sequence[Any]]) -> Taxonomy:
        """``labels[i]`` = the level-1..H labels of domain column ``i`` (a function chain)."""
        width = len(labels)
        heights = {len(row) for row in labels}
        if len(heights) > 1:
            raise ValueError("every value needs the same number of levels")
        h = heights.pop() if heights else 0
        codes = [np.arange(width, dtype=np.int64)]
        for j in range(h):
            column = [str(row[j]) for row in labels]
            _, inv = np.unique(np.asarray(column, dtype=object), return_inverse=True)
            codes.append(inv.reshape(-1).astype(np.int64))
        return cls.from_codes(codes)

    @classmethod
    def from_codes(cls, codes: list[np.ndarray]) -> Taxonomy:
        """From the code of every domain column at each level (``codes[0]`` = the columns themselves)."""
        if len(codes) == 1 or len(np.unique(codes[-1])) > 1:
            codes = codes + [np.zeros_like(codes[0])]
        parents = []
        for below, above in zip(codes, codes[1:]):
            up = np.zeros(int(below.max()) + 1 if len(below) else 0, dtype=np.int64)
            up[below] = above
            parents.append(up)
        return cls(tuple(parents), len(parents))

    @cached_property
    def ancestors(self) -> tuple[np.ndarray, ...]:
        """Per level ``j = 0..H-1``, the level-``j`` node of every domain column."""
        width = len(self.parents[0]) if self.parents else 0
        out = [np.arange(width, dtype=np.int64)]
        for up in self.parents[:-1]:
            out.append(up[out[-1]])
        return tuple(out)

    @cached_property
    def order(self) -> np.ndarray:
        """The domain columns in depth-first order (every node's columns contiguous)."""
        return np.lexsort(self.ancestors)  # the last key, level H-1, is the primary one

    @cached_property
    def tree_codes(self) -> tuple[np.ndarray, ...]:
        """Per level ``j = 0..H-1``, the node of each *position* of ``order``, numbered in depth-first order
        (so non-decreasing along ``order``)."""
        out = []
        for anc in self.ancestors:
            seq = anc[self.order]
            new = np.ones(len(seq), dtype=bool)
            new[1:] = seq[1:] != seq[:-1]
            out.append(np.cumsum(new) - 1)
        return tuple(out)

    def emd(self, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        """Hierarchical EMD per row of dense ``p`` against ``q`` in the form of docs/models.md §3 (sum over
        internal nodes of level/H · min(pos, neg)): a reference for tests and small inputs."""
        extra = np.asarray(p, dtype=np.float64) - q
        total = np.zeros(extra.shape[:-1])
        for j, up in enumerate(self.parents, start=1):
            member = np.zeros((len(up), int(up.max()) + 1 if len(up) else 0))
            member[np.arange(len(up)), up] = 1.0
            pos = np.clip(extra, 0, None) @ member
            neg = np.clip(-extra, 0, None) @ member
            total += (j / self.height) * np.minimum(pos, neg).sum(axis=-1)
            extra = pos - neg
        return total

    def _in_tree_order(self, bc: BlockCounts) -> BlockCounts:
        """The same histograms with each value's code replaced by its position in ``order``."""
        if (self.order == np.arange(len(self.order))).all():
            return bc
        rank = np.empty(len(self.order), dtype=np.int64)
        rank[self.order] = np.arange(len(self.order), dtype=np.int64)
        return BlockCounts.from_cells(bc.block_of_cell, rank[bc.codes], bc.counts, bc.blocks, bc.domain)

    def distances(self, bc: BlockCounts, refs: BlockCounts, ref_of: np.ndarray, exact: bool = False) -> np.ndarray:
        """Hierarchical EMD of every block of ``bc`` against its reference (see the module)."""
        bc, refs = self._in_tree_order(bc), self._in_tree_order(refs)
        n, big_n = _lift(bc.sizes, exact), _lift(refs.sizes[ref_of], exact)
        total = n * big_n * self.height
        for level in self.tree_codes:
            block, node, c = _groups(bc, level)
            ref_block, ref_node, big_r = _groups(refs, level)
            ref_hist = BlockCounts(np.searchsorted(ref_block, np.arange(refs.blocks + 1)), ref_node, big_r, refs.domain)
            r = ref_of[block]
            q = _lift(reference_counts(ref_hist, r, node), exact)
            nb, nr, cv = _lift(bc.sizes[block], exact), _lift(refs.sizes[r], exact), _lift(c, exact)
            diff = cv * nr - q * nb
            term = np.where(diff >= 0, diff, -diff) - q * nb
            total = total + segment_reduce(
                np.add, term, np.searchsorted(block, np.arange(bc.blocks + 1)), 0 if exact else 0.0
            )
        return _divide(total, 2 * self.height * n * big_n, exact)


def _groups(bc: BlockCounts, node_of: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (block, node) groups of ``bc``'s cells (codes in tree order, ``node_of`` their node at one level):
    each group's block, node and count, in (block, node) order."""
    node = node_of[bc.codes]
    block = bc.block_of_cell
    lead = np.ones(bc.cells, dtype=bool)
    lead[1:] = (block[1:] != block[:-1]) | (node[1:] != node[:-1])
    starts = np.flatnonzero(lead)
    counts = np.add.reduceat(bc.counts, starts) if len(starts) else bc.counts[:0]
    return block[starts], node[starts], counts


def dense_equal(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Equal ground distance on dense distributions: ``1/2 sum_i |p_i - q_i|`` per row (a reference form).

    >>> dense_equal(np.array([[1.0, 0.0], [0.5, 0.5]]), np.array([0.5, 0.5])).tolist()
    [0.5, 0.0]
    """
    return 0.5 * np.abs(p - q).sum(axis=-1)


def dense_ordered(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Ordered ground distance on dense distributions: ``1/(m-1) sum_i |cumsum(p - q)_i|`` per row.

    >>> dense_ordered(np.array([[1.0, 0.0, 0.0]]), np.array([0.0, 0.0, 1.0])).tolist()
    [1.0]
    """
    m = p.shape[-1]
    if m <= 1:
        return np.zeros(p.shape[:-1])
    return np.abs(np.cumsum(p - q, axis=-1)).sum(axis=-1) / (m - 1)
