"""Prosecutor re-identification risk from block sizes: an attacker who knows their target is in the table
links them to a block of ``n`` rows and picks one, right with probability ``1/n`` (El Emam & Dankar,
"Protecting Privacy Using k-Anonymity", JAMIA 2008; ARX's "prosecutor risk").  The highest risk is
``1/(smallest block)``, the average over records is ``blocks / rows``, and a record is *at risk* when its
``1/n`` exceeds the threshold (20% by default: blocks of fewer than 5 rows).

>>> r = prosecutor(np.array([1, 4, 5, 10]))
>>> r.highest, r.average, r.at_risk, r.rows
(1.0, 0.2, 5, 20)
>>> prosecutor(np.array([], dtype=np.int64)).highest
0.0
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

THRESHOLD = 0.2


@dataclass(frozen=True)
class Prosecutor:
    """Prosecutor risk of one table, given as its block sizes."""

    rows: int
    blocks: int
    highest: float  # 1 / smallest block
    average: float  # mean over records of 1 / (their block's size) = blocks / rows
    at_risk: int  # records whose risk exceeds ``threshold``
    threshold: float = THRESHOLD

    def document(self) -> dict[str, float | int]:
        return {
            "rows": self.rows,
            "blocks": self.blocks,
            "highest": self.highest,
            "average": self.average,
            "records_at_risk": self.at_risk,
            "threshold": self.threshold,
        }


def prosecutor(sizes: np.ndarray, threshold: float = THRESHOLD) -> Prosecutor:
    """The prosecutor risk of a table whose blocks have ``sizes`` rows (empty blocks ignored)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    sizes = sizes[sizes > 0]
    rows = int(sizes.sum())
    if rows == 0:
        return Prosecutor(0, 0, 0.0, 0.0, 0, threshold)
    at_risk = int(sizes[1.0 / sizes > threshold].sum())
    return Prosecutor(rows, len(sizes), 1.0 / float(sizes.min()), len(sizes) / rows, at_risk, threshold)
