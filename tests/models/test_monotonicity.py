"""Every model's monotonicity declarations, checked both ways (docs/models.md §6).

For each family of models, a case is two random blocks A and B over one domain plus the family's fixed
parameters.  The model is *calibrated* on the premise so that it passes at the boundary (its parameter is the
achieved level of the premise, nudged by 1e-9), which makes the property as hard to satisfy as it can be:

- ``monotone``: premise {A, B} passes → the merged block A ∪ B passes;
- ``monotone_with_suppression``: premise {A} passes → A ∪ B passes, whatever B.

A claim declared ``True`` is a hypothesis property (``VEIL_HYPOTHESIS_PROFILE=hard`` runs 3000 examples); a
claim declared ``False`` must come with a counter-example, which ``hypothesis.find`` has to find (so a flag
flipped to ``True`` fails the property and a flag flipped to ``False`` fails the search).  The notes'
counter-examples are checked verbatim in ``test_note_counterexamples``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, assume, find, given, settings
from hypothesis import strategies as st

from veil.models.base import Model, Properties
from veil.models.closeness import TCloseness
from veil.models.epsilon import EpsilonPrivacy
from veil.models.kanonymity import KAnonymity
from veil.models.ldiversity import (
    DistinctLDiversity,
    EntropyLDiversity,
    FrequencyLDiversity,
    MultiAttributeLDiversity,
    NpdRecursiveCLDiversity,
    PdRecursiveCLDiversity,
    RecursiveCLDiversity,
)
from veil.models.proximity import DeltaLDiversity, EMAnonymity
from tests.models.modeltest_lib import PROPERTY, domain, joint_nodes, nodes

HIERARCHIES = {
    "deep": "v0;g0;h0;*\nv1;g0;h0;*\nv2;g1;h0;*\nv3;g1;h0;*\nv4;g2;h1;*\nv5;g2;h1;*\n",
    "flat": "v0;a;*\nv1;a;*\nv2;a;*\nv3;b;*\nv4;b;*\nv5;c;*\n",
}
UP = 1 + 1e-9
DOWN = 1 - 1e-9


@pytest.fixture(scope="module")
def hierarchy_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("hier")
    out = {}
    for name, text in HIERARCHIES.items():
        (d / f"{name}.csv").write_text(text)
        out[name] = str(d / f"{name}.csv")
    return out


@dataclass(frozen=True)
class Family:
    name: str
    setup: Callable[[Any, int], dict]  # draw(strategy), V -> fixed parameters
    calibrate: Callable[[dict, Any], Model | None]  # parameters, premise counts -> model
    claim: Callable[[dict], Properties]
    numeric: bool = False
    joint: bool = False


def _lvl(model: Model, nc) -> float | None:  # noqa: ANN001
    return model.check(nc).achieved


def _at_least(x: float | None) -> float | None:
    return None if x is None else max(1.0, x * DOWN)


def _above(x: float | None) -> float | None:
    return None if x is None else x * UP + 1e-12


def _names(v: int) -> list[str]:
    return [f"v{i}" for i in range(v)]


def _y(draw, v):  # noqa: ANN001
    return tuple(sorted(draw(st.sets(st.sampled_from(_names(v)), max_size=v))))


def _mk(make: Callable[[float], Model], level: float | None) -> Model | None:
    return None if level is None else make(level)


def _npd(p: dict, nc) -> Model | None:  # noqa: ANN001
    bc = nc.blocks("s")
    c1 = _lvl(PdRecursiveCLDiversity(c=1, l=p["l"], allowed=p["allowed"], attribute="s"), nc)
    if c1 is None:
        return None
    c2 = 0.0
    if p["protected"]:
        cols = [int(n[1:]) for n in p["protected"]]
        c2 = float((100 * bc.dense()[:, cols] / bc.sizes[:, None]).min()) * DOWN
    return NpdRecursiveCLDiversity(
        c1=_above(c1), c2=max(0.0, c2), l=p["l"], allowed=p["allowed"], protected=p["protected"], attribute="s"
    )


def _multi(p: dict, nc) -> Model | None:  # noqa: ANN001
    inst, l = p["inst"], p["l"]
    if inst == "recursive":
        c = _lvl(MultiAttributeLDiversity(instantiation="recursive", l=l, c=1), nc)
        return None if c is None else MultiAttributeLDiversity(instantiation="recursive", l=l, c=_above(c))
    lv = _lvl(MultiAttributeLDiversity(instantiation=inst, l=1), nc)
    if inst == "distinct":
        return MultiAttributeLDiversity(instantiation=inst, l=int(lv))
    return MultiAttributeLDiversity(instantiation=inst, l=_at_least(lv))


def _eps(p: dict, nc) -> Model | None:  # noqa: ANN001
    base = EpsilonPrivacy(epsilon=2, attribute="s", **p)
    if p["adversary"] == "IV":
        return base
    e = _lvl(base, nc)
    return None if e is None else EpsilonPrivacy(epsilon=_above(e), attribute="s", **p)


def _eps_setup(draw, v):  # noqa: ANN001
    adversary = draw(st.sampled_from(["I", "II", "III", "IV"]))
    kw: dict = {"adversary": adversary, "known_rows": draw(st.integers(0, 2)) if adversary != "IV" else 0}
    if adversary == "I":
        sig = draw(st.lists(st.floats(0.05, 40), min_size=v, max_size=v).filter(lambda s: sum(s) >= 1))
        kw["prior"] = tuple(zip(_names(v), sig))
    elif adversary == "II":
        kw["stubbornness"] = draw(st.floats(1, 200))
    elif adversary == "III":
        kw["prior"] = draw(
            st.one_of(
                st.just("uniform"),
                st.just("table"),
                st.lists(st.floats(0.01, 10), min_size=v, max_size=v).map(lambda s: tuple(zip(_names(v), s))),
            )
        )
    return kw


FAMILIES = [
    Family(
        "k-anonymity",
        lambda d, v: {},
        lambda p, nc: KAnonymity(k=int(nc.sizes.min())),
        lambda p: KAnonymity(k=1).properties,
    ),
    Family(
        "distinct-l",
        lambda d, v: {},
        lambda p, nc: DistinctLDiversity(l=int(_lvl(DistinctLDiversity(l=1, attribute="s"), nc)), attribute="s"),
        lambda p: DistinctLDiversity(l=1, attribute="s").properties,
    ),
    Family(
        "frequency-l",
        lambda d, v: {},
        lambda p, nc: FrequencyLDiversity(
            l=_at_least(_lvl(FrequencyLDiversity(l=1, attribute="s"), nc)), attribute="s"
        ),
        lambda p: FrequencyLDiversity(l=1, attribute="s").properties,
    ),
    Family(
        "entropy-l",
        lambda d, v: {},
        lambda p, nc: EntropyLDiversity(l=_at_least(_lvl(EntropyLDiversity(l=1, attribute="s"), nc)), attribute="s"),
        lambda p: EntropyLDiversity(l=1, attribute="s").properties,
    ),
    Family(
        "recursive-cl",
        lambda d, v: {"l": d(st.integers(1, 4))},
        lambda p, nc: _mk(
            lambda c: RecursiveCLDiversity(c=_above(c), l=p["l"], attribute="s"),
            _lvl(RecursiveCLDiversity(c=1, l=p["l"], attribute="s"), nc),
        ),
        lambda p: RecursiveCLDiversity(c=1, l=p["l"], attribute="s").properties,
    ),
    Family(
        "pd-recursive-cl",
        lambda d, v: {"l": d(st.integers(1, 4)), "allowed": _y(d, v)},
        lambda p, nc: _mk(
            lambda c: PdRecursiveCLDiversity(c=_above(c), l=p["l"], allowed=p["allowed"], attribute="s"),
            _lvl(PdRecursiveCLDiversity(c=1, l=p["l"], allowed=p["allowed"], attribute="s"), nc),
        ),
        lambda p: PdRecursiveCLDiversity(c=1, l=p["l"], allowed=p["allowed"], attribute="s").properties,
    ),
    Family(
        "npd-recursive-cl",
        lambda d, v: {"l": d(st.integers(1, 4)), "allowed": _y(d, v), "protected": _y(d, v)},
        _npd,
        lambda p: (
            NpdRecursiveCLDiversity(
                c1=1, c2=0, l=p["l"], allowed=p["allowed"], protected=p["protected"], attribute="s"
            ).properties
        ),
    ),
    Family(
        "multi-attribute",
        lambda d, v: {
            "inst": d(st.sampled_from(["distinct", "frequency", "entropy", "recursive"])),
            "l": d(st.integers(1, 3)),
        },
        _multi,
        lambda p: MultiAttributeLDiversity(instantiation="entropy", l=1).properties,
        joint=True,
    ),
    Family(
        "t-closeness-equal",
        lambda d, v: {},
        lambda p, nc: TCloseness(
            t=min(1.0, _above(_lvl(TCloseness(t=1, distance="equal", attribute="s"), nc))),
            distance="equal",
            attribute="s",
        ),
        lambda p: TCloseness(t=1, distance="equal", attribute="s").properties,
    ),
    Family(
        "t-closeness-ordered",
        lambda d, v: {},
        lambda p, nc: TCloseness(
            t=min(1.0, _above(_lvl(TCloseness(t=1, distance="ordered", attribute="s"), nc))),
            distance="ordered",
            attribute="s",
        ),
        lambda p: TCloseness(t=1, distance="ordered", attribute="s").properties,
        numeric=True,
    ),
    Family(
        "t-closeness-hierarchical",
        lambda d, v: {"hierarchy": d(st.sampled_from(sorted(HIERARCHIES)))},
        lambda p, nc: TCloseness(
            t=min(1.0, _above(_lvl(TCloseness(t=1, distance="hierarchical", attribute="s", hierarchy=p["path"]), nc))),
            distance="hierarchical",
            attribute="s",
            hierarchy=p["path"],
        ),
        lambda p: TCloseness(t=1, distance="hierarchical", attribute="s", hierarchy="x").properties,
    ),
    Family("epsilon-privacy", _eps_setup, _eps, lambda p: EpsilonPrivacy(epsilon=2, attribute="s", **p).properties),
    Family(
        "em-anonymity",
        lambda d, v: (
            lambda mode: {
                "mode": mode,
                "eps": d(st.sampled_from([0, 1, 2, 3, 5, 10] if mode == "absolute" else [0, 0.1, 0.25, 0.5, 1, 2])),
            }
        )(d(st.sampled_from(["absolute", "relative"]))),
        lambda p, nc: EMAnonymity(
            epsilon=p["eps"],
            m=_at_least(_lvl(EMAnonymity(epsilon=p["eps"], m=1, mode=p["mode"], attribute="s"), nc)),
            mode=p["mode"],
            attribute="s",
        ),
        lambda p: EMAnonymity(epsilon=1, m=1, attribute="s").properties,
        numeric=True,
    ),
    Family(
        "delta-l-diversity",
        lambda d, v: {"delta": d(st.sampled_from([0, 0.5, 1, 1.5, 2.5, 5]))},
        lambda p, nc: DeltaLDiversity(
            delta=p["delta"],
            l=_at_least(_lvl(DeltaLDiversity(delta=p["delta"], l=1, attribute="s"), nc)),
            attribute="s",
        ),
        lambda p: DeltaLDiversity(delta=1, l=1, attribute="s").properties,
        numeric=True,
    ),
]


@st.composite
def cases(draw, fam: Family):
    if fam.joint:
        shape = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
        cell = st.integers(0, 3)
        block = (
            st.lists(cell, min_size=shape[0] * shape[1], max_size=shape[0] * shape[1])
            .filter(any)
            .map(lambda xs: np.array(xs).reshape(shape))
        )
        values = (_names(shape[0]), [f"w{i}" for i in range(shape[1])])
        v = shape[0]
    else:
        v = draw(st.integers(1, 6 if fam.name == "t-closeness-hierarchical" else 5))
        block = st.lists(st.integers(0, 3 if fam.numeric else 6), min_size=v, max_size=v).filter(any).map(np.array)
        if fam.numeric:
            values = sorted(draw(st.sets(st.integers(1, 16), min_size=v, max_size=v)))
        else:
            values = _names(v)
    a, b = draw(block), draw(block)
    extra = draw(st.lists(st.integers(0, 4), min_size=len(a.ravel()), max_size=len(a.ravel()))).copy()
    params = fam.setup(draw, v)
    return values, a, b, np.array(extra).reshape(a.shape), params


def _counts(fam: Family, values, blocks, total):  # noqa: ANN001
    if fam.joint:
        s = domain("s", values[0], total.sum(axis=1), numeric=False)
        w = domain("w", values[1], total.sum(axis=0), numeric=False)
        return joint_nodes(blocks, (s, w))
    return nodes(blocks, domain("s", values, total, numeric=fam.numeric))


def _resolve(params: dict, files: dict) -> dict:
    if "hierarchy" in params:
        return {**params, "path": files[params["hierarchy"]]}
    return params


def violates(fam: Family, case, suppression: bool, files: dict, sanity: bool = False) -> bool | None:  # noqa: ANN001
    """True iff the case is a counter-example to the claim (premise passes, merged block fails); None when the
    premise cannot pass (no parameter makes it pass, or class IV)."""
    values, a, b, extra, params = case
    params = _resolve(params, files)
    total = a + b + extra
    premise = _counts(fam, values, [a] if suppression else [a, b], total)
    model = fam.calibrate(params, premise)
    if model is None:
        return None
    if not model.check(premise).passed.all():
        assert not sanity or getattr(model, "adversary", None) == "IV", "calibration must make the premise pass"
        return None
    merged = _counts(fam, values, [a + b], total)
    return not bool(model.check(merged).passed.all())


def _claims(fam: Family, params: dict) -> Properties:
    return fam.claim(params)


def claim_property(fam: Family, suppression: bool, hierarchy_files: dict):  # noqa: ANN201
    """The hypothesis property behind a family's declared claim."""

    @PROPERTY
    @given(cases(fam))
    def prop(case):
        claim = _claims(fam, case[4])
        declared = claim.monotone_with_suppression if suppression else claim.monotone
        if declared:
            outcome = violates(fam, case, suppression, hierarchy_files, sanity=True)
            if getattr(claim, "note", "").startswith("class IV"):
                assert outcome is None  # vacuous: class IV never passes
                return
            assume(outcome is not None)  # only cases whose premise passes count (health check: enough)
            assert not outcome, claim

    return prop


