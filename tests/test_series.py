"""The series guarantee in memory (docs/series-ledger.md), tested as an attacker would: every pair of published
versions, rolled up to their common node, differs per block by multisets that pass the models or are empty.

The attacker (tests/test_series_world.py) is independent of ``veil.release``; hypothesis drives random
nights (joins, departures, several per night, a random node each night) through ``series.check``
(``series = "refuse"``; the default cohort series is tests/test_cohorts.py and tests/test_series_attacks.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veil.release import series
from veil.release.alignment import Chain, Dictionary, Layout, align, attribute_classes
from veil.release.differences import signed, split
from tests.test_series_world import DISEASES, NODES, WARDS, AGES, ZIPS, Published, World, attack

BASE = [
    ("a1", "20", "flu", "w1"),
    ("a2", "25", "cold", "w1"),
    ("a1", "25", "hiv", "w2"),
    ("a2", "20", "cancer", "w2"),
    ("b1", "30", "flu", "w1"),
    ("b2", "35", "cold", "w2"),
    ("b1", "35", "hiv", "w1"),
    ("b2", "30", "cancer", "w2"),
]
NODE = (1, 1)


def test_off_exposes_a_newcomer_and_a_departure() -> None:
    """Today's behaviour (``series = "off"``): each version is 2-anonymous and 2-diverse, the series is not."""
    w = World()
    w.release(BASE, NODE, "off")
    w.release(BASE + [("a1", "20", "hiv", "w1")], NODE, "off")
    w.release(BASE, NODE, "off")
    assert [(i, j, bad) for i, j, bad in w.exposed_pairs()] == [(1, 2, [("added", 1)]), (2, 3, [("removed", 1)])]


def test_refuse_names_the_exposing_blocks_with_counts_only() -> None:
    w = World()
    w.release(BASE, NODE)
    _, _, left = w.release(BASE + [("a1", "20", "hiv", "w1")], NODE, "refuse")
    assert [(e.earlier, e.side, e.blocks, e.rows) for e in left] == [(1, "added", 1, 1)]
    assert "hiv" not in left[0].describe() and "1 added row(s)" in left[0].describe()
    assert len(w.versions) == 1  # nothing published


def test_net_differences_cancel() -> None:
    """A night adding {flu, cold} and removing {flu} shows a net +{cold}: one row, exposed."""
    keys, amounts = signed(
        np.array([0, 0]), np.array([0, 1]), np.array([2, 1]), np.array([0]), np.array([0]), np.array([1])
    )
    assert keys.tolist() == [[0, 0], [0, 1]] and amounts.tolist() == [1, 1]
    keys, amounts = signed(
        np.array([0, 0]), np.array([0, 1]), np.array([1, 1]), np.array([0]), np.array([0]), np.array([1])
    )
    assert split(keys, amounts)[0][1:2] == ("added",) and amounts.tolist() == [1]
    w = World()
    w.release(BASE, NODE, "off")
    night = BASE[1:] + [("a1", "20", "flu", "w1"), ("a2", "25", "cold", "w2")]  # flu leaves, flu and cold join
    w.release(night, NODE, "off")
    assert w.exposed_pairs() == [(1, 2, [("added", 1)])]


def test_consecutive_pairs_are_not_enough() -> None:
    """v1→v2 adds {flu, cold} and v2→v3 removes {cold, hiv}: both pass (k=2, l=2).  v1→v3 adds {flu} and
    removes {hiv}: the newcomer's flu and the leaver's hiv, exposed (docs/series-ledger.md §1)."""
    w = World()
    v1 = BASE
    v2 = v1 + [("a1", "20", "flu", "w1"), ("a1", "25", "cold", "w1")]
    v3 = [p for p in v2 if p not in (("a1", "25", "cold", "w1"), ("a1", "25", "hiv", "w2"))]
    for people in (v1, v2, v3):
        w.release(people, NODE, "off")
    assert [(i, j) for i, j, _ in w.exposed_pairs()] == [(1, 3)]
    history = w.versions
    found = series.exposure(w.dictionary, w.judge(), history)
    assert {(e.earlier, e.later, e.side, e.rows) for e in found} == {(1, 3, "added", 1), (1, 3, "removed", 1)}
    # refuse compares with every earlier version, so the third release is refused for what v1 would expose
    d = World()
    lefts = [d.release(people, NODE)[2] for people in (v1, v2, v3)]
    assert lefts[0] == lefts[1] == [] and {e.earlier for e in lefts[2]} == {1}
    assert d.exposed_pairs() == []


