"""Threshold tests on a sensitive column's per-block histograms computed in SQL (``ThresholdTests.block_tests``:
a few rows per node, no histogram shipped): distinct and entropy l-diversity's statistics and t-closeness's
distances to the whole table, the latter through lookup tables of the column's distribution loaded once
(``reference``).  Where floating point leaves a block undecided the node is evaluated from its histograms.

Builds SQL only through ``veil.queries``; executes only through a backend ``Session``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from veil import queries as q
from veil.baseset import BaseSet, Node
from veil.counts import BlockTests
from veil.distribution import Distribution
from veil.lattice import show
from veil.queries.ddl import create_table


class ThresholdTests:
    """The tests of the nodes over ``base`` on its counted sensitive columns (``sensitive``, in base order);
    ``bound_buckets``: the value buckets of the ordered-EMD bound statement."""

    def __init__(self, base: BaseSet, sensitive: Sequence[str], bound_buckets: int) -> None:
        self.base, self.sensitive, self.bound_buckets = base, list(sensitive), bound_buckets
        self.references: dict[int, q.distances.Reference] = {}  # distance tests' lookup tables
        self.buckets: dict[int, q.distances.Buckets] = {}  # and their bound buckets

    def block_tests(self, node: Node, attribute: str, tests: Sequence[tuple[str, float]]) -> BlockTests | None:
        """Threshold tests on ``attribute``'s per-block histograms at ``node`` computed in SQL (``node_statistics``:
        a few rows per node, no histogram); ``None`` when floating point leaves a block undecided (evaluate the
        node from its histograms then).  Ordered-EMD tests alone are tried first from bounds on the cells counted
        per value bucket (``node_bounds``), and per cell only when those leave a block open."""
        base, stats = self.base, self.base.stats
        what = f"testing the blocks of node {show(node)}"
        if base.holder(node, what) is not None:
            return None  # counted here: the checkers read its histograms
        started = time.perf_counter()
        statements = self._statements(node, self.sensitive.index(attribute), tests)
        rows: list[Any] = []
        for statement in statements:
            with base.reading(base.cell_rollups, node, what) as (name, floor):
                rows = base.session.rows(statement(name, floor), what)
            stats.test_queries += 1
            if not _undecided(rows, len(tests)):
                break
        stats.node_seconds += time.perf_counter() - started
        if _undecided(rows, len(tests)):
            stats.undecided += 1
            return None
        r = len(tests)
        flags = np.asarray([row[1 : 1 + r] for row in rows], dtype=np.int64).reshape(len(rows), r)
        return BlockTests(
            np.asarray([row[0] for row in rows], dtype=np.int64),
            np.asarray([row[1 + r] for row in rows], dtype=np.int64),
            flags == 1,
            np.asarray([row[2 + r :] for row in rows], dtype=np.float64).reshape(len(rows), r),
        )

    def _statements(self, node: Node, j: int, tests: Sequence[tuple[str, float]]) -> list[Callable[[str, Any], Any]]:
        """The statements ``block_tests`` tries in order, each a function of the table it reads and its floor."""
        layout = self.base.layout
        widths = [h.cardinality(lv) for h, lv in zip(self.base.hierarchies, node) if lv is not None]
        kinds = [k for k, _ in tests]
        reference = self.reference(j) if any(k in q.distances.KINDS for k in kinds) else None
        statements = [
            lambda name, floor: q.node_statistics(
                layout, node, j, tests, floor, source=name, reference=reference, widths=widths
            )
        ]
        if reference is not None and all(k == "ordered" for k in kinds):  # bounds first: fewer rows per block
            buckets = self.buckets[j]
            statements.insert(
                0,
                lambda name, floor: q.node_bounds(
                    layout, node, j, [t for _, t in tests], reference, buckets, floor, source=name, widths=widths
                ),
            )
        return statements

    def reference(self, j: int) -> q.distances.Reference:
        """Sensitive column ``j``'s distribution as the lookup tables of the distance tests, loaded once."""
        if j not in self.references:
            d = Distribution.of(self.base.domains[j].total)
            width, buckets = d.bucket_table(self.bound_buckets)
            name, session = self.sensitive[j], self.base.session
            for ddl, columns in zip(
                (*q.distances.lookup_tables(j), q.distances.bucket_table(j)), (d.positions, d.inverse, buckets)
            ):
                session.execute(create_table(ddl), f"creating the distribution table of {name!r}")
                session.load_columns(ddl, columns, f"loading the distribution of {name!r}")
            self.references[j] = q.distances.Reference(j, d.rows, d.width, d.buckets, d.integral)
            self.buckets[j] = q.distances.Buckets(j, width, len(buckets["k"]) - 1)
        return self.references[j]


def _undecided(rows: Sequence[Sequence[Any]], tests: int) -> bool:
    return any(q.UNDECIDED in row[1 : 1 + tests] for row in rows)
