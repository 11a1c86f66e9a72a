"""Utility per attribute, as ARX reports it (docs/workload.md §Utility per attribute): for each quasi-identifier
at a node, ARX's column-oriented quality models — *generalization intensity* (Sweeney's precision,
``QualityModelColumnOrientedPrecision``), *granularity* (Iyengar's loss, ``QualityModelColumnOrientedLoss`` with
raw domain shares) and *non-uniform entropy* (de Waal & Willenborg 1999 as Prasser et al. 2016 extend it,
``QualityModelColumnOrientedNonUniformEntropy``) — each normalized as ARX's ``QualityMeasureColumnOriented.getValue``
does: ``1 - (raw - min) / (max - min)``, truncated to [0, 1], higher is better.  Pure numpy on a node's counts.

Per attribute with level ``l`` of height ``h``, ``N`` rows (suppressed ones included, as ARX keeps them as ``*``),
``S`` suppressed, ``D`` hierarchy leaves, ``n_v`` rows per leaf, ``m_u`` rows per level-``l`` value, ``s_u``
suppressed rows per level-``l`` value:

- intensity: ``raw = ((N - S) · l/h + S) / N``; min 0, max 1.
- granularity: ``raw = (Σ_released rows L(u)/D + S) / N`` (``L(u)`` leaves under the row's value); min ``1/D``, max 1.
- non-uniform entropy: ``raw = -Σ_v n_v log2(n_v / m_u(v)) - Σ_u s_u log2(s_u / S)`` (the second sum only when
  ``S > 0`` and ``l < h``: the suppressed rows' step from level ``l`` to the top); min 0,
  ``max = -Σ_v n_v log2(n_v / N)``.

A measure whose ``max`` equals its ``min`` (one leaf; one distinct value) is ``None`` (ARX: not available).
ARX finds a value's level from its label (the first level that spells it); Veil uses the node's level.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from veil.counts import NodeCounts


def _quality(raw: float, low: float, high: float) -> float | None:
    if not high > low:
        return None
    return 1.0 - min(max((raw - low) / (high - low), 0.0), 1.0)


def _xlog2(x: np.ndarray, y: np.ndarray) -> float:
    """``Σ x log2(x / y)`` over ``x > 0``."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    keep = x > 0
    return math.fsum((x[keep] * np.log2(x[keep] / y[keep])).tolist())


def leaf_totals(bottom: NodeCounts) -> list[np.ndarray]:
    """Rows per leaf of every quasi-identifier, from the bottom node's counts."""
    return [
        np.bincount(bottom.keys[:, i], weights=bottom.sizes, minlength=bottom.cardinalities[i]).astype(np.int64)
        for i in range(len(bottom.attributes))
    ]


def attribute_utility(
    counts: NodeCounts, suppressed: np.ndarray, hierarchies: Sequence[Any], leaves: Sequence[np.ndarray]
) -> list[dict[str, Any]]:
    """Each quasi-identifier's ARX quality at ``counts.node`` with the ``suppressed`` blocks dropped (``leaves``:
    ``leaf_totals`` of the bottom node)."""
    suppressed = np.asarray(suppressed, dtype=bool)
    sizes = counts.sizes.astype(np.int64)
    total = int(sizes.sum())
    gone = int(sizes[suppressed].sum())
    out = []
    for i, (name, h, n_v) in enumerate(zip(counts.attributes, hierarchies, leaves)):
        level = int(counts.node[i])  # type: ignore[arg-type]
        height = int(h.height)
        up = h.ancestors(0, level)
        card = h.cardinality(level)
        m_u = np.bincount(up, weights=n_v, minlength=card)
        s_u = np.bincount(counts.keys[suppressed, i], weights=sizes[suppressed], minlength=card)
        under = h.leaf_counts(level).astype(np.float64)
        domain = float(len(up))
        if total == 0:
            out.append(
                {
                    "attribute": name,
                    "level": level,
                    "generalization_intensity": None,
                    "granularity": None,
                    "non_uniform_entropy": None,
                }
            )
            continue
        intensity = ((total - gone) * (level / height if height else 0.0) + gone) / total
        released = m_u - s_u
        granularity = (math.fsum((released * under / domain).tolist()) + gone) / total
        entropy = -_xlog2(n_v, m_u[up])
        if gone and level < height:
            entropy -= _xlog2(s_u, np.full(card, float(gone)))
        top = -_xlog2(n_v, np.full(len(n_v), float(total)))
        out.append(
            {
                "attribute": name,
                "level": level,
                "generalization_intensity": _quality(intensity, 0.0, 1.0),
                "granularity": _quality(granularity, 1.0 / domain, 1.0),
                "non_uniform_entropy": _quality(entropy, 0.0, top),
            }
        )
    return out
