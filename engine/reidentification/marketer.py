"""Marketer risk: one function of ``veil.reidentification.journalist`` (the same pairs of sample and
population class sizes), re-exported here so each concept has its module.

>>> marketer([1, 1, 2], [1, 1, 2])   # no population table: the sample is its own population, u / n
0.75
"""

from veil.reidentification.journalist import marketer

__all__ = ["marketer"]
