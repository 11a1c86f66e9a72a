"""Lattice search (what it may rely on: docs/models.md §6): every minimal passing node (Incognito) and the proven-optimal node.

The search receives a ``counts_for(node)`` function and never sees SQL.  It reads what the specification
declares (``tags_up``, ``prune_down``; see ``veil.privacy``) instead of special-casing models:

- ``brute-force``: evaluates every node; the reference the other two are tested against.
- ``incognito`` (LeFevre, DeWitt, Ramakrishnan, SIGMOD 2005): bottom-up breadth-first over quasi-identifier
  subsets of growing size.  A node of a subset is a candidate only if each of its projections onto one
  attribute fewer passed (the subset property, sound for the monotone part of the specification); a
  passing node marks its generalizations as passing when the whole specification is monotone.  Returns
  every minimal passing node.
- ``optimal``: exact branch and bound with predictive tagging in both directions (Flash/OLA style):
  alternately a chain of unknown nodes from the lowest one is binary-searched and the highest unknown node
  is probed; a pass tags every node above as passing (when monotone), a failure of the monotone part tags
  every node below as failing; every evaluated node gives each node above it a lower bound on the metric.
  With a ``probe`` (a node's block sizes, cheaper than its evaluation), a node is first bounded from its
  sizes alone and its models checked only if it could still beat the best found — or if those sizes already
  fail the monotone part: that verdict is free and tags every node below as failing.  The search ends when
  every node is evaluated, known to fail, or proven no better than the best found (ties: lower height, then
  the lexicographically smaller node).

Ties are exact (docs/models.md §8): losses are compared as the metric computes them, ints
and Fractions exactly, so only genuinely equal losses go to the tie rule; the bounds that prune are exact
too (a float shadow decides where it can, the exact values where the floats are equal).  A float metric
(KL-divergence) declares a ``rounding`` margin: its bounds prune only when they exceed the best loss by
more than that, so rounding never discards the true optimum.

Counts are cached by the caller's ``counts_for`` across strategies of one run.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction

import numpy as np

from veil.counts import Level, NodeCounts, SizeHistogram
from veil.lattice import Lattice, Node
from veil.metrics import Loss, Metric
from veil.privacy import Evaluation, Specification
from veil.registry import STRATEGIES

CountsFn = Callable[[tuple[Level, ...]], NodeCounts]
PrefetchFn = Callable[[Sequence[tuple[Level, ...]]], None]
Admits = Callable[[NodeCounts | SizeHistogram], bool]
AHEAD = 32  # nodes ``brute-force`` announces to ``prefetch`` at once: the next ones in order


@dataclass(frozen=True)
class Optimum:
    node: Node
    metric: str
    value: float


@dataclass(frozen=True)
class StrategyWork:
    """What one strategy of a run evaluated beyond the strategies before it (they share their evaluations):
    nodes of the lattice, nodes of smaller lattices (Incognito's subsets of the quasi-identifiers: not nodes of
    the lattice), nodes ruled out by their block sizes alone (``optimal``'s bound), and its time."""

    strategy: str
    lattice_nodes: int = 0
    subset_nodes: int = 0
    nodes_bounded: int = 0
    seconds: float = 0.0

    def document(self) -> dict[str, object]:
        return {
            "strategy": self.strategy,
            "lattice_nodes": self.lattice_nodes,
            "subset_nodes": self.subset_nodes,
            "nodes_bounded": self.nodes_bounded,
            "seconds": round(self.seconds, 4),
        }


@dataclass
class SearchResult:
    attributes: tuple[str, ...]
    heights: tuple[int, ...]
    lattice_size: int
    nodes_evaluated: int = 0
    nodes_bounded: int = 0  # nodes ``optimal`` left unevaluated: their block sizes proved them no better
    minimal: list[Node] | None = None
    optimal: Optimum | None = None
    any_passing: bool = False
    seconds: float = 0.0
    strategies: tuple[str, ...] = ()
    evaluations: list[tuple[tuple[Level, ...], bool, int, float | None]] = field(default_factory=list)
    work: list[StrategyWork] = field(default_factory=list)

    def document(self) -> dict[str, object]:
        """The stable JSON of ``veil search``: ``nodes_evaluated`` counts every evaluation (Incognito's subset
        nodes too, so it may exceed ``lattice_size``); ``by_strategy`` says what each strategy evaluated."""
        return {
            "attributes": list(self.attributes),
            "heights": list(self.heights),
            "lattice_size": self.lattice_size,
            "nodes_evaluated": self.nodes_evaluated,
            "nodes_bounded": self.nodes_bounded,
            "minimal": [list(n) for n in self.minimal]
            if self.minimal is not None
            else ([] if not self.any_passing else None),
            "optimal": (
                {"node": list(self.optimal.node), "metric": self.optimal.metric, "value": self.optimal.value}
                if self.optimal is not None
                else None
            ),
            "seconds": round(self.seconds, 4),
            "by_strategy": [w.document() for w in self.work],
        }


class Evaluator:
    """Evaluates nodes once each (counts, verdicts, metric) and remembers the results."""

    def __init__(
        self,
        counts_for: CountsFn,
        spec: Specification,
        metric: Metric,
        rows: int,
        on_evaluate: Callable[[int], None] | None = None,
        probe: CountsFn | None = None,
        prefetch: PrefetchFn | None = None,
        admits: Admits | None = None,
    ) -> None:
        self.counts_for, self.spec, self.metric, self.rows = counts_for, spec, metric, rows
        self.admits = admits
        self.on_evaluate = on_evaluate
        self.probe = probe
        self._prefetch = prefetch
        self.probed = 0  # nodes whose bound alone (from ``probe``) proved them no better than the best
        self.fail_on_sizes: set[tuple[Level, ...]] = set()  # probed nodes whose sizes fail the monotone part
        self.results: dict[tuple[Level, ...], Evaluation] = {}
        self.scores: dict[tuple[Level, ...], float] = {}  # reported values
        self.losses: dict[tuple[Level, ...], Loss] = {}  # what the search minimizes, exact
        self.bounds: dict[tuple[Level, ...], Loss] = {}
        self.prune_results: dict[tuple[Level, ...], bool] = {}

    def __call__(self, node: tuple[Level, ...]) -> Evaluation:
        hit = self.results.get(node)
        if hit is not None:
            return hit
        counts = self.counts_for(node)
        ev = self.spec.evaluate(counts, self.rows)
        if ev.passed and self.admits is not None and not self.admits(counts):
            ev = replace(ev, passed=False, prune_down=True)  # a requirement that holds upward (``run``)
        self.results[node] = ev
        if None not in node:
            self.bounds[node] = self.metric.bound(counts, self.rows, self.spec.max_suppression > 0)
            if ev.passed:
                loss = self.metric.loss(counts, ev.failing, self.rows)
                self.losses[node] = loss
                self.scores[node] = self.metric.reported(loss)
        counts.forget()
        if self.on_evaluate is not None:
            self.on_evaluate(len(self.results))
        return ev

    def prefetch(self, nodes: Sequence[tuple[Level, ...]]) -> None:
        """Announce the nodes the search will likely evaluate next, so the caller may count them together (the
        batch interface, ``run``'s ``prefetch``); a hint: every node is still evaluated one at a time."""
        if self._prefetch is not None:
            todo = [n for n in nodes if n not in self.results]
            if len(todo) > 1:
                self._prefetch(todo)

    def bound(self, node: Node) -> Loss | None:
        """The metric's lower bound at ``node`` and above, from ``probe``'s counts (a node's block sizes, which
        the metric's bound reads) without evaluating the models; ``None`` without a probe."""
        known = self.bounds.get(node)
        if known is not None or self.probe is None:
            return known
        sizes = self.probe(node)
        hist = sizes if isinstance(sizes, SizeHistogram) else SizeHistogram.of(node, sizes.sizes)
        if not self.spec.sizes_pass(hist, self.rows):
            self.fail_on_sizes.add(node)
        self.bounds[node] = self.metric.bound(sizes, self.rows, self.spec.max_suppression > 0)
        return self.bounds[node]

    def passes_monotone_part(self, node: tuple[Level, ...]) -> bool:
        """Whether the monotone part alone passes within the budget (for the subset property)."""
        return not self(node).prune_down

    @property
    def evaluated(self) -> int:
        return len(self.results)


def _tally(ev: Evaluator, strategy: str) -> StrategyWork:
    """The evaluator's work so far (a strategy's own is the difference across it)."""
    subset = sum(1 for node in ev.results if None in node)
    return StrategyWork(strategy, len(ev.results) - subset, subset, ev.probed, time.perf_counter())


def _minimal(nodes: Sequence[Node]) -> list[Node]:
    """Nodes of ``nodes`` with no other node of ``nodes`` strictly below them."""
    if not nodes:
        return []
    m = np.array(nodes, dtype=np.int32)
    out = []
    for i, n in enumerate(m):
        below = (m <= n).all(axis=1)
        below[i] = False
        if not below.any():
            out.append(tuple(int(x) for x in n))
    return sorted(out, key=lambda n: (sum(n), n))


def brute_force(lattice: Lattice, ev: Evaluator) -> tuple[list[Node], Optimum | None]:
    passing: list[Node] = []
    for lo in range(0, lattice.size, AHEAD):
        ahead = lattice.ordered[lo : lo + AHEAD]
        ev.prefetch(ahead)
        passing += [n for n in ahead if ev(n).passed]
    return _minimal(passing), _best(passing, ev, lattice)


def _better(loss: Loss, idx: int, best_loss: Loss, best_idx: int) -> bool:
    """Lower loss wins, compared exactly; only an equal loss goes to the tie rule: the lower height, then the
    lexicographically smaller node (the lower index in ``Lattice.ordered``).

    >>> _better(5_000_000_000, 2, 5_000_000_002, 1), _better(7, 1, 7, 2), _better(7, 2, 7, 1)
    (True, True, False)
    """
    if loss == best_loss:
        return idx < best_idx
    return loss < best_loss


def _best(nodes: Sequence[Node], ev: Evaluator, lattice: Lattice) -> Optimum | None:
    best: tuple[Loss, int] | None = None
    for n in nodes:
        if n in ev.losses:
            cand = (ev.losses[n], lattice.index[n])
            if best is None or _better(*cand, *best):
                best = cand
    if best is None:
        return None
    node = lattice.ordered[best[1]]
    return Optimum(node, ev.metric.name, ev.scores[node])


def incognito(lattice: Lattice, ev: Evaluator) -> list[Node]:
    """Every minimal passing node, by Incognito's subset-lattice breadth-first search."""
    d = len(lattice.heights)
    spec = ev.spec
    monotone_part = Specification(spec.monotone_models, spec.max_suppression)
    full_monotone = spec.tags_up
    # passing[S] = set of level tuples (over the attributes of S) that pass the monotone part
    passing: dict[tuple[int, ...], set[tuple[int, ...]]] = {}
    for size in range(1, d):
        if not monotone_part.models:
            break
        for subset in itertools.combinations(range(d), size):
            passing[subset] = _subset_bfs(lattice, ev, subset, passing)
    subset = tuple(range(d))
    candidates = [n for n in lattice.ordered if _projections_pass(n, subset, passing)]
    found: list[Node] = []
    marked: set[Node] = set()
    for _, same in itertools.groupby(candidates, key=sum):  # a height at a time: its unmarked nodes are evaluated
        height = list(same)
        ev.prefetch([n for n in height if n not in marked])
        for node in height:
            if node in marked:
                found.append(node)
                continue
            if ev(node).passed:
                found.append(node)
                if full_monotone:
                    marked.update(_generalizations(lattice, node))
    if full_monotone:
        found_set = set(found)
        return sorted(
            (n for n in found if not any(p in found_set for p in lattice.predecessors(n))), key=lambda n: (sum(n), n)
        )
    return _minimal(found)


def _projections_pass(
    levels: Sequence[int], subset: tuple[int, ...], passing: dict[tuple[int, ...], set[tuple[int, ...]]]
) -> bool:
    if len(subset) == 1:
        return True
    for drop in range(len(subset)):
        smaller = subset[:drop] + subset[drop + 1 :]
        table = passing.get(smaller)
        if table is None:
            return True  # no subset phase ran (no monotone part): nothing to prune with
        if tuple(levels[:drop]) + tuple(levels[drop + 1 :]) not in table:
            return False
    return True


def _subset_bfs(
    lattice: Lattice, ev: Evaluator, subset: tuple[int, ...], passing: dict[tuple[int, ...], set[tuple[int, ...]]]
) -> set[tuple[int, ...]]:
    """Breadth-first over one subset's sub-lattice with the monotone part; returns its passing nodes."""
    heights = [lattice.heights[i] for i in subset]
    sub = Lattice(tuple(heights))
    result: set[tuple[int, ...]] = set()

    def full(levels: tuple[int, ...]) -> tuple[Level, ...]:
        node: list[Level] = [None] * len(lattice.heights)
        for i, lv in zip(subset, levels):
            node[i] = lv
        return tuple(node)

    for _, same in itertools.groupby(sub.ordered, key=sum):  # a height at a time: a pass marks only nodes above
        frontier = [
            levels
            for levels in same
            if levels not in result  # marked by a passing node below
            and _projections_pass(levels, subset, passing)
        ]
        ev.prefetch([full(levels) for levels in frontier])
        for levels in frontier:
            if ev.passes_monotone_part(full(levels)):
                result.update(_generalizations(sub, levels))
    return result


def _generalizations(lattice: Lattice, node: Node) -> list[Node]:
    return [n for n, up in zip(lattice.ordered, lattice.above(node)) if up]


class Bounds:
    """Per node, the greatest lower bound on its loss given by the evaluated nodes below it, kept exactly.

    A float64 shadow (``level``) decides wherever it can: rounding to the nearest float is monotone, so a
    greater float means a greater exact value; where the floats are equal the exact values (``exact`` of
    the evaluated node ``source`` that gave the bound) decide.  A float metric's ``margin`` (its rounding
    allowance) is subtracted before a bound may prune.

    >>> b = Bounds(3, margin=0.0)       # 2**60 + 2 and 2**60 are the same float64
    >>> b.raise_to(np.array([True, True, True]), 0, 2**60)
    >>> b.raise_to(np.array([False, True, True]), 1, 2**60 + 2)
    >>> b.no_better(2**60 + 1, best_idx=0).tolist()
    [False, True, True]
    >>> b.no_better(2**60 + 2, best_idx=1).tolist()   # an equal bound prunes only the nodes after the best
    [False, False, True]
    """

    def __init__(self, size: int, margin: float) -> None:
        self.level = np.full(size, -np.inf)
        self.source = np.full(size, -1, dtype=np.int64)
        self.rounded = np.zeros(size, dtype=bool)  # the source's value is not exactly its float
        self.exact: dict[int, Loss] = {}
        self.margin = margin
        self.index = np.arange(size)

    def raise_to(self, mask: np.ndarray, i: int, value: Loss) -> None:
        """Every node in ``mask`` has a loss of at least ``value`` (evaluated node ``i``'s bound)."""
        self.exact[i] = value
        f, rounded = _as_float(value)
        where = np.flatnonzero(mask)
        here = self.level[where]
        above = where[here < f]
        self.level[above], self.source[above], self.rounded[above] = f, i, rounded
        equal = where[here == f]
        if not rounded:
            equal = equal[self.rounded[equal]]  # both exact floats: equal floats are equal values
        if len(equal):
            sources, inverse = np.unique(self.source[equal], return_inverse=True)
            greater = np.array([value > self.exact[int(j)] for j in sources])[inverse.reshape(-1)]
            self.source[equal[greater]], self.rounded[equal[greater]] = i, rounded

    def no_better(self, best: Loss, best_idx: int) -> np.ndarray:
        """Nodes whose bound proves them no better than ``best`` (node ``best_idx``): above it, or equal and
        later in the tie order."""
        later = self.index > best_idx
        if self.margin:
            slack = self.margin * max(1.0, abs(float(best)))
            low = self.level - slack
            return (low > float(best)) | ((low >= float(best)) & later)
        f, rounded = _as_float(best)
        out = self.level > f
        equal = np.flatnonzero(self.level == f)
        if not rounded:
            plain = equal[~self.rounded[equal]]
            out[plain] = later[plain]
            equal = equal[self.rounded[equal]]
        if len(equal):
            sources, inverse = np.unique(self.source[equal], return_inverse=True)
            order = np.array([(self.exact[int(j)] > best) - (self.exact[int(j)] < best) for j in sources])
            order = order[inverse.reshape(-1)]
            out[equal] = (order > 0) | ((order == 0) & later[equal])
        return out


def _as_float(value: Loss) -> tuple[float, bool]:
    """``value`` as a float64, and whether that rounded it (ints beyond 2^53, most fractions)."""
    f = float(value)
    if isinstance(value, float):
        return f, False
    if isinstance(value, int):
        return f, int(f) != value
    return f, Fraction(f) != value


def optimal(lattice: Lattice, ev: Evaluator) -> Optimum | None:
    """The proven-optimal passing node: branch and bound with predictive tagging."""
    return _BranchAndBound(lattice, ev).run()


class _BranchAndBound:
    """``optimal``'s state: each node's status (0 unknown, 1 passes, -1 fails), which nodes were evaluated, the
    bounds the evaluated nodes give the nodes above them, and the best passing node so far."""

    def __init__(self, lattice: Lattice, ev: Evaluator) -> None:
        self.lattice, self.ev = lattice, ev
        self.size = lattice.size
        self.status = np.zeros(self.size, dtype=np.int8)
        self.evaluated = np.zeros(self.size, dtype=bool)
        self.bounds = Bounds(self.size, ev.metric.rounding)
        self.best_loss: Loss = 0
        self.best_idx = self.size  # none yet
        self.tags_up = ev.spec.tags_up
        self.rel = np.array([1.0 / h if h else 0.0 for h in lattice.heights])

    def run(self) -> Optimum | None:
        status, evaluated, from_top = self.status, self.evaluated, False
        while True:
            open_ = (status != -1) & ~evaluated & ~self.pruned()
            if not open_.any():
                break
            unknown = open_ & (status == 0)
            if unknown.any() and (self.tags_up or self.ev.spec.monotone_models):
                # Alternately: a chain upward from the lowest unknown node, binary-searched (finds the border fast
                # when most nodes pass), and the highest unknown node alone (when few pass, a failure there tags
                # its whole down-set: the border's maximal failing nodes are what the search must find).
                from_top = not from_top
                candidates = np.flatnonzero(unknown)
                path = self.chain(int(candidates[-1] if from_top else candidates[0]), unknown)
                while True:
                    live = (status == 0) & ~evaluated & ~self.pruned()
                    remaining = [j for j in path if live[j]]
                    if not remaining:
                        break
                    self.evaluate(remaining[len(remaining) // 2])
            else:
                candidates = np.flatnonzero(open_)
                order = np.lexsort((candidates, self.bounds.level[candidates]))
                self.evaluate(int(candidates[order[0]]))
        if self.best_idx >= self.size:
            return None
        node = self.lattice.ordered[self.best_idx]
        return Optimum(node, self.ev.metric.name, self.ev.scores[node])

    def chain(self, start: int, unknown: np.ndarray) -> list[int]:
        """A chain of unknown nodes upward from ``start``: at each step the successor that generalizes least
        (its greatest relative height, then their sum, then the attribute)."""
        lattice = self.lattice
        path = [start]
        while True:
            here = lattice.matrix[path[-1]]
            options = []
            for a in range(len(lattice.heights)):
                if here[a] < lattice.heights[a]:
                    succ = here.copy()
                    succ[a] += 1
                    j = lattice.index[tuple(int(x) for x in succ)]
                    if unknown[j]:
                        options.append(((succ * self.rel).max(), float((succ * self.rel).sum()), a, j))
            if not options:
                return path
            path.append(min(options)[3])

    def pruned(self) -> np.ndarray:
        """Nodes whose bound proves them no better than the best: above it, or tied and later in order."""
        if self.best_idx >= self.size:
            return np.zeros(self.size, dtype=bool)
        return self.bounds.no_better(self.best_loss, self.best_idx)

    def evaluate(self, i: int) -> None:
        """Evaluate node ``i`` — unless its block sizes alone prove it no better than the best — and tag."""
        ev, lattice, node = self.ev, self.lattice, self.lattice.ordered[i]
        if self.best_idx < self.size and not self.evaluated[i]:
            bound = ev.bound(node)
            if bound is not None:  # its sizes alone may prove it no better: then its verdict is not needed
                self.bounds.raise_to(lattice.above(node), i, bound)
                if self.bounds.no_better(self.best_loss, self.best_idx)[i] and node not in ev.fail_on_sizes:
                    ev.probed += 1
                    return
                # a node whose sizes already fail the monotone part is evaluated anyway: its verdict costs no
                # query (the sizes decide it) and its failure tags every node below it
        e = ev(node)
        self.evaluated[i] = True
        up = lattice.above(node)
        self.bounds.raise_to(up, i, ev.bounds[node])
        if e.passed:
            self.status[i] = 1
            if self.tags_up:
                self.status[up & (self.status == 0)] = 1
            loss = ev.losses[node]
            if self.best_idx >= self.size or _better(loss, i, self.best_loss, self.best_idx):
                self.best_loss, self.best_idx = loss, i
        else:
            self.status[i] = -1
            if e.prune_down:
                self.status[lattice.below(node)] = -1


def run(
    strategies: Sequence[str],
    lattice: Lattice,
    attributes: Sequence[str],
    counts_for: CountsFn,
    spec: Specification,
    metric: Metric,
    rows: int,
    on_evaluate: Callable[[int], None] | None = None,
    probe: CountsFn | None = None,
    prefetch: PrefetchFn | None = None,
    admits: Admits | None = None,
) -> SearchResult:
    """Run one or more strategies on one evaluator (counts and verdicts shared between them).  ``probe``: a
    cheaper counts function (a node's block sizes) that the metric's bound reads; ``optimal`` asks it
    before evaluating a node and skips the models' check where the bound proves the node no better than the
    best found (issue 11: a histogram is shipped only for nodes that could still be the optimum).
    ``prefetch``: the batch interface — told the nodes a strategy will evaluate next whatever their verdicts
    (``brute-force``: the next nodes in order; ``incognito``: each height's frontier), so that their counts can
    be read together.  ``optimal`` announces nothing: its next node depends on the last one's verdict, and
    announcing more counted nodes it then skipped (Spark, 1M census, k = 10: the whole chain it binary-searches
    181.5 → 247.3 s, bench/results/spark_1000000-ab-chain.json; the binary search's first three probes 155.6 →
    155.0 s, in-process).  ``admits``: a further requirement on a node's counts that, like a monotone model,
    holds on every node above one where it holds (``blockfloor.BlockFloor``): a node it rejects fails, and so
    does every node below."""
    started = time.perf_counter()
    ev = Evaluator(counts_for, spec, metric, rows, on_evaluate, probe, prefetch, admits)
    result = SearchResult(tuple(attributes), lattice.heights, lattice.size, strategies=tuple(strategies))
    for strategy in strategies:
        try:
            search = STRATEGIES.get(strategy)
        except KeyError:
            raise ValueError(f"unknown strategy {strategy!r}; one of {', '.join(STRATEGIES.names())}") from None
        before = _tally(ev, strategy)
        search(lattice, ev, result)
        after = _tally(ev, strategy)
        result.work.append(
            StrategyWork(
                strategy,
                after.lattice_nodes - before.lattice_nodes,
                after.subset_nodes - before.subset_nodes,
                after.nodes_bounded - before.nodes_bounded,
                after.seconds - before.seconds,
            )
        )
    result.any_passing = bool(result.minimal) or result.optimal is not None
    if not result.any_passing:
        result.minimal, result.optimal = [], None
    result.nodes_evaluated = ev.evaluated
    result.nodes_bounded = ev.probed
    result.evaluations = [(node, e.passed, e.suppressed_rows, ev.scores.get(node)) for node, e in ev.results.items()]
    result.seconds = time.perf_counter() - started
    return result


# The strategies ``[search] strategy`` and ``veil search --strategy`` name, in the order help lists them: each
# runs on the shared evaluator and fills its part of the result.


@STRATEGIES.register("optimal")
def _optimal(lattice: Lattice, ev: Evaluator, result: SearchResult) -> None:
    result.optimal = optimal(lattice, ev)


@STRATEGIES.register("incognito")
def _incognito(lattice: Lattice, ev: Evaluator, result: SearchResult) -> None:
    result.minimal = incognito(lattice, ev)


@STRATEGIES.register("brute-force")
def _brute_force(lattice: Lattice, ev: Evaluator, result: SearchResult) -> None:
    result.minimal, result.optimal = brute_force(lattice, ev)
