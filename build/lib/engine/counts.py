"""The count structures every checker and metric reads (SPEC §1).  numpy only.

A node's ``GROUP BY`` returns *cells*: (generalized QI codes…, sensitive codes…, count).  ``NodeCounts``
holds them compactly: the q*-blocks (their QI codes and sizes) and, per cell, its block, its sensitive
codes and its count.  ``NodeCounts.blocks(s)`` gives the blocks × values count matrix ``n(E, s)`` of one
sensitive attribute (``BlockCounts``); ``sub_blocks(s)`` the blocks of ``Q ∪ (S \\ {s})`` that
multi-attribute l-diversity needs; ``rollup(node)`` the counts of a more general node, which
(n,t)-closeness uses for natural supersets.

>>> dom = SensitiveDomain("disease", np.array(["flu", "hiv"], dtype=object), np.array([3, 1]))
>>> nc = NodeCounts.from_cells(("zip",), (1,), np.array([[0], [0], [1]]), np.array([[0], [1], [0]]),
...                            np.array([2, 1, 1]), (2,), (dom,))
>>> nc.sizes.tolist(), nc.blocks("disease").counts.tolist()
([3, 1], [[2, 1], [1, 0]])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

import numpy as np

Level = int | None  # None: the attribute is projected out (Incognito's subset lattices)


class Generalizer(Protocol):
    """Maps codes of one quasi-identifier between levels (implemented by ``hierarchy.Hierarchy``)."""

    @property
    def height(self) -> int: ...

    def ancestors(self, level: int, target: int) -> np.ndarray: ...

    def cardinality(self, level: int) -> int: ...

    def domain(self, level: int) -> list: ...


@dataclass(frozen=True, eq=False)
class SensitiveDomain:
    """A sensitive attribute's distinct values (sorted: numeric order for numbers) and the whole
    original table's distribution over them (``P`` of SPEC §1, counts)."""

    name: str
    values: np.ndarray
    total: np.ndarray
    numeric: bool = False

    @property
    def size(self) -> int:
        return len(self.values)

    @cached_property
    def reference(self) -> np.ndarray:
        """``P`` as probabilities."""
        t = self.total.astype(np.float64)
        return t / t.sum() if t.sum() else t


@dataclass(frozen=True, eq=False)
class BlockCounts:
    """``n(E, s)`` for one sensitive attribute: a dense ``(blocks, values)`` int64 matrix.

    >>> dom = SensitiveDomain("s", np.array([1, 2, 3]), np.array([2, 2, 1]), numeric=True)
    >>> bc = BlockCounts(np.array([[2, 0, 1], [0, 2, 0]]), dom)
    >>> bc.sizes.tolist(), bc.distinct.tolist()
    ([3, 2], [2, 1])
    """

    counts: np.ndarray
    domain: SensitiveDomain

    @property
    def values(self) -> np.ndarray:
        return self.domain.values

    @property
    def total(self) -> np.ndarray:
        return self.domain.total

    @property
    def blocks(self) -> int:
        return self.counts.shape[0]

    @cached_property
    def sizes(self) -> np.ndarray:
        return self.counts.sum(axis=1)

    @cached_property
    def distinct(self) -> np.ndarray:
        """``m``: distinct sensitive values present in each block."""
        return np.count_nonzero(self.counts, axis=1)

    @cached_property
    def descending(self) -> np.ndarray:
        """Each block's counts sorted descending (``r1 >= r2 >= ...``), zeros last."""
        return -np.sort(-self.counts, axis=1)

    @cached_property
    def proportions(self) -> np.ndarray:
        """``p(E, s)``; a block of size 0 (never produced by a query) would give zeros."""
        sizes = self.sizes.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = self.counts / sizes[:, None]
        return np.nan_to_num(p)


