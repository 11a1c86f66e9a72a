"""Utility metrics of a node (docs/models.md §8; docs/reference/config.md, ``[search]``), from its block sizes and keys.  Pure numpy.

Each metric gives a node's ``loss`` under a suppression mask, *exactly*: what the search minimizes (the
value itself, or ``1 - precision``); the ``reported`` value derived from it; and a ``bound``: a lower bound
on the loss of *every* node above this one, whatever they suppress, which the optimal search uses to prune:

- height, precision: the node's own loss (levels only grow upwards);
- discernibility: ``Σ n(E)²`` without suppression (merging blocks grows it; a suppressed row costs
  ``|T|``, at least its block's size);
- KL-divergence: the node's KL without suppression (see below);
- average block size: without a budget, the node's own value (``|T| / #blocks`` grows upwards); with one,
  the smallest block size (every released block above is a union of blocks here).

Exactness (docs/models.md §8): height, precision (scaled) and discernibility are Python ``int`` (no float,
no int64 overflow), average block size a ``Fraction``; only genuinely equal losses tie.
KL-divergence is a ``float`` (it has logarithms): a correctly rounded sum (``math.fsum``) of per-block terms,
so it does not depend on the order blocks arrive in; ``rounding`` is the margin the search allows a float
bound before it prunes with it.

KL-divergence (SPEC §8): ``KL = Σ_x p(x) ln(p(x) / q(x))`` over the original QI combinations ``x``, where
``q`` is the reconstruction from the release: a released block ``E``'s mass ``P(E) = n(E)/|T|`` spread
uniformly over the ``L(E)`` original combinations its generalized cell covers (product over QIs of the
hierarchy leaves under its value), and the suppressed rows' mass ``S`` spread uniformly over the whole
domain (``D`` combinations) and counted there.  So ``q`` sums to 1, and ``q(x) = P(E)/L(E) + S/D`` for
``x`` in a released block's cell, ``S/D`` elsewhere; ``KL = -H(original) - Σ_E P(E) ln q_E``.  Without
suppression the KL of a node is the least KL of any distribution constant on its cells (log-sum
inequality); every reconstruction above it, with or without suppression, is such a distribution, so it is
a lower bound there.

>>> import numpy as np
>>> Discernibility().value(np.array([4, 4, 4]), np.array([False, False, False]), rows=12)
48
>>> Discernibility().value(np.array([4, 4, 4]), np.array([False, False, True]), rows=12)
80
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar, Protocol

import numpy as np

from veil.counts import NodeCounts, Reads, full_levels

Loss = int | Fraction | float
"""A metric's loss: ``int`` or ``Fraction`` (compared exactly) or ``float`` (KL-divergence only)."""

_INT64_SAFE_ROWS = 3_037_000_499  # rows² < 2**63: every sum of squares of such block sizes fits an int64


class Metric(Protocol):
    @property
    def name(self) -> str:
        """The config's name of the metric (``[search] metric``)."""

    @property
    def rounding(self) -> float:
        """0: losses are exact; else the absolute margin a float bound is allowed."""

    @property
    def reads(self) -> Reads:
        """What the loss and bound read of a node (``Reads``): the search picks how to count nodes from it."""

    def loss(self, counts: NodeCounts, suppressed: np.ndarray, rows: int) -> Loss:
        """What the search minimizes at this node with ``suppressed`` blocks dropped (ties: lower height,
        then the lexicographically smaller node)."""

    def reported(self, loss: Loss) -> float:
        """The value reported for a node of this ``loss``."""

    def score(self, counts: NodeCounts, suppressed: np.ndarray, rows: int) -> float:
        """The reported value at this node with ``suppressed`` blocks dropped."""

    def bound(self, counts: NodeCounts, rows: int, suppression: bool) -> Loss:
        """A lower bound on ``loss`` at every node above (and at) this one."""


