"""Opening a run: config → backend session → prepared warehouse; and the JSON documents the read-only
commands print (``counts``, ``check``).  Nothing here writes to the warehouse but temporary tables."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any, NamedTuple, cast

import numpy as np
import sqlalchemy as sa

from veil import allocator, log, search
from veil import queries as q
from veil.backends import open_backend
from veil.backends.base import Session
from veil.config import Config, sensitive_needed
from veil.counts import Level, NodeCounts, SizeHistogram, full_levels
from veil.errors import NoSolutionError
from veil.hierarchytables import resolve as resolve_hierarchies
from veil.lattice import Lattice, NodeSet
from veil.metrics import Metric, OnSizes, make_metric
from veil.privacy import Evaluation, Specification
from veil.queries.ddl import create_table
from veil.search import SearchResult
from veil.warehouse import Stats, Warehouse, value_text


def prepare_run(
    session: Session,
    config: Config,
    *,
    sensitive: Sequence[str] | None = None,
    on_step: Callable[[str], None] = lambda _m: None,
    rollup: bool = True,
    **tuning: Any,
) -> tuple[Config, Warehouse]:
    """On an open session: read table-backed hierarchies (``config`` returned with them in memory), prepare
    the warehouse and validate the models against the sensitive domains.

    ``sensitive`` defaults to the columns the models read (none when they need block sizes only)."""
    config = resolve_hierarchies(session, config)
    counted = tuple(sensitive) if sensitive is not None else tuple(sensitive_needed(config))
    # one NULL policy for every command: published sensitive columns no model reads follow it too (as in release)
    tuning.setdefault("null_checked", tuple(c for c in config.sensitive if c not in counted))
    tuning.setdefault("local_cells", config.search.local_cells)
    wh = Warehouse(session, config.source, config.quasi_identifiers, counted, on_step=on_step, rollup=rollup, **tuning)
    wh.prepare()
    domains = {d.name: d for d in wh.domains}
    for model in config.models:
        if model.attribute is None or model.attribute in domains:
            model.validate(domains)
    return config, wh


@contextmanager
def open_run(config: Config, **options: Any) -> Iterator[tuple[Config, Warehouse]]:
    """``prepare_run`` on one connection of the config's backend; temporary tables vanish on exit.  Use the
    returned config's models: its hierarchies are in memory."""
    backend = open_backend(config.source.resolved_url())
    with backend.session() as session:
        yield prepare_run(session, config, **options)


@contextmanager
def open_warehouse(config: Config, **options: Any) -> Iterator[Warehouse]:
    """A prepared warehouse for ``config`` on one connection (see ``open_run``)."""
    with open_run(config, **options) as (_, wh):
        yield wh


def counts_document(wh: Warehouse, nc: NodeCounts, limit: int | None = None) -> dict[str, Any]:
    """The stable JSON of ``veil counts``: every block in the node's order; with ``limit`` (``veil counts
    --limit``, 0: no bound) the smallest blocks first (ties in the node's order), at most ``limit`` of them, and
    the totals — ``block_count``, ``blocks_not_shown``, ``rows_not_shown`` — beside them."""
    labels = nc.labels()
    sizes = nc.sizes.tolist()
    per_attr = []
    for dom in wh.domains:
        bc = nc.blocks(dom.name)
        texts = [value_text(v) for v in dom.values.tolist()]
        per_attr.append((dom.name, bc.indptr.tolist(), bc.codes.tolist(), bc.counts.tolist(), texts))
    order = range(nc.n_blocks) if limit is None else np.argsort(nc.sizes, kind="stable").tolist()
    shown = order if not limit else order[:limit]
    blocks: list[dict[str, Any]] = []
    for b in shown:
        sensitive = {}
        for name, indptr, codes, counts, texts in per_attr:
            cells = range(indptr[b], indptr[b + 1])
            sensitive[name] = {texts[codes[i]]: counts[i] for i in cells}
        blocks.append({"key": [value_text(v) for v in labels[b]], "size": int(sizes[b]), "sensitive": sensitive})
    doc = {"attributes": list(wh.attributes), "node": list(nc.node), "rows": wh.rows, "blocks": blocks}
    if limit is None:
        return doc
    return {
        **doc,
        "order": "smallest first",
        "limit": limit,
        "block_count": nc.n_blocks,
        "blocks_not_shown": nc.n_blocks - len(blocks),
        "rows_not_shown": int(nc.sizes.sum()) - sum(b["size"] for b in blocks),
    }


