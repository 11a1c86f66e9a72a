"""Utility metrics of a node (defined in the README, Configuration reference, ``[search]``), from its block sizes and keys.  Pure numpy.

Each metric gives the reported ``value`` of a node under a suppression mask, a ``loss`` to minimize (the
value itself, or ``1 - precision``), and a ``bound``: a lower bound on the loss of *every* node above
this one, whatever they suppress, which the optimal search uses to prune:

- height, precision: the node's own loss (levels only grow upwards);
- discernibility: ``Σ n(E)²`` without suppression (merging blocks grows it; a suppressed row costs
  ``|T|``, at least its block's size);
- KL-divergence: the node's KL without suppression (coarser cells and the whole-domain cell of suppressed
  rows only raise it: log-sum inequality);
- average block size: without a budget, the node's own value (``|T| / #blocks`` grows upwards); with one,
  the smallest block size (every released block above is a union of blocks here).

KL-divergence (Veil's precise reading of the README's definition): ``KL = Σ_x p(x) ln(p(x) / q(x))`` over the original QI
combinations ``x``, where ``q(x) = (n(E)/|T|) / L(E)`` for ``x`` in block ``E`` and ``L(E)`` is the number
of original value combinations the generalized cell covers (product over QIs of the hierarchy leaves
under its value); a suppressed block's cell is the whole domain.  So ``KL = -H(original) + Σ_E P(E)
(ln L(E) - ln P(E))`` with ``P(E) = n(E)/|T|``.

>>> import numpy as np
>>> Discernibility().value(np.array([4, 4, 4]), np.array([False, False, False]), rows=12)
48.0
>>> Discernibility().value(np.array([4, 4, 4]), np.array([False, False, True]), rows=12)
80.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol

import numpy as np

from veil.counts import NodeCounts


class Metric(Protocol):
    name: ClassVar[str]

    def score(self, counts: NodeCounts, suppressed: np.ndarray, rows: int) -> float:
        """The reported value at this node with ``suppressed`` blocks dropped."""

    def loss(self, value: float) -> float:
        """What the search minimizes (ties: lower height, then the lexicographically smaller node)."""

    def bound(self, counts: NodeCounts, rows: int, suppression: bool) -> float:
        """A lower bound on ``loss`` at every node above (and at) this one."""


@dataclass(frozen=True)
class Height:
    """Generalization height ``Σ li``."""

    name: ClassVar[str] = "height"

    def score(self, counts: NodeCounts, suppressed: np.ndarray, rows: int) -> float:
        return float(sum(counts.node))  # type: ignore[arg-type]

    def loss(self, value: float) -> float:
        return value

    def bound(self, counts: NodeCounts, rows: int, suppression: bool) -> float:
        return float(sum(counts.node))  # type: ignore[arg-type]


@dataclass(frozen=True)
class Precision:
    """Sweeney's precision ``1 - mean_i(li / hi)`` (higher is better; the search minimizes ``1 - it``).

    >>> Precision((2, 4)).value_of((1, 1))
    0.625
    """

    heights: tuple[int, ...]
    name: ClassVar[str] = "precision"

    def value_of(self, node: Sequence[int]) -> float:
        return 1.0 - float(np.mean([lv / h if h else 0.0 for lv, h in zip(node, self.heights)]))

    def score(self, counts: NodeCounts, suppressed: np.ndarray, rows: int) -> float:
        return self.value_of(counts.node)  # type: ignore[arg-type]

    def loss(self, value: float) -> float:
        return 1.0 - value

    def bound(self, counts: NodeCounts, rows: int, suppression: bool) -> float:
        return 1.0 - self.value_of(counts.node)  # type: ignore[arg-type]


@dataclass(frozen=True)
class AverageBlockSize:
    """``|T_released| / #released blocks`` (``|T|`` when every row is suppressed)."""

    name: ClassVar[str] = "avg-block-size"

    def value(self, sizes: np.ndarray, suppressed: np.ndarray, rows: int) -> float:
        kept = sizes[~suppressed]
        return float(kept.sum() / len(kept)) if len(kept) else float(rows)

    def score(self, counts: NodeCounts, suppressed: np.ndarray, rows: int) -> float:
        return self.value(counts.sizes, suppressed, rows)

    def loss(self, value: float) -> float:
        return value

    def bound(self, counts: NodeCounts, rows: int, suppression: bool) -> float:
        sizes = counts.sizes
        if suppression:
            return float(sizes.min()) if len(sizes) else 0.0
        return float(sizes.sum() / len(sizes)) if len(sizes) else 0.0


@dataclass(frozen=True)
class Discernibility:
    """``Σ_E n(E)² + (#suppressed rows) · |T|`` (Bayardo & Agrawal)."""

    name: ClassVar[str] = "discernibility"

    def value(self, sizes: np.ndarray, suppressed: np.ndarray, rows: int) -> float:
        kept = sizes[~suppressed].astype(np.float64)
        return float((kept * kept).sum() + sizes[suppressed].sum() * float(rows))

    def score(self, counts: NodeCounts, suppressed: np.ndarray, rows: int) -> float:
        return self.value(counts.sizes, suppressed, rows)

    def loss(self, value: float) -> float:
        return value

    def bound(self, counts: NodeCounts, rows: int, suppression: bool) -> float:
        s = counts.sizes.astype(np.float64)
        return float((s * s).sum())


