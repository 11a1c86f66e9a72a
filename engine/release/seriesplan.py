"""A cohort series' plan (``[release] series_budget``, docs/series.md §2b): each night, the joiners' cohort size and
the node the series needs for the rows withheld and standing in to stay within a share of the table over the
next year, at the churn the series has seen.  Pure: counts in, a choice out; no SQL.

Rows are withheld while a block gathers a cohort (about ``(m − 1) / 2`` a block for cohorts of ``m``) and stand in
while a cohort cannot shed them (docs/series.md §2: stand-ins leave ``batch`` or more at a time, and only while the
cohort keeps ``batch`` live rows; its last ``batch − 1`` people keep every leaver shown).  With people leaving at
the rate they join, each a night with probability ``rate``, a cohort's expected stand-ins follow from the binomial
law of its leavers (``standing_in``); the cohorts already formed are projected from their live and standing rows
tonight, the ones still to form from the join rate, so the plan sees the stand-ins small cohorts have piled up.
Everything here is sizes and counts of joiners and leavers, which the adversary of docs/series.md §1 knows.

>>> round(float(standing_in(3, 0, 2, np.array([0.5]))[0]), 3)   # 3 people, batch 2: S = 0, 1, 2, 0 for 0–3 gone
1.125
>>> Outlook(rows=1000, rate=0.0, batch=2, cohorts={}).share(blocks=10, size=10)  # 10 · (10 − 1) / 2 wait
0.045
>>> census = Outlook(rows=100_000, rate=0.005, batch=10, cohorts={})  # 1% of the rows change a night
>>> census.cohort(blocks=219, least=10), census.cohort(blocks=15, least=10)
((80, 0.187), (300, 0.0496))
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

GRID = (1, 2, 3, 5, 8, 10, 15, 20, 30, 50, 80)  # the joiners' cohort sizes tried, in multiples of ``batch``
POINTS = 8  # nights of the horizon the share is predicted at (its eighths)
STEPS = 32  # ages per eighth a cohort's expected stand-ins are computed at
HORIZON = 365  # nights ahead the plan looks
FEWEST = 8  # the plan keeps at least this many blocks (or the series' own, if fewer)


def standing_in(live: int, gone: int, batch: int, p: np.ndarray) -> np.ndarray:
    """Expected stand-ins of a cohort showing ``live`` rows of people still there and ``gone`` stand-ins, once each
    of its live people has left with probability ``p`` (one figure per ``p``).  While it keeps ``batch`` live rows
    its stand-ins leave ``batch`` or more at a time (``gone`` of ``batch`` or more at once), so ``D mod batch`` of
    ``D`` leavers stand in; past that each leaver stays shown until the last has left, and the cohort leaves whole."""
    if live >= batch and gone >= batch:
        gone = 0
    d = np.arange(live + 1)
    logfact = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, live + 1, dtype=np.float64)))])
    q = np.clip(np.asarray(p, dtype=np.float64), 1e-12, 1 - 1e-12)[:, None]
    pmf = np.exp(logfact[live] - logfact[d] - logfact[live - d] + d * np.log(q) + (live - d) * np.log1p(-q))
    total = gone + d
    shed = (live + gone - batch) // batch * batch if live >= batch else 0  # the last batch leaves with batch live
    stand = np.where(live - d >= batch, total % batch, total - shed)
    stand = np.where(d == live, 0, stand)
    return np.asarray(pmf @ stand.astype(np.float64))


@dataclass(frozen=True)
class Outlook:
    """What the plan reads: tonight's rows, the join rate (joiners per row per night; people are taken to leave at
    it), the smallest batch, and the cohorts formed: how many show each (live, standing) pair of row counts."""

    rows: int
    rate: float
    batch: int
    cohorts: Mapping[tuple[int, int], int]
    horizon: int = HORIZON

    def points(self) -> np.ndarray:
        return _ages(self.horizon)[STEPS::STEPS]

    @functools.cached_property
    def formed(self) -> np.ndarray:
        """The stand-ins of the cohorts formed so far at each of the horizon's points."""
        gone = 1 - np.exp(-self.rate * self.points())
        total = np.zeros(POINTS)
        for (live, stand), count in self.cohorts.items():
            total += count * standing_in(live, stand, self.batch, gone)
        return total

    def joining(self, size: int) -> np.ndarray:
        """The stand-ins of the cohorts of ``size`` joiners still to form, at each of the horizon's points."""
        return _joining(size, self.batch, self.rate, self.rows, self.horizon)

    def held(self, blocks: int, size: int) -> tuple[float, np.ndarray]:
        """The rows withheld (gathering cohorts of ``size`` on a node of ``blocks`` blocks), and the stand-ins at
        each of the horizon's points."""
        per_block = self.rate * self.rows / max(blocks, 1)
        gathered = size + 1.5 * per_block  # a night's arrivals overshoot, and a coin may hold a cohort a night
        return blocks * (gathered - 1) / 2, self.formed + self.joining(math.ceil(gathered))

    def share(self, blocks: int, size: int) -> float:
        """The largest share of the table withheld or standing in over the horizon, for cohorts of ``size`` on a
        node of ``blocks`` blocks."""
        withheld, standing = self.held(blocks, size)
        return (float(np.max(standing)) + withheld) / self.rows if self.rows else 0.0

    def cohort(self, blocks: int, least: int) -> tuple[int, float]:
        """The joiners' cohort size of at least ``least`` rows whose share is smallest on a node of ``blocks``
        blocks, with that share (to 4 places)."""
        share, size = min(
            (round(self.share(blocks, size), 4), size) for size in {max(least, g * self.batch) for g in GRID}
        )
        return size, share


@dataclass(frozen=True)
class Budget:
    """A node admitted by the plan: some cohort size (``best``, from the node's block sizes) keeps the share
    withheld or standing in within ``share``."""

    best: Callable[[Any], tuple[int, float]]
    share: float

    def admits(self, sizes: Any) -> bool:
        return self.best(sizes)[1] <= self.share


@functools.lru_cache(maxsize=256)
def _joining(size: int, batch: int, rate: float, rows: int, horizon: int) -> np.ndarray:
    """Joiners entering in cohorts of ``size`` from tonight on, ``rate · rows`` a night: at each eighth ``t`` of the
    horizon, the cohorts formed at ``s < t`` (``rate · rows / size`` a night) hold ``standing_in`` at age ``t − s``."""
    each = standing_in(size, 0, batch, 1 - np.exp(-rate * _ages(horizon)))
    step = horizon / (POINTS * STEPS)
    cumulative = np.concatenate([[0.0], np.cumsum((each[1:] + each[:-1]) / 2 * step)])
    return np.asarray(cumulative[STEPS::STEPS] * rate * rows / size)


def _ages(horizon: int) -> np.ndarray:
    """The nights from tonight at which a cohort's stand-ins are computed: ``STEPS`` to each eighth of the horizon."""
    return np.linspace(0.0, horizon, POINTS * STEPS + 1)
