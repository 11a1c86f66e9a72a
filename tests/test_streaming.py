"""The bounded-memory paths of a search (issue 11) against the whole-node path, on DuckDB and PostgreSQL:

- ``Warehouse.sizes``: the block-size histogram aggregated in SQL equals the sizes of the whole-node counts;
- ``Warehouse.stream``: a node's counts in chunks of complete blocks (forced tiny: a few cells per chunk)
  are, together, exactly the whole node's blocks, each block in one chunk;
- ``Specification.summarize`` + ``metrics.OnSizes``: the verdicts, suppression, inferences and metric of a
  node evaluated from sizes / chunk by chunk equal those of the whole node;
- a search on that path equals brute force on whole nodes.
"""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import numpy as np
import pytest
import sqlalchemy as sa

from veil import config as cfg
from veil import search
from veil import queries as q
from veil.errors import BackendError
from veil.counts import NodeCounts, SizeHistogram
from veil.lattice import Lattice
from veil.metrics import Discernibility, OnSizes, make_metric
from veil.privacy import Specification
from veil.run import metric_for, open_run, search_counts
from tests.conftest import Db

QIS = (
    '[[quasi_identifiers]]\ncolumn = "age"\nhierarchy = { intervals = [10, 20, 40] }\n'
    '[[quasi_identifiers]]\ncolumn = "sex"\nhierarchy = { suppress = true }\n'
    '[[quasi_identifiers]]\ncolumn = "region"\nhierarchy = { taxonomy = { "0" = ["a", "*"], '
    '"1" = ["a", "*"], "2" = ["b", "*"], "3" = ["b", "*"] } }\n'
)
K = '[[models]]\ntype = "k-anonymity"\nk = 3\n'
ENTROPY = '[[models]]\ntype = "entropy-l-diversity"\nl = 2\nattribute = "score"\n'
CLOSENESS = '[[models]]\ntype = "t-closeness"\nt = 0.35\ndistance = "ordered"\nattribute = "score"\n'
DISTINCT = '[[models]]\ntype = "distinct-l-diversity"\nl = 2\nattribute = "score"\n'
SETS = {"k": K, "k+entropy": K + ENTROPY, "k+closeness": K + CLOSENESS, "distinct": DISTINCT}


def people(db: Db, seed: int = 3, n: int = 160) -> str:
    rnd = random.Random(seed)
    rows = [
        (rnd.randint(18, 70), rnd.choice("FM"), rnd.randint(0, 3), rnd.choice([1, 2, 2, 3, 5, 8])) for _ in range(n)
    ]
    name = f"people_{seed}"
    db.create_table(name, {"age": sa.Integer, "sex": sa.String, "region": sa.Integer, "score": sa.Integer}, rows)
    return name


def config(db: Db, table: str, models: str, budget: float, metric: str = "discernibility") -> cfg.Config:
    body = (
        f'[search]\nmax_suppression = {budget}\nmetric = "{metric}"\n'
        + QIS
        + '[sensitive]\ncolumns = ["score"]\n'
        + models
    )
    return cfg.load(db.write_config(table, body, name=f"{table}_{abs(hash(models)) % 10**6}_{budget}.toml"))


def all_nodes(heights: tuple[int, ...]) -> list[tuple[int | None, ...]]:
    """Every full node and every subset node (some QIs projected out)."""
    levels = [[None, *range(h + 1)] for h in heights]
    return list(itertools.product(*levels))


def blocks_of(chunks: list[NodeCounts]) -> dict[tuple[int, ...], dict[int, int]]:
    out: dict[tuple[int, ...], dict[int, int]] = {}
    for nc in chunks:
        bc = nc.blocks("score")
        for b, key in enumerate(map(tuple, nc.keys.tolist())):
            assert key not in out, f"block {key} split across chunks"
            out[key] = {
                int(c): int(n)
                for c, n in zip(bc.codes[bc.indptr[b] : bc.indptr[b + 1]], bc.counts[bc.indptr[b] : bc.indptr[b + 1]])
            }
    return out


