"""Population uniques under the Pitman model (Hoshino, "Applying Pitman's sampling formula to microdata
disclosure risk assessment", Journal of Official Statistics 17(4), 2001; ARX ``ModelPitman``).

The sample's partition into classes follows Pitman's sampling formula with parameters ``θ > -α``,
``0 <= α < 1``; its likelihood, given ``u`` classes among ``n`` records and ``c(k)`` classes of size ``k``, is
``Π_{i=1}^{u-1} (θ + iα) / Π_{i=1}^{n-1} (θ + i) · Π_k [Π_{m=1}^{k-1} (m - α)]^{c(k)}``.  The maximum-likelihood
equations (derivatives of the log-likelihood in θ and α) are

    Σ_{i=1}^{u-1} 1/(θ + iα) - Σ_{i=1}^{n-1} 1/(θ + i) = 0
    Σ_{i=1}^{u-1} i/(θ + iα) - Σ_{k>=2} c(k) Σ_{m=1}^{k-1} 1/(m - α) = 0

solved by Newton-Raphson from ARX's moment start (with ``c = c1(c1-1)/c2``, ``c2`` taken as 1 when 0):
``θ0 = (n u c - c1 (n-1)(2u + c)) / (2 c1 u + c1 c - n c)``, ``α0 = (θ0 (c1 - n) + (n-1) c1) / (n u)``.
The expected number of population uniques in a population of ``N`` is then
``Γ(θ + 1) / Γ(θ + α) · N^α`` (Hoshino 2001, eq. for E[S1]); an estimate outside ``[0, N]``, or with α = 0, or
without convergence is *unavailable* (NaN), as in ARX.

Worked example (checked against ARX 3.9's ``ModelPitman`` on the same histogram): 900 records in classes
of sizes 1 (×300), 2 (×100), 3 (×50), 5 (×20), 10 (×15) drawn from a population of 10,000 (ARX: 667.6443628…):

>>> from veil.reidentification.classes import ClassSizes
>>> h = ClassSizes([1, 2, 3, 5, 10], [300, 100, 50, 20, 15])
>>> round(pitman(h, 10_000), 3)
667.644
"""

from __future__ import annotations

import math

import numpy as np

from veil.reidentification import newton
from veil.reidentification.classes import ClassSizes
from veil.reidentification.special import digamma, trigamma


def start(classes: ClassSizes) -> tuple[float, float]:
    """ARX's moment-based start values (θ0, α0)."""
    c1, c2 = float(classes.of_size(1)), float(classes.of_size(2)) or 1.0
    u, n = float(classes.classes), float(classes.records)
    c = c1 * (c1 - 1) / c2
    t = (n * u * c - c1 * (n - 1) * (2 * u + c)) / (2 * c1 * u + c1 * c - n * c)
    a = (t * (c1 - n) + (n - 1) * c1) / (n * u)
    return t, a


def parameters(classes: ClassSizes) -> tuple[float, float]:
    """The maximum-likelihood (θ, α); NaNs when Newton-Raphson does not converge."""
    u, n = classes.classes, classes.records
    i = np.arange(1, u, dtype=np.float64)
    big = classes.sizes[classes.sizes >= 2].astype(np.float64)
    weight = classes.counts[classes.sizes >= 2].astype(np.float64)

    def equations(x: np.ndarray) -> np.ndarray:
        t, a = float(x[0]), float(x[1])
        if t + 1 <= 0 or a >= 1:
            return np.array([np.nan, np.nan])
        inv = 1.0 / (t + i * a)
        o2 = digamma(t + n) - digamma(t + 1)
        o4 = float(sum(w * (digamma(k - a) - digamma(1 - a)) for k, w in zip(big, weight)))
        return np.array([inv.sum() - o2, (i * inv).sum() - o4])

    def jacobian(x: np.ndarray) -> np.ndarray:
        t, a = float(x[0]), float(x[1])
        inv2 = 1.0 / (t + i * a) ** 2
        d1, d5, d3 = inv2.sum(), (i * inv2).sum(), (i * i * inv2).sum()
        d2 = trigamma(t + 1) - trigamma(t + n)
        d4 = float(sum(w * (trigamma(1 - a) - trigamma(k - a)) for k, w in zip(big, weight)))
        return np.array([[d2 - d1, -d5], [-d5, -d3 - d4]])

    t, a = newton.solve(equations, jacobian, start(classes), starts=())  # ARX: its moment start alone
    return float(t), float(a)


def pitman(classes: ClassSizes, population: float) -> float:
    """Estimated number of population uniques (NaN: unavailable)."""
    if classes.of_size(1) == 0:
        return 0.0
    t, a = parameters(classes)
    if math.isnan(t) or math.isnan(a) or a == 0:
        return math.nan
    values = []
    try:
        values.append(math.exp(math.lgamma(t + 1) - math.lgamma(t + a) + a * math.log(population)))
    except (ValueError, OverflowError):
        pass
    values = [v for v in values if 0 <= v <= population]
    return max(values) if values else math.nan
