"""Verification of a version before it is published: the rows it inserted, recounted independently from the
rows table, must equal what the search counted minus what the series step held back, and every published
block must pass every model again (suppressed and held-back rows kept only as context for natural
supersets)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import sqlalchemy as sa

from veil import queries as q
from veil.backends.base import Session
from veil.counts import NodeCounts
from veil.errors import ReleaseError
from veil.models.base import Needs
from veil.models.common import achieved as table_level
from veil.privacy import Specification, verdict
from veil.warehouse import Warehouse


class Counted:
    """The candidate's cells as the checkers count them (block codes, codes of the counted sensitive columns)."""

    def __init__(self, wh: Warehouse, node: Sequence[int], codes: np.ndarray, value_index: np.ndarray,
                 distinct: Sequence[Sequence[Any]], columns: Sequence[str]) -> None:
        """``codes`` per cell; a cell's published non-QI values are ``distinct[value_index[cell]]``."""
        self.wh, self.node, self.codes = wh, tuple(node), codes
        s_codes = np.zeros((len(value_index), len(wh.domains)), dtype=np.int64)
        for j, dom in enumerate(wh.domains):
            index = {v: k for k, v in enumerate(wh.raw_values[dom.name])}
            pos = list(columns).index(dom.name)
            of_distinct = np.asarray([index[v[pos]] for v in distinct], dtype=np.int64)
            s_codes[:, j] = of_distinct[value_index] if len(value_index) else 0
        self.s_codes = s_codes
        self.cards = [h.cardinality(level) for h, level in zip(wh.hierarchies, node)]

    def counts(self, rows: np.ndarray) -> NodeCounts:
        """NodeCounts of the cells with ``rows`` > 0 (``rows`` per cell)."""
        keep = rows > 0
        return NodeCounts.from_cells(self.wh.attributes, self.node, self.codes[keep], self.s_codes[keep], rows[keep],
                                     self.cards, self.wh.domains, self.wh.hierarchies)

    def publishable(self, spec: Specification, published: np.ndarray, total: np.ndarray) -> np.ndarray:
        """Per cell: its block, published with ``published`` rows per cell, passes every model (the rest of
        ``total`` as context)."""
        keep = published > 0
        shown = self.counts(published)
        full = with_context(shown, self.counts(total - published))
        ok = np.ones(shown.n_blocks, dtype=bool)
        for model in spec.models:
            ok &= verdict(model, full).passed[:shown.n_blocks]
        out = np.ones(len(published), dtype=bool)
        out[np.flatnonzero(keep)] = ok[shown.cell_block]
        return out


def verify(session: Session, wh: Warehouse, spec: Specification, rows: sa.Table, version: int, expected: NodeCounts,
           context: NodeCounts, suppressed_rows: int) -> dict[str, float | None]:
    """Recount version ``version`` from ``rows`` and re-run every checker; the counts must equal ``expected``
    and every published block must pass every model (``context``: the rows left out)."""
    qis, sens = list(wh.attributes), list(wh.sensitive)
    found = session.rows(q.recount(rows, version, qis, sens), "recounting the release")  # driver objects
    names = [*qis, *sens, "n"]
    data = {c: [r[k] for r in found] for k, c in enumerate(names)}
    node = expected.node
    n = len(found)
    qi_codes = np.zeros((n, len(qis)), dtype=np.int64)
    for i, (name, level) in enumerate(zip(qis, node)):
        h = wh.hierarchies[i]
        if level == 0:
            mapping = {text: code for code, text in session.rows(q.level0_labels(wh.layout, i), "reading labels")}
        else:
            mapping = {label: code for code, label in enumerate(h.domain(level))}
        try:
            qi_codes[:, i] = [mapping[v] for v in data[name]]
        except KeyError as exc:
            raise ReleaseError(f"verification failed: column {name!r} of the release holds {exc.args[0]!r}, "
                               f"not a level-{level} value of its hierarchy") from None
    s_codes = np.zeros((n, len(sens)), dtype=np.int64)
    for j, dom in enumerate(wh.domains):
        index = {v: k for k, v in enumerate(wh.raw_values[dom.name])}
        try:
            s_codes[:, j] = [index[v] for v in data[dom.name]]
        except KeyError as exc:
            raise ReleaseError(f"verification failed: sensitive column {dom.name!r} holds {exc.args[0]!r}, "
                               "not a value of the source") from None
    cards = [h.cardinality(level) for h, level in zip(wh.hierarchies, node)]
    recounted = NodeCounts.from_cells(expected.attributes, node, qi_codes, s_codes, np.asarray(data["n"], dtype=np.int64),
                                      cards, wh.domains, wh.hierarchies)
    if not same(recounted, expected):
        raise ReleaseError("verification failed: the blocks and histograms counted from the published rows "
                           "differ from the search's counts at the chosen node (less what the series step held back)")
    full = with_context(recounted, context)
    kept = np.concatenate([np.ones(recounted.n_blocks, dtype=bool), np.zeros(context.n_blocks, dtype=bool)])
    achieved: dict[str, float | None] = {}
    for model in spec.models:
        v = model.check(full)
        if not v.passed[kept].all():
            raise ReleaseError(f"verification failed: {model.describe()} does not hold on "
                               f"{int((~v.passed[kept]).sum())} released block(s)")
        achieved[label(model)] = released_level(model, full, kept, recounted)
    if suppressed_rows > spec.budget(wh.rows):
        raise ReleaseError("verification failed: more rows suppressed than the budget allows")
    return achieved


def released_level(model: Any, full: NodeCounts, kept: np.ndarray, released: NodeCounts) -> float | None:
    """A model's level over the released blocks.  A model that reads natural supersets ((n,t)-closeness) judges
    each released block against the supersets of the ORIGINAL table (suppressed and held-back rows included,
    docs/models.md): its per-block levels on ``full``, aggregated over ``kept``; every other model's level is
    a function of the released blocks alone."""
    if model.properties.needs is Needs.SUPERSETS:
        return table_level(model.levels(full)[kept], model.properties.achieved)
    return model.check(released).achieved


def label(model: Any) -> str:
    return f"{model.type}:{model.attribute}" if model.attribute else model.type


def same(a: NodeCounts, b: NodeCounts) -> bool:
    if a.n_blocks != b.n_blocks or not np.array_equal(a.keys, b.keys) or not np.array_equal(a.sizes, b.sizes):
        return False
    for dom in a.sensitive:
        if not a.blocks(dom.name).same(b.blocks(dom.name)):
            return False
    return True


def with_context(shown: NodeCounts, extra: NodeCounts) -> NodeCounts:
    """``shown``'s blocks first, then ``extra``'s (rows left out, kept as context for natural supersets)."""
    if extra.n_blocks == 0:
        return shown
    offset = shown.n_blocks
    return NodeCounts(
        attributes=shown.attributes, node=shown.node, keys=np.vstack([shown.keys, extra.keys]),
        cardinalities=shown.cardinalities, cell_block=np.concatenate([shown.cell_block, extra.cell_block + offset]),
        cell_values=np.vstack([shown.cell_values, extra.cell_values]),
        cell_count=np.concatenate([shown.cell_count, extra.cell_count]),
        sensitive=shown.sensitive, generalizers=shown.generalizers)
