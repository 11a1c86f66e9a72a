"""A privacy specification (docs/models.md §4, §6): a conjunction of models plus a suppression budget, evaluated
on one node's counts.  Pure numpy; the search and the ``check`` command both use it.

A block is suppressed when it fails any model; a node passes when the suppressed rows are at most
``max_suppression * |T|``.  The specification also says what the search may infer from a verdict, reading
the models' declared properties (never their names):

- ``tags_up``: every model is monotone (with suppression, monotone_with_suppression), so a passing node
  makes every node above pass;
- ``prune_down`` on an evaluation: the monotone part of the conjunction alone already fails, so every node
  below fails too.

>>> import numpy as np
>>> from veil.counts import NodeCounts
>>> from veil.models.kanonymity import KAnonymity
>>> nc = NodeCounts.from_cells(("zip",), (0,), np.array([[0], [1]]), np.zeros((2, 0)), np.array([4, 1]), (2,))
>>> spec = Specification((KAnonymity(k=2),), max_suppression=0.2)
>>> e = spec.evaluate(nc, rows=5)
>>> e.passed, e.suppressed_rows, e.prune_down
(True, 1, False)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np

from veil.counts import BlockTests, Level, NodeCounts, SizeHistogram
from veil.models.base import Model, Needs, Reduction, Verdict

CHUNK_CELLS = 1 << 24  # sparse histogram cells a checker may see at once


@dataclass(frozen=True)
class Evaluation:
    """The verdicts of every model at one node and what follows for suppression and the search."""

    verdicts: tuple[Verdict, ...]
    failing: np.ndarray  # per block: fails some model (suppressed if the node is used)
    suppressed_rows: int
    passed: bool  # passes within the suppression budget
    prune_down: bool  # the monotone part alone fails: every node below fails
    weights: np.ndarray | None = None  # blocks per entry when evaluated on a ``SizeHistogram`` (else one each)

    @property
    def suppressed_blocks(self) -> int:
        if self.weights is not None:
            return int(self.weights[self.failing].sum())
        return int(self.failing.sum())


@dataclass(frozen=True)
class Specification:
    models: tuple[Model, ...]
    max_suppression: float = 0.0

    def _monotone(self, model: Model) -> bool:
        p = model.properties
        return p.monotone_with_suppression if self.max_suppression > 0 else p.monotone

    @cached_property  # read at every node (the models' properties are built on each read)
    def tags_up(self) -> bool:
        """A passing node makes every node above it pass."""
        return all(self._monotone(m) for m in self.models)

    @cached_property
    def monotone_models(self) -> tuple[Model, ...]:
        return tuple(m for m in self.models if self._monotone(m))

    @cached_property
    def _share(self) -> Fraction:
        return Fraction(str(self.max_suppression))

    def budget(self, rows: int) -> int:
        """The most rows a node may suppress: ``⌊max_suppression · |T|⌋``, exact — the fraction as written
        (``0.29`` is 29/100), not its binary float, so 0.29 · 878,982,472,700 allows 254,904,917,083 rows.

        >>> Specification((), max_suppression=0.29).budget(878_982_472_700)
        254904917083
        >>> Specification((), max_suppression=0.1).budget(30)
        3
        """
        return math.floor(self._share * rows)

    @property
    def sizes_only(self) -> bool:
        """Every model is decided by block sizes alone (``needs = SIZES``): a node's size histogram suffices."""
        return all(m.properties.needs is Needs.SIZES for m in self.models)

    @property
    def streamable(self) -> bool:
        """Every model judges a block on its own (no supersets), so a node can be evaluated chunk by chunk."""
        return all(m.properties.needs is not Needs.SUPERSETS for m in self.models)

    def evaluate(self, counts: NodeCounts | SizeHistogram, rows: int) -> Evaluation:
        """Evaluate every model at one node; ``rows`` is ``|T|`` (the budget's base).  A ``SizeHistogram``
        carries its streamed evaluation, or is evaluated from its sizes (size-only specifications)."""
        if isinstance(counts, SizeHistogram):
            if counts.evaluation is not None:
                return counts.evaluation
            if not self.sizes_only:
                raise ValueError("a size histogram decides only size-only specifications")
            return self.evaluate_sizes(counts, rows)
        verdicts = tuple(verdict(m, counts) for m in self.models)
        return self.combine(verdicts, counts.sizes, rows)

    def combine(
        self, verdicts: Sequence[Verdict], sizes: np.ndarray, rows: int, weights: np.ndarray | None = None
    ) -> Evaluation:
        """Suppression and the search's inferences from per-block (or, with ``weights``, per-entry) verdicts."""
        failing = np.zeros(len(sizes), dtype=bool)
        monotone_failing = np.zeros(len(sizes), dtype=bool)
        for model, verdict in zip(self.models, verdicts):
            failing |= ~verdict.passed
            if self._monotone(model):
                monotone_failing |= ~verdict.passed
        budget = self.budget(rows)
        rows_of = sizes if weights is None else sizes * weights
        suppressed = int(rows_of[failing].sum())
        return Evaluation(
            verdicts=tuple(verdicts),
            failing=failing,
            suppressed_rows=suppressed,
            passed=suppressed <= budget,
            prune_down=int(rows_of[monotone_failing].sum()) > budget,
            weights=weights,
        )

    def evaluate_sizes(self, hist: SizeHistogram, rows: int) -> Evaluation:
        """Exact for size-only models: each model's ``check`` on one pseudo-block per distinct size (a block's
        verdict depends on its size alone; a level's min or max over the entries is the one over the blocks).
        A model reading more is bounded by ``min_block_size`` (blocks below it fail; level not computed)."""
        pseudo = hist.pseudo_counts()
        verdicts = []
        for m in self.models:
            if m.properties.needs is Needs.SIZES:
                verdicts.append(m.check(pseudo))
            else:
                verdicts.append(Verdict(hist.sizes >= m.properties.min_block_size, None))
        return self.combine(verdicts, hist.sizes, rows, weights=hist.blocks)

    @property
    def size_floor(self) -> int:
        """Blocks smaller than this fail the monotone part whatever their histograms."""
        return max((m.properties.min_block_size for m in self.monotone_models), default=1)

    def sizes_pass(self, hist: SizeHistogram, rows: int) -> bool:
        """The monotone part's size-only condition holds: the rows of blocks below ``size_floor`` fit in the
        budget.  Those rows never grow upwards (a block below the floor is a union of blocks below it), so a
        node above one where this holds needs no size check."""
        return hist.rows_below(self.size_floor) <= self.budget(rows)

    @property
    def reductions(self) -> tuple[str, tuple[Reduction, ...]] | None:
        """(attribute, each reducible model's ``Reduction``) when every model is size-only or reducible on one
        sensitive attribute and some model is reducible: the warehouse can then decide a node's blocks in SQL."""
        found = [m.properties.reduction for m in self.models if m.properties.needs is not Needs.SIZES]
        if not found or any(r is None for r in found) or len({r.attribute for r in found}) != 1:  # type: ignore[union-attr]
            return None
        return found[0].attribute, tuple(found)  # type: ignore[union-attr,arg-type]

    def from_tests(self, tests: BlockTests, node: tuple[Level, ...], rows: int) -> SizeHistogram:
        """A node's evaluation from the warehouse's threshold tests (``reductions`` order): size-only models on
        each entry's size, the reducible ones from the tests' verdicts and least levels."""
        hist = tests.histogram(node)
        pseudo = hist.pseudo_counts()
        verdicts, k = [], 0
        for m in self.models:
            if m.properties.needs is Needs.SIZES:
                verdicts.append(m.check(pseudo))
                continue
            worst = np.max if m.properties.reduction.at_most else np.min  # type: ignore[union-attr]
            level = float(worst(tests.levels[:, k])) if len(tests.sizes) else None
            verdicts.append(Verdict(tests.passed[:, k].copy(), level))
            k += 1
        return SizeHistogram(
            hist.node, hist.sizes, hist.blocks, self.combine(verdicts, hist.sizes, rows, weights=hist.blocks)
        )

    def summarize(
        self,
        hist: SizeHistogram | None,
        chunks: Callable[[], Iterable[NodeCounts]],
        rows: int,
        node: tuple[Level, ...] = (),
        tests: Callable[[], BlockTests | None] | None = None,
    ) -> SizeHistogram:
        """Evaluate a node from its size histogram ``hist`` and, only when that does not decide it, from
        ``chunks()``: its counts in chunks of complete blocks, evaluated chunk by chunk (a block's verdict never
        depends on another block; the table's level is the min or max of the chunks').  Returns the node's
        blocks by (size, verdicts) with the evaluation attached, for the search and the size metrics.

        The monotone size-only part is decided first: when the rows of blocks smaller than ``size_floor``
        exceed the budget, the node fails and every node below it fails too, without a histogram (its
        ``suppressed_rows`` is then a lower bound).  ``hist=None``: that part is known to hold (``node``
        names the node), go straight to the chunks.  ``tests`` (when every model is size-only or reducible,
        ``reductions``): the warehouse's verdicts per block size, tried before the chunks; ``None`` from it
        (a block floating point cannot decide) falls back to the chunks."""
        if hist is not None and (self.sizes_only or not self.sizes_pass(hist, rows)):
            return SizeHistogram(hist.node, hist.sizes, hist.blocks, self.evaluate_sizes(hist, rows))
        if hist is None and self.sizes_only:
            raise ValueError("a size-only specification is decided by the size histogram: pass it")
        decided = tests() if tests is not None else None
        if decided is not None:
            return self.from_tests(decided, hist.node if hist is not None else tuple(node), rows)
        acc = _Accumulator(self.models)
        for chunk in chunks():
            acc.add(chunk, [verdict(m, chunk) for m in self.models])
        sizes, blocks, verdicts = acc.result()
        return SizeHistogram(
            hist.node if hist is not None else tuple(node),
            sizes,
            blocks,
            self.combine(verdicts, sizes, rows, weights=blocks),
        )


