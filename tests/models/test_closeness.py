"""Hand-computed tests of t-closeness and (n,t)-closeness (docs/models.md §2.5, §3; Li, Li, Venkatasubramanian, ICDE 2007)."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from veil.counts import NodeCounts
from veil.errors import ConfigError, HierarchyError
from veil.hierarchy import Hierarchy
from veil.models.closeness import NTCloseness, TCloseness
from veil.models.emd import Taxonomy
from veil.models.emd import dense_equal as emd_equal
from veil.models.emd import dense_ordered as emd_ordered
from tests.models.modeltest_lib import PROPERTY, domain, nodes

# --- ordered distance: docs/models.md §3's salary example ---------------------------------------------------------------

SALARIES = [3, 4, 5, 6, 7, 8, 9, 10, 11]  # K; the whole table holds each once: q = 1/9


def salary_blocks(*blocks):
    hists = [[1 if s in b else 0 for s in SALARIES] for b in blocks]
    return nodes(hists, domain("salary", SALARIES, [1] * 9))


def test_ordered_salary_example():
    # {3,4,5}: p-q = (2,2,2,-1,-1,-1,-1,-1,-1)/9, running sums (2,4,6,5,4,3,2,1,0)/9, total 27/9 = 3; /8 = 0.375
    # {3,5,9}: p-q = (2,-1,2,-1,-1,-1,2,-1,-1)/9, running sums (2,1,3,2,1,0,2,1,0)/9 = 12/9; /8 = 1/6
    # {6,8,11}: p-q = (-1,-1,-1,2,-1,2,-1,-1,2)/9, |running| (1,2,3,1,2,0,1,2,0)/9 = 12/9; /8 = 1/6
    nc = salary_blocks({3, 4, 5}, {3, 5, 9}, {6, 8, 11})
    m = TCloseness(t=0.2, distance="ordered", attribute="salary")
    d = m.distances(nc)
    assert d == pytest.approx([0.375, 1 / 6, 1 / 6], abs=1e-12)
    v = m.check(nc)
    assert v.passed.tolist() == [False, True, True]
    assert v.achieved == 0.375
    # t = 0.375 is exactly 3/8: the boundary passes
    assert TCloseness(t=0.375, distance="ordered", attribute="salary").check(nc).passed.all()
    # the float 1/6 prints as 0.16666666666666666, a decimal just below 1/6: the 1/6 blocks fail (docs/models.md §7)
    assert not TCloseness(t=1 / 6, distance="ordered", attribute="salary").check(nc).passed.any()
    assert TCloseness(t=0.1666666666666667, distance="ordered", attribute="salary").check(nc).passed.tolist() == [
        False,
        True,
        True,
    ]


def test_equal_distance_by_hand():
    # P = (1/2, 1/4, 1/4) over a, b, c.  Block {a}: 1/2·(1/2 + 1/4 + 1/4) = 1/2.  Block {a,b}: 1/2·(0+1/4+1/4) = 1/4
    nc = nodes([[2, 0, 0], [1, 1, 0], [1, 0, 1]], domain("s", ["a", "b", "c"], [4, 1, 1], numeric=False))
    # this table's P is (4/6, 1/6, 1/6): block {a,a}: 1/2·(1/3 + 1/6 + 1/6) = 1/3; {a,b}: 1/2(1/6+1/3+1/6) = 1/3
    m = TCloseness(t=0.3, distance="equal", attribute="s")
    assert m.distances(nc) == pytest.approx([1 / 3, 1 / 3, 1 / 3])
    assert emd_equal(np.array([[1.0, 0, 0], [0.5, 0.5, 0]]), np.array([0.5, 0.25, 0.25])).tolist() == [0.5, 0.25]
    assert not m.check(nc).passed.any()


def test_ordered_needs_numeric_attribute():
    nc = nodes([[1, 1]], domain("s", ["a", "b"], [1, 1], numeric=False))
    with pytest.raises(ConfigError, match=r"parameter 'attribute'.*not numeric"):
        TCloseness(t=0.2, distance="ordered", attribute="s").check(nc)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(t=1.5, distance="equal"), r"'t' must be <= 1"),
        (dict(t=-0.1, distance="equal"), r"'t' must be >= 0"),
        (dict(t=0.1, distance="manhattan"), r"'distance' must be one of"),
        (dict(t=0.1, distance="hierarchical"), r"missing required parameter 'hierarchy'"),
        (dict(t=0.1, distance="equal", hierarchy="x.csv"), r"'hierarchy' only applies"),
    ],
)
def test_invalid_t_closeness(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        TCloseness(attribute="s", **kwargs)


# --- hierarchical distance ------------------------------------------------------------------------------------

# Li et al.'s disease taxonomy (height 3); pulmonary edema/embolism, colitis, colon cancer occur in no row.
DISEASE_CSV = """\
flu;respiratory infection;respiratory system;*
pneumonia;respiratory infection;respiratory system;*
bronchitis;respiratory infection;respiratory system;*
pulmonary edema;vascular lung;respiratory system;*
pulmonary embolism;vascular lung;respiratory system;*
gastric ulcer;stomach;digestive system;*
gastritis;stomach;digestive system;*
stomach cancer;stomach;digestive system;*
colitis;colon;digestive system;*
colon cancer;colon;digestive system;*
"""
# the 9-row table: gastric ulcer 1, gastritis 2, stomach cancer 2, flu 1, bronchitis 2, pneumonia 1
DISEASES = ["bronchitis", "flu", "gastric ulcer", "gastritis", "pneumonia", "stomach cancer"]  # sorted
DISEASE_TOTAL = [2, 1, 1, 2, 1, 2]


@pytest.fixture
def disease_csv(tmp_path):
    path = tmp_path / "disease.csv"
    path.write_text(DISEASE_CSV)
    return str(path)


def disease_blocks(*blocks):
    hists = [[b.count(d) for d in DISEASES] for b in blocks]
    return nodes(hists, domain("disease", DISEASES, DISEASE_TOTAL, numeric=False))


def test_hierarchical_disease_example(disease_csv):
    # q: gu 1/9, gastritis 2/9, sc 2/9, flu 1/9, bronchitis 2/9, pneumonia 1/9.  H = 3.
    # {gastric ulcer, stomach cancer, pneumonia}: extra gu +2/9, gastritis -2/9, sc +1/9 | flu -1/9,
    #   bronchitis -2/9, pneumonia +2/9.  "stomach": pos 3/9 neg 2/9: cost 1/3·2/9 = 2/27 (extra +1/9);
    #   "respiratory infection": pos 2/9 neg 3/9: 2/27 (extra -1/9); level-2 nodes have one child: 0;
    #   root: pos 1/9 neg 1/9: 3/3·1/9 = 3/27.  EMD = 7/27.
    # {gastritis, flu, bronchitis}: stomach pos 1/9 neg 3/9: 1/27; resp. inf. pos 3/9 neg 1/9: 1/27;
    #   root 2/9: 6/27.  EMD = 8/27.
    # {gastritis, bronchitis, stomach cancer}: 1/27 + 1/27 + root 1/9 = 3/27: EMD = 5/27.
    # {gastric ulcer, gastritis, stomach cancer}: all mass moves from respiratory to stomach at the root:
    #   4/9 · 3/3 = 4/9.
    nc = disease_blocks(
        ["gastric ulcer", "stomach cancer", "pneumonia"],
        ["gastritis", "flu", "bronchitis"],
        ["gastritis", "bronchitis", "stomach cancer"],
        ["gastric ulcer", "gastritis", "stomach cancer"],
    )
    m = TCloseness(t=0.3, distance="hierarchical", attribute="disease", hierarchy=disease_csv)
    assert m.distances(nc) == pytest.approx([7 / 27, 8 / 27, 5 / 27, 4 / 9])
    v = m.check(nc)
    assert v.passed.tolist() == [True, True, True, False]
    assert v.achieved == pytest.approx(4 / 9)


def test_taxonomy_small_by_hand():
    # see Taxonomy's docstring: (1/2,1/2,0,0) -> 1/2, (1/2,0,1/2,0) -> 1/4 against uniform
    tax = Taxonomy.from_labels([["r", "*"], ["r", "*"], ["s", "*"], ["s", "*"]])
    assert tax.height == 2
    assert tax.emd(np.array([[0.5, 0.5, 0, 0], [0.5, 0, 0.5, 0]]), np.full(4, 0.25)).tolist() == [0.5, 0.25]


def test_taxonomy_with_several_tops_gets_a_root():
    # top level {r, s} (no single root): an implicit root makes H = 2; same numbers as above
    tax = Taxonomy.from_labels([["r"], ["r"], ["s"], ["s"]])
    assert tax.height == 2
    assert tax.emd(np.array([[0.5, 0.5, 0, 0]]), np.full(4, 0.25)).tolist() == [0.5]


def test_hierarchy_errors_name_the_model(tmp_path, disease_csv):
    nc = disease_blocks(["flu"])
    missing = TCloseness(
        t=0.3,
        distance="hierarchical",
        attribute="disease",
        hierarchy=str(tmp_path / "nope.csv"),
        where="veil.toml: [[models]] #3 (t-closeness)",
    )
    with pytest.raises(HierarchyError, match=r"\[\[models\]\] #3 \(t-closeness\): parameter 'hierarchy'.*cannot read"):
        missing.check(nc)
    partial = tmp_path / "partial.csv"
    partial.write_text("flu;x;*\nbronchitis;x;*\n")
    m = TCloseness(t=0.3, distance="hierarchical", attribute="disease", hierarchy=str(partial))
    with pytest.raises(HierarchyError, match=r"parameter 'hierarchy'.*misses 4 value"):
        m.validate({"disease": nc.sensitive[0]})


def _tree_emd(labels, p, q):
    """Reference: an ultrametric is a tree metric with every edge 1/(2H): EMD = sum |extra(subtree)|/(2H) over
    the non-root nodes.  ``labels[i]`` = value i's labels at levels 1..L; a root is added above level L when
    level L has several nodes."""
    levels = len(labels[0])
    tops = {row[-1] for row in labels}
    h = levels + 1 if len(tops) > 1 else levels
    total = sum(abs(a - b) for a, b in zip(p, q))  # leaves
    for j in range(levels if len(tops) > 1 else levels - 1):
        sums = {}
        for i, row in enumerate(labels):
            sums[row[j]] = sums.get(row[j], 0) + p[i] - q[i]
        total += sum(abs(x) for x in sums.values())
    return total / (2 * h)


@PROPERTY
@given(
    st.integers(2, 6).flatmap(
        lambda v: st.tuples(
            st.lists(st.tuples(st.integers(0, 2), st.integers(0, 1)), min_size=v, max_size=v),
            st.lists(st.integers(0, 5), min_size=v, max_size=v).filter(any),
            st.lists(st.integers(0, 5), min_size=v, max_size=v).filter(any),
        )
    )
)
def test_hierarchical_matches_tree_metric(case):
    chains, a, b = case
    labels = [(f"g{hi}.{lo}", f"g{hi}") for lo, hi in chains]  # level 1 then level 2; implicit root above
    p = np.array(a, float) / sum(a)
    q = np.array(b, float) / sum(b)
    tax = Taxonomy.from_labels(labels)
    ref = _tree_emd(labels, p, q)
    assert tax.emd(p[None, :], q)[0] == pytest.approx(ref, abs=1e-12)


def _lp_emd(p, q, dist):
    linprog = pytest.importorskip("scipy.optimize").linprog
    m = len(p)
    c = dist.ravel()
    a_eq, b_eq = [], []
    for i in range(m):
        row = np.zeros((m, m))
        row[i, :] = 1
        a_eq.append(row.ravel())
        b_eq.append(p[i])
    for j in range(m):
        col = np.zeros((m, m))
        col[:, j] = 1
        a_eq.append(col.ravel())
        b_eq.append(q[j])
    return linprog(c, A_eq=np.array(a_eq), b_eq=np.array(b_eq), bounds=(0, None), method="highs").fun


@PROPERTY
@given(
    st.integers(2, 5).flatmap(
        lambda v: st.tuples(
            st.lists(st.integers(0, 1), min_size=v, max_size=v),
            st.lists(st.integers(0, 4), min_size=v, max_size=v).filter(any),
            st.lists(st.integers(0, 4), min_size=v, max_size=v).filter(any),
        )
    )
)
def test_emd_formulas_match_transport_lp(case):
    """The three closed forms are the optimal transport cost under their ground distances."""
    groups, a, b = case
    p = np.array(a, float) / sum(a)
    q = np.array(b, float) / sum(b)
    m = len(p)
    idx = np.arange(m)
    equal = 1.0 - np.eye(m)
    ordered = np.abs(idx[:, None] - idx[None, :]) / (m - 1)
    labels = [(f"g{g}",) for g in groups]  # level 1 = group; a root at level 2 when there are two groups
    same = np.array(groups)[:, None] == np.array(groups)[None, :]
    within = 0.5 if len(set(groups)) > 1 else 1.0  # LCA level / H: 1/2 under a root, 1/1 if the group is the top
    hier = np.where(np.eye(m, dtype=bool), 0.0, np.where(same, within, 1.0))
    assert emd_equal(p, q) == pytest.approx(_lp_emd(p, q, equal), abs=1e-9)
    assert emd_ordered(p, q) == pytest.approx(_lp_emd(p, q, ordered), abs=1e-9)
    assert Taxonomy.from_labels(labels).emd(p, q) == pytest.approx(_lp_emd(p, q, hier), abs=1e-9)


# --- (n,t)-closeness ----------------------------------------------------------------------------------------

ZIP = Hierarchy("zip", ("z1", "z2", "z3"), (("Z12", "Z12", "Z3"), ("*", "*", "*")))
AGE = Hierarchy("age", ("a1", "a2"), (("*", "*"),))
# cells (zip, age, s, count); s: x = 0, y = 1
NT_CELLS = [
    ("z1", "a1", 0, 2),
    ("z1", "a2", 1, 2),
    ("z2", "a1", 0, 1),
    ("z2", "a1", 1, 1),
    ("z2", "a2", 0, 3),
    ("z2", "a2", 1, 1),
    ("z3", "a1", 1, 3),
    ("z3", "a2", 0, 1),
]


def nt_counts(cells, node=(0, 0)):
    zi = {z: i for i, z in enumerate(ZIP.leaves)}
    ai = {a: i for i, a in enumerate(AGE.leaves)}
    s = np.array([c[2] for c in cells])
    cnt = np.array([c[3] for c in cells])
    total = np.bincount(s, weights=cnt, minlength=2).astype(np.int64)
    qi = np.array([[ZIP.codes(node[0])[zi[c[0]]], AGE.codes(node[1])[ai[c[1]]]] for c in cells])
    dom = domain("s", ["x", "y"], total, numeric=False)
    return NodeCounts.from_cells(
        ("zip", "age"),
        node,
        qi,
        s[:, None],
        cnt,
        (ZIP.cardinality(node[0]), AGE.cardinality(node[1])),
        (dom,),
        generalizers=(ZIP, AGE),
    )


def test_nt_closeness_two_attributes_by_hand():
    # Blocks at (0,0), share of x: A=(z1,a1) {x,x} 1; B=(z1,a2) {y,y} 0; C=(z2,a1) {x,y} .5; D=(z2,a2) {x3,y} n=4;
    # E=(z3,a1) {y3} 0; F=(z3,a2) {x} 1.  Whole table x 7, y 7 (P = .5).  n = 4: only D is large.
    # Supersets (share of x, size): (0,1): z1 .5/4, z2 4/6 (.667)/6, z3 .25/4;  (1,0): Z12-a1 .75/4, Z12-a2 .5/6,
    #   Z3-a1 0/3 (small), Z3-a2 1/1 (small);  (1,1): Z12 .5/10, Z3 .25/4;  (2,0): a1 3/7, a2 4/7;  top .5/14.
    # Equal distance between two-valued distributions = |difference of x shares|.
    # A (x=1): .5, .25, .5, 4/7, .5 -> min .25.   B (x=0): .5, .5, .5, 4/7, .5 -> min .5.
    # C (.5): 1/6, .25, 0, ... -> 0.             E (0): .25 (z3), .25 (Z3), 3/7, .5 -> .25.
    # F (1): .75 (z3), .75 (Z3), 3/7 (a2), .5 -> 3/7.        t* = max = .5 (block B).
    nc = nt_counts(NT_CELLS)
    assert nc.sizes.tolist() == [2, 2, 2, 4, 3, 1]
    v = NTCloseness(n=4, t=0.3, distance="equal", attribute="s").check(nc)
    assert v.passed.tolist() == [True, False, True, True, True, False]
    assert v.achieved == pytest.approx(0.5)
    v = NTCloseness(n=4, t=0.45, distance="equal", attribute="s").check(nc)
    assert v.passed.tolist() == [True, False, True, True, True, True]  # F passes at 3/7 <= .45
    assert NTCloseness(n=4, t=0.5, distance="equal", attribute="s").check(nc).passed.all()
    # n = 2: every block but F is large; F's best superset is a2 at 3/7
    v = NTCloseness(n=2, t=0.4, distance="equal", attribute="s").check(nc)
    assert v.passed.tolist() == [True, True, True, True, True, False] and v.achieved == pytest.approx(3 / 7)
    # n = 1: every block large; t* = 0
    assert NTCloseness(n=1, t=0.0, distance="equal", attribute="s").check(nc).achieved == 0.0
    # n = 15 > |T| = 14: no superset is large enough: small blocks fail, t* undefined
    v = NTCloseness(n=15, t=1.0, distance="equal", attribute="s").check(nc)
    assert not v.passed.any() and v.achieved is None


def test_nt_top_node_and_single_superset_nodes():
    nc = nt_counts(NT_CELLS).rollup((2, 1))
    assert NTCloseness(n=20, t=1.0, distance="equal", attribute="s").check(nc).passed.tolist() == [False]
    assert NTCloseness(n=14, t=0.0, distance="equal", attribute="s").check(nc).passed.tolist() == [True]
    m = NTCloseness(n=4, t=0.3, distance="equal", attribute="s")
    assert m.nodes_above(nt_counts(NT_CELLS))[0] == (2, 1)  # top first
    assert len(m.nodes_above(nt_counts(NT_CELLS))) == 5


def test_nt_not_monotone_on_lattice():
    """N = (0,0) passes but M = (1,0) above it fails: a block that passed through a superset at (0,1), which
    is not above M, merges at M into a small block whose only superset left is the whole table."""
    a = Hierarchy("a", ("a1", "a2", "a3"), (("*", "*", "*"),))
    b = Hierarchy("b", ("b1", "b2", "b3"), (("*", "*", "*"),))
    # (a1,b1) {x}, (a2,b1) {x}, (a1,b2) {x×3}, (a2,b2) {x×3}, (a3,b3) {y×20}; n = 3, t = 0.2
    cells = [(0, 0, 0, 1), (1, 0, 0, 1), (0, 1, 0, 3), (1, 1, 0, 3), (2, 2, 1, 20)]

    def at(node):
        qi = np.array([[a.codes(node[0])[c[0]], b.codes(node[1])[c[1]]] for c in cells])
        s = np.array([c[2] for c in cells])
        cnt = np.array([c[3] for c in cells])
        dom = domain("s", ["x", "y"], [8, 20], numeric=False)
        return NodeCounts.from_cells(
            ("a", "b"),
            node,
            qi,
            s[:, None],
            cnt,
            (a.cardinality(node[0]), b.cardinality(node[1])),
            (dom,),
            generalizers=(a, b),
        )

    m = NTCloseness(n=3, t=0.2, distance="equal", attribute="s")
    # at (0,0): (a1,b1) {x} is small; its superset (a1,*) at (0,1) is {x×4}: EMD 0 -> passes
    assert m.check(at((0, 0))).passed.all()
    # at (1,0): (*,b1) {x,x} is small; above (1,0) only the whole table {x8,y20}: EMD 20/28 = .714 > .2
    v = m.check(at((1, 0)))
    assert v.passed.tolist() == [False, True, True]
    assert v.achieved == pytest.approx(20 / 28)
    assert m.properties.monotone is False


def _nt_reference(rows, hs, node, n, t):
    """Brute force over rows: blocks at node, every node strictly above, EMD (equal) to each superset."""

    def key(r, lv):
        return tuple(None if l is None else h.codes(l)[h.leaves.index(r[j])] for j, (h, l) in enumerate(zip(hs, lv)))

    ranges = [[None] if l is None else range(l, h.height + 1) for h, l in zip(hs, node)]
    above = [m for m in itertools.product(*ranges) if m != tuple(node)]
    blocks = {}
    for r in rows:
        blocks.setdefault(key(r, node), []).append(r)
    verdicts, worst = {}, Fraction(0)
    for k, members in blocks.items():
        if len(members) >= n:
            verdicts[k] = True
            continue
        best = None
        for m in above:
            sup = [r for r in rows if key(r, m) == key(members[0], m)]
            if len(sup) < n:
                continue
            d = (
                sum(
                    abs(
                        Fraction(sum(1 for r in members if r[-1] == s), len(members))
                        - Fraction(sum(1 for r in sup if r[-1] == s), len(sup))
                    )
                    for s in (0, 1, 2)
                )
                / 2
            )
            best = d if best is None else min(best, d)
        verdicts[k] = best is not None and best <= Fraction(t).limit_denominator(1000)
        worst = None if (best is None or worst is None) else max(worst, best)
    return blocks, verdicts, worst


ZIP4 = Hierarchy("zip", ("z0", "z1", "z2", "z3"), (("A", "A", "B", "B"), ("*", "*", "*", "*")))
AGE3 = Hierarchy("age", ("a0", "a1", "a2"), (("Y", "Y", "O"), ("*", "*", "*")))


@PROPERTY
@given(
    st.lists(
        st.tuples(st.sampled_from(ZIP4.leaves), st.sampled_from(AGE3.leaves), st.integers(0, 2)),
        min_size=1,
        max_size=25,
    ),
    st.sampled_from([(0, 0), (1, 0), (0, 1), (1, 1), (0, None), (None, 1), (2, 0)]),
    st.integers(1, 8),
    st.sampled_from([0.0, 0.1, 0.25, 0.5]),
)
def test_nt_matches_brute_force(rows, node, n, t):
    hs = (ZIP4, AGE3)
    s = np.array([r[2] for r in rows])
    total = np.bincount(s, minlength=3)
    dom = domain("s", ["x", "y", "z"], total, numeric=False)
    qi = np.array(
        [[0 if l is None else h.codes(l)[h.leaves.index(r[j])] for j, (h, l) in enumerate(zip(hs, node))] for r in rows]
    )
    cards = tuple(1 if l is None else h.cardinality(l) for h, l in zip(hs, node))
    nc = NodeCounts.from_cells(
        ("zip", "age"), node, qi, s[:, None], np.ones(len(rows), dtype=np.int64), cards, (dom,), generalizers=hs
    )
    v = NTCloseness(n=n, t=t, distance="equal", attribute="s").check(nc)
    blocks, verdicts, worst = _nt_reference(rows, hs, node, n, t)
    keys = [tuple(None if l is None else int(k) for k, l in zip(row, node)) for row in nc.keys.tolist()]
    assert [verdicts[k] for k in keys] == v.passed.tolist()
    if worst is None:
        assert v.achieved is None
    else:
        assert v.achieved == pytest.approx(float(worst), abs=1e-12)


def test_nt_without_hierarchies_is_an_error():
    nc = nodes([[1, 0], [0, 5]], domain("s", ["x", "y"], [1, 5], numeric=False))
    with pytest.raises(ValueError, match="needs the hierarchies"):
        NTCloseness(n=3, t=0.1, distance="equal", attribute="s").check(nc)


def test_nt_lazy_achieved_is_a_verdict():
    from veil.models.base import Verdict

    v = NTCloseness(n=4, t=0.3, distance="equal", attribute="s").check(nt_counts(NT_CELLS))
    assert isinstance(v, Verdict) and v.violating == 2
    assert "achieved=0.5" in repr(v)
    import dataclasses

    w = dataclasses.replace(v, passed=np.ones(6, dtype=bool))
    assert w.achieved == 0.5 and w.violating == 0
    assert dataclasses.asdict(v)["achieved"] == 0.5


# --- the sparse EMDs against the definitions, each block against its own reference ---------------------------------

TAX_LABELS = [("g0", "h0"), ("g0", "h0"), ("g1", "h0"), ("g2", "h1"), ("g2", "h1"), ("g3", "h1")]
# values interleaved across the tree: depth-first order differs from value order
TAX_INTERLEAVED = [("g2", "h1"), ("g0", "h0"), ("g2", "h1"), ("g1", "h0"), ("g0", "h0"), ("g3", "h1")]


@pytest.mark.parametrize("tables", [True, False], ids=["lookup-tables", "searches"])
def test_sparse_emds_match_the_definitions(tables, monkeypatch):
    """Random blocks and references (several per call, each block against one): equal, ordered and hierarchical
    EMDs, in floats and exactly, equal the definitions evaluated in fractions (tests/models/oracle.py) — through
    the dense lookup tables and through the searches used when references × domain is large."""
    from veil.counts import BlockCounts
    from veil.models import emd as emds
    from tests.models import oracle

    if not tables:
        monkeypatch.setattr(emds, "_dense", lambda refs, width: False)

    @PROPERTY
    @given(
        st.integers(1, 6).flatmap(
            lambda v: st.tuples(
                st.lists(st.lists(st.integers(0, 6), min_size=v, max_size=v).filter(any), min_size=1, max_size=4),
                st.lists(st.lists(st.integers(0, 6), min_size=v, max_size=v).filter(any), min_size=1, max_size=3),
                st.data(),
            )
        )
    )
    def prop(case):
        blocks, refs, data = case
        v = len(blocks[0])
        ref_of = np.array(
            data.draw(st.lists(st.integers(0, len(refs) - 1), min_size=len(blocks), max_size=len(blocks))),
            dtype=np.int64,
        )
        dom = domain("s", list(range(v)), np.asarray(refs).sum(axis=0) + 1)
        bc, rc = BlockCounts.from_dense(np.array(blocks), dom), BlockCounts.from_dense(np.array(refs), dom)
        labels = data.draw(st.sampled_from([TAX_LABELS, TAX_INTERLEAVED]))[:v]
        tax = Taxonomy.from_labels(labels)
        for name, fn, ref_fn in (
            ("equal", emds.equal, oracle.emd_equal),
            ("ordered", emds.ordered, oracle.emd_ordered),
            ("hierarchical", tax.distances, lambda p, r: oracle.emd_hierarchical(p, r, labels)),
        ):
            want = [ref_fn(oracle.dist(b), oracle.dist(refs[r])) for b, r in zip(blocks, ref_of.tolist())]
            assert fn(bc, rc, ref_of, True).tolist() == want, name
            assert fn(bc, rc, ref_of, False) == pytest.approx([float(w) for w in want], abs=1e-12), name

    prop()
