"""The warehouse side of a run: inspect the source, load hierarchies as dimension tables, build the base
frequency set once, and answer "counts for this node" with one pushed-down ``GROUP BY`` per node.

``Warehouse`` is the facade the rest of the code uses; each part lives in its own module:

- ``veil.sourcescan``: the source's columns, its rows grouped once, the one scan of its values (``SourceScan``);
- ``veil.dimensiontables``: the hierarchies and sensitive values loaded as lookup tables;
- ``veil.baseset``: the base frequency set coded from the source, and the rollups every node query reads
  (``BaseSet``); ``veil.heldcells``: its cells, and counted nodes' kept as floors, held in this process;
- ``veil.nodecounting``: a node's counts, whole (cached) or streamed in chunks of blocks (``NodeCounter``);
- ``veil.blocksizes``: a node's block-size histogram, and the next nodes' counted together (``BlockSizes``);
- ``veil.thresholdtests``: threshold tests on the blocks' histograms computed in SQL (``ThresholdTests``);
- ``veil.workstats``: what it all cost (``Stats``).

Builds SQL only through ``veil.queries``; executes only through a backend ``Session``.  Everything it
creates is a temporary table of the session, so ``counts``, ``check`` and ``search`` leave nothing behind.

Counts of evaluated nodes are cached; a node's ``GROUP BY`` reads the materialized counts of its finest
evaluated descendant when there is one (Incognito's rollup), else ``veil_base``; a node read from a large
source is materialized first (narrow: its own levels only) and read from there.

A search needs less than a node's counts (issue 11): ``sizes(node)`` is its block-size histogram aggregated
in SQL (a few numbers), and ``stream(node)`` its counts in chunks of complete blocks (``chunk_cells``), so
the process holds neither a whole node's histogram nor the base frequency set.  ``counts(node)`` stays the
whole node, for the commands that show or publish it.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import sqlalchemy as sa

from veil import queries as q
from veil.backends.base import Session
from veil.baseset import BaseSet, Options
from veil.blocksizes import BlockSizes
from veil.config import QuasiIdentifier, SourceConfig
from veil.counts import BlockTests, Level, NodeCounts, SensitiveDomain, SizeHistogram
from veil.dimensiontables import load_dimension, load_values
from veil.frequencies import FrequencySet
from veil.hierarchytables import build_all
from veil.hierarchy import Hierarchy
from veil.lattice import show
from veil.nodecounting import NodeCounter
from veil.rollup import Rollups
from veil.sourcecells import SourceCells
from veil.sourcecheck import check_scan
from veil.sourcescan import Column, SourceScan
from veil.thresholdtests import ThresholdTests
from veil.workstats import Stats

__all__ = ["Column", "Stats", "Warehouse", "value_text"]  # Column and Stats: defined with their parts


@dataclass
class Warehouse:
    """One run's view of the source table.  Call ``prepare()`` once, then ``counts(node)``."""

    session: Session
    source: SourceConfig
    quasi_identifiers: Sequence[QuasiIdentifier]
    sensitive: Sequence[str]
    null_checked: Sequence[str] = ()  # published but not counted: NULLs follow the policy too
    carried: Sequence[str] = ()  # of those, the ones a source held first is grouped by too (``valued``: a release's)
    rollup: bool = True
    block_tests_enabled: bool = True  # the search may decide reducible models in SQL (tests force the stream)
    rollup_ratio: float = 0.25
    rollup_min_cells: int = 200_000
    rollup_budget: float = 2.0  # materialized rollup cells kept at once, as a multiple of the base's cells
    hub_ratio: float | None = None  # a hub's share of the base's cells (``veil.rollup``; None: the backend's)
    batch: bool | None = None  # prefetched sizes counted together (``prefetch_sizes``; None: the backend's)
    scratch_threshold: int | None = None  # base bytes beyond which working tables go to a scratch database
    #                                       (``Session.scratch``; None: the backend's own, DuckDB's memory limit)
    cache_bytes: int = 1 << 27  # whole-node counts kept in Python (check, release); searches stream
    chunk_cells: int = 1 << 19  # cells per chunk of a streamed node (``stream``)
    bound_buckets: int = q.distances.BOUND_BUCKETS  # value buckets of the ordered-EMD bound statement
    local_cells: int | None = None  # a base frequency set of at most this many cells is fetched once and every
    #                                 node rolled up from it here (``veil.frequencies``; None: the backend's own)
    on_step: Callable[[str], None] = lambda _msg: None
    hierarchies: tuple[Hierarchy, ...] = ()
    domains: tuple[SensitiveDomain, ...] = ()
    rows: int = 0
    raw_values: dict[str, list[Any]] = field(default_factory=dict)  # sensitive values as the driver gives them
    stats: Stats = field(default_factory=Stats)
    summaries: dict[Any, SizeHistogram] = field(default_factory=dict)  # evaluated nodes, by (specification, node)
    # the parts (``prepare`` makes all but the first): see the module docstring
    source_scan: SourceScan = field(init=False, repr=False)
    base: BaseSet | None = field(default=None, init=False, repr=False)
    node_counter: NodeCounter | None = field(default=None, init=False, repr=False)
    block_sizes: BlockSizes | None = field(default=None, init=False, repr=False)
    threshold_tests: ThresholdTests | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.source_scan = SourceScan(
            self.session, self.source, self.attributes, self.sensitive, self.null_checked, self.carried
        )

    @property
    def attributes(self) -> tuple[str, ...]:
        return tuple(qi.column for qi in self.quasi_identifiers)

    @property
    def heights(self) -> tuple[int, ...]:
        return tuple(h.height for h in self.hierarchies)

    @property
    def layout(self) -> q.Layout:
        return q.Layout(self.heights, len(self.sensitive))

    @property
    def table_name(self) -> str:
        return self.source.qualified

    @property
    def columns(self) -> dict[str, Column]:
        """The source's columns, once inspected (``inspect``)."""
        return self.source_scan.columns

    # --- the source and preparation ------------------------------------------------------------------------

    def inspect(self) -> dict[str, Column]:
        """Columns of the source (``information_schema`` or the backend's catalog); errors name the table or
        column."""
        return self.source_scan.inspect()

    def source_table(self, names: Sequence[str] | None = None) -> sa.Table:
        return self.source_scan.table(names)

    def prepare(self) -> None:
        """Inspect, read the source's values (one scan), validate and load hierarchies, code the base frequency
        set (a second scan)."""
        started = time.perf_counter()
        scan = self.source_scan
        if not scan.columns:
            scan.inspect()
        qis = list(self.attributes)
        self.on_step(f"scanning {self.table_name}")
        if self.session.backend.group_source and self.source.table != q.GROUPED:  # else the temporary table hides it
            scan.group()
        cells = self._source_cells()
        found = scan.scan() if cells is None else scan.found_in(cells)
        self.stats.rows_read, self.stats.rows_dropped_null, self.rows = found.read, found.read - found.kept, found.kept
        check_scan(
            self.table_name,
            self.stats.rows_read,
            self.rows,
            {c: self.columns[c].kind for c in qis},
            found.values,
            found.with_nulls,
        )  # empty source, all rows dropped, NaN/±Inf; identifier warnings

        self.on_step("validating hierarchies")
        self.hierarchies = build_all(
            self.session,
            self.quasi_identifiers,
            {c: [v for v, _ in found.values[c]] for c in qis},
            {c: self.columns[c].kind for c in qis},
        )
        domains = []
        for name in self.sensitive:
            domain, self.raw_values[name] = scan.domain(name, found.values[name])
            domains.append(domain)
        self.domains = tuple(domains)

        self.on_step("loading dimension tables")
        self.session.together(  # a table each, none read yet
            [
                *(
                    partial(self.load_dimension, i, h, self.columns[qi.column].sa_type)
                    for i, (qi, h) in enumerate(zip(self.quasi_identifiers, self.hierarchies))
                ),
                *(
                    partial(load_values, self.session, j, name, self.columns[name].sa_type, self.raw_values[name])
                    for j, name in enumerate(self.sensitive)
                ),
            ]
        )
        self.on_step(f"coding {self.table_name} into the base frequency set")
        self._start_counting().code([c for c in self.null_checked if c in found.with_nulls], cells)
        scan.ungroup()  # the grouped rows are read by the two scans only
        self.stats.base_seconds = time.perf_counter() - started

    def _source_cells(self) -> SourceCells | None:
        """The source's rows grouped and fetched whole, where it is held first (``Options.held_first``: a batched
        backend, its rows within ``local_cells``): the scan's findings and the base's cells from one statement."""
        options, backend, scan = self._options(), self.session.backend, self.source_scan
        if options.batched(backend) and options.held_first(backend, scan.rows()):
            with self.session.held_here():
                return scan.cells()
        return None

    def _options(self) -> Options:
        return Options(
            self.rollup,
            self.rollup_ratio,
            self.rollup_min_cells,
            self.rollup_budget,
            self.hub_ratio,
            self.batch,
            self.scratch_threshold,
            self.local_cells,
        )

    def _start_counting(self) -> BaseSet:
        """The parts that count nodes, over a base of the prepared hierarchies and domains."""
        self.base = base = BaseSet(
            self.source_scan,
            self.layout,
            self.hierarchies,
            self.domains,
            [self.raw_values[name] for name in self.sensitive],
            self.rows,
            self.stats,
            self._options(),
            self.on_step,
        )
        self.node_counter = NodeCounter(base, self.attributes, self.cache_bytes, self.chunk_cells)
        self.block_sizes = BlockSizes(base)
        self.threshold_tests = ThresholdTests(base, self.sensitive, self.bound_buckets)
        return base

    def load_dimension(self, i: int, h: Hierarchy, level0_type: Any) -> None:
        """Create and bulk-load dimension table ``i`` (``veil.dimensiontables.load_dimension``)."""
        load_dimension(self.session, i, h, level0_type)

    @property
    def local(self) -> FrequencySet | None:
        """The base's cells held here, when it has at most ``local_cells`` (coded again after ``end_counting``)."""
        held = self.base.held if self.base is not None else None
        return held.local if held is not None else None

    def valued(self, node: Sequence[Level], columns: Sequence[str]) -> tuple[dict[str, np.ndarray], list[Any]] | None:
        """The kept rows' cells at ``node`` with the values of ``columns`` (each counted or carried), rolled up from
        the cells held here with no statement: ``g{i}`` each QI's code, ``n`` the rows, and per column its codes and
        values (``fetchedcells.held``'s factors) — where the source was held first and holds them all, else
        ``None``.  Before ``end_counting``, which lets them go."""
        names: list[str] = list(self.sensitive)
        values: list[Any] = [self.raw_values[c] for c in self.sensitive]
        held: FrequencySet | None
        if self.base is not None and self.base.valued is not None:
            held, carried = self.base.valued
            names += self.source_scan.carried
            values += list(carried)
        else:
            held = self.local
        if held is None or not set(columns) <= set(names):
            return None
        cells = held.counts(node)
        # a counted column's codes index its values, which hold no NULL (the scan counts those apart: SourceScan.scan)
        factors = [(cells[f"s{names.index(c)}"].astype(np.int64), values[names.index(c)]) for c in columns]
        return {**{f"g{i}": cells[f"g{i}"] for i in range(len(self.attributes))}, "n": cells["n"]}, factors

    @property
    def tests_in_sql(self) -> bool:
        """Whether threshold tests may run as statements (``block_tests``): not when every node is counted here."""
        return self.block_tests_enabled and self.session.backend.block_tests and self.local is None

    # --- node counts -----------------------------------------------------------------------------------------

    def _checked(self, node: Sequence[Level]) -> tuple[Level, ...]:
        node = tuple(node)
        if len(node) != len(self.quasi_identifiers):
            raise ValueError(f"node {node} has {len(node)} levels for {len(self.quasi_identifiers)} quasi-identifiers")
        for lv, h in zip(node, self.heights):
            if lv is not None and not 0 <= lv <= h:
                raise ValueError(f"node {show(node)} is outside the lattice (heights {self.heights})")
        return node

    def _parts(self) -> tuple[NodeCounter, BlockSizes, ThresholdTests]:
        if self.node_counter is None or self.block_sizes is None or self.threshold_tests is None:
            raise RuntimeError("no base frequency set: prepare() the warehouse before counting nodes")
        return self.node_counter, self.block_sizes, self.threshold_tests

    def sizes(self, node: Sequence[Level]) -> SizeHistogram:
        """``node``'s block-size histogram, aggregated in SQL (``veil.blocksizes``: a few numbers, no block list)."""
        node = self._checked(node)
        return self._parts()[1].sizes(node)

    def counted_sizes(self, node: Sequence[Level]) -> SizeHistogram | None:
        """``node``'s block-size histogram when ``sizes`` already counted it (no query), else ``None``."""
        return self.block_sizes.counted(tuple(node)) if self.block_sizes is not None else None

    def prefetch_sizes(self, nodes: Sequence[Sequence[Level]]) -> None:
        """The block-size histograms of nodes a search will ask next, counted together where the backend says a
        statement's fixed cost outweighs a pass over the data (``BlockSizes.prefetch``)."""
        self._parts()[1].prefetch(map(self._checked, nodes))

    def block_tests(
        self, node: Sequence[Level], attribute: str, tests: Sequence[tuple[str, float]]
    ) -> BlockTests | None:
        """Threshold tests on ``attribute``'s per-block histograms at ``node`` computed in SQL; ``None`` when
        floating point leaves a block undecided (``ThresholdTests.block_tests``)."""
        node = self._checked(node)
        return self._parts()[2].block_tests(node, attribute, tests)

    def stream(self, node: Sequence[Level]) -> Iterator[NodeCounts]:
        """``node``'s counts in chunks of complete blocks (``NodeCounter.stream``)."""
        yield from self._parts()[0].stream(self._checked(node))

    def counts(self, node: Sequence[Level]) -> NodeCounts:
        """The per-q*-block counts of ``node`` (one ``GROUP BY`` unless cached)."""
        node = self._checked(node)
        return self._parts()[0].counts(node)

    def leaf_totals(self) -> list[np.ndarray]:
        """Rows per leaf code of every quasi-identifier (``BaseSet.leaf_totals``: ARX's per-attribute quality)."""
        if self.base is None:
            raise RuntimeError("no base frequency set: prepare() the warehouse before counting nodes")
        return self.base.leaf_totals()

    # --- the end ------------------------------------------------------------------------------------------

    def work_done(self) -> Stats:
        """What the run cost so far, with every statement its session executed (``Stats.statements``)."""
        self.stats.statements = self.session.statements
        return self.stats

    def end_search(self) -> None:
        """The search is over: drop the rollups it kept, and let the database free them where that cannot change
        what the run reads (``Session.settle``).  The base frequency set stays; a later node query works as
        before, materializing again what it needs; the counts kept here go (the caller holds those it needs)."""
        if self.node_counter is not None:
            self.node_counter.forget()
        if self.base is not None:
            self.base.end_search()
        else:
            self.session.settle()

    def end_counting(self) -> None:
        """The run counts no more nodes (a release holding its node's counts): drop the rollups and the base
        frequency set itself, and let the database free them before the release's own steps grow.  A node
        query after this (a release's report) codes the base again from the source: one more scan."""
        if self.node_counter is not None:
            self.node_counter.forget()  # the caller holds the counts it needs
        if self.base is not None:
            self.base.end_counting()
        else:
            self.session.settle()

    @property
    def rollups(self) -> tuple[Rollups, ...]:
        """This run's rollups: of the cells, and of the blocks alone when sensitive values are counted."""
        return self.base.rollups if self.base is not None else ()


def value_text(v: Any) -> str:
    """A value as the JSON output writes it."""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, (dt.date, dt.datetime)):
        return v.isoformat()
    return str(v)
