"""Journalist and marketer re-identification risk (El Emam, "Guide to the De-Identification of Personal
Health Information", 2013, ch. 14; ARX ``RiskModelSampleSummary.JournalistRisk`` / ``MarketerRisk``).

The attacker does not know whether the target is in the released sample; they match the target against
the sample's class, which stands for ``F`` people in the population (the class's size in a population table
at the same node).  For sample class ``j`` of ``f_j`` records and ``F_j >= f_j`` people:

- journalist highest risk ``= 1 / min_j F_j``, lowest ``= 1 / max_j F_j``;
- journalist records at risk ``=`` the fraction of sample records whose ``1/F_j`` is strictly above the threshold;
- journalist average risk ``= max(u / Σ_j F_j, Σ_j (f_j / F_j) / n)`` (ARX's success rate: the larger of the
  two averages of El Emam's guide);
- marketer risk (the expected fraction of the sample an attacker matching everyone re-identifies)
  ``= Σ_j (f_j / F_j) / n``.

Without a population table — a sampling fraction only, or none — the population class sizes are unknown and,
as in ARX, the sample stands for its population (``F_j = f_j``): journalist figures are the prosecutor's
(an upper bound, since ``F_j >= f_j``) and marketer risk is ``u / n``.

Worked example (hand computation): sample classes ``f = (1, 2)`` in population classes ``F = (4, 2)``,
``n = 3``, ``u = 2``: highest ``1/2``, lowest ``1/4``, average ``max(2/6, (1/4 + 2/2)/3) = max(0.333…, 0.41666…)
= 0.41666…``, marketer ``0.41666…``; with threshold 0.3 the two records of the class with ``F = 2`` are at
risk: ``2/3``.

>>> r = journalist([1, 2], [4, 2], threshold=0.3)
>>> r.highest, r.lowest, round(r.average, 6), round(r.records_at_risk, 6), round(marketer([1, 2], [4, 2]), 6)
(0.5, 0.25, 0.416667, 0.666667, 0.416667)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from veil.reidentification.prosecutor import THRESHOLD


@dataclass(frozen=True)
class JournalistRisk:
    threshold: float
    highest: float
    lowest: float
    average: float
    records_at_risk: float

    def document(self) -> dict[str, float]:
        return {
            "threshold": self.threshold,
            "highest": self.highest,
            "lowest": self.lowest,
            "average": self.average,
            "records_at_risk": self.records_at_risk,
        }


def _pairs(sample: Sequence[int] | np.ndarray, population: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    f = np.asarray(sample, dtype=np.float64)
    big = np.asarray(population, dtype=np.float64)
    if f.shape != big.shape:
        raise ValueError("one population class size per sample class")
    if np.any(big < f):
        raise ValueError("a population class is smaller than its sample class: the population must contain the sample")
    keep = f > 0
    return f[keep], big[keep]


def journalist(
    sample: Sequence[int] | np.ndarray, population: Sequence[int] | np.ndarray, threshold: float = THRESHOLD
) -> JournalistRisk:
    """Journalist risk of sample classes of ``sample`` records standing for ``population`` people each."""
    f, big = _pairs(sample, population)
    n = f.sum()
    if n == 0:
        return JournalistRisk(threshold, 0.0, 0.0, 0.0, 0.0)
    at_risk = 1.0 / big > threshold
    average = max(len(f) / big.sum(), float((f / big).sum() / n))
    return JournalistRisk(
        threshold, float(1.0 / big.min()), float(1.0 / big.max()), average, float(f[at_risk].sum() / n)
    )


def marketer(sample: Sequence[int] | np.ndarray, population: Sequence[int] | np.ndarray) -> float:
    """``Σ f_j / F_j / n``."""
    f, big = _pairs(sample, population)
    n = f.sum()
    return float((f / big).sum() / n) if n else 0.0