class _Accumulator:
    """Per (size, failing models) the number of blocks, and each model's level, over chunks of blocks."""

    def __init__(self, models: Sequence[Model]) -> None:
        self.models = tuple(models)
        self.keys: list[np.ndarray] = []
        self.counts: list[np.ndarray] = []
        self.levels: list[list[float | None]] = [[] for _ in self.models]

    def add(self, chunk: NodeCounts, verdicts: Sequence[Verdict]) -> None:
        key = chunk.sizes.astype(np.int64) << len(self.models)
        for i, v in enumerate(verdicts):
            key |= (~v.passed).astype(np.int64) << i
            self.levels[i].append(v.achieved)
        uniq, counts = np.unique(key, return_counts=True)
        self.keys.append(uniq)
        self.counts.append(counts.astype(np.int64))
        chunk.forget()

    def result(self) -> tuple[np.ndarray, np.ndarray, tuple[Verdict, ...]]:
        if self.keys:
            key = np.concatenate(self.keys)
            uniq, inverse = np.unique(key, return_inverse=True)
            blocks = np.bincount(inverse.reshape(-1), weights=np.concatenate(self.counts)).astype(np.int64)
        else:
            uniq, blocks = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        m = len(self.models)
        sizes = uniq >> m
        verdicts = tuple(
            Verdict(((uniq >> i) & 1) == 0, _combined_level(model, self.levels[i]))
            for i, model in enumerate(self.models)
        )
        return sizes, blocks, verdicts