def test_a_coarser_roll_up_can_cancel_what_passes_at_the_common_node() -> None:
    """Every difference passes at G, yet rolled up one level further the added {flu, cold} of one block and
    the removed {flu, hiv} of another cancel to +{cold} −{hiv}: what holds is stated in docs/series.md §5."""
    a = Published(
        (0, 1),
        [
            ("a1", "<30", "cancer"),
            ("a1", "<30", "cancer"),
            ("a2", "<30", "flu"),
            ("a2", "<30", "hiv"),
            ("a2", "<30", "cancer"),
        ],
    )
    b = Published(
        (0, 1),
        [
            ("a1", "<30", "cancer"),
            ("a1", "<30", "cancer"),
            ("a1", "<30", "flu"),
            ("a1", "<30", "cold"),
            ("a2", "<30", "cancer"),
        ],
    )
    assert attack(a, b, 2, 2, False) == []
    coarse = lambda p: Published((1, 1), [("a*", *r[1:]) for r in p.rows])  # noqa: E731
    assert sorted(attack(coarse(a), coarse(b), 2, 2, False)) == [("added", 1), ("removed", 1)]


people = st.tuples(
    st.sampled_from(list(ZIPS)), st.sampled_from(list(AGES)), st.sampled_from(DISEASES), st.sampled_from(WARDS)
)


@st.composite
def nights(draw: st.DrawFn) -> tuple[list, list]:
    """A population and up to 5 nights: each drops some people, adds some, and picks any node."""
    population = draw(st.lists(people, min_size=8, max_size=30))
    history = [(list(population), draw(st.sampled_from(NODES)))]
    for _ in range(draw(st.integers(1, 5))):
        current = list(history[-1][0])
        for _ in range(draw(st.integers(0, 3))):
            if current:
                current.pop(draw(st.integers(0, len(current) - 1)))
        current += draw(st.lists(people, max_size=4))
        keep_node = draw(st.booleans())
        history.append((current, history[-1][1] if keep_node else draw(st.sampled_from(NODES))))
    return history, [draw(st.integers(2, 3)), draw(st.integers(1, 2))]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nights())
def test_refuse_flags_exactly_what_the_attacker_finds(case: tuple[list, list]) -> None:
    history, (k, l) = case
    w = World(k=k, l=l)
    for current, node in history:
        before = len(w.published)
        cand, p, left = w.release(current, node, "refuse")
        if left:
            trial = Published(
                node,
                [
                    (*w.dictionary.blocks[b], w.dictionary.values[v]["disease"])
                    for b, v, n in zip(cand.blocks.tolist(), cand.values.tolist(), p.tolist())
                    for _ in range(n)
                ],
            )
            flagged = {e.earlier for e in left}
            assert flagged == {i + 1 for i, old in enumerate(w.published) if attack(old, trial, k, l, False)}
            assert len(w.published) == before
        else:
            assert all(not attack(old, w.published[-1], k, l, False) for old in w.published[:-1])


def test_changed_hierarchies_compare_on_their_common_coarsening() -> None:
    """Version A cut ages at 30, version B at 25: a reader can only line them up on classes both determine."""
    a = Chain.of("age", {"20": ("<30",), "25": ("<30",), "30": (">=30",), "35": (">=30",)})
    b = Chain.of("age", {"20": ("<25",), "25": (">=25",), "30": (">=25",), "35": (">=25",)})
    left, right = attribute_classes(a, 1, b, 1)
    assert left["<30"] == left[">=30"] == right["<25"] == right[">=25"]  # 25 links the two cuts: one class
    c = Chain.of("age", {"20": ("<30",), "25": ("<30",), "31": (">=30",)})  # same cut, new leaf, 30/35 gone
    left, right = attribute_classes(a, 1, c, 1)
    assert left["<30"] == right["<30"] and left[">=30"] == right[">=30"] and left["<30"] != left[">=30"]
    left, right = attribute_classes(a, 0, c, 0)  # leaves: equal values line up
    assert left["20"] == right["20"] and left["35"] not in right.values()


