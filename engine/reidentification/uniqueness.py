"""Sample and population uniqueness (ARX ``RiskModelSampleUniqueness``, ``RiskModelPopulationUniqueness``).

- *Sample uniques*: the fraction of the sample's records alone in their class, ``c(1) / n``.
- *Population uniques*: the estimated fraction of the population's records alone in their class in the
  population, ``Û / N``, where ``Û`` is the estimated number of population uniques under the Pitman
  (``veil.reidentification.pitman``), Zayatz (``zayatz``) or SNB (``snb``) model and ``N`` the population size
  (``n / π`` for a sampling fraction ``π``).
- *Dankar et al.'s rule* (Dankar, El Emam, Neisa & Roffey, "Estimating the re-identification risk of clinical
  data sets", BMC Medical Informatics and Decision Making 12:66, 2012), as ARX applies it: with no sample uniques
  the estimate is 0; for ``π <= 0.1`` Pitman's estimate (Zayatz's when Pitman's is unavailable); above,
  the smaller of Zayatz's and SNB's (Zayatz's when SNB's is unavailable).

An estimate is *unavailable* when its solver does not converge or it falls outside ``[0, N]`` (ARX reports 0
then; Veil reports ``None``).

Worked example (hand computation): a sample that is the whole population (``π = 1``) with classes of 1, 1, 2
and 4 records: sample uniques ``2/8``; Zayatz's estimate is exactly the ``2`` sample uniques (a unique of a
census is a population unique), so Dankar's rule (``π > 0.1``: min of Zayatz and SNB) gives at most ``2/8``.

>>> from veil.reidentification.classes import ClassSizes
>>> u = population_uniqueness(ClassSizes.of([1, 1, 2, 4]), population=8)
>>> u.sample_uniques, u.zayatz, u.fraction("zayatz")
(0.25, 2.0, 0.25)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from veil.reidentification.classes import ClassSizes
from veil.reidentification.pitman import pitman
from veil.reidentification.snb import snb
from veil.reidentification.zayatz import zayatz

MODELS = ("dankar", "pitman", "zayatz", "snb")
DANKAR_FRACTION = 0.1  # at or below: Pitman; above: min(Zayatz, SNB)


def sample_uniques(classes: ClassSizes) -> float:
    """``c(1) / n``: the fraction of records unique in the sample."""
    return classes.of_size(1) / classes.records if classes.records else 0.0


def _valid(value: float) -> bool:
    return not math.isnan(value) and value != 0.0


@dataclass(frozen=True)
class PopulationUniqueness:
    """The estimated numbers of population uniques under each model (``None``: unavailable), the model
    Dankar's rule chose and its estimate, for a sample of ``records`` from a population of ``population``."""

    records: int
    population: float
    sample_uniques: float
    pitman: float | None
    zayatz: float | None
    snb: float | None
    dankar_model: str
    dankar: float | None

    @property
    def sampling_fraction(self) -> float:
        return self.records / self.population if self.population else 1.0

    def estimate(self, model: str) -> float | None:
        """Estimated number of population uniques under ``model`` (one of ``MODELS``)."""
        return {"dankar": self.dankar, "pitman": self.pitman, "zayatz": self.zayatz, "snb": self.snb}[model]

    def fraction(self, model: str) -> float | None:
        """Estimated fraction of the population's records that are population uniques."""
        value = self.estimate(model)
        return None if value is None else value / self.population

    def document(self) -> dict[str, object]:
        return {
            "records": self.records,
            "population": self.population,
            "sampling_fraction": self.sampling_fraction,
            "sample_uniques": self.sample_uniques,
            "population_uniques": {m: self.fraction(m) for m in MODELS},
            "estimated_uniques": {m: self.estimate(m) for m in MODELS},
            "dankar_model": self.dankar_model,
        }


def dankar(classes: ClassSizes, population: float, zayatz_fallback: bool = True) -> tuple[str, float]:
    """(model chosen, estimated population uniques; NaN when unavailable) by Dankar et al.'s rule."""
    if classes.of_size(1) == 0:
        return "dankar", 0.0
    if classes.records / population <= DANKAR_FRACTION:
        p = pitman(classes, population)
        if _valid(p) or not zayatz_fallback:
            return "pitman", p
        return "zayatz", zayatz(classes, population)
    z, s = zayatz(classes, population), snb(classes, population)
    if _valid(s) and not z < s:
        return "snb", s
    return "zayatz", z


def population_uniqueness(classes: ClassSizes, population: float) -> PopulationUniqueness:
    """Every estimate for a sample with class sizes ``classes`` from a population of ``population`` records."""
    if population < classes.records:
        raise ValueError(f"a population of {population:g} records cannot hold a sample of {classes.records}")
    if classes.of_size(1) == 0:
        return PopulationUniqueness(classes.records, population, 0.0, 0.0, 0.0, 0.0, "dankar", 0.0)
    p, z, s = pitman(classes, population), zayatz(classes, population), snb(classes, population)
    chosen, value = dankar(classes, population)

    def shown(v: float) -> float | None:
        return v if _valid(v) else None

    return PopulationUniqueness(
        classes.records, population, sample_uniques(classes), shown(p), shown(z), shown(s), chosen, shown(value)
    )