@pytest.mark.parametrize("suppression", [False, True], ids=["monotone", "with-suppression"])
@pytest.mark.parametrize("fam", FAMILIES, ids=[f.name for f in FAMILIES])
def test_declared_claims_hold(fam: Family, suppression: bool, hierarchy_files):
    """Every case whose family declares the claim: the property holds."""
    claim_property(fam, suppression, hierarchy_files)()


@pytest.mark.parametrize("name", ["entropy-l", "t-closeness-ordered", "delta-l-diversity"])
def test_the_property_fails_on_a_false_claim(name: str, hierarchy_files):
    """The harness can fail: claiming monotonicity (with suppression) for these models is caught."""
    fam = next(f for f in FAMILIES if f.name == name)
    liar = Family(
        fam.name, fam.setup, fam.calibrate, lambda p: Properties(True, True, fam.claim(p).needs), fam.numeric, fam.joint
    )
    with pytest.raises(AssertionError):
        claim_property(liar, True, hierarchy_files)()


FALSE_CLAIMS = [
    ("frequency-l", True, None),
    ("entropy-l", True, None),
    ("recursive-cl", True, None),
    ("pd-recursive-cl", True, None),
    ("npd-recursive-cl", True, None),
    ("multi-attribute", True, "distinct"),
    ("multi-attribute", True, "entropy"),
    ("t-closeness-equal", True, None),
    ("t-closeness-ordered", True, None),
    ("t-closeness-hierarchical", True, None),
    ("epsilon-privacy", True, "I"),
    ("epsilon-privacy", True, "II"),
    ("epsilon-privacy", True, "III"),
    ("em-anonymity", False, "absolute"),
    ("em-anonymity", False, "relative"),
    ("delta-l-diversity", False, None),
    ("em-anonymity", True, None),
    ("delta-l-diversity", True, None),
]