def test_a_quasi_identifier_one_version_lacks_is_top_for_both() -> None:
    d = Dictionary()
    zip_chain, age_chain = Chain.of("zip", ZIPS), Chain.of("age", AGES)
    one = Layout((0, 0), (zip_chain, age_chain), ("disease",))
    two = Layout((0,), (zip_chain,), ("disease",))
    b1 = np.asarray([d.add_block(("a1", "20")), d.add_block(("a1", "35"))])
    b2 = np.asarray([d.add_block(("a1",))])
    a = align(d, one, b1, two, b2)
    assert a.left[b1[0]] == a.left[b1[1]] == a.right[b2[0]]


def test_the_series_core_builds_no_sql() -> None:
    forbidden = ("sqlalchemy", "veil.queries", "veil.backends", "veil.warehouse")
    root = Path(__file__).resolve().parent.parent / "engine" / "release"
    for name in ("alignment.py", "differences.py", "series.py"):
        tree = ast.parse((root / name).read_text(encoding="utf-8"))
        found = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        found |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        assert not {f for f in found if f.startswith(forbidden)}, name


cells = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 5), st.integers(0, 3)), max_size=30)


@settings(max_examples=200, deadline=None)
@given(cells, cells)
def test_the_rounds_fast_differences_equal_the_plain_ones(right: list, left: list) -> None:
    r = np.asarray(right, dtype=np.int64).reshape(-1, 3)
    lt = np.asarray(left, dtype=np.int64).reshape(-1, 3)
    expected = signed(r[:, 0], r[:, 1], r[:, 2], lt[:, 0], lt[:, 1], lt[:, 2])
    got = series._Sums.of(r[:, 0], r[:, 1], lt[:, 0], lt[:, 1], lt[:, 2]).signed(r[:, 2])
    assert got[0].tolist() == expected[0].tolist() and got[1].tolist() == expected[1].tolist()


def test_worked_examples_in_docstrings_run() -> None:
    import doctest
    import importlib

    for name in (
        "veil.release.alignment",
        "veil.release.differences",
        "veil.release.series",
        "veil.queries.publication",
    ):
        result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.attempted > 0 and result.failed == 0, name


def test_a_removal_is_judged_against_the_table_it_was_published_from() -> None:
    """SPEC §3's salary example: the block {3K, 5K, 9K} is at ordered EMD 1/6 from the table 3K..11K.  Once
    9K and 11K left and 12K joined, judging its withdrawal against *today's* table would move the distance;
    against the table it was published from it is 1/6 again and passes t = 0.17, as the block did."""
    from veil.models import TCloseness
    from veil.release.differences import Judge

    model = TCloseness(t=0.17, distance="ordered", attribute="salary")
    judge = Judge((model,), ("salary",), {"salary": True})
    then = judge.reference({"salary": {str(v): 1 for v in range(3, 12)}})
    now = judge.reference({"salary": {str(v): 1 for v in (3, 4, 5, 6, 7, 8, 10, 12)}})
    block = [{"salary": "3"}, {"salary": "5"}, {"salary": "9"}]
    entry = lambda ref: (  # noqa: E731
        judge.codes(("salary",), block, ref),
        np.ones(3, dtype=np.int64),
        judge.applicable(("salary",)),
        ref,
    )
    assert judge.failing([entry(then)]).tolist() == [False]
    assert judge.failing([entry(now)]).tolist() == [True]  # 9K is not a value of today's table
    assert [d.values.tolist() for d in then.domains] == [[float(v) for v in range(3, 12)]]


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_cells_sorted_by_numpy_are_the_cells_the_database_orders(data: st.DataObject) -> None:
    """The candidate's cells streamed in any order and chunking, packed and sorted by numpy
    (``ledger._cells_keyed``), equal the same cells ordered by the database and split into blocks across chunk
    borders (``ledger._blocks_of``)."""
    from veil.release import ledger

    sizes = data.draw(st.lists(st.integers(1, 4), min_size=0, max_size=3))
    values = data.draw(st.integers(1, 5))
    space = (
        [(*codes, v) for codes in np.ndindex(*sizes) for v in range(values)] if sizes else [(v,) for v in range(values)]
    )
    cells = data.draw(st.lists(st.sampled_from(space), unique=True, max_size=30))
    counts = data.draw(st.lists(st.integers(1, 9), min_size=len(cells), max_size=len(cells)))
    chunk = data.draw(st.integers(1, 7))

    def chunks(rows: list[tuple[int, ...]], ns: list[int]) -> list[dict[str, np.ndarray]]:
        cols = {f"g{i}": np.array([r[i] for r in rows], dtype=np.int64) for i in range(len(sizes))}
        cols["vid"] = np.array([r[-1] for r in rows], dtype=np.int64)
        cols["n"] = np.array(ns, dtype=np.int64)
        return [{k: c[lo : lo + chunk] for k, c in cols.items()} for lo in range(0, max(len(rows), 1), chunk)]

    ordered = sorted(zip(cells, counts))
    expected = ledger._blocks_of(chunks([c for c, _ in ordered], [n for _, n in ordered]), len(sizes))
    got = ledger._cells_keyed(chunks(cells, counts), sizes, values)
    for e, g in zip(expected, got):
        assert e.tolist() == g.tolist()
    assert ledger.packs(sizes, values) and not ledger.packs([2**31, 2**31], 2)


