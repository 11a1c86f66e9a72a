"""What a report shows, gathered as plain values: the headline (the worst exposure, the prosecutor risk before
and after), the lattice per height with its minimal nodes, block sizes, each sensitive attribute's distribution
in the table and in the worst blocks (numeric ones binned), achieved against configured levels, utility metrics
and the attack audit.  Built from a node's counts (``for_node``) or a published release (``for_release``);
numpy only, no SQL, no charting library.

>>> nodes_per_height((1, 2)).tolist()          # the 2 × 3 lattice: 1 node at height 0, 2 at 1, 2 at 2, 1 at 3
[1, 2, 2, 1]
>>> minimal_of((1, 2), [(0, 2), (1, 1), (1, 2)])
[(0, 2), (1, 1)]
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from veil.counts import NodeCounts, SensitiveDomain, full_levels
from veil.metrics import Metric
from veil.models.base import Model
from veil.privacy import Specification
from veil.report.formatting import human, nice_edges
from veil.adversary.exposure import Audit, Exposure, Label, shown
from veil.adversary.histogram import Histogram
from veil.adversary.prosecutor import Prosecutor, prosecutor
from veil.adversary.subject import ReleaseRecord
from veil.report.seriesview import SeriesPoint

Node = tuple[int, ...]
Evaluation = tuple[Node, bool, int, "float | None"]
TOP_VALUES = 10  # categorical values drawn per attribute (the rest merged into "other")
BINS = 12  # about this many bins for a numeric attribute
WORST_SHOWN = 3  # worst blocks drawn per attribute
DENSE_LATTICE = 4_000_000  # up to this many nodes, minimal nodes are found on a dense grid


@dataclass(frozen=True)
class Distribution:
    attribute: str
    categories: list[str]  # values (top ones, then "other …"), or bins of a numeric attribute
    series: list[tuple[str, list[float]]]  # ("whole table", shares), (block label, shares), ...
    edges: list[float] | None = None  # a binned numeric attribute: len(categories) + 1 edges
    open_top: bool = False  # its last bin holds every larger value (drawn one step wide)


@dataclass(frozen=True)
class Level:
    model: str
    achieved: float | None
    passed: bool
    violating_blocks: int | None


@dataclass(frozen=True)
class SizeBin:
    """Blocks of ``low``..``high`` rows: how many, how many rows they hold, and whether they are below k."""

    low: int
    high: int
    blocks: int
    rows: int
    below_k: bool

    @property
    def label(self) -> str:
        return human(self.low) if self.low == self.high else f"{human(self.low)}–{human(self.high)}"


@dataclass(frozen=True)
class HeightRow:
    """The lattice nodes at one height (sum of levels): how many, their verdicts, the minimal ones."""

    height: int
    nodes: int
    passing: int
    failing: int
    minimal: tuple[Node, ...]

    @property
    def not_evaluated(self) -> int:
        return self.nodes - self.passing - self.failing


@dataclass(frozen=True)
class Headline:
    """What the top of the page says: the worst attack by rows exposed, and the prosecutor risk."""

    worst: Exposure | None  # the audit's attack exposing the most rows (None: no attack evaluated)
    exposing: int  # attacks exposing at least one row
    attacks: int  # attacks evaluated (not skipped)
    before: Prosecutor | None  # the source at the bottom of the lattice (None: not known)
    after: Prosecutor  # what is (or would be) published
    holding: int  # configured models that hold
    models: int


@dataclass(frozen=True)
class WorkloadView:
    """The config's ``[[workload]]`` queries (``describe()`` and weight) and their errors at a few nodes: per node,
    ``(labels, node, workload error, each query's error)`` — the chosen node first, then the optimal ones."""

    queries: list[tuple[str, float]]
    nodes: list[tuple[str, Node, float, list[float]]]

    def document(self) -> dict[str, Any]:
        return {
            "queries": [{"query": q, "weight": w} for q, w in self.queries],
            "nodes": [
                {"label": label, "node": list(n), "error": e, "per_query": list(per)} for label, n, e, per in self.nodes
            ],
        }


@dataclass(frozen=True)
class ReportData:
    title: str
    subject: str
    rows: int
    blocks: int
    sizes: np.ndarray
    attributes: tuple[str, ...]
    heights: tuple[int, ...] | None
    chosen: tuple[int, ...] | None
    optimal: tuple[int, ...] | None
    evaluations: list[Evaluation]
    levels: list[Level]
    utility: list[tuple[str, float | None]]
    distributions: list[Distribution]
    audit: Audit
    min_k: int | None = None
    generated: str = field(default_factory=lambda: dt.datetime.now().astimezone().isoformat(timespec="seconds"))
    before: Prosecutor | None = None  # the source's risk at the bottom node
    published_sizes: np.ndarray | None = None  # the blocks published (default: ``sizes``)
    minimal: list[Node] | None = None  # the search's minimal nodes (default: found from the evaluations)
    suppressed_rows: int | None = None  # a release's suppressed rows (default: rows - published rows)
    release: bool = False  # a published version (else a candidate node)
    workload: WorkloadView | None = None  # the [[workload]] queries' errors at a few nodes (docs/workload.md)
    attribute_utility: list[dict[str, Any]] | None = None  # ARX's quality per quasi-identifier (veil.utility)
    reidentification: list[dict[str, Any]] | None = None  # veil risk's figures before and after (reidentification_view)
    provenance: dict[str, dict[str, Any]] | None = None  # where each section's figures come from (``provenance``)
    series: list[SeriesPoint] | None = None  # a cohort series' versions up to this one (``seriesview``)

    def lattice(self) -> dict[str, Any] | None:
        if self.heights is None:
            return None
        return {
            "heights": list(self.heights),
            "size": math.prod(h + 1 for h in self.heights),
            "evaluated": [[list(n), int(bool(p))] for n, p, _s, _m in self.evaluations],
            "chosen": list(self.chosen) if self.chosen is not None else None,
            "optimal": list(self.optimal) if self.optimal is not None else None,
            "minimal": [list(n) for n in self.minimal_nodes()],
        }

    def minimal_nodes(self) -> list[Node]:
        """The minimal passing nodes, lowest height first: the search's own list, else those of the evaluated
        passing nodes that have no passing node below them."""
        if self.minimal is not None:
            return sorted((tuple(int(x) for x in n) for n in self.minimal), key=lambda n: (sum(n), n))
        if self.heights is None:
            return []
        return minimal_of(self.heights, [n for n, ok in _verdicts(self.evaluations).items() if ok])

    def per_height(self) -> list[HeightRow]:
        """One row per height of the lattice, bottom first (empty without heights)."""
        if self.heights is None:
            return []
        totals = nodes_per_height(self.heights)
        passing = np.zeros(len(totals), dtype=np.int64)
        failing = np.zeros(len(totals), dtype=np.int64)
        for node, ok in _verdicts(self.evaluations).items():
            (passing if ok else failing)[sum(node)] += 1
        minimal: dict[int, list[Node]] = {}
        for node in self.minimal_nodes():
            minimal.setdefault(sum(node), []).append(node)
        return [
            HeightRow(h, int(totals[h]), int(passing[h]), int(failing[h]), tuple(minimal.get(h, ())))
            for h in range(len(totals))
        ]

    def headline(self) -> Headline:
        evaluated = [e for e in self.audit.exposures if e.skipped is None]
        worst = max(evaluated, key=lambda e: e.rows) if evaluated else None
        after = prosecutor(self.sizes if self.published_sizes is None else self.published_sizes)
        return Headline(
            worst,
            sum(1 for e in evaluated if e.rows),
            len(evaluated),
            self.before,
            after,
            sum(1 for lv in self.levels if lv.passed),
            len(self.levels),
        )

    def size_bins(self) -> list[SizeBin]:
        return size_bins(self.sizes, self.min_k)


def _verdicts(evaluations: Sequence[Evaluation]) -> dict[Node, bool]:
    """Each evaluated node's verdict (the last one recorded)."""
    return {tuple(int(x) for x in n): bool(p) for n, p, _s, _m in evaluations}


def nodes_per_height(heights: Sequence[int]) -> np.ndarray:
    """How many lattice nodes have each height (sum of levels), without listing them."""
    counts = np.ones(1, dtype=np.int64)
    for h in heights:
        counts = np.convolve(counts, np.ones(h + 1, dtype=np.int64))
    return counts


def minimal_of(heights: Sequence[int], passing: Sequence[Node]) -> list[Node]:
    """The nodes of ``passing`` with no other node of ``passing`` below them, lowest height first."""
    if not passing:
        return []
    if not heights:
        return [()]
    points = np.asarray(passing, dtype=np.int64).reshape(len(passing), len(heights))
    shape = tuple(h + 1 for h in heights)
    if math.prod(shape) <= DENSE_LATTICE:
        grid = np.zeros(shape, dtype=bool)
        grid[tuple(points.T)] = True
        up = grid  # up[n]: some passing node is <= n
        for axis in range(len(shape)):
            up = np.logical_or.accumulate(up, axis=axis)
        below = np.zeros(shape, dtype=bool)  # below[n]: some passing node is < n
        for axis in range(len(shape)):
            dst = tuple(slice(1, None) if a == axis else slice(None) for a in range(len(shape)))
            src = tuple(slice(None, -1) if a == axis else slice(None) for a in range(len(shape)))
            below[dst] |= up[src]
        found = np.argwhere(grid & ~below)
    else:
        points = np.unique(points, axis=0)
        dominated = np.zeros(len(points), dtype=bool)
        for lo in range(0, len(points), 256):
            chunk = points[lo : lo + 256]
            le = np.all(points[None, :, :] <= chunk[:, None, :], axis=2)
            dominated[lo : lo + 256] = le.sum(axis=1) > 1
        found = points[~dominated]
    return sorted((tuple(int(x) for x in n) for n in found), key=lambda n: (sum(n), n))


def size_bins(sizes: np.ndarray, k: int | None = None) -> list[SizeBin]:
    """Blocks in power-of-two size bins (1, 2–3, 4–7, …), the bin holding ``k`` split at ``k`` so that every
    bin is wholly below k or not.

    >>> [(b.label, b.blocks, b.rows, b.below_k) for b in size_bins(np.array([1, 2, 3, 4, 4, 9]), k=3)]
    [('1', 1, 1, True), ('2', 1, 2, True), ('3', 1, 3, False), ('4–7', 2, 8, False), ('8–15', 1, 9, False)]
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    if len(sizes) == 0:
        return []
    top = int(math.floor(math.log2(max(int(sizes.max()), 1))))
    edges = sorted({2**e for e in range(top + 2)} | ({k} if k is not None and k > 1 else set()))
    out = []
    for lo, nxt in zip(edges, edges[1:]):
        inside = (sizes >= lo) & (sizes < nxt)
        if lo > sizes.max():
            break
        out.append(SizeBin(lo, nxt - 1, int(inside.sum()), int(sizes[inside].sum()), k is not None and lo < k))
    return out


def _table_shares(dom: SensitiveDomain) -> np.ndarray:
    return dom.total / max(int(dom.total.sum()), 1)


def _value_bins(dom: SensitiveDomain) -> tuple[np.ndarray, list[str], list[float], bool]:
    """Nice bins over a numeric domain; a long upper tail (past the 98th percentile of the rows) goes into one
    open last bin, drawn one step wide and labelled "X and more"."""
    values = dom.values.astype(np.float64)
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(dom.total[order]) / max(int(dom.total.sum()), 1)
    lo, top = float(values[order[0]]), float(values[order[-1]])
    p98 = float(values[order[min(int(np.searchsorted(cumulative, 0.98)), len(order) - 1)]])
    hi = p98 if top - p98 > 0.25 * (p98 - lo) and p98 > lo else top
    edges = nice_edges(lo, hi, BINS)
    open_top = top > edges[-1]
    if open_top:
        edges = np.append(edges, edges[-1] + (edges[-1] - edges[-2]))
    group = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, len(edges) - 2)
    labels = [f"{human(a)} – {human(b)}" for a, b in zip(edges[:-1], edges[1:])]
    if open_top:
        labels[-1] = f"{human(edges[-2])} and more"
    return group, labels, [float(e) for e in edges], bool(open_top)


def _finite(values: np.ndarray) -> bool:
    """Whether every value is a finite number (a NULL or NaN among them: drawn as values, not bins)."""
    try:
        return bool(np.isfinite(values.astype(np.float64)).all())
    except (TypeError, ValueError):
        return False


def _grouping(dom: SensitiveDomain) -> tuple[np.ndarray, list[str], list[float] | None, bool]:
    """Each domain value's group (a bin, a top value or "other"), the groups' labels, bin edges (a numeric
    attribute with many values) and whether the last bin is open."""
    if dom.numeric and dom.size > TOP_VALUES and _finite(dom.values):
        return _value_bins(dom)
    if dom.numeric:
        return np.arange(dom.size), [shown(v) for v in dom.values], None, False
    order = np.argsort(-_table_shares(dom), kind="stable")
    group = np.full(dom.size, min(TOP_VALUES, dom.size), dtype=np.int64)
    group[order[:TOP_VALUES]] = np.arange(min(TOP_VALUES, dom.size))
    labels = [shown(dom.values[i]) for i in order[:TOP_VALUES]]
    rest = dom.size - len(labels)
    if rest:
        labels.append(f"other ({human(rest)} values)")
    return group, labels, None, False


def _grouped_shares(group: np.ndarray, groups: int, vector: np.ndarray) -> list[float]:
    """``vector``'s shares summed per display group (``_grouping``)."""
    return np.bincount(group, weights=vector, minlength=groups).astype(float).tolist()


def distributions(counts: NodeCounts, audit: Audit) -> list[Distribution]:
    """Per sensitive attribute: the table's distribution and the skewness attack's worst blocks."""
    out = []
    for dom in counts.sensitive:
        h = Histogram.of(counts, dom.name)
        group, labels, edges, open_top = _grouping(dom)

        shares = partial(_grouped_shares, group, len(labels))

        series = [("whole table", shares(_table_shares(dom)))]
        try:
            worst = audit.find("skewness", dom.name).worst[:WORST_SHOWN]
        except KeyError:
            worst = ()
        for w in worst:
            vector = np.zeros(dom.size)
            for v, c in h.of_block(w.block):
                vector[v] = c / max(int(h.sizes[w.block]), 1)
            score = "" if w.score is None else f", EMD {human(w.score, 2)}"
            series.append((f"{' | '.join(w.key)} (n={human(w.size)}{score})", shares(vector)))
        out.append(Distribution(dom.name, labels, series, edges, open_top))
    return out


def node_levels(
    models: Sequence[Model], max_suppression: float, counts: NodeCounts, rows: int
) -> tuple[list[Level], np.ndarray]:
    """Each model's achieved level and verdict at a node (as ``veil check``), and the suppressed blocks."""
    spec = Specification(tuple(models), max_suppression)
    evaluation = spec.evaluate(counts, rows)
    budget = spec.budget(rows)
    levels = [
        Level(m.describe(), v.achieved, int(counts.sizes[~v.passed].sum()) <= budget, v.violating)
        for m, v in zip(models, evaluation.verdicts)
    ]
    return levels, evaluation.failing


def utility(
    metrics: dict[str, Metric], counts: NodeCounts, suppressed: np.ndarray, rows: int
) -> list[tuple[str, float | None]]:
    return [(name, float(m.score(counts, suppressed, rows))) for name, m in metrics.items()]


def _min_k(models: Sequence[Model]) -> int | None:
    ks = [m.properties.min_block_size for m in models if m.properties.min_block_size > 1]
    return max(ks) if ks else None


def reidentification_view(
    models: Sequence[Model], source_sizes: np.ndarray | None, published: np.ndarray
) -> list[dict[str, Any]]:
    """``veil risk``'s documents of the source as it stands (when its sizes are known) and of the published blocks
    (docs/reidentification.md); population uniqueness when a ``population-uniqueness`` model gives the population."""
    from veil.reidentification.classes import ClassSizes
    from veil.reidentification.summary import summarize

    given = next((m for m in models if m.type == "population-uniqueness"), None)
    out = []
    for label, sizes in (("source", source_sizes), ("published", published)):
        if sizes is None:
            continue
        doc = summarize(
            ClassSizes.of(sizes),
            subject=label,
            sampling_fraction=getattr(given, "sampling_fraction", None),
            population=getattr(given, "population", None),
        ).document()
        out.append(doc)
    return out


AUDITED = ("headline.worst", "headline.attacks", "headline.risk_after", "audit", "reidentification.after")


def provenance(
    source: str, node: Sequence[int] | None, record: ReleaseRecord | None = None
) -> dict[str, dict[str, Any]]:
    """Where the embedded JSON's figures come from, by their path in it.  A candidate node's all come from the
    source table ``source`` as it stands when the report is generated, at ``node`` (the risk before at the
    original values).  A published version's (``record``) come from its own rows recounted, except the lattice and
    the levels (the catalog's record at publication) and what is answered from the source as it stands — the risk
    before, and the workload errors and utility per attribute at the version's node with the blocks failing the
    models suppressed (``veil.report.release_utility``): a version of a series differs from that by its
    stand-ins and waiting rows.

    >>> provenance("s.t", [1, 0])["audit"]
    {'from': 'source', 'table': 's.t', 'node': [1, 0], 'as_of': 'generated'}
    >>> provenance("s.t", [1, 0])["headline.risk_before"]["node"]
    'original values'

    For a version, ``"lattice"`` says ``{"from": "catalog", "release": …, "version": …, "table": <its view>,
    "as_of": <published_at>}`` and ``"audit"`` ``{"from": "release", …, "node": …, "as_of": "generated"}``.
    """
    at = None if node is None else [int(x) for x in node]
    now: dict[str, Any] = {"from": "source", "table": source, "node": at, "as_of": "generated"}
    before = {**now, "node": "original values"}
    if record is None:
        kept, recounted, catalog = now, now, now
    else:
        version: dict[str, Any] = {
            "from": "release",
            "release": record.name,
            "version": record.version,
            "table": record.output_table,
        }
        recounted = {**version, "node": at, "as_of": "generated"}
        catalog = {**version, "from": "catalog", "as_of": record.published_at}
        kept = {**now, "suppressed": "blocks failing the models at that node"}
    series = {} if record is None else {"series": {**catalog, "as_of": "generated", "versions": "up to this one"}}
    return {
        "lattice": catalog,
        "headline.models_holding": catalog,
        **{path: recounted for path in AUDITED},
        "headline.risk_before": before,
        "reidentification.before": before,
        "workload": kept,
        "utility_per_attribute": kept,
        **series,
    }


def for_node(
    title: str,
    subject: str,
    counts: NodeCounts,
    label: Label,
    audit: Audit,
    models: Sequence[Model],
    max_suppression: float,
    rows: int,
    metrics: dict[str, Metric],
    heights: tuple[int, ...],
    evaluations: Sequence[Evaluation],
    optimal: tuple[int, ...] | None,
    *,
    source_sizes: np.ndarray | None = None,
    minimal: Sequence[Node] | None = None,
    workload: WorkloadView | None = None,
    attribute_utility: list[dict[str, Any]] | None = None,
    source: str | None = None,
) -> ReportData:
    """A candidate node (or a release's node as the search saw it); ``source_sizes`` are the bottom node's
    block sizes (the risk before), ``minimal`` the search's minimal nodes when it listed them, ``source`` the
    table counted (the JSON's ``provenance``)."""
    levels, suppressed = node_levels(models, max_suppression, counts, rows)
    node = full_levels(counts.node)
    passes = all(lv.passed for lv in levels)
    seen = list(evaluations)
    if all(n != node for n, *_ in seen):  # the chosen node is shown with its verdict even if the search skipped it
        seen.append((node, passes, int(counts.sizes[suppressed].sum()), None))
    published = counts.sizes[~suppressed] if passes else counts.sizes
    return ReportData(
        title,
        subject,
        rows,
        counts.n_blocks,
        counts.sizes,
        counts.attributes,
        heights,
        node,
        optimal,
        seen,
        levels,
        utility(metrics, counts, suppressed, rows),
        distributions(counts, audit),
        audit,
        _min_k(models),
        before=None if source_sizes is None else prosecutor(source_sizes),
        published_sizes=published,
        minimal=None if minimal is None else list(minimal),
        workload=workload,
        attribute_utility=attribute_utility,
        reidentification=reidentification_view(models, source_sizes, published),
        provenance=None if source is None else provenance(source, node),
    )


def for_release(
    title: str,
    record: ReleaseRecord,
    counts: NodeCounts,
    audit: Audit,
    models: Sequence[Model],
    source_sizes: np.ndarray | None = None,
    *,
    workload: WorkloadView | None = None,
    attribute_utility: list[dict[str, Any]] | None = None,
    source: str | None = None,
    series: list[SeriesPoint] | None = None,
) -> ReportData:
    """A published version: levels as the catalog recorded them, utility recomputed from its recount;
    ``source_sizes``: the source's block sizes at the bottom node (the risk before); ``workload`` and
    ``attribute_utility``: at the version's node, from the source as it stands (``veil.report.release_utility``);
    ``source``: that source table (the JSON's ``provenance``); ``series``: a cohort series' versions up to this one
    (``seriesview.points``)."""
    by_label = {f"{m.type}:{m.attribute}" if m.attribute else m.type: m for m in models}
    levels = [Level(by_label[k].describe() if k in by_label else k, v, True, 0) for k, v in record.achieved.items()]
    sizes = counts.sizes.astype(np.float64)
    total = record.rows_published + record.rows_suppressed
    util: list[tuple[str, float | None]] = []
    if record.heights is not None and record.node is not None:
        util.append(("height", float(sum(record.node))))
        util.append(
            ("precision", 1 - float(np.mean([lv / h if h else 0 for lv, h in zip(record.node, record.heights)])))
        )
    util.append(("avg-block-size", float(sizes.sum() / max(len(sizes), 1))))
    util.append(("discernibility", float((sizes**2).sum() + record.rows_suppressed * total)))
    if record.metrics.get("metric") and record.metrics["metric"] not in dict(util):
        util.append((f"{record.metrics['metric']} (recorded)", record.metrics.get("value")))
    return ReportData(
        title,
        audit.subject,
        counts.rows,
        counts.n_blocks,
        counts.sizes,
        tuple(counts.attributes),
        record.heights,
        record.node,
        None,
        record.evaluations,
        levels,
        util,
        distributions(counts, audit),
        audit,
        _min_k(models),
        before=None if source_sizes is None else prosecutor(source_sizes),
        suppressed_rows=record.rows_suppressed,
        release=True,
        workload=workload,
        attribute_utility=attribute_utility,
        reidentification=reidentification_view(models, source_sizes, counts.sizes),
        provenance=None if source is None else provenance(source, record.node, record),
        series=series or None,
    )