@pytest.mark.parametrize(
    "name, suppression, variant", FALSE_CLAIMS, ids=[f"{n}-{'supp' if s else 'mono'}-{v}" for n, s, v in FALSE_CLAIMS]
)
def test_false_claims_have_counterexamples(name: str, suppression: bool, variant, hierarchy_files):
    """Every claim declared False: hypothesis finds a counter-example (and the declaration is indeed False)."""
    fam = next(f for f in FAMILIES if f.name == name)

    def wanted(case) -> bool:  # noqa: ANN001
        p = case[4]
        if variant is not None and variant not in (p.get("inst"), p.get("adversary"), p.get("mode")):
            return False
        claim = _claims(fam, p)
        declared = claim.monotone_with_suppression if suppression else claim.monotone
        return not declared and bool(violates(fam, case, suppression, hierarchy_files))

    example = find(
        cases(fam),
        wanted,
        settings=settings(
            max_examples=20000,
            database=None,
            deadline=None,
            phases=[Phase.generate],
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        ),
    )
    assert wanted(example)


# --- the notes' counter-examples, verbatim -----------------------------------------------------------------------


def _two(values, a, b, total=None, numeric=False):  # noqa: ANN001
    tot = np.asarray(total) if total is not None else np.asarray(a) + np.asarray(b)
    dom = domain("s", values, tot, numeric=numeric)
    return nodes([a], dom), nodes([np.asarray(a) + np.asarray(b)], dom)


