"""ε-privacy against realistic adversaries (Machanavajjhala, Gehrke & Götz, VLDB 2009 = papers/004,
Theorems 1-4; SPEC §5).

The adversary's prior is a Dirichlet ``σ(s)`` per sensitive value with stubbornness ``σ = sum σ(s)``; she
knows ``b`` rows exactly.  Per block q and value s present in it, with ``x = n(q,s)/(n(q)-b)``,
``δ(q) = (ε-1)(n(q)-b)/(σ+b)`` and ``ε' = ε(1 - 1/(σ+b))``:

- class I (σ(s) known): R1 ``n(q)-b >= (σ+b)/(ε-1)`` or ``x <= ε/(1-δ) · (σ(s)-1)/(σ+b)``; R2
  ``x <= 1 - 1/(ε'+δ) + 1/(ε'+δ) · (σ(s)-1)/(σ+b)``;
- class II (only σ known): R1 ``n(q)-b >= (σ+b)/(ε-1)``; R2 ``x <= 1 - 1/(ε'+δ)``;
- class III (shape ``h(s) = σ(s)/σ`` known, σ = ∞): R1 ``x <= ε h(s)``; R2 ``x <= 1 - (1-h(s))/ε``;
- class IV: no generalized table is ε-private for any ε: every block fails, achieved ``None``.

``check`` evaluates these conditions as written.  The achieved level (the smallest ε for which they hold) is
computed in closed form per (block, value) — each condition is monotone in ε and solves for it:

- R1(a) ``ε >= 1 + (σ+b)/(n-b)``; R1(b) ``ε >= x(1+u)/(k+xu)`` (when ``k+xu > 0``) with ``u = (n-b)/(σ+b)``,
  ``k = (σ(s)-1)/(σ+b)``; R1 holds from the smaller of the two on;
- R2 ``ε >= ((1-k)/(1-x) + u)/a`` with ``a = 1 - 1/(σ+b) + u`` (class II: k = 0); never when ``x >= 1``;
- class III: ``ε >= x/h`` and ``ε >= (1-h)/(1-x)``.

tests/models/test_epsilon.py checks the closed forms against ``check`` (pass just above, fail just below).

Worked example (SPEC §5, papers/004 Table 3, b = 0): blocks (<40,M) flu 200 cancer 300; (>=40,M) 1800/2700;
(>=40,F) 18000/2000.  Class II with σ = 1000: R1 on the 500-row block needs ``ε >= 1 + 1000/500 = 3``, R2
needs less everywhere (2.0013, 1.2730, 1.4286), so the table is 3-private and not less.  With σ = 30000,
R1 on that block needs ``1 + 30000/500 = 61``.

>>> from engine.counts import NodeCounts, SensitiveDomain
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
from typing import ClassVar

import numpy as np

from engine.counts import NodeCounts, SensitiveDomain
from engine.errors import ConfigError
from engine.models.base import Needs, Properties, Verdict
from engine.models.common import TOL, domain_of, fail, fmt, level, match_values, number, per_rows, slack, whole

ADVERSARIES = ("I", "II", "III", "IV")
SHAPES = ("uniform", "table")


@dataclass(frozen=True)
class EpsilonPrivacy:
    """ε-privacy against adversary class I, II, III or IV (see the module docstring).

    ``prior``: a tuple of ``(value, σ(s))`` pairs, or ``"uniform"`` / ``"table"`` (a shape: equal, or the whole
    table's distribution).  Class I uses a table as given (its sum is σ) or a shape scaled by
    ``stubbornness``; class II needs only ``stubbornness``; class III uses only the prior's shape.

    papers/004 Example 3: the block flu 18000, cancer 2000 against the class III prior shape (flu .4, cancer
    .6): R2 for flu needs ``1 - 0.9 >= (1 - 0.4)/ε``, i.e. ε >= 6 ("6-privacy").

    >>> from engine.counts import NodeCounts, SensitiveDomain
    >>> dom = SensitiveDomain("d", np.array(["cancer", "flu"], dtype=object), np.array([2000, 18000]))
    >>> nc = NodeCounts.from_cells(("q",), (0,), [[0], [0]], [[0], [1]], np.array([2000, 18000]), (1,), (dom,))
    >>> v = EpsilonPrivacy(epsilon=6.01, adversary="III", prior=(("flu", 0.4), ("cancer", 0.6)), attribute="d").check(nc)
    >>> v.passed.tolist(), round(v.achieved, 9)
    ([True], 6.0)
    """

    type: ClassVar[str] = "epsilon-privacy"
    epsilon: float
    adversary: str
    attribute: str
    prior: tuple[tuple[str, float], ...] | str | None = None
    stubbornness: float | None = None
    known_rows: int = 0
    where: str = "epsilon-privacy"
    _cache: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

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
                raise ConfigError(f"{w}: class I needs parameter 'prior' (a table of value = σ(s), or 'uniform' / "
                                  "'table' with 'stubbornness')")
            if isinstance(self.prior, str) and self.stubbornness is None:
                raise ConfigError(f"{w}: class I with prior {self.prior!r} (a shape) needs parameter "
                                  "'stubbornness' to scale it")
            if not isinstance(self.prior, str):
                total = sum(s for _, s in self.prior)
                if total < 1:
                    raise fail(w, "prior", f"sums to a stubbornness of {total:g}; class I needs at least 1")
                if self.stubbornness is not None and not math.isclose(total, self.stubbornness, rel_tol=1e-9):
                    raise fail(w, "stubbornness", f"is {self.stubbornness:g} but the prior's σ(s) sum to {total:g} "
                                                  "(give one or the other)")
        elif a == "II":
            if self.stubbornness is None:
                raise ConfigError(f"{w}: class II needs parameter 'stubbornness' (σ)")
            if self.prior is not None:
                raise fail(w, "prior", "does not apply to class II (any prior shape with stubbornness σ)")
        elif a == "III":
            if self.prior is None:
                raise ConfigError(f"{w}: class III needs parameter 'prior' (its shape: a table, 'uniform' or "
                                  "'table')")
            if self.stubbornness is not None:
                raise fail(w, "stubbornness", "does not apply to class III (infinitely stubborn)")
        else:
            for name, v in (("prior", self.prior), ("stubbornness", self.stubbornness)):
                if v is not None:
                    raise fail(w, name, "does not apply to class IV (every adversary)")

    @property
    def properties(self) -> Properties:
        if self.adversary == "IV":
            return Properties(True, True, Needs.HISTOGRAM, "class IV never passes (vacuously monotone)", achieved="max")
        return Properties(True, False, Needs.HISTOGRAM,
                          "monotone (papers/004 §3.1; x of a merged block is at most the larger x, thresholds grow "
                          "with n(q)); not with suppression: class III uniform over {a,b}, ε=2: {a,b} merged with "
                          "{a×4} has x(a) = 5/6 > 1 - ½·½", achieved="max")

    # --- the prior over one domain ---------------------------------------------------------------------

    def sigma(self, domain: SensitiveDomain) -> tuple[np.ndarray, float]:
        """``(σ(s) per domain column, σ)``; for class III the shape ``σ(s)/σ`` and 1."""
        key = id(domain)
        hit = self._cache.get(key)
        if hit is not None and hit[0] is domain:
            return hit[1], hit[2]
        w = self.where
        size = domain.size
        sig: np.ndarray
        total: float
        if self.adversary == "II":
            sig, total = np.ones(size), float(self.stubbornness)  # type: ignore[arg-type]
        elif self.adversary == "IV" or self.prior is None:
            sig, total = np.ones(size), 1.0
        elif isinstance(self.prior, str):
            ref = domain.reference if self.prior == "table" else np.full(size, 1.0 / max(size, 1))
            scale = float(self.stubbornness) if self.stubbornness is not None else 1.0
            sig, total = ref * scale, scale
        else:
            names = [n for n, _ in self.prior]
            cols = np.array([match_values(domain, [n], w, "prior")[0] for n in names], dtype=np.int64)
            if len(np.unique(cols)) != len(cols):
                raise fail(w, "prior", "names the same value twice")
            sig = np.zeros(size)
            sig[cols] = [s for _, s in self.prior]
            missing = [v for v, s in zip(domain.values.tolist(), sig) if s <= 0]
            if missing:
                shown = ", ".join(repr(str(m)) for m in missing[:20])
                raise fail(w, "prior", f"misses value(s) of column {domain.name!r} (class {self.adversary} needs σ(s) "
                                       f"for every value): {shown}")
            total = float(sig.sum())
        if self.adversary == "III":
            sig, total = sig / total, 1.0
        self._cache[key] = (domain, sig, total)
        return sig, total

    # --- the conditions ---------------------------------------------------------------------------------

    def holds(self, counts: np.ndarray, epsilon: float, domain: SensitiveDomain) -> np.ndarray:
        """Per block: SPEC §5's conditions at ``epsilon`` for every value present (as written)."""
        if self.adversary == "IV":
            return np.zeros(len(counts), dtype=bool)
        sig, total = self.sigma(domain)
        return per_rows(lambda c: self._holds(c, epsilon, sig, total), counts)

    def _holds(self, counts: np.ndarray, epsilon: float, sig: np.ndarray, total: float) -> np.ndarray:
        n = counts.sum(axis=1).astype(np.float64)
        b = float(self.known_rows)
        big_n = n - b
        valid = big_n > 0
        safe_n = np.where(valid, big_n, 1.0)
        x = counts / safe_n[:, None]
        present = counts > 0
        eps = float(epsilon)
        if self.adversary == "III":
            ok = (x <= slack(eps * sig)) & (x <= slack(1 - (1 - sig) / eps))
            return valid & (ok | ~present).all(axis=1)
        s_b = total + b
        delta = (eps - 1) * safe_n / s_b
        eps_p = eps * (1 - 1 / s_b)
        r1a = safe_n >= s_b / (eps - 1) - TOL * max(1.0, s_b / (eps - 1))
        if self.adversary == "II":
            r2 = x <= slack(1 - 1 / (eps_p + delta))[:, None]
            return valid & r1a & (r2 | ~present).all(axis=1)
        k = (sig - 1) / s_b
        below = delta < 1
        with np.errstate(divide="ignore", invalid="ignore"):
            r1b_bound = np.where(below, eps / np.where(below, 1 - delta, 1.0), 0.0)[:, None] * k
        r1b = below[:, None] & (x <= slack(r1b_bound))
        r2 = x <= slack(1 - (1 - k) / (eps_p + delta)[:, None])
        ok = (r1a[:, None] | r1b) & r2
        return valid & (ok | ~present).all(axis=1)

    def block_levels(self, counts: np.ndarray, domain: SensitiveDomain) -> np.ndarray:
        """Per block, the smallest ε (>= 1) for which the conditions hold (``inf``: none), in closed form."""
        if self.adversary == "IV":
            return np.full(len(counts), np.inf)
        sig, total = self.sigma(domain)
        return per_rows(lambda c: self._levels(c, sig, total), counts)

    def _levels(self, counts: np.ndarray, sig: np.ndarray, total: float) -> np.ndarray:
        nb = len(counts)
        n = counts.sum(axis=1).astype(np.float64)
        b = float(self.known_rows)
        big_n = n - b
        valid = big_n > 0
        safe_n = np.where(valid, big_n, 1.0)[:, None]
        x = counts / safe_n
        present = counts > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            one_minus_x = 1 - x
            if self.adversary == "III":
                r1 = x / sig
                r2 = np.where(one_minus_x > 0, (1 - sig) / np.where(one_minus_x > 0, one_minus_x, 1.0),
                              np.where((one_minus_x == 0) & (sig >= 1), 1.0, np.inf))
                cell = np.maximum(r1, r2)
            else:
                s_b = total + b
                u = safe_n / s_b
                a = 1 - 1 / s_b + u
                k = np.zeros_like(sig) if self.adversary == "II" else (sig - 1) / s_b
                e_a = 1 + 1 / u
                r2 = np.where(one_minus_x > 0, ((1 - k) / np.where(one_minus_x > 0, one_minus_x, 1.0) + u) / a, np.inf)
                if self.adversary == "II":
                    r1 = np.broadcast_to(e_a, x.shape)
                else:
                    denom = k + x * u
                    e_b = np.where(denom > 0, x * (1 + u) / np.where(denom > 0, denom, 1.0), np.inf)
                    r1 = np.minimum(e_a, e_b)
                cell = np.maximum(r1, r2)
        cell = np.where(present, np.maximum(cell, 1.0), 1.0)
        out = cell.max(axis=1) if counts.shape[1] else np.ones(nb)
        return np.where(valid, out, np.inf)

    def check(self, counts: NodeCounts) -> Verdict:
        bc = counts.blocks(self.attribute)
        passed = self.holds(bc.counts, self.epsilon, bc.domain)
        if self.adversary == "IV" or bc.blocks == 0:
            return Verdict(passed, None)
        return Verdict(passed, level(self.block_levels(bc.counts, bc.domain).max()))

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        self.sigma(domain_of(domains, self.attribute, self.where))

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
    """For diagnosis, per block and value: ``p_in = n(q,s)/n(q)`` and the adversary's worst-case ``p_out``
    (papers/004 Eq. 8, 9): class I ``(n(q,s)+σ(s)-1)/(n(q)+σ-1)``; class II the same with the worst
    ``σ(s) = 1``; class III the prior shape ``σ(s)/σ``; class IV 0 (an arbitrary prior can put no mass on s).

    papers/004 Example 3, the (>=40,F) block (flu 18000, cancer 2000) against the class I prior
    D(flu 12000, cancer 18000): p_in(flu) = 0.9, p_out(flu) = (18000+12000-1)/(20000+30000-1) = 0.6.

    >>> from engine.counts import NodeCounts, SensitiveDomain
    >>> dom = SensitiveDomain("d", np.array(["cancer", "flu"], dtype=object), np.array([2000, 18000]))
    >>> nc = NodeCounts.from_cells(("q",), (0,), [[0], [0]], [[0], [1]], np.array([2000, 18000]), (1,), (dom,))
    >>> m = EpsilonPrivacy(epsilon=5, adversary="I", attribute="d", prior=(("flu", 12000), ("cancer", 18000)))
    >>> p_in, p_out = posteriors(m, nc)
    >>> round(float(p_in[0, 1]), 4), round(float(p_out[0, 1]), 4)
    (0.9, 0.6)
    """
    bc = counts.blocks(model.attribute)
    c = bc.counts.astype(np.float64)
    n = c.sum(axis=1)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        p_in = np.where(n > 0, c / np.maximum(n, 1), 0.0)
        if model.adversary == "IV":
            p_out = np.zeros_like(c)
        else:
            sig, total = model.sigma(bc.domain)
            if model.adversary == "III":
                p_out = np.broadcast_to(sig, c.shape).copy()
            elif model.adversary == "II":
                p_out = c / (n + total - 1)
            else:
                p_out = (c + sig - 1) / (n + total - 1)
    return p_in, p_out
