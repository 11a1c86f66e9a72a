"""Exact decisions on the knife-edge (docs/models.md §7).

Every model reduces a block to a *level* (``n(E)/r1``, an EMD, the smallest ε …) and compares it with its
parameter by a rule: at least (``>=``), at most (``<=``) or below (``<``).  Levels are computed in floating
point; the few blocks whose float level lies within ``EDGE`` (relative) of the parameter are decided again
exactly, in integers and fractions, against the rational number the parameter denotes: an integer exactly, a
float as the shortest decimal that round-trips (``2.2`` in a TOML file is 22/10, not the binary double).  A
refined level is the exact level correctly rounded, nudged by at most one ulp so that it agrees with the
verdict (a block passes iff its reported level passes the float comparison).

Frequency l = 2.2 on the block [25, 25, 5]: ``55/25`` is exactly 2.2, so it passes and reports 2.2.

>>> levels = np.array([55 / 25, 3.0])
>>> decide(levels, 2.2, Rule.AT_LEAST, exact_levels=lambda idx: [Fraction(55, 25)] * len(idx)).tolist()
[True, True]
>>> levels.tolist()
[2.2, 3.0]
>>> rational(2.2), rational(3)
(Fraction(11, 5), Fraction(3, 1))
>>> log_sign([(4, 1), (2, -2)]), log_sign([(3, 2), (2, -3)])      # 4 = 2², 9 > 8
(0, 1)
"""

from __future__ import annotations

import decimal
import enum
import math
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from veil.hierarchy import exact_number

EDGE = 1e-9  # relative distance to the parameter below which a float level is re-decided exactly


def rational(x: Any) -> Fraction:
    """The number a parameter denotes: integers and decimals exactly, a float as its shortest round-trip decimal."""
    return exact_number(x)


class Rule(enum.Enum):
    """How a block's level is compared with the parameter: the block passes iff ``level <rule> parameter``."""

    AT_LEAST = ">="
    AT_MOST = "<="
    BELOW = "<"

    def holds(self, sign: int) -> bool:
        """Passes, given the sign of ``level - parameter``."""
        if self is Rule.AT_LEAST:
            return sign >= 0
        if self is Rule.AT_MOST:
            return sign <= 0
        return sign < 0

    def passes(self, levels: np.ndarray, bound: float) -> np.ndarray:
        if self is Rule.AT_LEAST:
            return levels >= bound
        if self is Rule.AT_MOST:
            return levels <= bound
        return levels < bound

    def agree(self, level: float, passed: bool, bound: float) -> float:
        """``level`` moved by at most one ulp so that ``passes(level) == passed``."""
        if self.passes(np.array([level]), bound)[0] == passed:
            return level
        if self is Rule.AT_LEAST:
            return bound if passed else float(np.nextafter(bound, -math.inf))
        if self is Rule.AT_MOST:
            return bound if passed else float(np.nextafter(bound, math.inf))
        return float(np.nextafter(bound, -math.inf)) if passed else bound


def near(levels: np.ndarray, bound: float, error: np.ndarray | None = None) -> np.ndarray:
    """Indices of the levels within ``EDGE`` (relative) of ``bound``, or within their own ``error`` bound."""
    band = EDGE * max(1.0, abs(bound))
    with np.errstate(invalid="ignore"):
        gap = np.abs(levels - bound)
        return np.flatnonzero((gap <= band) | (gap <= error) if error is not None else gap <= band)


Exact = Fraction | int | float  # an exact level: a rational, or math.inf