def _combined_level(model: Model, levels: Sequence[float | None]) -> float | None:
    """The table's level from the levels of slices of its blocks (``None``, infinite, wins)."""
    known = [level for level in levels if level is not None]
    if not levels or len(known) < len(levels):
        return None
    return float(min(known) if model.properties.achieved == "min" else max(known))


def verdict(model: Model, counts: NodeCounts, max_cells: int = CHUNK_CELLS) -> Verdict:
    """``model.check(counts)``, in slices of blocks when the node has very many cells.

    Per-block verdicts concatenate; the table's level is the min or max of the slices' (as the model
    declares), ``None`` (infinite) winning.  Models that read supersets see the whole node."""
    needs = model.properties.needs
    cells = len(counts.cell_count)  # checkers read sparse histograms: their work and memory follow the cells
    if cells <= max_cells or needs in (Needs.SIZES, Needs.SUPERSETS) or counts.n_blocks < 2:
        return model.check(counts)
    pieces = -(-cells // max_cells)
    step = -(-counts.n_blocks // pieces)
    passed, levels = [], []
    for start in range(0, counts.n_blocks, step):
        mask = np.zeros(counts.n_blocks, dtype=bool)
        mask[start : start + step] = True
        part = model.check(counts.restrict(mask))
        passed.append(part.passed)
        levels.append(part.achieved)
    return Verdict(np.concatenate(passed), _combined_level(model, levels))
