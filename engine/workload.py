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

**Bound.**  Without suppression the estimate at a node is the averaging ``A_N`` of the true answer over the
node's cells, an L1 contraction with ``A_N A_M = A_M`` for every node ``M`` above: so
``|t - A_M t| ≥ |t - A_N t| / 2``, and ``e_q(M) ≥ |t - A_N t| / (4 Σ|t|)``.  That holds for count and sum (of a
column that is not a quasi-identifier) queries filtering no quasi-identifier, with no suppression budget; for any
other workload the bound is 0 (the error is not monotone: docs/workload.md has a counterexample).

A node's answers depend only on the levels of the quasi-identifiers a query reads, so without suppression each
query's error is computed once per projection of the node and remembered.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from veil.counts import NodeCounts
from veil.errors import ConfigError, SourceError
from veil.workloadsettings import Query, require_columns, workload_of

MAX_GROUPS = 1 << 24  # groups of one query's dense answer (the product of its group-by columns' domains)


@dataclass(eq=False)
class Axis:
    """One column a query reads: a quasi-identifier (``qi``, its hierarchy) or another column (its distinct values
    in ``T``, ``domain``); ``mask`` marks the values its where-list keeps, ``values`` the numbers it aggregates."""

    name: str
    qi: int | None
    size: int
    mask: np.ndarray
    values: np.ndarray | None = None       # numbers of the aggregated column (None: not aggregated)
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
class PreparedQuery:
    """One query with its cells over ``T``: ``leaves`` (cells × QIs) every QI's leaf code, ``codes[name]`` the
    code of each other column it reads, ``n`` rows, ``s`` the sum of an aggregated column outside the axes."""

    query: Query
    group: list[Axis]
    other: list[Axis]            # filtered or aggregated, not grouped
    leaves: np.ndarray
    codes: dict[str, np.ndarray]
    n: np.ndarray
    s: np.ndarray | None = None  # per cell: the sum of the aggregated column (when it is no axis)
    s_mean: float = 0.0          # the mean of that column's distinct values (a suppressed row's expectation)
    truth: tuple[np.ndarray, np.ndarray | None] | None = None
    memo: dict[tuple[int, ...], tuple[float, float]] = field(default_factory=dict)
    _scale: float | None = None

    @property
    def qis(self) -> list[int]:
        return sorted({a.qi for a in self.group + self.other if a.qi is not None})

    @property
    def needs_sum(self) -> bool:
        return self.query.aggregate != "count"

    def cell_codes(self, axis: Axis) -> np.ndarray:
        return self.leaves[:, axis.qi] if axis.qi is not None else self.codes[axis.name]

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(a.size for a in self.group)

    def answer(self, levels: Sequence[int], keep: np.ndarray | None, suppressed_rows: int) -> tuple[np.ndarray,
                                                                                                   np.ndarray | None]:
        """The dense estimated answer (count, and sum unless a count query) at QI ``levels`` with only the cells
        in ``keep`` released and ``suppressed_rows`` spread over the whole domain."""
        def level(a: Axis) -> int:
            return 0 if a.qi is None else int(levels[a.qi])

        n = self.n.astype(np.float64)
        if keep is not None:
            n = np.where(keep, n, 0.0)
        c_mass = n.copy()
        s_mass = None
        if self.needs_sum:
            if self.s is not None:
                s_mass = self.s if keep is None else np.where(keep, self.s, 0.0)
            else:
                s_mass = n.copy()
        for a in self.other:
            u = a.generalize(level(a), self.cell_codes(a))
            c_mass = c_mass * a.fraction(level(a), False)[u]
            if s_mass is not None:
                s_mass = s_mass * a.fraction(level(a), True)[u]
        index = np.zeros(len(n), dtype=np.int64)
        cards = []
        for a in self.group:
            card = a.cardinality(level(a))
            index = index * card + a.generalize(level(a), self.cell_codes(a))
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
        est_s = (np.bincount(index, weights=s_mass, minlength=space)[dense_index] * s_kernel
                 if s_mass is not None else None)
        if suppressed_rows:
            u_c = np.ones(self.shape)
            u_s = np.ones(self.shape)
            for k, a in enumerate(self.group):
                view = [1] * len(self.group)
                view[k] = a.size
                u_c = u_c * a.uniform(False).reshape(view)
                u_s = u_s * a.uniform(True).reshape(view)
            f_c = math.prod(float(a.uniform(False).sum()) for a in self.other)
            f_s = math.prod(float(a.uniform(True).sum()) for a in self.other)
            if self.s is not None:
                f_s *= self.s_mean
            est_c = est_c + suppressed_rows * f_c * u_c
            if est_s is not None:
                est_s = est_s + suppressed_rows * f_s * u_s
        return est_c.reshape(-1), (est_s.reshape(-1) if est_s is not None else None)

    def true_answer(self) -> tuple[np.ndarray, np.ndarray | None]:
        if self.truth is None:
            self.truth = self.answer([0] * self.leaves.shape[1], None, 0)
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
        return (self.query.aggregate != "avg" and all(a.qi is None for a in self.other)
                and all(a.qi is None or a.mask.all() for a in self.group)
                and not (self.query.aggregate == "sum" and any(a.values is not None and a.qi is not None
                                                                for a in self.group)))

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

    def __init__(self, prepared: Sequence[PreparedQuery], hierarchies: Sequence[Any]) -> None:
        self.prepared = list(prepared)
        self.hierarchies = list(hierarchies)
        self.total_weight = math.fsum(p.query.weight for p in self.prepared)
        self.boundable = all(p.boundable for p in self.prepared)

    # --- per node -------------------------------------------------------------------------------------------

    def _suppressed_cells(self, p: PreparedQuery, counts: NodeCounts, suppressed: np.ndarray) -> np.ndarray:
        node = counts.node
        cards = [h.cardinality(int(lv)) for h, lv in zip(self.hierarchies, node)]
        cell = np.column_stack([h.ancestors(0, int(lv))[p.leaves[:, i]]
                                for i, (h, lv) in enumerate(zip(self.hierarchies, node))])
        gone = _block_keys(np.asarray(counts.keys[suppressed], dtype=np.int64), cards)
        return np.isin(_block_keys(cell, cards), gone)

    def per_query(self, counts: NodeCounts, suppressed: np.ndarray) -> list[tuple[float, float]]:
        """Each query's (error, L1 distance) at ``counts.node`` with the ``suppressed`` blocks dropped."""
        suppressed = np.asarray(suppressed, dtype=bool)
        levels = tuple(int(lv) for lv in counts.node)  # type: ignore[arg-type]
        out = []
        for p in self.prepared:
            if not suppressed.any():
                key = tuple(levels[i] for i in p.qis)
                if key not in p.memo:
                    p.memo[key] = p.error(p.answer(levels, None, 0))
                out.append(p.memo[key])
                continue
            gone = self._suppressed_cells(p, counts, suppressed)
            rows = int(p.n[gone].sum())
            out.append(p.error(p.answer(levels, ~gone, rows)))
        return out

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
        if suppression or not self.boundable:
            return 0.0
        errs = self.per_query(counts, np.zeros(counts.n_blocks, dtype=bool))
        terms = []
        for p, (_, l1) in zip(self.prepared, errs):
            scale = p.scale()
            terms.append(p.query.weight * l1 / (4 * scale) if scale > 0 else 0.0)
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
        raise ConfigError(f"{query.where_name} aggregates column {column!r}, whose values are not numbers "
                          f"(e.g. {next(v for v in domain if not _is_number(v))!r})") from None


