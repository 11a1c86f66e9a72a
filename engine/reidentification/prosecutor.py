"""Prosecutor re-identification risk (El Emam & Dankar, "Protecting Privacy Using k-Anonymity", JAMIA 15(5),
2008; ARX ``RiskModelSampleSummary.ProsecutorRisk``).  The attacker knows the target is in the released
table and picks one record of the target's equivalence class at random: a record in a class of ``f`` records
is re-identified with probability ``1/f``.

- highest risk ``= 1 / min f``; lowest risk ``= 1 / max f``;
- average risk (ARX's "success rate") ``= u / n`` — the mean of ``1/f`` over records (each class of ``f``
  records contributes ``f · 1/f = 1``);
- records at risk ``=`` the fraction of records whose risk ``1/f`` is strictly above the threshold.

Worked example: classes of 1, 1, 2 and 4 records (``n = 8``, ``u = 4``), threshold 0.2: highest ``1``, lowest
``0.25``, average ``4/8 = 0.5``, records at risk: every record (``1/4 = 0.25 > 0.2``) → ``1.0``; with threshold
0.3 the 4 records of the class of 4 are not at risk → ``4/8 = 0.5``.

>>> from veil.reidentification.classes import ClassSizes
>>> r = prosecutor(ClassSizes.of([1, 1, 2, 4]), threshold=0.3)
>>> r.highest, r.lowest, r.average, r.records_at_risk
(1.0, 0.25, 0.5, 0.5)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from veil.reidentification.classes import ClassSizes

THRESHOLD = 0.2  # ARX's default: records in classes of fewer than 5 records are at risk


@dataclass(frozen=True)
class ProsecutorRisk:
    threshold: float
    highest: float
    lowest: float
    average: float
    records_at_risk: float  # fraction of records with risk above ``threshold``

    def document(self) -> dict[str, float]:
        return {
            "threshold": self.threshold,
            "highest": self.highest,
            "lowest": self.lowest,
            "average": self.average,
            "records_at_risk": self.records_at_risk,
        }


def average_risk(classes: ClassSizes) -> float:
    """``u / n`` (0 for an empty table, as ARX: a fully suppressed table carries no risk)."""
    return classes.classes / classes.records if classes.records else 0.0


def prosecutor(classes: ClassSizes, threshold: float = THRESHOLD) -> ProsecutorRisk:
    """The prosecutor risk of a table whose class sizes are ``classes``."""
    if classes.empty:
        return ProsecutorRisk(threshold, 0.0, 0.0, 0.0, 0.0)
    sizes, counts = classes.sizes, classes.counts
    at_risk = 1.0 / sizes > threshold  # as ARX compares: 1/f > t
    rows = sizes * counts
    return ProsecutorRisk(
        threshold,
        1.0 / float(sizes[0]),
        1.0 / float(sizes[-1]),
        average_risk(classes),
        float(rows[at_risk].sum()) / float(rows.sum()),
    )


def classes_to_suppress(classes: ClassSizes, threshold: float) -> int:
    """The fewest classes to suppress, smallest first, so that the average risk of the rest is at most
    ``threshold`` (ARX's enforcement of a risk-based criterion, ``RiskBasedCriterion.enforce``: the smallest
    classes go first; ``u`` when only the empty table holds).  Smallest-first is the optimum in records too:
    removing a class of ``f`` records gains ``1 - t·f`` of slack ``t·n - u`` for ``f`` records, and among ``m``
    classes the ``m`` smallest gain the most.

    >>> classes_to_suppress(ClassSizes.of([1, 1, 10]), 0.2)   # 3/12 > 0.2; without one unique 2/11 <= 0.2
    1
    """
    u, n = classes.classes, classes.records
    removed = 0
    if u <= threshold * n:
        return 0
    for size, count in zip(classes.sizes.tolist(), classes.counts.tolist()):
        gain = 1.0 - threshold * size
        if gain <= 0:  # classes this large (and larger) only lower the slack
            break
        need = (u - threshold * n) / gain  # classes of this size to remove
        k = min(count, max(int(np.ceil(need - 1e-12)), 0))
        while k > 0 and (u - (k - 1)) <= threshold * (n - (k - 1) * size):  # floating point: the fewest exactly
            k -= 1
        while k < count and (u - k) > threshold * (n - k * size):
            k += 1
        if (u - k) <= threshold * (n - k * size):
            return removed + k
        u, n, removed = u - count, n - count * size, removed + count
    return classes.classes
