"""One sensitive attribute's per-block histograms, sparse: one entry per (block, value) present.

Built from a node's cells (``NodeCounts.cell_block``, ``cell_values``, ``cell_count``), never as a dense
blocks × values matrix: entries are sorted by block, then count descending (then value), so each block's
``r1 >= r2 >= ...`` (papers/000 notation) is a contiguous run starting at ``start[b]``.

Figure 2 of Machanavajjhala et al. (ICDE 2006), blocks {heart ×2, viral ×2}, {cancer, heart, viral ×2},
{cancer ×4} over the domain (cancer, heart, viral):

>>> from veil.counts import NodeCounts, SensitiveDomain
>>> dom = SensitiveDomain("condition", np.array(["cancer", "heart", "viral"], dtype=object), np.array([5, 3, 4]))
>>> nc = NodeCounts.from_cells(("q",), (0,), [[0], [0], [1], [1], [1], [2]], [[1], [2], [0], [1], [2], [0]],
...                            np.array([2, 2, 1, 1, 2, 4]), (3,), (dom,))
>>> h = Histogram.of(nc, "condition")
>>> h.distinct.tolist(), h.top.tolist(), h.top_value.tolist(), h.rank.tolist()
([2, 3, 1], [2, 2, 4], [1, 2, 0], [0, 1, 0, 1, 2, 0])
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from veil.counts import NodeCounts, SensitiveDomain


@dataclass(frozen=True, eq=False)
class Histogram:
    block: np.ndarray  # per entry: its block
    value: np.ndarray  # per entry: its value's index in ``domain``
    count: np.ndarray  # per entry: n(E, s) > 0
    sizes: np.ndarray  # per block: n(E)
    domain: SensitiveDomain

    @classmethod
    def of(cls, counts: NodeCounts, name: str) -> Histogram:
        """The histograms of sensitive attribute ``name`` at one node (cells of other attributes merged)."""
        i = [d.name for d in counts.sensitive].index(counts.domain(name).name)
        dom = counts.sensitive[i]
        width = max(dom.size, 1)
        key = counts.cell_block.astype(np.int64) * width + counts.cell_values[:, i]
        uniq, inverse = np.unique(key, return_inverse=True)
        total = np.bincount(inverse.reshape(-1), weights=counts.cell_count, minlength=len(uniq)).astype(np.int64)
        block, value = uniq // width, uniq % width
        order = np.lexsort((value, -total, block))
        return cls(block[order], value[order], total[order], counts.sizes, dom)

    @property
    def n_blocks(self) -> int:
        return len(self.sizes)

    @cached_property
    def start(self) -> np.ndarray:
        """Offsets: block ``b``'s entries are ``start[b]:start[b+1]``."""
        return np.searchsorted(self.block, np.arange(self.n_blocks + 1), side="left")

    @cached_property
    def rank(self) -> np.ndarray:
        """Per entry: its 0-based rank in its block (0 = most frequent)."""
        return np.arange(len(self.block)) - self.start[self.block]

    @cached_property
    def distinct(self) -> np.ndarray:
        """``m``: distinct values per block."""
        return np.diff(self.start)

    @cached_property
    def top(self) -> np.ndarray:
        """``r1`` per block (0 for a block without entries)."""
        out = np.zeros(self.n_blocks, dtype=np.int64)
        present = self.distinct > 0
        out[present] = self.count[self.start[:-1][present]]
        return out

    @cached_property
    def top_value(self) -> np.ndarray:
        """The most frequent value's index per block (-1 for a block without entries)."""
        out = np.full(self.n_blocks, -1, dtype=np.int64)
        present = self.distinct > 0
        out[present] = self.value[self.start[:-1][present]]
        return out

    @cached_property
    def cumulative(self) -> np.ndarray:
        """``G[k]`` = the counts of the first ``k`` entries (``G[0] = 0``): prefix sums within a block are
        ``G[start[b] + j] - G[start[b]]``."""
        out = np.zeros(len(self.count) + 1, dtype=np.int64)
        np.cumsum(self.count, out=out[1:])
        return out

    def of_block(self, b: int) -> list[tuple[int, int]]:
        """Block ``b``'s (value index, count) pairs, most frequent first."""
        lo, hi = int(self.start[b]), int(self.start[b + 1])
        return list(zip(self.value[lo:hi].tolist(), self.count[lo:hi].tolist()))