def _is_number(v: Any) -> bool:
    try:
        float(v)
        return not isinstance(v, (str, bool)) and v is not None
    except (TypeError, ValueError):
        return False


def prepare_query(query: Query, attributes: Sequence[str], hierarchies: Sequence[Any], data: dict[str, Any],
                  grouped: Sequence[str], s_mean: float | None = None) -> PreparedQuery:
    """A query with its cells (``data`` as ``queries.workload_cells`` returns them: ``q{i}``, ``v{k}`` for the
    ``grouped`` columns, ``n``, ``s``/``nulls`` for a summed column outside them)."""
    where = dict(query.where)
    leaves = (np.column_stack([np.asarray(data[f"q{i}"], dtype=np.int64) for i in range(len(attributes))])
              if attributes else np.zeros((len(data["n"]), 0), dtype=np.int64))
    codes: dict[str, np.ndarray] = {}
    domains: dict[str, list[Any]] = {}
    for k, name in enumerate(grouped):
        raw = list(data[f"v{k}"])
        seen: dict[Any, int] = {}
        codes[name] = np.array([seen.setdefault(_hashable(v), len(seen)) for v in raw], dtype=np.int64)
        domains[name] = list(seen)
    axes: dict[str, Axis] = {}
    for name in query.columns:
        if name == query.column and name not in grouped and name not in attributes:
            continue  # summed in SQL: no axis
        if name in attributes:
            i = list(attributes).index(name)
            h = hierarchies[i]
            domain = list(h.domain(0))
            if name in where:
                missing = [w for w in where[name] if not any(_same(w, v) for v in domain)]
                if missing:
                    raise ConfigError(f"{query.where_name} key 'where.{name}' lists {missing[0]!r}, which is no "
                                      f"value of quasi-identifier {name!r}'s hierarchy (its leaves)")
            values = _numbers(domain, query, name) if name == query.column else None
            axes[name] = Axis(name, i, len(domain), _mask(domain, where.get(name)), values, h)
        else:
            domain = domains[name]
            values = _numbers(domain, query, name) if name == query.column else None
            axes[name] = Axis(name, None, len(domain), _mask(domain, where.get(name)), values)
    group = [axes[c] for c in query.group_by]
    other = [a for c, a in axes.items() if c not in query.group_by]
    size = math.prod(a.size for a in group)
    if size > MAX_GROUPS:
        raise ConfigError(f"{query.where_name} groups by {', '.join(query.group_by)}: {size:,} groups in their "
                          f"domains' product, more than the {MAX_GROUPS:,} the workload metric answers")
    s = None
    if "s" in data and query.column is not None and query.column not in axes:
        if int(np.asarray(data.get("nulls", [0]), dtype=np.float64).sum()):
            raise SourceError(f"{query.where_name} aggregates column {query.column!r}, which holds NULLs in rows "
                              "of the table; the workload metric sums and averages columns without NULLs")
        s = np.array([0.0 if v is None else float(v) for v in data["s"]], dtype=np.float64)
    return PreparedQuery(query, group, other, leaves, codes, np.asarray(data["n"], dtype=np.int64), s,
                         float(s_mean or 0.0))


