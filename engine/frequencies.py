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

Level = int | None
CODES_KEPT = 1 << 26  # bytes of per-cell codes at a level kept between nodes (the narrowest integer type)


def group(key: np.ndarray, space: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct keys ascending and each key's index among them (``np.unique(key, return_inverse=True)``),
    for keys in ``[0, space)``: a table of the space when it is small beside the keys, else one in-place sort of
    the keys packed with their positions (several times faster than ``argsort``).

    >>> [a.tolist() for a in group(np.array([5, 2, 5, 9]), 10)]
    [[2, 5, 9], [1, 0, 1, 2]]
    >>> [a.tolist() for a in group(np.array([5, 2, 5, 9]), 1 << 40)]
    [[2, 5, 9], [1, 0, 1, 2]]
    """
    n = len(key)
    if space <= max(4 * n, 1 << 16):
        present = np.zeros(space, dtype=bool)
        present[key] = True
        ids = np.cumsum(present, dtype=np.int64) - 1
        return np.flatnonzero(present), ids[key]
    bits = max(int(n - 1).bit_length(), 1)
    if space > 1 << (62 - bits):
        unique, inverse = np.unique(key, return_inverse=True)
        return unique, inverse.reshape(-1)
    packed = np.left_shift(key, bits)
    packed |= np.arange(n, dtype=np.int64)
    packed.sort()
    position = packed & ((1 << bits) - 1)
    ordered = np.right_shift(packed, bits, out=packed)
    first = np.ones(n, dtype=bool)
    first[1:] = ordered[1:] != ordered[:-1]
    inverse = np.empty(n, dtype=np.int64)
    inverse[position] = np.cumsum(first, dtype=np.int64) - 1
    return ordered[first], inverse


class FrequencySet:
    """Cells of the base frequency set — or of a node counted in the warehouse, its *floor*, from which every
    node at or above it rolls up: ``leaves[i]`` QI ``i``'s code per cell at ``floor[i]`` (0: the leaf),
    ``levels[i][j]`` the map from such a code to its level-``j`` code (``None`` below the floor),
    ``cards[i][j]`` the codes at level ``j``, ``sensitive`` the (cells × columns) sensitive codes, ``n`` the rows
    of each cell."""

    def __init__(
        self,
        leaves: Sequence[np.ndarray],
        levels: Sequence[Sequence[np.ndarray | None]],
        cards: Sequence[Sequence[int]],
        sensitive: np.ndarray,
        n: np.ndarray,
        floor: Sequence[Level] | None = None,
        keep_codes: int = CODES_KEPT,
    ) -> None:
        self.leaves = [np.asarray(c, dtype=np.int32) for c in leaves]  # codes: below 2^31 (a level's cardinality)
        self.levels = [[None if m is None else np.asarray(m, dtype=np.int64) for m in maps] for maps in levels]
        self.floor: tuple[Level, ...] = tuple(floor) if floor is not None else (0,) * len(self.leaves)
        self.cards = [list(c) for c in cards]
        self.sensitive = np.asarray(sensitive, dtype=np.int64).reshape(len(n), -1)
        self.n = np.asarray(n, dtype=np.int64)
        self.spread = [int(self.sensitive[:, j].max(initial=-1)) + 1 for j in range(self.sensitive.shape[1])]
        self._kept: dict[tuple[int, int], np.ndarray] = {}
        self._kept_bytes = 0
        self._keep_codes = keep_codes
        self._last: tuple[tuple[Level, ...], np.ndarray, list[tuple[int, np.ndarray]]] | None = None

    @property
    def cells(self) -> int:
        return len(self.n)

    def covers(self, node: Sequence[Level]) -> bool:
        """Whether ``node`` rolls up from these cells: at or above the floor on every QI it keeps, and projecting
        out every QI the floor projected out (``None`` in ``floor``: a subset node's cells, Incognito's)."""
        return all(lv is None if f is None else lv is None or lv >= f for lv, f in zip(node, self.floor))

    @property
    def nbytes(self) -> int:
        return sum(c.nbytes for c in self.leaves) + self.sensitive.nbytes + self.n.nbytes

    def _level(self, i: int, level: int) -> np.ndarray:
        """QI ``i``'s code per cell at ``level``, kept (narrow) while the kept ones stay within ``CODES_KEPT``."""
        found = self._kept.get((i, level))
        if found is None:
            up = self.levels[i][level]
            if up is None:
                raise ValueError(f"level {level} of QI {i} is below these cells' floor {self.floor}")
            found = up[self.leaves[i]]
            width = 2 if self.cards[i][level] <= 1 << 15 else 4
            if self._kept_bytes + width * len(found) <= self._keep_codes:
                self._kept[(i, level)] = found.astype(np.int16 if width == 2 else np.int32)
                self._kept_bytes += width * len(found)
        return found

    def _codes(self, node: Sequence[Level]) -> list[tuple[int, np.ndarray, int]]:
        """(QI, its code per cell at the node's level, that level's cardinality) for each QI not projected out."""
        return [(i, self._level(i, lv), self.cards[i][lv]) for i, lv in enumerate(node) if lv is not None]

    def _blocks(self, node: Sequence[Level]) -> tuple[np.ndarray, list[tuple[int, np.ndarray]]]:
        """Each cell's block (0.., in key order) and each kept QI's code per block (the last node's remembered:
        a search asks a node's sizes, then its cells)."""
        node = tuple(node)
        if self._last is None or self._last[0] != node:
            self._last = (node, *self._group(node))
        return self._last[1], self._last[2]

    def _group(self, node: tuple[Level, ...]) -> tuple[np.ndarray, list[tuple[int, np.ndarray]]]:
        codes = self._codes(node)
        if not codes:
            return np.zeros(len(self.n), dtype=np.int64), []
        if math.prod(c for _, _, c in codes) < 2**62:
            key = np.zeros(len(self.n), dtype=np.int64)
            for _, code, card in codes:
                key *= card
                key += code
            unique, block = group(key, math.prod(c for _, _, c in codes))
            out, rest = [], unique
            for i, _code, card in reversed(codes):
                rest, mine = np.divmod(rest, card)
                out.append((i, mine))
            return block.reshape(-1), out[::-1]
        stacked = np.column_stack([code for _, code, _ in codes])  # astronomically wide: rows of codes
        unique, block = np.unique(stacked, axis=0, return_inverse=True)
        return block.reshape(-1), [(i, unique[:, k]) for k, (i, _, _) in enumerate(codes)]

    def sizes(self, node: Sequence[Level]) -> tuple[np.ndarray, np.ndarray]:
        """The node's block-size histogram: distinct sizes ascending and the blocks of each."""
        block, _ = self._blocks(node)
        rows = np.bincount(block, weights=self.n).astype(np.int64) if len(block) else np.zeros(0, dtype=np.int64)
        size, blocks = np.unique(rows, return_counts=True)
        return size.astype(np.int64), blocks.astype(np.int64)

    def counts(self, node: Sequence[Level]) -> dict[str, np.ndarray]:
        """The node's cells as ``queries.node_counts`` returns them, in block-key order: ``g{i}`` for every QI
        not projected out, ``s{j}`` for every sensitive column, ``n``."""
        block, keys = self._blocks(node)
        width = math.prod(max(s, 1) for s in self.spread)
        combined = block * width
        stride = width
        for j, s in enumerate(self.spread):
            stride //= max(s, 1)
            combined += self.sensitive[:, j] * stride
        space = (int(block.max(initial=-1)) + 1) * width
        if space <= max(4 * len(combined), 1 << 16):  # a tally over the space (counts below 2^53: exact)
            tally = np.bincount(combined, weights=self.n, minlength=space)
            key = np.flatnonzero(tally)
            n = tally[key].astype(np.int64)
        else:
            key, n = sorted_sum(combined, self.n.copy())
        block_of, rest = np.divmod(key, width)
        data = {f"g{i}": codes[block_of] for i, codes in keys}
        stride = width
        for j, s in enumerate(self.spread):
            stride //= max(s, 1)
            data[f"s{j}"], rest = np.divmod(rest, stride)
        data["n"] = n
        return data


class Floors:
    """Nodes counted in the warehouse whose cells were few enough to keep (at most ``budget`` cells in all): every
    node at or above one of them is then rolled up here instead of by a statement.  A new floor below a kept one
    replaces it; beyond the budget the least recently used go first (a search keeps returning to
    the regions it is in).  ``hierarchies[i]`` gives QI ``i``'s height, its
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
        self.kept: list[FrequencySet] = []

    def holder(self, node: Sequence[Level]) -> FrequencySet | None:
        """The kept floor with the fewest cells that ``node`` rolls up from, if any (now the most recently used)."""
        found = [f for f in self.kept if f.covers(node)]
        if not found:
            return None
        best = min(found, key=lambda f: f.cells)
        self.kept.remove(best)
        self.kept.append(best)
        return best

    def room(self, cells: int) -> bool:
        return 0 < cells <= self.budget

    def keep(self, node: Sequence[Level], data: dict[str, np.ndarray], sensitive: int) -> FrequencySet | None:
        """Keep a node's cells (``g{i}`` for every QI it keeps, ``s{j}``, ``n`` as ``queries.node_counts`` returns
        them) when they fit the budget; the floor kept, or ``None``.  A subset node's cells (QIs projected out:
        Incognito's) serve only nodes that project out the same QIs, or more."""
        if not self.room(len(data["n"])):
            return None
        levels = [
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
            levels,
            cards,
            s,
            data["n"],
            floor=tuple(None if lv is None else int(lv) for lv in node),
            keep_codes=0,
        )
        self.kept = [f for f in self.kept if not floor.covers(f.floor)] + [floor]
        while sum(f.cells for f in self.kept) > self.budget:
            self.kept.pop(0)
        return floor

    def clear(self) -> None:
        self.kept = []