class _Reported:
    """``score`` from ``loss`` and ``reported`` (the loss as a float unless a metric says otherwise)."""

    rounding: ClassVar[float] = 0.0

    def loss(self, counts: NodeCounts, suppressed: np.ndarray, rows: int) -> Loss:
        raise NotImplementedError

    def reported(self, loss: Loss) -> float:
        return float(loss)

    def score(self, counts: NodeCounts, suppressed: np.ndarray, rows: int) -> float:
        return self.reported(self.loss(counts, suppressed, rows))


def sum_of_squares(sizes: np.ndarray) -> int:
    """``Σ n²`` as an exact Python int (int64 arithmetic when it cannot overflow).

    >>> sum_of_squares(np.array([50_001, 49_999]))
    5000000002
    """
    s = np.asarray(sizes, dtype=np.int64)
    if int(s.sum()) <= _INT64_SAFE_ROWS:
        return int(np.dot(s, s))
    return sum(int(x) * int(x) for x in s.tolist())


@dataclass(frozen=True)
class Height(_Reported):
    """Generalization height ``Σ li``."""

    name: ClassVar[str] = "height"
    reads: ClassVar[Reads] = Reads.LEVELS

    def loss(self, counts: NodeCounts, suppressed: np.ndarray, rows: int) -> int:
        return sum(full_levels(counts.node))

    def bound(self, counts: NodeCounts, rows: int, suppression: bool) -> int:
        return sum(full_levels(counts.node))


