"""What a report shows, gathered as plain values: the lattice and its verdicts, block sizes, each sensitive
attribute's distribution in the table and in the worst blocks, achieved against configured levels, utility
metrics and the attack audit.  Built from a node's counts (``for_node``) or a published release
(``for_release``); numpy only, no SQL."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from veil.risk.exposure import Audit, Label, shown
from veil.risk.histogram import Histogram
from veil.risk.subject import ReleaseRecord
from veil.counts import NodeCounts
from veil.metrics import Metric
from veil.models.base import Model
from veil.privacy import Specification

Evaluation = tuple[tuple[int, ...], bool, int, "float | None"]
TOP_VALUES = 12   # values drawn per attribute (the rest merged into "other")
WORST_SHOWN = 3   # worst blocks drawn per attribute


@dataclass(frozen=True)
class Distribution:
    attribute: str
    categories: list[str]
    series: list[tuple[str, list[float]]]   # ("table", shares), (block label, shares), ...


@dataclass(frozen=True)
class Level:
    model: str
    achieved: float | None
    passed: bool
    violating_blocks: int | None


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
    generated: str = field(default_factory=lambda: dt.datetime.now().isoformat(timespec="seconds"))

    def lattice(self) -> dict[str, Any] | None:
        if self.heights is None:
            return None
        return {"heights": list(self.heights),
                "evaluated": [[list(n), int(bool(p))] for n, p, _s, _m in self.evaluations],
                "chosen": list(self.chosen) if self.chosen is not None else None,
                "optimal": list(self.optimal) if self.optimal is not None else None}


def distributions(counts: NodeCounts, audit: Audit) -> list[Distribution]:
    """Per sensitive attribute: the table's distribution and the skewness attack's worst blocks."""
    out = []
    for dom in counts.sensitive:
        h = Histogram.of(counts, dom.name)
        table = dom.total / max(int(dom.total.sum()), 1)
        order = np.argsort(-table, kind="stable")
        shown_values = order[:TOP_VALUES]
        rest = order[TOP_VALUES:]
        categories = [shown(dom.values[i]) for i in shown_values] + (["other"] if len(rest) else [])

        def shares(vector: np.ndarray) -> list[float]:
            head = [float(vector[i]) for i in shown_values]
            return head + ([float(vector[rest].sum())] if len(rest) else [])

        series = [("whole table", shares(table))]
        try:
            worst = audit.find("skewness", dom.name).worst[:WORST_SHOWN]
        except KeyError:
            worst = ()
        for w in worst:
            vector = np.zeros(dom.size)
            for v, c in h.of_block(w.block):
                vector[v] = c / max(int(h.sizes[w.block]), 1)
            series.append((f"{' | '.join(w.key)} (n={w.size}, EMD {w.score:.2f})", shares(vector)))
        out.append(Distribution(dom.name, categories, series))
    return out


def node_levels(models: Sequence[Model], max_suppression: float, counts: NodeCounts,
                rows: int) -> tuple[list[Level], np.ndarray]:
    """Each model's achieved level and verdict at a node (as ``veil check``), and the suppressed blocks."""
    spec = Specification(tuple(models), max_suppression)
    evaluation = spec.evaluate(counts, rows)
    budget = spec.budget(rows)
    levels = [Level(m.describe(), v.achieved, int(counts.sizes[~v.passed].sum()) <= budget, v.violating)
              for m, v in zip(models, evaluation.verdicts)]
    return levels, evaluation.failing


def utility(metrics: dict[str, Metric], counts: NodeCounts, suppressed: np.ndarray,
            rows: int) -> list[tuple[str, float | None]]:
    return [(name, float(m.score(counts, suppressed, rows))) for name, m in metrics.items()]


def _min_k(models: Sequence[Model]) -> int | None:
    ks = [m.properties.min_block_size for m in models if m.properties.min_block_size > 1]
    return max(ks) if ks else None


def for_node(title: str, subject: str, counts: NodeCounts, label: Label, audit: Audit, models: Sequence[Model],
             max_suppression: float, rows: int, metrics: dict[str, Metric], heights: tuple[int, ...],
             evaluations: Sequence[Evaluation], optimal: tuple[int, ...] | None) -> ReportData:
    """A candidate node (or a release's node as the search saw it)."""
    levels, suppressed = node_levels(models, max_suppression, counts, rows)
    node = tuple(int(x) for x in counts.node)
    seen = list(evaluations)
    if all(n != node for n, *_ in seen):  # the chosen node is shown with its verdict even if the search skipped it
        seen.append((node, all(lv.passed for lv in levels), int(counts.sizes[suppressed].sum()), None))
    return ReportData(title, subject, rows, counts.n_blocks, counts.sizes, counts.attributes, heights,
                      node, optimal, seen, levels,
                      utility(metrics, counts, suppressed, rows), distributions(counts, audit), audit,
                      _min_k(models))


def for_release(title: str, record: ReleaseRecord, counts: NodeCounts, audit: Audit,
                models: Sequence[Model]) -> ReportData:
    """A published version: levels as the catalog recorded them, utility recomputed from its recount."""
    by_label = {f"{m.type}:{m.attribute}" if m.attribute else m.type: m for m in models}
    levels = [Level(by_label[k].describe() if k in by_label else k, v, True, 0) for k, v in record.achieved.items()]
    sizes = counts.sizes.astype(np.float64)
    total = record.rows_published + record.rows_suppressed
    util: list[tuple[str, float | None]] = []
    if record.heights is not None and record.node is not None:
        util.append(("height", float(sum(record.node))))
        util.append(("precision", 1 - float(np.mean([lv / h if h else 0 for lv, h in zip(record.node, record.heights)]))))
    util.append(("avg-block-size", float(sizes.sum() / max(len(sizes), 1))))
    util.append(("discernibility", float((sizes ** 2).sum() + record.rows_suppressed * total)))
    if record.metrics.get("metric") and record.metrics["metric"] not in dict(util):
        util.append((f"{record.metrics['metric']} (recorded)", record.metrics.get("value")))
    return ReportData(title, audit.subject, counts.rows, counts.n_blocks, counts.sizes,
                      tuple(counts.attributes), record.heights, record.node, None, record.evaluations, levels, util,
                      distributions(counts, audit), audit, _min_k(models))
