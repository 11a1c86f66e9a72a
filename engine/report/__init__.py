"""The release report: one self-contained HTML file per release or candidate node (README "Audit and
report").  ``build_report`` serves ``veil report``; ``write_report`` is what the release job calls to put a
report next to each published version.

Modules: ``content`` (what the report shows, from counts; numpy only), ``formatting`` (numbers for people),
``charts`` (Vega-Lite charts through Altair, rendered to inline SVG by vl-convert), ``page`` (the HTML);
``report.js`` / ``report.css`` are inlined package data (details on hover).  The charting libraries load only
here, and this package loads only when a report is asked for.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from veil import search
from veil.adversary.attacks import audit_counts
from veil.adversary.subject import (
    ReleaseRecord,
    node_label,
    node_of,
    open_subject,
    prepared_warehouse,
    table_subject,
)
from veil.backends import open_backend
from veil.config import METRICS, Config
from veil.errors import NoSolutionError
from veil.lattice import Lattice
from veil.counts import NodeCounts, full_levels
from veil.metrics import REGISTRY, Metric, make_metric
from veil.privacy import Specification
from veil.report import content, page, seriesview
from veil.search import SearchResult
from veil.warehouse import Warehouse

Node = tuple[int, ...]


def metrics_for(wh: Warehouse, config: Config | None = None) -> dict[str, Metric]:
    """Every utility metric of the lattice (KL-divergence with the hierarchies' leaves and the bottom's sizes);
    a metric built from the config (``workload``: its ``[[workload]]`` queries) only when ``config`` lists them."""
    from veil.workloadsettings import workload_of

    leaf = [[h.leaf_counts(j) for j in range(h.height + 1)] for h in wh.hierarchies]
    bottom = wh.counts(tuple(0 for _ in wh.hierarchies)).sizes
    has_workload = config is not None and bool(workload_of(config))
    return {
        name: make_metric(name, wh.heights, leaf, bottom, config=config, warehouse=wh)
        for name in METRICS
        if not REGISTRY[name].needs_config or has_workload
    }


def workload_view(
    config: Config, wh: Warehouse, result: SearchResult, node: Node, metrics: dict[str, Metric]
) -> content.WorkloadView | None:
    """The ``[[workload]]`` queries' errors at ``node``, at the search's optimal node when it minimized the
    workload error, and at the discernibility-optimal node (searched here unless the search was that one);
    ``None`` without a workload.  A node's suppressed blocks are those failing the models, as in the utility
    table."""
    from veil.workload import WorkloadMetric

    metric = metrics.get("workload")
    if not isinstance(metric, WorkloadMetric):
        return None
    spec = Specification(config.models, config.search.max_suppression)
    optimal = result.optimal.node if result.optimal is not None else None
    if config.search.metric == "discernibility":
        discernible = optimal
    else:
        found = search.run(
            ("optimal",), Lattice(wh.heights), wh.attributes, wh.counts, spec, metrics["discernibility"], wh.rows
        ).optimal
        discernible = found.node if found is not None else None
    wanted = [("this node", node)]
    if optimal is not None and config.search.metric == "workload":
        wanted.append(("workload-optimal", tuple(optimal)))
    if discernible is not None:
        wanted.append(("discernibility-optimal", tuple(discernible)))
    labels: dict[Node, list[str]] = {}
    for label, n in wanted:
        labels.setdefault(tuple(int(x) for x in n), []).append(label)
    rows = []
    for n, names in labels.items():
        counts = wh.counts(n)
        gone = spec.evaluate(counts, wh.rows).failing
        per = metric.errors(counts, gone)
        rows.append((" = ".join(names), n, float(metric.loss(counts, gone, wh.rows)), [float(e) for e in per]))
    return content.WorkloadView([(p.query.describe(), p.query.weight) for p in metric.prepared], rows)


def attribute_utility(wh: Warehouse, counts: NodeCounts, suppressed: np.ndarray) -> list[dict[str, Any]]:
    """ARX's utility per quasi-identifier at ``counts.node`` (``veil.utility``)."""
    from veil.utility import attribute_utility as quality

    return quality(counts, suppressed, wh.hierarchies, wh.leaf_totals())


