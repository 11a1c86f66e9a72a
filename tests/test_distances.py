"""Every block's Earth Mover's Distance to the whole table computed in the warehouse (t-closeness's
``Reduction``; ``veil.distribution``, ``queries.distances``), on DuckDB and PostgreSQL: the exact statement
(``node_statistics``: one row per cell, a window per block) against hand-computed distances and the numpy
checker, and the bound statement (``node_bounds``: one row per value bucket) never deciding a block the wrong
way, its level an upper bound, with buckets from one value wide to the whole domain."""

from __future__ import annotations

import random
from collections import Counter
from fractions import Fraction

import pytest
import sqlalchemy as sa

from veil import config as cfg
from veil import queries as q
from veil.models.closeness import TCloseness
from veil.privacy import Specification
from veil.run import open_run
from tests.conftest import Db

# Li et al.'s salaries 3K..11K once each, in three blocks (ordered EMD by hand, m = 9, G(i) = (i+1)/9):
# {3,4,5}: |F-G| = 2,4,6,5,4,3,2,1,0 ninths -> 27/72 = 3/8; {6,8,11}: 1,2,3,1,2,0,1,2,0 -> 12/72 = 1/6;
# {7,9,10}: 1,2,3,4,2,3,1,1,0 -> 17/72.
SALARIES = [(1, 3), (1, 4), (1, 5), (2, 6), (2, 8), (2, 11), (3, 7), (3, 9), (3, 10)]
QI = '[[quasi_identifiers]]\ncolumn = "zip"\nhierarchy = { suppress = true }\n'


def salaries(db: Db, t: float, buckets: int | None = None) -> cfg.Config:
    if not getattr(db, "has_salaries", False):
        db.create_table("salaries", {"zip": sa.Integer, "salary": sa.Integer}, SALARIES)
        db.has_salaries = True  # type: ignore[attr-defined]
    body = (
        QI + '[sensitive]\ncolumns = ["salary"]\n[[models]]\ntype = "t-closeness"\nattribute = "salary"\n'
        f'distance = "ordered"\nt = {t!r}\n'
    )
    return cfg.load(db.write_config("salaries", body, name=f"salaries_{abs(hash((t, buckets))) % 10**6}.toml"))


def by_size(rows: list[tuple]) -> Counter:  # type: ignore[type-arg]
    return Counter((int(r[0]), int(r[1])) for r in rows for _ in range(int(r[2])))


def test_ordered_and_equal_distances_hand_computed(db: Db) -> None:
    conf = salaries(db, 0.2)
    with open_run(conf, local_cells=0) as (conf, wh):
        ref = wh.threshold_tests.reference(0)
        stmt = q.node_statistics(
            wh.layout, (0,), 0, [("ordered", 0.2), ("ordered", 0.25), ("equal", 0.7)], reference=ref
        )
        rows = wh.session.rows(stmt, "test")
        got = sorted((int(s), int(a), int(b), int(c), int(n), x, y, z) for s, a, b, c, n, x, y, z in rows)
        # equal: every block holds 3 of the 9 values once: EMD = 1 - 3/9 = 2/3 <= 0.7 for all
        assert [g[:5] for g in got] == [(3, 0, 0, 1, 1), (3, 0, 1, 1, 1), (3, 1, 1, 1, 1)]
        assert got[0][5] == pytest.approx(3 / 8, rel=1e-12) and got[1][5] == pytest.approx(17 / 72, rel=1e-12)
        assert got[2][5] == pytest.approx(1 / 6, rel=1e-12) and got[0][7] == pytest.approx(2 / 3, rel=1e-12)
        decided = wh.block_tests((0,), "salary", [("ordered", 0.2)])
        assert decided is not None and int(decided.blocks[~decided.passed[:, 0]].sum()) == 2
        for node in ((1,), (None,)):  # one block, the whole table: at distance 0 (bounds, then exact statement)
            whole = wh.block_tests(node, "salary", [("ordered", 0.01), ("equal", 0.01)])
            assert whole is not None and whole.sizes.tolist() == [9] and whole.passed.tolist() == [[True, True]]
            bounds = wh.session.rows(
                q.node_bounds(wh.layout, node, 0, [0.2], ref, wh.threshold_tests.buckets[0]), "test"
            )
            assert [(int(r[0]), int(r[1]), int(r[2])) for r in bounds] == [(9, 1, 1)]


def test_a_block_at_the_threshold_is_left_to_the_exact_checker(db: Db) -> None:
    """{3,4,5} is at exactly 3/8: neither statement decides it, and the node is evaluated from its histograms."""
    conf = salaries(db, 0.375)
    with open_run(conf, local_cells=0) as (conf, wh):
        assert wh.block_tests((0,), "salary", [("ordered", 0.375)]) is None
        assert wh.stats.undecided == 1 and wh.stats.test_queries == 2  # the bounds, then the exact statement
        spec = Specification(conf.models, 0.0)
        assert spec.reductions is not None
        summary = spec.summarize(
            wh.sizes((0,)),
            lambda: wh.stream((0,)),
            wh.rows,
            (0,),
            lambda: wh.block_tests((0,), "salary", [("ordered", 0.375)]),
        )
        assert spec.evaluate(summary, wh.rows).passed and wh.stats.streamed == 1
        assert TCloseness(t=0.375, distance="ordered", attribute="salary").check(wh.counts((0,))).passed.all()