@pytest.mark.parametrize("chunk", [1, 4, 1 << 19])
def test_sizes_and_chunks_equal_the_whole_node(db: Db, chunk: int) -> None:
    table = people(db)
    conf = config(db, table, K + ENTROPY, 0.0)
    with open_run(conf, local_cells=0, chunk_cells=chunk, rollup_min_cells=1) as (conf, wh):
        nodes = all_nodes(wh.heights)
        streamed_chunks = 0
        for node in nodes:
            whole = wh.counts(node)
            hist = wh.sizes(node)
            expected = SizeHistogram.of(node, whole.sizes)
            assert hist.sizes.tolist() == expected.sizes.tolist(), node
            assert hist.blocks.tolist() == expected.blocks.tolist(), node
            chunks = list(wh.stream(node))
            streamed_chunks += len(chunks)
            assert all(c.cell_count.sum() > 0 for c in chunks)
            if chunk == 1:  # a chunk holds one block (the smallest chunk is one complete block)
                assert len(chunks) == whole.n_blocks, node
            assert blocks_of(chunks) == blocks_of([whole]), node
        assert wh.stats.rolled_up > 0  # rollups from materialized nodes were exercised
    if chunk == 1:
        assert streamed_chunks > 2 * len(nodes)


@pytest.mark.parametrize("models", list(SETS))
@pytest.mark.parametrize("budget", [0.0, 0.1])
def test_summarize_equals_evaluate_on_the_whole_node(db: Db, models: str, budget: float) -> None:
    table = people(db, seed=5)
    conf = config(db, table, SETS[models], budget)
    with open_run(conf, local_cells=0, chunk_cells=3) as (conf, wh):
        spec = Specification(conf.models, budget)
        metric = make_metric("discernibility", wh.heights)
        sized = OnSizes(metric)
        avg = OnSizes(make_metric("avg-block-size", wh.heights))
        early = 0
        for node in all_nodes(wh.heights):
            whole = wh.counts(node)
            expected = spec.evaluate(whole, wh.rows)
            streams = []

            def chunks(node=node):
                streams.append(node)
                return wh.stream(node)

            summary = spec.summarize(wh.sizes(node), chunks, wh.rows)
            got = spec.evaluate(summary, wh.rows)
            assert (got.passed, got.prune_down) == (expected.passed, expected.prune_down), node
            assert sized.bound(summary, wh.rows, budget > 0) == metric.bound(whole, wh.rows, budget > 0)
            assert avg.bound(summary, wh.rows, budget > 0) == pytest.approx(
                avg.metric.bound(whole, wh.rows, budget > 0), rel=1e-12
            )
            if not streams and not spec.sizes_only:  # decided by the sizes alone: the monotone part fails
                early += 1
                assert not expected.passed and expected.prune_down
                assert got.suppressed_rows <= expected.suppressed_rows
                continue
            assert got.suppressed_rows == expected.suppressed_rows, node
            if not spec.sizes_only:  # the size condition known to hold (a node below passed it): chunks only
                again = spec.evaluate(spec.summarize(None, lambda node=node: wh.stream(node), wh.rows, node), wh.rows)
                assert (again.passed, again.suppressed_rows, again.failing.tolist()) == (
                    got.passed,
                    got.suppressed_rows,
                    got.failing.tolist(),
                ), node
            assert got.suppressed_blocks == expected.suppressed_blocks, node
            for g, e in zip(got.verdicts, expected.verdicts):
                assert (g.achieved is None) == (e.achieved is None), node
                if e.achieved is not None:
                    assert g.achieved == pytest.approx(e.achieved, rel=1e-12), node
                assert int(summary.blocks[~g.passed].sum()) == e.violating, node
            assert sized.score(summary, got.failing, wh.rows) == metric.score(whole, expected.failing, wh.rows)
            assert avg.score(summary, got.failing, wh.rows) == pytest.approx(
                avg.metric.score(whole, expected.failing, wh.rows), rel=1e-12
            )
        if models != "k" and budget == 0.0:
            assert early > 0  # the size pre-check decided some nodes without a histogram


