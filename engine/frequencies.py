"""The base frequency set held in this process, once it is small enough (``Warehouse.local_cells``): the
warehouse scans and codes the source into ``veil_base`` as always; when that set has few cells — whatever the
rows — it is fetched once (each quasi-identifier's leaf code, the sensitive codes, ``n``) and every node is
rolled up from it here, with no statement per node.  Memory is bounded by the cells, never by the rows.

A node's blocks are the distinct codes of its levels: a leaf code maps to its level-``j`` code through the
hierarchy (``Hierarchy.ancestors``), the codes pack into one integer key (strides from the cardinalities), and
cells with one key form one block — the same ``GROUP BY`` as ``queries.node_counts``, computed by sorting.

>>> f = FrequencySet([np.array([0, 1, 2])], [[np.arange(3), np.array([0, 0, 1])]], [[3, 2]],
...                  np.array([[0], [1], [1]]), np.array([2, 3, 1]))
>>> f.sizes((1,))
(array([1, 5]), array([1, 1]))
>>> f.counts((1,))["n"].tolist(), f.counts((1,))["g0"].tolist(), f.counts((1,))["s0"].tolist()
([2, 3, 1], [0, 0, 1], [0, 1, 1])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from veil.counts import sorted_sum
from veil.grouping import GROUPINGS_KEPT, Grouping, Groupings, Level, pack
from veil.lattice import finer, level_rows

CODES_KEPT = 1 << 26  # bytes of per-cell codes at a level kept between nodes (the narrowest integer type)


def narrowest(card: int) -> type[np.signedinteger[Any]]:
    """The narrowest signed integer type holding codes ``0 .. card - 1``.

    >>> narrowest(1000).__name__, narrowest(40_000).__name__
    ('int16', 'int32')
    """
    return np.int16 if card <= 1 << 15 else np.int32


def _identity(up: np.ndarray | None) -> bool:
    """Whether a map from codes to codes sends each code to itself."""
    return up is not None and bool((up == np.arange(len(up))).all())


class FrequencySet:
    """Cells of the base frequency set — or of a node counted in the warehouse, its *floor*, from which every
    node at or above it rolls up: ``leaves[i]`` QI ``i``'s code per cell at ``floor[i]`` (0: the leaf),
    ``levels[i][j]`` the map from such a code to its level-``j`` code (``None`` below the floor),
    ``cards[i][j]`` the codes at level ``j``, ``sensitive`` the (cells × columns) sensitive codes, ``n`` the rows
    of each cell (float64, as tallies weigh them)."""

    def __init__(
        self,
        leaves: Sequence[np.ndarray],
        levels: Sequence[Sequence[np.ndarray | None]],
        cards: Sequence[Sequence[int]],
        sensitive: np.ndarray,
        n: np.ndarray,
        floor: Sequence[Level] | None = None,
        keep_codes: int = CODES_KEPT,
        keep_groupings: int = GROUPINGS_KEPT,
        narrow: bool = False,
    ) -> None:
        self.floor: tuple[Level, ...] = tuple(floor) if floor is not None else (0,) * len(leaves)
        self.cards = [list(c) for c in cards]
        # ``narrow``: codes in the narrowest type their level's cardinality allows (floors are many: half the bytes)
        self.leaves = [
            np.asarray(c, dtype=narrowest(1 if lv is None else self.cards[i][lv]) if narrow else np.int32)
            for i, (c, lv) in enumerate(zip(leaves, self.floor))
        ]
        self.levels = [[None if m is None else np.asarray(m, dtype=np.int64) for m in maps] for maps in levels]
        wide = np.asarray(sensitive).reshape(len(n), -1)
        self.spread = [int(wide[:, j].max(initial=-1)) + 1 for j in range(wide.shape[1])]
        self.sensitive = wide.astype(narrowest(max(self.spread, default=1)) if narrow else np.int64, copy=False)
        # rows as float64: what ``np.bincount`` weighs with (int64 weights are cast at every call: a tally of the
        # 1M census's 896,367 cells took 2.9 ms with them, 1.7 ms without); exact below 2^53 rows
        self.n = np.asarray(n, dtype=np.float64)
        # QI i's codes at the floor's own level are ``leaves[i]`` where its map to that level is the identity
        self._own = [lv is not None and _identity(self.levels[i][lv]) for i, lv in enumerate(self.floor)]
        self._kept: dict[tuple[int, int], np.ndarray] = {}
        self._kept_bytes = 0
        self._keep_codes = keep_codes
        self._maps: dict[tuple[int, int, int], np.ndarray] = {}
        self._groupings = Groupings(keep_groupings)
        self._width = math.prod(max(s, 1) for s in self.spread)  # the sensitive codes' packed space

    @property
    def cells(self) -> int:
        return len(self.n)

    def forget(self) -> None:
        """Let go of what is kept between nodes (codes at levels, maps, groupings): a search's, once it is over."""
        self._kept, self._kept_bytes, self._maps = {}, 0, {}
        self._groupings = Groupings(self._groupings.limit)

    def covers(self, node: Sequence[Level]) -> bool:
        """Whether ``node`` rolls up from these cells: at or above the floor on every QI it keeps, and projecting
        out every QI the floor projected out (``None`` in ``floor``: a subset node's cells, Incognito's)."""
        return finer(self.floor, node)

    @property
    def nbytes(self) -> int:
        return sum(c.nbytes for c in self.leaves) + self.sensitive.nbytes + self.n.nbytes

    def _level(self, i: int, level: int) -> np.ndarray:
        """QI ``i``'s code per cell at ``level``, kept (narrow) while the kept ones stay within ``CODES_KEPT``."""
        found = self._kept.get((i, level))
        if found is None and level == self.floor[i] and self._own[i]:
            return self.leaves[i]  # the cells' own codes: no gather
        if found is None:
            up = self.levels[i][level]
            if up is None:
                raise ValueError(f"level {level} of QI {i} is below these cells' floor {self.floor}")
            found = up.astype(narrowest(self.cards[i][level]))[self.leaves[i]]  # the narrow map gathered
            if self._kept_bytes + found.nbytes <= self._keep_codes:
                self._kept[(i, level)] = found
                self._kept_bytes += found.nbytes
        return found

    def _codes(self, node: Sequence[Level]) -> list[tuple[int, np.ndarray, int]]:
        """(QI, its code per cell at the node's level, that level's cardinality) for each QI not projected out."""
        return [(i, self._level(i, lv), self.cards[i][lv]) for i, lv in enumerate(node) if lv is not None]

    def _up(self, i: int, low: int, high: int) -> np.ndarray:
        """QI ``i``'s level-``low`` codes mapped to their level-``high`` codes (a hierarchy maps each code to one
        ancestor), from the maps of the floor's codes."""
        found = self._maps.get((i, low, high))
        if found is None:
            found = np.zeros(self.cards[i][low], dtype=np.int64)
            found[self.levels[i][low]] = self.levels[i][high]
            self._maps[(i, low, high)] = found
        return found

    def _blocks(self, node: Sequence[Level]) -> Grouping:
        """The node's grouping of the cells: kept, or rolled up from the kept grouping with the fewest blocks that
        it is at or above (the search's recent nodes: ``Groupings``), or from the cells."""
        node = tuple(node)
        grouping = self._kept_or_rolled(node)
        if grouping is None:
            grouping = self._group(node)
            self._groupings.keep(grouping)
        return grouping

    def _kept_or_rolled(self, node: tuple[Level, ...]) -> Grouping | None:
        grouping = self._groupings.get(node)
        if grouping is None:
            finer = self._groupings.finest_below(node, self.cells // 2)
            if finer is not None:
                grouping = self._rolled(finer, node)
                self._groupings.keep(grouping)
        return grouping

    def _group(self, node: tuple[Level, ...]) -> Grouping:
        return Grouping.of(node, self._codes(node), self.n)

    def _rolled(self, finer: Grouping, node: tuple[Level, ...]) -> Grouping:
        """``node``'s grouping from a grouping it is at or above: its blocks grouped by the node's codes."""
        held = dict(finer.codes)
        codes = [
            (i, held[i] if lv == low else self._up(i, low, lv)[held[i]], self.cards[i][lv])
            for i, (low, lv) in enumerate(zip(finer.node, node))
            if lv is not None and low is not None  # (a node's kept QIs are kept by the finer one: ``finest_below``)
        ]
        over = Grouping.of(node, codes, finer.rows)
        cells = finer.block  # found now: the finer grouping (and what it holds) is not kept alive by this one
        return Grouping(node, over.codes, over.rows, finer.items, lambda: over.block[cells])

    def sizes(self, node: Sequence[Level]) -> tuple[np.ndarray, np.ndarray]:
        """The node's block-size histogram: distinct sizes ascending and the blocks of each."""
        size, blocks = np.unique(self._blocks(node).rows, return_counts=True)
        return size.astype(np.int64), blocks.astype(np.int64)

    def counts(self, node: Sequence[Level]) -> dict[str, np.ndarray]:
        """The node's cells as ``queries.node_counts`` returns them, in block-key order: ``g{i}`` for every QI
        not projected out, ``s{j}`` for every sensitive column, ``n`` — and what grouping them found: each cell's
        block (``block``, 0.. in key order) and each block's codes (``blocks``: one column per QI, 0 where
        projected out), so that ``NodeCounts.from_blocks`` need not group them again."""
        node = tuple(node)
        grouping = self._kept_or_rolled(node)
        if grouping is None:
            tallied = self._tallied(node)
            if tallied is not None:
                return tallied
            grouping = self._blocks(node)
        width = self._width
        combined = grouping.block * width
        stride = width
        for j, s in enumerate(self.spread):
            stride //= max(s, 1)
            combined += self.sensitive[:, j].astype(np.int64, copy=False) * stride
        space = grouping.blocks * width
        if space <= max(4 * len(combined), 1 << 16):  # a tally over the space (counts below 2^53: exact)
            tally = np.bincount(combined, weights=self.n, minlength=space)
            key = np.flatnonzero(tally)
            n = tally[key].astype(np.int64)
        else:
            key, summed = sorted_sum(combined, self.n.copy())
            n = summed.astype(np.int64)
        block_of, rest = np.divmod(key, width)
        return self._cells(grouping, block_of, rest, n)

    def _tallied(self, node: tuple[Level, ...]) -> dict[str, np.ndarray] | None:
        """``counts`` of a node grouped from the cells in one tally of the cells' keys with their sensitive codes
        (the blocks' rows are sums of their cells'); the grouping found is kept.  ``None`` where that key's space
        is wide beside the cells (a node's blocks are then found first, by sorting)."""
        codes = self._codes(node)
        space, width = math.prod(c for _, _, c in codes), self._width
        if not codes or not self.cells or space * width > max(self.cells, 1 << 16):  # a tally of 8 bytes a cell at most
            return None
        digits = [(-1, self.sensitive[:, j], max(s, 1)) for j, s in enumerate(self.spread)]
        combined = pack(codes + digits, self.cells)  # the block's key, then the sensitive codes
        tally = np.bincount(combined, weights=self.n, minlength=space * width)
        cell = np.flatnonzero(tally)
        n = tally[cell].astype(np.int64)
        block_key, rest = np.divmod(cell, width)
        first = np.ones(len(cell), dtype=bool)
        first[1:] = block_key[1:] != block_key[:-1]
        starts = np.flatnonzero(first)
        cells = self.cells  # (the grouping must not refer to this set: a floor let go is then freed at once)
        rows = np.add.reduceat(n, starts)
        grouping = Grouping.keyed(node, codes, block_key[starts], rows, lambda: pack(codes, cells), space, cells)
        self._groupings.keep(grouping)
        block_of = np.cumsum(first, dtype=np.int64)
        block_of -= 1
        return self._cells(grouping, block_of, rest, n)

    def _cells(self, grouping: Grouping, block_of: np.ndarray, rest: np.ndarray, n: np.ndarray
               ) -> dict[str, np.ndarray]:  # fmt: skip
        """``counts``' columns from each cell's block, its sensitive codes packed (``rest``) and its rows."""
        width = self._width
        data = {f"g{i}": codes[block_of] for i, codes in grouping.codes}
        stride = width
        for j, s in enumerate(self.spread):
            stride //= max(s, 1)
            data[f"s{j}"], rest = np.divmod(rest, stride)
        data["n"] = n
        data["block"] = block_of
        data["blocks"] = np.zeros((grouping.blocks, len(grouping.node)), dtype=np.int64)
        for i, codes in grouping.codes:
            data["blocks"][:, i] = codes
        return data


class Floors:
    """Nodes counted in the warehouse whose cells were few enough to keep (at most ``budget`` cells in all): every
    node at or above one of them is then rolled up here instead of by a statement.  A new floor below a kept one
    replaces it; beyond the budget the floors rolled up here go first, then those ``fetched`` from the warehouse
    (a hub: a statement to fetch it again), each the least recently used first (a search keeps returning to the
    regions it is in; Spark's 10M census, Incognito with k + entropy: 94 fetches of 33 hubs with one order, 60
    with two, docs/benchmarks.md).  ``hierarchies[i]`` gives QI ``i``'s height, its
    cardinality at each level and ``ancestors(level, target)``.

    >>> from veil.hierarchy import SuppressSpec, ValueKind, build
    >>> fl = Floors([build(SuppressSpec(), "a", ["1", "2"], ValueKind.TEXT)], budget=4)
    >>> fl.keep((0,), {"g0": np.array([0, 1]), "n": np.array([3, 4])}, 0) is not None
    True
    >>> fl.holder((1,)).sizes((1,))
    (array([7]), array([1]))
    """

    def __init__(self, hierarchies: Sequence[Any], budget: int) -> None:
        self.hierarchies = list(hierarchies)
        self.budget = budget
        self.kept: list[FrequencySet] = []  # least recently used first
        self._floors = level_rows([], len(self.hierarchies))  # each kept floor's levels (``covers``: one comparison)
        self._used: list[int] = []  # when each was last used
        self._fetched: list[bool] = []  # whether each came from the warehouse (else rolled up here)
        self._clock = 0

    def holder(self, node: Sequence[Level]) -> FrequencySet | None:
        """The kept floor with the fewest cells that ``node`` rolls up from, if any (now the most recently used)."""
        found = np.flatnonzero((self._floors <= level_rows([node], self._floors.shape[1])).all(axis=1))
        if not len(found):
            return None
        best = int(min(found, key=lambda k: self.kept[k].cells))
        self._clock += 1
        self._used[best] = self._clock
        return self.kept[best]

    def room(self, cells: int) -> bool:
        return 0 < cells <= self.budget

    def keep(
        self, node: Sequence[Level], data: dict[str, np.ndarray], sensitive: int, fetched: bool = False
    ) -> FrequencySet | None:
        """Keep a node's cells (``g{i}`` for every QI it keeps, ``s{j}``, ``n`` as ``queries.node_counts`` returns
        them) when they fit the budget; the floor kept, or ``None``.  A subset node's cells (QIs projected out:
        Incognito's) serve only nodes that project out the same QIs, or more."""
        if not self.room(len(data["n"])):
            return None
        maps = [
            [None] * (h.height + 1)
            if lv is None
            else [None] * lv + [h.ancestors(lv, j) for j in range(lv, h.height + 1)]
            for h, lv in zip(self.hierarchies, node)
        ]
        cards = [[h.cardinality(j) for j in range(h.height + 1)] for h in self.hierarchies]
        rows = len(data["n"])
        s = (
            np.column_stack([data[f"s{j}"] for j in range(sensitive)])
            if sensitive
            else np.zeros((rows, 0), dtype=np.int64)
        )
        floor = FrequencySet(
            [np.zeros(rows, dtype=np.int32) if lv is None else data[f"g{i}"] for i, lv in enumerate(node)],
            maps,
            cards,
            s,
            data["n"],
            floor=tuple(None if lv is None else int(lv) for lv in node),
            keep_codes=0,
            keep_groupings=1,  # floors are many: each keeps its last node's grouping alone
            narrow=True,
        )
        self._clock += 1
        below = (level_rows([floor.floor], self._floors.shape[1]) <= self._floors).all(axis=1)  # covered by the new one
        order = [k for _, k in sorted((u, k) for k, u in enumerate(self._used) if not below[k])]  # least recent first
        kept = [self.kept[k] for k in order] + [floor]
        used = [self._used[k] for k in order] + [self._clock]
        remote = [self._fetched[k] for k in order] + [fetched]
        while sum(f.cells for f in kept) > self.budget:  # floors rolled up here go first: they cost no statement again
            gone = next((k for k, f in enumerate(remote) if not f), 0)
            del kept[gone], used[gone], remote[gone]
        self._set(kept, used, remote)
        return floor if kept and kept[-1] is floor else None  # else let go at once: the fetched ones fill the budget

    def _set(self, kept: list[FrequencySet], used: list[int], fetched: list[bool]) -> None:
        self.kept, self._used, self._fetched = kept, used, fetched
        self._floors = level_rows([f.floor for f in kept], self._floors.shape[1])

    def clear(self) -> None:
        self._set([], [], [])
