"""Utility per attribute as ARX reports it (engine/utility.py, docs/workload.md): hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import sqlalchemy as sa

from veil.hierarchy import IntervalsSpec, SuppressSpec
from veil.utility import attribute_utility, leaf_totals
from veil.run import open_run
from tests.conftest import Db
from tests.test_streaming import SETS, config, people
from tests.test_workload import HAND, _hierarchies, _node_counts

L3 = math.log2(3)


def _utility(node: tuple[int, int], k: int = 1) -> dict[str, dict[str, float | None]]:
    hs = _hierarchies(HAND, {"age": IntervalsSpec((10,)), "sex": SuppressSpec()})
    counts = _node_counts(HAND, ["age", "sex"], hs, node)
    leaves = leaf_totals(_node_counts(HAND, ["age", "sex"], hs, (0, 0)))
    return {u["attribute"]: u for u in attribute_utility(counts, counts.sizes < k, hs, leaves)}


def test_without_suppression() -> None:
    # ages 20, 20, 25, 30, 35, 35 at level 1 of 2 ({20, 25} → 20-29, {30, 35} → 30-39); sex kept
    u = _utility((1, 0))
    assert u["age"]["generalization_intensity"] == pytest.approx(0.5)  # 1 - 1/2
    assert u["age"]["granularity"] == pytest.approx(2 / 3)  # 1 - (1/2 - 1/4) / (3/4)
    # NUE: -(4 log2(2/3) + 2 log2(1/3)) = 6 log2 3 - 4 against the maximum 6 log2 3 + 2
    assert u["age"]["non_uniform_entropy"] == pytest.approx(1 - (6 * L3 - 4) / (6 * L3 + 2))
    assert (u["sex"]["generalization_intensity"], u["sex"]["granularity"], u["sex"]["non_uniform_entropy"]) == (
        1.0,
        1.0,
        1.0,
    )


def test_with_suppression_counts_suppressed_rows_as_fully_generalized() -> None:
    # 2-anonymity suppresses (20-29, F) = 25F and (30-39, M) = 30M: 2 of 6 rows
    u = _utility((1, 0), k=2)
    assert u["age"]["generalization_intensity"] == pytest.approx(1 / 3)  # 1 - (4 · 1/2 + 2) / 6
    assert u["age"]["granularity"] == pytest.approx(4 / 9)  # 1 - (2/3 - 1/4) / (3/4)
    # the suppressed rows' step from 20-29 / 30-39 (one each) to *: -2 · log2(1/2) = 2 more
    assert u["age"]["non_uniform_entropy"] == pytest.approx(1 - (6 * L3 - 2) / (6 * L3 + 2))
    assert u["sex"]["generalization_intensity"] == pytest.approx(2 / 3)  # 1 - 2/6
    assert u["sex"]["granularity"] == pytest.approx(2 / 3)  # 1 - (4 · 1/2 + 2)/6 - 1/2) / (1/2)
    assert u["sex"]["non_uniform_entropy"] == pytest.approx(2 / 3)  # 1 - 2 / 6


def test_top_node_has_no_utility_and_a_constant_column_none() -> None:
    u = _utility((2, 1))
    assert all(
        u[a][m] == pytest.approx(0.0)
        for a in ("age", "sex")
        for m in ("generalization_intensity", "granularity", "non_uniform_entropy")
    )
    df = pd.DataFrame({"age": [20, 20], "sex": ["M", "M"]})
    hs = _hierarchies(df, {"age": IntervalsSpec((10,)), "sex": SuppressSpec()})
    counts = _node_counts(df, ["age", "sex"], hs, (0, 0))
    (age, sex) = attribute_utility(counts, np.zeros(1, dtype=bool), hs, leaf_totals(counts))
    assert age["granularity"] is None and age["non_uniform_entropy"] is None


@pytest.mark.parametrize("local_cells", [0, None])
def test_leaf_totals_are_the_bottom_nodes_marginals_without_counting_it(db: Db, local_cells: int | None) -> None:
    """``Warehouse.leaf_totals``: rows per leaf of every QI from one statement over the base (``local_cells = 0``)
    or from the cells held here — what ``leaf_totals`` of the bottom node gives, with no node counted."""
    table = people(db, seed=8, n=120)
    conf = config(db, table, SETS["k"], 0.0)
    ages = db.query(sa.text(f"SELECT count(*) FROM {db.quote(db.schema)}.{db.quote(table)} WHERE age = 18"))[0][0]
    with open_run(conf, local_cells=local_cells) as (conf, wh):
        before = (wh.stats.node_queries, wh.stats.local_nodes)
        got = wh.leaf_totals()
        assert (wh.stats.node_queries, wh.stats.local_nodes) == before
        assert (wh.local is None) == (local_cells == 0)
        bottom = leaf_totals(wh.counts(tuple(0 for _ in wh.heights)))
        assert [a.tolist() for a in got] == [b.tolist() for b in bottom]
        assert all(int(a.sum()) == wh.rows == 120 for a in got)
        leaf = wh.hierarchies[0].domain(0).index(18) if 18 in wh.hierarchies[0].domain(0) else None
        assert leaf is None or got[0][leaf] == ages