@pytest.mark.parametrize("models", list(SETS))
@pytest.mark.parametrize("metric", ["discernibility", "avg-block-size", "precision", "kl-divergence"])
@pytest.mark.parametrize(
    ("block_tests", "batch"), [(True, False), (False, False), (True, True)], ids=["tests", "streamed", "tests-batched"]
)
def test_search_on_summaries_equals_brute_force_on_whole_nodes(
    db: Db, models: str, metric: str, block_tests: bool, batch: bool
) -> None:
    """With threshold tests in SQL (distinct and entropy l-diversity, ordered t-closeness) or forced through the
    streamed chunks; and with the nodes a strategy announces counted together (``batch``: Spark's path)."""
    table = people(db, seed=11, n=120)
    budget = 0.05
    conf = config(db, table, SETS[models], budget, metric)
    with open_run(conf, local_cells=0, chunk_cells=2, batch=batch) as (conf, wh):
        wh.block_tests_enabled = block_tests
        spec = Specification(conf.models, budget)
        plain = metric_for(wh, metric)
        lattice = Lattice(wh.heights)
        brute = search.run(["brute-force"], lattice, wh.attributes, wh.counts, spec, plain, wh.rows)
        counts_for, sized, probe, prefetch = search_counts(wh, spec, plain)
        assert (counts_for == wh.counts) == (metric == "kl-divergence")
        # sizes only: nothing cheaper to ask first, unless the metric's bound needs no sizes at all
        assert (probe is None) == (metric == "kl-divergence" or (models == "k" and metric not in ("precision",)))
        if metric == "precision":  # its bound is the node's levels': probing costs no query
            queries = wh.stats.node_queries
            assert probe(tuple(lattice.heights)).n_blocks == 0 and wh.stats.node_queries == queries
        fast = search.run(
            ["incognito", "optimal"],
            lattice,
            wh.attributes,
            counts_for,
            spec,
            sized,
            wh.rows,
            probe=probe,
            prefetch=prefetch,
        )
        alone = search.run(
            ["optimal"], lattice, wh.attributes, counts_for, spec, sized, wh.rows, probe=probe, prefetch=prefetch
        )
        assert (prefetch is None) == (metric == "kl-divergence")
        assert (wh.stats.batched > 0) == (batch and metric != "kl-divergence")  # fewer statements than nodes
        if metric != "kl-divergence":
            assert wh.stats.size_queries > 0
            # threshold tests in SQL where the backend has them (Backend.block_tests; not Spark: it streams)
            in_sql = block_tests and wh.tests_in_sql
            assert in_sql == (block_tests and wh.session.backend.block_tests)  # nothing held here: local_cells = 0
            if in_sql and models in ("k+entropy", "distinct"):  # reducible: no histogram shipped
                assert wh.stats.test_queries > 0 and wh.stats.streamed == wh.stats.undecided == 0
            elif in_sql and models == "k+closeness":  # reducible; a block at t streams its node
                assert wh.stats.test_queries > 0 and wh.stats.streamed == wh.stats.undecided
            elif models != "k":
                assert wh.stats.streamed > 0 and wh.stats.chunks > wh.stats.streamed
                assert wh.stats.test_queries == 0
    assert fast.minimal == brute.minimal
    assert (fast.optimal is None) == (brute.optimal is None) == (alone.optimal is None)
    if brute.optimal is not None:
        assert fast.optimal.node == brute.optimal.node == alone.optimal.node
        assert fast.optimal.value == brute.optimal.value  # exact losses on both paths