def check_document(
    wh: Warehouse, spec: Specification, counts: NodeCounts | SizeHistogram, evaluation: Evaluation
) -> dict[str, Any]:
    """The stable JSON of ``veil check``.  ``achieved`` and ``violating_blocks`` are over all blocks before
    suppression; a model's ``passed`` means its own failing blocks fit in the suppression budget.  ``counts``
    is the whole node or its summary (``evaluate_node``: verdicts per (size, failing models), weighted)."""
    budget = spec.budget(wh.rows)
    weights = evaluation.weights if evaluation.weights is not None else np.ones(len(counts.sizes), dtype=np.int64)
    rows_of = counts.sizes * weights
    models = []
    for m, v in zip(spec.models, evaluation.verdicts):
        own = int(rows_of[~v.passed].sum())
        models.append(
            {
                "type": m.type,
                "attribute": m.attribute,
                "passed": own <= budget,
                "achieved": v.achieved,
                "violating_blocks": int(weights[~v.passed].sum()),
            }
        )
    return {
        "attributes": list(wh.attributes),
        "node": list(counts.node),
        "rows": wh.rows,
        "blocks": int(weights.sum()),
        "passed": evaluation.passed,
        "suppressed_rows": evaluation.suppressed_rows if evaluation.passed else 0,
        "models": models,
    }


def evaluate_node(
    wh: Warehouse, spec: Specification, node: tuple[Level, ...]
) -> tuple[NodeCounts | SizeHistogram, Evaluation]:
    """One node's evaluation as ``veil check`` shows it, holding no more than a search does: size-only
    models from the node's size histogram, models judging blocks on their own chunk by chunk (each model's
    verdicts and level exact, never bounded), models reading supersets on the whole node."""
    if not spec.streamable:
        counts = wh.counts(node)
        return counts, spec.evaluate(counts, wh.rows)
    if spec.sizes_only:
        hist = wh.sizes(node)
        return hist, spec.evaluate_sizes(hist, wh.rows)
    summary = spec.summarize(None, lambda: wh.stream(node), wh.rows, node)
    assert summary.evaluation is not None
    return summary, summary.evaluation


def generalized_select(
    wh: Warehouse, counts: NodeCounts, suppressed: np.ndarray, published: Sequence[str], not_null: Sequence[str] = ()
) -> sa.Select[Any]:
    """The rows a release publishes at ``counts.node``: each quasi-identifier generalized through its
    dimension table, the other ``published`` columns as they are, rows of the ``suppressed`` blocks dropped
    (their codes listed in a temporary table first) and rows with NULLs in ``not_null`` left out.
    ``veil release`` materializes it; ``veil.anonymize`` reads it back."""
    if suppressed.any():
        table = q.suppressed_table(len(wh.attributes))
        wh.session.execute(create_table(table), "listing suppressed blocks")
        wh.session.bulk_load(
            table, [tuple(int(c) for c in row) for row in counts.keys[suppressed]], "listing suppressed blocks"
        )
    return q.release_select(
        wh.source_table(published),
        wh.layout,
        full_levels(counts.node),
        wh.attributes,
        published,
        bool(suppressed.any()),
        not_null,
    )


def metric_for(wh: Warehouse, name: str, config: Config | None = None) -> Metric:
    """The configured utility metric, with what KL-divergence needs from the hierarchies and the bottom."""
    leaf = [[h.leaf_counts(j) for j in range(h.height + 1)] for h in wh.hierarchies]
    bottom = wh.counts(tuple(0 for _ in wh.hierarchies)).sizes if name == "kl-divergence" else None
    return make_metric(name, wh.heights, leaf, bottom, config=config, warehouse=wh)  # workload: [[workload]]


_NONE = np.zeros(0, dtype=np.int64)


class SearchCounts(NamedTuple):
    """What a search of a warehouse reads: each node's counts, the metric on them, and ``probe``, the node's
    block sizes alone (the metric's bound) when those come cheaper than its evaluation (``search.run``).  The
    counts are each node's ``SizeHistogram`` when the metric is ``OnSizes`` (``_sized``)."""

    counts_for: search.CountsFn
    metric: Metric
    probe: search.CountsFn | None = None
    prefetch: Callable[[Sequence[tuple[Level, ...]]], None] | None = None  # sizes of the next nodes together


