"""The attack audit's measures, hand-computed on the papers' examples: the inpatient table at Figure 2's and
Figure 3's nodes (Machanavajjhala et al. ICDE 2006), Li et al.'s similarity example (ICDE 2007, Table 4), the
proximity paper's Figure 1, and ε-privacy's Table 3 (VLDB 2009); and the sparse measures against brute force."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.adversary.attacks import audit_counts, resolve
from veil.adversary.diversity import eliminations
from veil.adversary.distance import windows
from veil.adversary.histogram import Histogram
from veil.auditsettings import AuditSettings, parse_audit
from veil.counts import NodeCounts, SensitiveDomain
from veil.errors import ConfigError
from veil.models.epsilon import EpsilonPrivacy
from veil.models.proximity import EMAnonymity

CONDITIONS = np.array(["Cancer", "Heart Disease", "Viral Infection"], dtype=object)
C, H, V = 0, 1, 2


def blocks_of(domain: SensitiveDomain, blocks: list[list[int]], counts: list[list[int]] | None = None) -> NodeCounts:
    """A node whose block b holds the values ``blocks[b]`` (one row each, or ``counts[b]`` rows)."""
    cells = []
    for b, values in enumerate(blocks):
        for i, v in enumerate(values):
            cells.append((b, v, 1 if counts is None else counts[b][i]))
    arr = np.array(cells)
    return NodeCounts.from_cells(("q",), (1,), arr[:, :1], arr[:, 1:2], arr[:, 2], (len(blocks),), (domain,))


def inpatient(blocks: list[list[int]]) -> NodeCounts:
    dom = SensitiveDomain("condition", CONDITIONS, np.array([5, 3, 4]))
    return blocks_of(dom, blocks)


FIGURE_2 = [[H, H, V, V], [C, H, V, V], [C, C, C, C]]  # 130**/<30, 1485*/>=40, 130**/3*
FIGURE_3 = [[H, V, C, C], [C, H, V, V], [H, V, C, C]]  # 1305*/<40, 1485*/>=40, 1306*/<40


def run(nc: NodeCounts, **kw) -> dict[str, object]:
    audit = audit_counts(nc, AuditSettings(**kw), (), "test", lambda b: [f"E{b}"])
    return {e.attack: e for e in audit.exposures}


def test_figure_2_every_attack_by_hand() -> None:
    a = run(inpatient(FIGURE_2))
    # Bob (31, 13053) is in the all-cancer block: homogeneity exposes its 4 rows
    assert (a["homogeneity"].blocks, a["homogeneity"].rows) == (1, 4)
    assert a["homogeneity"].worst[0].key == ["E2"] and a["homogeneity"].worst[0].score == 1.0
    assert (a["near-homogeneity"].blocks, a["near-homogeneity"].rows) == (1, 4)
    # l = 2 (default): one elimination reveals every row of block 0 (Umeko), none of block 1
    bk = a["background-knowledge"]
    assert (bk.blocks, bk.rows) == (2, 8)
    assert [(w.block, w.score) for w in bk.worst] == [(2, 0.0), (0, 1.0), (1, 2.0)]
    # equal-distance EMD to (5, 3, 4)/12: 5/12, 1/6, 7/12; t = 0.2 exposes blocks 0 and 2
    sk = a["skewness"]
    assert {w.block: round(w.score, 6) for w in sk.worst} == {
        0: round(5 / 12, 6),
        1: round(1 / 6, 6),
        2: round(7 / 12, 6),
    }
    assert (sk.blocks, sk.rows) == (2, 8)
    # uniform prior 1/3: cancer's posterior 1 in block 2; block 0 rules out cancer, block 2 heart and viral
    assert (a["positive-disclosure"].blocks, a["positive-disclosure"].rows) == (1, 4)
    neg = a["negative-disclosure"]
    assert (neg.blocks, neg.rows) == (2, 8) and [(w.block, w.score) for w in neg.worst][:2] == [(2, 2.0), (0, 1.0)]
    # default adversary: class III with the table's shape (5/12, 3/12, 4/12), ε = 2.  Block 0: heart
    # x = ½ against σ = ¼ → 2; block 1: viral ½ / ⅓ → 1.5; block 2: cancer x = 1 → R2 unbounded (∞)
    ep = a["epsilon-privacy"]
    levels = {w.block: w.score for w in ep.worst}
    assert levels[0] == pytest.approx(2.0) and levels[1] == pytest.approx(1.5) and levels[2] == np.inf
    assert (ep.blocks, ep.rows) == (1, 4)
    assert "p_in(Cancer) = 1, p_out = 0.417" in ep.worst[0].detail
    assert a["similarity"].skipped and a["proximity"].skipped


def test_figure_3_resists_homogeneity_but_not_three_eliminations() -> None:
    a = run(inpatient(FIGURE_3))
    for attack in (
        "homogeneity",
        "near-homogeneity",
        "positive-disclosure",
        "negative-disclosure",
        "skewness",
        "epsilon-privacy",
    ):
        assert (a[attack].blocks, a[attack].rows) == (0, 0), attack
    assert max(w.score for w in a["skewness"].worst) == pytest.approx(1 / 6)  # (1,1,2)/4 vs (5,3,4)/12
    assert max(w.score for w in a["epsilon-privacy"].worst) == pytest.approx(1.5)
    assert (a["background-knowledge"].blocks, a["background-knowledge"].rows) == (0, 0)
    a3 = run(inpatient(FIGURE_3), l=3)  # 3-diverse: two eliminations suffice
    assert (a3["background-knowledge"].blocks, a3["background-knowledge"].rows) == (3, 12)


def test_near_homogeneity_share_and_revealed_share() -> None:
    dom = SensitiveDomain("d", np.array(["a", "b"], dtype=object), np.array([10, 1]))
    nc = blocks_of(dom, [[0, 1]], [[9, 1]])
    a = run(nc, share=0.9)
    assert a["homogeneity"].blocks == 0 and a["near-homogeneity"].rows == 10
    assert a["background-knowledge"].worst[0].score == 0.0  # a holds 0.9 already: no elimination needed
    assert run(nc, share=1.0)["background-knowledge"].worst[0].score == 1.0


def similarity_example() -> tuple[NodeCounts, Path]:
    """Li et al. ICDE 2007 Table 4 (3-diverse): salary and disease per block."""
    diseases = np.array(
        ["bronchitis", "flu", "gastric ulcer", "gastritis", "pneumonia", "stomach cancer"], dtype=object
    )
    dom = SensitiveDomain("disease", diseases, np.array([2, 1, 1, 2, 1, 2]))
    nc = blocks_of(dom, [[2, 3, 5], [3, 1, 0], [0, 4, 5]])
    return nc, Path(__file__)


def test_similarity_attack_on_stomach_diseases(tmp_path: Path) -> None:
    hierarchy = tmp_path / "disease.csv"
    hierarchy.write_text(
        "\n".join(
            [
                "gastric ulcer;stomach diseases;digestive;*",
                "gastritis;stomach diseases;digestive;*",
                "stomach cancer;stomach diseases;digestive;*",
                "colitis;colon diseases;digestive;*",
                "flu;respiratory infection;respiratory;*",
                "bronchitis;respiratory infection;respiratory;*",
                "pneumonia;respiratory infection;respiratory;*",
            ]
        )
        + "\n"
    )
    nc, _ = similarity_example()
    s = parse_audit(
        {"attributes": {"disease": {"hierarchy": {"csv": str(hierarchy)}}}}, tmp_path / "v.toml", ("disease",)
    )
    a = {e.attack: e for e in audit_counts(nc, s, (), "t", lambda b: [str(b)]).exposures}
    sim = a["similarity"]
    assert (sim.blocks, sim.rows) == (1, 3) and sim.extra == {"diverse_blocks": 1, "diverse_rows": 3}
    assert sim.worst[0].block == 0 and "'stomach diseases'" in sim.worst[0].detail
    assert a["homogeneity"].blocks == 0  # 3-diverse, yet every value a stomach disease
    # at level 2 the second block's {gastritis, flu, bronchitis} spans digestive and respiratory: still only block 0
    s2 = parse_audit(
        {"attributes": {"disease": {"hierarchy": {"csv": str(hierarchy)}, "similarity_level": 2}}},
        tmp_path / "v.toml",
        ("disease",),
    )
    assert {e.attack: e for e in audit_counts(nc, s2, (), "t", lambda b: [str(b)]).exposures}["similarity"].blocks == 1
    # hierarchical EMD is the default distance once a hierarchy is given
    assert resolve(s, (), nc.domain("disease")).distance == "hierarchical"


def test_skewness_on_li_salaries_ordered_distance() -> None:
    """SPEC §3 / Li et al.: salaries 3K..11K once each; {3K,4K,5K} at 0.375, {6K,8K,11K} and {3K,5K,9K} at 1/6."""
    dom = SensitiveDomain("salary", np.arange(3, 12), np.ones(9, dtype=np.int64), numeric=True)
    nc = blocks_of(dom, [[0, 1, 2], [3, 5, 8], [0, 2, 6]])
    sk = run(nc, t=0.2)["skewness"]
    assert sk.parameters["distance"] == "ordered"
    assert {w.block: round(w.score, 4) for w in sk.worst} == {0: 0.375, 1: 0.1667, 2: 0.1667}
    assert (sk.blocks, sk.rows) == (1, 3)


def test_proximity_on_the_salary_figure() -> None:
    """Figure 1 of the proximity paper: {490, 500, 510, 1000} is 3-diverse, yet 3 of 4 salaries lie within 10 of
    500; {500, 600, 700} and {1000, 510, 680} do not leak at ε = 10."""
    values = np.array([490, 500, 510, 600, 680, 700, 1000])
    dom = SensitiveDomain("salary", values, np.array([1, 2, 2, 1, 1, 1, 2]), numeric=True)
    nc = blocks_of(dom, [[0, 1, 2, 6], [1, 3, 5], [6, 2, 4]])
    s = parse_audit({"attributes": {"salary": {"proximity_epsilon": 10}}}, Path("v.toml"), ("salary",))
    p = {e.attack: e for e in audit_counts(nc, s, (), "t", lambda b: [str(b)]).exposures}["proximity"]
    assert (p.blocks, p.rows) == (1, 4)
    assert p.worst[0].block == 0 and p.worst[0].score == 0.75 and "3 of 4 within ±10 of 500" in p.worst[0].detail
    # the same window as (ε,m)-anonymity: its achieved level min n/max x = min(4/3, 3, 3)
    assert EMAnonymity(epsilon=10, m=1, attribute="salary").check(nc).achieved == pytest.approx(4 / 3)


def test_epsilon_privacy_table_3_adversaries() -> None:
    """VLDB 2009 Table 3: blocks (<40,M) flu 200 cancer 300; (>=40,M) 1800/2700; (>=40,F) 18000/2000.  Class II,
    σ = 1000: R1 on the 500-row block needs ε = 3 (the table is 3-private); class I with prior D(flu 12000,
    cancer 18000): p_in(flu) = 0.9 and p_out(flu) = 30000/50000 = 0.6 in the (>=40,F) block."""
    dom = SensitiveDomain("disease", np.array(["cancer", "flu"], dtype=object), np.array([5000, 20000]))
    nc = blocks_of(dom, [[1, 0], [1, 0], [1, 0]], [[200, 300], [1800, 2700], [18000, 2000]])
    s = parse_audit(
        {"attributes": {"disease": {"adversary": {"adversary": "II", "stubbornness": 1000, "epsilon": 2.5}}}},
        Path("v.toml"),
        ("disease",),
    )
    ep = {e.attack: e for e in audit_counts(nc, s, (), "t", lambda b: [str(b)]).exposures}["epsilon-privacy"]
    assert ep.worst[0].block == 0 and ep.worst[0].score == pytest.approx(3.0)
    assert (ep.blocks, ep.rows) == (1, 500)
    s1 = parse_audit(
        {
            "attributes": {
                "disease": {"adversary": {"adversary": "I", "prior": {"flu": 12000, "cancer": 18000}, "epsilon": 5}}
            }
        },
        Path("v.toml"),
        ("disease",),
    )
    ep1 = {e.attack: e for e in audit_counts(nc, s1, (), "t", lambda b: [str(b)]).exposures}["epsilon-privacy"]
    female = next(w for w in ep1.worst if w.block == 2)
    assert "p_in(flu) = 0.9, p_out = 0.6" in female.detail


def test_models_supply_the_defaults() -> None:
    from veil.models import EntropyLDiversity, TCloseness

    dom = SensitiveDomain("condition", CONDITIONS, np.array([5, 3, 4]))
    models = (
        EntropyLDiversity(l=3.5, attribute="condition"),
        TCloseness(t=0.15, distance="equal", attribute="condition"),
        EpsilonPrivacy(epsilon=3, adversary="II", attribute="condition", stubbornness=10),
    )
    r = resolve(AuditSettings(), models, dom)
    assert (r.l, r.t, r.distance, r.adversary.adversary) == (3, 0.15, "equal", "II")
    r = resolve(AuditSettings(l=5, t=0.3), models, dom)
    assert (r.l, r.t) == (5, 0.3)
    assert resolve(AuditSettings(), (), dom).proximity == (0.05, "relative")


@pytest.mark.parametrize(
    "data, message",
    [
        ({"share": 0}, "key 'share' must be in (0, 1]"),
        ({"shares": 0.5}, "unknown key(s) 'shares'"),
        ({"l": 0}, "key 'l' must be a whole number >= 1"),
        ({"attributes": {"income": {}}}, "names 'income', which is not a sensitive column"),
        ({"attributes": {"condition": {"distance": "hierarchical"}}}, "'hierarchical' needs key 'hierarchy'"),
        ({"attributes": {"condition": {"adversary": {"adversary": "V", "epsilon": 2}}}}, "parameter 'adversary'"),
    ],
)
def test_bad_audit_settings_name_the_key(data: dict, message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        parse_audit(data, Path("veil.toml"), ("condition",))
    assert message in str(exc.value) and "veil.toml" in str(exc.value)


# --- the sparse measures against brute force -----------------------------------------------------------------

histograms = st.lists(st.lists(st.integers(0, 4), min_size=4, max_size=4), min_size=1, max_size=6).filter(
    lambda rows: all(sum(r) > 0 for r in rows)
)


def _nodecounts(rows: list[list[int]], values: np.ndarray, numeric: bool) -> NodeCounts:
    total = np.array(rows).sum(axis=0)
    dom = SensitiveDomain("s", values, total, numeric=numeric)
    blocks = [[v for v in range(4) if r[v]] for r in rows]
    return blocks_of(dom, blocks, [[r[v] for v in range(4) if r[v]] for r in rows])


@settings(max_examples=200, deadline=None)
@given(rows=histograms, share=st.sampled_from([1.0, 0.9, 0.75, 0.5]))
def test_eliminations_equal_brute_force(rows: list[list[int]], share: float) -> None:
    nc = _nodecounts(rows, np.array(list("abcd"), dtype=object), numeric=False)
    h = Histogram.of(nc, "s")
    got = {(int(b), int(v)): int(j) for b, v, j in zip(h.block, h.value, eliminations(h, share))}
    for b, r in enumerate(rows):
        for v in range(4):
            if not r[v]:
                continue
            others = sorted((r[u] for u in range(4) if u != v and r[u]), reverse=True)
            j = next(j for j in range(len(others) + 1) if r[v] >= share * (r[v] + sum(others[j:])) - 1e-9)
            assert got[(b, v)] == j, (rows, b, v, share)


@settings(max_examples=200, deadline=None)
@given(rows=histograms, eps=st.sampled_from([0.0, 1.0, 2.5, 10.0]))
def test_windows_equal_em_anonymity(rows: list[list[int]], eps: float) -> None:
    values = np.array([1.0, 2.0, 4.5, 12.0])
    nc = _nodecounts(rows, values, numeric=True)
    best, _ = windows(Histogram.of(nc, "s"), eps, "absolute")
    expected = EMAnonymity(epsilon=eps, m=1, attribute="s").worst(nc)
    assert best.tolist() == expected.tolist()


def test_histogram_merges_cells_of_other_attributes() -> None:
    a = SensitiveDomain("a", np.array(["x", "y"], dtype=object), np.array([3, 1]))
    b = SensitiveDomain("b", np.array([0, 1]), np.array([2, 2]), numeric=True)
    nc = NodeCounts.from_cells(
        ("q",), (0,), [[0], [0], [0]], [[0, 0], [0, 1], [1, 1]], np.array([2, 1, 1]), (1,), (a, b)
    )
    h = Histogram.of(nc, "a")
    assert Counter(dict(h.of_block(0))) == Counter({0: 3, 1: 1}) and h.sizes.tolist() == [4]


@pytest.mark.parametrize(
    "name",
    [
        "auditsettings",
        "adversary.histogram",
        "adversary.exposure",
        "adversary.diversity",
        "adversary.adapters",
        "adversary.distance",
    ],
)
def test_doctests(name: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(
        importlib.import_module(f"veil.{name}"), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    assert result.attempted > 0 and result.failed == 0
