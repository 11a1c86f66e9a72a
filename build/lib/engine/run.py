"""Opening a run: config → backend session → prepared warehouse; and the JSON documents the read-only
commands print (``counts``, ``check``).  Nothing here writes to the warehouse but temporary tables."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from engine import search
from engine.backends import open_backend
from engine.config import Config, sensitive_needed
from engine.counts import NodeCounts
from engine.lattice import Lattice
from engine.metrics import Metric, make_metric
from engine.privacy import Evaluation, Specification
from engine.search import SearchResult
from engine.warehouse import Stats, Warehouse, value_text


@contextmanager
def open_warehouse(config: Config, *, sensitive: Sequence[str] | None = None,
                   on_step: Callable[[str], None] = lambda _m: None, rollup: bool = True,
                   **tuning: Any) -> Iterator[Warehouse]:
    """A prepared warehouse for ``config`` on one connection; temporary tables vanish on exit.

    ``sensitive`` defaults to the columns the models read (none when they need block sizes only)."""
    backend = open_backend(config.source.resolved_url())
    counted = tuple(sensitive) if sensitive is not None else tuple(sensitive_needed(config))
    with backend.session() as session:
        wh = Warehouse(session, config.source, config.quasi_identifiers, counted, on_step=on_step, rollup=rollup,
                       **tuning)
        wh.prepare()
        domains = {d.name: d for d in wh.domains}
        for model in config.models:
            if model.attribute is None or model.attribute in domains:
                model.validate(domains)
        yield wh


def counts_document(wh: Warehouse, nc: NodeCounts) -> dict[str, Any]:
    """The stable JSON of ``veil counts``."""
    labels = nc.labels()
    sizes = nc.sizes.tolist()
    per_attr = []
    for dom in wh.domains:
        matrix = nc.blocks(dom.name).counts
        texts = [value_text(v) for v in dom.values.tolist()]
        per_attr.append((dom.name, matrix, texts))
    blocks = []
    for b in range(nc.n_blocks):
        sensitive = {}
        for name, matrix, texts in per_attr:
            row = matrix[b]
            sensitive[name] = {texts[i]: int(row[i]) for i in row.nonzero()[0].tolist()}
        blocks.append({"key": [value_text(v) for v in labels[b]], "size": int(sizes[b]), "sensitive": sensitive})
    return {"attributes": list(wh.attributes), "node": list(nc.node), "rows": wh.rows, "blocks": blocks}


def check_document(wh: Warehouse, spec: Specification, nc: NodeCounts, evaluation: Evaluation) -> dict[str, Any]:
    """The stable JSON of ``veil check``.  ``achieved`` and ``violating_blocks`` are over all blocks before
    suppression; a model's ``passed`` means its own failing blocks fit in the suppression budget."""
    budget = spec.budget(wh.rows)
    sizes = nc.sizes
    models = []
    for m, v in zip(spec.models, evaluation.verdicts):
        own = int(sizes[~v.passed].sum())
        models.append({"type": m.type, "attribute": m.attribute, "passed": own <= budget + 1e-9,
                       "achieved": v.achieved, "violating_blocks": v.violating})
    return {
        "attributes": list(wh.attributes),
        "node": list(nc.node),
        "rows": wh.rows,
        "blocks": nc.n_blocks,
        "passed": evaluation.passed,
        "suppressed_rows": evaluation.suppressed_rows if evaluation.passed else 0,
        "models": models,
    }


def metric_for(wh: Warehouse, name: str) -> Metric:
    """The configured utility metric, with what KL-divergence needs from the hierarchies and the bottom."""
    leaf = [[h.leaf_counts(j) for j in range(h.height + 1)] for h in wh.hierarchies]
    bottom = wh.counts(tuple(0 for _ in wh.hierarchies)).sizes if name == "kl-divergence" else None
    return make_metric(name, wh.heights, leaf, bottom)


def search_warehouse(wh: Warehouse, config: Config, strategies: Sequence[str],
                     progress: Console | None = None) -> SearchResult:
    """Search ``wh``'s lattice with the config's models, budget and metric (counts shared by strategies)."""
    lattice = Lattice(wh.heights)
    spec = Specification(config.models, config.search.max_suppression)
    metric = metric_for(wh, config.search.metric)
    if progress is None:
        return search.run(strategies, lattice, wh.attributes, wh.counts, spec, metric, wh.rows)
    columns = (TextColumn("searching"), BarColumn(), MofNCompleteColumn(), TextColumn("nodes"), TimeElapsedColumn())
    with Progress(*columns, console=progress, transient=True) as bar:
        task = bar.add_task("search", total=lattice.size)
        return search.run(strategies, lattice, wh.attributes, wh.counts, spec, metric, wh.rows,
                          on_evaluate=lambda n: bar.update(task, completed=n))


def run_search(config: Config, strategies: Sequence[str], on_step: Callable[[str], None] = lambda _m: None,
               progress: Console | None = None) -> tuple[SearchResult, Stats]:
    with open_warehouse(config, on_step=on_step) as wh:
        result = search_warehouse(wh, config, strategies, progress)
        return result, wh.stats
