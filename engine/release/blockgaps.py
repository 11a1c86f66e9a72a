"""How far a cohort series' blocks are from the people in them (docs/series.md §6), for ``veil audit --series``.

A block shows its cohorts' rows: of people still there, and of people who left (*standing in*); people who joined
and wait are there but not shown.  So a block's *gap* — rows shown minus people there — is its stand-ins less its
waiting rows.  The publisher's audit reports the largest gap (its block, its rows shown, the gap's share of
them), how many blocks have any gap and how many one larger than the batch: what an analyst's counts by block are
off by, which grows with the stand-ins (docs/series.md §8, §9.5).

>>> g = gaps({("a", "1"): (8, 2, 0), ("b", "1"): (8, 0, 1), ("c", "1"): (9, 0, 0)}, batch=1)
>>> g.block, g.largest, g.shown, round(g.share, 2), g.blocks_off, g.beyond_batch
(('a', '1'), 2, 8, 0.25, 2, 1)
>>> gaps({("a",): (8, 2, 0), ("b",): (4, 0, 2)}, batch=3).block   # a tie: the larger share
('b',)
>>> gaps({("a",): (3, 1, 1)}, batch=3).block is None                # one stand-in, one waiting: as many rows as people
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Gaps:
    """The largest gap (signed: stand-ins less waiting rows) and its block; the blocks with a gap, and with one
    larger than the batch."""

    block: tuple[Any, ...] | None
    largest: int
    shown: int
    blocks_off: int
    beyond_batch: int

    @property
    def share(self) -> float:
        """The largest gap over the rows its block shows (0 when it shows none)."""
        return self.largest / self.shown if self.shown else 0.0

    def document(self) -> dict[str, Any]:
        return {
            "block": None if self.block is None else list(self.block),
            "rows": self.largest,
            "rows_shown": self.shown,
            "share": round(self.share, 6),
            "blocks_off": self.blocks_off,
            "blocks_off_beyond_batch": self.beyond_batch,
        }


def gaps(blocks: Mapping[tuple[Any, ...], tuple[int, int, int]], batch: int) -> Gaps:
    """``blocks``: per block's labels, its rows shown (people still there and stand-ins), stand-ins and waiting
    rows.  Ties go to the block that shows fewer rows (its gap is the larger share), then to the first labels."""
    off = {b: standing - waiting for b, (_shown, standing, waiting) in blocks.items()}
    if not any(off.values()):
        return Gaps(None, 0, 0, 0, 0)
    worst = min(off, key=lambda b: (-abs(off[b]), blocks[b][0], [str(x) for x in b]))
    return Gaps(
        worst,
        off[worst],
        blocks[worst][0],
        sum(1 for g in off.values() if g),
        sum(1 for g in off.values() if abs(g) > batch),
    )
