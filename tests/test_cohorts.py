"""The cohort series' decisions (``veil.release.cohorts``, docs/series.md §2–3), in memory: hand-computed cases,
the invariants every plan keeps (hypothesis), and the property the guarantee rests on — with the coins against
it, no decision depends on a value."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.models import DistinctLDiversity, EntropyLDiversity, KAnonymity
from veil.release.cohorts import Checks, Cohort, Histogram, decide, rows
from veil.release.differences import Judge
from veil.release.secret import Coins

DISEASES = ("flu", "cold", "hiv", "cancer")


def hist(*values: str) -> Histogram:
    """A histogram of disease values (each argument one row)."""
    found: dict[str, int] = {}
    for v in values:
        found[v] = found.get(v, 0) + 1
    keys = sorted(found)
    return [{"d": k} for k in keys], np.asarray([found[k] for k in keys], dtype=np.int64)


def checks(batch: int = 2, l: int = 2) -> Checks:
    judge = Judge((KAnonymity(k=2), DistinctLDiversity(attribute="d", l=l)), ("d",), {"d": False})
    table = {"d": {d: 10 for d in DISEASES}}
    return Checks(judge, table, table, batch)


class Always:
    def __init__(self, heads: bool) -> None:
        self.heads = heads

    def flip(self, kind: str, key: str) -> bool:
        return self.heads


def test_a_block_waits_until_its_waiting_rows_are_a_passing_batch() -> None:
    plan = decide(
        {"a": hist("flu"), "b": hist("flu", "flu"), "c": hist("flu", "cold"), "d": hist("flu", "cold", "hiv")},
        [],
        checks(batch=3),
        Always(True),
    )
    assert plan.form == ["d"]  # a: one row; b, c: two rows < batch 3
    assert plan.joining == {"too few": 5, "models": 0, "coin": 0}
    plan = decide({"b": hist("flu", "flu", "flu")}, [], checks(batch=3), Always(True))
    assert plan.form == [] and plan.joining["models"] == 3  # three flu cases: not 2-diverse
    plan = decide({"d": hist("flu", "cold", "hiv")}, [], checks(batch=3), Always(False))
    assert plan.form == [] and plan.joining["coin"] == 3  # ready, but tonight's coin says wait


def test_a_cohort_forms_with_at_least_series_cohort_rows_and_leaves_the_stand_ins_rule_alone() -> None:
    waiting = {"c": hist("flu", "cold", "hiv"), "d": hist("flu", "cold", "hiv", "flu", "cold")}
    c = Checks(checks(batch=2).judge, checks().joining, checks().leaving, 2, cohort=4)
    plan = decide(waiting, [], c, Always(True))
    assert plan.form == ["d"] and plan.joining == {"too few": 3, "models": 0, "coin": 0}  # c: 3 rows < 4
    plan = decide(waiting, [], Checks(c.judge, c.joining, c.leaving, 2, cohort=1), Always(True))
    assert plan.form == ["c", "d"]  # below the batch it changes nothing
    cohort = Cohort(1, hist("flu", "cold"), hist("hiv", "flu"))  # two stand-ins, two live rows: batch 2 decides
    assert decide({}, [cohort], c, Always(True)).remove == [1]


def test_stand_ins_leave_together_only_when_the_cohort_keeps_a_passing_batch() -> None:
    c = checks(batch=2)
    keep_two = Cohort(1, hist("flu", "cold"), hist("hiv", "cancer"))
    keep_one = Cohort(2, hist("flu"), hist("hiv", "cancer"))
    homogeneous_left = Cohort(3, hist("flu", "cold"), hist("hiv", "hiv"))
    all_gone = Cohort(4, hist(), hist("flu"))
    plan = decide({}, [keep_two, keep_one, homogeneous_left, all_gone], c, Always(True))
    assert plan.remove == [1, 4]  # 2: one live row would stay; 3: two hiv cases leaving together; 4: nobody left
    assert plan.leaving == {"too few": 2, "models": 2, "coin": 0}
    tails = decide({}, [keep_two, all_gone], c, Always(False))
    assert tails.remove == [4]  # a cohort nobody is left in leaves whatever the coin: sizes decide it


def test_a_first_version_forms_every_passing_block() -> None:
    plan = decide({"a": hist("flu", "cold"), "b": hist("flu", "flu")}, [], checks(batch=1), Always(True))
    assert plan.form == ["a"] and plan.joining["models"] == 2


def test_new_cohorts_are_in_block_order_whatever_order_the_blocks_came_in() -> None:
    """Their ids follow ``plan.form``: a night run again (``--force``, or on another backend, whose rows come in
    another order) numbers its cohorts, and so draws their coins, alike."""
    blocks = {b: hist("flu", "cold") for b in ("b\x1f1", "a\x1f2", "c\x1f0", "a\x1f1")}
    orders = [dict(sorted(blocks.items())), dict(reversed(sorted(blocks.items()))), blocks]
    assert [decide(o, [], checks(), Always(True)).form for o in orders] == [sorted(blocks)] * 3


def test_coins_are_keyed_by_secret_night_and_batch() -> None:
    a, b = Coins(b"\x01" * 32, "people", 3), Coins(b"\x02" * 32, "people", 3)
    flips = [
        (a.flip("join", str(i)), b.flip("join", str(i)), Coins(b"\x01" * 32, "people", 4).flip("join", str(i)))
        for i in range(400)
    ]
    assert all(a.flip("join", str(i)) == f[0] for i, f in enumerate(flips))  # repeatable
    assert 150 < sum(f[0] for f in flips) < 250  # about half heads
    assert sum(f[0] != f[1] for f in flips) > 100 and sum(f[0] != f[2] for f in flips) > 100


values = st.lists(st.sampled_from(DISEASES), min_size=0, max_size=7)
cohort = st.tuples(values, values)


@settings(max_examples=300)
@given(
    pending=st.dictionaries(st.sampled_from("abcdef"), values.filter(bool), max_size=5),
    cohorts=st.lists(cohort.filter(lambda c: bool(c[1])), max_size=5),
    batch=st.integers(2, 4),
    smallest=st.integers(0, 6),
    heads=st.lists(st.booleans(), min_size=16, max_size=16),
)
def test_every_plan_keeps_the_invariants(
    pending: Mapping[str, list[str]],
    cohorts: list[tuple[list[str], list[str]]],
    batch: int,
    smallest: int,
    heads: list[bool],
) -> None:
    """Every batch a plan makes visible holds at least ``batch`` rows and passes the models — a cohort that forms at
    least ``series_cohort`` rows (``smallest``) too; a cohort keeps at least ``batch`` passing rows after its
    stand-ins leave, or none."""
    base = checks(batch=batch)
    c = Checks(base.judge, base.joining, base.leaving, batch, cohort=smallest)
    coins = iter(heads * 4)
    plan = decide(
        {k: hist(*v) for k, v in pending.items()},
        [Cohort(i, hist(*live), hist(*gone)) for i, (live, gone) in enumerate(cohorts)],
        c,
        type("Coins", (), {"flip": lambda self, kind, key: next(coins)})(),
    )
    for block in plan.form:
        h = hist(*pending[block])
        assert rows(h) >= max(batch, smallest) and c.passes(h, c.joining)
    for i in plan.remove:
        live, gone = hist(*cohorts[i][0]), hist(*cohorts[i][1])
        assert rows(live) == 0 or (
            rows(gone) >= batch and rows(live) >= batch and c.passes(gone, c.leaving) and c.passes(live, c.leaving)
        )


@settings(max_examples=300)
@given(
    sizes=st.lists(st.integers(0, 6), min_size=1, max_size=5),
    gone=st.lists(st.integers(1, 6), max_size=5),
    live=st.lists(st.integers(0, 6), min_size=5, max_size=5),
    first=st.data(),
    batch=st.integers(2, 4),
)
def test_with_every_coin_against_it_no_decision_reads_a_value(
    sizes: list[int], gone: list[int], live: list[int], first: st.DataObject, batch: int
) -> None:
    """Replaying Veil under two hypotheses about everyone's values (the same people, other values) with every coin
    tails gives the same plan: what a night publishes is then decided by sizes alone, so a night that published
    no model-checked batch is consistent with every hypothesis (docs/series.md §3)."""

    def world(draw_values: list[list[str]]) -> tuple[dict[str, Histogram], list[Cohort]]:
        pend = {f"b{i}": hist(*draw_values[i]) for i, n in enumerate(sizes) if n}
        cohorts = [
            Cohort(i, hist(*draw_values[len(sizes) + 2 * i]), hist(*draw_values[len(sizes) + 2 * i + 1]))
            for i in range(len(gone))
        ]
        return pend, cohorts

    shape = [*sizes, *(x for i, g in enumerate(gone) for x in (live[i], g))]
    one = [first.draw(st.lists(st.sampled_from(DISEASES), min_size=n, max_size=n)) for n in shape]
    two = [first.draw(st.lists(st.sampled_from(DISEASES), min_size=n, max_size=n)) for n in shape]
    c = checks(batch=batch)
    plans = [decide(*world(v), c, Always(False)) for v in (one, two)]
    assert (plans[0].form, plans[0].remove) == (plans[1].form, plans[1].remove)
    assert plans[0].form == []


def test_entropy_l_diversity_judges_a_batch_as_a_block() -> None:
    judge = Judge((KAnonymity(k=3), EntropyLDiversity(attribute="d", l=3)), ("d",), {"d": False})
    table = {"d": {d: 10 for d in DISEASES}}
    c = Checks(judge, table, table, 3)
    assert c.passes(hist("flu", "cold", "hiv"), table)  # entropy log 3: exactly 3-diverse
    assert not c.passes(hist("flu", "flu", "cold", "hiv"), table)  # below log 3
