"""Opening a run: config → backend session → prepared warehouse; and the JSON documents the read-only
commands print (``counts``, ``check``).  Nothing here writes to the warehouse but temporary tables."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from engine.backends import open_backend
from engine.config import Config, sensitive_needed
from engine.counts import NodeCounts
from engine.lattice import Node
from engine.privacy import Evaluation, Specification
from engine.warehouse import Warehouse, value_text


@contextmanager
def open_warehouse(config: Config, *, sensitive: Sequence[str] | None = None,
                   on_step: Callable[[str], None] = lambda _m: None, rollup: bool = True) -> Iterator[Warehouse]:
    """A prepared warehouse for ``config`` on one connection; temporary tables vanish on exit.

    ``sensitive`` defaults to the columns the models read (none when they need block sizes only)."""
    backend = open_backend(config.source.resolved_url())
    counted = tuple(sensitive) if sensitive is not None else tuple(sensitive_needed(config))
    with backend.session() as session:
        wh = Warehouse(session, config.source, config.quasi_identifiers, counted, on_step=on_step, rollup=rollup)
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