def _hashable(v: Any) -> Any:
    return float(v) if type(v).__name__ == "Decimal" else v


def prepare(wh: Any, queries: Sequence[Query], file: Any = "config") -> list[PreparedQuery]:
    """Each query's cells: a query of quasi-identifiers alone reads the base frequency set the warehouse already
    fetched (``Warehouse.local``: no statement); another, one statement (``queries.workload_cells``), and one per
    summed column that is neither grouped nor filtered (the mean of its distinct values)."""
    from veil.queries import workload as wq

    attributes = list(wh.attributes)
    require_columns(queries, list(wh.columns), file, wh.table_name)
    not_null = list(dict.fromkeys(list(wh.sensitive) + list(wh.null_checked)))
    out = []
    local = getattr(wh, "local", None)  # the base frequency set, when the warehouse fetched it (veil.frequencies)
    for query in queries:
        if local is not None and not any(local.floor) and all(c in attributes for c in query.columns):
            # a query of quasi-identifiers alone: its cells are the base's (summed over nothing it reads)
            data = {**{f"q{i}": local.leaves[i] for i in range(len(attributes))}, "n": local.n}
            out.append(prepare_query(query, attributes, wh.hierarchies, data, [], None))
            continue
        grouped = [c for c in query.columns if c not in attributes
                   and (c != query.column or c in query.group_by or c in dict(query.where))]
        summed = query.column if query.column is not None and query.column not in attributes \
            and query.column not in grouped else None
        if query.column is not None:
            kind = wh.columns[query.column].kind
            if kind is None or not kind.numeric:
                raise ConfigError(f"{file}: {query.where_name} key 'aggregate' {query.aggregate}({query.column}) "
                                  f"needs a numeric column; {query.column!r} is not")
        names = list(dict.fromkeys(attributes + grouped + ([summed] if summed else []) + not_null))
        source = wh.source_table(names)
        stmt = wq.workload_cells(wh.layout, source, attributes, grouped, summed, not_null)
        rows = wh.session.rows(stmt, f"counting the cells of {query.where_name}")  # values of any type: not packed
        names = [c.name for c in stmt.selected_columns]
        data = {name: [r[k] for r in rows] for k, name in enumerate(names)}
        s_mean = None
        if summed is not None:
            rows = wh.session.rows(wq.distinct_mean(wh.layout, source, attributes, summed, not_null),
                                   f"reading the distinct values of {summed!r}")
            s_mean = float(rows[0][0] or 0.0)
        out.append(prepare_query(query, attributes, wh.hierarchies, data, grouped, s_mean))
    return out


