"""The registry: config tables → models, with errors naming the model and the parameter."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from veil.errors import ConfigError
from veil.models import MODELS, Model, Needs, build
from tests.models.modeltest_lib import domain, nodes

WHERE = "veil.toml: [[models]] #1"

MINIMAL = {
    "k-anonymity": {"k": 2},
    "distinct-l-diversity": {"l": 2},
    "frequency-l-diversity": {"l": 1.5},
    "entropy-l-diversity": {"l": 2},
    "recursive-cl-diversity": {"c": 3, "l": 2},
    "pd-recursive-cl-diversity": {"c": 3, "l": 2, "allowed": ["flu"]},
    "npd-recursive-cl-diversity": {"c1": 3, "c2": 10, "l": 2, "protected": ["hiv"]},
    "multi-attribute-l-diversity": {"instantiation": "recursive", "l": 2, "c": 3},
    "t-closeness": {"t": 0.2, "distance": "equal"},
    "nt-closeness": {"n": 5, "t": 0.2, "distance": "equal"},
    "em-anonymity": {"epsilon": 1000, "m": 2, "attribute": "salary"},
    "delta-l-diversity": {"delta": 500, "l": 2, "attribute": "salary"},
    "epsilon-privacy": {"epsilon": 3, "adversary": "II", "stubbornness": 1000},
    "average-risk": {"threshold": 0.1},
    "population-uniqueness": {"threshold": 0.1, "sampling_fraction": 0.5},
}
TABLE_LEVEL = ("k-anonymity", "multi-attribute-l-diversity", "average-risk", "population-uniqueness")


def make(kind, sensitive=("disease",), base_dir=Path("."), **params):
    return build({"type": kind, **params}, where=WHERE, sensitive=sensitive, base_dir=base_dir)


def test_every_type_is_registered_and_builds():
    assert set(MODELS) == set(MINIMAL)
    for kind, params in MINIMAL.items():
        sensitive = ("disease", "salary") if "attribute" in params else ("disease",)
        m = make(kind, sensitive=sensitive, **params)
        assert isinstance(m, Model) and m.type == kind
        assert isinstance(m.describe(), str) and m.describe()
        assert isinstance(m.properties.needs, Needs)
        assert m.attribute == (None if kind in TABLE_LEVEL else params.get("attribute", "disease"))


def test_each_reference_sample_builds():
    """The sample the config reference parses (``Reference.sample``, docs/gen_reference.py) is a valid table."""
    for kind, cls in MODELS.load_all().items():
        m = make(kind, sensitive=("s", "n"), **cls.reference.sample)
        assert type(m) is cls and cls.reference.achieved


def test_an_unknown_or_missing_type_lists_the_registered_ones():
    known = ", ".join(sorted(MINIMAL))
    with pytest.raises(ConfigError, match=rf"unknown model type 'k-anon'; known types: {known}$"):
        make("k-anon", k=2)
    with pytest.raises(ConfigError, match=rf"missing required key 'type' \(one of {known}\)"):
        build({"k": 2}, where=WHERE, sensitive=(), base_dir=Path("."))


def test_models_check_a_small_table():
    dis = domain("disease", ["cold", "flu", "hiv"], [3, 3, 2], numeric=False)
    sal = domain("salary", [1000, 2000, 5000], [3, 3, 2])
    from veil.counts import NodeCounts

    codes = np.array([[0, 0, 0], [0, 1, 1], [0, 2, 2], [1, 0, 1], [1, 1, 0], [1, 2, 2]])
    nc = NodeCounts.from_cells(("q",), (0,), codes[:, :1], codes[:, 1:], np.array([2, 1, 1, 1, 2, 1]), (2,), (dis, sal))
    for kind, params in MINIMAL.items():
        if kind == "nt-closeness":
            continue  # needs hierarchies: tests/models/test_closeness.py
        m = make(
            kind,
            sensitive=("disease", "salary"),
            **{"attribute": "disease", **params} if kind not in TABLE_LEVEL else params,
        )
        m.validate({"disease": dis, "salary": sal})
        v = m.check(nc)
        assert v.passed.shape == (2,) and v.passed.dtype == bool


def test_hierarchy_path_is_relative_to_the_config(tmp_path):
    m = make("t-closeness", t=0.2, distance="hierarchical", hierarchy={"csv": "h/disease.csv"}, base_dir=tmp_path)
    assert m.hierarchy == str(tmp_path / "h" / "disease.csv")
    assert m.delimiter == ";"
    m = make("nt-closeness", n=3, t=0.2, distance="hierarchical", hierarchy={"csv": "/abs/d.csv", "delimiter": ","})
    assert m.hierarchy == "/abs/d.csv" and m.delimiter == ","


@pytest.mark.parametrize(
    "kind, params, match",
    [
        ("k-anonymity", {"k": 0}, r"\(k-anonymity\): parameter 'k' must be a whole number >= 1"),
        ("k-anonymity", {"k": 2, "l": 3}, r"unknown parameter\(s\) 'l'"),
        ("distinct-l-diversity", {}, r"\(distinct-l-diversity\): missing required parameter 'l'"),
        ("distinct-l-diversity", {"l": 0}, r"parameter 'l' must be >= 1"),
        ("entropy-l-diversity", {"l": "two"}, r"parameter 'l' must be a finite number"),
        ("recursive-cl-diversity", {"c": -1, "l": 2}, r"parameter 'c' must be > 0"),
        ("pd-recursive-cl-diversity", {"c": 1, "l": 2}, r"missing required parameter 'allowed'"),
        ("pd-recursive-cl-diversity", {"c": 1, "l": 2, "allowed": "flu"}, r"parameter 'allowed' must be a list"),
        ("npd-recursive-cl-diversity", {"c1": 1, "c2": 101, "l": 2, "protected": []}, r"parameter 'c2' must be <= 100"),
        (
            "multi-attribute-l-diversity",
            {"instantiation": "distinct", "l": 2, "attribute": "disease"},
            r"unknown parameter\(s\) 'attribute'",
        ),
        ("multi-attribute-l-diversity", {"instantiation": "recursive", "l": 2}, r"missing required parameter 'c'"),
        ("multi-attribute-l-diversity", {"instantiation": "distinct", "l": 2, "c": 2}, r"parameter 'c' only applies"),
        ("t-closeness", {"t": 1.2, "distance": "equal"}, r"\(t-closeness\): parameter 't' must be <= 1"),
        ("t-closeness", {"t": 0.2}, r"missing required parameter 'distance'"),
        ("t-closeness", {"t": 0.2, "distance": "hierarchical"}, r"missing required parameter 'hierarchy'"),
        (
            "t-closeness",
            {"t": 0.2, "distance": "hierarchical", "hierarchy": "x.csv"},
            r"parameter 'hierarchy' must be a table",
        ),
        ("t-closeness", {"t": 0.2, "distance": "hierarchical", "hierarchy": {"file": "x"}}, r"must be a table"),
        ("t-closeness", {"t": 0.2, "distance": "equal", "attribute": "age"}, r"parameter 'attribute' names 'age'"),
        ("nt-closeness", {"n": 0, "t": 0.2, "distance": "equal"}, r"parameter 'n' must be >= 1"),
        ("em-anonymity", {"epsilon": -5, "m": 2}, r"\(em-anonymity\): parameter 'epsilon' must be >= 0"),
        ("em-anonymity", {"epsilon": 5, "m": 2, "mode": "ratio"}, r"parameter 'mode' must be one of"),
        ("delta-l-diversity", {"delta": -1, "l": 2}, r"\(delta-l-diversity\): parameter 'delta' must be >= 0"),
        ("epsilon-privacy", {"epsilon": 1, "adversary": "II", "stubbornness": 9}, r"parameter 'epsilon' must be > 1"),
        ("epsilon-privacy", {"epsilon": 2, "adversary": "I"}, r"class I needs parameter 'prior'"),
        ("epsilon-privacy", {"epsilon": 2, "adversary": "I", "prior": "uniform"}, r"needs parameter 'stubbornness'"),
        ("epsilon-privacy", {"epsilon": 2, "adversary": "III", "prior": 5}, r"parameter 'prior' must be a table"),
        (
            "epsilon-privacy",
            {"epsilon": 2, "adversary": "III", "prior": {"flu": 0}},
            r"parameter 'prior.flu' must be > 0",
        ),
        (
            "epsilon-privacy",
            {"epsilon": 2, "adversary": "II", "stubbornness": 9, "known_rows": -1},
            r"parameter 'known_rows' must be >= 0",
        ),
    ],
)
def test_parameter_errors_name_model_and_parameter(kind, params, match):
    with pytest.raises(ConfigError, match=match) as info:
        make(kind, **params)
    assert str(info.value).startswith(WHERE)


def test_attribute_required_with_several_sensitive_columns():
    with pytest.raises(ConfigError, match=r"missing parameter 'attribute' \(several sensitive columns"):
        make("entropy-l-diversity", sensitive=("disease", "salary"), l=2)
    assert make("entropy-l-diversity", sensitive=("disease", "salary"), l=2, attribute="salary").attribute == "salary"


def test_validate_against_the_data():
    dis = domain("disease", ["cold", "flu", "hiv"], [3, 3, 2], numeric=False)
    domains = {"disease": dis}
    with pytest.raises(ConfigError, match=r"\(em-anonymity\): parameter 'attribute'.*not numeric"):
        make("em-anonymity", epsilon=1, m=2).validate(domains)
    with pytest.raises(ConfigError, match=r"\(delta-l-diversity\): parameter 'attribute'.*not numeric"):
        make("delta-l-diversity", delta=1, l=2).validate(domains)
    with pytest.raises(ConfigError, match=r"\(t-closeness\): parameter 'attribute'.*not numeric"):
        make("t-closeness", t=0.1, distance="ordered").validate(domains)
    with pytest.raises(ConfigError, match=r"\(epsilon-privacy\): parameter 'prior' names value\(s\).*'measles'"):
        make("epsilon-privacy", epsilon=2, adversary="III", prior={"flu": 1, "measles": 2}).validate(domains)
    with pytest.raises(ConfigError, match=r"parameter 'prior' misses value\(s\)"):
        make("epsilon-privacy", epsilon=2, adversary="I", prior={"flu": 10}).validate(domains)
    with pytest.raises(ConfigError, match=r"\(pd-recursive-cl-diversity\): parameter 'allowed'.*'healthy'"):
        make("pd-recursive-cl-diversity", c=2, l=2, allowed=["healthy"]).validate(domains)
    make("epsilon-privacy", epsilon=2, adversary="I", prior={"flu": 10, "cold": 3, "hiv": 1}).validate(domains)
    make("epsilon-privacy", epsilon=2, adversary="I", prior="table", stubbornness=50).validate(domains)


def test_epsilon_prior_table_reaches_the_model():
    dis = domain("disease", ["cancer", "flu"], [5000, 20000], numeric=False)
    m = make("epsilon-privacy", epsilon=4.001, adversary="I", prior={"flu": 12000, "cancer": 18000})
    nc = nodes([[2000, 18000]], dis)
    assert m.check(nc).achieved == pytest.approx(200010 / 49999)
