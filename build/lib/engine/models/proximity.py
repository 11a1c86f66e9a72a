"""Proximity models for numeric sensitive attributes (SPEC §2): (ε,m)-anonymity (Li, Tao & Xiao, "Preservation
of proximity privacy", ICDE 2008; papers/003 Def. 2) and (δ,l)-diversity (papers/003 Def. 5).

Both count, for each value v present in a block, the rows of the block whose value lies in a window around
v, and require that count to be at most ``n(E)/m`` (resp. ``n(E)/l``).  Vectorized: one cumulative sum per
block over the sorted domain and two ``searchsorted`` windows per value.

- (ε,m): window ``[v-ε, v+ε]`` (absolute) or ``[v(1-ε), v(1+ε)]`` (relative);
- (δ,l): u is δ-similar to v iff ``[u-δ,u+δ]`` and ``[v-δ,v+δ]`` overlap, i.e. ``|u-v| <= 2δ``.

So (δ,l)-diversity is absolute (2δ, l)-anonymity, and papers/003's claim (§3.3, §4) that it is monotone is
false: its own counter-example for (ε,m) carries over (see ``DeltaLDiversity.properties``).

Worked example, papers/003 Fig. 2 (ε = 15): G1 = {40, 60}, G2 = {40, 50, 60}.  (ε,m): in G1 every window
holds one row, m = 2/1 = 2; in G2 the window of 50 holds all three, m = 3/3 = 1.  (δ,l) with δ = 15: 40
and 60 are 20 <= 30 apart, so G1's windows hold both rows: l = 2/2 = 1 (papers/003 Example 3).

>>> from engine.counts import NodeCounts, SensitiveDomain
>>> dom = SensitiveDomain("salary", np.array([40, 50, 60]), np.array([2, 1, 2]), numeric=True)
>>> nc = NodeCounts.from_cells(("q",), (0,), [[0], [0], [1], [1], [1]], [[0], [2], [0], [1], [2]],
...                            np.ones(5), (2,), (dom,))
>>> EMAnonymity(epsilon=15, m=2, attribute="salary").check(nc).passed.tolist()
[True, False]
>>> DeltaLDiversity(delta=15, l=1, attribute="salary").check(nc).achieved
1.0
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from engine.counts import NodeCounts, SensitiveDomain
from engine.models.base import Needs, Properties, Verdict
from engine.models.common import TOL, domain_of, fail, fmt, level, number, per_rows, require_numeric

MODES = ("absolute", "relative")


def window_counts(counts: np.ndarray, values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``x[b, i]`` = rows of block b whose value lies in ``[lo_i, hi_i]`` (``values`` ascending).

    >>> window_counts(np.array([[1, 1, 1]]), np.array([1.0, 2.0, 5.0]), np.array([0.0, 1.0, 4.0]),
    ...               np.array([2.0, 3.0, 6.0])).tolist()
    [[2, 2, 1]]
    """
    left = np.searchsorted(values, lo, side="left")
    right = np.searchsorted(values, hi, side="right")
    cum = np.zeros((counts.shape[0], counts.shape[1] + 1), dtype=np.int64)
    np.cumsum(counts, axis=1, out=cum[:, 1:])
    return cum[:, right] - cum[:, left]


