"""A floor on a node's block sizes: at least ``share`` of the rows in blocks of at least ``rows`` rows, in at
most ``most`` blocks — or at most ``fewest`` blocks, whatever their sizes.

A cohort series (docs/series.md §2) publishes a joiner once ``batch`` joiners of his block wait together, so a
block of ``n`` rows at a table's join rate ``j`` (joiners per row per night) publishes its joiners within about
``batch / (j · n)`` nights.  The floor is the publisher's way to bound that wait: the series' node is the
search's optimum among the nodes where the floor holds (``[release] series_block``, docs/series.md §9.4).
A series' first version takes a floor by default too (``[release] series_standing``, docs/series.md §9.5):
each of its blocks is a cohort, which sheds its stand-ins in batches of ``batch`` only while ``batch`` of its
people remain — so at least 2 · ``batch`` rows each — and keeps 0 to ``batch`` − 1 of them between batches, about
(``batch`` − 1) / 2, for as long as its people stay; so at most 2 · ``series_standing`` · rows / (``batch`` − 1)
blocks, or at most 8.

The floor holds on every node above one where it holds: generalizing merges blocks, a merged block is at least
as large as each of its parts, so the rows in blocks of at least ``rows`` rows never decrease, and the blocks
never increase (tests/test_blockfloor.py checks it with hypothesis on random lattices).  The search may
therefore prune every node below one that fails it, as it does for a monotone model.

>>> floor = BlockFloor(rows=4, share=0.75)
>>> floor.admits(np.array([5, 4, 3]))  # 9 of 12 rows in blocks of 4 or more: 0.75
True
>>> floor.admits(np.array([5, 3, 3]))  # 5 of 11
False
>>> BlockFloor(4, 1.0, most=2).admits(np.array([5, 4, 4]))  # three blocks
False
>>> BlockFloor(4, 1.0, most=2, fewest=3).admits(np.array([5, 3, 3]))  # three blocks: few enough
True
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from veil.counts import NodeCounts, SizeHistogram


@dataclass(frozen=True)
class BlockFloor:
    rows: int = 1
    share: float = 0.95
    most: int | None = None  # blocks (None: any number)
    fewest: int = 0  # a node of at most this many blocks is admitted whatever its sizes

    def admits(self, counts: NodeCounts | SizeHistogram | np.ndarray) -> bool:
        """Whether the node has at most ``fewest`` blocks, or at most ``most`` blocks with at least ``share`` of
        its rows in blocks of at least ``rows`` rows (exact: the share as written, ``0.95`` is 95/100)."""
        sizes, blocks = _histogram(counts)
        n = int(blocks.sum())
        if n <= self.fewest:
            return True
        if self.most is not None and n > self.most:
            return False
        total = int((sizes * blocks).sum())
        large = sizes >= self.rows
        return int((sizes[large] * blocks[large]).sum()) >= Fraction(str(self.share)) * total

    def describe(self) -> str:
        """What the floor asks, for the release's note and its errors.

        >>> BlockFloor(20, 1.0, most=222, fewest=8).describe()
        'at least 100% of the rows in blocks of at least 20 rows, in at most 222 blocks (or at most 8 blocks)'
        """
        parts = (
            [f"at least {self.share:.0%} of the rows in blocks of at least {self.rows} rows"] if self.rows > 1 else []
        )
        parts += [f"at most {_blocks(self.most)}"] if self.most is not None else []
        text = ", in ".join(parts) or "any blocks"
        return f"{text} (or at most {_blocks(self.fewest)})" if self.fewest else text


def _blocks(n: int) -> str:
    return f"{n} block" if n == 1 else f"{n} blocks"


def _histogram(counts: NodeCounts | SizeHistogram | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Block sizes and how many blocks have each (one each for a list of blocks)."""
    if isinstance(counts, SizeHistogram):
        return counts.sizes.astype(np.int64), counts.blocks.astype(np.int64)
    sizes = np.asarray(counts.sizes if isinstance(counts, NodeCounts) else counts, dtype=np.int64)
    return sizes, np.ones(len(sizes), dtype=np.int64)
