"""What a run's warehouse did and what it cost (``Stats``): node queries issued, rows read, time spent in the
backend — ``veil search --json`` reports it as ``work``.  Every part of the warehouse (``veil.sourcescan``,
``veil.baseset``, ``veil.nodecounting``, ``veil.blocksizes``, ``veil.thresholdtests``) adds to the one object."""

from __future__ import annotations

from dataclasses import dataclass, field

from veil.rollup import Counters


@dataclass
class Stats:
    """What the run cost: node queries issued, rows read, time spent in the backend."""

    node_queries: int = 0
    size_queries: int = 0  # node queries answered by the size histogram alone
    batched: int = 0  # nodes whose size histograms one of those queries counted with others' (prefetch)
    test_queries: int = 0  # node queries answered by threshold tests computed in SQL (no histogram)
    undecided: int = 0  # of those, nodes floating point could not decide (then streamed)
    streamed: int = 0  # node queries whose cells arrived in chunks
    chunks: int = 0
    cache_hits: int = 0
    base_seconds: float = 0.0
    node_seconds: float = 0.0
    rows_read: int = 0
    rows_dropped_null: int = 0
    base_cells: int = 0
    local_cells: int = 0  # the base's cells fetched once, every node then rolled up here (veil.frequencies)
    local_nodes: int = 0  # nodes counted from them, with no statement
    floors: int = 0  # nodes counted in the warehouse whose cells were kept to roll up the nodes above
    scratch: bool = False  # working tables beyond temporary ones (DuckDB: scratch file; PostgreSQL: work schema)
    statements: int = 0  # every statement the run's session executed, preparation included (``Warehouse.work_done``)
    rollups: Counters = field(default_factory=Counters)

    @property
    def rolled_up(self) -> int:
        """Node queries that read a materialized finer node instead of the base."""
        return self.rollups.rolled_up

    @property
    def materialized(self) -> int:
        """Nodes materialized (kept for rollups, or read once and dropped)."""
        return self.rollups.materialized

    def document(self) -> dict[str, float | int]:
        """What the warehouse did, for ``veil search --json`` (``work``): the time to scan the source and code the
        base frequency set, the time spent in node queries (fetches included, checkers excluded), the queries."""
        return {
            "prepare_seconds": round(self.base_seconds, 3),
            "node_query_seconds": round(self.node_seconds, 3),
            "node_queries": self.node_queries,
            "size_queries": self.size_queries,
            "batched": self.batched,
            "test_queries": self.test_queries,
            "undecided": self.undecided,
            "streamed": self.streamed,
            "chunks": self.chunks,
            "rolled_up": self.rolled_up,
            "materialized": self.materialized,
            "hubs": self.rollups.hubs,
            "rows_read": self.rows_read,
            "base_cells": self.base_cells,
            "local_cells": self.local_cells,
            "local_nodes": self.local_nodes,
            "floors": self.floors,
            "scratch": self.scratch,
            "statements": self.statements,
        }
