"""The workload metric (docs/workload.md): a node's weighted error on the analysts' own queries (``[[workload]]``,
``veil.workloadsettings``) when each is answered from the node's release.  Pure numpy on counts the warehouse
returned; ``prepare`` reads them (one statement per query, ``queries.workload``) before the search.

**Reconstruction.**  A released row's generalized value of a quasi-identifier is spread uniformly over the
hierarchy's leaves under its label; its other columns are its own.  A suppressed row (SPEC §8) is spread
uniformly over the whole domain of every column the query reads: a quasi-identifier's hierarchy leaves, another
column's distinct values in ``T``.  A query's *estimated* answer is its answer on that reconstruction (leaf
values absent from ``T`` included, as the hierarchy names them); its *true* answer is its answer on ``T``.

**Error.**  Over the groups ``g`` of the query's group-by domain (the product of its columns' domains):
``count``/``sum``: ``e = Σ_g |est(g) - true(g)| / Σ_g (|est(g)| + |true(g)|)`` (0 when both are 0) — for a count
without a filter on a quasi-identifier this is the total variation distance between the two answers; ``avg``:
the same over the groups where the true count is positive, of ``sum / count``.  Each ``e`` lies in ``[0, 1]``;
the node's error is ``Σ_q w_q e_q / Σ_q w_q``.

**Bound.**  Without suppression a query's answer at a node depends only on the node's levels of the
quasi-identifiers it reads (its *projection*), so the search's bound at a node is each query's least error over
the projections at or above the node's, weighted: at most the loss at every node above (each of its queries errs
at least that much there), and exact per query.  A query reading QIs of more than ``MAX_PROJECTIONS`` projections
falls back on the contraction: the estimate is the averaging ``A_N`` of the true answer over the node's cells,
an L1 contraction with ``A_N A_M = A_M`` for every node ``M`` above, so ``|t - A_M t| ≥ |t - A_N t| / 2`` and
``e_q(M) ≥ |t - A_N t| / (4 Σ|t|)`` — for count and sum (of a column that is not a quasi-identifier) queries
filtering no quasi-identifier; for another such query 0 (the error is not monotone: docs/workload.md has a
counterexample).  With a suppression budget the bound is 0.

**Cells.**  Each query's cells are rolled up to the columns it reads — the leaf codes of the QIs it reads, its
other columns — in the warehouse, or from the base frequency set held here (``prepare``).  That is exact: a
released cell's mass moves only through its codes of the QIs the query reads (generalized, spread over their
leaves) and its other columns.  Suppression is the one step that sees every QI: a suppressed block is a cell of
all of them.  Its rows leave the query's cells (exactly, as integer counts, before any spreading) and are spread
over the whole domain; a query of QIs alone finds them in the node's own blocks (their keys and sizes), another
in its cells at every QI's leaf code, read once the first time a node suppresses (``PreparedQuery.full_joint``).
Without suppression each query's error is computed once per projection of the node and remembered.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Any, ClassVar

import numpy as np

from veil.counts import NodeCounts, Reads
from veil.errors import ConfigError, SourceError
from veil.workloadsettings import Query, require_columns, workload_of

MAX_GROUPS = 1 << 24  # groups of one query's dense answer (the product of its group-by columns' domains)
MAX_PROJECTIONS = 1024  # projections of a node onto a query's QIs whose least error bounds the nodes above


@dataclass(eq=False)
class Axis:
    """One column a query reads: a quasi-identifier (``qi``, its hierarchy) or another column (its distinct values
    in ``T``, ``domain``); ``mask`` marks the values its where-list keeps, ``values`` the numbers it aggregates."""

    name: str
    qi: int | None
    size: int
    mask: np.ndarray
    values: np.ndarray | None = None  # numbers of the aggregated column (None: not aggregated)
    hierarchy: Any = None
    _kernels: dict[tuple[int, bool], tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def generalize(self, level: int, codes: np.ndarray) -> np.ndarray:
        return codes if self.qi is None else self.kernel(level, False)[0][codes]

    def cardinality(self, level: int) -> int:
        return self.size if self.qi is None else int(self.hierarchy.cardinality(level))

    def kernel(self, level: int, with_values: bool) -> tuple[np.ndarray, np.ndarray]:
        """(per domain value: its generalized code at ``level``, its share of its code's mass: ``mask / L(code)``,
        times its number when ``with_values``) — how a generalized cell's mass spreads over this column."""
        key = (level, with_values)
        if key not in self._kernels:
            weight = self.mask.astype(np.float64)
            if with_values and self.values is not None:
                weight = weight * self.values
            if self.qi is None:
                self._kernels[key] = (np.arange(self.size, dtype=np.int64), weight)
            else:
                up = self.hierarchy.ancestors(0, level)
                leaves = self.hierarchy.leaf_counts(level).astype(np.float64)
                self._kernels[key] = (up, weight / leaves[up])
        return self._kernels[key]

    def fraction(self, level: int, with_values: bool) -> np.ndarray:
        """Per generalized code at ``level``: the share of its mass the where-list keeps (times the mean number
        kept, ``with_values``) — a column the query filters or aggregates but does not group by."""
        up, share = self.kernel(level, with_values)
        return np.bincount(up, weights=share, minlength=self.cardinality(level))

    def uniform(self, with_values: bool) -> np.ndarray:
        """A suppressed row spread over the whole domain: ``mask / size`` (times the numbers)."""
        weight = self.mask.astype(np.float64) / max(self.size, 1)
        return weight * self.values if with_values and self.values is not None else weight


