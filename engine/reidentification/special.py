"""Special functions the uniqueness estimators need, in plain numpy/math (scipy is a test dependency only):
digamma ψ, trigamma ψ', and the hypergeometric probability of drawing exactly one marked element.

>>> round(digamma(1.0), 12), round(trigamma(1.0), 12)      # -γ and π²/6
(-0.577215664902, 1.644934066848)
>>> round(hypergeom_one(10, 1, 3), 12)                     # one marked of 10, 3 drawn: P = 3/10
0.3
"""

from __future__ import annotations

import math

import numpy as np


def digamma(x: float) -> float:
    """ψ(x) for x > 0: the recurrence ψ(x) = ψ(x+1) - 1/x up to x >= 12, then the asymptotic series."""
    if x <= 0:
        return math.nan
    acc = 0.0
    while x < 12.0:
        acc -= 1.0 / x
        x += 1.0
    inv = 1.0 / x
    inv2 = inv * inv
    return (
        acc
        + math.log(x)
        - 0.5 * inv
        - inv2 * (1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (1.0 / 252 - inv2 * (1.0 / 240 - inv2 / 132))))
    )


def trigamma(x: float) -> float:
    """ψ'(x) for x > 0: ψ'(x) = ψ'(x+1) + 1/x² up to x >= 12, then the asymptotic series."""
    if x <= 0:
        return math.nan
    acc = 0.0
    while x < 12.0:
        acc += 1.0 / (x * x)
        x += 1.0
    inv = 1.0 / x
    inv2 = inv * inv
    return acc + inv + 0.5 * inv2 + inv * inv2 * (1.0 / 6 - inv2 * (1.0 / 30 - inv2 * (1.0 / 42 - inv2 / 30)))


def digamma_array(x: np.ndarray) -> np.ndarray:
    return np.fromiter((digamma(float(v)) for v in np.ravel(x)), dtype=np.float64, count=np.size(x))


def trigamma_array(x: np.ndarray) -> np.ndarray:
    return np.fromiter((trigamma(float(v)) for v in np.ravel(x)), dtype=np.float64, count=np.size(x))


def _log_choose(n: float, k: float) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def hypergeom_one(population: int, marked: int, drawn: int) -> float:
    """P(X = 1) for X hypergeometric: ``drawn`` of ``population`` without replacement, ``marked`` of them
    marked: ``marked · C(population - marked, drawn - 1) / C(population, drawn)`` (0 where impossible)."""
    if marked < 1 or drawn < 1 or drawn - 1 > population - marked or marked > population or drawn > population:
        return 0.0
    return math.exp(math.log(marked) + _log_choose(population - marked, drawn - 1) - _log_choose(population, drawn))
