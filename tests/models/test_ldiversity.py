"""Hand-computed tests of the l-diversity family (Machanavajjhala et al., ICDE 2006; docs/models.md §2.2, §2.3)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from veil.errors import ConfigError
from veil.models.kanonymity import KAnonymity
from veil.models.ldiversity import (
    DistinctLDiversity,
    EntropyLDiversity,
    FrequencyLDiversity,
    MultiAttributeLDiversity,
    NpdRecursiveCLDiversity,
    PdRecursiveCLDiversity,
    RecursiveCLDiversity,
    entropy,
    pd_ratio,
    recursive_ratio,
)
from tests.models.modeltest_lib import PROPERTY, domain, hist, joint_nodes, nodes

# the l-diversity paper's inpatient data (Figure 1).  Condition values sorted: cancer, heart, viral.
CONDITIONS = ["Cancer", "Heart Disease", "Viral Infection"]
# Figure 2 (4-anonymous): {HD,HD,VI,VI}, {C,HD,VI,VI}, {C,C,C,C}
FIG2 = [[0, 2, 2], [1, 1, 2], [4, 0, 0]]
# Figure 3 (3-diverse): {HD,VI,C,C}, {C,HD,VI,VI}, {HD,VI,C,C}
FIG3 = [[2, 1, 1], [1, 1, 2], [2, 1, 1]]
TOTAL = [5, 3, 4]  # 12 patients: cancer 5, heart 3, viral 4 (the same table, either generalization)


def fig(hists):
    return nodes(hists, domain("condition", CONDITIONS, TOTAL, numeric=False))


def test_figure2_is_4_anonymous_but_not_diverse():
    nc = fig(FIG2)
    assert KAnonymity(k=4).check(nc).achieved == 4.0
    # block 3 is all cancer: one distinct value, entropy 0, r1/n = 1
    assert DistinctLDiversity(l=2, attribute="condition").check(nc).passed.tolist() == [True, True, False]
    assert DistinctLDiversity(l=2, attribute="condition").check(nc).achieved == 1.0
    assert EntropyLDiversity(l=2, attribute="condition").check(nc).achieved == 1.0  # exp(0)
    assert FrequencyLDiversity(l=2, attribute="condition").check(nc).achieved == 1.0  # 4/4
    # recursive (c,2): block 3 has m = 1 < 2, an empty tail: no c works
    v = RecursiveCLDiversity(c=10, l=2, attribute="condition").check(nc)
    assert v.passed.tolist() == [True, True, False] and v.achieved is None


def test_figure3_entropy_is_2_8_diverse():
    nc = fig(FIG3)
    # each block: p = (1/2, 1/4, 1/4): H = 1/2 ln 2 + 2 · 1/4 ln 4 = 1.5 ln 2 = 1.0397
    h = entropy(hist(FIG3))
    assert np.allclose(h, 1.5 * math.log(2))
    assert round(float(h[0]), 4) == 1.0397
    v = EntropyLDiversity(l=2.8, attribute="condition").check(nc)
    assert v.passed.all()
    assert v.achieved == pytest.approx(2**1.5)  # exp(1.5 ln 2) = 2.828..., "2.8-diverse"
    assert round(v.achieved, 1) == 2.8
    assert not EntropyLDiversity(l=2.83, attribute="condition").check(nc).passed.any()
    assert EntropyLDiversity(l=2.82, attribute="condition").check(nc).passed.all()


def test_figure3_other_instantiations():
    nc = fig(FIG3)
    assert DistinctLDiversity(l=3, attribute="condition").check(nc).passed.all()
    assert DistinctLDiversity(l=3, attribute="condition").check(nc).achieved == 3.0
    assert FrequencyLDiversity(l=2, attribute="condition").check(nc).achieved == 2.0  # 4 / r1 = 4/2
    assert not FrequencyLDiversity(l=2.01, attribute="condition").check(nc).passed.any()
    # recursive (c,2): r1/(r2+r3) = 2/(1+1) = 1 in every block: c* = 1, strict so c = 1 fails
    assert RecursiveCLDiversity(c=1, l=2, attribute="condition").check(nc).achieved == 1.0
    assert not RecursiveCLDiversity(c=1, l=2, attribute="condition").check(nc).passed.any()
    assert RecursiveCLDiversity(c=1.001, l=2, attribute="condition").check(nc).passed.all()
    # recursive (c,3): r1/r3 = 2/1 = 2
    assert RecursiveCLDiversity(c=3, l=3, attribute="condition").check(nc).achieved == 2.0
    assert RecursiveCLDiversity(c=3, l=3, attribute="condition").check(nc).passed.all()


def test_uniform_block_is_exactly_l_diverse():
    # 3 values once each: entropy ln 3 exactly; must pass l = 3 despite rounding in -sum p ln p
    nc = nodes([[1, 1, 1], [5, 5, 5]], domain("s", ["a", "b", "c"], [6, 6, 6], numeric=False))
    v = EntropyLDiversity(l=3, attribute="s").check(nc)
    assert v.passed.all() and v.achieved == pytest.approx(3.0)
    assert not EntropyLDiversity(l=3.0001, attribute="s").check(nc).passed.any()


def test_recursive_l1_always_holds():
    nc = nodes([[7, 0], [1, 1]], domain("s", ["a", "b"], [8, 1], numeric=False))
    v = RecursiveCLDiversity(c=0.01, l=1, attribute="s").check(nc)
    assert v.passed.all() and v.achieved == 0.0


def test_recursive_paper_4_3_example_is_not_recursive_2_3():
    # the l-diversity paper's §4.3 calls S = {s1, s1, s2, s3} "recursive (2,3)-diverse"; with the strict inequality
    # r1 < c·r3 that is 2 < 2·1: false.  c* = 2/1 = 2.
    nc = nodes([[2, 1, 1]], domain("S", ["s1", "s2", "s3"], [2, 1, 1], numeric=False))
    assert not RecursiveCLDiversity(c=2, l=3, attribute="S").check(nc).passed[0]
    assert RecursiveCLDiversity(c=2, l=3, attribute="S").check(nc).achieved == 2.0
    assert RecursiveCLDiversity(c=2.5, l=3, attribute="S").check(nc).passed[0]


def test_recursive_ratio_by_hand():
    # [5, 3, 2, 1]: l=2: 5/(3+2+1) = 5/6; l=3: 5/(2+1) = 5/3; l=4: 5/1; l=5: m = 4 < 5: inf
    counts = hist([[1, 5, 2, 3]])
    assert recursive_ratio(counts, 2)[0] == pytest.approx(5 / 6)
    assert recursive_ratio(counts, 3)[0] == pytest.approx(5 / 3)
    assert recursive_ratio(counts, 4)[0] == 5.0
    assert recursive_ratio(counts, 5)[0] == math.inf


# --- pd / npd -----------------------------------------------------------------------------------------------

VALS = ["a", "b", "c", "d"]


def pd_nc(hists):
    return nodes(hists, domain("s", VALS, np.asarray(hists).sum(axis=0), numeric=False))


def test_pd_no_value_outside_y_always_holds():
    # only allowed values a, b occur: holds whatever c, l
    nc = pd_nc([[9, 1, 0, 0]])
    v = PdRecursiveCLDiversity(c=0.01, l=3, allowed=("a", "b"), attribute="s").check(nc)
    assert v.passed.tolist() == [True] and v.achieved == 0.0


def test_pd_y_within_first_l_minus_1():
    # counts a=5, b=3, c=1, d=1; Y = {b}; y = rank of a = 1 <= l-1 = 2 (l = 3)
    # tail = r3 + r4 = 1 + 1 = 2: holds iff 5 < 2c: c* = 2.5
    nc = pd_nc([[5, 3, 1, 1]])
    m = PdRecursiveCLDiversity(c=2.5, l=3, allowed=("b",), attribute="s")
    assert m.check(nc).achieved == 2.5
    assert not m.check(nc).passed[0]
    assert PdRecursiveCLDiversity(c=2.6, l=3, allowed=("b",), attribute="s").check(nc).passed[0]


def test_pd_y_beyond_l_minus_1():
    # counts a=6, b=4, c=3, d=1; Y = {a, b}; y = rank of c = 3 > l-1 = 1 (l = 2)
    # tail = sum_{j=l-1..y-1} r_j + sum_{j>y} r_j = (r1 + r2) + r4 = 6 + 4 + 1 = 11: c* = 3/11
    nc = pd_nc([[6, 4, 3, 1]])
    v = PdRecursiveCLDiversity(c=0.3, l=2, allowed=("a", "b"), attribute="s").check(nc)
    assert v.passed[0] and v.achieved == pytest.approx(3 / 11)
    assert pd_ratio(hist([[6, 4, 3, 1]]), 2, np.array([0, 1]))[0] == pytest.approx(3 / 11)
    # l = 3: y = 3 > 2: tail = r2 + r4 = 4 + 1 = 5: c* = 3/5
    assert PdRecursiveCLDiversity(c=1, l=3, allowed=("a", "b"), attribute="s").check(nc).achieved == 0.6


def test_pd_ties_do_not_matter():
    # a=5 (Y), b=2 (Y), c=2 (not Y), d=1; l=3.  Sorted 5,2,2,1.
    # c at rank 2 (y=2 <= 2): tail = r3 + r4 = 2 + 1 = 3.  c at rank 3 (y=3 > 2): tail = r2 + r4 = 2 + 1 = 3.
    nc = pd_nc([[5, 2, 2, 1]])
    assert PdRecursiveCLDiversity(c=1, l=3, allowed=("a", "b"), attribute="s").check(nc).achieved == pytest.approx(
        2 / 3
    )


def test_pd_with_empty_y_is_recursive():
    nc = pd_nc([[5, 3, 1, 1], [2, 2, 2, 0]])
    for l in (1, 2, 3, 4):
        pd = PdRecursiveCLDiversity(c=2, l=l, allowed=(), attribute="s").check(nc)
        rc = RecursiveCLDiversity(c=2, l=l, attribute="s").check(nc)
        assert pd.passed.tolist() == rc.passed.tolist() and pd.achieved == rc.achieved


def _pd_literal(counts, l, allowed, c):
    """docs/models.md §2.3 read literally, for every order of ties; returns the set of verdicts over tie orders."""
    present = [(n, i) for i, n in enumerate(counts) if n > 0]
    if l <= 1:
        return {True}
    outcomes = set()
    # every descending order consistent with the counts (permute within ties)
    groups = itertools.groupby(sorted(present, key=lambda t: -t[0]), key=lambda t: t[0])
    tiers = [list(g) for _, g in groups]
    for combo in itertools.product(*[list(itertools.permutations(t)) for t in tiers]):
        order = [x for tier in combo for x in tier]
        r = [n for n, _ in order]
        m = len(r)
        ys = [k for k, (_, i) in enumerate(order, start=1) if i not in allowed]
        if not ys:
            outcomes.add(True)
            continue
        y = ys[0]
        ry = r[y - 1]
        if y <= l - 1:
            tail = sum(r[j - 1] for j in range(l, m + 1))
        else:
            tail = sum(r[j - 1] for j in range(l - 1, y)) + sum(r[j - 1] for j in range(y + 1, m + 1))
        outcomes.add(ry < c * tail)
    return outcomes


@PROPERTY
@given(
    st.lists(st.integers(0, 4), min_size=4, max_size=4).filter(any),
    st.sets(st.integers(0, 3)),
    st.integers(1, 5),
    st.sampled_from([0.3, 0.5, 1, 1.5, 2, 3]),
)
def test_pd_matches_literal_definition(counts, allowed, l, c):
    nc = pd_nc([counts])
    names = tuple(VALS[i] for i in sorted(allowed))
    got = PdRecursiveCLDiversity(c=c, l=l, allowed=names, attribute="s").check(nc).passed[0]
    lit = _pd_literal(counts, l, allowed, c)
    assert lit == {bool(got)}  # one verdict whatever the tie order, and it is ours


def test_npd_c2_requirement_and_achieved():
    # block 0: a=3, b=1, c=1 (b at 1/5 = 20%); block 1: a=2, b=2, c=1 (b at 40%)
    nc = pd_nc([[3, 1, 1, 0], [2, 2, 1, 0]])
    m = NpdRecursiveCLDiversity(c1=2, c2=25, l=2, allowed=(), protected=("b",), attribute="s")
    v = m.check(nc)
    # pd part: 3 < 2·(1+1) and 2 < 2·(2+1) both hold; block 0 misses b >= 25%
    assert v.passed.tolist() == [False, True]
    assert v.achieved is None  # a block misses c2: no c1 makes the table pass
    ok = NpdRecursiveCLDiversity(c1=2, c2=20, l=2, allowed=(), protected=("b",), attribute="s").check(nc)
    # c2 = 20%: 100·1 >= 20·5 holds (boundary); c1* = max(3/2, 2/3) = 1.5
    assert ok.passed.all() and ok.achieved == 1.5
    # pd part fails with c1 = 1.5 (3 < 1.5·2 false)
    assert NpdRecursiveCLDiversity(c1=1.5, c2=20, l=2, allowed=(), protected=("b",), attribute="s").check(
        nc
    ).passed.tolist() == [False, True]


def test_npd_protected_value_absent_fails():
    nc = pd_nc([[3, 1, 1, 0]])
    v = NpdRecursiveCLDiversity(c1=5, c2=1, l=2, allowed=(), protected=("d",), attribute="s").check(nc)
    assert v.passed.tolist() == [False]


def test_unknown_values_are_config_errors():
    nc = pd_nc([[3, 1, 1, 0]])
    with pytest.raises(ConfigError, match=r"parameter 'allowed'.*'zzz'"):
        PdRecursiveCLDiversity(c=1, l=2, allowed=("zzz",), attribute="s").check(nc)
    with pytest.raises(ConfigError, match=r"parameter 'protected'"):
        NpdRecursiveCLDiversity(c1=1, c2=5, l=2, allowed=(), protected=("q",), attribute="s").validate(
            {"s": nc.sensitive[0]}
        )


def test_numeric_values_match_config_strings():
    # numeric domain: "3" in the config names 3; "3.0" too
    nc = nodes([[4, 1, 1]], domain("n", [1, 3, 5], [4, 1, 1]))
    a = PdRecursiveCLDiversity(c=1, l=2, allowed=("1",), attribute="n").check(nc)
    b = PdRecursiveCLDiversity(c=1, l=2, allowed=("1.0",), attribute="n").check(nc)
    # Y = {1}: y = rank of 3 = 2 > 1: tail = r1 + r3 = 4 + 1 = 5: 1 < 5
    assert a.passed[0] and b.passed[0] and a.achieved == 0.2


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: DistinctLDiversity(l=0, attribute="s"), r"'l' must be >= 1"),
        (lambda: DistinctLDiversity(l=2.5, attribute="s"), r"'l' must be a whole number"),
        (lambda: FrequencyLDiversity(l=0.5, attribute="s"), r"'l' must be >= 1"),
        (lambda: EntropyLDiversity(l=-1, attribute="s"), r"'l' must be >= 1"),
        (lambda: RecursiveCLDiversity(c=0, l=2, attribute="s"), r"'c' must be > 0"),
        (
            lambda: NpdRecursiveCLDiversity(c1=1, c2=120, l=2, allowed=(), protected=(), attribute="s"),
            r"'c2' must be <= 100",
        ),
        (lambda: MultiAttributeLDiversity(instantiation="recursive", l=2), r"missing required parameter 'c'"),
        (lambda: MultiAttributeLDiversity(instantiation="entropy", l=2, c=3), r"'c' only applies"),
        (lambda: MultiAttributeLDiversity(instantiation="bogus", l=2), r"'instantiation' must be one of"),
    ],
)
def test_invalid_parameters(make, match):
    with pytest.raises(ConfigError, match=match):
        make()


# --- multi-attribute ----------------------------------------------------------------------------------------


def _sv():
    s = domain("S", ["s1", "s2", "s3"], [2, 1, 1], numeric=False)
    v = domain("V", ["v1", "v2", "v3"], [1, 1, 2], numeric=False)
    return s, v


def test_multi_attribute_paper_example():
    # the l-diversity paper's §4.3: {(s1,v1), (s1,v2), (s2,v3), (s3,v3)}.  S alone: {s1,s1,s2,s3}, 3 distinct; V alone 3.
    # S with V in the key: V=v1 {s1}, V=v2 {s1}, V=v3 {s2,s3};  V with S in the key: s1 {v1,v2}, s2 {v3}, s3 {v3}
    s, v = _sv()
    j = np.zeros((1, 3, 3), dtype=np.int64)
    j[0, 0, 0] = j[0, 0, 1] = j[0, 1, 2] = j[0, 2, 2] = 1
    nc = joint_nodes(j, (s, v))
    assert DistinctLDiversity(l=3, attribute="S").check(nc).passed[0]
    assert DistinctLDiversity(l=3, attribute="V").check(nc).passed[0]
    m = MultiAttributeLDiversity(instantiation="distinct", l=2).check(nc)
    assert m.passed.tolist() == [False] and m.achieved == 1.0
    # entropy instantiation: min over sub-blocks of exp(H) = exp(0) = 1
    assert MultiAttributeLDiversity(instantiation="entropy", l=1).check(nc).achieved == 1.0


def test_multi_attribute_two_blocks_by_hand():
    # block 0: (s1,v1) (s2,v1) (s1,v2) (s2,v2): every sub-block has 2 distinct values, each once
    # block 1: (s1,v1)×2 (s2,v1)×1 (s3,v1)×1: S given v1 = {2,1,1} (H = 1.5 ln 2); V given s1 = {v1} only
    s, v = _sv()
    j = np.zeros((2, 3, 3), dtype=np.int64)
    j[0, 0, 0] = j[0, 1, 0] = j[0, 0, 1] = j[0, 1, 1] = 1
    j[1, 0, 0], j[1, 1, 0], j[1, 2, 0] = 2, 1, 1
    nc = joint_nodes(j, (s, v))
    d = MultiAttributeLDiversity(instantiation="distinct", l=2).check(nc)
    assert d.passed.tolist() == [True, False] and d.achieved == 1.0
    # frequency: sub-block S|v1 in block 1 has n/r1 = 4/2 = 2; V|s1 there is {v1×2}: 1
    f = MultiAttributeLDiversity(instantiation="frequency", l=2).check(nc)
    assert f.passed.tolist() == [True, False] and f.achieved == 1.0
    # recursive (c=1.5, l=2): block 0 sub-blocks {1,1}: 1/1 = 1 < 1.5; block 1 V|s1 = {2}: empty tail
    r = MultiAttributeLDiversity(instantiation="recursive", l=2, c=1.5).check(nc)
    assert r.passed.tolist() == [True, False] and r.achieved is None
    # only block 0: c* = 1
    nc0 = joint_nodes(j[:1], (s, v))
    assert MultiAttributeLDiversity(instantiation="recursive", l=2, c=1.5).check(nc0).achieved == 1.0
    assert MultiAttributeLDiversity(instantiation="entropy", l=2).check(nc0).achieved == pytest.approx(2.0)


def test_multi_attribute_single_sensitive_equals_plain():
    nc = fig(FIG3)
    assert MultiAttributeLDiversity(instantiation="entropy", l=2.8).check(nc).achieved == pytest.approx(2**1.5)
    assert MultiAttributeLDiversity(instantiation="recursive", l=3, c=3).check(nc).achieved == 2.0


def test_empty_node_has_no_level():
    nc = nodes(np.zeros((0, 3), dtype=np.int64), domain("s", ["a", "b", "c"], [1, 1, 1], numeric=False))
    for m in (
        DistinctLDiversity(l=2, attribute="s"),
        EntropyLDiversity(l=2, attribute="s"),
        RecursiveCLDiversity(c=2, l=2, attribute="s"),
    ):
        v = m.check(nc)
        assert v.passed.shape == (0,) and v.achieved is None