@dataclass(eq=False)
class Cells:
    """Cells of one query: ``leaves[:, k]`` the code of QI ``qis[k]`` (its leaf code, or its code at a node's
    levels once generalized), ``codes[name]`` the code of each other column it reads, ``n`` rows, ``s`` the sum of
    an aggregated column outside the axes (``None`` without one)."""

    qis: list[int]
    leaves: np.ndarray
    codes: dict[str, np.ndarray]
    n: np.ndarray
    s: np.ndarray | None = None

    def column(self, axis: Axis) -> np.ndarray:
        return self.leaves[:, self.qis.index(axis.qi)] if axis.qi is not None else self.codes[axis.name]

    def take(self, rows: np.ndarray) -> Cells:
        return Cells(
            self.qis,
            self.leaves[rows],
            {k: v[rows] for k, v in self.codes.items()},
            self.n[rows],
            None if self.s is None else self.s[rows],
        )


def _collapse(columns: Sequence[np.ndarray], cards: Sequence[int], length: int) -> tuple[np.ndarray, np.ndarray]:
    """(one row index per distinct row of ``columns``, each row's index among those): the rows grouped exactly."""
    if not columns:
        return np.zeros(min(length, 1), dtype=np.int64), np.zeros(length, dtype=np.int64)
    if math.prod(max(int(c), 1) for c in cards) < 2**62:
        key = np.zeros(length, dtype=np.int64)
        for col, card in zip(columns, cards):
            key = key * max(int(card), 1) + np.asarray(col, dtype=np.int64)
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    else:
        _, first, inverse = np.unique(
            np.column_stack([np.asarray(c, dtype=np.int64) for c in columns]),
            axis=0,
            return_index=True,
            return_inverse=True,
        )
    return first, inverse.reshape(-1)


def rolled_up(cells: Cells, qis: Sequence[int], axes: Sequence[Axis], cards: dict[int, int]) -> Cells:
    """``cells`` summed over every QI outside ``qis`` (``cards``: leaf codes per QI): the cells of the columns a
    query reads, exactly (counts are integers; sums add the same numbers)."""
    names = [a.name for a in axes if a.qi is None]
    cols = [cells.leaves[:, cells.qis.index(i)] for i in qis] + [cells.codes[c] for c in names]
    sizes = [cards[i] for i in qis] + [next(a.size for a in axes if a.name == c) for c in names]
    first, inverse = _collapse(cols, sizes, len(cells.n))
    n = np.bincount(inverse, weights=cells.n, minlength=len(first)).astype(np.int64)
    s = None if cells.s is None else np.bincount(inverse, weights=cells.s, minlength=len(first))
    leaves = np.column_stack([c[first] for c in cols[: len(qis)]]) if qis else np.zeros((len(first), 0), dtype=np.int64)
    return Cells(list(qis), leaves, {c: cells.codes[c][first] for c in names}, n, s)


