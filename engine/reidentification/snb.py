"""Population uniques under the slide negative binomial (SNB) model (Chen & Keller-McNulty, "Estimation of
identification disclosure risk in microdata", Journal of Official Statistics 14(1), 1998; ARX ``ModelSNB``).

The population has ``K`` non-empty classes whose sizes ``F`` are 1 plus a negative binomial count:
``P(F = i) = C(i + α - 2, i - 1) β^α (1 - β)^(i-1)``, ``i >= 1``, so ``K β^α`` classes are population uniques.
Each record enters the sample with probability ``π`` (the sampling fraction), so a class's sample size is
``Bin(F, π)``.  With ``d = (1 - π)(1 - β)`` the expected numbers of sample classes of size 1 and 2 are

    E[c1] = K π (β / (1 - d))^α (1 + α d / (1 - d))
    E[c2] = K α β^α π² (1 - β) (2 - (1 - α) d) / (2 (1 - d)^(α+2))

and (α, β) solve ``E[c1] = c(1)``, ``E[c2] = c(2)`` by Newton-Raphson from ARX's start grid.  ``K`` is estimated
from the sample's class sizes ``c(i)`` by Haas & Stokes's Shlosser-type estimator ("Estimating the number of
classes in a finite population", JASA 93(444), 1998):

    K = u + c(1) · [Σ i π² (1 - π²)^(i-1) c(i)] / [Σ (1 - π)^i ((1 + π)^i - 1) c(i)]
              · ([Σ (1 - π)^i c(i)] / [Σ i π (1 - π)^(i-1) c(i)])²

The estimate is ``K β^α``.

*Where this differs from ARX's code* (docs/reidentification.md): ARX 3.9 computes the second sum of ``K`` as
``Σ ((1 - π)^i (1 + π)^i c(i) - 1)`` and its ``E[c2]`` with ``(1 - d)^(α+2)`` as a factor instead of a divisor.
Both disagree with the derivation (at ``π = 1`` the two ``E[c2]`` agree, below they do not); Veil follows the
papers by default, and ``variant="arx"`` reproduces ARX's figures.

Worked example (hand computation, ``π = 1``, the sample is the population): ``K = u`` (the correction's
``(1 - π)`` factors vanish) and the equations read ``K β^α = c(1)``, so the estimate is exactly ``c(1)``:

>>> from veil.reidentification.classes import ClassSizes
>>> h = ClassSizes([1, 2, 3], [30, 10, 5])
>>> round(shlosser(h, 1.0), 9)
45.0
"""

from __future__ import annotations

import math

import numpy as np

from veil.reidentification import newton
from veil.reidentification.classes import ClassSizes

VARIANTS = ("paper", "arx")
DAMPED_ITERATIONS = 100  # per start: a damped step converges in tens where a root exists
WIDER = tuple((a, b) for a in (0.1, 0.5, 1.0, 2.0, 5.0) for b in (0.05, 0.2, 0.5, 0.8))


def shlosser(classes: ClassSizes, fraction: float, variant: str = "paper") -> float:
    """Estimated non-empty classes ``K`` in the population."""
    i = classes.sizes.astype(np.float64)
    c = classes.counts.astype(np.float64)
    f = fraction
    if f >= 1.0:
        return float(classes.classes)
    var1 = float((i * f * f * (1 - f * f) ** (i - 1) * c).sum())
    if variant == "arx":
        var2 = float(((1 - f) ** i * c * (1 + f) ** i - 1).sum())
    else:
        var2 = float(((1 - f) ** i * ((1 + f) ** i - 1) * c).sum())
    var3 = float(((1 - f) ** i * c).sum())
    var4 = float((i * f * (1 - f) ** (i - 1) * c).sum())
    return classes.classes + classes.of_size(1) * (var1 / var2) * (var3 / var4) ** 2


def parameters(classes: ClassSizes, fraction: float, variant: str = "paper") -> tuple[float, float, float]:
    """(α, β, K); α and β NaN when Newton-Raphson does not converge."""
    k = shlosser(classes, fraction, variant)
    c1, c2, f = float(classes.of_size(1)), float(classes.of_size(2)), fraction

    def equations(x: np.ndarray) -> np.ndarray:
        a, b = float(x[0]), float(x[1])
        d = (1 - f) * (1 - b)
        power = _pow(1 - d, a + 2)
        e1 = k * f * _pow(b / (1 - d), a) * (a * d / (1 - d) + 1) - c1 if d != 1 else math.nan
        e2 = (
            k * a * _pow(b, a) * f * f * (1 - b) / 2 * (power if variant == "arx" else 1 / power) * (2 - (1 - a) * d)
            - c2
            if power != 0
            else math.nan
        )
        return np.array([e1, e2])

    if variant == "arx":
        a, b = newton.solve(equations, None, None)
    else:  # ARX's grid, then a wider one, damped: ARX's starts alone leave (α > 0, 0 < β < 1) on real data
        a, b = newton.solve(equations, None, None, newton.GRID + WIDER, damped=True, iterations=DAMPED_ITERATIONS)
    if not (a > 0 and 0 < b < 1):
        return math.nan, math.nan, k
    return float(a), float(b), k


def _pow(x: float, y: float) -> float:
    """``x ** y`` as Java's ``Math.pow``: NaN for a negative base and a fractional exponent, never complex."""
    try:
        value = math.pow(x, y)
    except (ValueError, OverflowError):
        return math.nan
    return value


def snb(classes: ClassSizes, population: float, variant: str = "paper") -> float:
    """Estimated number of population uniques (NaN: unavailable)."""
    if classes.of_size(1) == 0:
        return 0.0
    a, b, k = parameters(classes, classes.records / population, variant)
    if math.isnan(a) or math.isnan(b):
        return math.nan
    value = k * _pow(b, a)
    return value if math.isfinite(value) else math.nan