def decide(
    levels: np.ndarray,
    param: Any,
    rule: Rule,
    exact_levels: Callable[[np.ndarray], Sequence[Exact]] | None = None,
    exact_signs: Callable[[np.ndarray, Fraction], Sequence[int]] | None = None,
    error: np.ndarray | None = None,
) -> np.ndarray:
    """Per block: does ``level <rule> param`` hold?  Float first; blocks on the knife-edge are decided by
    ``exact_levels(idx)`` (their exact rational levels) or ``exact_signs(idx, p)`` (the signs of
    ``level - p``); ``error`` widens the edge per block, and an error of 0 marks a float level that is exact
    (compared as it is).  ``levels`` is refined in place there (see the module docstring)."""
    bound = float(param)
    passed = rule.passes(levels, bound)
    idx = near(levels, bound, error)
    if len(idx) == 0:
        return passed
    p = rational(param)
    signs: list[int] = [0] * len(idx)
    exact_already = np.zeros(len(idx), dtype=bool) if error is None else error[idx] == 0
    for j in np.flatnonzero(exact_already).tolist():  # the float level is the exact level
        v = Fraction(float(levels[idx[j]]))
        signs[j] = (v > p) - (v < p)
    rest = np.flatnonzero(~exact_already)
    if len(rest):
        if exact_levels is not None:
            values = exact_levels(idx[rest])
            for j, exact in zip(rest.tolist(), values):
                signs[j] = (exact > p) - (exact < p)
                levels[idx[j]] = float(exact)
        else:
            assert exact_signs is not None
            for j, sign in zip(rest.tolist(), exact_signs(idx[rest], p)):
                signs[j] = sign
    for i, s in zip(idx.tolist(), signs):
        ok = rule.holds(s)
        passed[i] = ok
        levels[i] = bound if s == 0 else rule.agree(float(levels[i]), ok, bound)
    return passed


def log_sign(terms: Iterable[tuple[int, int]]) -> int:
    """The sign of ``sum e·ln b`` (i.e. of ``prod b**e - 1``) for integer bases ``b >= 1``, exactly.

    The bases are refined to pairwise coprime ones: the product is 1 iff every exponent is then 0 (unique
    factorization).  Otherwise the sum is non-zero and is evaluated with correctly rounded decimal logarithms
    and a rigorous error bound, doubling the precision until the sign is certain."""
    base = coprime(terms)
    if not base:
        return 0
    prec = 40
    while True:
        ctx = decimal.Context(prec=prec)
        total, err = Fraction(0), Fraction(0)
        for b, e in base.items():
            log = Fraction(ctx.ln(decimal.Decimal(b)))
            total += e * log
            err += abs(e) * abs(log) / 10 ** (prec - 1)
        if abs(total) > err:
            return 1 if total > 0 else -1
        prec *= 2


_SMALL_PRIMES = [p for p in range(2, 200) if all(p % q for q in range(2, int(p**0.5) + 1))]


def coprime(terms: Iterable[tuple[int, int]]) -> dict[int, int]:
    """``{base: exponent}`` with pairwise coprime bases ``> 1`` and non-zero exponents, the same product.

    >>> coprime([(12, 1), (18, -1)])        # 12/18 = 2/3
    {2: 1, 3: -1}
    """
    acc: dict[int, int] = {}
    for b, e in terms:
        b, e = int(b), int(e)
        if b < 1:
            raise ValueError(f"log_sign needs positive bases, got {b}")
        if b > 1 and e:
            acc[b] = acc.get(b, 0) + e
    out: dict[int, int] = {}
    rest: dict[int, int] = {}
    for b, e in acc.items():
        for p in _SMALL_PRIMES:
            if b % p == 0:
                v = 0
                while b % p == 0:
                    b //= p
                    v += 1
                out[p] = out.get(p, 0) + v * e
        if b > 1:
            rest[b] = rest.get(b, 0) + e
    items = [[b, e] for b, e in rest.items() if e]
    changed = True
    while changed:
        changed = False
        for i in range(len(items)):
            for j in range(i + 1, len(items)):
                g = math.gcd(items[i][0], items[j][0])
                if g > 1:
                    (a, ea), (b, eb) = items[i], items[j]
                    merged: dict[int, int] = {}
                    for x, e in ((a // g, ea), (b // g, eb), (g, ea + eb)):
                        if x > 1 and e:
                            merged[x] = merged.get(x, 0) + e
                    items = [it for k, it in enumerate(items) if k not in (i, j)]
                    for x, e in merged.items():
                        same = next((it for it in items if it[0] == x), None)
                        if same is not None:
                            same[1] += e
                        else:
                            items.append([x, e])
                    items = [it for it in items if it[1]]
                    changed = True
                    break
            if changed:
                break
    for b, e in items:
        out[b] = out.get(b, 0) + e
    return {b: e for b, e in sorted(out.items()) if e}


def exact_array(values: Iterable[Any]) -> np.ndarray:
    """An object array of Fractions (for evaluating a vectorized formula exactly)."""
    return np.array([Fraction(v) for v in values] or [], dtype=object)
