"""Re-identification risk as privacy models (ARX's ``AverageReidentificationRisk`` and
``PopulationUniqueness`` criteria; docs/reidentification.md §5).  numpy only: both read the node's class sizes.

- ``average-risk`` (threshold ``t``): the average prosecutor risk ``u / n`` (``veil.reidentification
  .prosecutor``) is at most ``t``.
- ``population-uniqueness`` (threshold ``t``, ``model`` dankar | pitman | zayatz | snb, ``sampling_fraction``
  ``π`` or ``population`` ``N``): the estimated fraction of population uniques is at most ``t``
  (``veil.reidentification.uniqueness``; an unavailable estimate fails, as in ARX, unless the table has no
  sample unique).

Both are table-level: a block's verdict depends on the other blocks.  When the table fails, the smallest
classes fail first — the fewest records whose removal makes the rest hold (ARX's ``RiskBasedCriterion
.enforce``) — so a suppression budget can absorb them.  They declare ``needs = SUPERSETS``, the one kind the
search and the release evaluate on the whole node (never chunk by chunk), and their level is the table's
(every block carries it).

Properties (tests/test_reidentification_models.py, hypothesis):

- average risk is monotone: merging two classes lowers ``u`` and keeps ``n``, so ``u / n`` never rises under
  generalization.  Not ``monotone_with_suppression`` in the per-block sense the search relies on (a block
  containing a passing block passes): which blocks are the smallest depends on the whole node;
- population uniqueness is not monotone: merging two classes can raise an estimate (the test keeps a
  counter-example), so the search never tags nodes above a passing one.

With other models suppressing blocks beside it, the released table is the blocks every model keeps: blocks
another model suppresses can raise the average risk of what is left.  ``veil risk --release N`` measures the
table as published.

>>> from veil.counts import NodeCounts
>>> import numpy as np
>>> nc = NodeCounts.from_cells(("q",), (0,), np.array([[0], [1], [2]]), np.zeros((3, 0)), np.array([1, 1, 10]), (3,))
>>> v = AverageRisk(threshold=0.2).check(nc)        # 3/12 = 0.25 > 0.2: one unique goes, 2/11 <= 0.2
>>> v.passed.tolist(), round(v.achieved, 6)
([False, True, True], 0.181818)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from veil.counts import NodeCounts, SensitiveDomain
from veil.errors import ConfigError
from veil.models.base import Needs, Properties, Reference, Verdict
from veil.models.params import Params
from veil.reidentification.classes import ClassSizes
from veil.reidentification.prosecutor import average_risk, classes_to_suppress
from veil.reidentification.uniqueness import MODELS as ESTIMATORS
from veil.reidentification.uniqueness import dankar
from veil.reidentification.pitman import pitman
from veil.reidentification.snb import snb
from veil.reidentification.zayatz import zayatz
from veil.registry import MODELS

TABLE_LEVEL = (
    "table-level: a block's verdict reads the whole node's class sizes (the smallest classes fail "
    "first), so it is evaluated on the whole node (needs = SUPERSETS)"
)


def _smallest_fail(sizes: np.ndarray, m: int) -> np.ndarray:
    """Per block: passes unless among the ``m`` smallest (ties in block order)."""
    passed = np.ones(len(sizes), dtype=bool)
    if m:
        passed[np.argsort(sizes, kind="stable")[:m]] = False
    return passed


@MODELS.register("average-risk")
@dataclass(frozen=True)
class AverageRisk:
    type: ClassVar[str]  # set by the registration above
    reference: ClassVar[Reference] = Reference(
        achieved="average prosecutor risk `u/n` (docs/reidentification.md)", sample={"threshold": 0.05}
    )
    threshold: float
    where: str = "average-risk"

    @classmethod
    def from_params(cls, p: Params) -> AverageRisk:
        """The model of a ``[[models]]`` table."""
        return cls(threshold=p.number("threshold", above=0, maximum=1), where=p.where)

    def __post_init__(self) -> None:
        if (
            isinstance(self.threshold, bool)
            or not isinstance(self.threshold, (int, float))
            or not 0 < self.threshold <= 1
        ):
            raise ConfigError(f"{self.where}: parameter 'threshold' must be a number in (0, 1], got {self.threshold!r}")

    @property
    def attribute(self) -> str | None:
        return None

    @property
    def properties(self) -> Properties:
        return Properties(
            monotone=True,
            monotone_with_suppression=False,
            needs=Needs.SUPERSETS,
            achieved="max",
            note=TABLE_LEVEL + "; u/n never rises when classes merge",
        )

    def _decide(self, counts: NodeCounts) -> tuple[np.ndarray, float]:
        sizes = counts.sizes.astype(np.int64)
        classes = ClassSizes.of(sizes)
        m = classes_to_suppress(classes, self.threshold)
        return _smallest_fail(sizes, m), average_risk(classes.without_smallest(m))

    def levels(self, counts: NodeCounts) -> np.ndarray:
        """The table's average risk (after its own suppression) for every block."""
        return np.full(counts.n_blocks, self._decide(counts)[1])

    def check(self, counts: NodeCounts) -> Verdict:
        passed, level = self._decide(counts)
        return Verdict(passed, level if counts.n_blocks else None)

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        return None

    def describe(self) -> str:
        return f"average re-identification risk (threshold={self.threshold:g})"