def test_size_histogram_hand_computed() -> None:
    # blocks of sizes 1, 1, 3, 5 (|T| = 10); k = 3 with a budget of 2 rows: the two singletons are suppressed
    hist = SizeHistogram.of((0,), np.array([1, 3, 1, 5]))
    assert hist.sizes.tolist() == [1, 3, 5] and hist.blocks.tolist() == [2, 1, 1]
    from veil.models.kanonymity import KAnonymity

    spec = Specification((KAnonymity(k=3),), max_suppression=0.2)
    e = spec.evaluate(hist, rows=10)
    assert (e.passed, e.suppressed_rows, e.suppressed_blocks, e.prune_down) == (True, 2, 2, False)
    assert e.verdicts[0].achieved == 1.0
    # discernibility: 3² + 5² + 2 suppressed rows × |T| = 34 + 20
    assert OnSizes(Discernibility()).score(hist, e.failing, rows=10) == 54.0
    assert OnSizes(Discernibility()).bound(hist, rows=10, suppression=True) == 1 + 1 + 9 + 25
    # average class size: 8 kept rows in 2 kept blocks
    assert OnSizes(make_metric("avg-block-size", (1,))).score(hist, e.failing, rows=10) == 4.0
    tight = Specification((KAnonymity(k=3),), max_suppression=0.1)
    assert (tight.evaluate(hist, rows=10).passed, tight.evaluate(hist, rows=10).prune_down) == (False, True)


def test_size_metrics_stay_exact_beyond_int64() -> None:
    """Discernibility and average block size on a size histogram are exact integers and fractions: int64 sums
    below |T|² < 2⁶³, Python integers beyond (two blocks of 3·10⁹ rows and one of 1: Σ n² = 18·10¹⁸ + 1)."""
    big = SizeHistogram((0,), np.array([1, 3_000_000_000]), np.array([1, 2]))
    rows = 6_000_000_001
    keep, drop_one = np.array([False, False]), np.array([True, False])
    dm, avg = OnSizes(Discernibility()), OnSizes(make_metric("avg-block-size", (1,)))
    assert dm.loss(big, keep, rows) == 2 * 3_000_000_000**2 + 1 == 18_000_000_000_000_000_001
    assert dm.loss(big, drop_one, rows) == 2 * 3_000_000_000**2 + rows
    assert dm.bound(big, rows, suppression=False) == 18_000_000_000_000_000_001
    assert avg.loss(big, drop_one, rows) == Fraction(6_000_000_000, 2)
    assert avg.bound(big, rows, suppression=False) == Fraction(rows, 3)
    assert avg.bound(big, rows, suppression=True) == Fraction(1)
    small = SizeHistogram((0,), np.array([1, 3]), np.array([1, 2]))  # the same shapes within int64
    assert dm.loss(small, keep, 7) == 19 and dm.loss(small, drop_one, 7) == 18 + 7
    assert avg.loss(small, drop_one, 7) == Fraction(6, 2) and avg.bound(small, 7, suppression=False) == Fraction(7, 3)


def test_rollups_stay_within_their_budget(db: Db) -> None:
    """Materialized rollups are dropped least recently read first, so at most ``rollup_budget`` × the base's
    cells are kept at once; counts rolled up under the budget equal counts read from the base."""
    table = people(db, n=400)
    conf = config(db, table, K + ENTROPY, 0.0)
    nodes = sorted(all_nodes((3, 1, 2)), key=lambda n: sum(-1 if lv is None else lv for lv in n))
    with open_run(conf, local_cells=0, rollup=False) as (conf, plain):
        expected = {node: blocks_of([plain.counts(node)]) for node in nodes}
    with open_run(conf, local_cells=0, rollup_min_cells=1, rollup_ratio=0.9, rollup_budget=0.6) as (conf, wh):
        kept: list[int] = []
        for node in nodes:
            assert blocks_of([wh.counts(node)]) == expected[node], node
            for rollups in wh.rollups:
                assert rollups.kept_cells <= 0.6 * rollups.base_cells or len(rollups.kept) == 1, node
            kept.append(sum(len(r.kept) for r in wh.rollups))
        assert wh.stats.rolled_up > 0
        assert wh.stats.materialized > kept[-1]  # some rollups were dropped along the way


