"""The l-diversity family (Machanavajjhala, Kifer, Gehrke & Venkitasubramaniam, "l-Diversity: Privacy Beyond
k-Anonymity", ICDE 2006, §4.2-4.3; docs/models.md §2.2-2.4).

Every checker reads the sparse histograms ``n(E, s)`` of one sensitive attribute (``BlockCounts``) and works on
their non-zero cells, vectorized over blocks.  The per-block *levels* (``m``, ``n/r1``, ``exp(entropy)``,
``r1/tail``) are functions of a ``BlockCounts`` so that multi-attribute l-diversity applies them to
sub-blocks; each model's ``levels(counts)`` returns them per block, and its verdicts agree with them exactly
(docs/models.md §7).

Worked example, the paper's Figure 3 (the 3-diverse inpatient table): three blocks of four rows,
{Heart Disease, Viral Infection, Cancer, Cancer}, {Cancer, Heart Disease, Viral Infection, Viral Infection},
{Heart Disease, Viral Infection, Cancer, Cancer}.  Each has entropy ``-(2·¼ ln ¼ + ½ ln ½) = 1.5 ln 2 =
1.0397``, so the table is entropy ``exp(1.0397) = 2.83``-diverse ("2.8-diverse" in the paper), distinct
3-diverse and frequency 2-diverse (``r1/n = ½``).

>>> from veil.counts import NodeCounts, SensitiveDomain
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
from fractions import Fraction
from typing import ClassVar

import numpy as np

from veil.counts import BlockCounts, NodeCounts, SensitiveDomain, segment_reduce
from veil.errors import ConfigError
from veil.models.base import Needs, Properties, Reduction, Reference, Statistic, Verdict
from veil.models.common import achieved, domain_of, fail, fmt, judge, match_values, number, per_chunk, top_parts, whole
from veil.models.exact import Exact, Rule, log_sign, rational
from veil.models.params import Params
from veil.registry import MODELS

INF = math.inf

# --- per-block levels on sparse histograms (float), and their exact counterparts -----------------------------


def distinct_level(bc: BlockCounts) -> np.ndarray:
    """``m``: distinct values present per block."""
    return bc.distinct.astype(np.float64)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num/den`` per block, ``inf`` where ``den == 0``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.maximum(den, 1), INF)


def _exact_ratio(num: np.ndarray, den: np.ndarray) -> list[Exact]:
    return [Fraction(int(a), int(b)) if b > 0 else INF for a, b in zip(num.tolist(), den.tolist())]


def frequency_level(bc: BlockCounts) -> np.ndarray:
    """``n(E)/r1`` per block (frequency l-diversity holds iff this is ``>= l``)."""
    return _ratio(bc.sizes, bc.block_max(bc.counts))


def frequency_exact(bc: BlockCounts) -> list[Exact]:
    return _exact_ratio(bc.sizes, bc.block_max(bc.counts))


def entropy(bc: BlockCounts) -> np.ndarray:
    """``-sum_s p(E,s) ln p(E,s)`` per block (natural log), as ``ln n - sum c ln c / n``.

    >>> from veil.counts import SensitiveDomain
    >>> bc = BlockCounts.from_dense(np.array([[2, 1, 1], [4, 0, 0]]), SensitiveDomain("s", np.arange(3), np.ones(3)))
    >>> np.round(entropy(bc), 4).tolist()
    [1.0397, 0.0]
    """
    return per_chunk(bc, lambda part: _entropy_parts(part)[0])


def _entropy_parts(bc: BlockCounts) -> tuple[np.ndarray, np.ndarray]:
    """(entropy, a bound on its floating-point error) per block."""
    c = bc.counts.astype(np.float64)
    n = bc.sizes.astype(np.float64)
    clogc = bc.block_sum(c * np.log(c))
    with np.errstate(divide="ignore", invalid="ignore"):
        h = np.where(n > 0, np.log(np.maximum(n, 1.0)) - clogc / np.maximum(n, 1.0), 0.0)
    err = 1e-15 * (bc.distinct + 8) * (1.0 + np.log(np.maximum(n, 1.0)))
    return np.maximum(h, 0.0), err


def entropy_level(bc: BlockCounts) -> tuple[np.ndarray, np.ndarray]:
    """``exp(entropy)`` per block (``m`` exactly when a block's counts are all equal) and an error bound."""
    h, err = _entropy_parts(bc)
    uniform = bc.block_max(bc.counts) == bc.block_min(bc.counts)
    level = np.where(uniform, bc.distinct.astype(np.float64), np.exp(h))
    return level, np.where(uniform, 0.0, level * err)


def entropy_signs(bc: BlockCounts, l: Fraction) -> list[int]:
    """Per block, the sign of ``exp(entropy) - l`` exactly: of ``ln(n^n · q^n / (p^n · prod c^c))`` with
    ``l = p/q`` (docs/models.md §7)."""
    out = []
    for b in range(bc.blocks):
        cells = bc.counts[bc.indptr[b] : bc.indptr[b + 1]].tolist()
        n = sum(cells)
        terms = [(n, n), (l.denominator, n), (l.numerator, -n)] + [(c, -c) for c in cells]
        out.append(log_sign(terms))
    return out


def recursive_parts(bc: BlockCounts, l: int) -> tuple[np.ndarray, np.ndarray]:
    """``(r1, rl + ... + rm)`` per block (``l >= 2``)."""
    top = top_parts(bc, l - 1)
    return top.first, bc.sizes - top.through


def recursive_ratio(bc: BlockCounts, l: int) -> np.ndarray:
    """``r1 / (rl + ... + rm)`` per block: recursive (c,l) holds iff it is ``< c``.

    ``inf`` when the tail is empty (``m < l``); ``0`` for ``l = 1`` (always holds, docs/models.md §2.2).

    >>> from veil.counts import SensitiveDomain
    >>> bc = BlockCounts.from_dense(np.array([[3, 2, 1], [5, 0, 0]]), SensitiveDomain("s", np.arange(3), np.ones(3)))
    >>> recursive_ratio(bc, 2).tolist()
    [1.0, inf]
    """
    if l <= 1:
        return np.zeros(bc.blocks)
    return _ratio(*recursive_parts(bc, l))


def recursive_exact(bc: BlockCounts, l: int) -> list[Exact]:
    if l <= 1:
        return [Fraction(0)] * bc.blocks
    return _exact_ratio(*recursive_parts(bc, l))


def pd_parts(bc: BlockCounts, l: int, allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(r_y, tail(y))`` of pd-recursive (c,l)-diversity (docs/models.md §2.3) per block.

    ``y`` is the rank of the most frequent value *not* in ``allowed``.  Its tail is ``sum_{j>=l} r_j`` when
    ``y <= l-1`` and ``sum_{j=l-1..m, j != y} r_j`` when ``y > l-1``; both equal ``n - r_y - (the l-2
    largest counts other than y's)``, which is what is computed (so ties cannot change the result).
    ``r_y = 0`` marks a block with no value outside ``allowed`` (it always holds), as does ``l = 1``.

    >>> from veil.counts import SensitiveDomain
    >>> bc = BlockCounts.from_dense(np.array([[5, 2, 1], [5, 0, 0]]), SensitiveDomain("s", np.arange(3), np.ones(3)))
    >>> ry, tail = pd_parts(bc, 2, np.array([0]))   # value 0 is allowed
    >>> ry.tolist(), tail.tolist()
    ([2, 0], [6, 5])
    """
    n = bc.sizes
    outside = ~np.isin(bc.codes, allowed)
    if l <= 1 or bc.blocks == 0 or not outside.any():
        return np.zeros(bc.blocks, dtype=np.int64), n
    ry = bc.block_max(np.where(outside, bc.counts, 0))
    top = top_parts(bc, l - 1)
    # y among the l-1 most frequent (ties included): the l-1 largest already contain y's count
    return ry, np.where(ry >= top.kth, n - top.through, n - top.before - ry)


def pd_ratio(bc: BlockCounts, l: int, allowed: np.ndarray) -> np.ndarray:
    """``r_y / tail(y)`` per block; ``0`` where the block always holds, ``inf`` for an empty tail.

    >>> from veil.counts import SensitiveDomain
    >>> bc = BlockCounts.from_dense(np.array([[5, 2, 1], [5, 0, 0]]), SensitiveDomain("s", np.arange(3), np.ones(3)))
    >>> pd_ratio(bc, 2, np.array([0])).tolist()
    [0.3333333333333333, 0.0]
    """
    ry, tail = pd_parts(bc, l, allowed)
    return np.where(ry > 0, _ratio(ry, tail), 0.0)


def pd_exact(bc: BlockCounts, l: int, allowed: np.ndarray) -> list[Exact]:
    ry, tail = pd_parts(bc, l, allowed)
    return [Fraction(0) if y == 0 else v for y, v in zip(ry.tolist(), _exact_ratio(ry, tail))]


def share_level(bc: BlockCounts, protected: np.ndarray) -> np.ndarray:
    """``min over w in protected of 100·n(E,w)/n(E)`` per block (``inf`` when nothing is protected)."""
    if len(protected) == 0:
        return np.full(bc.blocks, INF)
    return 100.0 * _protected_min(bc, protected) / np.maximum(bc.sizes, 1)


def _protected_min(bc: BlockCounts, protected: np.ndarray) -> np.ndarray:
    hit = np.isin(bc.codes, protected)
    present = bc.block_sum(hit.astype(np.int64))
    low = bc.block_min(np.where(hit, bc.counts, np.iinfo(np.int64).max), empty=0)
    return np.where(present == len(protected), low, 0)


def share_exact(bc: BlockCounts, protected: np.ndarray) -> list[Exact]:
    if len(protected) == 0:
        return [INF] * bc.blocks
    return [
        Fraction(100 * int(w), max(int(n), 1))
        for w, n in zip(_protected_min(bc, protected).tolist(), bc.sizes.tolist())
    ]


def _by_parent(values: np.ndarray, parent: np.ndarray, n_blocks: int, kind: str) -> np.ndarray:
    """Per q*-block, the min or max of its sub-blocks' values (``parent`` non-decreasing)."""
    indptr = np.searchsorted(parent, np.arange(n_blocks + 1))
    if kind == "min":
        return segment_reduce(np.minimum, values, indptr, INF)
    return segment_reduce(np.maximum, values, indptr, 0.0)


def _check_l(where: str, l: object, integral: bool) -> None:
    if integral:
        whole(where, "l", l, 1)
    else:
        number(where, "l", l, minimum=1)


def _verdict(passed: np.ndarray, levels: np.ndarray, kind: str) -> Verdict:
    return Verdict(passed, achieved(levels, kind))


# --- single-attribute models ------------------------------------------------------------------------------


@MODELS.register("distinct-l-diversity")
@dataclass(frozen=True)
class DistinctLDiversity:
    """Distinct l-diversity (docs/models.md §2.2): every block has ``m >= l`` distinct sensitive values;
    achieved ``min m``.

    >>> from veil.counts import NodeCounts, SensitiveDomain
    >>> dom = SensitiveDomain("s", np.array(["a", "b"], dtype=object), np.array([3, 1]))
    >>> nc = NodeCounts.from_cells(("q",), (0,), [[0], [0], [1]], [[0], [1], [0]], np.array([2, 1, 1]), (2,), (dom,))
    >>> v = DistinctLDiversity(l=2, attribute="s").check(nc)
    >>> v.passed.tolist(), v.achieved
    ([True, False], 1.0)
    """

    type: ClassVar[str]  # set by the registration above
    reference: ClassVar[Reference] = Reference(achieved="`min m`", sample={"l": 2, "attribute": "s"})
    l: int
    attribute: str
    where: str = "distinct-l-diversity"

    @classmethod
    def from_params(cls, p: Params) -> DistinctLDiversity:
        """The model of a ``[[models]]`` table."""
        return cls(l=p.integer("l", minimum=1), attribute=p.attribute(), where=p.where)

    def __post_init__(self) -> None:
        _check_l(self.where, self.l, integral=True)

    @property
    def properties(self) -> Properties:
        return Properties(
            True,
            True,
            Needs.HISTOGRAM,
            "a block containing a block with m distinct values has at least m",
            min_block_size=self.l,
            reduction=Reduction(Statistic.DISTINCT, self.attribute, float(self.l)),
        )

    def judge(self, bc: BlockCounts) -> tuple[np.ndarray, np.ndarray]:
        return judge(
            bc,
            self.l,
            Rule.AT_LEAST,
            distinct_level,
            exact_levels=lambda part: [Fraction(int(m)) for m in part.distinct],
        )

    def levels(self, counts: NodeCounts) -> np.ndarray:
        """``m`` per block."""
        return self.judge(counts.blocks(self.attribute))[1]

    def check(self, counts: NodeCounts) -> Verdict:
        return _verdict(*self.judge(counts.blocks(self.attribute)), "min")

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        domain_of(domains, self.attribute, self.where)

    def describe(self) -> str:
        return f"distinct l-diversity (l={self.l}) on {self.attribute}"


@MODELS.register("frequency-l-diversity")
@dataclass(frozen=True)
class FrequencyLDiversity:
    """Frequency (probabilistic) l-diversity (docs/models.md §2.2): ``r1/n(E) <= 1/l``; achieved
    ``min n(E)/r1``.  Exact at the boundary: l = 2.2 on [25, 25, 5] passes (55/25 = 2.2) and reports 2.2.

    >>> from veil.counts import NodeCounts, SensitiveDomain
    >>> dom = SensitiveDomain("s", np.array(["a", "b"], dtype=object), np.array([4, 2]))
    >>> nc = NodeCounts.from_cells(("q",), (0,), [[0], [0], [1], [1]], [[0], [1], [0], [1]], np.array([1, 1, 3, 1]), (2,), (dom,))
    >>> v = FrequencyLDiversity(l=2, attribute="s").check(nc)     # n/r1 = 2/1 and 4/3
    >>> v.passed.tolist(), round(v.achieved, 4)
    ([True, False], 1.3333)
    """

    type: ClassVar[str]  # set by the registration above
    reference: ClassVar[Reference] = Reference(achieved="`min n(E)/r1`", sample={"l": 2, "attribute": "s"})
    l: float
    attribute: str
    where: str = "frequency-l-diversity"

    @classmethod
    def from_params(cls, p: Params) -> FrequencyLDiversity:
        """The model of a ``[[models]]`` table."""
        return cls(l=p.number("l", minimum=1), attribute=p.attribute(), where=p.where)

    def __post_init__(self) -> None:
        _check_l(self.where, self.l, integral=False)

    @property
    def properties(self) -> Properties:
        return Properties(
            True,
            False,
            Needs.HISTOGRAM,
            "not monotone with suppression: l=2, {a,b} passes, merged with the failing {a,a,a} "
            "gives {a×4,b} with r1/n = 4/5 > 1/2",
            min_block_size=math.ceil(rational(self.l)),
        )

    def judge(self, bc: BlockCounts) -> tuple[np.ndarray, np.ndarray]:
        return judge(bc, self.l, Rule.AT_LEAST, frequency_level, exact_levels=frequency_exact)

    def levels(self, counts: NodeCounts) -> np.ndarray:
        """``n(E)/r1`` per block."""
        return self.judge(counts.blocks(self.attribute))[1]

    def check(self, counts: NodeCounts) -> Verdict:
        return _verdict(*self.judge(counts.blocks(self.attribute)), "min")

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        domain_of(domains, self.attribute, self.where)

    def describe(self) -> str:
        return f"frequency l-diversity (l={fmt(self.l)}) on {self.attribute}"


@MODELS.register("entropy-l-diversity")
@dataclass(frozen=True)
class EntropyLDiversity:
    """Entropy l-diversity (docs/models.md §2.2; Machanavajjhala et al. Def. 4.1): ``-sum p ln p >= ln l``;
    achieved ``exp(min entropy)``.  Exact on the knife-edge: ``n^n >= l^n · prod c^c``.

    See the module docstring for the inpatient example (achieved 2.83).  Two blocks {a, b} (entropy ln 2) and
    {a, a, a, b} (``-(¾ ln ¾ + ¼ ln ¼) = 0.5623``): the table is ``exp(0.5623) = 1.75``-diverse.

    >>> from veil.counts import NodeCounts, SensitiveDomain
    >>> dom = SensitiveDomain("s", np.array(["a", "b"], dtype=object), np.array([4, 2]))
    >>> nc = NodeCounts.from_cells(("q",), (0,), [[0], [0], [1], [1]], [[0], [1], [0], [1]], np.array([1, 1, 3, 1]), (2,), (dom,))
    >>> v = EntropyLDiversity(l=2, attribute="s").check(nc)
    >>> v.passed.tolist(), round(v.achieved, 4)
    ([True, False], 1.7548)
    """

    type: ClassVar[str]  # set by the registration above
    reference: ClassVar[Reference] = Reference(achieved="`exp(min entropy)`", sample={"l": 2, "attribute": "s"})
    l: float
    attribute: str
    where: str = "entropy-l-diversity"

    @classmethod
    def from_params(cls, p: Params) -> EntropyLDiversity:
        """The model of a ``[[models]]`` table."""
        return cls(l=p.number("l", minimum=1), attribute=p.attribute(), where=p.where)

    def __post_init__(self) -> None:
        _check_l(self.where, self.l, integral=False)

    @property
    def properties(self) -> Properties:
        return Properties(
            True,
            False,
            Needs.HISTOGRAM,
            "monotone by concavity of entropy (Machanavajjhala et al. Thm 5.2); not with suppression: "
            "l=2, {a,b} merged with the failing {a×10} has entropy 0.29 < ln 2",
            min_block_size=math.ceil(rational(self.l)),
            reduction=Reduction(Statistic.ENTROPY, self.attribute, float(self.l)),
        )

    def judge(self, bc: BlockCounts) -> tuple[np.ndarray, np.ndarray]:
        return judge(bc, self.l, Rule.AT_LEAST, entropy_level, exact_signs=entropy_signs)

    def levels(self, counts: NodeCounts) -> np.ndarray:
        """``exp(entropy)`` per block."""
        return self.judge(counts.blocks(self.attribute))[1]

    def check(self, counts: NodeCounts) -> Verdict:
        return _verdict(*self.judge(counts.blocks(self.attribute)), "min")

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        domain_of(domains, self.attribute, self.where)

    def describe(self) -> str:
        return f"entropy l-diversity (l={fmt(self.l)}) on {self.attribute}"


@MODELS.register("recursive-cl-diversity")
@dataclass(frozen=True)
class RecursiveCLDiversity:
    """Recursive (c,l)-diversity (docs/models.md §2.2; Machanavajjhala et al. Def. 4.2): ``r1 < c·(rl + ... +
    rm)``, strict; ``l = 1`` always holds.  Achieved: the smallest c for this l, ``max r1/(rl+..+rm)`` (``None``
    if some block has ``m < l``); a table passes iff its achieved level is below c.

    >>> from veil.counts import NodeCounts, SensitiveDomain
    >>> dom = SensitiveDomain("s", np.array(["a", "b", "c"], dtype=object), np.array([4, 2, 1]))
    >>> nc = NodeCounts.from_cells(("q",), (0,), [[0], [0], [0]], [[0], [1], [2]], np.array([4, 2, 1]), (1,), (dom,))
    >>> v = RecursiveCLDiversity(c=4, l=2, attribute="s").check(nc)   # 4 < 4·(2+1)
    >>> v.passed.tolist(), round(v.achieved, 4)                       # c* = 4/3
    ([True], 1.3333)
    >>> RecursiveCLDiversity(c=4, l=3, attribute="s").check(nc).passed.tolist()   # 4 < 4·1 fails
    [False]
    """

    type: ClassVar[str]  # set by the registration above
    reference: ClassVar[Reference] = Reference(
        achieved="smallest c: `max r1/(rl+…+rm)`", sample={"c": 3, "l": 2, "attribute": "s"}
    )
    c: float
    l: int
    attribute: str
    where: str = "recursive-cl-diversity"

    @classmethod
    def from_params(cls, p: Params) -> RecursiveCLDiversity:
        """The model of a ``[[models]]`` table."""
        return cls(c=p.number("c", above=0), l=p.integer("l", minimum=1), attribute=p.attribute(), where=p.where)

    def __post_init__(self) -> None:
        number(self.where, "c", self.c, above=0)
        _check_l(self.where, self.l, integral=True)

    @property
    def properties(self) -> Properties:
        return Properties(
            True,
            False,
            Needs.HISTOGRAM,
            "r1 + c·(r1+..+r(l-1)) is subadditive, so merging passing blocks keeps r1 < c·tail; "
            "not with suppression: (2,2), {a,b} merged with the failing {a,a,a} gives 4 < 2·1 false",
            achieved="max",
            min_block_size=self.l,
        )

    def judge(self, bc: BlockCounts) -> tuple[np.ndarray, np.ndarray]:
        return judge(
            bc,
            self.c,
            Rule.BELOW,
            lambda part: recursive_ratio(part, self.l),
            exact_levels=lambda part: recursive_exact(part, self.l),
        )

    def levels(self, counts: NodeCounts) -> np.ndarray:
        """``r1/(rl+..+rm)`` per block (``inf``: m < l; 0 for l = 1)."""
        return self.judge(counts.blocks(self.attribute))[1]

    def check(self, counts: NodeCounts) -> Verdict:
        return _verdict(*self.judge(counts.blocks(self.attribute)), "max")

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        domain_of(domains, self.attribute, self.where)

    def describe(self) -> str:
        return f"recursive (c,l)-diversity (c={fmt(self.c)}, l={self.l}) on {self.attribute}"


@MODELS.register("pd-recursive-cl-diversity")
@dataclass(frozen=True)
class PdRecursiveCLDiversity:
    """Positive-disclosure recursive (c,l)-diversity (docs/models.md §2.3; Machanavajjhala et al. Def. 4.3)
    with allowed set Y.  Achieved: ``max r_y/tail(y)`` over blocks that have a value outside Y (``None`` if
    a tail is empty).

    >>> from veil.counts import NodeCounts, SensitiveDomain
    >>> dom = SensitiveDomain("s", np.array(["healthy", "flu", "hiv"], dtype=object), np.array([10, 2, 1]))
    >>> # one block: healthy 10, flu 2, hiv 1; Y = {healthy}: y = 2 > l-1 = 1, tail = r1 + r3 = 11
    >>> nc = NodeCounts.from_cells(("q",), (0,), [[0], [0], [0]], [[0], [1], [2]], np.array([10, 2, 1]), (1,), (dom,))
    >>> v = PdRecursiveCLDiversity(c=0.5, l=2, allowed=("healthy",), attribute="s").check(nc)
    >>> v.passed.tolist(), round(v.achieved, 4)                     # 2 < 0.5·11; c* = 2/11
    ([True], 0.1818)
    """

    type: ClassVar[str]  # set by the registration above
    reference: ClassVar[Reference] = Reference(
        achieved="smallest c; `allowed` is Y", sample={"c": 3, "l": 2, "allowed": ["flu"], "attribute": "s"}
    )
    c: float
    l: int
    allowed: tuple[str, ...]
    attribute: str
    where: str = "pd-recursive-cl-diversity"

    @classmethod
    def from_params(cls, p: Params) -> PdRecursiveCLDiversity:
        """The model of a ``[[models]]`` table."""
        return cls(
            c=p.number("c", above=0),
            l=p.integer("l", minimum=1),
            allowed=p.strings("allowed"),
            attribute=p.attribute(),
            where=p.where,
        )

    def __post_init__(self) -> None:
        number(self.where, "c", self.c, above=0)
        _check_l(self.where, self.l, integral=True)

    @property
    def properties(self) -> Properties:
        return Properties(
            True,
            False,
            Needs.HISTOGRAM,
            "holds iff r_v·(1+c) + c·(l-2 largest other counts) < c·n for every v outside Y, a "
            "subadditive condition; not with suppression (as recursive (c,l))",
            achieved="max",
        )

    def judge(self, bc: BlockCounts) -> tuple[np.ndarray, np.ndarray]:
        allowed = match_values(bc.domain, self.allowed, self.where, "allowed")
        return judge(
            bc,
            self.c,
            Rule.BELOW,
            lambda part: pd_ratio(part, self.l, allowed),
            exact_levels=lambda part: pd_exact(part, self.l, allowed),
        )

    def levels(self, counts: NodeCounts) -> np.ndarray:
        """``r_y/tail(y)`` per block (0: no value outside Y; ``inf``: empty tail)."""
        return self.judge(counts.blocks(self.attribute))[1]

    def check(self, counts: NodeCounts) -> Verdict:
        return _verdict(*self.judge(counts.blocks(self.attribute)), "max")

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        match_values(domain_of(domains, self.attribute, self.where), self.allowed, self.where, "allowed")

    def describe(self) -> str:
        return (
            f"pd-recursive (c,l)-diversity (c={fmt(self.c)}, l={self.l}, allowed={list(self.allowed)}) "
            f"on {self.attribute}"
        )


@MODELS.register("npd-recursive-cl-diversity")
@dataclass(frozen=True)
class NpdRecursiveCLDiversity:
    """Negative/positive-disclosure recursive (c1,c2,l)-diversity (docs/models.md §2.3; Machanavajjhala et al.
    Def. 4.4): pd-recursive (c1,l) and every protected ``w`` has ``n(E,w)/n(E) >= c2/100``.  A block's level is
    its pd-recursive ``c1*``, ``inf`` if it misses a c2 requirement (so the table's is ``None``).

    >>> from veil.counts import NodeCounts, SensitiveDomain
    >>> dom = SensitiveDomain("s", np.array(["a", "b", "c"], dtype=object), np.array([5, 3, 2]))
    >>> hist = np.array([[3, 1, 1], [2, 2, 1]])
    >>> b, v = np.nonzero(hist)
    >>> nc = NodeCounts.from_cells(("q",), (0,), b[:, None], v[:, None], hist[b, v], (2,), (dom,))
    >>> m = NpdRecursiveCLDiversity(c1=2, c2=25, l=2, allowed=(), protected=("b",), attribute="s")
    >>> m.check(nc).passed.tolist()          # b is 1/5 = 20% < 25% in block 0; 2/5 in block 1
    [False, True]
    """

    type: ClassVar[str]  # set by the registration above
    reference: ClassVar[Reference] = Reference(
        achieved=("smallest c1 (null if a W-share fails); `c2` in percent, `allowed` is Y, `protected` is W"),
        sample={"c1": 3, "c2": 10, "l": 2, "allowed": ["flu"], "protected": ["cancer"], "attribute": "s"},
    )
    c1: float
    c2: float
    l: int
    allowed: tuple[str, ...]
    protected: tuple[str, ...]
    attribute: str
    where: str = "npd-recursive-cl-diversity"

    @classmethod
    def from_params(cls, p: Params) -> NpdRecursiveCLDiversity:
        """The model of a ``[[models]]`` table."""
        return cls(
            c1=p.number("c1", above=0),
            c2=p.number("c2", minimum=0, maximum=100),
            l=p.integer("l", minimum=1),
            allowed=p.strings("allowed", default=()),
            protected=p.strings("protected"),
            attribute=p.attribute(),
            where=p.where,
        )

    def __post_init__(self) -> None:
        number(self.where, "c1", self.c1, above=0)
        number(self.where, "c2", self.c2, minimum=0, maximum=100)
        _check_l(self.where, self.l, integral=True)

    @property
    def properties(self) -> Properties:
        # c2 > 0 needs every protected value in the block: at least |W| rows
        return Properties(
            True,
            False,
            Needs.HISTOGRAM,
            "pd-recursive part as pd-recursive; the c2 part is linear in the counts (Machanavajjhala "
            "et al. Thm 5.3); not with suppression: c2=50, {w,a} merged with {a,a} has w at 25%",
            achieved="max",
            min_block_size=max(1, len(set(self.protected))) if self.c2 > 0 else 1,
        )

    def judge(self, bc: BlockCounts) -> tuple[np.ndarray, np.ndarray]:
        allowed = match_values(bc.domain, self.allowed, self.where, "allowed")
        w = match_values(bc.domain, self.protected, self.where, "protected")
        pd_ok, ratio = judge(
            bc,
            self.c1,
            Rule.BELOW,
            lambda part: pd_ratio(part, self.l, allowed),
            exact_levels=lambda part: pd_exact(part, self.l, allowed),
        )
        enough, _ = judge(
            bc,
            self.c2,
            Rule.AT_LEAST,
            lambda part: share_level(part, w),
            exact_levels=lambda part: share_exact(part, w),
        )
        return pd_ok & enough, np.where(enough, ratio, INF)

    def levels(self, counts: NodeCounts) -> np.ndarray:
        """pd-recursive ``c1*`` per block, ``inf`` where a protected value is below c2%."""
        return self.judge(counts.blocks(self.attribute))[1]

    def check(self, counts: NodeCounts) -> Verdict:
        return _verdict(*self.judge(counts.blocks(self.attribute)), "max")

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        dom = domain_of(domains, self.attribute, self.where)
        match_values(dom, self.allowed, self.where, "allowed")
        match_values(dom, self.protected, self.where, "protected")

    def describe(self) -> str:
        return (
            f"npd-recursive (c1,c2,l)-diversity (c1={fmt(self.c1)}, c2={fmt(self.c2)}%, l={self.l}, "
            f"allowed={list(self.allowed)}, protected={list(self.protected)}) on {self.attribute}"
        )


# --- multi-attribute ------------------------------------------------------------------------------------------

INSTANTIATIONS = ("distinct", "frequency", "entropy", "recursive")


@MODELS.register("multi-attribute-l-diversity")
@dataclass(frozen=True)
class MultiAttributeLDiversity:
    """Multi-attribute l-diversity (docs/models.md §2.4; Machanavajjhala et al. Def. 4.5): for every sensitive
    ``Si``, the instantiation holds with ``Si`` the sole sensitive attribute and ``Q ∪ (S \\ {Si})`` the key.  A
    q*-block passes iff all its sub-blocks pass for every attribute; its level is the worst of its sub-blocks'
    (min l; max c for recursive), and the table's the worst of the blocks'.

    Machanavajjhala et al. §4.3's block {(s1,v1), (s1,v2), (s2,v3), (s3,v3)} is distinct 3-diverse in S alone
    (and in V alone), but with V in the key the sub-block V=v1 holds only s1 (and with S in the key, S=s2
    holds only v3): multi-attribute it is not even 2-diverse.

    >>> from veil.counts import NodeCounts, SensitiveDomain
    >>> S = SensitiveDomain("S", np.array(["s1", "s2", "s3"], dtype=object), np.array([2, 1, 1]))
    >>> V = SensitiveDomain("V", np.array(["v1", "v2", "v3"], dtype=object), np.array([1, 1, 2]))
    >>> nc = NodeCounts.from_cells(("q",), (0,), np.zeros((4, 1)), np.array([[0, 0], [0, 1], [1, 2], [2, 2]]),
    ...                            np.ones(4, dtype=np.int64), (1,), (S, V))
    >>> DistinctLDiversity(l=3, attribute="S").check(nc).passed.tolist()
    [True]
    >>> MultiAttributeLDiversity(instantiation="distinct", l=3).check(nc).achieved
    1.0
    """

    type: ClassVar[str]  # set by the registration above
    reference: ClassVar[Reference] = Reference(
        achieved="over all sub-blocks; `c` for the recursive instantiation",
        sample={"instantiation": "recursive", "l": 2, "c": 3},
    )
    instantiation: str
    l: float
    c: float | None = None
    where: str = "multi-attribute-l-diversity"

    @classmethod
    def from_params(cls, p: Params) -> MultiAttributeLDiversity:
        """The model of a ``[[models]]`` table."""
        inst = p.text("instantiation", choices=INSTANTIATIONS)
        l: float = p.integer("l", minimum=1) if inst in ("distinct", "recursive") else p.number("l", minimum=1)
        c = p.number("c", above=0) if p.has("c") else None
        return cls(instantiation=inst, l=l, c=c, where=p.where)

    def __post_init__(self) -> None:
        if self.instantiation not in INSTANTIATIONS:
            raise fail(
                self.where,
                "instantiation",
                f"must be one of {', '.join(map(repr, INSTANTIATIONS))}, got {self.instantiation!r}",
            )
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
    def _kind(self) -> str:
        return "max" if self.instantiation == "recursive" else "min"

    @property
    def properties(self) -> Properties:
        return Properties(
            True,
            False,
            Needs.JOINT,
            "merging two q*-blocks merges their sub-blocks pairwise (a missing one counts as "
            "empty), so it inherits the instantiation's monotonicity; not with suppression even "
            "for distinct: l=2, {(a,p),(a,q),(b,p),(b,q)} merged with {(c,r)} has the sub-block "
            "V=r holding only S=c",
            achieved=self._kind,
            min_block_size=math.ceil(rational(self.l)),
        )  # a sub-block is no larger than its block

    def sub_judge(self, bc: BlockCounts) -> tuple[np.ndarray, np.ndarray]:
        """(passed, level) per sub-block for the instantiation."""
        if self.instantiation == "distinct":
            return DistinctLDiversity(int(self.l), "", self.where).judge(bc)
        if self.instantiation == "frequency":
            return FrequencyLDiversity(self.l, "", self.where).judge(bc)
        if self.instantiation == "entropy":
            return EntropyLDiversity(self.l, "", self.where).judge(bc)
        return RecursiveCLDiversity(self.c, int(self.l), "", self.where).judge(bc)  # type: ignore[arg-type]

    def judge(self, counts: NodeCounts) -> tuple[np.ndarray, np.ndarray]:
        passed = np.ones(counts.n_blocks, dtype=bool)
        worst = np.full(counts.n_blocks, INF if self._kind == "min" else 0.0)
        for dom in counts.sensitive:
            bc, parent = counts.sub_blocks(dom.name)
            ok, lv = self.sub_judge(bc)
            passed &= np.bincount(parent[~ok], minlength=counts.n_blocks) == 0
            mine = _by_parent(lv, parent, counts.n_blocks, self._kind)
            worst = np.minimum(worst, mine) if self._kind == "min" else np.maximum(worst, mine)
        return passed, worst

    def levels(self, counts: NodeCounts) -> np.ndarray:
        """Per q*-block, the worst level of its sub-blocks over every sensitive attribute."""
        return self.judge(counts)[1]

    def check(self, counts: NodeCounts) -> Verdict:
        return _verdict(*self.judge(counts), self._kind)

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        if not domains:
            raise ConfigError(f"{self.where}: needs at least one sensitive column")

    def describe(self) -> str:
        c = f", c={fmt(self.c)}" if self.c is not None else ""
        return f"multi-attribute {self.instantiation} l-diversity (l={fmt(self.l)}{c}) on all sensitive columns"