def search_counts(wh: Warehouse, spec: Specification, metric: Metric) -> SearchCounts:
    """The counts function, metric and probe a search of ``wh`` uses.

    When every model judges blocks on their own and the metric needs block sizes only, a node arrives as
    its ``SizeHistogram`` (one SQL aggregate) and, only when the sizes do not decide it, its verdicts come from
    threshold tests computed in SQL (every model size-only or reducible, ``Specification.reductions``) or its
    counts stream in chunks through the specification (``Specification.summarize``): the Python process never
    holds a node's histogram.  The probe is then the size query alone (when the models read more than sizes),
    so a node that cannot be the optimum costs no test and no stream — or no query at all when the metric's
    bound is a function of the node's levels (height, precision).  Otherwise (models reading supersets,
    KL-divergence) whole-node counts and no probe.  Nodes read through their sizes may be counted several at a
    time (``prefetch``, ``Warehouse.prefetch_sizes``)."""
    if not (spec.streamable and OnSizes.supports(metric)):
        return SearchCounts(wh.counts, metric)

    try:
        hash(spec)
        memo = wh.summaries  # shared by the searches of one run (a few numbers per node)
    except TypeError:  # a model with unhashable parameters: remember within this search only
        memo = {}
    sized = NodeSet(len(wh.heights))  # nodes where the monotone part's size condition held
    reductions = spec.reductions if wh.tests_in_sql else None

    def counts_for(node: tuple[Level, ...]) -> SizeHistogram:
        key = (spec, node)
        if key not in memo:
            hist = wh.counted_sizes(node)  # the probe's, when it ran
            known = hist is None and not spec.sizes_only and (spec.size_floor <= 1 or sized.any_finer(node))
            hist = hist if hist is not None or known else wh.sizes(node)
            tests = (
                None
                if reductions is None
                else (
                    lambda: wh.block_tests(
                        node, reductions[0], [(r.statistic.value, r.threshold) for r in reductions[1]]
                    )
                )
            )
            summary = spec.summarize(hist, lambda: wh.stream(node), wh.rows, node, tests)
            if hist is not None and spec.sizes_pass(summary, wh.rows):
                sized.add(node)
            memo[key] = summary
        return memo[key]

    on_sizes = OnSizes(metric)
    if not on_sizes.bound_reads_sizes:  # the bound is the node's levels': no query at all
        # bounding a node before evaluating it pays where evaluating costs statements; where every node is
        # counted here, its evaluation (verdict and tags too) costs about what bounding it would save
        levels = None if wh.local is not None else _sized(lambda node: SizeHistogram(tuple(node), _NONE, _NONE))
        return SearchCounts(_sized(counts_for), on_sizes, levels, wh.prefetch_sizes)
    return SearchCounts(_sized(counts_for), on_sizes, None if spec.sizes_only else _sized(wh.sizes), wh.prefetch_sizes)


def _sized(counts_for: Callable[[tuple[Level, ...]], SizeHistogram]) -> search.CountsFn:
    """A node's ``SizeHistogram`` where ``search.run`` takes its ``NodeCounts`` (``search.CountsFn``): the search
    reads a node's counts only through the specification and ``admits`` (both take either) and the metric, here
    ``OnSizes``, which reads a histogram — what the types cannot say, hence the cast."""
    return cast(search.CountsFn, counts_for)


def search_lattice(
    wh: Warehouse,
    config: Config,
    strategies: Sequence[str],
    spec: Specification,
    on_evaluate: Callable[[int], None] | None = None,
    admits: search.Admits | None = None,
) -> SearchResult:
    """Search ``wh``'s lattice with ``spec`` and the config's metric (counts shared by strategies; ``admits``: a
    further requirement that holds upward, ``search.run``); ``on_evaluate`` told each node evaluated."""
    counts_for, metric, probe, prefetch = search_counts(wh, spec, metric_for(wh, config.search.metric, config))
    # every node counted here from the cells held (at most ``local_cells``): its temporaries reused by the heap
    with allocator.reusing() if wh.local is not None else nullcontext():
        return search.run(
            strategies,
            Lattice(wh.heights),
            wh.attributes,
            counts_for,
            spec,
            metric,
            wh.rows,
            on_evaluate=on_evaluate,
            probe=probe,
            prefetch=prefetch,
            admits=admits,
        )


def search_warehouse(wh: Warehouse, config: Config, strategies: Sequence[str]) -> SearchResult:
    """Search ``wh``'s lattice with the config's models, budget and metric; a progress bar on a terminal."""
    spec = Specification(config.models, config.search.max_suppression)
    with log.progress("searching", Lattice(wh.heights).size) as update:
        return search_lattice(wh, config, strategies, spec, update)


def run_search(
    config: Config, strategies: Sequence[str], on_step: Callable[[str], None] = lambda _m: None
) -> tuple[SearchResult, Stats, NoSolutionError | None]:
    """Search; when no node passes, also the error naming each failing model's best level."""
    with open_run(config, on_step=on_step) as (config, wh):
        result = search_warehouse(wh, config, strategies)
        failure = (
            None if result.any_passing else no_solution(wh, Specification(config.models, config.search.max_suppression))
        )
        return result, wh.work_done(), failure


def no_solution(wh: Warehouse, spec: Specification) -> NoSolutionError:
    """Why no node passes: the models that fail even at the most general node, with the best level they
    reach there (``models`` in the ``--json`` document)."""
    top = tuple(wh.heights)
    evaluation = spec.evaluate(wh.counts(top), wh.rows)
    failing = [
        {
            "type": m.type,
            "attribute": m.attribute,
            "best_level": v.achieved,
            "at_node": list(top),
            "describe": m.describe(),
        }
        for m, v in zip(spec.models, evaluation.verdicts)
        if not v.passed.all()
    ]
    parts = [
        f"{f['describe']} fails even at the most general node {list(top)} (best level reached: "
        f"{'undefined' if f['best_level'] is None else format(f['best_level'], '.6g')})"
        for f in failing
    ]
    if not parts:
        parts.append("every model holds at the most general node on its own, but no node satisfies them together")
    budget = f" within a suppression budget of {spec.max_suppression:g}" if spec.max_suppression else ""
    for f in failing:
        del f["describe"]
    return NoSolutionError(
        f"no lattice node satisfies the models{budget}: " + "; ".join(parts) + "; nothing was published", models=failing
    )
