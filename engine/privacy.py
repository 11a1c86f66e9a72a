"""A privacy specification (docs/models.md §4, §6): a conjunction of models plus a suppression budget, evaluated
on one node's counts.  Pure numpy; the search and the ``check`` command both use it.

A block is suppressed when it fails any model; a node passes when the suppressed rows are at most
``max_suppression * |T|``.  The specification also says what the search may infer from a verdict, reading
the models' declared properties (never their names):

- ``tags_up``: every model is monotone (with suppression, monotone_with_suppression), so a passing node
  makes every node above pass;
- ``prune_down`` on an evaluation: the monotone part of the conjunction alone already fails, so every node
  below fails too.

>>> import numpy as np
>>> from veil.counts import NodeCounts
>>> from veil.models.kanonymity import KAnonymity
>>> nc = NodeCounts.from_cells(("zip",), (0,), np.array([[0], [1]]), np.zeros((2, 0)), np.array([4, 1]), (2,))
>>> spec = Specification((KAnonymity(k=2),), max_suppression=0.2)
>>> e = spec.evaluate(nc, rows=5)
>>> e.passed, e.suppressed_rows, e.prune_down
(True, 1, False)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from veil.counts import NodeCounts
from veil.models.base import Model, Needs, Verdict

CHUNK_CELLS = 1 << 24  # sparse histogram cells a checker may see at once


@dataclass(frozen=True)
class Evaluation:
    """The verdicts of every model at one node and what follows for suppression and the search."""

    verdicts: tuple[Verdict, ...]
    failing: np.ndarray          # per block: fails some model (suppressed if the node is used)
    suppressed_rows: int
    passed: bool                 # passes within the suppression budget
    prune_down: bool             # the monotone part alone fails: every node below fails

    @property
    def suppressed_blocks(self) -> int:
        return int(self.failing.sum())


@dataclass(frozen=True)
class Specification:
    models: tuple[Model, ...]
    max_suppression: float = 0.0

    def _monotone(self, model: Model) -> bool:
        p = model.properties
        return p.monotone_with_suppression if self.max_suppression > 0 else p.monotone

    @property
    def tags_up(self) -> bool:
        """A passing node makes every node above it pass."""
        return all(self._monotone(m) for m in self.models)

    @property
    def monotone_models(self) -> tuple[Model, ...]:
        return tuple(m for m in self.models if self._monotone(m))

    def budget(self, rows: int) -> float:
        return self.max_suppression * rows

    def evaluate(self, counts: NodeCounts, rows: int) -> Evaluation:
        """Evaluate every model at one node; ``rows`` is ``|T|`` (the budget's base)."""
        verdicts = tuple(verdict(m, counts) for m in self.models)
        return self.combine(verdicts, counts.sizes, rows)

    def combine(self, verdicts: Sequence[Verdict], sizes: np.ndarray, rows: int) -> Evaluation:
        failing = np.zeros(len(sizes), dtype=bool)
        monotone_failing = np.zeros(len(sizes), dtype=bool)
        for model, verdict in zip(self.models, verdicts):
            failing |= ~verdict.passed
            if self._monotone(model):
                monotone_failing |= ~verdict.passed
        budget = self.budget(rows)
        suppressed = int(sizes[failing].sum())
        return Evaluation(
            verdicts=tuple(verdicts),
            failing=failing,
            suppressed_rows=suppressed,
            passed=suppressed <= budget + 1e-9,
            prune_down=int(sizes[monotone_failing].sum()) > budget + 1e-9,
        )


def verdict(model: Model, counts: NodeCounts, max_cells: int = CHUNK_CELLS) -> Verdict:
    """``model.check(counts)``, in slices of blocks when the node has very many cells.

    Per-block verdicts concatenate; the table's level is the min or max of the slices' (as the model
    declares), ``None`` (infinite) winning.  Models that read supersets see the whole node."""
    needs = model.properties.needs
    cells = len(counts.cell_count)  # checkers read sparse histograms: their work and memory follow the cells
    if cells <= max_cells or needs in (Needs.SIZES, Needs.SUPERSETS) or counts.n_blocks < 2:
        return model.check(counts)
    pieces = -(-cells // max_cells)
    step = -(-counts.n_blocks // pieces)
    passed, levels = [], []
    for start in range(0, counts.n_blocks, step):
        mask = np.zeros(counts.n_blocks, dtype=bool)
        mask[start:start + step] = True
        part = model.check(counts.restrict(mask))
        passed.append(part.passed)
        levels.append(part.achieved)
    if any(level is None for level in levels):
        achieved = None
    else:
        achieved = float(min(levels) if model.properties.achieved == "min" else max(levels))  # type: ignore[type-var]
    return Verdict(np.concatenate(passed), achieved)
