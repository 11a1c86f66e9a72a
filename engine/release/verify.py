"""Verification of a version before it is published: the rows it inserted, recounted independently (by the
database, from the rows table into the blocks table ``<name>_block_rows``, read here), must equal what the
search counted minus what the series step held back, and every published block must pass every model again
(suppressed and held-back rows kept only as context for natural supersets)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np
import sqlalchemy as sa

from veil import queries as q
from veil.backends.base import Session
from veil.counts import NodeCounts, full_levels, sorted_sum
from veil.errors import ReleaseError
from veil.models.base import Needs
from veil.models.common import achieved as table_level
from veil.privacy import Specification, verdict
from veil.release.ledger import Candidate
from veil.warehouse import Warehouse


class Counted:
    """The candidate's cells as the checkers count them: blocks, and the codes of the counted sensitive columns.

    Cells that differ only in columns the models do not read (a published income next to a counted
    occupation) fall into one checker cell, so what the checkers see is sized by blocks × counted values,
    not by the candidate's cells."""

    def __init__(
        self,
        wh: Warehouse,
        node: Sequence[int],
        cand: Candidate,
        columns: Sequence[str],
        coded: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        self.wh, self.node, self.cand = wh, tuple(node), cand
        combos, combo = coded if coded is not None else self.code(wh, cand.distinct, columns)
        self.combos: np.ndarray = combos
        self.combo: np.ndarray = combo
        self.cards = [h.cardinality(level) for h, level in zip(wh.hierarchies, node)]

    @staticmethod
    def code(
        wh: Warehouse, distinct: Sequence[tuple[Any, ...]], columns: Sequence[str]
    ) -> tuple[np.ndarray, np.ndarray]:
        """The distinct counted value tuples (``combos``) and each published value's among them (``combo``):
        what the cells of one version share, computed once for all its shards."""
        of_distinct = np.zeros((len(distinct), len(wh.domains)), dtype=np.int64)
        for j, dom in enumerate(wh.domains):
            index = {v: k for k, v in enumerate(wh.raw_values[dom.name])}
            pos = list(columns).index(dom.name)
            of_distinct[:, j] = [index[v[pos]] for v in distinct]
        if len(wh.domains) and len(distinct):
            combos, combo = np.unique(of_distinct, axis=0, return_inverse=True)
        else:  # nothing counted (or no cells): every cell's counted values are the one empty tuple
            combos, combo = np.zeros((1, len(wh.domains)), dtype=np.int64), np.zeros(len(distinct), np.int64)
        return combos, combo.reshape(-1)

    def _cells(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray | slice]:
        """The (block, counted values) key of each cell with ``rows`` > 0, and those cells' positions (a slice of
        all of them when every cell has rows: no index array as long as the candidate)."""
        positive = rows > 0
        kept: np.ndarray | slice = slice(None) if positive.all() else np.flatnonzero(positive)
        del positive
        key = self.cand.cell_block[kept].astype(np.int64)
        key *= max(len(self.combos), 1)
        key += self.combo[self.cand.value_index[kept]]
        return key, kept

    def counts(self, rows: np.ndarray) -> NodeCounts:
        """NodeCounts of the cells with ``rows`` > 0 (``rows`` per cell), cells with the same counted values merged."""
        key, kept = self._cells(rows)
        uniq, sums = sorted_sum(key, rows[kept].astype(np.int64, copy=False))
        width = max(len(self.combos), 1)
        block, combo = np.divmod(uniq, width)
        return NodeCounts.from_cells(
            self.wh.attributes,
            self.node,
            self.cand.block_codes[block],
            self.combos[combo],
            sums,
            self.cards,
            self.wh.domains,
            self.wh.hierarchies,
        )

    def publishable(self, spec: Specification, published: np.ndarray, total: np.ndarray) -> np.ndarray:
        """Per cell: its block, published with ``published`` rows per cell, passes every model (the rest of
        ``total`` as context)."""
        shown = self.counts(published)
        full = with_context(shown, self.counts(total - published))
        ok = np.ones(shown.n_blocks, dtype=bool)
        for model in spec.models:
            ok &= verdict(model, full).passed[: shown.n_blocks]
        kept = np.flatnonzero(published > 0)
        present = np.zeros(len(self.cand.block_codes), dtype=bool)
        present[self.cand.cell_block[kept]] = True
        position = np.cumsum(present) - 1  # shown's blocks: the present ones, in the same lexicographic order
        out = np.ones(len(published), dtype=bool)
        out[kept] = ok[position[self.cand.cell_block[kept]]]
        return out


def verify(
    session: Session,
    wh: Warehouse,
    spec: Specification,
    block_rows: sa.Table,
    version: int,
    expected: NodeCounts,
    context: NodeCounts,
    suppressed_rows: int,
) -> dict[str, float | None]:
    """Recount version ``version`` from ``block_rows`` (counted from its published rows) and re-run every
    checker; the counts must equal ``expected`` and every published block must pass every model (``context``:
    the rows left out)."""
    recounted = _recount(session, wh, block_rows, version, expected)
    if not same(recounted, expected):
        raise ReleaseError(
            "verification failed: the blocks and histograms counted from the published rows "
            "differ from the search's counts at the chosen node (less what the series step held back)"
        )
    full = with_context(recounted, context)
    kept = np.concatenate([np.ones(recounted.n_blocks, dtype=bool), np.zeros(context.n_blocks, dtype=bool)])
    achieved: dict[str, float | None] = {}
    for model in spec.models:
        v = model.check(full)
        if not v.passed[kept].all():
            raise ReleaseError(
                f"verification failed: {model.describe()} does not hold on "
                f"{int((~v.passed[kept]).sum())} released block(s)"
            )
        achieved[label(model)] = released_level(model, full, kept, recounted, v)
    if suppressed_rows > spec.budget(wh.rows):
        raise ReleaseError("verification failed: more rows suppressed than the budget allows")
    return achieved


def _recount(session: Session, wh: Warehouse, block_rows: sa.Table, version: int, expected: NodeCounts) -> NodeCounts:
    """The version's blocks and histograms counted from its published rows (``block_rows``), coded as the
    checkers code them (labels back to hierarchy codes, sensitive values to their domain's codes).  Each column's
    distinct values — the node's labels, the counted values: few — are numbered by the database and coded here;
    the cells arrive as those numbers, integer columns in chunks (``queries.recount``).

    Example: a block ``1*`` with flu twice comes back as numbers ``(1, 1, 2)``; ``1*`` is code 0 at the node and
    flu the domain's code 1, so the cell is ``(0, 1, 2)``."""
    qis, sens, node = list(wh.attributes), list(wh.sensitive), full_levels(expected.node)
    what = "recounting the release"
    mappings: list[dict[Any, int]] = []
    for i, level in enumerate(node):
        if level == 0:
            mappings.append(
                {text: code for code, text in session.rows(q.level0_labels(wh.layout, i), "reading labels")}
            )
        else:
            mappings.append({label: code for code, label in enumerate(wh.hierarchies[i].domain(level))})
    mappings += [{v: k for k, v in enumerate(wh.raw_values[dom.name])} for dom in wh.domains]
    columns = [*qis, *sens]
    numbers, chunks = session.numbered(q.recount_statements(block_rows, version, qis, sens), CHUNK, what)
    lookups = [
        _lookup(found, mapping, partial(_error, j, c, node, len(qis)))
        for j, (c, mapping, found) in enumerate(zip(columns, mappings, numbers))
    ]
    parts: list[list[np.ndarray]] = [[] for _ in columns]
    n_parts = []
    for chunk in chunks:
        for j, part in enumerate(parts):
            codes = lookups[j][chunk[f"c{j}"]]
            if len(codes) and codes.min() < 0:  # a NULL where the column has no NULL code
                raise ReleaseError(_error(j, columns[j], node, len(qis), None))
            part.append(codes)
        n_parts.append(chunk["n"].astype(np.int64, copy=False))
    n = np.concatenate(n_parts) if n_parts else np.zeros(0, dtype=np.int64)
    del n_parts
    coded = [np.concatenate(p) if p else np.zeros(0, dtype=np.int32) for p in parts]  # narrow (``_lookup``)
    del parts
    qi_codes = np.column_stack(coded[: len(qis)]) if qis else np.zeros((len(n), 0), dtype=np.int32)
    s_codes = np.column_stack(coded[len(qis) :]) if sens else np.zeros((len(n), 0), dtype=np.int32)
    del coded
    cards = [h.cardinality(level) for h, level in zip(wh.hierarchies, node)]
    return NodeCounts.from_cells(expected.attributes, node, qi_codes, s_codes, n, cards, wh.domains, wh.hierarchies)


CHUNK = 1 << 18  # recounted cells per fetched chunk


def _error(j: int, column: str, node: Sequence[int], qi_count: int, value: Any) -> str:
    """The message for ``value`` of column ``j``, which has no code."""
    if j < qi_count:
        return (
            f"verification failed: column {column!r} of the release holds {value!r}, not a level-{node[j]} "
            "value of its hierarchy"
        )
    return f"verification failed: sensitive column {column!r} holds {value!r}, not a value of the source"


def _lookup(numbers: Sequence[tuple[Any, int]], mapping: dict[Any, int], fail: Callable[[Any], str]) -> np.ndarray:
    """Number → code: ``numbers`` are (value, number) pairs, number 0 stands for NULL (-1 where NULL has no
    code); a value without a code is an error.  The codes come as the narrowest signed integers that hold
    them: a node's QI codes are mostly one or two bytes, and the recount holds one per cell (4.8M at the 10M
    census's t-closeness optimum).

    >>> _lookup([("a", 1), ("b", 2)], {"a": 5, "b": 300}, str).tolist(), _lookup([("a", 1)], {"a": 5}, str).dtype
    ([-1, 5, 300], dtype('int8'))
    """
    out = np.full(max((int(k) for _, k in numbers), default=0) + 1, -1, dtype=np.int32)
    out[0] = mapping.get(None, -1)
    for value, number in numbers:
        code = mapping.get(value)
        if code is None:
            raise ReleaseError(fail(value))
        out[int(number)] = code
    return out.astype(np.min_scalar_type(-int(out.max(initial=1)) - 1))


def released_level(model: Any, full: NodeCounts, kept: np.ndarray, released: NodeCounts, checked: Any) -> float | None:
    """A model's level over the released blocks (``checked``: its verdict on ``full``).  A model that reads
    natural supersets ((n,t)-closeness) judges each released block against the supersets of the ORIGINAL table
    (suppressed and held-back rows included, docs/models.md): its per-block levels on ``full``, aggregated over
    ``kept``; every other model's level is a function of the released blocks alone — ``checked``'s own when
    nothing was left out (``full`` is ``released``)."""
    if model.properties.needs is Needs.SUPERSETS:
        return table_level(model.levels(full)[kept], model.properties.achieved)
    return checked.achieved if full is released else model.check(released).achieved


def label(model: Any) -> str:
    return f"{model.type}:{model.attribute}" if model.attribute else model.type


def same(a: NodeCounts, b: NodeCounts) -> bool:
    if a.n_blocks != b.n_blocks or not np.array_equal(a.keys, b.keys) or not np.array_equal(a.sizes, b.sizes):
        return False
    return all(a.blocks(dom.name).same(b.blocks(dom.name)) for dom in a.sensitive)


def with_context(shown: NodeCounts, extra: NodeCounts) -> NodeCounts:
    """``shown``'s blocks first, then ``extra``'s (rows left out, kept as context for natural supersets)."""
    if extra.n_blocks == 0:
        return shown
    offset = shown.n_blocks
    return NodeCounts(
        attributes=shown.attributes,
        node=shown.node,
        keys=np.vstack([shown.keys, extra.keys]),
        cardinalities=shown.cardinalities,
        cell_block=np.concatenate([shown.cell_block, extra.cell_block + offset]),
        cell_values=np.vstack([shown.cell_values, extra.cell_values]),
        cell_count=np.concatenate([shown.cell_count, extra.cell_count]),
        sensitive=shown.sensitive,
        generalizers=shown.generalizers,
    )
