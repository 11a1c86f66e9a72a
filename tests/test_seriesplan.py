"""A cohort series' plan (``veil.release.seriesplan``, docs/series.md §2b): a cohort's expected stand-ins against
the rule of §2 played one departure at a time, and the share a node and a cohort size keep, by hand."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.release.seriesplan import GRID, Budget, Outlook, standing_in


def played(live: int, gone: int, batch: int, leaving: int) -> int:
    """The stand-ins §2's rule leaves once ``leaving`` of ``live`` people have left, one at a time: all of a
    cohort's stand-ins leave when they are ``batch`` or more and ``batch`` live rows stay; a cohort whose people
    all left leaves whole."""

    def settle(live: int, gone: int) -> int:
        return 0 if live == 0 or (gone >= batch and live >= batch) else gone

    gone = settle(live, gone)
    for _ in range(leaving):
        live, gone = live - 1, gone + 1
        gone = settle(live, gone)
    return gone


def test_a_small_cohort_by_hand() -> None:
    # 3 people, batch 2: 0 gone → 0; 1 → 1 (fewer than 2); 2 → 2 (one live row left: they cannot go); 3 → leaves whole
    # with each gone with probability ½: (0·1 + 1·3 + 2·3 + 0·1) / 8 = 9/8
    assert standing_in(3, 0, 2, np.array([0.5]))[0] == pytest.approx(9 / 8, abs=1e-9)
    assert standing_in(3, 0, 2, np.array([0.0]))[0] == pytest.approx(0.0, abs=1e-9)
    assert standing_in(3, 0, 2, np.array([1.0]))[0] == pytest.approx(0.0, abs=1e-9)  # all gone: the cohort left whole
    # 4 live and 1 standing, batch 2, one more gone for sure: 2 stand-ins, 3 live rows: they leave → 0
    assert standing_in(4, 1, 2, np.array([1e-13, 1.0]))[0] == pytest.approx(1.0, abs=1e-9)
    # a tail: 3 live (< batch 10) and 25 standing keep every stand-in until the last person has left
    assert standing_in(3, 25, 10, np.array([1e-13]))[0] == pytest.approx(25.0, abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 14), st.integers(0, 25), st.integers(2, 6), st.floats(0.0, 1.0))
def test_the_expected_stand_ins_are_the_rule_played_out(live: int, gone: int, batch: int, p: float) -> None:
    """``standing_in`` is the expectation of ``played`` over a binomial number of leavers."""
    expected = sum(
        _choose(live, d) * p**d * (1 - p) ** (live - d) * played(live, gone, batch, d) for d in range(live + 1)
    )  # the binomial weights computed directly, not through the module's logarithms
    assert standing_in(live, gone, batch, np.array([p]))[0] == pytest.approx(expected, abs=1e-9)


def _choose(n: int, k: int) -> int:
    return len(list(itertools.combinations(range(n), k)))


def test_the_share_of_a_node_by_hand() -> None:
    # no churn: only the rows gathering a cohort wait, (size − 1) / 2 a block — 4 blocks of cohorts of 2: 2 rows;
    # and two cohorts of 5 live and 1 standing, which nobody else leaves, keep 1 stand-in each: (2 + 2) / 100
    still = Outlook(rows=100, rate=0.0, batch=2, cohorts={(5, 1): 2})
    assert still.share(blocks=4, size=2) == pytest.approx(0.04)
    assert still.cohort(blocks=4, least=2) == (2, 0.04)  # more rows a cohort only wait longer
    assert still.cohort(blocks=4, least=3) == (3, 0.06)  # 4 · (3 − 1) / 2 = 4 waiting + 2 standing


def test_larger_cohorts_on_fewer_blocks_keep_a_fast_table_within_its_budget() -> None:
    """1% of the census's 100,000 rows changing a night (docs/series.md §9.5): cohorts of 10 on its 219 blocks
    pile up stand-ins, cohorts of 300 on 15 blocks keep about 5% withheld or standing in."""
    census = Outlook(rows=100_000, rate=0.005, batch=10, cohorts={})
    assert census.share(blocks=219, size=10) > 0.3
    size, share = census.cohort(blocks=15, least=10)
    assert size == 300 and 0.04 < share < 0.06
    assert census.cohort(blocks=15, least=1000) == (1000, round(census.share(15, 1000), 4))  # at least `least`
    assert {g * 10 for g in GRID} >= {10, 300}
    budget = Budget(lambda sizes: census.cohort(len(sizes), 10), 0.06)
    assert budget.admits(np.full(15, 6_667)) and not budget.admits(np.full(219, 457))


def test_slow_churn_keeps_the_batch() -> None:
    """0.1% a night with the first version's 219 cohorts of about 457 rows: cohorts of `batch` are the best."""
    slow = Outlook(rows=100_000, rate=0.0005, batch=10, cohorts={(457, 0): 219})
    size, share = slow.cohort(blocks=73, least=10)
    assert size == 10 and share < 0.04