pairs = st.sets(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=25)


@settings(max_examples=200, deadline=None)
@given(pairs, pairs, pairs, st.booleans(), st.data())
def test_sums_of_sorted_distinct_cells_take_their_shortcuts_exactly(
    left: set, gone: set, new: set, same: bool, data: st.DataObject
) -> None:
    """Versions' cells are distinct and mostly sorted: the same keys on both sides (a node kept, nothing changed)
    or a few added and removed.  ``_Sums.of`` then sorts and copies nothing, and its keys, positions and sums are
    those of a plain union of the keys."""
    right = sorted(left) if same else sorted((left - gone) | new)
    lt, rt = np.array(sorted(left), dtype=np.int32).reshape(-1, 2), np.array(right, dtype=np.int32).reshape(-1, 2)
    counts = np.array(data.draw(st.lists(st.integers(1, 9), min_size=len(lt), max_size=len(lt))), dtype=np.int32)
    got = series._Sums.of(rt[:, 0], rt[:, 1], lt[:, 0], lt[:, 1], counts)
    lk, rk = lt[:, 0].astype(np.int64) * 7 + lt[:, 1], rt[:, 0].astype(np.int64) * 7 + rt[:, 1]
    keys = np.union1d(lk, rk)
    assert got.keys.tolist() == np.column_stack([keys // 7, keys % 7]).tolist()
    right = np.arange(len(rk)) if got.right is None else got.right  # None: the later cells are the keys
    assert right.tolist() == np.searchsorted(keys, rk).tolist()
    assert got.right is not None or len(keys) == len(rk)
    assert got.right is None or not (same and len(rk) > 1)  # the same cells on both sides: no positions made
    assert (
        got.left.tolist()
        == np.bincount(np.searchsorted(keys, lk), weights=counts, minlength=len(keys)).astype(np.int64).tolist()
    )


@given(st.sets(st.integers(-5, 60)), st.sets(st.integers(-5, 60)))
def test_union_of_sorted_keys_is_numpys(a: set[int], b: set[int]) -> None:
    left, right = np.array(sorted(a), dtype=np.int64), np.array(sorted(b), dtype=np.int64)
    assert series._union(left, right).tolist() == np.union1d(left, right).tolist() == sorted(a | b)


@given(st.dictionaries(st.text(), st.none() | st.text()))
def test_a_value_key_is_the_json_of_the_value_with_sorted_keys(value: dict[str, str | None]) -> None:
    """The ledger stores a value tuple as ``json.dumps`` writes it (keys sorted, no spaces, non-ASCII kept): the
    dictionary's own writer gives the same text for any strings — quotes, escapes, control characters."""
    import json

    assert Dictionary.value_key(value) == json.dumps(
        dict(sorted(value.items())), ensure_ascii=False, separators=(",", ":")
    )
    assert json.loads(Dictionary.value_key(value)) == value