def test_code_tables_are_created_only_for_the_levels_a_statement_coarsens(db: Db) -> None:
    """A node materialized from the base needs no ``veil_up_*`` table; one rolled up from a kept node joins (and
    first creates) the table of each QI it coarsens, once a session — before, every level of every materialized
    node had its table made at once (16 statements of 0.4-1.3 s each on Spark at 10M rows, most never read)."""
    table = people(db, n=200)
    conf = config(db, table, K, 0.0)
    nodes = [(1, 0, 0), (2, 0, 0), (2, 1, 0), (3, 1, 0)]
    with open_run(conf, local_cells=0, rollup=False) as (conf, plain):
        expected = {node: plain.sizes(node).blocks.tolist() for node in nodes}
    with open_run(conf, local_cells=0, rollup_min_cells=1, rollup_ratio=1.0, rollup_budget=1000.0, hub_ratio=0.0) as (
        conf,
        wh,
    ):
        made = wh.base.cell_rollups.up_tables
        assert wh.sizes((1, 0, 0)).blocks.tolist() == expected[(1, 0, 0)] and made == set()  # kept, from the base
        assert wh.sizes((2, 0, 0)).blocks.tolist() == expected[(2, 0, 0)] and made == {(0, 1)}  # age 1 -> 2
        assert wh.sizes((2, 1, 0)).blocks.tolist() == expected[(2, 1, 0)] and made == {(0, 1), (1, 0)}  # sex 0 -> 1
        assert wh.sizes((3, 1, 0)).blocks.tolist() == expected[(3, 1, 0)]  # age 2 -> 3 over the kept (2, 1, 0)
        assert made == {(0, 1), (1, 0), (0, 2)} and wh.stats.rolled_up >= 3


def _tested(wh, node):  # type: ignore[no-untyped-def]
    t = wh.block_tests(node, "score", [("entropy", 1.5)])
    return sorted(
        (int(a), int(b), bool(c), round(float(d), 9))
        for a, b, c, d in zip(t.sizes, t.blocks, t.passed[:, 0], t.levels[:, 0])
    )


def test_nodes_materialized_first_are_kept_only_when_small(db: Db) -> None:
    """From a large source a node is materialized first and read from its own table; one with more cells than
    ``rollup_ratio`` × its source's is dropped right after (never kept, never read again), and every node's
    sizes, tests and counts equal those read from the base."""
    table = people(db, n=400)
    conf = config(db, table, K + ENTROPY, 0.0)
    nodes = sorted(all_nodes((3, 1, 2)), key=lambda n: sum(-1 if lv is None else lv for lv in n))
    with open_run(conf, local_cells=0, rollup=False) as (conf, plain):
        expected = {node: (blocks_of([plain.counts(node)]), plain.sizes(node).blocks.tolist()) for node in nodes}
        tests = {node: _tested(plain, node) for node in nodes}
    with open_run(conf, local_cells=0, rollup_min_cells=1, rollup_ratio=0.0, hub_ratio=0.0) as (conf, dropped):
        for node in nodes:
            assert (blocks_of([dropped.counts(node)]), dropped.sizes(node).blocks.tolist()) == expected[node], node
            assert _tested(dropped, node) == tests[node], node
        assert not any(r.kept for r in dropped.rollups) and dropped.stats.rolled_up == 0
        # read from their own tables, dropped after; nodes below one known to be too large are not materialized
        assert 0 < dropped.stats.materialized < 3 * len(nodes)
        with pytest.raises(BackendError):
            dropped.session.scalar(q.count_rows(dropped.layout.node_table(1, nodes[0])))
    with open_run(conf, local_cells=0, rollup_min_cells=1, rollup_ratio=1.0, rollup_budget=1000.0) as (conf, kept):
        for node in nodes:
            assert (blocks_of([kept.counts(node)]), kept.sizes(node).blocks.tolist()) == expected[node], node
            assert _tested(kept, node) == tests[node], node
        assert kept.stats.materialized == sum(len(r.kept) for r in kept.rollups) > 0  # each kept, then reused
        assert len(kept.rollups) == 2 and all(r.kept for r in kept.rollups)  # the cells' and the blocks'
        assert kept.stats.rolled_up > 0


