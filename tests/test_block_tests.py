"""Threshold tests computed in SQL (issue 11: only what a checker needs crosses the wire), on DuckDB and
PostgreSQL: distinct and entropy l-diversity declare a ``Reduction``; the warehouse's ``node_statistics``
returns, per block size, how many blocks pass each test and their least level — no histogram.  Checked
against hand-computed blocks, against the whole-node checkers on every node, and the knife-edge (a block
floating point cannot decide) falls back to the exact checkers on the node's histograms."""

from __future__ import annotations

import math

import pytest
import sqlalchemy as sa

from veil import config as cfg
from veil.privacy import Specification
from veil.run import open_run
from tests.conftest import Db
from tests.test_streaming import ENTROPY, K, all_nodes, config, people

QI = '[[quasi_identifiers]]\ncolumn = "ward"\nhierarchy = { suppress = true }\n'
# ward 1: {a, a, b, b} (uniform, m = 2); ward 2: {a, a, a, b} (entropy 0.5623, exp 1.7548); ward 3: {a, b, c}
ROWS = [(1, "a"), (1, "a"), (1, "b"), (1, "b"), (2, "a"), (2, "a"), (2, "a"), (2, "b"), (3, "a"), (3, "b"), (3, "c")]


def wards(db: Db, models: str) -> cfg.Config:
    if not getattr(db, "has_wards", False):
        db.create_table("wards", {"ward": sa.Integer, "diagnosis": sa.String}, ROWS)
        db.has_wards = True  # type: ignore[attr-defined]
    body = QI + '[sensitive]\ncolumns = ["diagnosis"]\n' + models
    return cfg.load(db.write_config("wards", body, name=f"wards_{abs(hash(models)) % 10**6}.toml"))


def test_block_tests_hand_computed(db: Db) -> None:
    conf = wards(db, '[[models]]\ntype = "distinct-l-diversity"\nl = 2\nattribute = "diagnosis"\n')
    with open_run(conf, local_cells=0) as (conf, wh):
        tests = [("distinct", 3.0), ("entropy", 2.0)]
        got = wh.block_tests((0,), "diagnosis", tests)
        assert got is not None
        table = sorted(
            (int(s), *(bool(p) for p in ok), int(b), *(float(v) for v in lv))
            for s, ok, b, lv in zip(got.sizes, got.passed, got.blocks, got.levels)
        )
        h2 = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))  # ward 2
        assert [row[:4] for row in table] == [(3, True, True, 1), (4, False, False, 1), (4, False, True, 1)]
        assert table[0][4:] == (3.0, 3.0)  # uniform: level m exactly
        assert table[1][4] == 2.0 and table[1][5] == pytest.approx(math.exp(h2), rel=1e-12)
        assert table[2][4:] == (2.0, 2.0)
        whole = wh.block_tests((1,), "diagnosis", tests)  # one block of 11: a×6, b×4, c×1
        assert (
            whole is not None and whole.sizes.tolist() == [11] and whole.passed.tolist() == [[True, True]]
        )  # exp(0.9166) = 2.50
        h = -sum(c / 11 * math.log(c / 11) for c in (6, 4, 1))
        assert whole.levels[0, 1] == pytest.approx(math.exp(h), rel=1e-12)
        assert wh.stats.test_queries == 2


def test_a_block_at_the_threshold_is_decided_by_the_exact_checker(db: Db) -> None:
    """Ward 2's entropy is exactly the threshold's logarithm as floats compute it: SQL leaves it undecided and
    the node is evaluated from its histograms, as the whole-node checker does."""
    edge = math.exp(-(0.75 * math.log(0.75) + 0.25 * math.log(0.25)))
    conf = wards(db, f'[[models]]\ntype = "entropy-l-diversity"\nl = {edge!r}\nattribute = "diagnosis"\n')
    with open_run(conf, local_cells=0) as (conf, wh):
        assert wh.block_tests((0,), "diagnosis", [("entropy", edge)]) is None
        assert wh.stats.undecided == 1
        spec = Specification(conf.models, 0.0)
        tests = spec.reductions
        assert tests is not None
        summary = spec.summarize(
            wh.sizes((0,)),
            lambda: wh.stream((0,)),
            wh.rows,
            (0,),
            lambda: wh.block_tests((0,), tests[0], [("entropy", edge)]),
        )
        expected = spec.evaluate(wh.counts((0,)), wh.rows)
        got = spec.evaluate(summary, wh.rows)
        assert (got.passed, got.suppressed_rows) == (expected.passed, expected.suppressed_rows)
        assert wh.stats.streamed == 1


@pytest.mark.parametrize("models", ["k+entropy", "distinct", "entropy+distinct"])
@pytest.mark.parametrize("budget", [0.0, 0.1])
def test_block_tests_equal_the_whole_node_checkers_on_every_node(db: Db, models: str, budget: float) -> None:
    distinct = '[[models]]\ntype = "distinct-l-diversity"\nl = 2\nattribute = "score"\n'
    text = {"k+entropy": K + ENTROPY, "distinct": distinct, "entropy+distinct": ENTROPY + distinct}[models]
    conf = config(db, people(db, seed=5), text, budget)
    with open_run(conf, local_cells=0) as (conf, wh):
        spec = Specification(conf.models, budget)
        found = spec.reductions
        assert found is not None and found[0] == "score"
        tests = [(r.statistic.value, r.threshold) for r in found[1]]
        for node in all_nodes(wh.heights):
            decided = wh.block_tests(node, "score", tests)
            assert decided is not None, node
            got = spec.evaluate(spec.from_tests(decided, node, wh.rows), wh.rows)
            expected = spec.evaluate(wh.counts(node), wh.rows)
            assert (got.passed, got.prune_down, got.suppressed_rows, got.suppressed_blocks) == (
                expected.passed,
                expected.prune_down,
                expected.suppressed_rows,
                expected.suppressed_blocks,
            ), node
            for g, e in zip(got.verdicts, expected.verdicts):
                assert int(decided.blocks[~g.passed].sum()) == e.violating, node
                assert (g.achieved is None) == (e.achieved is None), node
                if e.achieved is not None:
                    assert g.achieved == pytest.approx(e.achieved, rel=1e-12), node


def test_specification_reductions() -> None:
    from veil.models.base import Reduction, Statistic
    from veil.models.closeness import TCloseness
    from veil.models.kanonymity import KAnonymity
    from veil.models.ldiversity import DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity

    k, e, d = KAnonymity(k=2), EntropyLDiversity(l=2, attribute="s"), DistinctLDiversity(l=2, attribute="s")
    assert Specification((k,)).reductions is None  # size-only: the size histogram decides
    assert Specification((k, e, d)).reductions == ("s", (e.properties.reduction, d.properties.reduction))
    assert Specification((e, DistinctLDiversity(l=2, attribute="t"))).reductions is None  # two attributes
    assert Specification((e, RecursiveCLDiversity(c=2, l=2, attribute="s"))).reductions is None
    close = TCloseness(t=0.2, distance="equal", attribute="s")
    assert Specification((k, close)).reductions == ("s", (Reduction(Statistic.EQUAL, "s", 0.2, at_most=True),))
    tree = TCloseness(t=0.2, distance="hierarchical", attribute="s", hierarchy="x.csv")
    assert Specification((k, tree)).reductions is None  # the hierarchical EMD is not computed in SQL