@MODELS.register("population-uniqueness")
@dataclass(frozen=True)
class PopulationUniqueness:
    type: ClassVar[str]  # set by the registration above
    reference: ClassVar[Reference] = Reference(
        achieved=(
            "estimated share of population uniques; `model` dankar | pitman | zayatz | snb, "
            "`sampling_fraction` or `population`"
        ),
        sample={"threshold": 0.01, "model": "dankar", "sampling_fraction": 0.1},
    )
    threshold: float
    model: str = "dankar"
    sampling_fraction: float | None = None
    population: int | None = None
    where: str = "population-uniqueness"

    @classmethod
    def from_params(cls, p: Params) -> PopulationUniqueness:
        """The model of a ``[[models]]`` table."""
        threshold = p.number("threshold", above=0, maximum=1)
        model = p.text("model", default="dankar", choices=ESTIMATORS)
        fraction = p.number("sampling_fraction", above=0, maximum=1) if p.has("sampling_fraction") else None
        population = p.integer("population", minimum=1) if p.has("population") else None
        return cls(threshold=threshold, model=model, sampling_fraction=fraction, population=population, where=p.where)

    def __post_init__(self) -> None:
        if (
            isinstance(self.threshold, bool)
            or not isinstance(self.threshold, (int, float))
            or not 0 < self.threshold <= 1
        ):
            raise ConfigError(f"{self.where}: parameter 'threshold' must be a number in (0, 1], got {self.threshold!r}")
        if self.model not in ESTIMATORS:
            raise ConfigError(
                f"{self.where}: parameter 'model' must be one of {', '.join(ESTIMATORS)}, got {self.model!r}"
            )
        if (self.sampling_fraction is None) == (self.population is None):
            raise ConfigError(
                f"{self.where}: give exactly one of 'sampling_fraction' (0 < π <= 1) or 'population' "
                "(the population's size)"
            )
        if self.sampling_fraction is not None and not 0 < self.sampling_fraction <= 1:
            raise ConfigError(
                f"{self.where}: parameter 'sampling_fraction' must be in (0, 1], got {self.sampling_fraction!r}"
            )
        if self.population is not None and self.population < 1:
            raise ConfigError(f"{self.where}: parameter 'population' must be >= 1, got {self.population!r}")

    @property
    def attribute(self) -> str | None:
        return None

    @property
    def properties(self) -> Properties:
        return Properties(
            monotone=False,
            monotone_with_suppression=False,
            needs=Needs.SUPERSETS,
            achieved="max",
            note=TABLE_LEVEL + "; estimates can rise when classes merge (tests keep a counter-example)",
        )

    def size(self, records: int) -> float:
        """``N``: the population, or ``n / π``."""
        if self.population is not None:
            return float(self.population)
        return records / float(self.sampling_fraction)  # type: ignore[arg-type]

    def estimate(self, classes: ClassSizes, population: float) -> float:
        """The estimated fraction of population uniques (NaN: unavailable); Dankar's rule without Zayatz's
        fallback, as ARX's criterion applies it."""
        if classes.of_size(1) == 0:
            return 0.0
        if self.model == "dankar":
            value = dankar(classes, population, zayatz_fallback=False)[1]
        else:
            value = {"pitman": pitman, "zayatz": zayatz, "snb": snb}[self.model](classes, population)
        return value / population if not math.isnan(value) else math.nan

    def holds(self, classes: ClassSizes, population: float) -> bool:
        """ARX's test: ``0 < estimate <= t``, or no estimate and no sample unique (an empty table holds)."""
        if classes.empty:
            return True
        value = self.estimate(classes, population)
        if not math.isnan(value) and 0 < value <= self.threshold:
            return True
        return value == 0 and classes.of_size(1) == 0

    def _decide(self, counts: NodeCounts) -> tuple[np.ndarray, float | None]:
        sizes = counts.sizes.astype(np.int64)
        classes = ClassSizes.of(sizes)
        big = self.size(classes.records)
        lo, hi = 0, classes.classes  # binary search on the smallest classes removed (ARX's enforcement)
        if not self.holds(classes, big):
            lo = 1
            while lo < hi:
                mid = (lo + hi) // 2
                if self.holds(classes.without_smallest(mid), big):
                    hi = mid
                else:
                    lo = mid + 1
        m = lo if lo else 0
        kept = classes.without_smallest(m)
        value = self.estimate(kept, big) if not kept.empty else 0.0
        return _smallest_fail(sizes, m), None if math.isnan(value) else value

    def levels(self, counts: NodeCounts) -> np.ndarray:
        """The estimated fraction of population uniques of the table (after its own suppression), every block."""
        level = self._decide(counts)[1]
        return np.full(counts.n_blocks, np.inf if level is None else level)

    def check(self, counts: NodeCounts) -> Verdict:
        passed, level = self._decide(counts)
        return Verdict(passed, level if counts.n_blocks else None)

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        return None

    def describe(self) -> str:
        given = (
            f"sampling fraction {self.sampling_fraction:g}"
            if self.sampling_fraction is not None
            else f"population {self.population}"
        )
        return f"population uniqueness (threshold={self.threshold:g}, {self.model}, {given})"
