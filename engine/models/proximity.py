"""Proximity models for numeric sensitive attributes (docs/models.md §2.6): (ε,m)-anonymity (Li, Tao & Xiao,
"Preservation of Proximity Privacy in Publishing Numerical Sensitive Data", SIGMOD 2008) and (δ,l)-diversity
(from the paper "(δ,ℓ)-diversity for numerical sensitive attributes, revisiting (ε,m)-anonymity", called the
(δ,l) paper below; its Def. 2 restates (ε,m)-anonymity, Def. 5 defines (δ,l)-diversity).

Both count, for each value v present in a block, the rows of the block whose value lies in a window around
v, and require that count to be at most ``n(E)/m`` (resp. ``n(E)/l``).  The windows are computed once per
domain as ranges of value codes over the sorted domain, exactly: integer values as integers, decimal and float
values as the shortest decimal that round-trips (docs/models.md §7), the radius as the decimal it is written
as.  Per block, a window's count is a difference of prefix sums over the block's sparse cells (two searches per
cell).

- (ε,m): window ``[v-ε, v+ε]`` (absolute) or ``[v-|v|ε, v+|v|ε]`` (relative);
- (δ,l): u is δ-similar to v iff ``[u-δ,u+δ]`` and ``[v-δ,v+δ]`` overlap, i.e. ``|u-v| <= 2δ``.

So (δ,l)-diversity is absolute (2δ, l)-anonymity, and the (δ,l) paper's claim that it is monotone is false: its own
counter-example for (ε,m) carries over (see ``DeltaLDiversity.properties``).

Worked example, the (δ,l) paper's Fig. 2 (ε = 15): G1 = {40, 60}, G2 = {40, 50, 60}.  (ε,m): in G1 every window
holds one row, m = 2/1 = 2; in G2 the window of 50 holds all three, m = 3/3 = 1.  (δ,l) with δ = 15: 40
and 60 are 20 <= 30 apart, so G1's windows hold both rows: l = 2/2 = 1 (its Example 3).

>>> from veil.counts import NodeCounts, SensitiveDomain
>>> dom = SensitiveDomain("salary", np.array([40, 50, 60]), np.array([2, 1, 2]), numeric=True)
>>> nc = NodeCounts.from_cells(("q",), (0,), [[0], [0], [1], [1], [1]], [[0], [2], [0], [1], [2]],
...                            np.ones(5), (2,), (dom,))
>>> EMAnonymity(epsilon=15, m=2, attribute="salary").check(nc).passed.tolist()
[True, False]
>>> DeltaLDiversity(delta=15, l=1, attribute="salary").check(nc).achieved
1.0
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from veil.counts import BlockCounts, NodeCounts, SensitiveDomain
from veil.errors import SourceError
from veil.hierarchy import exact_number
from veil.models.base import Needs, Properties, Reference, Verdict
from veil.models.common import achieved, domain_of, fail, fmt, judge, number, require_numeric
from veil.models.exact import Rule, rational
from veil.models.params import Params
from veil.registry import MODELS

MODES = ("absolute", "relative")


def exact_values(domain: SensitiveDomain) -> tuple[list[int], int]:
    """The domain's values as exact rationals over one denominator: (the numerators, the denominator).
    Integers stay integers; decimals are exact; a float is the shortest decimal that round-trips.

    >>> exact_values(SensitiveDomain("x", np.array([0.1, 0.25, 3.0]), np.ones(3, dtype=np.int64), numeric=True))
    ([2, 5, 60], 20)
    """
    values = [exact_number(v) for v in domain.values.tolist()]
    den = 1
    for v in values:
        den = den * v.denominator // math.gcd(den, v.denominator)
    return [int(v * den) for v in values], den


def code_windows(domain: SensitiveDomain, radius: Fraction, relative: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per value code v, the codes ``[left, right)`` of the values u with ``|u - v| <= radius`` (times ``|v|``
    when ``relative``), exactly; the domain's values ascending.

    Values 10^12 and 10^12 + 1 with radius 0.5 are not neighbours:

    >>> dom = SensitiveDomain("t", np.array([10**12, 10**12 + 1]), np.ones(2, dtype=np.int64), numeric=True)
    >>> [w.tolist() for w in code_windows(dom, Fraction(1, 2), False)]
    [[0, 1], [1, 2]]
    """
    nums, den = exact_values(domain)
    if any(b < a for a, b in zip(nums, nums[1:])):
        raise ValueError(f"the values of {domain.name!r} are not in ascending order")
    p, q = radius.numerator, radius.denominator
    scaled = [q * w for w in nums]
    reach = [p * (abs(w) if relative else den) for w in nums]
    lo = [s - r for s, r in zip(scaled, reach)]
    hi = [s + r for s, r in zip(scaled, reach)]
    small = max((abs(x) for x in lo + hi), default=0) < 2**62
    dtype: Any = np.int64 if small else object
    keys = np.array(scaled, dtype=dtype)
    return (
        np.searchsorted(keys, np.array(lo, dtype=dtype), side="left").astype(np.int64),
        np.searchsorted(keys, np.array(hi, dtype=dtype), side="right").astype(np.int64),
    )


