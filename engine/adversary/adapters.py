"""The only place the audit reaches into the privacy models' own computations, so that it measures exactly
what the models check: the EMD of each block to the table (t-closeness) and the ε-privacy posteriors and
per-block levels, read through the models' per-block API (``levels``, ``posteriors``) on sparse histograms,
so memory follows the node's cells, never blocks × values.

>>> from veil.counts import NodeCounts, SensitiveDomain
>>> dom = SensitiveDomain("condition", np.array(["cancer", "heart", "viral"], dtype=object), np.array([5, 3, 4]))
>>> nc = NodeCounts.from_cells(("q",), (0,), [[0], [0], [1], [1], [1], [2]], [[1], [2], [0], [1], [2], [0]],
...                            np.array([2, 2, 1, 1, 2, 4]), (3,), (dom,))
>>> np.round(emd_to_table(nc, "condition", "equal"), 4).tolist()      # 5/12, 1/6, 7/12
[0.4167, 0.1667, 0.5833]
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from veil.counts import NodeCounts, SensitiveDomain
from veil.models.closeness import TCloseness
from veil.models.epsilon import EpsilonPrivacy, posteriors
from veil.models.proximity import EMAnonymity


def emd_to_table(
    counts: NodeCounts, attribute: str, distance: str, hierarchy: Path | None = None, delimiter: str = ";"
) -> np.ndarray:
    """Per block, the EMD of its distribution of ``attribute`` to the whole table's (t-closeness, Li, Li &
    Venkatasubramanian ICDE 2007, with the model's ground distance)."""
    model = TCloseness(
        t=1.0,
        distance=distance,
        attribute=attribute,
        hierarchy=str(hierarchy) if hierarchy is not None else None,
        delimiter=delimiter,
        where=f"[audit] skewness of {attribute!r}",
    )
    model.validate({d.name: d for d in counts.sensitive})
    return model.distances(counts)


@dataclass(frozen=True)
class Beliefs:
    """Per block: the smallest ε for which the block is ε-private (``inf``: none), and at the value with the
    largest ``p_in / p_out``: its index, ``p_in`` and ``p_out``."""

    level: np.ndarray
    value: np.ndarray
    p_in: np.ndarray
    p_out: np.ndarray


def epsilon_beliefs(model: EpsilonPrivacy, counts: NodeCounts) -> Beliefs:
    """ε-privacy's per-block level and posteriors (Machanavajjhala, Gehrke & Götz VLDB 2009, Def. 4)."""
    model.validate({d.name: d for d in counts.sensitive})
    level = np.asarray(model.levels(counts), dtype=np.float64)
    bc = counts.blocks(model.attribute)
    p_in, p_out = posteriors(model, counts)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(p_in > 0, p_in / p_out, -1.0)
    ratio = np.nan_to_num(ratio, nan=-1.0, posinf=np.inf)
    n = counts.n_blocks
    value, best_in, best_out = np.zeros(n, dtype=np.int64), np.zeros(n), np.zeros(n)
    if len(ratio):
        block = bc.block_of_cell
        order = np.lexsort((-ratio, block))  # per block, its largest ratio first
        first = order[np.r_[True, block[order][1:] != block[order][:-1]]]
        value[block[first]] = bc.codes[first]
        best_in[block[first]], best_out[block[first]] = p_in[first], p_out[first]
    return Beliefs(level, value, best_in, best_out)


def window_ranges(domain: SensitiveDomain, epsilon: float, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """Per value code of ``domain``, its ε-neighbourhood as a code range ``[left, right)``: (ε,m)-anonymity's own
    exact windows (Li, Tao & Xiao ICDE 2008; docs/models.md), so the audit and the model never disagree."""
    model = EMAnonymity(epsilon=epsilon, m=1, mode=mode, attribute=domain.name, where="[audit] proximity")
    return model.windows(domain)
