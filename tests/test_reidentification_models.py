"""Risk as privacy models (veil.models.risk): ``average-risk`` and ``population-uniqueness`` built from config
tables, their verdicts by hand, and the monotonicity each declares checked with hypothesis (SPEC §6: merging
two classes of a passing table — what generalization does — keeps it passing, or the model says it may not)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.counts import NodeCounts
from veil.errors import ConfigError
from veil.models import build
from veil.models.risk import AverageRisk, PopulationUniqueness
from veil.privacy import Specification
from veil.reidentification.classes import ClassSizes


def counts(sizes: list[int]) -> NodeCounts:
    m = len(sizes)
    return NodeCounts.from_cells(("q",), (0,), np.arange(m).reshape(m, 1), np.zeros((m, 0)), np.asarray(sizes), (m,))


def merged(sizes: list[int], i: int, j: int) -> list[int]:
    rest = [s for k, s in enumerate(sizes) if k not in (i, j)]
    return [*rest, sizes[i] + sizes[j]]


def make(table: dict) -> object:
    return build(table, where="veil.toml: [[models]] #1", sensitive=(), base_dir=Path("."))


def test_built_from_config_and_described() -> None:
    assert (
        make({"type": "average-risk", "threshold": 0.1}).describe() == "average re-identification risk (threshold=0.1)"
    )
    m = make({"type": "population-uniqueness", "threshold": 0.01, "model": "pitman", "sampling_fraction": 0.1})
    assert m.describe() == "population uniqueness (threshold=0.01, pitman, sampling fraction 0.1)"
    assert not m.properties.monotone and m.properties.needs.value == "supersets"
    for bad, match in (
        ({"type": "average-risk", "threshold": 0}, "must be > 0"),
        ({"type": "population-uniqueness", "threshold": 0.1}, "give exactly one of"),
        ({"type": "population-uniqueness", "threshold": 0.1, "population": 10, "model": "x"}, "must be one of"),
        ({"type": "average-risk", "threshold": 0.1, "k": 2}, "unknown parameter"),
    ):
        with pytest.raises(ConfigError, match=match):
            make(bad)


def test_average_risk_by_hand() -> None:
    """Classes 1, 1, 10: u/n = 3/12 = 0.25.  At 0.25 it holds; at 0.2 one unique goes (2/11 <= 0.2); at 0.1 both
    uniques and then nothing but the empty table... 1/10 <= 0.1 holds after both uniques."""
    assert AverageRisk(0.25).check(counts([1, 1, 10])).passed.all()
    v = AverageRisk(0.2).check(counts([1, 1, 10]))
    assert v.passed.tolist() == [False, True, True] and v.achieved == pytest.approx(2 / 11)
    v = AverageRisk(0.1).check(counts([1, 1, 10]))
    assert v.passed.tolist() == [False, False, True] and v.achieved == pytest.approx(0.1)
    spec = Specification((AverageRisk(0.2),), max_suppression=0.1)  # 1 row of 12 within a budget of 1
    assert spec.evaluate(counts([1, 1, 10]), 12).passed
    assert not Specification((AverageRisk(0.2),)).evaluate(counts([1, 1, 10]), 12).passed


def test_population_uniqueness_by_hand() -> None:
    """A census (population = the sample's 8 records): Zayatz's estimate is the 2 sample uniques, 2/8 = 0.25.
    Below 0.25 one unique goes: sample 1, 2, 4 (n = 7, u = 3) of N = 8: H(8,1,7) = 7/8, H(8,2,7) = 2·C(6,6)/C(8,7)
    = 1/4, H(8,4,7) = 0, so P = (7/8) / (7/8 + 1/4) = 7/9 and the estimate 1 · 7/9 / (7/8) = 8/9 uniques: 1/9."""
    m = PopulationUniqueness(threshold=0.25, model="zayatz", population=8)
    v = m.check(counts([1, 1, 2, 4]))
    assert v.passed.all() and v.achieved == pytest.approx(0.25)
    v = PopulationUniqueness(threshold=0.2, model="zayatz", population=8).check(counts([1, 1, 2, 4]))
    assert v.passed.tolist() == [False, True, True, True] and v.achieved == pytest.approx(1 / 9)
    assert PopulationUniqueness(0.01, "dankar", sampling_fraction=0.5).check(counts([2, 3])).achieved == 0.0


@settings(max_examples=300)
@given(st.lists(st.integers(1, 30), min_size=2, max_size=25), st.sampled_from([0.05, 0.1, 0.2, 0.34, 0.5]), st.data())
def test_average_risk_is_monotone(sizes: list[int], threshold: float, data: st.DataObject) -> None:
    """Declared monotone: a table that passes still passes once two of its classes merge (u falls, n stays)."""
    model = AverageRisk(threshold)
    assert model.properties.monotone
    before = model.check(counts(sizes))
    i, j = data.draw(st.lists(st.integers(0, len(sizes) - 1), min_size=2, max_size=2, unique=True))
    after = model.check(counts(merged(sizes, i, j)))
    assert after.achieved <= before.achieved + 1e-15 or not before.passed.all()
    if before.passed.all():
        assert after.passed.all()


def test_average_risk_suppresses_no_more_when_merged() -> None:
    """Rows the model itself suppresses never grow when two classes merge (the optimum at the merged table is at
    most the rows of the classes kept before, merged or not) — checked on every pair of small tables."""
    rng = np.random.default_rng(38)
    for _ in range(300):
        sizes = rng.integers(1, 9, size=rng.integers(2, 9)).tolist()
        t = float(rng.choice([0.1, 0.2, 0.3, 0.5]))
        i, j = rng.choice(len(sizes), 2, replace=False)
        rows = [int(np.asarray(s)[~AverageRisk(t).check(counts(s)).passed].sum()) for s in (sizes, merged(sizes, i, j))]
        assert rows[1] <= rows[0]


@pytest.mark.parametrize(
    "model, sizes, population, threshold, i, j",
    [
        ("zayatz", [1, 1, 1, 2, 3, 3, 4, 4, 5, 5], 58, 0.05, 9, 5),  # 0.0434 → 0.0506 once 5 and 3 merge
        ("dankar", [1, 4, 5, 5], 75, 0.01, 2, 1),  # 0.0091 → 0.0143 once 5 and 4 merge
    ],
)
def test_population_uniqueness_is_not_monotone(
    model: str, sizes: list[int], population: int, threshold: float, i: int, j: int
) -> None:
    """The counter-examples behind the declaration: a passing table whose two merged classes fail."""
    m = PopulationUniqueness(threshold, model, population=population)
    assert not m.properties.monotone and not m.properties.monotone_with_suppression
    assert m.holds(ClassSizes.of(sizes), population)
    assert not m.holds(ClassSizes.of(merged(sizes, i, j)), population)


def test_hypothesis_finds_population_uniqueness_non_monotone() -> None:
    """Were Zayatz's estimate monotone, merging two classes of a passing table could never make it fail: hypothesis
    looks for the opposite and must find it (``find`` raises when it cannot)."""
    from hypothesis import find

    def breaks(case: tuple[list[int], int, int, int]) -> bool:
        s, f, i, j = case
        if i == j or max(i, j) >= len(s):
            return False
        big = sum(s) * f
        m = PopulationUniqueness(0.05, "zayatz", population=big)
        return m.holds(ClassSizes.of(s), big) and not m.holds(ClassSizes.of(merged(s, i, j)), big)

    found = find(
        st.tuples(
            st.lists(st.integers(1, 5), min_size=4, max_size=10),
            st.sampled_from([5, 10]),
            st.integers(0, 9),
            st.integers(0, 9),
        ),
        breaks,
        settings=settings(max_examples=20_000, database=None),
    )
    assert breaks(found)
