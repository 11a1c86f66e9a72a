"""What a night of a cohort series reads (``cohort_series._histograms``, docs/series.md §8): the members table
grouped once into ``veil_histograms``; value by value only the waiting rows and the cohorts whose stand-ins may
leave tonight, the other cohorts by their sizes — and the plan made from that is the plan made from every cohort's
histogram (``cohorts.by_size``, checked here in memory with hypothesis and on DuckDB and PostgreSQL against the
full read)."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import sqlalchemy as sa
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.backends import open_backend
from veil.models import DistinctLDiversity, KAnonymity
from veil.queries import members as mq
from veil.release import cohorts
from veil.release.cohort_series import _histograms
from veil.release.cohorts import Checks, Cohort, Histogram, decide
from veil.release.differences import Judge
from tests.conftest import Db

DISEASES = ("flu", "cold", "hiv")


def hist(*values: str) -> Histogram:
    keys = sorted(set(values))
    return [{"d": k} for k in keys], np.asarray([values.count(k) for k in keys], dtype=np.int64)


def checks(batch: int) -> Checks:
    judge = Judge((KAnonymity(k=2), DistinctLDiversity(attribute="d", l=2)), ("d",), {"d": False})
    table = {"d": dict.fromkeys(DISEASES, 10)}
    return Checks(judge, table, table, batch)


class Coins:
    def __init__(self, heads: Sequence[bool]) -> None:
        self.heads = heads

    def flip(self, kind: str, key: str) -> bool:  # keyed, as the real coins are: the same cohort, the same coin
        return self.heads[hash((kind, key)) % len(self.heads)]


values = st.lists(st.sampled_from(DISEASES), max_size=6)


@settings(max_examples=300)
@given(
    found=st.lists(st.tuples(values, values), max_size=8),
    batch=st.integers(1, 4),
    heads=st.lists(st.booleans(), min_size=1, max_size=8),
)
def test_sizes_decide_the_cohorts_a_night_does_not_read(
    found: list[tuple[list[str], list[str]]], batch: int, heads: list[bool]
) -> None:
    all_cohorts = [Cohort(i, hist(*live), hist(*gone)) for i, (live, gone) in enumerate(found)]
    undecided, sized = cohorts.by_size(all_cohorts, batch)
    one = decide({}, all_cohorts, checks(batch), Coins(heads))
    two = decide({}, undecided, checks(batch), Coins(heads), sized)
    assert (one.remove, one.leaving) == (two.remove, two.leaving)
    for c in undecided:  # what is read value by value: a cohort whose stand-ins may leave
        assert cohorts.rows(c.gone) >= batch and cohorts.rows(c.live) >= batch


@pytest.mark.parametrize("batch", [2, None])
def test_a_night_reads_values_of_only_the_cohorts_whose_stand_ins_may_leave(db: Db, batch: int | None) -> None:
    P, L, G = mq.PENDING, mq.LIVE, mq.GONE
    rows: list[tuple[Any, ...]] = [
        (P, None, "a*", "flu"),
        (P, None, "a*", "cold"),
        (P, None, "b*", None),
        *[(L, 1, "a*", d) for d in ("flu", "cold", "hiv")],  # cohort 1: 3 live, 2 standing in — may leave
        *[(G, 1, "a*", d) for d in ("flu", "hiv")],
        (G, 2, "b*", "flu"),  # cohort 2: everyone left — leaves whole
        (L, 3, "b*", "flu"),  # cohort 3: 1 live, 2 standing in — too few
        *[(G, 3, "b*", d) for d in ("cold", "cold")],
        *[(L, 4, "a*", d) for d in ("flu", "hiv")],  # cohort 4: nobody left — nothing to decide
        *[(G, 5, "b*", d) for d in ("hiv", "flu", "flu")],  # cohort 5: everyone left
    ]
    table = db.create_table(
        "census_members",
        {"veil_state": sa.SmallInteger, "veil_cohort": sa.BigInteger, "zip": sa.Text, "d": sa.Text},
        rows,
    )
    with open_backend(db.url).session() as session:
        s = SimpleNamespace(counted=("d",), wh=SimpleNamespace(attributes=("zip",)), session=session)
        everything = _histograms(s, table, None)  # type: ignore[arg-type]
        tonight = _histograms(s, table, batch)  # type: ignore[arg-type]
        session.rollback()
    assert [c.id for c in everything.cohorts] == [1, 2, 3, 4, 5]
    assert everything.rows == {P: 3, L: 6, G: 8}
    assert everything.joining == {"d": {"flu": 4, "cold": 2, "hiv": 2}}  # waiting and live, NULL left out
    assert everything.leaving == {"d": {"flu": 7, "cold": 3, "hiv": 4}}  # live and standing in
    for got in (tonight.pending, everything.pending):
        assert {k: (v, n.tolist()) for k, (v, n) in got.items()} == {
            "a*": ([{"d": "cold"}, {"d": "flu"}], [1, 1]),
            "b*": ([{"d": None}], [1]),
        }
    assert (tonight.joining, tonight.leaving, tonight.rows) == (everything.joining, everything.leaving, everything.rows)
    undecided, sized = cohorts.by_size(everything.cohorts, batch) if batch else (everything.cohorts, cohorts.Sized())
    assert [c.id for c in tonight.cohorts] == ([1] if batch else [1, 2, 3, 4, 5])
    assert tonight.sized == (cohorts.Sized((2, 5), 2) if batch else cohorts.Sized())
    assert [(c.id, c.live[1].tolist(), c.gone[1].tolist()) for c in tonight.cohorts] == [
        (c.id, c.live[1].tolist(), c.gone[1].tolist()) for c in undecided
    ]
    assert tonight.sized == sized