def test_hubs_are_read_by_the_nodes_above_them(db: Db) -> None:
    """A node that would read the base materializes its hub first (the finest node below it whose cells the
    hierarchies bound to ``hub_ratio`` × the base's) and reads itself from there, as do later nodes above the hub;
    sizes, tests and counts equal those read from the base, on both layouts (blocks alone, and cells)."""
    table = people(db, n=400)
    conf = config(db, table, K + ENTROPY, 0.0)
    nodes = [(3, 1, 2), (2, 1, 1), (3, 0, 2), (2, 1, 2), (1, 1, 1), (3, 1, 1)]
    with open_run(conf, local_cells=0, rollup=False) as (conf, plain):
        expected = {node: (blocks_of([plain.counts(node)]), plain.sizes(node).blocks.tolist()) for node in nodes}
        tests = {node: _tested(plain, node) for node in nodes}
    with open_run(conf, local_cells=0, rollup_min_cells=1, rollup_ratio=0.0, hub_ratio=1.0) as (conf, wh):
        blocks, cells = wh.base.block_rollups(), wh.base.cell_rollups
        # codes per level: age 53, 7, 4, 2, 1; sex 2, 1; region 4, 2, 1; score 5 values; 362 base cells.  From
        # (3, 1, 2) (bound 2) each step lowers the level multiplying the bound least, ties to the first QI:
        # age (2, 1, 2) 4, age (1, 1, 2) 7, sex (1, 0, 2) 14, region (1, 0, 1) 28, region (1, 0, 0) 56; age to 0
        # would bound 424 > 362.  The cells' bound is 5 × 56 = 280, and 2,120 at the bottom.
        assert blocks.cardinalities == ((53, 7, 4, 2, 1), (2, 1), (4, 2, 1)) and blocks.base_cells == 362
        assert (blocks.spread, cells.spread) == (1, 5)
        assert blocks.hub((3, 1, 2)) == cells.hub((3, 1, 2)) == (1, 0, 0)
        assert blocks.hub((1, 0, 0)) is None  # nothing to lower within 362
        assert blocks.hub((0, 1, 2)) == (0, 0, 1)  # 53 → sex 106 → region 212 (→ 424 at the bottom)
        for node in nodes:
            assert wh.sizes(node).blocks.tolist() == expected[node][1], node
            assert _tested(wh, node) == tests[node], node
            assert blocks_of([wh.counts(node)]) == expected[node][0], node
        assert wh.stats.rollups.hubs == 2  # one per layout, every node above it
        assert (1, 0, 0) in blocks.kept and (1, 0, 0) in cells.kept
        assert wh.stats.rolled_up == 3 * len(nodes)  # every query read a hub


def test_sizes_counted_together_equal_each_nodes_own(db: Db) -> None:
    """The batch interface (``Warehouse.prefetch_sizes``, Cube Incognito's ``GROUPING SETS``): the histograms of
    nodes counted together — from the base, from their meet's hub, from a kept rollup joined to ``veil_up_*``
    tables, with QIs projected out (NULL keys in the other sets) — equal each node's own statement's, on both
    layouts; ``sizes`` then asks the database nothing, and no node is materialized for the batch."""
    table = people(db, n=400)
    nodes = all_nodes((3, 1, 2))
    rnd = random.Random(5)
    batches = [rnd.sample(nodes, 7) for _ in range(6)] + [
        [(1, 0, 1), (2, 1, 1), (3, 1, 2), (1, 1, 2)],
        [(0, None, None), (None, 0, None), (None, None, 0)],
    ]
    for models in (K, K + ENTROPY):  # the blocks' own rollups when sensitive values are counted
        conf = config(db, table, models, 0.0)
        with open_run(conf, local_cells=0, rollup=False) as (conf, plain):
            expected = {node: plain.sizes(node) for node in nodes}
        with open_run(
            conf, local_cells=0, rollup_min_cells=1, rollup_ratio=1.0, rollup_budget=1000.0, hub_ratio=0.5, batch=True
        ) as (conf, wh):
            wh.sizes((1, 0, 1))  # kept: later batches above it roll up from it through veil_up_* tables
            for batch in batches:
                fresh = {node for node in batch if wh.counted_sizes(node) is None}
                materialized, queries = wh.stats.materialized, wh.stats.node_queries
                wh.prefetch_sizes(batch)
                assert wh.stats.node_queries - queries == (len(fresh) > 1)  # one statement, or none for one node
                assert wh.stats.materialized - materialized <= 1  # at most the meet's hub
                queries = wh.stats.node_queries
                for node in batch:
                    got = wh.sizes(node)
                    assert (got.sizes.tolist(), got.blocks.tolist()) == (
                        expected[node].sizes.tolist(),
                        expected[node].blocks.tolist(),
                    ), (models, node)
                assert wh.stats.node_queries - queries == (len(fresh) == 1)  # the rest answered from the batch
            assert wh.stats.batched > 0 and wh.stats.rolled_up > 0 and wh.stats.rollups.hubs > 0