@dataclass(frozen=True)
class KLDivergence:
    """KL-divergence of the original QI distribution from its reconstruction (see the module docstring).

    ``leaf_counts[i][level]`` gives the leaves under each code of QI ``i`` at ``level``;
    ``original_entropy`` is ``H`` of the original QI combinations (the bottom node's block sizes)."""

    leaf_counts: tuple[tuple[np.ndarray, ...], ...]
    original_entropy: float
    name: ClassVar[str] = "kl-divergence"

    @staticmethod
    def entropy(sizes: np.ndarray) -> float:
        p = sizes[sizes > 0] / sizes.sum()
        return float(-(p * np.log(p)).sum())

    def _log_cells(self, counts: NodeCounts) -> np.ndarray:
        out = np.zeros(counts.n_blocks)
        for i, level in enumerate(counts.node):
            if level is not None:
                out += np.log(self.leaf_counts[i][level][counts.keys[:, i]])
        return out

    @property
    def log_domain(self) -> float:
        return float(sum(math.log(float(levels[0].sum())) for levels in self.leaf_counts))

    def value(self, counts: NodeCounts, suppressed: np.ndarray, rows: int) -> float:
        p = counts.sizes / float(rows)
        log_l = np.where(suppressed, self.log_domain, self._log_cells(counts))
        return float(max((p * (log_l - np.log(p))).sum() - self.original_entropy, 0.0))

    def score(self, counts: NodeCounts, suppressed: np.ndarray, rows: int) -> float:
        return self.value(counts, suppressed, rows)

    def loss(self, value: float) -> float:
        return value

    def bound(self, counts: NodeCounts, rows: int, suppression: bool) -> float:
        return self.value(counts, np.zeros(counts.n_blocks, dtype=bool), rows)


def make_metric(name: str, heights: Sequence[int], leaf_counts: Sequence[Sequence[np.ndarray]] = (),
                original_sizes: np.ndarray | None = None) -> Metric:
    """The metric called ``name`` (config ``[search] metric``); KL needs the hierarchies' leaf counts and the
    bottom node's block sizes."""
    if name == "height":
        return Height()
    if name == "precision":
        return Precision(tuple(heights))
    if name == "avg-block-size":
        return AverageBlockSize()
    if name == "discernibility":
        return Discernibility()
    if name == "kl-divergence":
        if original_sizes is None:
            raise ValueError("kl-divergence needs the original block sizes")
        return KLDivergence(tuple(tuple(levels) for levels in leaf_counts), KLDivergence.entropy(original_sizes))
    raise ValueError(f"unknown metric {name!r}")


@dataclass(frozen=True)
class OnSizes:
    """``metric`` evaluated on a node's size histogram (``counts.SizeHistogram``: ``blocks[i]`` blocks of
    ``sizes[i]`` rows, ``suppressed`` per entry) with the same formulas, each block weighted by its entry's
    count; whole-node ``NodeCounts`` go to ``metric`` unchanged.  Only metrics of sizes and levels qualify
    (``supports``); KL-divergence reads block keys.

    >>> from veil.counts import SizeHistogram
    >>> h = SizeHistogram((0,), np.array([4, 4]), np.array([2, 1]))
    >>> OnSizes(Discernibility()).score(h, np.array([False, True]), rows=12)
    80.0
    """

    metric: Metric

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.metric.name

    @staticmethod
    def supports(metric: Metric) -> bool:
        return isinstance(metric, (Height, Precision, AverageBlockSize, Discernibility))

    def score(self, counts: NodeCounts, suppressed: np.ndarray, rows: int) -> float:
        weights = getattr(counts, "weights", None)
        if weights is None:
            return self.metric.score(counts, suppressed, rows)
        sizes = counts.sizes.astype(np.int64)
        kept_rows = int((sizes * weights)[~suppressed].sum())
        if isinstance(self.metric, Discernibility):
            squares = int((sizes * sizes * weights)[~suppressed].sum())
            return float(squares + (sizes * weights)[suppressed].sum() * float(rows))
        if isinstance(self.metric, AverageBlockSize):
            kept = int(weights[~suppressed].sum())
            return float(kept_rows / kept) if kept else float(rows)
        return self.metric.score(counts, suppressed, rows)

    def loss(self, value: float) -> float:
        return self.metric.loss(value)

    def bound(self, counts: NodeCounts, rows: int, suppression: bool) -> float:
        weights = getattr(counts, "weights", None)
        if weights is None:
            return self.metric.bound(counts, rows, suppression)
        sizes = counts.sizes.astype(np.int64)
        if isinstance(self.metric, Discernibility):
            return float(int((sizes * sizes * weights).sum()))
        if isinstance(self.metric, AverageBlockSize):
            present = weights > 0
            if suppression:
                return float(sizes[present].min()) if present.any() else 0.0
            n = int(weights.sum())
            return float(int((sizes * weights).sum()) / n) if n else 0.0
        return self.metric.bound(counts, rows, suppression)
