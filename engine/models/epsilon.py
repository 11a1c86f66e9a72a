"""ε-privacy against realistic adversaries (Machanavajjhala, Gehrke & Götz, "Data Publishing against Realistic
Adversaries", VLDB 2009, Theorems 1-4; docs/models.md §5).

The adversary's prior is a Dirichlet ``σ(s)`` per sensitive value with stubbornness ``σ = sum σ(s)``; she
knows ``b`` rows exactly.  Per block q and value s present in it, with ``x = n(q,s)/(n(q)-b)``,
``δ(q) = (ε-1)(n(q)-b)/(σ+b)`` and ``ε' = ε(1 - 1/(σ+b))``:

- class I (σ(s) known): R1 ``n(q)-b >= (σ+b)/(ε-1)`` or ``x <= ε/(1-δ) · (σ(s)-1)/(σ+b)``; R2
  ``x <= 1 - 1/(ε'+δ) + 1/(ε'+δ) · (σ(s)-1)/(σ+b)``;
- class II (only σ known): R1 ``n(q)-b >= (σ+b)/(ε-1)``; R2 ``x <= 1 - 1/(ε'+δ)``;
- class III (shape ``h(s) = σ(s)/σ`` known, σ = ∞): R1 ``x <= ε h(s)``; R2 ``x <= 1 - (1-h(s))/ε``;
- class IV: no generalized table is ε-private for any ε: every block fails, achieved ``None``.

Each condition is monotone in ε and solves for it, so a block's level — the smallest ε for which its
conditions hold — has a closed form, rational in the counts and parameters (docs/models.md §5), and a block
passes iff its level is at most ε.  With ``N = n(q)-b``, ``S = σ+b``, ``c = n(q,s)``, ``u = N/S``,
``k = (σ(s)-1)/S`` (class II: 0), ``a = 1 - 1/S + u``, per value present:

- R1(a) ``ε >= 1 + S/N``; R1(b) ``ε >= c(S+N) / (N(σ(s)-1+c))`` when ``σ(s)-1+c > 0``; R1 holds from the
  smaller of the two on (class II: R1(a) alone);
- R2 ``ε >= ((1-k)·N/(N-c) + u)/a``; never when ``c >= N``;
- class III: ``ε >= c/(N·h)`` and ``ε >= (1-h)·N/(N-c)`` (when ``c = N``: 1 if ``h = 1``, else never).

R2 never holds when ``c > N`` (possible with known rows: ``x > 1``).

The level is the max over the values present (at least 1); ``inf`` when no ε works or ``N <= 0``.
Levels are computed in floating point and, on the knife-edge, again in fractions (docs/models.md §7).
tests/models/test_epsilon.py checks them against the conditions as written, in exact arithmetic.

Worked example (docs/models.md §5, the paper's Table 3, b = 0): blocks (<40,M) flu 200 cancer 300; (>=40,M)
1800/2700; (>=40,F) 18000/2000.  Class II with σ = 1000: R1 on the 500-row block needs ``ε >= 1 + 1000/500 =
3``, R2 needs less everywhere (2.0013, 1.2730, 1.4286), so the table is 3-private and not less.  With
σ = 30000, R1 on that block needs ``1 + 30000/500 = 61``.

>>> from veil.counts import NodeCounts, SensitiveDomain
>>> dom = SensitiveDomain("disease", np.array(["cancer", "flu"], dtype=object), np.array([5000, 20000]))
>>> cells = np.array([[0, 1, 200], [0, 0, 300], [1, 1, 1800], [1, 0, 2700], [2, 1, 18000], [2, 0, 2000]])
>>> nc = NodeCounts.from_cells(("age_sex",), (0,), cells[:, :1], cells[:, 1:2], cells[:, 2], (3,), (dom,))
>>> EpsilonPrivacy(epsilon=3, adversary="II", attribute="disease", stubbornness=1000).check(nc).achieved
3.0
>>> v = EpsilonPrivacy(epsilon=3, adversary="II", attribute="disease", stubbornness=30000).check(nc)
>>> v.passed.tolist(), v.achieved
([False, False, False], 61.0)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from veil.counts import BlockCounts, NodeCounts, SensitiveDomain
from veil.errors import ConfigError
from veil.models.base import Needs, Properties, Reference, Verdict
from veil.models.common import achieved, domain_of, fail, fmt, judge, match_values, number, whole
from veil.models.exact import Rule, rational
from veil.models.params import Params
from veil.registry import MODELS

ADVERSARIES = ("I", "II", "III", "IV")
SHAPES = ("uniform", "table")
NEVER = 2**62  # class IV's smallest passing block: none passes


def _prior(p: Params) -> tuple[tuple[str, float], ...] | str:
    """The ``prior`` parameter: a table of value = σ(s), or one of ``SHAPES``."""
    raw: Any = p.raw("prior")
    if isinstance(raw, str) and raw in SHAPES:
        return raw
    if isinstance(raw, Mapping) and not isinstance(raw, str):
        return tuple((str(k), v) for k, v in raw.items())
    raise p.error("prior", f"must be a table of value = σ(s), 'uniform' or 'table', got {raw!r}")


@MODELS.register("epsilon-privacy")
@dataclass(frozen=True)
class EpsilonPrivacy:
    """ε-privacy against adversary class I, II, III or IV (see the module docstring).

    ``prior``: a tuple of ``(value, σ(s))`` pairs, or ``"uniform"`` / ``"table"`` (a shape: equal, or the whole
    table's distribution).  Class I uses a table as given (its sum is σ) or a shape scaled by
    ``stubbornness``; class II needs only ``stubbornness``; class III uses only the prior's shape.

    The paper's Example 3: the block flu 18000, cancer 2000 against the class III prior shape (flu .4, cancer
    .6): R2 for flu needs ``1 - 0.9 >= (1 - 0.4)/ε``, i.e. ε >= 6 ("6-privacy"), exactly.

    >>> from veil.counts import NodeCounts, SensitiveDomain
    >>> dom = SensitiveDomain("d", np.array(["cancer", "flu"], dtype=object), np.array([2000, 18000]))
    >>> nc = NodeCounts.from_cells(("q",), (0,), [[0], [0]], [[0], [1]], np.array([2000, 18000]), (1,), (dom,))
    >>> v = EpsilonPrivacy(epsilon=6, adversary="III", prior=(("flu", 0.4), ("cancer", 0.6)), attribute="d").check(nc)
    >>> v.passed.tolist(), v.achieved
    ([True], 6.0)
    """

    type: ClassVar[str]  # set by the registration above
    reference: ClassVar[Reference] = Reference(
        achieved=(
            'smallest ε (class IV: null, never passes); `prior`: a table of value → σ(s), `"uniform"` or `"table"`'
        ),
        sample={
            "epsilon": 2,
            "adversary": "I",
            "prior": {"flu": 500, "cancer": 500},
            "stubbornness": 1000,
            "known_rows": 0,
            "attribute": "s",
        },
    )
    epsilon: float
    adversary: str
    attribute: str
    prior: tuple[tuple[str, float], ...] | str | None = None
    stubbornness: float | None = None
    known_rows: int = 0
    where: str = "epsilon-privacy"
    _cache: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    @classmethod
    def from_params(cls, p: Params) -> EpsilonPrivacy:
        """The model of a ``[[models]]`` table."""
        epsilon = p.number("epsilon", above=1)
        adversary = p.text("adversary", choices=ADVERSARIES)
        prior = _prior(p) if p.has("prior") else None
        stubbornness = p.number("stubbornness", minimum=1) if p.has("stubbornness") else None
        known = p.integer("known_rows", default=0, minimum=0)
        return cls(
            epsilon=epsilon,
            adversary=adversary,
            attribute=p.attribute(),
            prior=prior,
            stubbornness=stubbornness,
            known_rows=known,
            where=p.where,
        )

    def __post_init__(self) -> None:
        w = self.where
        number(w, "epsilon", self.epsilon, above=1)
        if self.adversary not in ADVERSARIES:
            raise fail(w, "adversary", f"must be one of {', '.join(map(repr, ADVERSARIES))}, got {self.adversary!r}")
        whole(w, "known_rows", self.known_rows, 0)
        if isinstance(self.prior, str):
            if self.prior not in SHAPES:
                raise fail(w, "prior", f"must be a table of value = σ(s), 'uniform' or 'table', got {self.prior!r}")
        elif self.prior is not None:
            if not self.prior:
                raise fail(w, "prior", "is an empty table")
            for name, s in self.prior:
                number(w, f"prior.{name}", s, above=0)
        if self.stubbornness is not None:
            number(w, "stubbornness", self.stubbornness, minimum=1)
        a = self.adversary
        if a == "I":
            if self.prior is None:
                raise ConfigError(
                    f"{w}: class I needs parameter 'prior' (a table of value = σ(s), or 'uniform' / "
                    "'table' with 'stubbornness')"
                )
            if isinstance(self.prior, str) and self.stubbornness is None:
                raise ConfigError(
                    f"{w}: class I with prior {self.prior!r} (a shape) needs parameter 'stubbornness' to scale it"
                )
            if not isinstance(self.prior, str):
                total = sum(s for _, s in self.prior)
                if sum(rational(s) for _, s in self.prior) < 1:
                    raise fail(w, "prior", f"sums to a stubbornness of {total:g}; class I needs at least 1")
                if self.stubbornness is not None and sum(rational(s) for _, s in self.prior) != rational(
                    self.stubbornness
                ):
                    raise fail(
                        w,
                        "stubbornness",
                        f"is {self.stubbornness:g} but the prior's σ(s) sum to {total:g} (give one or the other)",
                    )
        elif a == "II":
            if self.stubbornness is None:
                raise ConfigError(f"{w}: class II needs parameter 'stubbornness' (σ)")
            if self.prior is not None:
                raise fail(w, "prior", "does not apply to class II (any prior shape with stubbornness σ)")
        elif a == "III":
            if self.prior is None:
                raise ConfigError(f"{w}: class III needs parameter 'prior' (its shape: a table, 'uniform' or 'table')")
            if self.stubbornness is not None:
                raise fail(w, "stubbornness", "does not apply to class III (infinitely stubborn)")
        else:
            for name, v in (("prior", self.prior), ("stubbornness", self.stubbornness)):
                if v is not None:
                    raise fail(w, name, "does not apply to class IV (every adversary)")

    @property
    def properties(self) -> Properties:
        if self.adversary == "IV":
            return Properties(
                True,
                True,
                Needs.SIZES,
                "class IV never passes (vacuously monotone): no block is large enough",
                achieved="max",
                min_block_size=NEVER,
            )
        return Properties(
            True,
            False,
            Needs.HISTOGRAM,
            "monotone (the paper's §3.1; x of a merged block is at most the larger x, thresholds "
            "grow with n(q)); not with suppression: class III uniform over {a,b}, ε=2: {a,b} merged "
            "with {a×4} has x(a) = 5/6 > 1 - ½·½",
            achieved="max",
            min_block_size=self._min_block(),
        )

    def _min_block(self) -> int:
        """Blocks with ``n(q) <= b`` fail; class II also needs R1: ``n(q) >= b + (σ+b)/(ε-1)``."""
        b = self.known_rows
        if self.adversary == "II":
            s = rational(self.stubbornness) + b
            return max(b + 1, math.ceil(b + s / (rational(self.epsilon) - 1)))
        return b + 1

    # --- the prior over one domain ---------------------------------------------------------------------

    def prior_of(self, domain: SensitiveDomain, exact: bool = False) -> tuple[np.ndarray, Any]:
        """``(σ(s) per domain column, σ)``; for class III the shape ``σ(s)/σ`` and 1.  Floats, or Fractions when
        ``exact``."""
        key = (id(domain), exact)
        hit = self._cache.get(key)
        if hit is not None and hit[0] is domain:
            return hit[1], hit[2]
        sig, total = self._prior(domain)
        if self.adversary == "III":
            sig, total = [x / total for x in sig], Fraction(1)
        out = (
            np.array(sig, dtype=object) if exact else np.array([float(x) for x in sig], dtype=np.float64),
            total if exact else float(total),
        )
        self._cache[key] = (domain, *out)
        return out

    def _prior(self, domain: SensitiveDomain) -> tuple[list[Fraction], Fraction]:
        size = domain.size
        if self.adversary == "II":
            return [Fraction(1)] * size, rational(self.stubbornness)
        if self.adversary == "IV" or self.prior is None:
            return [Fraction(1)] * size, Fraction(1)
        if isinstance(self.prior, str):
            scale = rational(self.stubbornness) if self.stubbornness is not None else Fraction(1)
            if self.prior == "table":
                n = int(domain.total.sum())
                return [scale * Fraction(int(t), max(n, 1)) for t in domain.total.tolist()], scale
            return [scale / max(size, 1)] * size, scale
        names = [n for n, _ in self.prior]
        cols = [int(match_values(domain, [n], self.where, "prior")[0]) for n in names]
        if len(set(cols)) != len(cols):
            raise fail(self.where, "prior", "names the same value twice")
        sig = [Fraction(0)] * size
        for col, (_, x) in zip(cols, self.prior):
            sig[col] = rational(x)
        missing = [v for v, x in zip(domain.values.tolist(), sig) if x <= 0]
        if missing:
            shown = ", ".join(repr(str(m)) for m in missing[:20])
            raise fail(
                self.where,
                "prior",
                f"misses value(s) of column {domain.name!r} (class {self.adversary} "
                f"needs σ(s) for every value): {shown}",
            )
        return sig, sum(sig, Fraction(0))

    def sigma(self, domain: SensitiveDomain) -> tuple[np.ndarray, float]:
        """``(σ(s) per domain column, σ)`` as floats (class III: the shape and 1)."""
        return self.prior_of(domain)

    # --- the closed-form levels ----------------------------------------------------------------------------

    def cell_levels(self, bc: BlockCounts, exact: bool = False) -> np.ndarray:
        """Per cell (block q, value s present), the smallest ε for which s's conditions hold in q (``inf``:
        none); floats, or Fractions when ``exact``.  See the module docstring."""
        sig_v, total = self.prior_of(bc.domain, exact)
        lift = (
            (lambda a: np.array([Fraction(int(x)) for x in a], dtype=object))
            if exact
            else (lambda a: a.astype(np.float64))
        )
        c = lift(bc.counts)
        big_n = lift(bc.sizes[bc.block_of_cell] - self.known_rows)
        sig = sig_v[bc.codes]
        inf = math.inf
        safe_n = np.where(big_n > 0, big_n, 1)
        rest = big_n - c
        safe_rest = np.where(rest > 0, rest, 1)
        if self.adversary == "III":
            r1 = np.where(sig > 0, c / (safe_n * np.where(sig > 0, sig, 1)), inf)
            r2 = np.where(rest > 0, (1 - sig) * safe_n / safe_rest, np.where((rest == 0) & (sig >= 1), 1, inf))
        else:
            s = total + self.known_rows
            u = safe_n / s
            k = (sig - 1) / s if self.adversary == "I" else sig * 0
            r2 = np.where(rest > 0, ((1 - k) * safe_n / safe_rest + u) / (1 - 1 / s + u), inf)
            r1 = 1 + s / safe_n
            if self.adversary == "I":
                den = sig - 1 + c
                r1b = np.where(den > 0, c * (s + safe_n) / (safe_n * np.where(den > 0, den, 1)), inf)
                r1 = np.minimum(r1, r1b)
        cell = np.maximum(np.maximum(r1, r2), 1)
        return np.where(big_n > 0, cell, inf)

    def _levels(self, bc: BlockCounts) -> np.ndarray:
        out = bc.block_max(self.cell_levels(bc).astype(np.float64), empty=1.0)
        return np.where(bc.sizes > self.known_rows, out, np.inf)

    def _exact_levels(self, bc: BlockCounts) -> list[Fraction | float]:
        cells = self.cell_levels(bc, exact=True)
        out: list[Fraction | float] = []
        for b in range(bc.blocks):
            own = cells[bc.indptr[b] : bc.indptr[b + 1]].tolist()
            out.append(max(own, default=Fraction(1)) if bc.sizes[b] > self.known_rows else math.inf)
        return out

    def judge(self, bc: BlockCounts) -> tuple[np.ndarray, np.ndarray]:
        if self.adversary == "IV":
            return np.zeros(bc.blocks, dtype=bool), np.full(bc.blocks, np.inf)
        return judge(bc, self.epsilon, Rule.AT_MOST, self._levels, exact_levels=self._exact_levels)

    def levels(self, counts: NodeCounts) -> np.ndarray:
        """Per block, the smallest ε (>= 1) for which its conditions hold (``inf``: none; always for class IV)."""
        if self.adversary == "IV":
            return np.full(counts.n_blocks, np.inf)
        return self.judge(counts.blocks(self.attribute))[1]

    def check(self, counts: NodeCounts) -> Verdict:
        if self.adversary == "IV":
            return Verdict(np.zeros(counts.n_blocks, dtype=bool), None)
        passed, lv = self.judge(counts.blocks(self.attribute))
        return Verdict(passed, achieved(lv, "max"))

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        if self.adversary == "IV" and self.attribute not in domains:
            return  # class IV reads block sizes only: its column need not be counted
        self.prior_of(domain_of(domains, self.attribute, self.where))

    def describe(self) -> str:
        parts = [f"ε={fmt(self.epsilon)}", f"class {self.adversary}"]
        if isinstance(self.prior, str):
            parts.append(f"prior {self.prior}")
        elif self.prior is not None:
            parts.append("prior {" + ", ".join(f"{n}: {fmt(s)}" for n, s in self.prior) + "}")
        if self.stubbornness is not None:
            parts.append(f"σ={fmt(self.stubbornness)}")
        if self.known_rows:
            parts.append(f"b={self.known_rows}")
        return f"ε-privacy ({', '.join(parts)}) on {self.attribute}"


def posteriors(model: EpsilonPrivacy, counts: NodeCounts) -> tuple[np.ndarray, np.ndarray]:
    """For diagnosis, per cell of ``counts.blocks(model.attribute)`` (a block q and a value s present in it, in
    that ``BlockCounts``' cell order): ``p_in = n(q,s)/n(q)`` and the adversary's worst-case ``p_out`` (the
    paper's Eq. 8, 9): class I ``(n(q,s)+σ(s)-1)/(n(q)+σ-1)``; class II the same with the worst ``σ(s) = 1``;
    class III the prior shape ``σ(s)/σ``; class IV 0 (an arbitrary prior can put no mass on s).

    The paper's Example 3, the (>=40,F) block (flu 18000, cancer 2000) against the class I prior
    D(flu 12000, cancer 18000): p_in(flu) = 0.9, p_out(flu) = (18000+12000-1)/(20000+30000-1) = 0.6.

    >>> from veil.counts import NodeCounts, SensitiveDomain
    >>> dom = SensitiveDomain("d", np.array(["cancer", "flu"], dtype=object), np.array([2000, 18000]))
    >>> nc = NodeCounts.from_cells(("q",), (0,), [[0], [0]], [[0], [1]], np.array([2000, 18000]), (1,), (dom,))
    >>> m = EpsilonPrivacy(epsilon=5, adversary="I", attribute="d", prior=(("flu", 12000), ("cancer", 18000)))
    >>> p_in, p_out = posteriors(m, nc)          # cells: (block 0, cancer), (block 0, flu)
    >>> round(float(p_in[1]), 4), round(float(p_out[1]), 4)
    (0.9, 0.6)
    """
    bc = counts.blocks(model.attribute)
    c = bc.counts.astype(np.float64)
    n = bc.sizes[bc.block_of_cell].astype(np.float64)
    p_in = c / np.maximum(n, 1)
    if model.adversary == "IV":
        return p_in, np.zeros_like(c)
    sig, total = model.prior_of(bc.domain)
    if model.adversary == "III":
        return p_in, sig[bc.codes].copy()
    if model.adversary == "II":
        return p_in, c / (n + total - 1)
    return p_in, (c + sig[bc.codes] - 1) / (n + total - 1)
