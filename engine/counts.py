"""The count structures every checker and metric reads (docs/models.md §1).  numpy only.

A node's ``GROUP BY`` returns *cells*: (generalized QI codes…, sensitive codes…, count).  ``NodeCounts``
holds them compactly: the q*-blocks (their QI codes and sizes) and, per cell, its block, its sensitive
codes and its count.  ``NodeCounts.blocks(s)`` gives the sparse per-block histograms ``n(E, s)`` of one
sensitive attribute (``BlockCounts``, CSR: never blocks × values); ``sub_blocks(s)`` the blocks of
``Q ∪ (S \\ {s})`` that multi-attribute l-diversity needs; ``superset_index(node)`` / ``rollup(node)`` the
blocks / counts of a more general node, which (n,t)-closeness uses for natural supersets.

>>> dom = SensitiveDomain("disease", np.array(["flu", "hiv"], dtype=object), np.array([3, 1]))
>>> nc = NodeCounts.from_cells(("zip",), (1,), np.array([[0], [0], [1]]), np.array([[0], [1], [0]]),
...                            np.array([2, 1, 1]), (2,), (dom,))
>>> nc.sizes.tolist(), nc.blocks("disease").dense().tolist()
([3, 1], [[2, 1], [1, 0]])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import IntEnum
from functools import cached_property
from typing import Any, Protocol

import numpy as np

Level = int | None  # None: the attribute is projected out (Incognito's subset lattices)


def full_levels(node: Sequence[Level]) -> tuple[int, ...]:
    """The levels, as ints, of a node with every attribute in it (the search's chosen nodes, a release's); a
    TypeError where an attribute is projected out, as ``int(None)``.

    >>> full_levels((1, 0))
    (1, 0)
    """
    levels = tuple(int(lv) for lv in node if lv is not None)
    if len(levels) != len(node):
        raise TypeError(f"node {tuple(node)}: an attribute is projected out")
    return levels


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
    original table's distribution over them (``P`` of docs/models.md §1, counts)."""

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
    """``n(E, s)`` of one sensitive attribute, sparse (CSR): the non-zero cells sorted by (block, value code).

    Block ``b``'s cells are ``indptr[b]:indptr[b+1]``; ``codes`` are columns of ``domain.values`` (ascending
    within a block) and ``counts`` the positive ``n(E, s)``.  Memory and every checker's time grow with the
    non-zero cells, never with blocks × domain.  Reductions over a block's cells: ``block_sum``, ``block_max``.

    >>> dom = SensitiveDomain("s", np.array([1, 2, 3]), np.array([2, 2, 1]), numeric=True)
    >>> bc = BlockCounts.from_cells(np.array([1, 0, 0]), np.array([1, 2, 0]), np.array([2, 1, 2]), 2, dom)
    >>> bc.indptr.tolist(), bc.codes.tolist(), bc.counts.tolist()
    ([0, 2, 3], [0, 2, 1], [2, 1, 2])
    >>> bc.sizes.tolist(), bc.distinct.tolist(), bc.block_max(bc.counts).tolist()
    ([3, 2], [2, 1], [2, 2])
    >>> bc.dense().tolist()
    [[2, 0, 1], [0, 2, 0]]
    """

    indptr: np.ndarray
    codes: np.ndarray
    counts: np.ndarray
    domain: SensitiveDomain

    @classmethod
    def from_cells(
        cls, block: np.ndarray, code: np.ndarray, count: np.ndarray, n_blocks: int, domain: SensitiveDomain
    ) -> BlockCounts:
        """Aggregate (block, code, count) cells in any order, repeats allowed; zero counts are dropped."""
        block = np.asarray(block, dtype=np.int64)
        code = np.asarray(code, dtype=np.int64)
        count = np.asarray(count, dtype=np.int64)
        width = max(domain.size, 1)
        if n_blocks * width <= max(len(block), 1 << 16):  # few blocks (supersets): a dense tally, no sort
            tally = np.bincount(block * width + code, weights=count, minlength=n_blocks * width)
            key = np.flatnonzero(tally)
            block, code, count = key // width, key % width, tally[key].astype(np.int64)
        elif n_blocks * width < 2**62:
            key = block * width
            key += code
            key, count = sorted_sum(key, count)
            block, code = np.divmod(key, width)
        else:  # astronomically wide: sort by the two columns
            order = np.lexsort((code, block))
            block, code, count = block[order], code[order], count[order]
            first = np.ones(len(block), dtype=bool)
            first[1:] = (block[1:] != block[:-1]) | (code[1:] != code[:-1])
            starts = np.flatnonzero(first)
            count = np.add.reduceat(count, starts) if len(starts) else count
            block, code = block[starts], code[starts]
        keep = count != 0
        if not keep.all():
            block, code, count = block[keep], code[keep], count[keep]
        indptr = np.zeros(n_blocks + 1, dtype=np.int64)
        np.cumsum(np.bincount(block, minlength=n_blocks), out=indptr[1:])
        return cls(indptr, code, count, domain)

    @classmethod
    def from_dense(cls, matrix: np.ndarray, domain: SensitiveDomain) -> BlockCounts:
        """From a (blocks, values) matrix (tests and small inputs)."""
        m = np.asarray(matrix, dtype=np.int64).reshape(-1, domain.size)
        b, v = np.nonzero(m)
        return cls.from_cells(b, v, m[b, v], m.shape[0], domain)

    @property
    def values(self) -> np.ndarray:
        return self.domain.values

    @property
    def total(self) -> np.ndarray:
        return self.domain.total

    @property
    def blocks(self) -> int:
        return len(self.indptr) - 1

    @property
    def cells(self) -> int:
        return len(self.codes)

    @cached_property
    def distinct(self) -> np.ndarray:
        """``m``: distinct sensitive values present in each block."""
        return np.diff(self.indptr)

    @cached_property
    def block_of_cell(self) -> np.ndarray:
        return np.repeat(np.arange(self.blocks, dtype=np.int64), self.distinct)

    @cached_property
    def sizes(self) -> np.ndarray:
        """``n(E)`` per block."""
        return self.block_sum(self.counts)

    def block_sum(self, x: np.ndarray) -> np.ndarray:
        """Per block, the sum of a per-cell array (0 for a block without cells; object arrays stay exact)."""
        return self._reduce(np.add, x, 0)

    def block_max(self, x: np.ndarray, empty: float = 0) -> np.ndarray:
        """Per block, the maximum of a per-cell array (``empty`` for a block without cells)."""
        return self._reduce(np.maximum, x, empty)

    def block_min(self, x: np.ndarray, empty: float = 0) -> np.ndarray:
        return self._reduce(np.minimum, x, empty)

    def _reduce(self, ufunc: np.ufunc, x: np.ndarray, empty: float) -> np.ndarray:
        return segment_reduce(ufunc, x, self.indptr, empty)

    def cumulative(self) -> np.ndarray:
        """Per cell, the block's count up to and including this cell (values in code order)."""
        cum = np.cumsum(self.counts)
        before = np.zeros(self.blocks, dtype=np.int64)
        starts = self.indptr[:-1]
        present = self.distinct > 0
        before[present] = cum[starts[present]] - self.counts[starts[present]]
        return cum - np.repeat(before, self.distinct)

    def slice(self, start: int, stop: int) -> BlockCounts:
        """Blocks ``start:stop`` (views, no copy)."""
        lo, hi = int(self.indptr[start]), int(self.indptr[stop])
        return BlockCounts(self.indptr[start : stop + 1] - lo, self.codes[lo:hi], self.counts[lo:hi], self.domain)

    def take(self, blocks: np.ndarray) -> BlockCounts:
        """The given blocks, in that order."""
        blocks = np.asarray(blocks, dtype=np.int64)
        lengths = self.distinct[blocks]
        indptr = np.zeros(len(blocks) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        cells = np.repeat(self.indptr[blocks] - indptr[:-1], lengths) + np.arange(indptr[-1], dtype=np.int64)
        return BlockCounts(indptr, self.codes[cells], self.counts[cells], self.domain)

    def chunks(self, max_cells: int) -> list[tuple[int, int]]:
        """Consecutive block ranges of at most ``max_cells`` cells each (a larger single block on its own)."""
        if self.blocks == 0:
            return []
        bounds = [0]
        while bounds[-1] < self.blocks:
            start = bounds[-1]
            stop = int(np.searchsorted(self.indptr, self.indptr[start] + max_cells, side="right")) - 1
            bounds.append(min(self.blocks, max(stop, start + 1)))
        return list(zip(bounds[:-1], bounds[1:]))

    def same(self, other: BlockCounts) -> bool:
        """The same histograms (the representation is canonical)."""
        return (
            np.array_equal(self.indptr, other.indptr)
            and np.array_equal(self.codes, other.codes)
            and np.array_equal(self.counts, other.counts)
        )

    def dense(self) -> np.ndarray:
        """The (blocks, values) matrix — for tests and small inputs only: it allocates blocks × domain."""
        m = np.zeros((self.blocks, self.domain.size), dtype=np.int64)
        m[self.block_of_cell, self.codes] = self.counts
        return m


def segment_reduce(ufunc: np.ufunc, x: np.ndarray, indptr: np.ndarray, empty: float = 0) -> np.ndarray:
    """``ufunc`` reduced over each segment ``x[indptr[i]:indptr[i+1]]`` (``empty`` for an empty segment; object
    arrays stay exact).

    >>> segment_reduce(np.add, np.array([1, 2, 3]), np.array([0, 2, 2, 3])).tolist()
    [3, 0, 3]
    """
    x = np.asarray(x)
    dtype = x.dtype if x.dtype == object or isinstance(empty, int) else np.result_type(x.dtype, np.float64)
    out = np.full(len(indptr) - 1, empty, dtype=dtype)
    present = indptr[1:] > indptr[:-1]
    if len(x) and present.any():
        out[present] = ufunc.reduceat(x, indptr[:-1][present])
    return out


def narrowed(a: np.ndarray) -> np.ndarray:
    """``a`` as int32 when every value fits (a version's cells are many), else as it is.

    >>> narrowed(np.array([1, 2**31 - 1])).dtype, narrowed(np.array([2**31])).dtype
    (dtype('int32'), dtype('int64'))
    """
    return a.astype(np.int32) if len(a) and fits_int32(a) else a


def fits_int32(a: np.ndarray) -> bool:
    """Every value of ``a`` fits an int32 (an empty array's do)."""
    return not len(a) or (-(2**31) <= int(a.min()) and int(a.max()) < 2**31)


def pair_keys(high: np.ndarray, low: np.ndarray, width: int) -> np.ndarray:
    """One int64 key per pair: ``high · width + low`` (``low`` below ``width``), ordered as the pairs are.

    >>> pair_keys(np.array([0, 2], dtype=np.int32), np.array([3, 1]), 5).tolist()
    [3, 11]
    """
    key = high.astype(np.int64)
    key *= width
    key += low
    return key


_SLICE = 1 << 20  # elements per slice of ``sorted_sum``'s index work


def sorted_sum(key: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``key`` sorted with repeats merged (their counts summed).  A sort of the key packed with the cell's index
    (one int64, sorted in place) is ~5x faster than ``argsort``; already sorted keys are not sorted again."""
    n = len(key)
    if n > 1 and not (key[1:] >= key[:-1]).all():
        bits = max(int(n - 1).bit_length(), 1)
        if int(key.max()) < 2 ** (62 - bits):
            packed = np.left_shift(key, bits)
            for lo in range(0, n, _SLICE):  # the cells' indexes, a slice at a time (no index array as long)
                packed[lo : lo + _SLICE] |= np.arange(lo, min(lo + _SLICE, n), dtype=np.int64)
            packed.sort()
            moved = np.empty_like(count)
            for lo in range(0, n, _SLICE):
                moved[lo : lo + _SLICE] = count[packed[lo : lo + _SLICE] & ((1 << bits) - 1)]
            count = moved
            key = np.right_shift(packed, bits, out=packed)
        else:
            order = np.argsort(key, kind="stable")
            key, count = key[order], count[order]
    if n > 1:
        first = _run_starts(key)
        if not first.all():
            starts = np.flatnonzero(first)
            return key[starts], np.add.reduceat(count, starts, dtype=np.int64)
    return key, count


def _run_starts(key: np.ndarray) -> np.ndarray:
    """Per element of sorted ``key`` (at least one): whether it starts a run of equal keys."""
    first = np.empty(len(key), dtype=bool)
    first[0] = True
    np.not_equal(key[1:], key[:-1], out=first[1:])
    return first


def _distinct(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(key, return_inverse=True)``; keys already in order (a node's cells streamed by block) are
    not sorted again: one pass marks where a new key starts.

    >>> [a.tolist() for a in _distinct(np.array([2, 2, 5, 7, 7]))], [a.tolist() for a in _distinct(np.array([5, 2, 5]))]
    ([[2, 5, 7], [0, 0, 1, 2, 2]], [[2, 5], [1, 0, 1]])
    """
    if len(key) > 1 and bool((key[1:] >= key[:-1]).all()):
        first = _run_starts(key)
        inverse = np.cumsum(first, dtype=np.int64)
        inverse -= 1
        return key[first], inverse
    uniq, inverse = np.unique(key, return_inverse=True)
    return uniq, inverse.reshape(-1)


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
        for j in range(d):  # in place: one int64 per row, whatever the codes' width
            radix *= max(int(cardinalities[j]), 1)
            radix += codes[:, j]
        uniq, inverse = _distinct(radix)
        keys = np.empty((len(uniq), d), dtype=np.int64)
        rest = uniq.copy()
        for j in range(d - 1, -1, -1):
            c = max(int(cardinalities[j]), 1)
            keys[:, j] = rest % c
            rest //= c
        return keys, inverse
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
    def from_cells(
        cls,
        attributes: Sequence[str],
        node: Sequence[Level],
        qi_codes: np.ndarray,
        sensitive_codes: np.ndarray,
        count: np.ndarray,
        cardinalities: Sequence[int],
        sensitive: Sequence[SensitiveDomain] = (),
        generalizers: Sequence[Generalizer] | None = None,
    ) -> NodeCounts:
        """Group cells by their QI codes into blocks (lexicographic by code)."""
        qi_codes = np.asarray(qi_codes).reshape(len(count), len(attributes))  # any integer type: _combine widens
        if qi_codes.dtype.kind not in "iu":
            qi_codes = qi_codes.astype(np.int64)
        keys, block = _combine(qi_codes, cardinalities)
        return cls.from_blocks(attributes, node, keys, block, sensitive_codes, count, cardinalities, sensitive,
                               generalizers)  # fmt: skip

    @classmethod
    def from_blocks(
        cls,
        attributes: Sequence[str],
        node: Sequence[Level],
        keys: np.ndarray,
        cell_block: np.ndarray,
        sensitive_codes: np.ndarray,
        count: np.ndarray,
        cardinalities: Sequence[int],
        sensitive: Sequence[SensitiveDomain] = (),
        generalizers: Sequence[Generalizer] | None = None,
    ) -> NodeCounts:
        """Cells already grouped: each block's QI codes (``keys``, one row a block, lexicographic by code) and
        each cell's block (``cell_block``)."""
        return cls(
            attributes=tuple(attributes),
            node=tuple(node),
            keys=keys,
            cardinalities=tuple(int(c) for c in cardinalities),
            cell_block=cell_block,
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
        """``n(E, s)`` of sensitive attribute ``name`` over the q*-blocks, sparse (cached)."""
        key = ("blocks", name)
        if key not in self._cache:
            i = self._position(name)
            self._cache[key] = BlockCounts.from_cells(
                self.cell_block, self.cell_values[:, i], self.cell_count, self.n_blocks, self.sensitive[i]
            )
        return self._cache[key]

    def sub_blocks(self, name: str) -> tuple[BlockCounts, np.ndarray]:
        """Blocks of ``Q ∪ (S \\ {name})`` with their histograms of ``name``, and each sub-block's q*-block
        (non-decreasing).

        Multi-attribute l-diversity (docs/models.md §2.4) judges ``name`` with the other sensitive attributes
        in the key; a q*-block fails when any of its sub-blocks fails."""
        key = ("sub", name)
        if key not in self._cache:
            i = self._position(name)
            others = [j for j in range(len(self.sensitive)) if j != i]
            codes = np.column_stack([self.cell_block] + [self.cell_values[:, j] for j in others]).astype(np.int64)
            cards = [self.n_blocks] + [self.sensitive[j].size for j in others]
            sub_keys, sub = _combine(codes, cards)
            bc = BlockCounts.from_cells(sub, self.cell_values[:, i], self.cell_count, len(sub_keys), self.sensitive[i])
            self._cache[key] = (bc, sub_keys[:, 0].copy())
        return self._cache[key]

    def superset_index(self, node: Sequence[Level]) -> tuple[np.ndarray, np.ndarray]:
        """The blocks of a node ``>=`` this one (their keys) and, per block here, the index of the block
        containing it there (needs ``generalizers``)."""
        node = tuple(node)
        if node == self.node:
            return self.keys, np.arange(self.n_blocks, dtype=np.int64)
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
        return _combine(block_codes, cards)

    def rollup(self, node: Sequence[Level]) -> NodeCounts:
        """The counts of a node ``>=`` this one, aggregated here (needs ``generalizers``)."""
        node = tuple(node)
        if node == self.node:
            return self
        keys, up = self.superset_index(node)
        cards = tuple(1 if lv is None else g.cardinality(lv) for lv, g in zip(node, self.generalizers or ()))
        return NodeCounts(
            attributes=self.attributes,
            node=node,
            keys=keys,
            cardinalities=cards,
            cell_block=up[self.cell_block],
            cell_values=self.cell_values,
            cell_count=self.cell_count,
            sensitive=self.sensitive,
            generalizers=self.generalizers,
        )

    def forget(self) -> None:
        """Drop the derived histograms (sparse, as large as the cells); the counts themselves stay."""
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

    def uncached(self) -> NodeCounts:
        """These counts without what the checkers derived from them and kept (per-domain block tables, rebuilt
        when asked for again): the arrays are shared, the derived tables go with the old object.

        >>> c = NodeCounts.from_cells(["a"], [0], [[0], [1]], [[0], [1]], [2, 3], [2],
        ...                           [SensitiveDomain("s", np.array(["x", "y"]), np.array([2, 3]))])
        >>> _ = c.blocks("s"); len(c._cache), len(c.uncached()._cache), c.uncached().cell_count is c.cell_count
        (1, 0, True)
        """
        return replace(self, _cache={})

    def restrict(self, keep: np.ndarray) -> NodeCounts:
        """Only the blocks where ``keep`` is true (e.g. after suppression), renumbered (all kept: these counts
        themselves, no copy)."""
        keep = np.asarray(keep, dtype=bool)
        if keep.all():
            return self
        new_index = np.cumsum(keep) - 1
        cells = keep[self.cell_block]
        return NodeCounts(
            attributes=self.attributes,
            node=self.node,
            keys=self.keys[keep],
            cardinalities=self.cardinalities,
            cell_block=new_index[self.cell_block[cells]],
            cell_values=self.cell_values[cells],
            cell_count=self.cell_count[cells],
            sensitive=self.sensitive,
            generalizers=self.generalizers,
        )


class Reads(IntEnum):
    """What a consumer of a node's counts reads (a metric's ``reads``, declared as data): the node's ``LEVELS``
    alone, its block ``SIZES`` (a ``SizeHistogram`` serves), or its ``BLOCKS`` (a ``NodeCounts``: keys and
    histograms)."""

    LEVELS = 0
    SIZES = 1
    BLOCKS = 2


@dataclass(frozen=True, eq=False)
class SizeHistogram:
    """A node summarized by its block sizes: ``blocks[i]`` q*-blocks of ``sizes[i]`` rows each (the warehouse's
    ``node_sizes`` statement, or what a streamed evaluation accumulated).  Everything size-only follows from a
    few numbers per node, with no block list: rows in blocks smaller than ``k``, Σ n(E)², |T| / #blocks.

    Entries may repeat a size when a streamed ``evaluation`` (``privacy.Evaluation``) splits blocks of one size
    into failing and passing ones; its per-block arrays (``failing``, each verdict's ``passed``) are then per
    entry, weighted by ``blocks``.

    >>> h = SizeHistogram((1,), np.array([1, 3]), np.array([2, 1]))
    >>> h.n_blocks, h.rows, h.rows_below(2), h.squares
    (3, 5, 2, 11)
    """

    node: tuple[Level, ...]
    sizes: np.ndarray
    blocks: np.ndarray
    evaluation: Any = None

    @property
    def n_blocks(self) -> int:
        return int(self.blocks.sum())

    @property
    def weights(self) -> np.ndarray:
        return self.blocks

    @property
    def rows(self) -> int:
        return int((self.sizes * self.blocks).sum())

    def rows_below(self, k: int) -> int:
        """Rows in blocks of fewer than ``k`` rows."""
        small = self.sizes < k
        return int((self.sizes[small] * self.blocks[small]).sum())

    @property
    def squares(self) -> int:
        """Σ n(E)² (exact, integers)."""
        return int((self.sizes * self.sizes * self.blocks).sum())

    def pseudo_counts(self) -> NodeCounts:
        """One block per entry (sizes only, no sensitive attribute): a size-only model's ``check`` on it gives
        each entry's verdict, and its level over the entries is its level over the blocks (min or max)."""
        m = len(self.sizes)
        return NodeCounts.from_cells(
            ("size",),
            (0,),
            np.arange(m, dtype=np.int64).reshape(m, 1),
            np.zeros((m, 0), dtype=np.int64),
            self.sizes,
            (max(m, 1),),
        )

    def forget(self) -> None:
        return None

    @classmethod
    def of(cls, node: Sequence[Level], block_sizes: np.ndarray) -> SizeHistogram:
        """From per-block sizes (tests, and nodes counted whole)."""
        sizes, blocks = np.unique(np.asarray(block_sizes, dtype=np.int64), return_counts=True)
        return cls(tuple(node), sizes.astype(np.int64), blocks.astype(np.int64))


@dataclass(frozen=True, eq=False)
class BlockTests:
    """A node's blocks grouped by (size, verdicts of threshold tests) as the warehouse computed them
    (``Reduction`` models, docs/models.md): ``blocks[i]`` blocks of ``sizes[i]`` rows, ``passed[i, k]`` their
    verdict on test ``k``, ``levels[i, k]`` the worst statistic among them (the least; the greatest for an
    ``at_most`` test).

    >>> t = BlockTests(np.array([3, 5]), np.array([2, 1]), np.array([[False], [True]]), np.array([[1.0], [2.0]]))
    >>> t.histogram((1,)).rows
    11
    """

    sizes: np.ndarray
    blocks: np.ndarray
    passed: np.ndarray
    levels: np.ndarray

    def histogram(self, node: Sequence[Level]) -> SizeHistogram:
        return SizeHistogram(tuple(node), self.sizes, self.blocks)