def workload_metric(ctx: Any) -> WorkloadMetric:
    """The registry's builder (``veil.metrics``): the config's ``[[workload]]`` read from the run's warehouse."""
    config, wh = ctx.config, ctx.warehouse
    if config is None or wh is None:
        raise ConfigError("[search] metric \"workload\" needs the config's [[workload]] queries and a warehouse")
    queries = workload_of(config)
    if not queries:
        raise ConfigError(f"{config.path}: [search] metric \"workload\" needs at least one [[workload]] query "
                          "(docs/workload.md)")
    return WorkloadMetric(prepare(wh, queries, config.path), wh.hierarchies)


def metric_for_config(wh: Any, config: Any) -> WorkloadMetric | None:
    """The workload metric of ``config`` on ``wh``, or ``None`` when it lists no ``[[workload]]``."""
    queries = workload_of(config)
    return WorkloadMetric(prepare(wh, queries, config.path), wh.hierarchies) if queries else None


def document(metric: WorkloadMetric, evaluations: Sequence[tuple[Any, bool, int, float | None]],
             counts_for: Callable[[Any], NodeCounts] | None = None) -> dict[str, Any]:
    """``workload`` in ``veil search --json``: the queries and every evaluated passing node's error."""
    nodes = [{"node": list(n), "error": s} for n, passed, _, s in evaluations
             if passed and s is not None and None not in n]
    return {"queries": [p.query.document() for p in metric.prepared], "nodes": nodes}


def search_document(wh: Any, config: Any, result: Any) -> dict[str, Any]:
    """What ``veil search --json`` adds for issue 38: ``workload`` (the queries, every evaluated passing node's
    workload error, the optimal node's error per query) when the config lists ``[[workload]]``, and
    ``utility_per_attribute`` (ARX's per-attribute quality, ``veil.utility``) at the optimal node."""
    from veil.privacy import Specification
    from veil.utility import attribute_utility, leaf_totals

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
            nodes = [{"node": list(n), "error": s} for n, passed, _, s in result.evaluations
                     if passed and s is not None and None not in n]
        else:
            nodes = []
            for n, passed, _, _ in result.evaluations:
                if passed and None not in n:
                    c = wh.counts(n)
                    failing = spec.evaluate(c, wh.rows).failing
                    nodes.append({"node": list(n), "error": metric.loss(c, failing, wh.rows)})
        out["workload"] = {"queries": [p.query.document() for p in metric.prepared], "nodes": nodes,
                           "optimal": {"node": list(node), "error": metric.loss(counts, gone, wh.rows),
                                       "per_query": metric.errors(counts, gone)}}
    bottom = wh.counts(tuple(0 for _ in wh.hierarchies))
    out["utility_per_attribute"] = {"node": list(node), "attributes": attribute_utility(
        counts, gone, wh.hierarchies, leaf_totals(bottom))}
    return out
