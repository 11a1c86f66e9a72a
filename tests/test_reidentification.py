"""Re-identification risk estimators (veil.reidentification, docs/reidentification.md): each against a hand
computation, the population-uniqueness models against ARX 3.9's own estimators on the same histograms (values
produced by ARX's ``org.deidentifier.arx.risk`` classes through the harness of docs/reidentification.md §6),
and the special functions against scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from veil.reidentification import newton
from veil.reidentification.classes import ClassSizes
from veil.reidentification.journalist import journalist, marketer
from veil.reidentification.pitman import pitman
from veil.reidentification.prosecutor import classes_to_suppress, prosecutor
from veil.reidentification.snb import shlosser, snb
from veil.reidentification.special import digamma, hypergeom_one, trigamma
from veil.reidentification.summary import summarize
from veil.reidentification.uniqueness import dankar, population_uniqueness, sample_uniques
from veil.reidentification.zayatz import zayatz

# Adult (age, sex, race, marital-status, education; N = 30,162) sampled at 1%, 10%, 50%
# (bench/bench_uniqueness.py, seed 38), and ARX 3.9's estimates of the population uniques on each.
ARX = [
    (
        30162,
        [[1, 221], [2, 29], [3, 6], [5, 1]],
        {"pitman": 1146.2024632063078, "zayatz": 16212.989855757189, "snb": 0.0, "dankar": 1146.2024632063078},
    ),
    (
        30162,
        [
            [1, 1055],
            [2, 214],
            [3, 81],
            [4, 39],
            [5, 31],
            [6, 26],
            [7, 17],
            [8, 17],
            [9, 13],
            [10, 11],
            [11, 4],
            [12, 3],
            [13, 10],
            [14, 4],
            [15, 5],
        ],
        {"pitman": 3892.4089544020785, "zayatz": 4923.635122588888, "snb": 0.0, "dankar": 3892.4089544020785},
    ),
    (
        30162,
        [[1, 229], [2, 33], [3, 1], [4, 1]],  # ARX's Pitman does not converge: Dankar falls back to Zayatz
        {"pitman": 0.0, "zayatz": 17390.908790774316, "snb": 0.0, "dankar": 17390.908790774316},
    ),
    (
        10000,
        [[1, 300], [2, 100], [3, 50], [5, 20], [10, 15]],
        {"pitman": 667.6443628350709, "zayatz": 1353.0343079349193, "snb": 0.0, "dankar": 667.6443628350709},
    ),
]


def test_class_sizes_histogram() -> None:
    h = ClassSizes([4, 1, 1, 2], [1, 1, 1, 0])
    assert h.document() == [[1, 2], [4, 1]] and (h.records, h.classes, h.of_size(1)) == (6, 3, 2)
    assert h.without_smallest(1).document() == [[1, 1], [4, 1]] and h.rows_of_smallest(3) == 6


def test_prosecutor_by_hand() -> None:
    """Classes 1, 1, 2, 4 (n = 8, u = 4): highest 1, lowest 1/4, average u/n = 1/2; at threshold 0.2 every record
    is at risk (1/4 > 0.2), at 0.25 only the four records of classes below 4 (1/4 is not above 0.25)."""
    r = prosecutor(ClassSizes.of([1, 1, 2, 4]), threshold=0.2)
    assert (r.highest, r.lowest, r.average, r.records_at_risk) == (1.0, 0.25, 0.5, 1.0)
    assert prosecutor(ClassSizes.of([1, 1, 2, 4]), threshold=0.25).records_at_risk == 0.5
    assert prosecutor(ClassSizes.of([5, 5]), threshold=0.2).records_at_risk == 0.0  # 1/5 is not above 0.2
    assert prosecutor(ClassSizes.of([])).average == 0.0


def test_suppression_for_average_risk_is_the_fewest_records() -> None:
    """Smallest first is optimal: brute force over every subset of classes on small tables."""
    rng = np.random.default_rng(1)
    for _ in range(200):
        sizes = rng.integers(1, 8, size=rng.integers(1, 8))
        t = float(rng.choice([0.1, 0.2, 0.3, 0.5]))
        m = classes_to_suppress(ClassSizes.of(sizes), t)
        ordered = np.sort(sizes)
        best = min(
            int(sizes[[i for i in range(len(sizes)) if mask >> i & 1]].sum())
            for mask in range(1 << len(sizes))
            if (len(sizes) - bin(mask).count("1"))
            <= t * (sizes.sum() - sum(sizes[i] for i in range(len(sizes)) if mask >> i & 1))
        )
        assert int(ordered[:m].sum()) == best


def test_journalist_and_marketer_by_hand() -> None:
    r = journalist([1, 2], [4, 2], threshold=0.3)
    assert (r.highest, r.lowest) == (0.5, 0.25)
    assert r.average == pytest.approx(max(2 / 6, (1 / 4 + 2 / 2) / 3))
    assert r.records_at_risk == pytest.approx(2 / 3)
    assert marketer([1, 2], [4, 2]) == pytest.approx((1 / 4 + 1) / 3)
    # ARX's rC takes the larger of u / ΣF = 2/3 and Σ(f/F)/n = (1/2 + 1)/2 = 3/4
    assert journalist([1, 1], [2, 1]).average == pytest.approx(3 / 4)
    with pytest.raises(ValueError, match="must contain the sample"):
        journalist([3], [2])


def test_without_a_population_journalist_is_prosecutor() -> None:
    s = summarize(ClassSizes.of([1, 1, 2, 4]), subject="t", threshold=0.2)
    assert s.journalist.document() == s.prosecutor.document() and s.marketer == 0.5 and s.uniqueness is None


def test_zayatz_by_hand() -> None:
    """N = 6, sample 1 + 2: H(6,1,3) = 1/2, H(6,2,3) = 2·C(4,2)/C(6,3) = 3/5; P = (1/2 · 1/2) / (1/2 · 1/2 +
    1/2 · 3/5) = 5/11; estimate 1 · 5/11 / (3/6)."""
    assert hypergeom_one(6, 2, 3) == pytest.approx(0.6)
    assert zayatz(ClassSizes.of([1, 2]), 6) == pytest.approx(10 / 11)
    assert zayatz(ClassSizes.of([1, 1, 2, 4]), 8) == pytest.approx(2.0)  # a census: its uniques are the population's
    assert zayatz(ClassSizes.of([2, 2]), 100) == 0.0


def test_snb_at_full_sampling_is_the_sample_uniques() -> None:
    """π = 1: K = u and E[c1] = K β^α, so the estimate K β^α is exactly c(1)."""
    h = ClassSizes([1, 2, 3], [30, 10, 5])
    assert shlosser(h, 1.0) == 45.0
    assert snb(h, h.records) == pytest.approx(30.0, rel=1e-6)


def test_shlosser_by_hand() -> None:
    """π = 1/2, classes 1 (×2) and 2 (×1): Σ iπ²(1-π²)^(i-1)c = 2·1/4 + 2·1/4·3/4 = 7/8;
    Σ (1-π)^i((1+π)^i - 1)c = 2·1/2·1/2 + 1/4·5/4 = 13/16; Σ (1-π)^i c = 1 + 1/4 = 5/4; Σ iπ(1-π)^(i-1)c =
    2·1/2 + 2·1/2·1/2 = 3/2; K = 3 + 2 · (7/8)/(13/16) · (5/6)² = 3 + 2 · 14/13 · 25/36."""
    assert shlosser(ClassSizes([1, 2], [2, 1]), 0.5) == pytest.approx(3 + 2 * 14 / 13 * 25 / 36)


@pytest.mark.parametrize("population, histogram, expected", ARX)
def test_uniqueness_equals_arx(population: int, histogram: list[list[int]], expected: dict[str, float]) -> None:
    h = ClassSizes(*zip(*histogram))
    z = zayatz(h, population)
    assert z == pytest.approx(expected["zayatz"], rel=1e-9)
    p = pitman(h, population)
    if expected["pitman"]:
        assert p == pytest.approx(expected["pitman"], rel=1e-5)  # Newton-Raphson to ARX's accuracy (1e-6)
    else:
        assert math.isnan(p)
    model, value = dankar(h, population)
    assert value == pytest.approx(expected["dankar"], rel=1e-5)
    assert model == ("pitman" if expected["pitman"] else "zayatz")
    assert math.isnan(snb(h, population, variant="arx"))  # ARX's SNB equations have no root here either


def test_dankar_rule() -> None:
    h = ClassSizes(*zip(*ARX[1][1]))  # 10% sample: π <= 0.1 → Pitman
    assert dankar(h, 30160)[0] == "pitman"
    big = ClassSizes(*zip(*ARX[1][1]))  # same histogram as a 50% sample: min(Zayatz, SNB)
    model, value = dankar(big, 2 * big.records)
    assert model in ("zayatz", "snb")
    z, s = zayatz(big, 2 * big.records), snb(big, 2 * big.records)
    assert value == pytest.approx(min(z, s) if not math.isnan(s) else z)
    assert dankar(ClassSizes.of([2, 3]), 100) == ("dankar", 0.0)


def test_population_uniqueness_document() -> None:
    u = population_uniqueness(ClassSizes(*zip(*ARX[3][1])), 10_000)
    doc = u.document()
    assert doc["sampling_fraction"] == pytest.approx(0.09) and doc["dankar_model"] == "pitman"
    assert doc["population_uniques"]["zayatz"] == pytest.approx(ARX[3][2]["zayatz"] / 10_000)
    assert sample_uniques(ClassSizes(*zip(*ARX[3][1]))) == pytest.approx(300 / 900)
    with pytest.raises(ValueError, match="cannot hold"):
        population_uniqueness(ClassSizes.of([1, 2]), 2)


def test_special_functions_against_scipy() -> None:
    special = pytest.importorskip("scipy.special")
    stats = pytest.importorskip("scipy.stats")
    for x in (0.01, 0.5, 1.0, 3.7, 12.0, 250.5, 1e5):
        assert digamma(x) == pytest.approx(float(special.digamma(x)), rel=1e-12, abs=1e-12)
        assert trigamma(x) == pytest.approx(float(special.polygamma(1, x)), rel=1e-12)
    for big, k, n in ((30162, 1, 302), (30162, 7, 3016), (100, 3, 50), (10, 10, 10), (5, 2, 5)):
        assert hypergeom_one(big, k, n) == pytest.approx(
            float(stats.hypergeom.pmf(1, big, k, n)), rel=1e-10, abs=1e-300
        )


def test_newton_gives_nan_without_a_root() -> None:
    assert np.isnan(newton.solve(lambda v: np.array([v[0] ** 2 + 1, v[1]]), None, (1.0, 1.0))).all()


def test_the_report_section_reads_the_same_summary() -> None:
    """The report's risk section (``report.content.reidentification_view``): the source's and the published
    blocks' figures, population uniqueness from a ``population-uniqueness`` model's sampling fraction."""
    from veil.models.risk import PopulationUniqueness
    from veil.report.content import reidentification_view

    docs = reidentification_view(
        [PopulationUniqueness(0.1, "zayatz", sampling_fraction=1.0)], np.array([1, 1, 2, 4]), np.array([4, 4])
    )
    assert [d["subject"] for d in docs] == ["source", "published"]
    assert docs[0]["prosecutor"]["average"] == 0.5 and docs[1]["prosecutor"]["average"] == 0.25
    assert docs[0]["population_uniqueness"]["population_uniques"]["zayatz"] == 0.25
    assert reidentification_view([], None, np.array([2]))[0]["population_uniqueness"] is None
