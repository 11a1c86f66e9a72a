"""The full-domain generalization lattice: nodes, order, heights.  Pure stdlib + numpy.  (LeFevre, DeWitt,
Ramakrishnan, "Incognito: Efficient Full-Domain K-Anonymity", SIGMOD 2005.)

A node is a tuple of levels ``(l1..ld)`` with ``0 <= li <= hi``.  ``a <= b`` iff ``ai <= bi`` for all i.

>>> lat = Lattice((1, 2))
>>> lat.size, lat.bottom, lat.top
(6, (0, 0), (1, 2))
>>> lat.successors((0, 1))
[(1, 1), (0, 2)]
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

Node = tuple[int, ...]


def finer(a: Sequence[int | None], b: Sequence[int | None]) -> bool:
    """Node ``a`` is at or below node ``b``: every block of ``b`` is a union of blocks of ``a`` (a projected-out
    attribute, ``None``, is above every level; Incognito's subset lattices).

    >>> finer((0, 1), (1, None)), finer((0, None), (1, 1)), finer((1, 1), (1, 1))
    (True, False, True)
    """
    return all(y is None or (x is not None and x <= y) for x, y in zip(a, b))


PROJECTED = 1 << 14  # a projected-out attribute's level in ``level_rows``: above every level


def level_rows(nodes: Sequence[Sequence[int | None]], width: int) -> np.ndarray:
    """Nodes as rows of levels (``PROJECTED`` for ``None``), so that ``finer`` is one comparison of rows: ``a`` is
    at or below ``b`` exactly when ``level_rows([a]) <= level_rows([b])`` everywhere.

    >>> m = level_rows([(0, 1), (1, None)], 2)
    >>> m.tolist(), bool((m[0] <= m[1]).all())
    ([[0, 1], [1, 16384]], True)
    """
    return np.array([[PROJECTED if lv is None else lv for lv in n] for n in nodes], dtype=np.int64).reshape(-1, width)


class NodeSet:
    """Nodes added one by one, to ask whether any is at or below a node (``finer``) in one vectorized test.

    >>> found = NodeSet(2)
    >>> found.add((1, 0)); found.any_finer((2, 0)), found.any_finer((0, 0)), found.any_finer((1, None))
    (True, False, True)
    """

    def __init__(self, width: int) -> None:
        self._rows = np.zeros((8, width), dtype=np.int64)
        self._n = 0

    def add(self, node: Sequence[int | None]) -> None:
        if self._n == len(self._rows):
            self._rows = np.concatenate([self._rows, np.zeros_like(self._rows)])
        self._rows[self._n] = level_rows([node], self._rows.shape[1])[0]
        self._n += 1

    def any_finer(self, node: Sequence[int | None]) -> bool:
        """Whether a node added is at or below ``node``."""
        return bool(self._n) and bool(
            (self._rows[: self._n] <= level_rows([node], self._rows.shape[1])).all(axis=1).any()
        )


def meet(nodes: Sequence[Sequence[int | None]]) -> tuple[int | None, ...]:
    """The coarsest node at or below every one of ``nodes`` (``finer`` of each): per QI the lowest level any of
    them keeps, ``None`` where all of them project it out.

    >>> meet([(2, 0, None), (1, None, None), (3, 1, None)])
    (1, 0, None)
    """
    return tuple(min((lv for lv in levels if lv is not None), default=None) for levels in zip(*nodes))


def show(node: Sequence[int | None]) -> str:
    """A node as messages name it: ``(1,*,0)``.

    >>> show((1, None, 0))
    '(1,*,0)'
    """
    return "(" + ",".join("*" if lv is None else str(lv) for lv in node) + ")"


def parse_node(text: str, heights: Sequence[int]) -> Node:
    """Parse ``"1,0,2"`` into a node of a lattice with ``heights``; errors name the bad part."""
    parts = [p.strip() for p in text.split(",")] if text.strip() else []
    if len(parts) != len(heights):
        raise ValueError(f"node {text!r} has {len(parts)} levels, the lattice has {len(heights)} quasi-identifiers")
    levels: list[int] = []
    for i, (part, h) in enumerate(zip(parts, heights)):
        if not part.isdigit():
            raise ValueError(f"node {text!r}: level {part!r} at position {i + 1} is not a whole number")
        level = int(part)
        if level > h:
            raise ValueError(f"node {text!r}: level {level} at position {i + 1} exceeds the hierarchy height {h}")
        levels.append(level)
    return tuple(levels)


def leq(a: Node, b: Node) -> bool:
    """``a <= b`` in the lattice order."""
    return all(x <= y for x, y in zip(a, b))


@dataclass(frozen=True)
class Lattice:
    """All nodes of the product of chains ``0..h_i``; also as a numpy matrix for vectorized tagging."""

    heights: tuple[int, ...]

    @property
    def size(self) -> int:
        n = 1
        for h in self.heights:
            n *= h + 1
        return n

    @property
    def bottom(self) -> Node:
        return tuple(0 for _ in self.heights)

    @property
    def top(self) -> Node:
        return tuple(self.heights)

    def height(self, node: Node) -> int:
        return sum(node)

    def nodes(self) -> Iterator[Node]:
        """Every node, by height, then lexicographically."""
        return iter(self.ordered)

    @cached_property
    def ordered(self) -> list[Node]:
        all_nodes = list(itertools.product(*(range(h + 1) for h in self.heights)))
        all_nodes.sort(key=lambda n: (sum(n), n))
        return all_nodes

    @cached_property
    def matrix(self) -> np.ndarray:
        """``(size, d)`` int matrix of the nodes in ``ordered`` order."""
        return np.array(self.ordered, dtype=np.int16).reshape(self.size, len(self.heights))

    @cached_property
    def columns(self) -> tuple[np.ndarray, ...]:
        """``matrix`` column by column, each contiguous: comparing a node attribute by attribute is several
        times faster than ``(matrix >= node).all(axis=1)`` over a narrow row-major matrix."""
        return tuple(np.ascontiguousarray(self.matrix[:, a]) for a in range(len(self.heights)))

    @cached_property
    def index(self) -> dict[Node, int]:
        return {n: i for i, n in enumerate(self.ordered)}

    def successors(self, node: Node) -> list[Node]:
        """Direct generalizations: one level up in one attribute."""
        return [node[:i] + (node[i] + 1,) + node[i + 1 :] for i in range(len(node)) if node[i] < self.heights[i]]

    def predecessors(self, node: Node) -> list[Node]:
        """Direct specializations: one level down in one attribute."""
        return [node[:i] + (node[i] - 1,) + node[i + 1 :] for i in range(len(node)) if node[i] > 0]

    def above(self, node: Sequence[int]) -> np.ndarray:
        """Boolean mask over ``ordered``: nodes ``>= node`` (including itself).

        >>> Lattice((1, 2)).above((0, 1)).tolist()   # (0,0) (0,1) (1,0) (0,2) (1,1) (1,2)
        [False, True, False, True, True, True]
        """
        out = np.ones(self.size, dtype=bool)
        for col, level in zip(self.columns, node):
            if level:
                out &= col >= level
        return out

    def below(self, node: Sequence[int]) -> np.ndarray:
        """Boolean mask over ``ordered``: nodes ``<= node`` (including itself).

        >>> Lattice((1, 2)).below((0, 1)).tolist()
        [True, True, False, False, False, False]
        """
        out = np.ones(self.size, dtype=bool)
        for col, level, h in zip(self.columns, node, self.heights):
            if level < h:
                out &= col <= level
        return out