def node_report(
    config: Config,
    wh: Warehouse,
    result: SearchResult,
    node: Sequence[int],
    title: str,
    metrics: dict[str, Metric] | None = None,
) -> content.ReportData:
    """The report's content for ``node`` of ``wh``'s lattice, with ``result``'s evaluated nodes."""
    node = tuple(int(x) for x in node)
    counts = wh.counts(node)
    settings = config.audit
    subject = f"node {list(node)} of {wh.table_name}"
    audit = audit_counts(counts, settings, config.models, subject, node_label(counts))
    evaluations = [(full_levels(n), p, s, m) for n, p, s, m in result.evaluations if None not in n]
    bottom = wh.counts(tuple(0 for _ in wh.heights)).sizes
    metrics = metrics or metrics_for(wh, config)
    gone = Specification(config.models, config.search.max_suppression).evaluate(counts, wh.rows).failing
    return content.for_node(
        title,
        subject,
        counts,
        node_label(counts),
        audit,
        config.models,
        config.search.max_suppression,
        wh.rows,
        metrics,
        wh.heights,
        evaluations,
        result.optimal.node if result.optimal is not None else None,
        source_sizes=bottom,
        minimal=result.minimal,
        workload=workload_view(config, wh, result, node, metrics),
        attribute_utility=attribute_utility(wh, counts, gone),
        source=config.source.qualified,
    )


def source_sizes(config: Config) -> np.ndarray:
    """The source's block sizes at the bottom of the lattice (its original quasi-identifier values), as it
    stands now: one ``GROUP BY`` of the quasi-identifiers."""
    with open_backend(config.source.resolved_url()).session() as session:
        subject = table_subject(
            session,
            config.source.schema,
            config.source.table,
            config.attributes,
            (),
            f"table {config.source.qualified} as it stands",
        )
    return subject.counts.sizes


