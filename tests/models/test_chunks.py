"""Checkers process sparse histograms in slices of blocks (``common.CHUNK_CELLS`` cells); slicing must not change
any verdict or level."""

from __future__ import annotations

import numpy as np
import pytest

from veil.counts import NodeCounts, SensitiveDomain
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
from veil.models import common

ZIP = Hierarchy("zip", tuple(range(12)), (tuple(f"{v // 3}" for v in range(12)), tuple("*" for _ in range(12))))
AGE = Hierarchy("age", tuple(range(6)), (tuple(f"{v // 2}" for v in range(6)), tuple("*" for _ in range(6))))


@pytest.fixture(scope="module")
def counts(tmp_path_factory):
    rng = np.random.default_rng(7)
    cells = 600
    qi = np.column_stack([rng.integers(0, 12, cells), rng.integers(0, 6, cells)])
    s = rng.choice(8, size=cells, p=np.array([8, 6, 5, 4, 3, 2, 1, 1]) / 30)
    t = rng.integers(0, 3, cells)
    cnt = rng.integers(1, 6, cells)
    dom_s = SensitiveDomain(
        "s",
        np.array([10, 20, 25, 40, 50, 70, 90, 100]),
        np.bincount(s, weights=cnt, minlength=8).astype(np.int64),
        numeric=True,
    )
    dom_t = SensitiveDomain(
        "t", np.array(["a", "b", "c"], dtype=object), np.bincount(t, weights=cnt, minlength=3).astype(np.int64)
    )
    nc = NodeCounts.from_cells(
        ("zip", "age"), (0, 0), qi, np.column_stack([s, t]), cnt, (12, 6), (dom_s, dom_t), generalizers=(ZIP, AGE)
    )
    path = tmp_path_factory.mktemp("h") / "s.csv"
    path.write_text("".join(f"{v};g{v // 30};*\n" for v in (10, 20, 25, 40, 50, 70, 90, 100)))
    return nc, str(path)


def models(path):
    return [
        KAnonymity(k=8),
        DistinctLDiversity(l=3, attribute="s"),
        FrequencyLDiversity(l=2, attribute="s"),
        EntropyLDiversity(l=2.5, attribute="s"),
        RecursiveCLDiversity(c=2, l=3, attribute="s"),
        PdRecursiveCLDiversity(c=2, l=3, allowed=("10",), attribute="s"),
        NpdRecursiveCLDiversity(c1=2, c2=5, l=2, allowed=(), protected=("20",), attribute="s"),
        MultiAttributeLDiversity(instantiation="entropy", l=1.5),
        MultiAttributeLDiversity(instantiation="recursive", l=2, c=3),
        TCloseness(t=0.2, distance="equal", attribute="s"),
        TCloseness(t=0.2, distance="ordered", attribute="s"),
        TCloseness(t=0.2, distance="hierarchical", attribute="s", hierarchy=path),
        NTCloseness(n=40, t=0.15, distance="ordered", attribute="s"),
        EMAnonymity(epsilon=10, m=2, attribute="s"),
        EMAnonymity(epsilon=0.2, m=2, mode="relative", attribute="s"),
        DeltaLDiversity(delta=5, l=2, attribute="s"),
        EpsilonPrivacy(epsilon=4, adversary="I", prior="table", stubbornness=200, known_rows=1, attribute="s"),
        EpsilonPrivacy(epsilon=4, adversary="II", stubbornness=200, attribute="s"),
        EpsilonPrivacy(epsilon=4, adversary="III", prior="uniform", attribute="s"),
    ]


def test_slices_do_not_change_results(counts, monkeypatch):
    nc, path = counts
    assert nc.n_blocks > 40
    whole = [(m.check(nc).passed.tolist(), m.check(nc).achieved) for m in models(path)]
    monkeypatch.setattr(common, "CHUNK_CELLS", 5)
    sliced = [(m.check(nc).passed.tolist(), m.check(nc).achieved) for m in models(path)]
    for (wp, wa), (sp, sa), m in zip(whole, sliced, models(path)):
        assert wp == sp, m.describe()
        assert (wa is None and sa is None) or wa == pytest.approx(sa, rel=1e-12), m.describe()
    # the workload is not trivial: every model has passing and failing blocks or a finite level
    assert any(not all(p) for p, _ in whole) and any(any(p) for p, _ in whole)