@pytest.mark.notimpl(
    ["spark"], raises=KeyError, reason="the test's table of each backend's hub ratio has no Spark entry"
)
def test_hubs_are_sized_by_the_backend_unless_the_run_says(db: Db) -> None:
    """A hub's share of the base's cells is the backend's (``Backend.hub_ratio``: a tenth on DuckDB, 1% on
    PostgreSQL, which pays for every row a node query reads) unless the run sets one; both layouts use it."""
    table = people(db, n=400)
    conf = config(db, table, K + ENTROPY, 0.0)
    with open_run(conf, local_cells=0) as (_, wh):
        ratios = {r.hub_ratio for r in (wh.base.cell_rollups, wh.base.block_rollups())}
        assert ratios == {{"duckdb": 0.1, "postgres": 0.01}[db.kind]}
    with open_run(conf, local_cells=0, hub_ratio=0.5) as (_, wh):
        assert {r.hub_ratio for r in (wh.base.cell_rollups, wh.base.block_rollups())} == {0.5}


@pytest.mark.notimpl(
    ["spark"],
    raises=BackendError,
    reason="the test reads the session's settings with current_setting(), DuckDB's and PostgreSQL's function",
)
def test_sessions_are_set_up_for_counting(db: Db, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """DuckDB runs under Veil's memory limit unless the URL sets one (it then spills instead of growing), its
    allocator purging in background threads unless the URL says otherwise; PostgreSQL sessions aggregate in
    memory without JIT."""
    from veil.backends import open_backend
    from veil.backends.duckdb import MEMORY_LIMIT

    def setting(url: str, name: str) -> str:
        with open_backend(url).session() as session:
            return str(session.scalar(sa.select(sa.func.current_setting(name))))

    table = people(db)
    url = config(db, table, K, 0.0).source.resolved_url()
    if db.kind == "duckdb":
        assert MEMORY_LIMIT == "512MB"
        assert setting(url, "memory_limit") == "488.2 MiB"  # 512,000,000 bytes as DuckDB shows them
        assert setting(url + "?memory_limit=2GB", "memory_limit") == "1.8 GiB"
        assert setting(url, "allocator_background_threads").lower() == "true"
        assert setting(url + "?allocator_background_threads=false", "allocator_background_threads").lower() == "false"
        assert setting(url + "?allocator_background_threads=false", "memory_limit") == "488.2 MiB"
        notebook = sa.create_engine(url, poolclass=sa.pool.NullPool).connect()  # this process's own connection
        try:  # DuckDB shares an open file only with the same settings: Veil joins it as it is
            shared = setting(url, "memory_limit")
            assert shared == str(notebook.scalar(sa.select(sa.func.current_setting("memory_limit"))))
            assert shared != "488.2 MiB"
        finally:
            notebook.close()
    else:
        assert setting(url, "work_mem") == "256MB"
        assert setting(url, "jit") == "off"
        assert setting(url, "temp_buffers") == "1GB"


@pytest.mark.parametrize("models", list(SETS))
def test_check_streams_what_it_shows(db: Db, models: str) -> None:
    """``veil check``'s document from ``evaluate_node`` (size histogram or chunks, never the whole node) equals
    the one from the whole node's counts: blocks, suppression, each model's verdict, level and violators."""
    from veil.run import check_document, evaluate_node

    table = people(db, seed=11)
    conf = config(db, table, SETS[models], 0.1)
    with open_run(conf, local_cells=0, chunk_cells=5) as (conf, wh):
        spec = Specification(conf.models, 0.1)
        for node in [(0, 0, 0), (1, 0, 1), (2, 1, 0), (3, 1, 2), (1, 1, 1)]:
            whole = wh.counts(node)
            expected = check_document(wh, spec, whole, spec.evaluate(whole, wh.rows))
            before = wh.stats.node_queries
            counts, evaluation = evaluate_node(wh, spec, node)
            assert isinstance(counts, SizeHistogram)
            assert wh.stats.node_queries == before + 1 and wh.stats.cache_hits == 0
            got = check_document(wh, spec, counts, evaluation)
            for g, e in zip(got.pop("models"), expected.pop("models")):
                assert g["achieved"] == pytest.approx(e["achieved"], rel=1e-12), node
                assert {**g, "achieved": 0} == {**e, "achieved": 0}, node
            assert got == expected, node


def test_row_chunks_hand_over_every_row(db: Db) -> None:
    """``Session.row_chunks`` (the release's candidate cells): every row once, in lists of at most ``size``,
    and the connection usable afterwards (a server-side cursor on PostgreSQL)."""
    from veil.backends import open_backend

    table = people(db, n=50)
    conf = config(db, table, K, 0.0)
    source = sa.table(conf.source.table, sa.column("age"), sa.column("score"), schema=conf.source.schema)
    stmt = sa.select(source.c.age, source.c.score).order_by(source.c.age, source.c.score)
    with open_backend(conf.source.resolved_url()).session() as session:
        chunks = list(session.row_chunks(stmt, size=7))
        assert [len(c) for c in chunks] == [7] * 7 + [1]
        assert [r for c in chunks for r in c] == session.rows(stmt)
        assert session.scalar(sa.select(sa.literal(1))) == 1


@pytest.mark.notimpl(
    ["spark"],
    raises=AssertionError,
    reason="Spark reads each table as it is when a query runs: its sessions hold no snapshot to settle inside",
)
def test_settling_inside_a_snapshot(db: Db) -> None:
    """Inside a release's snapshot, ``settle`` ends the transaction only where no other connection can write
    meanwhile (DuckDB's file lock), so DuckDB lets go of what a streamed node spilled; PostgreSQL keeps its
    REPEATABLE READ snapshot."""
    from veil.backends import open_backend

    table = people(db)
    with open_backend(config(db, table, K, 0.0).source.resolved_url()).session() as session:
        session.begin_snapshot()
        session.scalar(sa.select(sa.literal(1)))
        session.settle()
        assert session.snapshot
        assert session.conn.in_transaction() == (not session.backend.exclusive_writer)
        assert session.backend.exclusive_writer == (db.kind == "duckdb")


def test_streamed_chunks_without_pandas_equal_the_whole_node(db: Db, monkeypatch) -> None:
    """A runtime without pandas (the README's plain install): DuckDB's stream fetches rows instead of frames,
    with the same chunks of complete blocks."""
    from veil.backends import duckdb as duck

    monkeypatch.setattr(duck, "_HAS_PANDAS", False)
    table = people(db, seed=7)
    conf = config(db, table, K + ENTROPY, 0.0)
    with open_run(conf, local_cells=0, chunk_cells=4) as (conf, wh):
        for node in all_nodes(wh.heights)[::5]:
            chunks = list(wh.stream(node))
            assert blocks_of(chunks) == blocks_of([wh.counts(node)]), node
            assert len(chunks) > 1 or wh.counts(node).n_blocks <= 1, node