def _combine(codes: np.ndarray, cardinalities: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of ``codes`` (r, d) and each row's index into them, in lexicographic order."""
    r, d = codes.shape
    if d == 0:
        return np.zeros((1 if r else 0, 0), dtype=np.int64), np.zeros(r, dtype=np.int64)
    span = 1
    for c in cardinalities:
        span *= max(int(c), 1)
    if span < 2**62:
        radix = np.zeros(r, dtype=np.int64)
        for j in range(d):
            radix = radix * max(int(cardinalities[j]), 1) + codes[:, j]
        uniq, inverse = np.unique(radix, return_inverse=True)
        keys = np.empty((len(uniq), d), dtype=np.int64)
        rest = uniq.copy()
        for j in range(d - 1, -1, -1):
            c = max(int(cardinalities[j]), 1)
            keys[:, j] = rest % c
            rest //= c
        return keys, inverse.reshape(-1)
    keys, inverse = np.unique(codes, axis=0, return_inverse=True)
    return keys.astype(np.int64), inverse.reshape(-1)


@dataclass(frozen=True, eq=False)
class NodeCounts:
    """The per-q*-block counts of one lattice node (all sensitive attributes jointly).

    ``keys[b]`` are block ``b``'s QI codes (0 for a projected-out attribute); ``cell_block``,
    ``cell_values`` (one column per sensitive attribute) and ``cell_count`` describe the cells."""

    attributes: tuple[str, ...]
    node: tuple[Level, ...]
    keys: np.ndarray
    cardinalities: tuple[int, ...]
    cell_block: np.ndarray
    cell_values: np.ndarray
    cell_count: np.ndarray
    sensitive: tuple[SensitiveDomain, ...] = ()
    generalizers: tuple[Generalizer, ...] | None = None
    _cache: dict = field(default_factory=dict, repr=False)

    @classmethod
    def from_cells(cls, attributes: Sequence[str], node: Sequence[Level], qi_codes: np.ndarray,
                   sensitive_codes: np.ndarray, count: np.ndarray, cardinalities: Sequence[int],
                   sensitive: Sequence[SensitiveDomain] = (),
                   generalizers: Sequence[Generalizer] | None = None) -> NodeCounts:
        """Group cells by their QI codes into blocks (lexicographic by code)."""
        qi_codes = np.asarray(qi_codes, dtype=np.int64).reshape(len(count), len(attributes))
        keys, block = _combine(qi_codes, cardinalities)
        return cls(
            attributes=tuple(attributes),
            node=tuple(node),
            keys=keys,
            cardinalities=tuple(int(c) for c in cardinalities),
            cell_block=block,
            cell_values=np.asarray(sensitive_codes, dtype=np.int64).reshape(len(count), len(sensitive)),
            cell_count=np.asarray(count, dtype=np.int64),
            sensitive=tuple(sensitive),
            generalizers=tuple(generalizers) if generalizers is not None else None,
        )

    @property
    def n_blocks(self) -> int:
        return self.keys.shape[0]

    @cached_property
    def sizes(self) -> np.ndarray:
        """``n(E)`` per block."""
        return np.bincount(self.cell_block, weights=self.cell_count, minlength=self.n_blocks).astype(np.int64)

    @property
    def rows(self) -> int:
        return int(self.cell_count.sum())

    def domain(self, name: str) -> SensitiveDomain:
        for d in self.sensitive:
            if d.name == name:
                return d
        raise KeyError(f"sensitive attribute {name!r} was not counted (counted: {[d.name for d in self.sensitive]})")

    def _position(self, name: str) -> int:
        return [d.name for d in self.sensitive].index(self.domain(name).name)

    def blocks(self, name: str) -> BlockCounts:
        """``n(E, s)`` of sensitive attribute ``name`` over the q*-blocks."""
        key = ("blocks", name)
        if key not in self._cache:
            i = self._position(name)
            dom = self.sensitive[i]
            flat = self.cell_block * dom.size + self.cell_values[:, i]
            m = np.bincount(flat, weights=self.cell_count, minlength=self.n_blocks * dom.size)
            self._cache[key] = BlockCounts(m.astype(np.int64).reshape(self.n_blocks, dom.size), dom)
        return self._cache[key]

    def sub_blocks(self, name: str) -> tuple[BlockCounts, np.ndarray]:
        """Blocks of ``Q ∪ (S \\ {name})`` with their histograms of ``name``, and each sub-block's q*-block.

        Multi-attribute l-diversity (papers/000, Def. 4.5) judges ``name`` with the other sensitive
        attributes in the key; a q*-block fails when any of its sub-blocks fails."""
        key = ("sub", name)
        if key not in self._cache:
            i = self._position(name)
            others = [j for j in range(len(self.sensitive)) if j != i]
            codes = np.column_stack([self.cell_block] + [self.cell_values[:, j] for j in others]).astype(np.int64)
            cards = [self.n_blocks] + [self.sensitive[j].size for j in others]
            sub_keys, sub = _combine(codes, cards)
            dom = self.sensitive[i]
            flat = sub * dom.size + self.cell_values[:, i]
            m = np.bincount(flat, weights=self.cell_count, minlength=len(sub_keys) * dom.size)
            bc = BlockCounts(m.astype(np.int64).reshape(len(sub_keys), dom.size), dom)
            self._cache[key] = (bc, sub_keys[:, 0].copy())
        return self._cache[key]

    def rollup(self, node: Sequence[Level]) -> NodeCounts:
        """The counts of a node ``>=`` this one, aggregated here (needs ``generalizers``)."""
        node = tuple(node)
        if node == self.node:
            return self
        if self.generalizers is None:
            raise ValueError("rollup needs the hierarchies (generalizers)")
        for mine, theirs in zip(self.node, node):
            if theirs is not None and (mine is None or theirs < mine):
                raise ValueError(f"node {node} is not above {self.node}")
        columns, cards = [], []
        for j, (mine, theirs) in enumerate(zip(self.node, node)):
            if theirs is None:
                columns.append(np.zeros(self.n_blocks, dtype=np.int64))
                cards.append(1)
            else:
                g = self.generalizers[j]
                columns.append(g.ancestors(mine, theirs)[self.keys[:, j]])  # type: ignore[arg-type]
                cards.append(g.cardinality(theirs))
        block_codes = np.column_stack(columns) if columns else np.zeros((self.n_blocks, 0), dtype=np.int64)
        keys, up = _combine(block_codes, cards)
        return NodeCounts(
            attributes=self.attributes, node=node, keys=keys, cardinalities=tuple(cards),
            cell_block=up[self.cell_block], cell_values=self.cell_values, cell_count=self.cell_count,
            sensitive=self.sensitive, generalizers=self.generalizers,
        )

    def forget(self) -> None:
        """Drop the derived dense matrices (they can be large); the counts themselves stay."""
        self._cache.clear()

    @property
    def nbytes(self) -> int:
        return int(self.keys.nbytes + self.cell_block.nbytes + self.cell_values.nbytes + self.cell_count.nbytes)

    def labels(self) -> list[list[str]]:
        """Each block's generalized values as strings (``*`` for a projected-out attribute)."""
        if self.generalizers is None:
            return [[str(c) for c in row] for row in self.keys.tolist()]
        columns = []
        for j, level in enumerate(self.node):
            if level is None:
                columns.append(["*"] * self.n_blocks)
            else:
                dom = self.generalizers[j].domain(level)
                columns.append([str(dom[c]) for c in self.keys[:, j].tolist()])
        return [list(row) for row in zip(*columns)] if columns else [[] for _ in range(self.n_blocks)]

    def restrict(self, keep: np.ndarray) -> NodeCounts:
        """Only the blocks where ``keep`` is true (e.g. after suppression), renumbered."""
        keep = np.asarray(keep, dtype=bool)
        new_index = np.cumsum(keep) - 1
        cells = keep[self.cell_block]
        return NodeCounts(
            attributes=self.attributes, node=self.node, keys=self.keys[keep], cardinalities=self.cardinalities,
            cell_block=new_index[self.cell_block[cells]], cell_values=self.cell_values[cells],
            cell_count=self.cell_count[cells], sensitive=self.sensitive, generalizers=self.generalizers,
        )
