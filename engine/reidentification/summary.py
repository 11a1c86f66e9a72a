"""Every re-identification figure of one table in one document (``veil risk --json``, ``veil.risk``, the
report's risk section).  numpy only: it reads class sizes, and for a population table the population class
size of each sample class.

>>> from veil.reidentification.classes import ClassSizes
>>> s = summarize(ClassSizes.of([1, 1, 2, 4]), subject="example", sampling_fraction=0.5)
>>> s.prosecutor.average, s.marketer, s.uniqueness.population, s.document()["population"]["source"]
(0.5, 0.5, 16.0, 'sampling fraction 0.5')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from veil.reidentification.classes import ClassSizes
from veil.reidentification.journalist import JournalistRisk, journalist, marketer
from veil.reidentification.prosecutor import THRESHOLD, ProsecutorRisk, prosecutor
from veil.reidentification.uniqueness import PopulationUniqueness, population_uniqueness, sample_uniques


@dataclass(frozen=True)
class RiskSummary:
    subject: str
    classes: ClassSizes
    prosecutor: ProsecutorRisk
    journalist: JournalistRisk
    marketer: float
    sample_uniques: float
    uniqueness: PopulationUniqueness | None
    population_source: str  # "table …", "sampling fraction …", "population …" or "none"
    population_rows: float | None
    unmatched_population_rows: int = 0

    def document(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "records": self.classes.records,
            "classes": self.classes.classes,
            "class_sizes": self.classes.document(),
            "prosecutor": self.prosecutor.document(),
            "journalist": self.journalist.document(),
            "marketer": {"average": self.marketer},
            "sample_uniques": self.sample_uniques,
            "population": {
                "source": self.population_source,
                "rows": self.population_rows,
                "unmatched_rows": self.unmatched_population_rows,
            },
            "population_uniqueness": None if self.uniqueness is None else self.uniqueness.document(),
        }


def summarize(
    classes: ClassSizes,
    *,
    subject: str,
    threshold: float = THRESHOLD,
    sample_sizes: np.ndarray | None = None,
    population_sizes: np.ndarray | None = None,
    population_rows: int | None = None,
    population_name: str | None = None,
    sampling_fraction: float | None = None,
    population: float | None = None,
    unmatched: int = 0,
) -> RiskSummary:
    """The figures of a table with class sizes ``classes``.  Journalist and marketer risk read the population
    table's class sizes (``population_sizes``, one per sample class of ``sample_sizes``; ``population_rows``
    its rows); without one the sample stands for its population (ARX).  Population uniqueness needs the
    population's size: the table's rows, ``population``, or ``n / sampling_fraction``; else it is ``None``."""
    f = sample_sizes if sample_sizes is not None else np.repeat(classes.sizes, classes.counts)
    big = population_sizes if population_sizes is not None else f
    size: float | None
    if population_sizes is not None:
        size, source = float(population_rows or big.sum()), f"table {population_name}"
    elif population is not None:
        size, source = float(population), f"population {population:g}"
    elif sampling_fraction is not None:
        size, source = classes.records / sampling_fraction, f"sampling fraction {sampling_fraction:g}"
    else:
        size, source = None, "none"
    unique = population_uniqueness(classes, size) if size is not None and not classes.empty else None
    return RiskSummary(
        subject,
        classes,
        prosecutor(classes, threshold),
        journalist(f, big, threshold),
        marketer(f, big),
        sample_uniques(classes),
        unique,
        source,
        size,
        unmatched,
    )
