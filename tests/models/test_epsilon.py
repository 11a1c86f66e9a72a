"""Hand-computed tests of ε-privacy (Machanavajjhala, Gehrke, Götz, VLDB 2009, Theorems 1-4; docs/models.md §5)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from veil.errors import ConfigError
from veil.models.epsilon import EpsilonPrivacy, posteriors
from tests.models import oracle
from tests.models.modeltest_lib import PROPERTY, domain, nodes

# the ε-privacy paper's Table 3 over (cancer, flu): (<40,M) 300/200, (>=40,M) 2700/1800, (>=40,F) 2000/18000
TABLE3 = [[300, 200], [2700, 1800], [2000, 18000]]


def table3(hists=TABLE3):
    return nodes(hists, domain("disease", ["cancer", "flu"], np.asarray(TABLE3).sum(axis=0), numeric=False))


def eps(**kw):
    return EpsilonPrivacy(attribute="disease", **{"epsilon": 2.0, **kw})


def test_spec_example_class_ii_sigma_1000():
    # b = 0, σ = 1000.  R1: ε >= 1 + σ/n(q): 1 + 1000/500 = 3, 1 + 1000/4500 = 1.222, 1 + 1000/20000 = 1.05.
    # R2 (x = top share): ε >= (σ/(1-x) + n)/(σ - 1 + n):
    #   (<40,M) x = .6: (2500 + 500)/1499 = 2.0013;  (>=40,M) x = .6: (2500 + 4500)/5499 = 1.2730;
    #   (>=40,F) x = .9: (10000 + 20000)/20999 = 1.4286.   Table: max = 3.
    m = eps(epsilon=3, adversary="II", stubbornness=1000)
    v = m.check(table3())
    assert v.achieved == pytest.approx(3.0, rel=1e-6)
    assert v.passed.all()  # 3-private (R1 with equality on the 500-row block)
    assert m.levels(table3()) == pytest.approx([3.0, max(1 + 1000 / 4500, 7000 / 5499), max(1.05, 30000 / 20999)])
    below = eps(epsilon=2.999, adversary="II", stubbornness=1000).check(table3())
    assert below.passed.tolist() == [False, True, True]  # and not less


def test_spec_example_class_ii_sigma_30000():
    # R1 on the 500-row block: 1 + 30000/500 = 61; elsewhere less (1 + 30000/4500 = 7.67; the F block's R2:
    # (30000/0.1 + 20000)/(29999 + 20000) = 6.4001).
    v = eps(epsilon=61, adversary="II", stubbornness=30000).check(table3())
    assert v.achieved == pytest.approx(61.0, rel=1e-6)
    assert v.passed.all()
    assert eps(epsilon=60.9, adversary="II", stubbornness=30000).check(table3()).passed.tolist() == [False, True, True]


def test_example_3_female_block_classes_i_ii_iii():
    # the ε-privacy paper's Example 3: Rachel's block (>=40,F) flu 18000, cancer 2000; b = 0.  The paper: "4-, 6.4-, 6- and no
    # privacy against class I, II, III and IV".
    nc = table3([TABLE3[2]])
    # class I, prior D(flu 12000, cancer 18000), σ = 30000.  u = n/σ = 2/3, a = 1 - 1/σ + u = 49999/30000.
    # flu: x = .9, k = (12000-1)/30000.  R1(a): 1 + σ/n = 2.5.  R2: ((1-k)/(1-x) + u)/a
    #   = (18001/3000 + 20000/30000)/(49999/30000) = (180010 + 20000)/49999 = 200010/49999 = 4.00028
    # cancer: x = .1: R2 = ((1 - 17999/30000)/.9 + u)/a = 1.0668; so ε* = 200010/49999.
    c1 = eps(epsilon=4.001, adversary="I", prior=(("flu", 12000), ("cancer", 18000))).check(nc)
    assert c1.achieved == pytest.approx(200010 / 49999, rel=1e-9) and c1.passed.all()
    assert not eps(epsilon=4.0002, adversary="I", prior=(("flu", 12000), ("cancer", 18000))).check(nc).passed[0]
    # class II, σ = 30000: R1 2.5; R2 (30000/0.1 + 20000)/(29999 + 20000) = 320000/49999 = 6.40013
    assert eps(epsilon=7, adversary="II", stubbornness=30000).check(nc).achieved == pytest.approx(320000 / 49999)
    # class III, shape (.4, .6) for (flu, cancer): flu R1 .9/.4 = 2.25, R2 (1-.4)/(1-.9) = 6; cancer .1/.6, .4/.9
    c3 = eps(epsilon=6, adversary="III", prior=(("flu", 0.4), ("cancer", 0.6))).check(nc)
    assert c3.achieved == pytest.approx(6.0) and c3.passed.all()
    # class IV: never private
    c4 = eps(epsilon=1000, adversary="IV").check(nc)
    assert c4.passed.tolist() == [False] and c4.achieved is None


def test_theorem_1_example_claim_is_wrong():
    """The ε-privacy paper says Table 3 "satisfies 2.5-privacy" against the class I prior D(12000, 18000) because the
    female block meets R1(a) (20000 >= 30000/1.5) and R2.  R2 fails there: ε' = 2.5(1 - 1/30000) = 2.49992,
    δ = 1.5·20000/30000 = 1, bound = 1 - (1 - 11999/30000)/3.49992 = 0.82856 < x(flu) = 0.9.  The paper's own
    Example 3 puts this block at ε = 4 (above)."""
    m = eps(epsilon=2.5, adversary="I", prior=(("flu", 12000), ("cancer", 18000)))
    v = m.check(table3())
    assert v.passed.tolist() == [True, True, False]
    assert v.achieved == pytest.approx(200010 / 49999)


def test_class_i_shapes_scaled_by_stubbornness():
    # prior "table" with σ = 30000: table shares cancer 5000/25000 = .2, flu .8 -> σ(cancer) 6000, σ(flu) 24000
    a = eps(epsilon=3, adversary="I", prior="table", stubbornness=30000).check(table3())
    b = eps(epsilon=3, adversary="I", prior=(("cancer", 6000), ("flu", 24000))).check(table3())
    assert a.passed.tolist() == b.passed.tolist() and a.achieved == pytest.approx(b.achieved)
    u = eps(epsilon=3, adversary="I", prior="uniform", stubbornness=30000).check(table3())
    w = eps(epsilon=3, adversary="I", prior=(("cancer", 15000), ("flu", 15000))).check(table3())
    assert u.achieved == pytest.approx(w.achieved)


def test_known_rows():
    # one block, a = 6, b' = 4, n = 10; class II σ = 10, b = 2: n-b = 8, σ+b = 12, x(a) = 6/8 = .75.
    # R1: ε >= 1 + 12/8 = 2.5.  R2: u = 8/12, a = 1 - 1/12 + 8/12 = 19/12: (1/.25 + 2/3)/(19/12) = 56/19 = 2.947
    nc = nodes([[6, 4]], domain("disease", ["a", "b"], [6, 4], numeric=False))
    m = EpsilonPrivacy(epsilon=2.95, adversary="II", stubbornness=10, known_rows=2, attribute="disease")
    v = m.check(nc)
    assert v.passed[0] and v.achieved == pytest.approx(56 / 19)
    assert (
        not EpsilonPrivacy(epsilon=2.94, adversary="II", stubbornness=10, known_rows=2, attribute="disease")
        .check(nc)
        .passed[0]
    )
    # a block with no more rows than the adversary knows fails for every ε
    tiny = EpsilonPrivacy(epsilon=50, adversary="II", stubbornness=10, known_rows=10, attribute="disease")
    assert not tiny.check(nc).passed[0] and tiny.check(nc).achieved is None


def test_homogeneous_block_is_never_private():
    # x = 1: R2 needs 1 <= 1 - (positive): never (classes I, II; class III unless the prior is all on s)
    nc = nodes([[5, 0], [2, 3]], domain("disease", ["a", "b"], [7, 3], numeric=False))
    for m in (
        eps(adversary="II", stubbornness=5),
        eps(adversary="I", prior=(("a", 3), ("b", 2))),
        eps(adversary="III", prior="uniform"),
    ):
        v = m.check(nc)
        assert v.passed[0] is np.False_ and v.achieved is None


def test_only_present_values_are_checked():
    # class I, prior a 5, b 5, c 0.5 (σ = 10.5), b = 0; one block {a, b}.  Were the absent c judged, R1(b)
    # would need 0 <= ε/(1-δ)·(0.5-1)/10.5 < 0 (false), leaving R1(a): ε >= 1 + 10.5/2 = 6.25.
    # For a (and b): x = 1/2, k = 4/10.5 = 8/21, u = 2/10.5 = 4/21, a = 1 - 2/21 + 4/21 = 23/21.
    #   R1(b): x(1+u)/(k+xu) = (25/42)/(10/21) = 1.25;  R2: ((1-k)/(1-x) + u)/a = (26/21 + 4/21)/(23/21) = 30/23.
    nc = nodes([[1, 1, 0]], domain("d", ["a", "b", "c"], [1, 1, 5], numeric=False))
    m = EpsilonPrivacy(epsilon=1.31, adversary="I", prior=(("a", 5), ("b", 5), ("c", 0.5)), attribute="d")
    v = m.check(nc)
    assert v.passed[0] and v.achieved == pytest.approx(30 / 23, rel=1e-12)
    assert (
        not EpsilonPrivacy(epsilon=1.30, adversary="I", prior=(("a", 5), ("b", 5), ("c", 0.5)), attribute="d")
        .check(nc)
        .passed[0]
    )


def test_posteriors_example_3():
    # class I: p_out(flu) = (18000 + 12000 - 1)/(20000 + 30000 - 1) = .59999; p_in = .9
    nc = table3([TABLE3[2]])
    p_in, p_out = posteriors(eps(adversary="I", prior=(("flu", 12000), ("cancer", 18000))), nc)
    # one value per cell of nc.blocks("disease"): (block 0, cancer), (block 0, flu)
    assert nc.blocks("disease").codes.tolist() == [0, 1]
    assert p_in.tolist() == [0.1, 0.9]
    assert p_out[1] == pytest.approx(29999 / 49999)
    # class II worst case σ(flu) = 1: 18000/(20000 + 29999)
    _, p2 = posteriors(eps(adversary="II", stubbornness=30000), nc)
    assert p2[1] == pytest.approx(18000 / 49999)
    _, p3 = posteriors(eps(adversary="III", prior=(("flu", 2), ("cancer", 3))), nc)
    assert p3.tolist() == pytest.approx([0.6, 0.4])


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(epsilon=1, adversary="II", stubbornness=10), r"'epsilon' must be > 1"),
        (dict(epsilon=2, adversary="V"), r"'adversary' must be one of"),
        (dict(epsilon=2, adversary="I"), r"class I needs parameter 'prior'"),
        (dict(epsilon=2, adversary="I", prior="uniform"), r"needs parameter 'stubbornness'"),
        (dict(epsilon=2, adversary="I", prior=(("a", 5),), stubbornness=7), r"'stubbornness' is 7 but"),
        (dict(epsilon=2, adversary="I", prior=(("a", 0.2), ("b", 0.3))), r"'prior' sums to a stubbornness of 0.5"),
        (dict(epsilon=2, adversary="II"), r"class II needs parameter 'stubbornness'"),
        (dict(epsilon=2, adversary="II", stubbornness=10, prior="uniform"), r"'prior' does not apply to class II"),
        (dict(epsilon=2, adversary="II", stubbornness=0.5), r"'stubbornness' must be >= 1"),
        (dict(epsilon=2, adversary="III"), r"class III needs parameter 'prior'"),
        (dict(epsilon=2, adversary="III", prior="uniform", stubbornness=5), r"'stubbornness' does not apply"),
        (dict(epsilon=2, adversary="IV", prior="uniform"), r"'prior' does not apply to class IV"),
        (dict(epsilon=2, adversary="III", prior="flat"), r"'prior' must be a table"),
        (dict(epsilon=2, adversary="III", prior=(("a", -1),)), r"'prior.a' must be > 0"),
        (dict(epsilon=2, adversary="II", stubbornness=5, known_rows=-1), r"'known_rows' must be >= 0"),
    ],
)
def test_invalid_parameters(kw, match):
    with pytest.raises(ConfigError, match=match):
        EpsilonPrivacy(attribute="disease", **kw)


def test_prior_must_match_the_domain():
    dom = table3().sensitive[0]
    with pytest.raises(ConfigError, match=r"'prior' names value\(s\).*'measles'"):
        eps(adversary="III", prior=(("flu", 1), ("measles", 1))).validate({"disease": dom})
    with pytest.raises(ConfigError, match=r"'prior' misses value\(s\).*'cancer'"):
        eps(adversary="I", prior=(("flu", 12000),)).validate({"disease": dom})
    with pytest.raises(ConfigError, match=r"'attribute' names 'salary'"):
        EpsilonPrivacy(epsilon=2, adversary="II", stubbornness=3, attribute="salary").validate({"disease": dom})


# --- the closed-form achieved level agrees with the conditions as written ------------------------------------


@st.composite
def eps_case(draw):
    v = draw(st.integers(1, 4))
    hist = draw(st.lists(st.lists(st.integers(0, 40), min_size=v, max_size=v).filter(any), min_size=1, max_size=3))
    adversary = draw(st.sampled_from(["I", "II", "III"]))
    b = draw(st.integers(0, 3))
    names = [f"v{i}" for i in range(v)]
    if adversary == "I":
        sig = draw(st.lists(st.floats(0.05, 60), min_size=v, max_size=v).filter(lambda s: sum(s) >= 1))
        kw = dict(prior=tuple(zip(names, sig)))
    elif adversary == "II":
        kw = dict(stubbornness=draw(st.floats(1, 500)))
    else:
        kw = dict(prior=tuple(zip(names, draw(st.lists(st.floats(0.01, 10), min_size=v, max_size=v)))))
    return hist, names, adversary, b, kw


@PROPERTY
@given(eps_case())
def test_closed_form_matches_conditions(case):
    """The exact closed-form level of every block is the boundary of the conditions as written (an exact
    oracle): they hold at ε = level and fail just below it."""
    hist, names, adversary, b, kw = case
    table = np.asarray(hist).sum(axis=0)
    nc = nodes(hist, domain("d", names, table, numeric=False))
    model = EpsilonPrivacy(epsilon=2, adversary=adversary, known_rows=b, attribute="d", **kw)
    bc = nc.blocks("d")
    sigma = oracle.sigma_of(adversary, kw.get("prior"), kw.get("stubbornness"), table.tolist(), names)
    cells = model.cell_levels(bc, exact=True)
    dense = bc.dense()
    for i in range(bc.blocks):
        own = cells[bc.indptr[i] : bc.indptr[i + 1]].tolist()
        lv = max(own) if bc.sizes[i] > b else math.inf
        row = dense[i].tolist()
        if lv == math.inf:
            assert not oracle.epsilon_privacy(row, Fraction(10**9), adversary, sigma, b)
            continue
        at = max(lv, Fraction(1, 10**12) + 1)
        assert oracle.epsilon_privacy(row, at, adversary, sigma, b)
        if lv > 1:
            assert not oracle.epsilon_privacy(row, lv - Fraction(1, 10**12), adversary, sigma, b)
        assert model.levels(nc)[i] == pytest.approx(float(lv), rel=1e-9)