def write_html(path: Path, data: content.ReportData) -> Path:
    """Write the page atomically (a reader never sees half a report)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(page.render(data), encoding="utf-8")
    tmp.replace(path)
    return path


def write_report(
    directory: Path,
    config: Config,
    wh: Warehouse,
    result: SearchResult,
    node: Sequence[int],
    *,
    name: str,
    version: int | None = None,
    history: Sequence[Mapping[str, Any]] = (),
) -> Path:
    """For the release job: ``<directory>/<name>_v<version>.html`` — the published version as ``veil report
    --release N`` shows it (its rows recounted; nothing a suppressed block or a held-back row holds, whose labels
    and values it did not publish) — or, without a version, ``<name>.html`` for ``node`` of the run's own
    warehouse and search result.  ``directory`` relative to the config; ``history``: the release's runs as
    ``veil releases`` reads them (a cohort series' versions: ``seriesview``)."""
    folder = directory if directory.is_absolute() else config.path.parent / directory
    if version is not None:
        return release_report(config, folder / f"{name}_v{version}.html", version, wh=wh, history=history)
    title = f"Veil report — {name}"
    return write_html(folder / f"{name}.html", node_report(config, wh, result, node, title))


def release_search(
    wh: Warehouse, config: Config, metrics: dict[str, Metric], on_step: Callable[[str], None]
) -> SearchResult:
    """What ``workload_view`` reads of a search for a published version's report: the optimum of the source as it
    stands now under the config's metric when the view shows it (workload, discernibility), else no search at all
    (the view searches the discernibility optimum itself)."""
    lattice = Lattice(wh.heights)
    if config.search.metric not in ("workload", "discernibility"):
        return SearchResult(wh.attributes, wh.heights, lattice.size)
    on_step("searching the lattice")
    spec = Specification(config.models, config.search.max_suppression)
    metric = metrics[config.search.metric]
    return search.run(("optimal",), lattice, wh.attributes, wh.counts, spec, metric, wh.rows)


def release_utility(
    config: Config,
    record: ReleaseRecord,
    on_step: Callable[[str], None] = lambda _m: None,
    wh: Warehouse | None = None,
) -> tuple[content.WorkloadView | None, list[dict[str, Any]] | None]:
    """The ``[[workload]]`` queries' errors (``workload_view``; ``None`` without them) and the utility per
    attribute at published version ``record``'s node, answered from the source *as it stands now* at that node
    with the blocks failing the models suppressed, as ``node_report`` does: a version of a series may differ from
    that by its stand-ins and waiting rows.  ``(None, None)`` when the catalog holds no node for the version or
    the lattice changed since (a hierarchy of another height).  ``wh``: the release job's own warehouse, prepared on
    the source the version was just published from (else one is prepared here)."""
    if record.node is None:
        return None, None
    if wh is not None:
        return _utility_at(config, wh, tuple(int(x) for x in record.node), record, on_step)
    with open_backend(config.source.resolved_url()).session() as session:
        prepared = prepared_warehouse(session, config, on_step, rollup=True)
        return _utility_at(config, prepared, tuple(int(x) for x in record.node), record, on_step)


def _utility_at(
    config: Config, wh: Warehouse, node: Node, record: ReleaseRecord, on_step: Callable[[str], None]
) -> tuple[content.WorkloadView | None, list[dict[str, Any]] | None]:
    """``release_utility`` on a prepared warehouse."""
    heights = tuple(wh.heights)
    fits = len(node) == len(heights) and all(0 <= lv <= h for lv, h in zip(node, heights))
    if not fits or (record.heights is not None and tuple(record.heights) != heights):
        return None, None
    counts = wh.counts(node)
    gone = Specification(config.models, config.search.max_suppression).evaluate(counts, wh.rows).failing
    quality = attribute_utility(wh, counts, gone)
    metrics = metrics_for(wh, config)
    if "workload" not in metrics:
        return None, quality
    return workload_view(config, wh, release_search(wh, config, metrics, on_step), node, metrics), quality


def release_report(
    config: Config,
    out: Path,
    release: int,
    *,
    node: str | None = None,
    on_step: Callable[[str], None] = lambda _m: None,
    wh: Warehouse | None = None,
    history: Sequence[Mapping[str, Any]] = (),
) -> Path:
    """``veil report --release N``: the published version recounted, its levels as the catalog recorded them,
    and (``release_utility``) its node's workload errors and utility per attribute on the source as it stands
    (``wh``: the release job's warehouse, when it writes the report of the version it just published); with
    ``history`` (the release's runs, ``veil releases``' record) a cohort series' versions up to it."""
    with open_subject(config, node=node, release=release, on_step=on_step) as (subject, _wh):
        record = subject.release
        assert record is not None
        audit = audit_counts(subject.counts, config.audit, config.models, subject.description, subject.label)
    title = f"Veil report — release {record.name!r} version {record.version}"
    on_step(f"counting {config.source.qualified} at its original values")
    before = source_sizes(config)
    workload, quality = release_utility(config, record, on_step, wh)
    data = content.for_release(
        title,
        record,
        subject.counts,
        audit,
        config.models,
        before,
        workload=workload,
        attribute_utility=quality,
        source=config.source.qualified,
        series=seriesview.points(history, record.version),
    )
    return write_html(out, data)


def build_report(
    config: Config,
    out: Path,
    *,
    node: str | None = None,
    release: int | None = None,
    on_step: Callable[[str], None] = lambda _m: None,
    history: Sequence[Mapping[str, Any]] = (),
) -> Path:
    """``veil report``: a published version (``release``; ``history``: its runs, for a cohort series' section),
    or a candidate ``node`` (default: the search's choice) with the lattice as the configured search evaluated it."""
    if release is not None:
        return release_report(config, out, release, node=node, on_step=on_step, history=history)
    backend = open_backend(config.source.resolved_url())
    with backend.session() as session:
        wh = prepared_warehouse(session, config, on_step, rollup=True)
        metrics = metrics_for(wh, config)
        on_step("searching the lattice")
        spec = Specification(config.models, config.search.max_suppression)
        result = search.run(
            (config.search.strategy,),
            Lattice(wh.heights),
            wh.attributes,
            wh.counts,
            spec,
            metrics[config.search.metric],
            wh.rows,
        )
        if node is not None:
            chosen = node_of(node, wh.heights)
        elif result.optimal is not None:
            chosen = result.optimal.node
        elif result.minimal:
            chosen = result.minimal[0]
        else:
            raise NoSolutionError("no lattice node satisfies the models; pass --node to report on a candidate")
        title = f"Veil report — {config.source.qualified} at node {list(chosen)}"
        return write_html(out, node_report(config, wh, result, chosen, title, metrics))