@dataclass(eq=False)
class PreparedQuery:
    """One query with its cells over ``T`` rolled up to the columns it reads (``cells``: the leaf codes of the QIs
    it reads, the codes of its other columns).  A suppressed block's rows are found in ``joint`` — the cells at
    every QI's leaf code, read once when a node first suppresses (``load_joint``) — or, for a query that reads
    quasi-identifiers only, in the node's own block counts (docs/workload.md §5)."""

    query: Query
    group: list[Axis]
    other: list[Axis]  # filtered or aggregated, not grouped
    cells: Cells
    width: int  # quasi-identifiers of the table (a node's levels)
    s_mean: float = 0.0  # the mean of that column's distinct values (a suppressed row's expectation)
    joint: Cells | None = None
    load_joint: Callable[[], Cells] | None = None
    truth: tuple[np.ndarray, np.ndarray | None] | None = None
    memo: dict[tuple[int, ...], tuple[float, float]] = field(default_factory=dict)
    least: dict[tuple[int, ...], float] = field(default_factory=dict)
    _scale: float | None = None

    @cached_property
    def qis(self) -> list[int]:
        return sorted({a.qi for a in self.group + self.other if a.qi is not None})

    @property
    def needs_sum(self) -> bool:
        return self.query.aggregate != "count"

    @property
    def reads_qis_only(self) -> bool:
        """Whether every column the query reads is a quasi-identifier (its suppressed rows: the node's blocks)."""
        return not self.cells.codes and self.cells.s is None

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(a.size for a in self.group)

    def full_joint(self) -> Cells:
        """The cells at every QI's leaf code (read once, when first needed)."""
        if self.joint is None:
            if self.load_joint is None:
                raise ValueError(f"{self.query.where_name}: no cells at every quasi-identifier's leaf code")
            self.joint = self.load_joint()
        return self.joint

    def _generalized(
        self, levels: Sequence[int], removed: Cells | None
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray | None]:
        """Per axis the cells' codes at ``levels``, their rows and sums, with the ``removed`` cells (already at
        ``levels``: a node's suppressed rows) taken out exactly — rows as integers, before any fraction."""
        axes = self.group + self.other
        codes = {a.name: a.generalize(0 if a.qi is None else int(levels[a.qi]), self.cells.column(a)) for a in axes}
        n: np.ndarray = self.cells.n.astype(np.float64)
        s = self.cells.s
        if removed is None:
            return codes, n, s
        for a in axes:
            codes[a.name] = np.concatenate([codes[a.name], removed.column(a)])
        n = np.concatenate([n, -removed.n.astype(np.float64)])
        if s is not None:
            assert removed.s is not None
            s = np.concatenate([s, -removed.s])
        first, inverse = _collapse(
            [codes[a.name] for a in axes],
            [a.cardinality(0 if a.qi is None else int(levels[a.qi])) for a in axes],
            len(n),
        )
        n = np.bincount(inverse, weights=n, minlength=len(first))
        s = None if s is None else np.bincount(inverse, weights=s, minlength=len(first))
        return {k: v[first] for k, v in codes.items()}, n, s

    def answer(
        self, levels: Sequence[int], removed: Cells | None, suppressed_rows: int
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """The dense estimated answer (count, and sum unless a count query) at QI ``levels`` with the ``removed``
        cells (a node's suppressed rows, at ``levels``) left out and ``suppressed_rows`` spread over the whole
        domain."""

        def level(a: Axis) -> int:
            return 0 if a.qi is None else int(levels[a.qi])

        codes, n, s = self._generalized(levels, removed)
        c_mass = n
        s_mass = None
        if self.needs_sum:
            s_mass = s if s is not None else n
        for a in self.other:
            u = codes[a.name]
            c_mass = c_mass * a.fraction(level(a), False)[u]
            if s_mass is not None:
                s_mass = s_mass * a.fraction(level(a), True)[u]
        index = np.zeros(len(n), dtype=np.int64)
        cards = []
        for a in self.group:
            card = a.cardinality(level(a))
            index = index * card + codes[a.name]
            cards.append(card)
        space = math.prod(cards)
        dense_index = np.zeros(self.shape, dtype=np.int64) if self.group else np.zeros((), dtype=np.int64)
        c_kernel = np.ones(self.shape)
        s_kernel = np.ones(self.shape)
        for k, (a, card) in enumerate(zip(self.group, cards)):
            view = [1] * len(self.group)
            view[k] = a.size
            up, share = a.kernel(level(a), False)
            dense_index = dense_index * card + up.reshape(view)
            c_kernel = c_kernel * share.reshape(view)
            if s_mass is not None:
                s_kernel = s_kernel * a.kernel(level(a), True)[1].reshape(view)
        est_c = np.bincount(index, weights=c_mass, minlength=space)[dense_index] * c_kernel
        est_s = (
            np.bincount(index, weights=s_mass, minlength=space)[dense_index] * s_kernel if s_mass is not None else None
        )
        if suppressed_rows:
            est_c, est_s = self._spread_suppressed(est_c, est_s, suppressed_rows)
        return est_c.reshape(-1), (est_s.reshape(-1) if est_s is not None else None)

    def _spread_suppressed(
        self, est_c: np.ndarray, est_s: np.ndarray | None, suppressed_rows: int
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """The estimate plus ``suppressed_rows`` spread uniformly over the whole domain of every column read."""
        u_c = np.ones(self.shape)
        u_s = np.ones(self.shape)
        for k, a in enumerate(self.group):
            view = [1] * len(self.group)
            view[k] = a.size
            u_c = u_c * a.uniform(False).reshape(view)
            u_s = u_s * a.uniform(True).reshape(view)
        f_c = math.prod(float(a.uniform(False).sum()) for a in self.other)
        f_s = math.prod(float(a.uniform(True).sum()) for a in self.other)
        if self.cells.s is not None:
            f_s *= self.s_mean
        est_c = est_c + suppressed_rows * f_c * u_c
        if est_s is not None:
            est_s = est_s + suppressed_rows * f_s * u_s
        return est_c, est_s

    def true_answer(self) -> tuple[np.ndarray, np.ndarray | None]:
        if self.truth is None:
            self.truth = self.answer([0] * self.width, None, 0)
        return self.truth

    def error(self, est: tuple[np.ndarray, np.ndarray | None]) -> tuple[float, float]:
        """(the query's error ``e``, its L1 distance ``Σ|est - true|`` for the bound)."""
        true_c, true_s = self.true_answer()
        if self.query.aggregate == "avg":
            assert est[1] is not None and true_s is not None
            present = true_c > 0
            t = true_s[present] / true_c[present]
            c = est[0][present]
            e = np.divide(est[1][present], c, out=np.zeros_like(c), where=c > 0)
            return _relative(e, t), 0.0
        e_vec, t_vec = (est[0], true_c) if self.query.aggregate == "count" else (est[1], true_s)
        assert e_vec is not None and t_vec is not None
        return _relative(e_vec, t_vec), math.fsum(np.abs(e_vec - t_vec).tolist())

    @property
    def boundable(self) -> bool:
        """Whether ``|t - A_M t| ≥ |t - A_N t| / 2`` bounds this query above a node (see the module docstring)."""
        return (
            self.query.aggregate != "avg"
            and all(a.qi is None for a in self.other)
            and all(a.qi is None or a.mask.all() for a in self.group)
            and not (
                self.query.aggregate == "sum" and any(a.values is not None and a.qi is not None for a in self.group)
            )
        )

    def released(self, key: tuple[int, ...]) -> tuple[float, float]:
        """(error, L1 distance) without suppression at ``key``, the levels of the QIs it reads (``qis``)."""
        hit = self.memo.get(key)
        if hit is None:
            levels = [0] * self.width
            for i, lv in zip(self.qis, key):
                levels[i] = lv
            hit = self.memo[key] = self.error(self.answer(levels, None, 0))
        return hit

    @cached_property
    def heights(self) -> tuple[int, ...]:
        """The heights of the QIs it reads (``qis``)."""
        by_qi = {a.qi: int(a.hierarchy.height) for a in self.group + self.other if a.qi is not None}
        return tuple(by_qi[i] for i in self.qis)

    def least_above(self, key: tuple[int, ...]) -> float:
        """The least error without suppression at ``key`` or above — the exact minimum over the projections of
        the nodes at or above one (its error depends on nothing else); memoized."""
        hit = self.least.get(key)
        if hit is None:
            hit = self.released(key)[0]
            for k, h in enumerate(self.heights):
                if key[k] < h:
                    hit = min(hit, self.least_above(key[:k] + (key[k] + 1,) + key[k + 1 :]))
            self.least[key] = hit
        return hit

    def floor(self, key: tuple[int, ...]) -> float:
        """A lower bound on its error without suppression at every node whose projection is at or above ``key``:
        the exact least error when its projections are few (``MAX_PROJECTIONS``), else ``|t - A_N t| / (4 Σ|t|)``
        where that holds (``boundable``), else 0."""
        if math.prod(h + 1 for h in self.heights) <= MAX_PROJECTIONS:
            return self.least_above(key)
        scale = self.scale() if self.boundable else 0.0
        return self.released(key)[1] / (4 * scale) if scale > 0 else 0.0

    def scale(self) -> float:
        """``Σ_g |true(g)|`` of the aggregated vector (the bound's denominator)."""
        if self._scale is None:
            true_c, true_s = self.true_answer()
            vec = true_c if self.query.aggregate == "count" else true_s
            assert vec is not None
            self._scale = math.fsum(np.abs(vec).tolist())
        return self._scale


def _relative(est: np.ndarray, true: np.ndarray) -> float:
    num = math.fsum(np.abs(est - true).tolist())
    den = math.fsum(np.abs(est).tolist()) + math.fsum(np.abs(true).tolist())
    return num / den if den > 0 else 0.0


def _block_keys(codes: np.ndarray, cards: Sequence[int]) -> np.ndarray:
    """Rows of ``codes`` as one comparable key each (int64 radix when it fits, else a tuple per row)."""
    if math.prod(max(int(c), 1) for c in cards) < 2**62:
        key = np.zeros(len(codes), dtype=np.int64)
        for j, c in enumerate(cards):
            key = key * max(int(c), 1) + codes[:, j].astype(np.int64)
        return key
    return np.array([hash(tuple(r)) for r in codes.tolist()], dtype=np.int64)


class WorkloadMetric:
    """``[search] metric = "workload"``: the weighted workload error of a node's release (module docstring)."""

    name: ClassVar[str] = "workload"
    rounding: ClassVar[float] = 1e-9

    def __init__(self, prepared: Sequence[PreparedQuery], hierarchies: Sequence[Any], suppression: bool = True) -> None:
        # without a suppression budget a node's error is a function of its levels alone (``per_query``); with one,
        # of the suppressed blocks' cells too
        self.reads = Reads.BLOCKS if suppression else Reads.LEVELS
        self.prepared = list(prepared)
        self.hierarchies = list(hierarchies)
        self.total_weight = math.fsum(p.query.weight for p in self.prepared)
        self.boundable = all(p.boundable for p in self.prepared)

    # --- per node -------------------------------------------------------------------------------------------

    def _removed(self, p: PreparedQuery, counts: NodeCounts, suppressed: np.ndarray) -> Cells:
        """The rows of the ``suppressed`` blocks as ``p``'s cells at the node's levels.  A query of quasi-identifiers
        alone finds them in the blocks themselves (their keys and sizes); another needs the other columns it reads
        within each suppressed block — the block is a cell of *every* QI — so it reads ``p.full_joint()``."""
        node = counts.node
        keys = np.asarray(counts.keys[suppressed], dtype=np.int64)
        if p.reads_qis_only:
            sizes = np.asarray(counts.sizes, dtype=np.int64)[suppressed]
            return Cells(p.cells.qis, keys[:, p.cells.qis], {}, sizes, None)
        joint = p.full_joint()
        cards = [h.cardinality(int(lv)) for h, lv in zip(self.hierarchies, node)]  # type: ignore[arg-type]
        cell = np.column_stack(
            [
                h.ancestors(0, int(lv))[joint.leaves[:, joint.qis.index(i)]]  # type: ignore[arg-type]
                for i, (h, lv) in enumerate(zip(self.hierarchies, node))
            ]
        )
        gone = np.isin(_block_keys(cell, cards), _block_keys(keys, cards))
        out = joint.take(gone)
        return Cells(p.cells.qis, cell[gone][:, p.cells.qis], {k: out.codes[k] for k in p.cells.codes}, out.n, out.s)

    def per_query(self, counts: NodeCounts, suppressed: np.ndarray) -> list[tuple[float, float]]:
        """Each query's (error, L1 distance) at ``counts.node`` with the ``suppressed`` blocks dropped."""
        suppressed = np.asarray(suppressed, dtype=bool)
        levels = tuple(int(lv) for lv in counts.node)  # type: ignore[arg-type]
        if not suppressed.any():
            return self._released(levels)
        rows = int(np.asarray(counts.sizes, dtype=np.int64)[suppressed].sum())
        return [p.error(p.answer(levels, self._removed(p, counts, suppressed), rows)) for p in self.prepared]

    def _released(self, levels: tuple[int, ...]) -> list[tuple[float, float]]:
        """Each query's (error, L1 distance) at ``levels`` without suppression: once per projection of the node
        onto the QIs the query reads."""
        return [p.released(tuple(levels[i] for i in p.qis)) for p in self.prepared]

    def errors(self, counts: NodeCounts, suppressed: np.ndarray) -> list[float]:
        return [e for e, _ in self.per_query(counts, suppressed)]

    def value(self, counts: NodeCounts, suppressed: np.ndarray) -> float:
        errs = self.per_query(counts, suppressed)
        return math.fsum(p.query.weight * e for p, (e, _) in zip(self.prepared, errs)) / self.total_weight

    def loss(self, counts: NodeCounts, suppressed: np.ndarray, rows: int) -> float:
        return self.value(counts, suppressed)

    def reported(self, loss: Any) -> float:
        return float(loss)

    def score(self, counts: NodeCounts, suppressed: np.ndarray, rows: int) -> float:
        return self.value(counts, suppressed)

    def bound(self, counts: NodeCounts, rows: int, suppression: bool) -> float:
        """A lower bound on the loss at ``counts.node`` and every node above, without a suppression budget: each
        query's least error over the projections at or above the node's (``PreparedQuery.floor``), weighted —
        the loss at a node above weighs an error at least as large for every query.  With a budget, 0."""
        if suppression:
            return 0.0
        levels = tuple(int(lv) for lv in counts.node)  # type: ignore[arg-type]
        terms = [p.query.weight * p.floor(tuple(levels[i] for i in p.qis)) for p in self.prepared]
        return math.fsum(terms) / self.total_weight


# --- preparing the queries --------------------------------------------------------------------------------


def _same(a: Any, b: Any) -> bool:
    """A where-list value equals a column's value: numbers numerically (bool only with bool), else equal."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    try:
        if isinstance(a, (int, float)) and not isinstance(b, str):
            return float(a) == float(b)
    except (TypeError, ValueError):
        return False
    return bool(a == b)


def _mask(domain: Sequence[Any], wanted: Sequence[Any] | None) -> np.ndarray:
    if wanted is None:
        return np.ones(len(domain), dtype=bool)
    return np.array([any(_same(w, v) for w in wanted) for v in domain], dtype=bool)


def _numbers(domain: Sequence[Any], query: Query, column: str) -> np.ndarray:
    try:
        return np.array([float(v) for v in domain], dtype=np.float64)
    except (TypeError, ValueError):
        raise ConfigError(
            f"{query.where_name} aggregates column {column!r}, whose values are not numbers "
            f"(e.g. {next(v for v in domain if not _is_number(v))!r})"
        ) from None


def _is_number(v: Any) -> bool:
    try:
        float(v)
        return not isinstance(v, (str, bool)) and v is not None
    except (TypeError, ValueError):
        return False


def _data_cells(
    data: dict[str, Any], width: int, grouped: Sequence[str], coders: dict[str, dict[Any, int]], query: Query
) -> Cells:
    """``data`` (as ``queries.workload_cells`` returns it) as cells: the QIs it holds ``q{i}``, each other column's
    values coded through ``coders`` (a value seen first gets the next code), ``s`` checked for NULLs."""
    qis = [i for i in range(width) if f"q{i}" in data]
    n = np.asarray(data["n"], dtype=np.int64)
    leaves = (
        np.column_stack([np.asarray(data[f"q{i}"], dtype=np.int64) for i in qis])
        if qis
        else np.zeros((len(n), 0), dtype=np.int64)
    )
    codes = {}
    for k, name in enumerate(grouped):
        seen = coders.setdefault(name, {})
        codes[name] = np.array([seen.setdefault(_hashable(v), len(seen)) for v in data[f"v{k}"]], dtype=np.int64)
    s = None
    if "s" in data:
        if int(np.asarray(data.get("nulls", [0]), dtype=np.float64).sum()):
            raise SourceError(
                f"{query.where_name} aggregates column {query.column!r}, which holds NULLs in rows "
                "of the table; the workload metric sums and averages columns without NULLs"
            )
        s = np.array([0.0 if v is None else float(v) for v in data["s"]], dtype=np.float64)
    return Cells(qis, leaves, codes, n, s)


def _axes(
    query: Query, attributes: Sequence[str], hierarchies: Sequence[Any], domains: dict[str, list[Any]]
) -> dict[str, Axis]:
    """An axis per column the query reads, but a summed column outside the QIs and the grouped columns."""
    where = dict(query.where)
    axes: dict[str, Axis] = {}
    for name in query.columns:
        if name == query.column and name not in domains and name not in attributes:
            continue  # summed in SQL: no axis
        if name in attributes:
            i = list(attributes).index(name)
            h = hierarchies[i]
            domain = list(h.domain(0))
            if name in where:
                missing = [w for w in where[name] if not any(_same(w, v) for v in domain)]
                if missing:
                    raise ConfigError(
                        f"{query.where_name} key 'where.{name}' lists {missing[0]!r}, which is no "
                        f"value of quasi-identifier {name!r}'s hierarchy (its leaves)"
                    )
            values = _numbers(domain, query, name) if name == query.column else None
            axes[name] = Axis(name, i, len(domain), _mask(domain, where.get(name)), values, h)
        else:
            domain = domains[name]
            values = _numbers(domain, query, name) if name == query.column else None
            axes[name] = Axis(name, None, len(domain), _mask(domain, where.get(name)), values)
    return axes


def prepare_query(
    query: Query,
    attributes: Sequence[str],
    hierarchies: Sequence[Any],
    data: dict[str, Any],
    grouped: Sequence[str],
    s_mean: float | None = None,
    load_joint: Callable[[], dict[str, Any]] | None = None,
) -> PreparedQuery:
    """A query with its cells (``data`` as ``queries.workload_cells`` returns them: ``q{i}`` for the QIs it holds,
    ``v{k}`` for the ``grouped`` columns, ``n``, ``s``/``nulls`` for a summed column outside them).  Cells at every
    QI's leaf code are rolled up here to the QIs the query reads (and kept for suppression unless it reads QIs
    alone); otherwise ``load_joint`` reads those when a node first suppresses."""
    width = len(attributes)
    coders: dict[str, dict[Any, int]] = {}
    cells = _data_cells(data, width, grouped, coders, query)
    axes = _axes(query, attributes, hierarchies, {name: list(coders[name]) for name in grouped})
    group = [axes[c] for c in query.group_by]
    other = [a for c, a in axes.items() if c not in query.group_by]
    size = math.prod(a.size for a in group)
    if size > MAX_GROUPS:
        raise ConfigError(
            f"{query.where_name} groups by {', '.join(query.group_by)}: {size:,} groups in their "
            f"domains' product, more than the {MAX_GROUPS:,} the workload metric answers"
        )
    if cells.s is not None and (query.column is None or query.column in axes):
        cells.s = None
    read = sorted({a.qi for a in axes.values() if a.qi is not None})
    missing = [i for i in read if i not in cells.qis]
    if missing:
        raise ValueError(f"{query.where_name}: the cells lack quasi-identifier {attributes[missing[0]]!r}")
    joint = cells if len(cells.qis) == width and (cells.codes or cells.s is not None) else None
    if cells.qis != read:
        cells = rolled_up(cells, read, list(axes.values()), {i: hierarchies[i].cardinality(0) for i in read})
    loader = None
    if load_joint is not None:

        def loader() -> Cells:
            return _data_cells(load_joint(), width, grouped, coders, query)

    return PreparedQuery(query, group, other, cells, width, float(s_mean or 0.0), joint, loader)


def _hashable(v: Any) -> Any:
    return float(v) if type(v).__name__ == "Decimal" else v


def _local_data(local: Any, read: Sequence[int], hierarchies: Sequence[Any]) -> dict[str, Any]:
    """The base frequency set held here rolled up to the QIs in ``read`` (no statement)."""
    n = np.asarray(local.n, dtype=np.int64)
    first, inverse = _collapse([local.leaves[i] for i in read], [hierarchies[i].cardinality(0) for i in read], len(n))
    out: dict[str, Any] = {f"q{i}": np.asarray(local.leaves[i])[first] for i in read}
    out["n"] = np.bincount(inverse, weights=n, minlength=len(first)).astype(np.int64)
    return out


def _fetch(wh: Any, stmt: Any, what: str) -> dict[str, Any]:
    rows = wh.session.rows(stmt, what)  # values of any type: not packed
    names = [c.name for c in stmt.selected_columns]
    return {name: [r[k] for r in rows] for k, name in enumerate(names)}


def prepare(wh: Any, queries: Sequence[Query], file: Any = "config") -> list[PreparedQuery]:
    """Each query's cells, rolled up to the columns it reads: a query of quasi-identifiers alone reads the base
    frequency set the warehouse already fetched (``Warehouse.local``: no statement) when there is one; another,
    one statement (``queries.workload_cells``), and one per summed column that is neither grouped nor filtered
    (the mean of its distinct values).  A query reading another column reads its cells at every QI's leaf code
    too — one more statement — but only when a node first suppresses rows."""
    from veil.queries import workload as wq

    attributes = list(wh.attributes)
    require_columns(queries, list(wh.columns), file, wh.table_name)
    not_null = list(dict.fromkeys(list(wh.sensitive) + list(wh.null_checked)))
    out = []
    local = getattr(wh, "local", None)  # the base frequency set, when the warehouse fetched it (veil.frequencies)
    for query in queries:
        read = sorted(attributes.index(c) for c in query.columns if c in attributes)
        if local is not None and not any(local.floor) and all(c in attributes for c in query.columns):
            out.append(
                prepare_query(query, attributes, wh.hierarchies, _local_data(local, read, wh.hierarchies), [], None)
            )
            continue
        grouped = [
            c
            for c in query.columns
            if c not in attributes and (c != query.column or c in query.group_by or c in dict(query.where))
        ]
        summed = (
            query.column
            if query.column is not None and query.column not in attributes and query.column not in grouped
            else None
        )
        if query.column is not None:
            kind = wh.columns[query.column].kind
            if kind is None or not kind.numeric:
                raise ConfigError(
                    f"{file}: {query.where_name} key 'aggregate' {query.aggregate}({query.column}) "
                    f"needs a numeric column; {query.column!r} is not"
                )
        source = wh.source_table(list(dict.fromkeys(attributes + grouped + ([summed] if summed else []) + not_null)))
        data = _fetch(
            wh,
            wq.workload_cells(wh.layout, source, attributes, read, grouped, summed, not_null),
            f"counting the cells of {query.where_name}",
        )
        s_mean = None
        if summed is not None:
            rows = wh.session.rows(
                wq.distinct_mean(wh.layout, source, attributes, summed, not_null),
                f"reading the distinct values of {summed!r}",
            )
            s_mean = float(rows[0][0] or 0.0)
        joint = wq.workload_cells(wh.layout, source, attributes, range(len(attributes)), grouped, summed, not_null)
        load = (
            partial(_fetch, wh, joint, f"counting the cells of {query.where_name} at every quasi-identifier")
            if grouped or summed
            else None
        )
        out.append(prepare_query(query, attributes, wh.hierarchies, data, grouped, s_mean, load))
    return out


def workload_metric(ctx: Any) -> WorkloadMetric:
    """The registry's builder (``veil.metrics``): the config's ``[[workload]]`` read from the run's warehouse."""
    config, wh = ctx.config, ctx.warehouse
    if config is None or wh is None:
        raise ConfigError('[search] metric "workload" needs the config\'s [[workload]] queries and a warehouse')
    queries = workload_of(config)
    if not queries:
        raise ConfigError(
            f'{config.path}: [search] metric "workload" needs at least one [[workload]] query (docs/workload.md)'
        )
    return WorkloadMetric(prepare(wh, queries, config.path), wh.hierarchies, config.search.max_suppression > 0)


def metric_for_config(wh: Any, config: Any) -> WorkloadMetric | None:
    """The workload metric of ``config`` on ``wh``, or ``None`` when it lists no ``[[workload]]``."""
    queries = workload_of(config)
    return WorkloadMetric(prepare(wh, queries, config.path), wh.hierarchies) if queries else None


def document(
    metric: WorkloadMetric,
    evaluations: Sequence[tuple[Any, bool, int, float | None]],
    counts_for: Callable[[Any], NodeCounts] | None = None,
) -> dict[str, Any]:
    """``workload`` in ``veil search --json``: the queries and every evaluated passing node's error."""
    nodes = [
        {"node": list(n), "error": s} for n, passed, _, s in evaluations if passed and s is not None and None not in n
    ]
    return {"queries": [p.query.document() for p in metric.prepared], "nodes": nodes}


def search_document(wh: Any, config: Any, result: Any) -> dict[str, Any]:
    """What ``veil search --json`` adds for issue 38: ``workload`` (the queries, every evaluated passing node's
    workload error, the optimal node's error per query) when the config lists ``[[workload]]``, and
    ``utility_per_attribute`` (ARX's per-attribute quality, ``veil.utility``) at the optimal node."""
    from veil.privacy import Specification
    from veil.utility import attribute_utility

    out: dict[str, Any] = {}
    if result.optimal is None:
        return out
    node = tuple(result.optimal.node)
    counts = wh.counts(node)
    spec = Specification(config.models, config.search.max_suppression)
    gone = spec.evaluate(counts, wh.rows).failing
    metric = metric_for_config(wh, config)
    if metric is not None:
        if config.search.metric == "workload":
            nodes = [
                {"node": list(n), "error": s}
                for n, passed, _, s in result.evaluations
                if passed and s is not None and None not in n
            ]
        else:
            nodes = []
            for n, passed, _, _ in result.evaluations:
                if passed and None not in n:
                    c = wh.counts(n)
                    failing = spec.evaluate(c, wh.rows).failing
                    nodes.append({"node": list(n), "error": metric.loss(c, failing, wh.rows)})
        out["workload"] = {
            "queries": [p.query.document() for p in metric.prepared],
            "nodes": nodes,
            "optimal": {
                "node": list(node),
                "error": metric.loss(counts, gone, wh.rows),
                "per_query": metric.errors(counts, gone),
            },
        }
    out["utility_per_attribute"] = {
        "node": list(node),
        "attributes": attribute_utility(counts, gone, wh.hierarchies, wh.leaf_totals()),
    }
    return out