def test_note_counterexamples():
    ab = ["a", "b"]
    # frequency l=2: {a,b} passes; with {a,a,a}: {a×4, b} r1/n = 4/5 > 1/2
    part, union = _two(ab, [1, 1], [3, 0])
    m = FrequencyLDiversity(l=2, attribute="s")
    assert m.check(part).passed.all() and not m.check(union).passed.any()
    # entropy l=2: {a,b} (ln 2) with {a×10}: {a×11, b}: H = 0.29 < ln 2
    part, union = _two(ab, [1, 1], [10, 0])
    m = EntropyLDiversity(l=2, attribute="s")
    assert m.check(part).passed.all() and not m.check(union).passed.any()
    assert math.log(m.check(union).achieved) == pytest.approx(0.2868, abs=1e-4)
    # recursive (2,2): {a,b}: 1 < 2·1; with {a,a,a}: 4 < 2·1 false
    part, union = _two(ab, [1, 1], [3, 0])
    m = RecursiveCLDiversity(c=2, l=2, attribute="s")
    assert m.check(part).passed.all() and not m.check(union).passed.any()
    # npd c2 = 50 on w: {w,a} has w at 50%; with {a,a}: 25%
    part, union = _two(["a", "w"], [1, 1], [2, 0])
    m = NpdRecursiveCLDiversity(c1=2, c2=50, l=1, allowed=(), protected=("w",), attribute="s")
    assert m.check(part).passed.all() and not m.check(union).passed.any()
    # multi-attribute distinct l=2: {(a,p),(a,q),(b,p),(b,q)} with {(c,r)}: sub-block V=r holds only S=c
    s = domain("S", ["a", "b", "c"], [2, 2, 1], numeric=False)
    w = domain("V", ["p", "q", "r"], [2, 2, 1], numeric=False)
    j = np.zeros((3, 3), dtype=np.int64)
    j[0, 0] = j[0, 1] = j[1, 0] = j[1, 1] = 1
    k = np.zeros((3, 3), dtype=np.int64)
    k[2, 2] = 1
    m = MultiAttributeLDiversity(instantiation="distinct", l=2)
    assert m.check(joint_nodes([j], (s, w))).passed.all()
    assert not m.check(joint_nodes([j + k], (s, w))).passed.any()
    # t-closeness t=0.3, table {a×10, b×10}: {a,b} (EMD 0) with {a×9}: {a×10, b}: EMD 10/11 - 1/2 = 0.41
    part, union = _two(ab, [1, 1], [9, 0], total=[10, 10])
    m = TCloseness(t=0.3, distance="equal", attribute="s")
    assert m.check(part).passed.all() and not m.check(union).passed.any()
    assert m.check(union).achieved == pytest.approx(10 / 11 - 0.5)
    # ε-privacy class III uniform, ε=2: {a,b} x = 1/2 <= 3/4; with {a×4}: x(a) = 5/6 > 1 - 1/2·1/2 = 3/4
    part, union = _two(ab, [1, 1], [4, 0])
    m = EpsilonPrivacy(epsilon=2, adversary="III", prior="uniform", attribute="s")
    assert m.check(part).passed.all() and not m.check(union).passed.any()
