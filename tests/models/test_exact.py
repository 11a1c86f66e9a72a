"""Exact at the boundaries (docs/models.md §7).

1. The boundary cases of issue 9, hand-computed: a parameter exactly on a block's level decides as the
   definition says (``<=``, ``>=`` or strict ``<``), and the reported level agrees.
2. For every model, hypothesis draws blocks, then a parameter ON and AROUND the blocks' levels (the level
   itself, its neighbouring floats, its roundings to 0-3 decimals), and compares every block's verdict with an
   exact oracle (tests/models/oracle.py: the conditions as written, in integers and fractions) — on the whole
   node, block by block (chunks), and through ``privacy.verdict``'s slicing.  Reported levels agree with the
   verdicts: a block passes iff its level passes the float comparison with the parameter.
3. ``Properties.min_block_size``: every block with fewer rows fails, for every model.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from veil.counts import NodeCounts
from veil.hierarchy import Hierarchy
from veil.models import (
    DeltaLDiversity,
    DistinctLDiversity,
    EMAnonymity,
    EntropyLDiversity,
    EpsilonPrivacy,
    FrequencyLDiversity,
    KAnonymity,
    MultiAttributeLDiversity,
    NpdRecursiveCLDiversity,
    NTCloseness,
    PdRecursiveCLDiversity,
    RecursiveCLDiversity,
    TCloseness,
)
from veil.models.exact import Rule
from veil.models.ldiversity import share_level
from veil.privacy import verdict as sliced_verdict
from tests.models import oracle
from tests.models.modeltest_lib import PROPERTY, domain, joint_nodes, nodes

# --- 1. issue 9's cases, by hand -------------------------------------------------------------------------------


def cat(hists, names="abcdef"):
    hists = np.asarray(hists)
    return nodes(hists, domain("s", list(names[: hists.shape[1]]), hists.sum(axis=0), numeric=False))


def test_recursive_on_the_boundary_fails_on_every_path():
    # r1 = 55 < c·r2 = 2.2·25 = 55 is false (2.2·25 = 55.00000000000001 in floats)
    nc = cat([[55, 25]])
    m = RecursiveCLDiversity(c=2.2, l=2, attribute="s")
    v = m.check(nc)
    assert v.passed.tolist() == [False] and v.achieved == 2.2
    assert RecursiveCLDiversity(c=2.2000000000000006, l=2, attribute="s").check(nc).passed.tolist() == [True]
    multi = MultiAttributeLDiversity(instantiation="recursive", l=2, c=2.2).check(nc)
    assert multi.passed.tolist() == [False] and multi.achieved == 2.2
    # pd-recursive, Y = {a}: a 100, b 55, c 25: y = 2 > l-1 = 1: tail = r1 + r3 = 125; 55 < 0.44·125 = 55 false
    pd = PdRecursiveCLDiversity(c=0.44, l=2, allowed=("a",), attribute="s").check(cat([[100, 55, 25]]))
    assert pd.passed.tolist() == [False] and pd.achieved == 0.44


def test_frequency_on_the_boundary_passes_and_reports_it():
    nc = cat([[25, 25, 5]])  # n/r1 = 55/25 = 2.2: r1/n = 1/2.2 exactly
    v = FrequencyLDiversity(l=2.2, attribute="s").check(nc)
    assert v.passed.tolist() == [True] and v.achieved == 2.2
    assert not FrequencyLDiversity(l=2.2000000000000006, attribute="s").check(nc).passed.any()
    multi = MultiAttributeLDiversity(instantiation="frequency", l=2.2).check(nc)
    assert multi.passed.tolist() == [True] and multi.achieved == 2.2


def test_entropy_on_the_boundary():
    # uniform: H = ln 3 exactly; {1,1,1,1,4}: n^n = 8^8 = 2^24 = 4^8 · 4^4: exp(H) = 4 exactly
    nc = cat([[5, 5, 5, 0, 0], [1, 1, 1, 1, 4]])
    assert EntropyLDiversity(l=3, attribute="s").check(nc).passed.tolist() == [True, True]
    v = EntropyLDiversity(l=4, attribute="s").check(nc)
    assert v.passed.tolist() == [False, True] and v.achieved == 3.0
    assert EntropyLDiversity(l=4, attribute="s").levels(nc).tolist() == [3.0, 4.0]
    assert EntropyLDiversity(l=4.000000000000001, attribute="s").check(nc).passed.tolist() == [False, False]
    assert EntropyLDiversity(l=3.0000000000000004, attribute="s").check(nc).passed.tolist() == [False, True]


def test_npd_c2_on_the_boundary():
    # protected b is 322 of 1000 rows: exactly 32.2% (32.2·1000 = 32200.000000000004 in floats)
    nc = cat([[500, 322, 178]])
    v = NpdRecursiveCLDiversity(c1=2, c2=32.2, l=2, allowed=(), protected=("b",), attribute="s").check(nc)
    assert v.passed.tolist() == [True] and v.achieved == 1.0  # 500/(322+178)
    assert (
        not NpdRecursiveCLDiversity(c1=2, c2=32.21, l=2, allowed=(), protected=("b",), attribute="s")
        .check(nc)
        .passed.any()
    )


def test_proximity_bounds_on_the_boundary():
    # values far apart (windows hold one value each): worst = 25 rows, n = 55: level 55/25 = 2.2
    # (2.2·25 = 55.00000000000001 in floats)
    nc = nodes([[25, 25, 5]], domain("v", [10, 100, 1000], [25, 25, 5]))
    em = EMAnonymity(epsilon=1, m=2.2, attribute="v").check(nc)
    assert em.passed.tolist() == [True] and em.achieved == 2.2
    dl = DeltaLDiversity(delta=0.5, l=2.2, attribute="v").check(nc)
    assert dl.passed.tolist() == [True] and dl.achieved == 2.2
    assert not EMAnonymity(epsilon=1, m=2.2000000000000006, attribute="v").check(nc).passed.any()


def test_windows_at_large_magnitudes_are_exact():
    # 10^12 and 10^12 + 1 are 1 apart: with ε = 0.5 they are not neighbours (each window holds one row: 2/1)
    big = 10**12
    nc = nodes([[1, 1]], domain("t", [big, big + 1], [1, 1]))
    assert EMAnonymity(epsilon=0.5, m=2, attribute="t").check(nc).achieved == 2.0
    assert EMAnonymity(epsilon=1, m=2, attribute="t").check(nc).achieved == 1.0  # |u-v| = 1 <= 1
    assert DeltaLDiversity(delta=0.25, l=2, attribute="t").check(nc).achieved == 2.0
    assert DeltaLDiversity(delta=0.5, l=2, attribute="t").check(nc).achieved == 1.0  # 2δ = 1
    # epoch milliseconds (beyond 2^53 the floats would merge them): 2^60 and 2^60 + 1
    huge = 2**60
    nc = nodes([[1, 1]], domain("t", np.array([huge, huge + 1], dtype=np.int64), [1, 1]))
    assert EMAnonymity(epsilon=0.5, m=2, attribute="t").check(nc).achieved == 2.0
    # relative: 10^12 + 1 is within 1e-12 · 10^12 = 1 of 10^12, but not within 0.5e-12 · 10^12
    nc = nodes([[1, 1]], domain("t", [big, big + 1], [1, 1]))
    assert EMAnonymity(epsilon=1e-12, m=2, mode="relative", attribute="t").check(nc).achieved == 1.0
    assert EMAnonymity(epsilon=5e-13, m=2, mode="relative", attribute="t").check(nc).achieved == 2.0


def test_decimal_values_are_decimals():
    # 1.1 - 0.8 = 0.30000000000000004 in floats; as decimals the two are exactly 0.3 apart: neighbours
    nc = nodes([[1, 1]], domain("v", [0.8, 1.1], [1, 1]))
    assert EMAnonymity(epsilon=0.3, m=2, attribute="v").check(nc).achieved == 1.0
    assert EMAnonymity(epsilon=0.29, m=2, attribute="v").check(nc).achieved == 2.0
    assert DeltaLDiversity(delta=0.15, l=2, attribute="v").check(nc).achieved == 1.0


def test_t_closeness_boundaries():
    # equal: table {a×10, b×10}, block {a×7, b×3}: EMD 0.7 - 0.5 = 0.2 exactly
    nc = nodes([[7, 3], [3, 7]], domain("s", ["a", "b"], [10, 10], numeric=False))
    v = TCloseness(t=0.2, distance="equal", attribute="s").check(nc)
    assert v.passed.tolist() == [True, True] and v.achieved == 0.2
    assert not TCloseness(t=0.19999999999999998, distance="equal", attribute="s").check(nc).passed.any()
    # ordered over 0.1, 0.2, 0.3 (m = 3): table uniform, block {0.1, 0.1, 0.2}: F - G = (1/3, 1/3, 0): EMD 1/3
    nc = nodes([[2, 1, 0], [0, 1, 2], [1, 1, 1]], domain("v", [0.1, 0.2, 0.3], [3, 3, 3]))
    d = TCloseness(t=0.3, distance="ordered", attribute="v").distances(nc)
    assert d.tolist() == [1 / 3, 1 / 3, 0.0]
    assert TCloseness(t=0.3333333333333333, distance="ordered", attribute="v").check(nc).passed.tolist() == [
        False,
        False,
        True,
    ]  # 0.3333333333333333 < 1/3
    assert TCloseness(t=0.3333333333333334, distance="ordered", attribute="v").check(nc).passed.all()


def test_hierarchical_boundary(tmp_path):
    # flu, cold under r; ulcer under s; root.  Table uniform over 4 rows {flu, cold, ulcer, ulcer}.
    path = tmp_path / "h.csv"
    path.write_text("cold;r;*\nflu;r;*\nulcer;s;*\n")
    nc = nodes([[1, 1, 0], [0, 0, 2]], domain("d", ["cold", "flu", "ulcer"], [1, 1, 2], numeric=False))
    # block {cold, flu}: leaves |½-¼|·2 + ½ = 1, level 1: r 1 vs ½, s 0 vs ½: 1; EMD = (1 + 1)/(2·2) = ½
    m = TCloseness(t=0.5, distance="hierarchical", attribute="d", hierarchy=str(path))
    assert m.distances(nc).tolist() == [0.5, 0.5]
    assert m.check(nc).passed.all()
    assert (
        not TCloseness(t=0.49999999999999994, distance="hierarchical", attribute="d", hierarchy=str(path))
        .check(nc)
        .passed.any()
    )


def test_nt_whole_table_is_not_a_superset_when_the_top_has_several_values():
    # g1, g2 -> A, g3 -> B at the top level; every block {a, b}; n = 4, t = 0.1.  At node [0], g3's only natural
    # superset is B = {a, b} (2 rows < 4): it fails, although the whole table {a×3, b×3} is at EMD 0.
    g = Hierarchy("g", ("g1", "g2", "g3"), (("A", "A", "B"),))
    dom = domain("s", ["a", "b"], [3, 3], numeric=False)
    nc = NodeCounts.from_cells(
        ("g",),
        (0,),
        [[0], [0], [1], [1], [2], [2]],
        [[0], [1], [0], [1], [0], [1]],
        np.ones(6, dtype=np.int64),
        (3,),
        (dom,),
        generalizers=(g,),
    )
    m = NTCloseness(n=4, t=0.1, distance="equal", attribute="s")
    v = m.check(nc)
    assert v.passed.tolist() == [True, True, False]
    assert m.levels(nc).tolist() == [0.0, 0.0, math.inf] and v.achieved is None
    # at the top node [1] itself: B has 2 rows and no superset: fails; A passes on size
    top = nc.rollup((1,))
    assert m.check(top).passed.tolist() == [True, False]


def test_nt_boundary_is_exact():
    # n = 3: block {x} (1 row) under a superset {x, x, y} (3 rows): EMD = 1 - 2/3 = 1/3; block {x, y}: 1/6
    z = Hierarchy("z", ("z1", "z2"), (("*", "*"),))
    dom = domain("s", ["x", "y"], [2, 1], numeric=False)
    nc = NodeCounts.from_cells(
        ("z",), (0,), [[0], [1], [1]], [[0], [0], [1]], np.ones(3, dtype=np.int64), (2,), (dom,), generalizers=(z,)
    )
    assert NTCloseness(n=3, t=0.3333333333333334, distance="equal", attribute="s").check(nc).passed.all()
    v = NTCloseness(n=3, t=0.3333333333333333, distance="equal", attribute="s").check(nc)
    assert v.passed.tolist() == [False, True]
    assert v.achieved == pytest.approx(1 / 3)
    assert NTCloseness(n=3, t=0.3, distance="equal", attribute="s").levels(nc).tolist() == pytest.approx([1 / 3, 1 / 6])


# --- 2. on and around every boundary, against the exact oracle ------------------------------------------------


def around(levels, lo: float | None = None, hi: float | None = None, whole: bool = False) -> list[float]:
    """Parameters on and around the finite levels: each level, its neighbouring floats, its roundings."""
    out: set[float] = set()
    for x in levels:
        if not np.isfinite(x):
            continue
        x = float(x)
        cands = {x, float(np.nextafter(x, math.inf)), float(np.nextafter(x, -math.inf)), float(round(x))}
        cands |= {round(x, k) for k in (1, 2, 3)}
        cands |= {round(x, k) + 10.0**-k for k in (1, 2)} | {round(x, k) - 10.0**-k for k in (1, 2)}
        if whole:
            cands = {float(math.floor(c)) for c in cands} | {float(math.ceil(c)) for c in cands}
        out |= {c for c in cands if (lo is None or c >= lo) and (hi is None or c <= hi)}
    return sorted(out)


def check_against(model, nc: NodeCounts, expected: list[bool], rule: Rule, bound: float) -> None:  # noqa: ANN001
    """The engine agrees with the oracle on every path, and its levels agree with its verdicts."""
    v = model.check(nc)
    assert v.passed.tolist() == expected, model.describe()
    levels = model.levels(nc)
    assert rule.passes(levels, bound).tolist() == expected, (model.describe(), levels.tolist())
    kind = model.properties.achieved
    agg = levels.min() if kind == "min" else levels.max()
    assert v.achieved == (float(agg) if np.isfinite(agg) else None)
    assert sliced_verdict(model, nc, max_cells=1).passed.tolist() == expected
    for i in range(nc.n_blocks):
        one = np.zeros(nc.n_blocks, dtype=bool)
        one[i] = True
        assert model.check(nc.restrict(one)).passed.tolist() == [expected[i]]


rows_of = st.integers(1, 4).flatmap(
    lambda v: st.lists(st.lists(st.integers(0, 30), min_size=v, max_size=v).filter(any), min_size=1, max_size=3)
)


@PROPERTY
@given(rows_of, st.data())
def test_distinct_frequency_entropy(rows, data):
    nc = cat(rows)
    for make, orc, whole in (
        (lambda l: DistinctLDiversity(l=int(l), attribute="s"), oracle.distinct, True),
        (lambda l: FrequencyLDiversity(l=l, attribute="s"), oracle.frequency, False),
        (lambda l: EntropyLDiversity(l=l, attribute="s"), oracle.entropy, False),
    ):
        l = data.draw(st.sampled_from(around(make(1).levels(nc), lo=1, whole=whole)))
        check_against(make(l), nc, [orc(r, l) for r in rows], Rule.AT_LEAST, l)


@PROPERTY
@given(rows_of, st.integers(1, 4), st.sets(st.integers(0, 3)), st.data())
def test_recursive_family(rows, l, allowed, data):
    nc = cat(rows)
    names = tuple("abcd"[i] for i in sorted(allowed) if i < len(rows[0]))
    idx = {i for i in allowed if i < len(rows[0])}
    rec = RecursiveCLDiversity(c=1, l=l, attribute="s")
    c = data.draw(st.sampled_from(around(rec.levels(nc), lo=1e-9) or [1.0]))
    check_against(
        RecursiveCLDiversity(c=c, l=l, attribute="s"), nc, [oracle.recursive(r, c, l) for r in rows], Rule.BELOW, c
    )
    pd = PdRecursiveCLDiversity(c=1, l=l, allowed=names, attribute="s")
    c = data.draw(st.sampled_from(around(pd.levels(nc), lo=1e-9) or [1.0]))
    check_against(
        PdRecursiveCLDiversity(c=c, l=l, allowed=names, attribute="s"),
        nc,
        [oracle.pd_recursive(r, c, l, idx) for r in rows],
        Rule.BELOW,
        c,
    )


@PROPERTY
@given(rows_of, st.integers(1, 3), st.sets(st.integers(0, 3)), st.sets(st.integers(0, 3), min_size=1), st.data())
def test_npd(rows, l, allowed, protected, data):
    v = len(rows[0])
    nc = cat(rows)
    y = tuple("abcd"[i] for i in sorted(allowed) if i < v)
    w = tuple("abcd"[i] for i in sorted(protected) if i < v)
    c1 = data.draw(
        st.sampled_from(around(PdRecursiveCLDiversity(c=1, l=l, allowed=y, attribute="s").levels(nc), lo=1e-9) or [1.0])
    )
    shares = share_level(nc.blocks("s"), np.array(sorted(i for i in protected if i < v), dtype=np.int64))
    c2 = data.draw(st.sampled_from(around(shares, lo=0, hi=100) or [0.0]))
    m = NpdRecursiveCLDiversity(c1=c1, c2=c2, l=l, allowed=y, protected=w, attribute="s")
    expected = [
        oracle.npd_recursive(r, c1, c2, l, {i for i in allowed if i < v}, {i for i in protected if i < v}) for r in rows
    ]
    assert m.check(nc).passed.tolist() == expected
    assert sliced_verdict(m, nc, max_cells=1).passed.tolist() == expected
    assert Rule.BELOW.passes(m.levels(nc), c1).tolist() == expected


@PROPERTY
@given(
    st.tuples(st.integers(1, 3), st.integers(1, 3)).flatmap(
        lambda s: st.lists(
            st.lists(st.integers(0, 12), min_size=s[0] * s[1], max_size=s[0] * s[1])
            .filter(any)
            .map(lambda xs: np.array(xs).reshape(s)),
            min_size=1,
            max_size=3,
        )
    ),
    st.sampled_from(["distinct", "frequency", "entropy", "recursive"]),
    st.integers(1, 3),
    st.data(),
)
def test_multi_attribute(joints, inst, l, data):
    s = domain("S", ["a", "b", "c"][: joints[0].shape[0]], sum(joints).sum(axis=1), numeric=False)
    w = domain("W", ["p", "q", "r"][: joints[0].shape[1]], sum(joints).sum(axis=0), numeric=False)
    nc = joint_nodes(joints, (s, w))
    if inst == "recursive":
        base = MultiAttributeLDiversity(instantiation=inst, l=l, c=1)
        c = data.draw(st.sampled_from(around(base.levels(nc), lo=1e-9) or [1.0]))
        m, rule, bound = MultiAttributeLDiversity(instantiation=inst, l=l, c=c), Rule.BELOW, c
        expected = [oracle.multi_attribute(j, inst, l, c) for j in joints]
    else:
        base = MultiAttributeLDiversity(instantiation=inst, l=1)
        lv = data.draw(st.sampled_from(around(base.levels(nc), lo=1, whole=inst == "distinct")))
        lv = int(lv) if inst == "distinct" else lv
        m, rule, bound = MultiAttributeLDiversity(instantiation=inst, l=lv), Rule.AT_LEAST, lv
        expected = [oracle.multi_attribute(j, inst, lv) for j in joints]
    check_against(m, nc, expected, rule, bound)


TAXONOMY = {"v0": ("g0", "h0"), "v1": ("g0", "h0"), "v2": ("g1", "h0"), "v3": ("g2", "h1"), "v4": ("g2", "h1")}


@pytest.fixture(scope="module")
def taxonomy_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("tax") / "v.csv"
    path.write_text("".join(f"{v};{a};{b}\n" for v, (a, b) in TAXONOMY.items()))  # two tops: implicit root
    return str(path)


@PROPERTY
@given(
    st.integers(1, 5).flatmap(
        lambda v: st.tuples(
            st.lists(st.lists(st.integers(0, 9), min_size=v, max_size=v).filter(any), min_size=1, max_size=3),
            st.lists(st.integers(0, 5), min_size=v, max_size=v),
        )
    ),
    st.sampled_from(["equal", "ordered", "hierarchical"]),
    st.data(),
)
def test_t_closeness(taxonomy_csv, case, distance, data):
    rows, extra = case
    v = len(rows[0])
    table = (np.asarray(rows).sum(axis=0) + np.asarray(extra)).tolist()
    names = [f"v{i}" for i in range(v)]
    dom = domain(
        "s", [0.1 * (i + 1) for i in range(v)] if distance == "ordered" else names, table, numeric=distance == "ordered"
    )
    nc = nodes(rows, dom)
    kw = {"hierarchy": taxonomy_csv} if distance == "hierarchical" else {}
    base = TCloseness(t=1, distance=distance, attribute="s", **kw)
    t = data.draw(st.sampled_from(around(base.levels(nc), lo=0, hi=1) or [0.0]))
    labels = [TAXONOMY[n] for n in names]
    expected = [oracle.t_closeness(r, table, t, distance, labels) for r in rows]
    check_against(TCloseness(t=t, distance=distance, attribute="s", **kw), nc, expected, Rule.AT_MOST, t)


VALUES = st.sampled_from(
    [
        [1, 2, 3, 5, 8],
        [0.1, 0.2, 0.3, 0.7, 1.1],
        [-1.5, -0.5, 0, 0.25, 2],
        [10**12, 10**12 + 1, 10**12 + 3],
        [0.8, 1.1, 1.4, 2.6],
        [-10, -6, 20, 25],
    ]
)


def _gaps(values, relative: bool) -> list[float]:
    """Exact distances between the values (relative: over |v|), as the floats of their decimals."""
    out = set()
    for u in values:
        for v in values:
            d = abs(oracle.q(u) - oracle.q(v))
            if relative:
                if oracle.q(v) == 0:
                    continue
                d = d / abs(oracle.q(v))
            out.add(float(d))
    return sorted(out)


@PROPERTY
@given(
    VALUES.flatmap(
        lambda vals: st.tuples(
            st.just(vals),
            st.lists(
                st.lists(st.integers(0, 6), min_size=len(vals), max_size=len(vals)).filter(any), min_size=1, max_size=3
            ),
        )
    ),
    st.sampled_from(["absolute", "relative", "delta"]),
    st.data(),
)
def test_proximity(case, mode, data):
    values, rows = case
    nc = nodes(rows, domain("v", values, np.asarray(rows).sum(axis=0)))
    eps = data.draw(st.sampled_from(around(_gaps(values, mode == "relative"), lo=0)))
    if mode == "delta":
        delta = eps / 2
        lv = DeltaLDiversity(delta=delta, l=1, attribute="v").levels(nc)
        l = data.draw(st.sampled_from(around(lv, lo=1)))
        expected = [oracle.delta_l(r, values, delta, l) for r in rows]
        check_against(DeltaLDiversity(delta=delta, l=l, attribute="v"), nc, expected, Rule.AT_LEAST, l)
        return
    m1 = EMAnonymity(epsilon=eps, m=1, mode=mode, attribute="v")
    m = data.draw(st.sampled_from(around(m1.levels(nc), lo=1)))
    expected = [oracle.em_anonymity(r, values, eps, m, mode == "relative") for r in rows]
    check_against(EMAnonymity(epsilon=eps, m=m, mode=mode, attribute="v"), nc, expected, Rule.AT_LEAST, m)


@st.composite
def adversaries(draw, v: int):
    adversary = draw(st.sampled_from(["I", "II", "III"]))
    names = [f"v{i}" for i in range(v)]
    kw: dict = {"known_rows": draw(st.integers(0, 2))}
    decimals = st.sampled_from([0.5, 1, 1.5, 2, 2.5, 3, 10, 12.5, 40])
    if adversary == "I":
        shape = draw(st.sampled_from(["given", "table", "uniform"]))
        if shape == "given":
            kw["prior"] = tuple(
                zip(names, draw(st.lists(decimals, min_size=v, max_size=v).filter(lambda s: sum(s) >= 1)))
            )
        else:
            kw.update(prior=shape, stubbornness=draw(decimals.filter(lambda s: s >= 1)))
    elif adversary == "II":
        kw["stubbornness"] = draw(decimals.filter(lambda s: s >= 1))
    else:
        kw["prior"] = draw(
            st.one_of(
                st.sampled_from(["table", "uniform"]),
                st.lists(decimals, min_size=v, max_size=v).map(lambda s: tuple(zip(names, s))),
            )
        )
    return adversary, kw


@PROPERTY
@given(
    st.integers(1, 3).flatmap(
        lambda v: st.tuples(
            st.lists(st.lists(st.integers(0, 20), min_size=v, max_size=v).filter(any), min_size=1, max_size=3),
            adversaries(v),
        )
    ),
    st.data(),
)
def test_epsilon_privacy(case, data):
    rows, (adversary, kw) = case
    v = len(rows[0])
    names = [f"v{i}" for i in range(v)]
    table = np.asarray(rows).sum(axis=0)
    nc = nodes(rows, domain("d", names, table, numeric=False))
    base = EpsilonPrivacy(epsilon=2, adversary=adversary, attribute="d", **kw)
    eps = data.draw(st.sampled_from(around(base.levels(nc), lo=1.0000001) or [2.0]))
    sigma = oracle.sigma_of(adversary, kw.get("prior"), kw.get("stubbornness"), table.tolist(), names)
    expected = [oracle.epsilon_privacy(r, eps, adversary, sigma, kw["known_rows"]) for r in rows]
    check_against(
        EpsilonPrivacy(epsilon=eps, adversary=adversary, attribute="d", **kw), nc, expected, Rule.AT_MOST, eps
    )


ZIP4 = Hierarchy("zip", ("z0", "z1", "z2", "z3"), (("A", "A", "B", "B"), ("*", "*", "*", "*")))
AGE3 = Hierarchy("age", ("a0", "a1", "a2"), (("Y", "Y", "O"),))  # top level has two values


@PROPERTY
@given(
    st.lists(
        st.tuples(st.sampled_from(ZIP4.leaves), st.sampled_from(AGE3.leaves), st.integers(0, 2)),
        min_size=1,
        max_size=25,
    ),
    st.sampled_from([(0, 0), (1, 0), (0, 1), (1, 1), (0, None), (None, 0), (2, 0)]),
    st.integers(1, 8),
    st.sampled_from(["equal", "ordered"]),
    st.data(),
)
def test_nt_closeness(rows, node, n, distance, data):
    """Natural supersets are the blocks of nodes above (the whole table only at a single-block top node)."""
    hs = (ZIP4, AGE3)
    s = np.array([r[2] for r in rows])
    dom = domain("s", [1, 2, 3], np.bincount(s, minlength=3))
    qi = np.array(
        [
            [0 if lv is None else h.codes(lv)[h.leaves.index(r[j])] for j, (h, lv) in enumerate(zip(hs, node))]
            for r in rows
        ]
    )
    cards = tuple(1 if lv is None else h.cardinality(lv) for h, lv in zip(hs, node))
    nc = NodeCounts.from_cells(
        ("zip", "age"), node, qi, s[:, None], np.ones(len(rows), dtype=np.int64), cards, (dom,), generalizers=hs
    )
    levels = NTCloseness(n=n, t=1, distance=distance, attribute="s").levels(nc)
    t = data.draw(st.sampled_from(around(levels, lo=0, hi=1) or [0.0]))
    m = NTCloseness(n=n, t=t, distance=distance, attribute="s")
    best = _nt_best(rows, hs, node, n, distance)
    keys = [tuple(None if lv is None else int(k) for k, lv in zip(row, node)) for row in nc.keys.tolist()]
    expected = [best[k] is not None and best[k] <= oracle.q(t) for k in keys]
    assert m.check(nc).passed.tolist() == expected
    got = m.levels(nc)
    assert [None if not np.isfinite(x) else x for x in got.tolist()] == [
        None if best[k] is None else pytest.approx(float(best[k]), abs=1e-12) for k in keys
    ]
    assert Rule.AT_MOST.passes(got, t).tolist() == expected


def _nt_best(rows, hs, node, n, distance):  # noqa: ANN001, ANN202
    """Brute force over rows: per block at ``node``, its smallest exact EMD to a superset of >= n rows among
    the blocks of the nodes strictly above (0 if it has n rows itself; None if there is none)."""
    import itertools

    def key(r, lv):  # noqa: ANN001, ANN202
        return tuple(None if l is None else h.codes(l)[h.leaves.index(r[j])] for j, (h, l) in enumerate(zip(hs, lv)))

    ranges = [[None] if l is None else range(l, h.height + 1) for h, l in zip(hs, node)]
    above = [m for m in itertools.product(*ranges) if m != tuple(node)]
    blocks: dict = {}
    for r in rows:
        blocks.setdefault(key(r, node), []).append(r)
    emd = oracle.emd_equal if distance == "equal" else oracle.emd_ordered
    out = {}
    for k, members in blocks.items():
        if len(members) >= n:
            out[k] = Fraction(0)
            continue
        p = oracle.dist([sum(1 for r in members if r[-1] == s) for s in range(3)])
        best = None
        for m in above:
            sup = [r for r in rows if key(r, m) == key(members[0], m)]
            if len(sup) >= n:
                d = emd(p, oracle.dist([sum(1 for r in sup if r[-1] == s) for s in range(3)]))
                best = d if best is None else min(best, d)
        out[k] = best
    return out


# --- 3. min_block_size: a smaller block surely fails ----------------------------------------------------------


def _models_for(l: float, c: float, v: int) -> list:
    return [
        KAnonymity(k=max(1, round(l))),
        DistinctLDiversity(l=max(1, round(l)), attribute="s"),
        FrequencyLDiversity(l=l, attribute="s"),
        EntropyLDiversity(l=l, attribute="s"),
        RecursiveCLDiversity(c=c, l=max(1, round(l)), attribute="s"),
        PdRecursiveCLDiversity(c=c, l=max(1, round(l)), allowed=("v0",), attribute="s"),
        NpdRecursiveCLDiversity(
            c1=c, c2=1, l=2, allowed=(), protected=tuple(f"v{i}" for i in range(min(v, 3))), attribute="s"
        ),
        MultiAttributeLDiversity(instantiation="entropy", l=l),
        MultiAttributeLDiversity(instantiation="distinct", l=max(1, round(l))),
        MultiAttributeLDiversity(instantiation="recursive", l=max(1, round(l)), c=c),
        TCloseness(t=0.3, distance="equal", attribute="s"),
        EMAnonymity(epsilon=1, m=l, attribute="s"),
        DeltaLDiversity(delta=0.5, l=l, attribute="s"),
        EpsilonPrivacy(epsilon=1 + c, adversary="II", stubbornness=2 * l, known_rows=round(l) % 3, attribute="s"),
        EpsilonPrivacy(epsilon=1 + c, adversary="I", prior="uniform", stubbornness=l, known_rows=1, attribute="s"),
        EpsilonPrivacy(epsilon=1 + c, adversary="III", prior="uniform", known_rows=2, attribute="s"),
        EpsilonPrivacy(epsilon=1 + c, adversary="IV", attribute="s"),
    ]


@PROPERTY
@given(
    st.integers(1, 5).flatmap(
        lambda v: st.lists(st.lists(st.integers(0, 4), min_size=v, max_size=v).filter(any), min_size=1, max_size=4)
    ),
    st.sampled_from([1, 1.5, 2, 2.2, 3, 4.5, 6]),
    st.sampled_from([0.5, 1, 2, 5.5]),
)
def test_min_block_size(rows, l, c):
    v = len(rows[0])
    total = np.asarray(rows).sum(axis=0)
    nc = nodes(rows, domain("s", [f"v{i}" for i in range(v)], total, numeric=False))
    numeric = nodes(rows, domain("s", list(range(v)), total))
    sizes = nc.sizes
    for m in _models_for(l, c, v):
        counts = numeric if isinstance(m, (EMAnonymity, DeltaLDiversity)) else nc
        small = sizes < m.properties.min_block_size
        assert not m.check(counts).passed[small].any(), m.describe()