@dataclass(frozen=True)
class Precision(_Reported):
    """Sweeney's precision ``1 - mean_i(li / hi)`` (higher is better).  The search minimizes
    ``mean_i(li / hi)``, compared exactly as the integer ``Σ li · (lcm(h) / hi)`` (the mean times
    ``d · lcm(h)``).

    >>> Precision((2, 4)).value_of((1, 1))
    0.625
    >>> Precision((2, 4)).loss_of((1, 1))   # (1/2 + 1/4) / 2 = 3/8 = 3 / (2 · 4)
    3
    """

    heights: tuple[int, ...]
    name: ClassVar[str] = "precision"
    reads: ClassVar[Reads] = Reads.LEVELS

    @property
    def _lcm(self) -> int:
        return math.lcm(*(h for h in self.heights if h)) if any(self.heights) else 1

    def loss_of(self, node: Sequence[int]) -> int:
        lcm = self._lcm
        return sum(int(lv) * (lcm // h) for lv, h in zip(node, self.heights) if h)

    def value_of(self, node: Sequence[int]) -> float:
        return self.reported(self.loss_of(node))

    def reported(self, loss: Loss) -> float:
        return float(1 - Fraction(int(loss), self._lcm * max(len(self.heights), 1)))

    def loss(self, counts: NodeCounts, suppressed: np.ndarray, rows: int) -> int:
        return self.loss_of(counts.node)  # type: ignore[arg-type]

    def bound(self, counts: NodeCounts, rows: int, suppression: bool) -> int:
        return self.loss_of(counts.node)  # type: ignore[arg-type]


@dataclass(frozen=True)
class AverageBlockSize(_Reported):
    """``|T_released| / #released blocks`` (``|T|`` when every row is suppressed), a ``Fraction``.

    >>> AverageBlockSize().value(np.array([2, 3, 3]), np.array([False, False, False]), rows=8)
    Fraction(8, 3)
    """

    name: ClassVar[str] = "avg-block-size"
    reads: ClassVar[Reads] = Reads.SIZES

    def value(self, sizes: np.ndarray, suppressed: np.ndarray, rows: int) -> Fraction:
        kept = sizes[~suppressed]
        return Fraction(int(kept.sum()), len(kept)) if len(kept) else Fraction(int(rows))

    def loss(self, counts: NodeCounts, suppressed: np.ndarray, rows: int) -> Fraction:
        return self.value(counts.sizes, suppressed, rows)

    def bound(self, counts: NodeCounts, rows: int, suppression: bool) -> Fraction:
        sizes = counts.sizes
        if not len(sizes):
            return Fraction(0)
        if suppression:
            return Fraction(int(sizes.min()))
        return Fraction(int(sizes.sum()), len(sizes))


@dataclass(frozen=True)
class Discernibility(_Reported):
    """``Σ_E n(E)² + (#suppressed rows) · |T|`` (Bayardo & Agrawal), an exact ``int``."""

    name: ClassVar[str] = "discernibility"
    reads: ClassVar[Reads] = Reads.SIZES

    def value(self, sizes: np.ndarray, suppressed: np.ndarray, rows: int) -> int:
        return sum_of_squares(sizes[~suppressed]) + int(sizes[suppressed].sum()) * int(rows)

    def loss(self, counts: NodeCounts, suppressed: np.ndarray, rows: int) -> int:
        return self.value(counts.sizes, suppressed, rows)

    def bound(self, counts: NodeCounts, rows: int, suppression: bool) -> int:
        return sum_of_squares(counts.sizes)


@dataclass(frozen=True)
class KLDivergence(_Reported):
    """KL-divergence of the original QI distribution from its reconstruction (see the module docstring).

    ``leaf_counts[i][level]`` gives the leaves under each code of QI ``i`` at ``level``;
    ``original_entropy`` is ``H`` of the original QI combinations (the bottom node's block sizes).

    Worked example: one QI with leaves ``a, b`` (domain ``D = 2``), rows ``a, a, a, b``, block ``b``
    suppressed: ``q(a) = 3/4 + (1/4)/2 = 7/8``, ``q(b) = 1/8``, so
    ``KL = 3/4 ln(6/7) + 1/4 ln 2 ≈ 0.0577``."""

    leaf_counts: tuple[tuple[np.ndarray, ...], ...]
    original_entropy: float
    name: ClassVar[str] = "kl-divergence"
    rounding: ClassVar[float] = 1e-9
    reads: ClassVar[Reads] = Reads.BLOCKS

    @staticmethod
    def entropy(sizes: np.ndarray) -> float:
        sizes = np.asarray(sizes, dtype=np.float64)
        p = sizes[sizes > 0] / sizes.sum()
        return -math.fsum((p * np.log(p)).tolist())

    def _log_cells(self, counts: NodeCounts) -> np.ndarray:
        out = np.zeros(counts.n_blocks)
        for i, level in enumerate(counts.node):
            if level is not None:
                out += np.log(self.leaf_counts[i][level][counts.keys[:, i]])
        return out

    @property
    def log_domain(self) -> float:
        return float(sum(math.log(float(levels[0].sum())) for levels in self.leaf_counts))

    def log_reconstruction(self, counts: NodeCounts, suppressed: np.ndarray, rows: int) -> np.ndarray:
        """``ln q`` on each block's original combinations (their reconstructed probability)."""
        sizes = counts.sizes
        p = sizes / float(rows)
        spread = float(sizes[suppressed].sum()) / float(rows)  # S: the suppressed mass, over the whole domain
        log_background = math.log(spread) - self.log_domain if spread > 0 else -math.inf
        with np.errstate(divide="ignore"):
            log_cell = np.log(p) - self._log_cells(counts)
        released = np.logaddexp(log_cell, log_background) if spread > 0 else log_cell
        return np.where(suppressed, log_background, released)

    def value(self, counts: NodeCounts, suppressed: np.ndarray, rows: int) -> float:
        p = counts.sizes / float(rows)
        terms = p * self.log_reconstruction(counts, suppressed, rows)
        return max(-self.original_entropy - math.fsum(terms[p > 0].tolist()), 0.0)

    def loss(self, counts: NodeCounts, suppressed: np.ndarray, rows: int) -> float:
        return self.value(counts, suppressed, rows)

    def bound(self, counts: NodeCounts, rows: int, suppression: bool) -> float:
        return self.value(counts, np.zeros(counts.n_blocks, dtype=bool), rows)


@dataclass(frozen=True)
class MetricContext:
    """What a metric may be built from: the lattice's heights, each hierarchy's leaf counts per level, the bottom
    node's block sizes (KL-divergence), and — for metrics that read more than counts (``workload``) — the config
    and the prepared warehouse of the run (``None`` where a caller has none)."""

    heights: tuple[int, ...]
    leaf_counts: tuple[tuple[np.ndarray, ...], ...] = ()
    original_sizes: np.ndarray | None = None
    config: Any = None
    warehouse: Any = None


@dataclass(frozen=True)
class MetricEntry:
    """One ``[search] metric``: its name, a one-line summary (config validation, CLI errors, the generated
    reference docs), whether the search may prune with its bound across the lattice, and its builder."""

    name: str
    summary: str
    build: Callable[[MetricContext], Metric]
    needs_config: bool = False  # built from the config and the warehouse (``MetricContext.config``/``warehouse``)


REGISTRY: dict[str, MetricEntry] = {}
"""Every utility metric by name, in registration order: the one list config validation, the CLI, the docs
generator (``docs/gen_reference.py``), the report and ``make_metric`` read."""


def register(
    name: str, summary: str, *, needs_config: bool = False
) -> Callable[[Callable[[MetricContext], Metric]], Callable[[MetricContext], Metric]]:
    """Decorator: register ``build`` as the metric ``name``."""

    def decorate(build: Callable[[MetricContext], Metric]) -> Callable[[MetricContext], Metric]:
        if name in REGISTRY:
            raise ValueError(f"metric {name!r} is registered twice")
        REGISTRY[name] = MetricEntry(name, summary, build, needs_config)
        return build

    return decorate


@register("height", "generalization height Σ li")
def _height(ctx: MetricContext) -> Metric:
    return Height()


@register("precision", "Sweeney's precision 1 - mean(li / hi), higher is better")
def _precision(ctx: MetricContext) -> Metric:
    return Precision(tuple(ctx.heights))


@register("avg-block-size", "average block size |T_released| / #blocks")
def _avg_block_size(ctx: MetricContext) -> Metric:
    return AverageBlockSize()


@register("discernibility", "Σ n(E)² + suppressed rows · |T| (Bayardo & Agrawal)")
def _discernibility(ctx: MetricContext) -> Metric:
    return Discernibility()


@register("kl-divergence", "KL-divergence of the original QI distribution from its reconstruction")
def _kl(ctx: MetricContext) -> Metric:
    if ctx.original_sizes is None:
        raise ValueError("kl-divergence needs the original block sizes")
    return KLDivergence(tuple(tuple(levels) for levels in ctx.leaf_counts), KLDivergence.entropy(ctx.original_sizes))


@register(
    "workload",
    "weighted error of the [[workload]] queries answered from the release (docs/workload.md)",
    needs_config=True,
)
def _workload(ctx: MetricContext) -> Metric:
    from veil.workload import workload_metric  # loads only when asked for (it reads the warehouse)

    return workload_metric(ctx)


METRICS: tuple[str, ...] = tuple(REGISTRY)
"""The registered metric names (``veil.config.METRICS`` is this tuple)."""


def make_metric(
    name: str,
    heights: Sequence[int],
    leaf_counts: Sequence[Sequence[np.ndarray]] = (),
    original_sizes: np.ndarray | None = None,
    *,
    config: Any = None,
    warehouse: Any = None,
) -> Metric:
    """The metric called ``name`` (config ``[search] metric``), from the registry; KL needs the hierarchies' leaf
    counts and the bottom node's block sizes, ``workload`` the config and the prepared warehouse."""
    entry = REGISTRY.get(name)
    if entry is None:
        raise ValueError(f"unknown metric {name!r}; one of {', '.join(REGISTRY)}")
    return entry.build(
        MetricContext(tuple(heights), tuple(tuple(levels) for levels in leaf_counts), original_sizes, config, warehouse)
    )


@dataclass(frozen=True)
class OnSizes:
    """``metric`` evaluated on a node's size histogram (``counts.SizeHistogram``: ``blocks[i]`` blocks of
    ``sizes[i]`` rows, ``suppressed`` per entry) with the same exact formulas, each block weighted by its
    entry's count; whole-node ``NodeCounts`` go to ``metric`` unchanged.  Only metrics that read sizes or levels
    qualify (``supports``: ``Metric.reads``); KL-divergence reads block keys.

    Two blocks of 4 rows and one suppressed block of 4, 12 rows: ``2 · 4² + 4 · 12 = 80``.

    >>> from veil.counts import SizeHistogram
    >>> h = SizeHistogram((0,), np.array([4, 4]), np.array([2, 1]))
    >>> OnSizes(Discernibility()).loss(h, np.array([False, True]), rows=12)
    80
    >>> OnSizes(AverageBlockSize()).loss(h, np.array([False, True]), rows=12)
    Fraction(4, 1)
    """

    metric: Metric

    @property
    def name(self) -> str:
        return self.metric.name

    @property
    def rounding(self) -> float:
        return self.metric.rounding

    @staticmethod
    def supports(metric: Metric) -> bool:
        return getattr(metric, "reads", Reads.BLOCKS) <= Reads.SIZES

    @property
    def reads(self) -> Reads:
        return self.metric.reads

    @property
    def bound_reads_sizes(self) -> bool:
        """Whether ``bound`` reads the block sizes (else the node's levels alone: height, precision)."""
        return self.metric.reads is Reads.SIZES

    @staticmethod
    def _entries(counts: NodeCounts, weights: np.ndarray, rows: int) -> tuple[np.ndarray, np.ndarray]:
        """(sizes, blocks) per entry, as int64 when every sum below stays under ``rows²`` < 2⁶³ (Σ n(E)² ≤
        (Σ n(E))², Σ n(E) · |T| ≤ |T|²: exact in numpy), else as Python ints (exact whatever the magnitudes)."""
        if int(rows) <= _INT64_SAFE_ROWS:
            return np.asarray(counts.sizes, dtype=np.int64), np.asarray(weights, dtype=np.int64)
        return (
            np.array([int(x) for x in counts.sizes.tolist()], dtype=object),
            np.array([int(w) for w in np.asarray(weights).tolist()], dtype=object),
        )

    def loss(self, counts: NodeCounts, suppressed: np.ndarray, rows: int) -> Loss:
        weights = getattr(counts, "weights", None)
        if weights is None or not isinstance(self.metric, (Discernibility, AverageBlockSize)):
            return self.metric.loss(counts, suppressed, rows)
        sizes, blocks = self._entries(counts, weights, rows)
        gone = np.asarray(suppressed, dtype=bool)
        if isinstance(self.metric, Discernibility):
            return int((sizes * sizes * blocks)[~gone].sum()) + int((sizes * blocks)[gone].sum()) * int(rows)
        kept_rows = int((sizes * blocks)[~gone].sum())
        kept_blocks = int(blocks[~gone].sum())
        return Fraction(kept_rows, kept_blocks) if kept_blocks else Fraction(int(rows))

    def reported(self, loss: Loss) -> float:
        return self.metric.reported(loss)

    def score(self, counts: NodeCounts, suppressed: np.ndarray, rows: int) -> float:
        return self.reported(self.loss(counts, suppressed, rows))

    def bound(self, counts: NodeCounts, rows: int, suppression: bool) -> Loss:
        weights = getattr(counts, "weights", None)
        if weights is None or not isinstance(self.metric, (Discernibility, AverageBlockSize)):
            return self.metric.bound(counts, rows, suppression)
        sizes, blocks = self._entries(counts, weights, rows)
        present = blocks > 0
        sizes, blocks = sizes[present], blocks[present]
        if isinstance(self.metric, Discernibility):
            return int((sizes * sizes * blocks).sum())
        if not len(sizes):
            return Fraction(0)
        if suppression:
            return Fraction(int(sizes.min()))
        return Fraction(int((sizes * blocks).sum()), int(blocks.sum()))