def window_counts(bc: BlockCounts, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Per cell of ``bc`` (a value v present in a block), the rows of that block whose value code lies in
    ``[left[v], right[v])``.

    >>> dom = SensitiveDomain("s", np.array([1.0, 2.0, 5.0]), np.ones(3, dtype=np.int64), numeric=True)
    >>> bc = BlockCounts.from_dense(np.array([[1, 1, 1]]), dom)
    >>> window_counts(bc, np.array([0, 0, 2]), np.array([2, 2, 3])).tolist()
    [2, 2, 1]
    """
    width = bc.domain.size
    keys = bc.block_of_cell * width + bc.codes
    base = bc.block_of_cell * width
    prefix = np.concatenate([[0], np.cumsum(bc.counts)])
    lo = np.searchsorted(keys, base + left[bc.codes], side="left")
    hi = np.searchsorted(keys, base + right[bc.codes], side="left")
    return prefix[hi] - prefix[lo]


def _levels(bc: BlockCounts, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    worst = bc.block_max(window_counts(bc, left, right))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(worst > 0, bc.sizes / np.maximum(worst, 1), np.inf)


def _exact_levels(bc: BlockCounts, left: np.ndarray, right: np.ndarray) -> list[Fraction | float]:
    worst = bc.block_max(window_counts(bc, left, right))
    return [Fraction(int(n), int(w)) if w > 0 else math.inf for n, w in zip(bc.sizes.tolist(), worst.tolist())]


def require_finite(domain: SensitiveDomain, where: str) -> None:
    """Windows ``|u - v| <= r`` need finite values (``inf - inf`` is NaN, and numpy would only warn): refuse
    NaN and ±Infinity with one line naming the column (the warehouse refuses them first; this guards the
    models' own callers).

    >>> require_finite(SensitiveDomain("s", np.array([1.0, np.inf]), np.array([2, 1]), numeric=True), "m")
    Traceback (most recent call last):
    veil.errors.SourceError: m: sensitive column 's' holds non-finite values (inf in 1 rows); ...
    """
    if not domain.numeric:
        return
    bad = [
        (v, int(n))
        for v, n in zip(domain.values.tolist(), domain.total.tolist())
        if isinstance(v, float) and not math.isfinite(v)
    ]
    if bad:
        listing = ", ".join(f"{v} in {n} rows" for v, n in bad)
        raise SourceError(
            f"{where}: sensitive column {domain.name!r} holds non-finite values ({listing}); "
            "distances to NaN or ±Infinity are undefined, filter or replace them first"
        )


class _Windows:
    """Shared by the two models: windows per domain (cached), levels ``n(E)/max x(v)``, exact verdicts."""

    attribute: str
    where: str
    _cache: dict

    def radius(self) -> tuple[Fraction, bool]:
        raise NotImplementedError

    def bound(self) -> float:
        raise NotImplementedError

    def windows(self, domain: SensitiveDomain) -> tuple[np.ndarray, np.ndarray]:
        """Per value code, its window as a code range ``[left, right)``."""
        hit = self._cache.get(id(domain))
        if hit is None or hit[0] is not domain:
            hit = (domain, code_windows(domain, *self.radius()))
            self._cache[id(domain)] = hit
        return hit[1]

    def window_counts(self, counts: NodeCounts) -> np.ndarray:
        """Per cell of ``counts.blocks(attribute)`` (block, value v): the rows of the block in v's window."""
        bc = counts.blocks(self.attribute)
        return window_counts(bc, *self.windows(bc.domain))

    def worst(self, counts: NodeCounts) -> np.ndarray:
        """Per block, ``max x(v)``: the most rows in one value's window (0 for an empty block)."""
        bc = counts.blocks(self.attribute)
        return bc.block_max(window_counts(bc, *self.windows(bc.domain)))

    def judge(self, bc: BlockCounts) -> tuple[np.ndarray, np.ndarray]:
        left, right = self.windows(bc.domain)
        return judge(
            bc,
            self.bound(),
            Rule.AT_LEAST,
            lambda part: _levels(part, left, right),
            exact_levels=lambda part: _exact_levels(part, left, right),
        )

    def levels(self, counts: NodeCounts) -> np.ndarray:
        """``n(E) / max x(v)`` per block."""
        return self.judge(counts.blocks(self.attribute))[1]

    def check(self, counts: NodeCounts) -> Verdict:
        passed, lv = self.judge(counts.blocks(self.attribute))
        return Verdict(passed, achieved(lv, "min"))


@MODELS.register("em-anonymity")
@dataclass(frozen=True)
class EMAnonymity(_Windows):
    """(ε,m)-anonymity (docs/models.md §2.6): for every row t of E, ``x(t)/n(E) <= 1/m`` where x(t) counts
    the rows of E with S in t's ε-neighbourhood; a block's level is ``n(E)/max x(t)``, the table's the min.
    See the module docstring for the (δ,l) paper's Fig. 2.  Relative mode, ε = 0.1: in {100, 105, 120} the window of
    100 is [90, 110] and holds two rows, so m = 3/2.

    >>> from veil.counts import NodeCounts, SensitiveDomain
    >>> dom = SensitiveDomain("s", np.array([100, 105, 120]), np.array([1, 1, 1]), numeric=True)
    >>> nc = NodeCounts.from_cells(("q",), (0,), [[0], [0], [0]], [[0], [1], [2]], np.ones(3), (1,), (dom,))
    >>> EMAnonymity(epsilon=0.1, m=1.5, mode="relative", attribute="s").check(nc).achieved
    1.5
    """

    type: ClassVar[str]  # set by the registration above
    reference: ClassVar[Reference] = Reference(
        achieved="`min n(E)/max x(t)` (numeric)", sample={"epsilon": 100, "m": 2, "mode": "absolute", "attribute": "n"}
    )
    epsilon: float
    m: float
    attribute: str
    mode: str = "absolute"
    where: str = "em-anonymity"
    _cache: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    @classmethod
    def from_params(cls, p: Params) -> EMAnonymity:
        """The model of a ``[[models]]`` table."""
        return cls(
            epsilon=p.number("epsilon", minimum=0),
            m=p.number("m", minimum=1),
            mode=p.text("mode", default="absolute", choices=MODES),
            attribute=p.attribute(),
            where=p.where,
        )

    def __post_init__(self) -> None:
        number(self.where, "epsilon", self.epsilon, minimum=0)
        number(self.where, "m", self.m, minimum=1)
        if self.mode not in MODES:
            raise fail(self.where, "mode", f"must be one of {', '.join(map(repr, MODES))}, got {self.mode!r}")

    @property
    def properties(self) -> Properties:
        return Properties(
            False,
            False,
            Needs.VALUES,
            "not monotone (the (δ,l) paper §3.2): ε=15, m=2: {40,60} and {50,80} pass, their union "
            "{40,50,60,80} has x(50) = 3 > 4/2",
            min_block_size=math.ceil(rational(self.m)),
        )

    def radius(self) -> tuple[Fraction, bool]:
        return rational(self.epsilon), self.mode == "relative"

    def bound(self) -> float:
        return self.m

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        domain = domain_of(domains, self.attribute, self.where)
        require_numeric(domain, self.where, "(ε,m)-anonymity needs a numeric sensitive attribute")
        require_finite(domain, self.where)

    def describe(self) -> str:
        return f"(ε,m)-anonymity (ε={fmt(self.epsilon)} {self.mode}, m={fmt(self.m)}) on {self.attribute}"


@MODELS.register("delta-l-diversity")
@dataclass(frozen=True)
class DeltaLDiversity(_Windows):
    """(δ,l)-diversity (docs/models.md §2.6): for every value v in E, ``n_δ(v) <= n(E)/l`` where ``n_δ(v)``
    counts the rows of E within ``2δ`` of v; a block's level is ``n(E)/max n_δ(v)``, the table's the min.

    >>> from veil.counts import NodeCounts, SensitiveDomain
    >>> dom = SensitiveDomain("s", np.array([10, 20, 40]), np.array([1, 1, 2]), numeric=True)
    >>> nc = NodeCounts.from_cells(("q",), (0,), [[0], [0], [0]], [[0], [1], [2]], np.array([1, 1, 2]), (1,), (dom,))
    >>> DeltaLDiversity(delta=5, l=2, attribute="s").check(nc).achieved      # n_5(40) = 2: 4/2
    2.0
    >>> DeltaLDiversity(delta=10, l=2, attribute="s").check(nc).achieved     # n_10(20) = 4 (all within 20)
    1.0
    """

    type: ClassVar[str]  # set by the registration above
    reference: ClassVar[Reference] = Reference(
        achieved="`min n(E)/max n_δ(v)` (numeric)", sample={"delta": 100, "l": 2, "attribute": "n"}
    )
    delta: float
    l: float
    attribute: str
    where: str = "delta-l-diversity"
    _cache: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    @classmethod
    def from_params(cls, p: Params) -> DeltaLDiversity:
        """The model of a ``[[models]]`` table."""
        return cls(
            delta=p.number("delta", minimum=0), l=p.number("l", minimum=1), attribute=p.attribute(), where=p.where
        )

    def __post_init__(self) -> None:
        number(self.where, "delta", self.delta, minimum=0)
        number(self.where, "l", self.l, minimum=1)

    @property
    def properties(self) -> Properties:
        return Properties(
            False,
            False,
            Needs.VALUES,
            "not monotone, although the (δ,l) paper claims it is: δ=7.5, l=2: {40,60} and {50,80} "
            "pass (no two values within 15), their union {40,50,60,80} has n_δ(50) = 3 > 4/2",
            min_block_size=math.ceil(rational(self.l)),
        )

    def radius(self) -> tuple[Fraction, bool]:
        return 2 * rational(self.delta), False

    def bound(self) -> float:
        return self.l

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        domain = domain_of(domains, self.attribute, self.where)
        require_numeric(domain, self.where, "(δ,l)-diversity needs a numeric sensitive attribute")
        require_finite(domain, self.where)

    def describe(self) -> str:
        return f"(δ,l)-diversity (δ={fmt(self.delta)}, l={fmt(self.l)}) on {self.attribute}"
