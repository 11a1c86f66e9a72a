"""A node's blocks over a frequency set's cells (``Grouping``) and the last nodes' groupings kept to roll the next
ones up from (``Groupings``): a node's blocks are unions of the blocks of any node it is at or above, so grouping a
finer node's few blocks by the node's codes gives its blocks without a pass over every cell.

>>> kept = Groupings(2)
>>> cells = [(0, np.array([0, 1, 1, 0]), 2), (1, np.array([2, 2, 2, 2]), 3)]
>>> kept.keep(Grouping.of((0, 0), cells, np.array([1, 1, 1, 1])))
>>> kept.finest_below((1, 0), items=4).node, kept.finest_below((0, None), items=4).rows.tolist()
((0, 0), [2, 2])
>>> kept.finest_below((None, 0), items=2) is None  # no fewer blocks than 2 items: none
True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from veil.lattice import level_rows

Level = int | None
GROUPINGS_KEPT = 16  # the last nodes' groupings kept to roll the next nodes up from ...
GROUPINGS_BYTES = 1 << 22  # ... within this many bytes (the last one always: the node being evaluated)


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


class Grouping:
    """A node's blocks over a frequency set's cells (or over a finer node's blocks): each block's ``rows``, each
    kept QI's code per block (``codes``, blocks in key order) and each item's ``block`` — found only when asked
    (the block sizes need one tally of the items' keys, not each item's block).

    >>> g = Grouping.of((1,), [(0, np.array([1, 0, 1]), 2)], np.array([3, 1, 2]))
    >>> g.rows.tolist(), [(i, c.tolist()) for i, c in g.codes], g.block.tolist()
    ([1, 5], [(0, [0, 1])], [1, 0, 1])
    """

    def __init__(self, node: tuple[Level, ...], codes: list[tuple[int, np.ndarray]], rows: np.ndarray, items: int,
                 block: Callable[[], np.ndarray]) -> None:  # fmt: skip
        self.node, self.codes, self.rows, self.items = node, codes, rows, items
        self._block: np.ndarray | Callable[[], np.ndarray] = block

    @property
    def blocks(self) -> int:
        return len(self.rows)

    @property
    def nbytes(self) -> int:
        """What it holds: a key or a block per item, and per block its rows and codes."""
        return 8 * self.items + self.rows.nbytes + sum(c.nbytes for _, c in self.codes)

    @property
    def block(self) -> np.ndarray:
        if callable(self._block):
            self._block = self._block()
        return self._block

    @classmethod
    def of(cls, node: tuple[Level, ...], codes: list[tuple[int, np.ndarray, int]], weights: np.ndarray) -> Grouping:
        """Items grouped by their codes (QI, code per item, cardinality), each weighing ``weights`` rows (at least
        one: a cell is a group of rows)."""
        space = math.prod(c for _, _, c in codes)
        if not codes or space >= 2**62 or space > max(4 * len(weights), 1 << 16):
            sorted_block, out = _grouped(codes, len(weights), space)
            rows = np.bincount(sorted_block, weights=weights) if len(sorted_block) else weights[:0]
            return cls(node, out, rows.astype(np.int64), len(weights), lambda: sorted_block)
        tally = np.bincount(pack(codes, len(weights)), weights=weights, minlength=space)
        present = np.flatnonzero(tally)
        rows = tally[present].astype(np.int64)
        return cls.keyed(node, codes, present, rows, lambda: pack(codes, len(weights)), space, len(weights))

    @classmethod
    def keyed(cls, node: tuple[Level, ...], codes: list[tuple[int, np.ndarray, int]], present: np.ndarray,
              rows: np.ndarray, key: Callable[[], np.ndarray], space: int, items: int) -> Grouping:  # fmt: skip
        """The grouping of ``items`` whose blocks are the distinct packed keys ``present`` (ascending, ``rows``
        each) of the items' keys (``pack`` of ``codes``, below ``space``), which ``key`` finds again when each
        item's block is asked (kept groupings hold no array per item until then)."""
        out, rest = [], present
        for i, _code, card in reversed(codes):
            rest, mine = np.divmod(rest, card)
            out.append((i, mine))

        def block() -> np.ndarray:
            ids = np.zeros(space, dtype=np.int64)
            ids[present] = np.arange(len(present))
            return ids[key()]

        return cls(node, out[::-1], rows, items, block)


def pack(codes: Sequence[tuple[int, np.ndarray, int]], items: int) -> np.ndarray:
    """Each item's codes packed into one integer (strides from the cardinalities; below 2^62), the last code
    the least significant."""
    narrow = math.prod(c for _, _, c in codes) < 2**31
    key: np.ndarray | None = None
    for _, code, card in codes:
        if card == 1:
            continue
        if key is None:
            key = code.astype(np.int32 if narrow else np.int64)
        else:
            key *= card
            key += code
    return np.zeros(items, dtype=np.int64) if key is None else key.astype(np.int64, copy=False)


def _grouped(codes: list[tuple[int, np.ndarray, int]], items: int, space: int
             ) -> tuple[np.ndarray, list[tuple[int, np.ndarray]]]:  # fmt: skip
    """Items grouped by their codes by sorting: each item's group (0.., in key order) and each QI's code per group.

    >>> block, out = _grouped([(0, np.array([1, 0, 1]), 2), (2, np.array([0, 0, 0]), 3)], 3, 6)
    >>> block.tolist(), [(i, c.tolist()) for i, c in out]
    ([1, 0, 1], [(0, [0, 1]), (2, [0, 0])])
    """
    if not codes:
        return np.zeros(items, dtype=np.int64), []
    if space >= 2**62:  # astronomically wide: rows of codes
        stacked = np.column_stack([code for _, code, _ in codes])
        unique, block = np.unique(stacked, axis=0, return_inverse=True)
        return block.reshape(-1), [(i, unique[:, k]) for k, (i, _, _) in enumerate(codes)]
    unique, block = group(pack(codes, items), space)
    out, rest = [], unique
    for i, _code, card in reversed(codes):
        rest, mine = np.divmod(rest, card)
        out.append((i, mine))
    return block.reshape(-1), out[::-1]


class Groupings:
    """The last nodes' groupings, most recently used last: at most ``limit`` of them, within ``GROUPINGS_BYTES``."""

    def __init__(self, limit: int = GROUPINGS_KEPT) -> None:
        self.limit = limit
        self.kept: list[Grouping] = []
        self.nbytes = 0
        self._levels = np.zeros((0, 0), dtype=np.int64)  # each kept node's levels (``PROJECTED``: projected out)

    def __len__(self) -> int:
        return len(self.kept)

    def get(self, node: tuple[Level, ...]) -> Grouping | None:
        for k, g in enumerate(self.kept):
            if g.node == node:
                self.kept.append(self.kept.pop(k))
                self._index()
                return g
        return None

    def finest_below(self, node: tuple[Level, ...], items: int) -> Grouping | None:
        """The kept grouping with the fewest blocks, if fewer than ``items``, whose blocks unite into the node's:
        at or below it on every QI the node keeps."""
        if not self.kept:
            return None
        blocks = [
            g.blocks if ok else items
            for g, ok in zip(self.kept, (self._levels <= level_rows([node], len(node))).all(axis=1))
        ]
        best = int(np.argmin(blocks))
        return self.kept[best] if blocks[best] < items else None

    def keep(self, grouping: Grouping) -> None:
        self.kept.append(grouping)
        self.nbytes += grouping.nbytes
        while len(self.kept) > 1 and (len(self.kept) > self.limit or self.nbytes > GROUPINGS_BYTES):
            self.nbytes -= self.kept.pop(0).nbytes
        self._index()

    def _index(self) -> None:
        self._levels = level_rows([g.node for g in self.kept], len(self.kept[0].node) if self.kept else 0)
