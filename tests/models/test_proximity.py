"""Hand-computed tests of (ε,m)-anonymity and (δ,l)-diversity (Li, Tao, Xiao, SIGMOD 2008, and the (δ,ℓ)-diversity paper; docs/models.md §2.6)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from veil.errors import ConfigError
from veil.models.proximity import DeltaLDiversity, EMAnonymity
from tests.models.modeltest_lib import PROPERTY, domain, nodes


def blocks(values, *members):
    """Blocks given as lists of sensitive values (with repeats) over the numeric domain ``values``."""
    hists = [[m.count(v) for v in values] for m in members]
    return nodes(hists, domain("salary", values, np.asarray(hists).sum(axis=0)))


def test_em_paper_figure_2():
    # the (δ,ℓ)-diversity paper, Example 2, ε = 15: G1 = {40, 60}: I(40) = {40}, I(60) = {60}: m = 2/1 = 2.
    # G2 = {40, 50, 60}: I(40) = {40,50}, I(50) = {40,50,60}, I(60) = {50,60}: m = 3/3 = 1.
    nc = blocks([40, 50, 60], [40, 60], [40, 50, 60])
    m = EMAnonymity(epsilon=15, m=2, attribute="salary")
    v = m.check(nc)
    assert v.passed.tolist() == [True, False] and v.achieved == 1.0
    # per cell (block, value present): G1's 40 and 60 hold one row each; G2's 40, 50, 60 hold 2, 3, 2
    assert m.window_counts(nc).tolist() == [1, 1, 2, 3, 2]
    assert m.worst(nc).tolist() == [1, 3] and m.levels(nc).tolist() == [2.0, 1.0]
    only_g1 = blocks([40, 60], [40, 60])
    assert EMAnonymity(epsilon=15, m=2, attribute="salary").check(only_g1).achieved == 2.0


def test_delta_l_paper_example_3():
    # δ = 15: 40 and 60 are 20 <= 2δ = 30 apart (intervals [25,55] and [45,75] overlap): n_δ = 2 for both,
    # l = 2/2 = 1 for G1 although (ε=15, m=2) gives it 2.
    nc = blocks([40, 60], [40, 60])
    v = DeltaLDiversity(delta=15, l=2, attribute="salary").check(nc)
    assert v.passed.tolist() == [False] and v.achieved == 1.0
    # δ = 9: 2δ = 18 < 20: no overlap, l = 2
    assert DeltaLDiversity(delta=9, l=2, attribute="salary").check(nc).achieved == 2.0
    # δ = 10: 2δ = 20: the intervals [30,50] and [50,70] touch at 50: similar (closed intervals), l = 1
    assert DeltaLDiversity(delta=10, l=2, attribute="salary").check(nc).achieved == 1.0


def test_em_counts_rows_not_values():
    # {10, 10, 10, 30}, ε = 5: x(10) = 3 (three rows at 10), x(30) = 1: m = 4/3
    nc = blocks([10, 30], [10, 10, 10, 30])
    v = EMAnonymity(epsilon=5, m=1.3, attribute="salary").check(nc)
    assert v.passed[0] and v.achieved == pytest.approx(4 / 3)
    assert not EMAnonymity(epsilon=5, m=1.34, attribute="salary").check(nc).passed[0]


def test_em_relative_mode():
    # ε = 0.1 relative: window of 100 = [90, 110] -> {100, 105}; of 105 = [94.5, 115.5] -> {100, 105};
    # of 120 = [108, 132] -> {120}.  Block {100, 105, 120}: max x = 2, m = 3/2.
    nc = blocks([100, 105, 120], [100, 105, 120])
    v = EMAnonymity(epsilon=0.1, m=1.5, mode="relative", attribute="salary").check(nc)
    assert v.passed[0] and v.achieved == 1.5
    # absolute ε = 0.1 sees three separate values: m = 3
    assert EMAnonymity(epsilon=0.1, m=3, attribute="salary").check(nc).achieved == 3.0


def test_relative_boundary_survives_rounding():
    # 10 · (1 - 0.3) = 7.000000000000001 in floating point; 7 lies on the window's edge and must count:
    # window of 10 = [7, 13] -> {7, 10}: x = 2, m = 2/2 = 1
    nc = blocks([7, 10], [7, 10])
    assert EMAnonymity(epsilon=0.3, m=2, mode="relative", attribute="salary").check(nc).achieved == 1.0


def test_relative_negative_values():
    # v = -10, ε = 0.5: window [-15, -5] (the two ends swap for negatives) -> {-10, -6}
    nc = blocks([-10, -6, 20], [-10, -6, 20])
    assert EMAnonymity(epsilon=0.5, m=1, mode="relative", attribute="salary").check(nc).achieved == 1.5


def test_em_and_delta_l_counterexample_to_monotonicity():
    # the (δ,ℓ)-diversity paper, §3.2: ε = 15, m = 2: {40, 60} and {50, 80} pass; union {40, 50, 60, 80}: x(50) = 3 > 4/2.
    # The same sets break (δ = 7.5, l = 2)-diversity, which that paper claims is monotone.
    values = [40, 50, 60, 80]
    parts = blocks(values, [40, 60], [50, 80])
    union = blocks(values, [40, 50, 60, 80])
    for model in (
        EMAnonymity(epsilon=15, m=2, attribute="salary"),
        DeltaLDiversity(delta=7.5, l=2, attribute="salary"),
    ):
        assert model.check(parts).passed.all()
        assert not model.check(union).passed.any()
        assert model.properties.monotone is False


@PROPERTY
@given(
    st.lists(st.integers(0, 3), min_size=5, max_size=5).filter(any),
    st.sampled_from([0, 0.5, 1, 2, 3.5]),
    st.sampled_from(["absolute", "relative"]),
)
def test_em_matches_row_loop(counts, eps, mode):
    values = [1.0, 2.0, 2.5, 4.0, 7.0]
    nc = nodes([counts], domain("v", values, counts))
    rows = [v for v, c in zip(values, counts) for _ in range(c)]
    worst = 0
    for t in rows:
        lo, hi = (t - eps, t + eps) if mode == "absolute" else (t * (1 - eps), t * (1 + eps))
        lo, hi = min(lo, hi), max(lo, hi)
        worst = max(worst, sum(1 for u in rows if lo - 1e-9 <= u <= hi + 1e-9))
    got = EMAnonymity(epsilon=eps, m=1, mode=mode, attribute="v").check(nc).achieved
    assert got == pytest.approx(len(rows) / worst)
    if mode == "absolute":
        assert DeltaLDiversity(delta=eps / 2, l=1, attribute="v").check(nc).achieved == pytest.approx(got)


def test_numeric_attribute_required():
    nc = nodes([[1, 1]], domain("s", ["a", "b"], [1, 1], numeric=False))
    with pytest.raises(ConfigError, match=r"parameter 'attribute'.*not numeric"):
        EMAnonymity(epsilon=1, m=2, attribute="s").validate({"s": nc.sensitive[0]})
    with pytest.raises(ConfigError, match=r"parameter 'attribute'.*not numeric"):
        DeltaLDiversity(delta=1, l=2, attribute="s").validate({"s": nc.sensitive[0]})


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: EMAnonymity(epsilon=-1, m=2, attribute="s"), r"'epsilon' must be >= 0"),
        (lambda: EMAnonymity(epsilon=1, m=0.5, attribute="s"), r"'m' must be >= 1"),
        (lambda: EMAnonymity(epsilon=1, m=2, mode="percent", attribute="s"), r"'mode' must be one of"),
        (lambda: DeltaLDiversity(delta=-0.5, l=2, attribute="s"), r"'delta' must be >= 0"),
        (lambda: DeltaLDiversity(delta=1, l=0, attribute="s"), r"'l' must be >= 1"),
    ],
)
def test_invalid_parameters(make, match):
    with pytest.raises(ConfigError, match=match):
        make()
