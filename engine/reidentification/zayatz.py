"""Population uniques under Zayatz's model (Zayatz, "Estimation of the percent of unique population elements
on a microdata file using the sample", US Census Bureau SRD Report RR-91/08, 1991; ARX ``ModelZayatz``).

A sample of ``n`` records is drawn without replacement from a population of ``N``.  The share of sample
classes of size ``k`` estimates the share of population classes of that size, and the probability that a
sample unique comes from a population unique is, with ``H(N, k, n)`` the hypergeometric probability of
drawing exactly one of ``k`` marked records in ``n`` draws from ``N``,

    P(unique in population | unique in sample) = (c(1)/u) H(N, 1, n) / Σ_k (c(k)/u) H(N, k, n)

and the estimated number of population uniques is ``c(1) · P / π`` with ``π = n/N`` the sampling fraction.

Worked example (hand computation): ``N = 4``, a sample of ``n = 2`` records in two classes of size 1:
``H(4, 1, 2) = 1/2``, so ``P = (1 · 1/2) / (1 · 1/2) = 1`` and the estimate is ``2 · 1 / (2/4) = 4``: every
population record is unique.  With classes of sizes 1 and 2 in a sample of 3 from 6: ``H(6,1,3) = 1/2``,
``H(6,2,3) = 2·C(4,2)/C(6,3) = 12/20 = 0.6``, ``P = 0.5 / (0.5 + 0.6) = 5/11``, estimate ``1 · 5/11 / 0.5 = 10/11``.

>>> from veil.reidentification.classes import ClassSizes
>>> zayatz(ClassSizes.of([1, 1]), 4), round(zayatz(ClassSizes.of([1, 2]), 6), 12) == round(10 / 11, 12)
(4.0, True)
"""

from __future__ import annotations

from veil.reidentification.classes import ClassSizes
from veil.reidentification.special import hypergeom_one


def conditional(classes: ClassSizes, population: float) -> float:
    """P(a sample unique is a population unique)."""
    n, u = classes.records, float(classes.classes)
    big = int(population)
    total = sum(c / u * hypergeom_one(big, int(k), n) for k, c in zip(classes.sizes.tolist(), classes.counts.tolist()))
    return (classes.of_size(1) / u * hypergeom_one(big, 1, n)) / total if total > 0 else 0.0


def zayatz(classes: ClassSizes, population: float) -> float:
    """Estimated number of population uniques."""
    c1 = classes.of_size(1)
    if c1 == 0:
        return 0.0
    fraction = classes.records / population
    return c1 * conditional(classes, population) / fraction