def blocks_table(db: Db, seed: int) -> tuple[str, dict[int, list[int]]]:
    """12 blocks of distinct sizes (3..14) over 40 values, some blocks shifted, some spread."""
    rnd = random.Random(seed)
    blocks = {}
    for g, size in enumerate(range(3, 15)):
        centre, spread = rnd.randint(0, 39), rnd.choice([2, 6, 40])
        blocks[g] = [min(39, max(0, centre + rnd.randint(-spread, spread))) for _ in range(size)]
    rows = [(g, v * 10 + 5) for g, values in blocks.items() for v in values]
    name = f"blocks_{seed}"
    db.create_table(name, {"g": sa.Integer, "v": sa.Integer}, rows)
    return name, blocks


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_bounds_never_decide_a_block_the_wrong_way(db: Db, seed: int) -> None:
    name, _ = blocks_table(db, seed)
    body = (
        '[[quasi_identifiers]]\ncolumn = "g"\nhierarchy = { suppress = true }\n[sensitive]\ncolumns = ["v"]\n'
        '[[models]]\ntype = "t-closeness"\nattribute = "v"\ndistance = "ordered"\nt = 0.2\n'
    )
    conf = cfg.load(db.write_config(name, body, name=f"{name}.toml"))
    for buckets in (1, 2, 3, 7, 64):
        with open_run(conf, local_cells=0, bound_buckets=buckets) as (conf, wh):
            nc = wh.counts((0,))
            exact = TCloseness(t=0.2, distance="ordered", attribute="v").distances(nc)
            emd = {int(s): Fraction(float(d)) for s, d in zip(nc.sizes, exact)}
            ref, bkt = wh.threshold_tests.reference(0), wh.threshold_tests.buckets[0]
            cuts = sorted({float(d) for d in exact} | {0.0, 1.0})
            thresholds = cuts + [(a + b) / 2 for a, b in zip(cuts, cuts[1:])]
            decided = 0
            for t in thresholds:
                bounds = q.node_bounds(wh.layout, (0,), 0, [t], ref, bkt)
                for size, ok, blocks, level in wh.session.rows(bounds, "test"):
                    assert blocks == 1
                    truth = emd[int(size)]
                    assert level >= float(truth) * (1 - 1e-12) - 1e-15, (buckets, t, size)
                    if ok != q.UNDECIDED:
                        decided += 1
                        assert bool(ok) == (truth <= Fraction(t)), (buckets, t, size, level, truth)
                rows = wh.session.rows(q.node_statistics(wh.layout, (0,), 0, [("ordered", t)], reference=ref), "test")
                for size, ok, blocks, level in rows:
                    truth = emd[int(size)]
                    assert level == pytest.approx(float(truth), rel=1e-9, abs=1e-12)
                    if ok != q.UNDECIDED:
                        assert bool(ok) == (truth <= Fraction(t)), (t, size, level, truth)
            if buckets >= 40:  # one value a bucket: loose only where G crosses F in a run of absent values
                assert decided >= len(thresholds) * 12 * 3 // 4, buckets


@pytest.mark.parametrize("distance", ["ordered", "equal"])
@pytest.mark.parametrize("budget", [0.0, 0.1])
def test_distance_tests_equal_the_whole_node_checkers_on_every_node(db: Db, distance: str, budget: float) -> None:
    from tests.test_streaming import K, all_nodes, config, people

    closeness = f'[[models]]\ntype = "t-closeness"\nt = 0.3\ndistance = "{distance}"\nattribute = "score"\n'
    conf = config(db, people(db, seed=5), K + closeness, budget)
    with open_run(conf, local_cells=0, bound_buckets=2) as (conf, wh):
        spec = Specification(conf.models, budget)
        found = spec.reductions
        assert found is not None and found[0] == "score"
        tests = [(r.statistic.value, r.threshold) for r in found[1]]
        undecided = 0
        for node in all_nodes(wh.heights):
            decided = wh.block_tests(node, "score", tests)
            if decided is None:
                undecided += 1
                continue
            got = spec.evaluate(spec.from_tests(decided, node, wh.rows), wh.rows)
            expected = spec.evaluate(wh.counts(node), wh.rows)
            assert (got.passed, got.prune_down, got.suppressed_rows, got.suppressed_blocks) == (
                expected.passed,
                expected.prune_down,
                expected.suppressed_rows,
                expected.suppressed_blocks,
            ), node
            g, e = got.verdicts[1], expected.verdicts[1]
            assert int(decided.blocks[~g.passed].sum()) == e.violating, node
            assert e.achieved is not None and g.achieved is not None
            if distance == "equal":
                assert g.achieved == pytest.approx(e.achieved, rel=1e-12), node
            else:  # the bounds' level: an upper bound
                assert g.achieved >= e.achieved * (1 - 1e-12), node
        assert undecided <= len(all_nodes(wh.heights)) // 10
