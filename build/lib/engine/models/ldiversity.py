"""The l-diversity family (Machanavajjhala et al., ICDE 2006 = papers/000 §4.2-4.3; SPEC §2, §2.1).

Every checker reads the ``(blocks, values)`` count matrix ``n(E, s)`` of one sensitive attribute and is
vectorized over blocks.  The per-block *levels* (``m``, ``n/r1``, entropy, ``r1/tail``) are exposed as
functions so that multi-attribute l-diversity can apply them to sub-blocks.

Worked example, papers/000 Figure 3 (the 3-diverse inpatient table): three blocks of four rows,
{Heart Disease, Viral Infection, Cancer, Cancer}, {Cancer, Heart Disease, Viral Infection, Viral Infection},
{Heart Disease, Viral Infection, Cancer, Cancer}.  Each has entropy ``-(2·¼ ln ¼ + ½ ln ½) = 1.5 ln 2 =
1.0397``, so the table is entropy ``exp(1.0397) = 2.83``-diverse ("2.8-diverse" in the paper), distinct
3-diverse and frequency 2-diverse (``r1/n = ½``).

>>> from engine.counts import NodeCounts, SensitiveDomain
>>> dom = SensitiveDomain("condition", np.array(["cancer", "heart", "viral"], dtype=object), np.array([5, 3, 4]))
>>> hist = np.array([[2, 1, 1], [1, 1, 2], [2, 1, 1]])                 # cancer, heart, viral per block
>>> b, v = np.nonzero(hist)
>>> nc = NodeCounts.from_cells(("zip",), (1,), b[:, None], v[:, None], hist[b, v], (3,), (dom,))
>>> round(EntropyLDiversity(l=2.8, attribute="condition").check(nc).achieved, 4)
2.8284
>>> EntropyLDiversity(l=2.9, attribute="condition").check(nc).passed.tolist()
[False, False, False]
>>> DistinctLDiversity(l=3, attribute="condition").check(nc).achieved
3.0
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from engine.counts import BlockCounts, NodeCounts, SensitiveDomain
from engine.errors import ConfigError
from engine.models.base import Needs, Properties, Verdict
from engine.models.common import (TOL, all_sub_blocks, domain_of, fail, fmt, level, match_values, number,
                                  per_rows, top_k, whole)

# --- per-block levels (pure functions of a count matrix) ------------------------------------------------


def distinct_level(counts: np.ndarray) -> np.ndarray:
    """``m``: distinct values present per block."""
    return np.count_nonzero(counts, axis=1).astype(np.float64)


def frequency_level(counts: np.ndarray) -> np.ndarray:
    """``n(E)/r1`` per block (frequency l-diversity holds iff this is ``>= l``)."""
    n = counts.sum(axis=1).astype(np.float64)
    r1 = counts.max(axis=1) if counts.shape[1] else np.zeros(len(counts))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(r1 > 0, n / np.maximum(r1, 1), np.inf)


def entropy(counts: np.ndarray) -> np.ndarray:
    """``-sum_s p(E,s) ln p(E,s)`` per block (natural log), computed as ``ln n - sum c ln c / n``.

    >>> np.round(entropy(np.array([[2, 1, 1], [4, 0, 0]])), 4).tolist()
    [1.0397, 0.0]
    """
    return per_rows(_entropy_rows, counts)


def _entropy_rows(counts: np.ndarray) -> np.ndarray:
    c = counts.astype(np.float64)
    n = c.sum(axis=1)
    clogc = (c * np.log(np.maximum(c, 1.0))).sum(axis=1)
    h = np.log(np.maximum(n, 1.0)) - clogc / np.maximum(n, 1.0)
    return np.maximum(h, 0.0)


def recursive_ratio(counts: np.ndarray, l: int) -> np.ndarray:
    """``r1 / (rl + ... + rm)`` per block: the smallest ``c`` with ``r1 < c·tail`` is anything above it.

    ``inf`` when the tail is empty (``m < l``); ``0`` for ``l = 1`` (always holds, SPEC §2).

    >>> recursive_ratio(np.array([[3, 2, 1], [5, 0, 0]]), 2).tolist()
    [1.0, inf]
    """
    if l <= 1:
        return np.zeros(len(counts))
    r1, tail = recursive_parts(counts, l)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(tail > 0, r1 / np.maximum(tail, 1), np.inf)


def recursive_parts(counts: np.ndarray, l: int) -> tuple[np.ndarray, np.ndarray]:
    """``(r1, rl + ... + rm)`` per block (``l >= 2``)."""
    def rows(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        top = top_k(c, l - 1)
        return top[:, 0], c.sum(axis=1) - top.sum(axis=1)
    return per_rows(rows, counts)


def pd_parts(counts: np.ndarray, l: int, allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(r_y, tail(y))`` of pd-recursive (c,l)-diversity (SPEC §2.1, papers/000 Def. 4.3) per block.

    ``y`` is the rank of the most frequent value *not* in ``allowed``.  Its tail is ``sum_{j>=l} r_j`` when
    ``y <= l-1`` and ``sum_{j=l-1..m, j != y} r_j`` when ``y > l-1``; both equal ``n - r_y - (the l-2
    largest counts other than y's)``, which is what is computed (so ties cannot change the result).
    ``r_y = 0`` marks a block with no value outside ``allowed`` (it always holds), as does ``l = 1``.

    >>> ry, tail = pd_parts(np.array([[5, 2, 1], [5, 0, 0]]), 2, np.array([0]))   # value 0 is allowed
    >>> ry.tolist(), tail.tolist()
    ([2, 0], [6, 5])
    """
    b, v = counts.shape
    outside = np.ones(v, dtype=bool)
    outside[allowed] = False
    if l <= 1 or b == 0 or not outside.any():
        return np.zeros(b, dtype=np.int64), counts.sum(axis=1)

    def rows(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = c.sum(axis=1)
        ry = c[:, outside].max(axis=1)
        top = top_k(c, l - 1)
        # y among the l-1 most frequent (ties included): the l-1 largest already contain y's count
        return ry, np.where(ry >= top[:, l - 2], n - top.sum(axis=1), n - top[:, : l - 2].sum(axis=1) - ry)
    return per_rows(rows, counts)


def pd_ratio(counts: np.ndarray, l: int, allowed: np.ndarray) -> np.ndarray:
    """``r_y / tail(y)`` per block; ``0`` where the block always holds, ``inf`` for an empty tail.

    >>> pd_ratio(np.array([[5, 2, 1], [5, 0, 0]]), 2, np.array([0])).tolist()
    [0.3333333333333333, 0.0]
    """
    ry, tail = pd_parts(counts, l, allowed)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(tail > 0, ry / np.maximum(tail, 1), np.inf)
    return np.where(ry > 0, ratio, 0.0)


def pd_passes(counts: np.ndarray, l: int, allowed: np.ndarray, c: float) -> np.ndarray:
    """``r_y < c·tail(y)``, or no value outside ``allowed``, or ``l = 1``."""
    ry, tail = pd_parts(counts, l, allowed)
    return (ry == 0) | (ry < c * tail)


def _min_level(levels: np.ndarray) -> float | None:
    return level(levels.min()) if len(levels) else None


def _max_ratio(ratios: np.ndarray) -> float | None:
    return level(ratios.max()) if len(ratios) else None


def _check_l(where: str, l: object, integral: bool) -> None:
    if integral:
        whole(where, "l", l, 1)
    else:
        number(where, "l", l, minimum=1)


# --- single-attribute models ------------------------------------------------------------------------------


@dataclass(frozen=True)
class DistinctLDiversity:
    """Distinct l-diversity: every block has ``m >= l`` distinct sensitive values; achieved ``min m``.

    >>> from engine.counts import NodeCounts, SensitiveDomain
    >>> dom = SensitiveDomain("s", np.array(["a", "b"], dtype=object), np.array([3, 1]))
    >>> nc = NodeCounts.from_cells(("q",), (0,), [[0], [0], [1]], [[0], [1], [0]], np.array([2, 1, 1]), (2,), (dom,))
    >>> v = DistinctLDiversity(l=2, attribute="s").check(nc)
    >>> v.passed.tolist(), v.achieved
    ([True, False], 1.0)
    """

    type: ClassVar[str] = "distinct-l-diversity"
    l: int
    attribute: str
    where: str = "distinct-l-diversity"

    def __post_init__(self) -> None:
        _check_l(self.where, self.l, integral=True)

    @property
    def properties(self) -> Properties:
        return Properties(True, True, Needs.HISTOGRAM,
                          "a block containing a block with m distinct values has at least m")

    def check(self, counts: NodeCounts) -> Verdict:
        m = distinct_level(counts.blocks(self.attribute).counts)
        return Verdict(m >= self.l, _min_level(m))

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        domain_of(domains, self.attribute, self.where)

    def describe(self) -> str:
        return f"distinct l-diversity (l={self.l}) on {self.attribute}"


@dataclass(frozen=True)
class FrequencyLDiversity:
    """Frequency (probabilistic) l-diversity: ``r1/n(E) <= 1/l``; achieved ``min n(E)/r1``.

    >>> from engine.counts import NodeCounts, SensitiveDomain
    >>> dom = SensitiveDomain("s", np.array(["a", "b"], dtype=object), np.array([4, 2]))
    >>> nc = NodeCounts.from_cells(("q",), (0,), [[0], [0], [1], [1]], [[0], [1], [0], [1]], np.array([1, 1, 3, 1]), (2,), (dom,))
    >>> v = FrequencyLDiversity(l=2, attribute="s").check(nc)     # n/r1 = 2/1 and 4/3
    >>> v.passed.tolist(), round(v.achieved, 4)
    ([True, False], 1.3333)
    """

    type: ClassVar[str] = "frequency-l-diversity"
    l: float
    attribute: str
    where: str = "frequency-l-diversity"

    def __post_init__(self) -> None:
        _check_l(self.where, self.l, integral=False)

    @property
    def properties(self) -> Properties:
        return Properties(True, False, Needs.HISTOGRAM,
                          "not monotone with suppression: l=2, {a,b} passes, merged with the failing {a,a,a} "
                          "gives {a×4,b} with r1/n = 4/5 > 1/2")

    def check(self, counts: NodeCounts) -> Verdict:
        bc = counts.blocks(self.attribute)
        r1 = bc.counts.max(axis=1) if bc.counts.shape[1] else np.zeros(bc.blocks, dtype=np.int64)
        with np.errstate(divide="ignore", invalid="ignore"):
            levels = np.where(r1 > 0, bc.sizes / np.maximum(r1, 1), np.inf)
        return Verdict(r1 * self.l <= bc.sizes, _min_level(levels))

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        domain_of(domains, self.attribute, self.where)

    def describe(self) -> str:
        return f"frequency l-diversity (l={fmt(self.l)}) on {self.attribute}"


@dataclass(frozen=True)
class EntropyLDiversity:
    """Entropy l-diversity (papers/000 Def. 4.1): ``-sum p ln p >= ln l``; achieved ``exp(min entropy)``.

    See the module docstring for papers/000 Figure 3 (achieved 2.83).  Two blocks {a, b} (entropy ln 2) and
    {a, a, a, b} (``-(¾ ln ¾ + ¼ ln ¼) = 0.5623``): the table is ``exp(0.5623) = 1.75``-diverse.

    >>> from engine.counts import NodeCounts, SensitiveDomain
    >>> dom = SensitiveDomain("s", np.array(["a", "b"], dtype=object), np.array([4, 2]))
    >>> nc = NodeCounts.from_cells(("q",), (0,), [[0], [0], [1], [1]], [[0], [1], [0], [1]], np.array([1, 1, 3, 1]), (2,), (dom,))
    >>> v = EntropyLDiversity(l=2, attribute="s").check(nc)
    >>> v.passed.tolist(), round(v.achieved, 4)
    ([True, False], 1.7548)
    """

    type: ClassVar[str] = "entropy-l-diversity"
    l: float
    attribute: str
    where: str = "entropy-l-diversity"

    def __post_init__(self) -> None:
        _check_l(self.where, self.l, integral=False)

    @property
    def properties(self) -> Properties:
        return Properties(True, False, Needs.HISTOGRAM,
                          "monotone by concavity of entropy (papers/000 Thm 5.2); not with suppression: l=2, "
                          "{a,b} merged with the failing {a×10} has entropy 0.29 < ln 2")

    def check(self, counts: NodeCounts) -> Verdict:
        h = entropy(counts.blocks(self.attribute).counts)
        bound = math.log(self.l)
        passed = h >= bound - TOL * max(1.0, bound)
        return Verdict(passed, level(math.exp(h.min())) if len(h) else None)

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        domain_of(domains, self.attribute, self.where)

    def describe(self) -> str:
        return f"entropy l-diversity (l={fmt(self.l)}) on {self.attribute}"


@dataclass(frozen=True)
class RecursiveCLDiversity:
    """Recursive (c,l)-diversity (papers/000 Def. 4.2): ``r1 < c·(rl + ... + rm)``, strict; ``l = 1`` always
    holds.  Achieved: the smallest c for this l, ``max r1/(rl+..+rm)`` (``None`` if some block has ``m < l``).

    >>> from engine.counts import NodeCounts, SensitiveDomain
    >>> dom = SensitiveDomain("s", np.array(["a", "b", "c"], dtype=object), np.array([4, 2, 1]))
    >>> nc = NodeCounts.from_cells(("q",), (0,), [[0], [0], [0]], [[0], [1], [2]], np.array([4, 2, 1]), (1,), (dom,))
    >>> v = RecursiveCLDiversity(c=4, l=2, attribute="s").check(nc)   # 4 < 4·(2+1)
    >>> v.passed.tolist(), round(v.achieved, 4)                       # c* = 4/3
    ([True], 1.3333)
    >>> RecursiveCLDiversity(c=4, l=3, attribute="s").check(nc).passed.tolist()   # 4 < 4·1 fails
    [False]
    """

    type: ClassVar[str] = "recursive-cl-diversity"
    c: float
    l: int
    attribute: str
    where: str = "recursive-cl-diversity"

    def __post_init__(self) -> None:
        number(self.where, "c", self.c, above=0)
        _check_l(self.where, self.l, integral=True)

    @property
    def properties(self) -> Properties:
        return Properties(True, False, Needs.HISTOGRAM,
                          "r1 + c·(r1+..+r(l-1)) is subadditive, so merging passing blocks keeps r1 < c·tail; "
                          "not with suppression: (2,2), {a,b} merged with the failing {a,a,a} gives 4 < 2·1 false", achieved="max")

    def check(self, counts: NodeCounts) -> Verdict:
        bc = counts.blocks(self.attribute)
        if self.l <= 1:
            return Verdict(np.ones(bc.blocks, dtype=bool), 0.0 if bc.blocks else None)
        r1, tail = recursive_parts(bc.counts, self.l)
        passed = r1 < self.c * tail
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(tail > 0, r1 / np.maximum(tail, 1), np.inf)
        return Verdict(passed, _max_ratio(ratio))

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        domain_of(domains, self.attribute, self.where)

    def describe(self) -> str:
        return f"recursive (c,l)-diversity (c={fmt(self.c)}, l={self.l}) on {self.attribute}"


def _allowed_columns(domain: SensitiveDomain, names: tuple[str, ...], where: str, param: str) -> np.ndarray:
    return match_values(domain, names, where, param)


@dataclass(frozen=True)
class PdRecursiveCLDiversity:
    """Positive-disclosure recursive (c,l)-diversity (papers/000 Def. 4.3, SPEC §2.1) with allowed set Y.

    Achieved: ``max r_y/tail(y)`` over blocks that have a value outside Y (``None`` if a tail is empty).

    >>> from engine.counts import NodeCounts, SensitiveDomain
    >>> dom = SensitiveDomain("s", np.array(["healthy", "flu", "hiv"], dtype=object), np.array([10, 2, 1]))
    >>> # one block: healthy 10, flu 2, hiv 1; Y = {healthy}: y = 2 > l-1 = 1, tail = r1 + r3 = 11
    >>> nc = NodeCounts.from_cells(("q",), (0,), [[0], [0], [0]], [[0], [1], [2]], np.array([10, 2, 1]), (1,), (dom,))
    >>> v = PdRecursiveCLDiversity(c=0.5, l=2, allowed=("healthy",), attribute="s").check(nc)
    >>> v.passed.tolist(), round(v.achieved, 4)                     # 2 < 0.5·11; c* = 2/11
    ([True], 0.1818)
    """

    type: ClassVar[str] = "pd-recursive-cl-diversity"
    c: float
    l: int
    allowed: tuple[str, ...]
    attribute: str
    where: str = "pd-recursive-cl-diversity"

    def __post_init__(self) -> None:
        number(self.where, "c", self.c, above=0)
        _check_l(self.where, self.l, integral=True)

    @property
    def properties(self) -> Properties:
        return Properties(True, False, Needs.HISTOGRAM,
                          "holds iff r_v·(1+c) + c·(l-2 largest other counts) < c·n for every v outside Y, a "
                          "subadditive condition; not with suppression (as recursive (c,l))", achieved="max")

    def check(self, counts: NodeCounts) -> Verdict:
        bc = counts.blocks(self.attribute)
        allowed = _allowed_columns(bc.domain, self.allowed, self.where, "allowed")
        passed = pd_passes(bc.counts, self.l, allowed, self.c)
        return Verdict(passed, _max_ratio(pd_ratio(bc.counts, self.l, allowed)))

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        _allowed_columns(domain_of(domains, self.attribute, self.where), self.allowed, self.where, "allowed")

    def describe(self) -> str:
        return (f"pd-recursive (c,l)-diversity (c={fmt(self.c)}, l={self.l}, allowed={list(self.allowed)}) "
                f"on {self.attribute}")


@dataclass(frozen=True)
class NpdRecursiveCLDiversity:
    """Negative/positive-disclosure recursive (c1,c2,l)-diversity (papers/000 Def. 4.4): pd-recursive (c1,l)
    and every protected ``w`` has ``n(E,w)/n(E) >= c2/100``.  Achieved: ``c1*`` as pd-recursive, ``None`` if
    some block misses a c2 requirement.

    >>> from engine.counts import NodeCounts, SensitiveDomain
    >>> dom = SensitiveDomain("s", np.array(["a", "b", "c"], dtype=object), np.array([5, 3, 2]))
    >>> hist = np.array([[3, 1, 1], [2, 2, 1]])
    >>> b, v = np.nonzero(hist)
    >>> nc = NodeCounts.from_cells(("q",), (0,), b[:, None], v[:, None], hist[b, v], (2,), (dom,))
    >>> m = NpdRecursiveCLDiversity(c1=2, c2=25, l=2, allowed=(), protected=("b",), attribute="s")
    >>> m.check(nc).passed.tolist()          # b is 1/5 = 20% < 25% in block 0; 2/5 in block 1
    [False, True]
    """

    type: ClassVar[str] = "npd-recursive-cl-diversity"
    c1: float
    c2: float
    l: int
    allowed: tuple[str, ...]
    protected: tuple[str, ...]
    attribute: str
    where: str = "npd-recursive-cl-diversity"

    def __post_init__(self) -> None:
        number(self.where, "c1", self.c1, above=0)
        number(self.where, "c2", self.c2, minimum=0, maximum=100)
        _check_l(self.where, self.l, integral=True)

    @property
    def properties(self) -> Properties:
        return Properties(True, False, Needs.HISTOGRAM,
                          "pd-recursive part as pd-recursive; the c2 part is linear in the counts (papers/000 "
                          "Thm 5.3); not with suppression: c2=50, {w,a} merged with {a,a} has w at 25%", achieved="max")

    def check(self, counts: NodeCounts) -> Verdict:
        bc = counts.blocks(self.attribute)
        allowed = _allowed_columns(bc.domain, self.allowed, self.where, "allowed")
        ratio = pd_ratio(bc.counts, self.l, allowed)
        w = _allowed_columns(bc.domain, self.protected, self.where, "protected")
        enough = (100 * bc.counts[:, w] >= self.c2 * bc.sizes[:, None]).all(axis=1)
        passed = pd_passes(bc.counts, self.l, allowed, self.c1) & enough
        achieved = _max_ratio(ratio) if enough.all() else None
        return Verdict(passed, achieved)

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        dom = domain_of(domains, self.attribute, self.where)
        _allowed_columns(dom, self.allowed, self.where, "allowed")
        _allowed_columns(dom, self.protected, self.where, "protected")

    def describe(self) -> str:
        return (f"npd-recursive (c1,c2,l)-diversity (c1={fmt(self.c1)}, c2={fmt(self.c2)}%, l={self.l}, "
                f"allowed={list(self.allowed)}, protected={list(self.protected)}) on {self.attribute}")


# --- multi-attribute ------------------------------------------------------------------------------------------

INSTANTIATIONS = ("distinct", "frequency", "entropy", "recursive")


@dataclass(frozen=True)
class MultiAttributeLDiversity:
    """Multi-attribute l-diversity (papers/000 Def. 4.5): for every sensitive ``Si``, the instantiation holds
    with ``Si`` the sole sensitive attribute and ``Q ∪ (S \\ {Si})`` the key.  A q*-block passes iff all its
    sub-blocks pass for every attribute.  Achieved: the instantiation's level over all sub-blocks of all
    attributes (min l; max c for recursive).

    papers/000 §4.3's block {(s1,v1), (s1,v2), (s2,v3), (s3,v3)} is distinct 3-diverse in S alone (and in V
    alone), but with V in the key the sub-block V=v1 holds only s1 (and with S in the key, S=s2 holds only
    v3): multi-attribute it is not even 2-diverse.

    >>> from engine.counts import NodeCounts, SensitiveDomain
    >>> S = SensitiveDomain("S", np.array(["s1", "s2", "s3"], dtype=object), np.array([2, 1, 1]))
    >>> V = SensitiveDomain("V", np.array(["v1", "v2", "v3"], dtype=object), np.array([1, 1, 2]))
    >>> nc = NodeCounts.from_cells(("q",), (0,), np.zeros((4, 1)), np.array([[0, 0], [0, 1], [1, 2], [2, 2]]),
    ...                            np.ones(4, dtype=np.int64), (1,), (S, V))
    >>> DistinctLDiversity(l=3, attribute="S").check(nc).passed.tolist()
    [True]
    >>> MultiAttributeLDiversity(instantiation="distinct", l=3).check(nc).achieved
    1.0
    """

    type: ClassVar[str] = "multi-attribute-l-diversity"
    instantiation: str
    l: float
    c: float | None = None
    where: str = "multi-attribute-l-diversity"

    def __post_init__(self) -> None:
        if self.instantiation not in INSTANTIATIONS:
            raise fail(self.where, "instantiation",
                       f"must be one of {', '.join(map(repr, INSTANTIATIONS))}, got {self.instantiation!r}")
        _check_l(self.where, self.l, integral=self.instantiation in ("distinct", "recursive"))
        if self.instantiation == "recursive":
            if self.c is None:
                raise ConfigError(f"{self.where}: missing required parameter 'c' (instantiation 'recursive')")
            number(self.where, "c", self.c, above=0)
        elif self.c is not None:
            raise fail(self.where, "c", f"only applies to instantiation 'recursive', not {self.instantiation!r}")

    @property
    def attribute(self) -> str | None:
        return None

    @property
    def properties(self) -> Properties:
        return Properties(True, False, Needs.JOINT,
                          "merging two q*-blocks merges their sub-blocks pairwise (a missing one counts as "
                          "empty), so it inherits the instantiation's monotonicity; not with suppression even "
                          "for distinct: l=2, {(a,p),(a,q),(b,p),(b,q)} merged with {(c,r)} has the sub-block "
                          "V=r holding only S=c", achieved="max" if self.instantiation == "recursive" else "min")

    def sub_levels(self, bc: BlockCounts) -> tuple[np.ndarray, np.ndarray]:
        """(passed, level) per sub-block for the instantiation."""
        if self.instantiation == "distinct":
            m = distinct_level(bc.counts)
            return m >= self.l, m
        if self.instantiation == "frequency":
            f = frequency_level(bc.counts)
            r1 = bc.counts.max(axis=1) if bc.counts.shape[1] else np.zeros(bc.blocks, dtype=np.int64)
            return r1 * self.l <= bc.sizes, f
        if self.instantiation == "entropy":
            h = entropy(bc.counts)
            bound = math.log(self.l)
            return h >= bound - TOL * max(1.0, bound), np.exp(h)
        ratio = recursive_ratio(bc.counts, int(self.l))
        if self.l <= 1:
            return np.ones(bc.blocks, dtype=bool), ratio
        return ratio < self.c, ratio  # type: ignore[operator]

    def check(self, counts: NodeCounts) -> Verdict:
        passed = np.ones(counts.n_blocks, dtype=bool)
        levels = []
        for dom in counts.sensitive:
            bc, parent = counts.sub_blocks(dom.name)
            ok, lv = self.sub_levels(bc)
            passed &= all_sub_blocks(ok, parent, counts.n_blocks)
            levels.append(lv)
        allv = np.concatenate(levels) if levels else np.zeros(0)
        if self.instantiation == "recursive":
            achieved = _max_ratio(allv)
        else:
            achieved = _min_level(allv)
        return Verdict(passed, achieved)

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        if not domains:
            raise ConfigError(f"{self.where}: needs at least one sensitive column")

    def describe(self) -> str:
        c = f", c={fmt(self.c)}" if self.c is not None else ""
        return f"multi-attribute {self.instantiation} l-diversity (l={fmt(self.l)}{c}) on all sensitive columns"
