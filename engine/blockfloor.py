"""A floor on a node's block sizes: at least ``share`` of the rows in blocks of at least ``rows`` rows.

A cohort series (docs/series.md §2) publishes a joiner once ``batch`` joiners of his block wait together, so a
block of ``n`` rows at a table's join rate ``j`` (joiners per row per night) publishes its joiners within about
``batch / (j · n)`` nights.  The floor is the publisher's way to bound that wait: the series' node is the
search's optimum among the nodes where the floor holds (``[release] series_block``, docs/series.md §9.4).

The floor holds on every node above one where it holds: generalizing merges blocks, a merged block is at least
as large as each of its parts, so the rows in blocks of at least ``rows`` rows never decrease
(tests/test_blockfloor.py checks it with hypothesis on random lattices).  The search may therefore prune every
node below one that fails it, as it does for a monotone model.

>>> floor = BlockFloor(rows=4, share=0.75)
>>> floor.admits(np.array([5, 4, 3]))  # 9 of 12 rows in blocks of 4 or more: 0.75
True
>>> floor.admits(np.array([5, 3, 3]))  # 5 of 11
False
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from veil.counts import NodeCounts, SizeHistogram


@dataclass(frozen=True)
class BlockFloor:
    rows: int
    share: float = 0.95

    def admits(self, counts: NodeCounts | SizeHistogram | np.ndarray) -> bool:
        """Whether at least ``share`` of the node's rows are in blocks of at least ``rows`` rows (exact: the
        share as written, ``0.95`` is 95/100)."""
        sizes, blocks = _histogram(counts)
        total = int((sizes * blocks).sum())
        large = sizes >= self.rows
        return int((sizes[large] * blocks[large]).sum()) >= Fraction(str(self.share)) * total

    def describe(self) -> str:
        return f"at least {self.share:.0%} of the rows in blocks of at least {self.rows} rows"


def _histogram(counts: NodeCounts | SizeHistogram | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Block sizes and how many blocks have each (one each for a list of blocks)."""
    if isinstance(counts, SizeHistogram):
        return counts.sizes.astype(np.int64), counts.blocks.astype(np.int64)
    sizes = np.asarray(counts.sizes if isinstance(counts, NodeCounts) else counts, dtype=np.int64)
    return sizes, np.ones(len(sizes), dtype=np.int64)
