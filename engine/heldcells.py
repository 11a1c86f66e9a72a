"""Cells held in this process (docs/lattice.md, "Nodes counted in memory"): the base frequency set's, fetched
once when it has at most ``local_cells`` (``local``), and counted nodes' kept as *floors*
(``veil.frequencies.Floors``).  A node held here is rolled up from the fewest cells below it, with no statement.
numpy only: the cells arrive from ``veil.baseset`` (the base's) and ``veil.nodecounting`` (a counted node's).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from veil.counts import Level
from veil.frequencies import Floors, FrequencySet
from veil.workstats import Stats

Node = tuple[Level, ...]
# a base held here keeps floors only from this many cells: below, rolling each node up from the base is cheaper
# than counting and keeping floors (UCI Adult's 19,502 cells, optimal with 2% suppression: 11-31% less search time
# without; the 1M census's 896,367, Incognito k + entropy: 4.5 s with floors, 8.6 s without;
# docs/benchmarks.md, "Beside ARX")
LOCAL_FLOORS_FROM = 1 << 16


class HeldCells:
    """The base's cells (``local``, or ``None`` when it has more than ``local_cells``) and the ``floors`` kept
    (``None``: no floor is ever kept) of a run counting ``sensitive`` sensitive columns."""

    def __init__(
        self,
        local: FrequencySet | None,
        floors: Floors | None,
        sensitive: int,
        stats: Stats,
        block_floors: Floors | None = None,
    ) -> None:
        self.local, self.floors, self.sensitive, self.stats = local, floors, sensitive, stats
        self.block_floors = block_floors  # nodes' blocks alone (no sensitive count): they answer block sizes only
        self._last: tuple[Node, dict[str, np.ndarray]] | None = None
        self._sized: Node | None = None  # the last node sized without its cells

    def forget(self) -> None:
        """The search is over: its floors and the last node's cells go, and what the base kept between nodes."""
        for floors in (self.floors, self.block_floors):
            if floors is not None:
                floors.clear()
        if self.local is not None:
            self.local.forget()
        self._last, self._sized = None, None

    def holder(self, node: Node) -> FrequencySet | None:
        """The cells held here that ``node`` rolls up from: the fewest of a kept floor below it (``hub``'s, for a
        node no floor covers), or the base's."""
        floor = self.floors.holder(node) if self.floors is not None else None
        if floor is None:
            floor = self.hub(node)
        return floor if floor is not None else self.local

    def hub(self, node: Node) -> FrequencySet | None:
        """For a node that only the base covers, a node of its subset at or below it counted from the base and kept
        as a floor: each QI it keeps lowered, the fewest values first, as far as the hub surely has at most a quarter
        of the base's cells (its QIs' cardinalities at its levels times the sensitive values, multiplied).  Later
        nodes above the hub then roll up from its cells instead of the base's: Incognito evaluates each subset (QIs
        projected out) from its own roots, and every root would else read the whole base (issue 36's census on
        Spark: 465 of 727 nodes did); a search of full nodes reads fewer cells too (the 1M census held here, DuckDB:
        the search's own seconds 0.50 → 0.33 for optimal k, 1.10 → 0.83 for Incognito k; docs/benchmarks.md).

        QIs sex (2 values, then 1) and zip (1,000 values, then 100, then 10), a base of 1,000 cells, no sensitive
        column: the node (1, 2, None) has at most 10 cells; sex lowered, 20; zip lowered once, 200 (a fifth of the
        base); once more, 2,000.  Its hub is (0, 1, None)."""
        local, floors = self.local, self.floors
        if local is None or floors is None:
            return None
        kept = {i: lv for i, lv in enumerate(node) if lv is not None}
        values = math.prod(max(s, 1) for s in local.spread) if self.sensitive else 1
        bound = values * math.prod(local.cards[i][lv] for i, lv in kept.items())
        if not 0 < bound * 4 <= local.cells:
            return None
        levels = list(node)
        for i in sorted(kept, key=lambda i: local.cards[i][0]):
            cards, lv = local.cards[i], kept[i]
            while lv > 0 and (lower := bound // cards[lv] * cards[lv - 1]) * 4 <= local.cells:
                bound, lv = lower, lv - 1
            levels[i] = lv
        hub = tuple(levels)
        if floors.keep(hub, local.counts(hub), self.sensitive) is None:
            return None
        self.stats.floors += 1
        return floors.holder(node)

    def size_holder(self, node: Node) -> FrequencySet | None:
        """The cells held here that ``node``'s block sizes roll up from: ``holder``'s, else a kept floor of blocks."""
        found = self.holder(node)
        if found is None and self.block_floors is not None:
            found = self.block_floors.holder(node)
        return found

    def counted(self, node: Node, held: FrequencySet) -> dict[str, np.ndarray]:
        """``node``'s cells rolled up from ``held``; kept as a floor when they are at most a quarter of those
        (Incognito's rollup, in memory: the nodes above it then sort fewer cells).  The last node's are
        remembered (a search asks a node's sizes, then its cells)."""
        if self._last is not None and self._last[0] == node:
            return self._last[1]
        data = held.counts(node)
        self._last = (node, data)
        if node != self._sized:  # else sized alone just before: counted as a node here then
            self.stats.local_nodes += 1
        if (
            self.floors is not None
            and len(data["n"]) * 4 <= held.cells
            and self.floors.keep(node, data, self.sensitive) is not None
        ):
            self.stats.floors += 1
        return data

    def sized(self, node: Node, held: FrequencySet) -> tuple[np.ndarray, np.ndarray]:
        """``node``'s block-size histogram rolled up from ``held``; its cells are counted too (``counted``) only
        where they may be kept as a floor: at most a quarter of ``held``'s cells in blocks (a node has at least as
        many cells as blocks)."""
        size, blocks = held.sizes(node)
        cells_held = held.sensitive.shape[1] == self.sensitive  # not a floor of blocks alone
        if self.floors is not None and cells_held and int(blocks.sum()) * 4 <= held.cells:
            self.counted(node, held)
        elif node != self._sized and (self._last is None or self._last[0] != node):
            self.stats.local_nodes += 1
            self._sized = node
        return size, blocks

    def keep_counted(self, node: Node, data: dict[str, np.ndarray], blocks: bool = False) -> None:
        """Keep the cells of a node counted in the warehouse as a floor when they fit (the base is not held); its
        ``blocks`` alone (``g{i}``, ``n``) as a floor of block sizes."""
        floors, sensitive = (self.block_floors, 0) if blocks else (self.floors, self.sensitive)
        if self.local is None and floors is not None and floors.keep(node, data, sensitive, fetched=True) is not None:
            self.stats.floors += 1
            self.stats.local_cells += len(data["n"])

    def may_keep(self, node: Sequence[Level], bound: int | None) -> bool:
        """Whether a full node of at most ``bound`` cells, counted in the warehouse, would be kept as a floor."""
        return (
            self.local is None
            and self.floors is not None
            and None not in node
            and bound is not None
            and self.floors.room(bound)
        )