def _sorted(domain: SensitiveDomain, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    values = np.asarray(domain.values.tolist(), dtype=np.float64)
    if len(values) > 1 and not np.all(values[1:] >= values[:-1]):
        order = np.argsort(values, kind="stable")
        return values[order], counts[:, order]
    return values, counts


def max_window(counts: np.ndarray, domain: SensitiveDomain, lo_of, hi_of) -> np.ndarray:  # noqa: ANN001
    """``max x(v)`` over the values v present in each block (0 for an empty block)."""
    values, counts = _sorted(domain, counts)
    if counts.shape[1] == 0:
        return np.zeros(len(counts), dtype=np.int64)
    lo, hi = lo_of(values), hi_of(values)
    return per_rows(lambda c: np.where(c > 0, window_counts(c, values, lo, hi), 0).max(axis=1), counts)


def _verdict(sizes: np.ndarray, worst: np.ndarray, bound: float) -> Verdict:
    passed = worst * bound <= sizes
    with np.errstate(divide="ignore", invalid="ignore"):
        levels = np.where(worst > 0, sizes / np.maximum(worst, 1), np.inf)
    return Verdict(passed, level(levels.min()) if len(levels) else None)


def _widen(x: np.ndarray, scale: float) -> np.ndarray:
    return TOL * np.maximum(np.maximum(1.0, np.abs(x)), scale)


@dataclass(frozen=True)
class EMAnonymity:
    """(ε,m)-anonymity (papers/003 Def. 2): for every row t of E, ``x(t)/n(E) <= 1/m`` where x(t) counts the
    rows of E with S in t's ε-neighbourhood; achieved ``min n(E)/max x(t)``.  See the module docstring for
    papers/003 Fig. 2.  Relative mode, ε = 0.1: in {100, 105, 120} the window of 100 is [90, 110] and holds
    two rows, so m = 3/2.

    >>> from engine.counts import NodeCounts, SensitiveDomain
    >>> dom = SensitiveDomain("s", np.array([100, 105, 120]), np.array([1, 1, 1]), numeric=True)
    >>> nc = NodeCounts.from_cells(("q",), (0,), [[0], [0], [0]], [[0], [1], [2]], np.ones(3), (1,), (dom,))
    >>> EMAnonymity(epsilon=0.1, m=1.5, mode="relative", attribute="s").check(nc).achieved
    1.5
    """

    type: ClassVar[str] = "em-anonymity"
    epsilon: float
    m: float
    attribute: str
    mode: str = "absolute"
    where: str = "em-anonymity"

    def __post_init__(self) -> None:
        number(self.where, "epsilon", self.epsilon, minimum=0)
        number(self.where, "m", self.m, minimum=1)
        if self.mode not in MODES:
            raise fail(self.where, "mode", f"must be one of {', '.join(map(repr, MODES))}, got {self.mode!r}")

    @property
    def properties(self) -> Properties:
        return Properties(False, False, Needs.VALUES,
                          "not monotone (papers/003 §3.2): ε=15, m=2: {40,60} and {50,80} pass, their union "
                          "{40,50,60,80} has x(50) = 3 > 4/2")

    def worst(self, counts: np.ndarray, domain: SensitiveDomain) -> np.ndarray:
        e = float(self.epsilon)
        if self.mode == "absolute":
            return max_window(counts, domain, lambda v: v - e - _widen(v, e), lambda v: v + e + _widen(v, e))
        return max_window(counts, domain,
                          lambda v: np.minimum(v * (1 - e), v * (1 + e)) - _widen(v, 0.0),
                          lambda v: np.maximum(v * (1 - e), v * (1 + e)) + _widen(v, 0.0))

    def check(self, counts: NodeCounts) -> Verdict:
        bc = counts.blocks(self.attribute)
        return _verdict(bc.sizes, self.worst(bc.counts, bc.domain), self.m)

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        require_numeric(domain_of(domains, self.attribute, self.where), self.where,
                        "(ε,m)-anonymity needs a numeric sensitive attribute")

    def describe(self) -> str:
        return f"(ε,m)-anonymity (ε={fmt(self.epsilon)} {self.mode}, m={fmt(self.m)}) on {self.attribute}"


@dataclass(frozen=True)
class DeltaLDiversity:
    """(δ,l)-diversity (papers/003 Def. 5, SPEC §2): for every value v in E, ``n_δ(v) <= n(E)/l`` where
    ``n_δ(v)`` counts the rows of E within ``2δ`` of v; achieved ``min n(E)/max n_δ(v)``.

    >>> from engine.counts import NodeCounts, SensitiveDomain
    >>> dom = SensitiveDomain("s", np.array([10, 20, 40]), np.array([1, 1, 2]), numeric=True)
    >>> nc = NodeCounts.from_cells(("q",), (0,), [[0], [0], [0]], [[0], [1], [2]], np.array([1, 1, 2]), (1,), (dom,))
    >>> DeltaLDiversity(delta=5, l=2, attribute="s").check(nc).achieved      # n_5(40) = 2: 4/2
    2.0
    >>> DeltaLDiversity(delta=10, l=2, attribute="s").check(nc).achieved     # n_10(20) = 4 (all within 20)
    1.0
    """

    type: ClassVar[str] = "delta-l-diversity"
    delta: float
    l: float
    attribute: str
    where: str = "delta-l-diversity"

    def __post_init__(self) -> None:
        number(self.where, "delta", self.delta, minimum=0)
        number(self.where, "l", self.l, minimum=1)

    @property
    def properties(self) -> Properties:
        return Properties(False, False, Needs.VALUES,
                          "not monotone, although papers/003 claims it is: δ=7.5, l=2: {40,60} and {50,80} "
                          "pass (no two values within 15), their union {40,50,60,80} has n_δ(50) = 3 > 4/2")

    def worst(self, counts: np.ndarray, domain: SensitiveDomain) -> np.ndarray:
        w = 2 * float(self.delta)
        return max_window(counts, domain, lambda v: v - w - _widen(v, w), lambda v: v + w + _widen(v, w))

    def check(self, counts: NodeCounts) -> Verdict:
        bc = counts.blocks(self.attribute)
        return _verdict(bc.sizes, self.worst(bc.counts, bc.domain), self.l)

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        require_numeric(domain_of(domains, self.attribute, self.where), self.where,
                        "(δ,l)-diversity needs a numeric sensitive attribute")

    def describe(self) -> str:
        return f"(δ,l)-diversity (δ={fmt(self.delta)}, l={fmt(self.l)}) on {self.attribute}"
