"""The warehouse side of a run: inspect the source, load hierarchies as dimension tables, build the base
frequency set once, and answer "counts for this node" with one pushed-down ``GROUP BY`` per node.

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

import contextlib
import datetime as dt
import math
import decimal
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sqlalchemy as sa

from veil import queries as q
from veil.backends.base import Session
from veil.config import QuasiIdentifier, SourceConfig
from veil.counts import BlockTests, Level, NodeCounts, SensitiveDomain, SizeHistogram
from veil.distribution import Distribution
from veil.errors import BackendError, HierarchyError, SourceError
from veil.frequencies import Floors, FrequencySet
from veil.hierarchies import build_all
from veil.hierarchy import Hierarchy, ValueKind, label_text, sort_key
from veil.queries.ddl import create_table, relation
from veil.queries.nodes import base_total
from veil.rollup import Counters, Rollups
from veil.sourcecheck import check_scan

MAX_LISTED = 20
PREFETCH = 32  # nodes whose sizes one statement counts together (``prefetch_sizes``)


@dataclass(frozen=True)
class Column:
    name: str
    sa_type: Any
    kind: ValueKind


@dataclass
class Stats:
    """What the run cost: node queries issued, rows read, time spent in the backend."""

    node_queries: int = 0
    size_queries: int = 0       # node queries answered by the size histogram alone
    batched: int = 0            # nodes whose size histograms one of those queries counted with others' (prefetch)
    test_queries: int = 0       # node queries answered by threshold tests computed in SQL (no histogram)
    undecided: int = 0          # of those, nodes floating point could not decide (then streamed)
    streamed: int = 0           # node queries whose cells arrived in chunks
    chunks: int = 0
    cache_hits: int = 0
    base_seconds: float = 0.0
    node_seconds: float = 0.0
    rows_read: int = 0
    rows_dropped_null: int = 0
    base_cells: int = 0
    local_cells: int = 0        # the base's cells fetched once, every node then rolled up here (veil.frequencies)
    local_nodes: int = 0        # nodes counted from them, with no statement
    floors: int = 0             # nodes counted in the warehouse whose cells were kept to roll up the nodes above
    scratch: bool = False       # working tables beyond temporary ones (DuckDB: scratch file; PostgreSQL: work schema)
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
        return {"prepare_seconds": round(self.base_seconds, 3), "node_query_seconds": round(self.node_seconds, 3),
                "node_queries": self.node_queries, "size_queries": self.size_queries,
                "batched": self.batched, "test_queries": self.test_queries, "undecided": self.undecided,
                "streamed": self.streamed, "chunks": self.chunks, "rolled_up": self.rolled_up,
                "materialized": self.materialized, "hubs": self.rollups.hubs, "rows_read": self.rows_read,
                "base_cells": self.base_cells, "local_cells": self.local_cells, "local_nodes": self.local_nodes,
                "floors": self.floors,
                "scratch": self.scratch}


def _domain_array(values: list[Any], kind: ValueKind) -> np.ndarray:
    if kind.numeric:
        return np.asarray([float(v) if isinstance(v, decimal.Decimal) else v for v in values])
    return np.asarray(values, dtype=object)


@dataclass
class Warehouse:
    """One run's view of the source table.  Call ``prepare()`` once, then ``counts(node)``."""

    session: Session
    source: SourceConfig
    quasi_identifiers: Sequence[QuasiIdentifier]
    sensitive: Sequence[str]
    null_checked: Sequence[str] = ()  # published but not counted: NULLs follow the policy too
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
    columns: dict[str, Column] = field(default_factory=dict)
    hierarchies: tuple[Hierarchy, ...] = ()
    domains: tuple[SensitiveDomain, ...] = ()
    rows: int = 0
    raw_values: dict[str, list[Any]] = field(default_factory=dict)  # sensitive values as the driver gives them
    stats: Stats = field(default_factory=Stats)
    _cache: dict[tuple[Level, ...], NodeCounts] = field(default_factory=dict)
    _sizes: dict[tuple[Level, ...], SizeHistogram] = field(default_factory=dict)
    summaries: dict[Any, SizeHistogram] = field(default_factory=dict)  # evaluated nodes, by (specification, node)
    _cells: Rollups | None = None    # rollups of the cells (veil_base)
    _blocks: Rollups | None = None   # rollups of the blocks alone (the base without its sensitive columns)
    _up_tables: set[tuple[int, int]] = field(default_factory=set)
    _references: dict[int, q.distances.Reference] = field(default_factory=dict)  # distance tests' lookup tables
    _buckets: dict[int, q.distances.Buckets] = field(default_factory=dict)       # and their bound buckets
    _idents: int = 0
    _base_cells: int = 0
    _cached_bytes: int = 0
    _not_null: tuple[str, ...] = ()  # the columns whose NULLs the base left out (coded again after end_counting)
    _into: str | None = None         # the scratch database or work schema of the base (None: temporary tables)
    _local: FrequencySet | None = None  # the base's cells, when there are at most ``local_cells``
    _floors: Floors | None = None       # counted nodes' cells kept within ``local_cells`` (``veil.frequencies``)
    _last_counted: tuple[tuple[Level, ...], dict[str, np.ndarray]] | None = None
    _ended: bool = False
    _weight: str | None = None       # the scans read the source grouped, rows in this column (``_group_source``)

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

    # --- inspection ---------------------------------------------------------------------------------

    def inspect(self) -> dict[str, Column]:
        """Columns of the source (``information_schema`` or the backend's catalog); errors name the table or
        column."""
        rows = self.session.source_columns(self.source.schema, self.source.table)
        if not rows:
            where = f" in schema {self.source.schema!r}" if self.source.schema else ""
            raise SourceError(f"source table {self.table_name!r} does not exist{where} "
                              f"({self.session.backend.name} at {self.session.backend.display_url})")
        columns: dict[str, Column] = {}
        for name, data_type, precision, scale in rows:
            try:
                sa_type, kind = q.column_type(str(data_type), precision, scale)
            except KeyError:
                sa_type, kind = None, None  # unsupported types are only an error if Veil must read them
            columns[name] = Column(name, sa_type, kind)  # type: ignore[arg-type]
        wanted = [qi.column for qi in self.quasi_identifiers] + list(self.sensitive) + list(self.null_checked)
        for name in wanted:
            if name not in columns:
                known = ", ".join(repr(c) for c in list(columns)[:MAX_LISTED])
                raise SourceError(f"column {name!r} does not exist in source table {self.table_name!r} "
                                  f"(its columns: {known})")
            if columns[name].kind is None:
                typ = next(r[1] for r in rows if r[0] == name)
                raise SourceError(f"column {name!r} of source table {self.table_name!r} has type {typ}, "
                                  "which Veil cannot generalize or count")
        self.columns = columns
        return columns

    def source_table(self, names: Sequence[str] | None = None) -> sa.Table:
        names = list(self.columns) if names is None else list(names)
        return q.source_table(self.source.schema, self.source.table,
                              {n: self.columns[n].sa_type if self.columns[n].sa_type is not None else sa.NullType()
                               for n in names})

    # --- preparation -----------------------------------------------------------------------------------

    def prepare(self) -> None:
        """Inspect, read the source's values (one scan), validate and load hierarchies, code the base frequency
        set (a second scan)."""
        started = time.perf_counter()
        if not self.columns:
            self.inspect()
        qis = [qi.column for qi in self.quasi_identifiers]
        self.on_step(f"scanning {self.table_name}")
        if self.session.backend.group_source and self.source.table != q.GROUPED:  # else the temporary table hides it
            self._group_source()
        values, with_nulls = self._scan()
        check_scan(self.table_name, self.stats.rows_read, self.rows, {c: self.columns[c].kind for c in qis}, values,
                   with_nulls)  # empty source, all rows dropped, NaN/±Inf; identifier warnings

        self.on_step("validating hierarchies")
        self.hierarchies = build_all(self.session, self.quasi_identifiers,
                                     {c: [v for v, _ in values[c]] for c in qis},
                                     {c: self.columns[c].kind for c in qis})
        domains = []
        for name in self.sensitive:
            kind = self.columns[name].kind
            pairs = sorted(((v, int(n)) for v, n in values[name]), key=lambda p: sort_key(p[0]))
            self.raw_values[name] = [v for v, _ in pairs]
            domains.append(SensitiveDomain(name, _domain_array([v for v, _ in pairs], kind),
                                           np.asarray([n for _, n in pairs], dtype=np.int64), numeric=kind.numeric))
        self.domains = tuple(domains)

        self.on_step("loading dimension tables")
        for i, (qi, h) in enumerate(zip(self.quasi_identifiers, self.hierarchies)):
            self.load_dimension(i, h, self.columns[qi.column].sa_type)
        for j, (name, dom) in enumerate(zip(self.sensitive, self.domains)):
            ddl = q.sensitive_domain_table(j, self.columns[name].sa_type)
            self.session.execute(create_table(ddl), f"creating the value table of {name!r}")
            self.session.bulk_load(ddl, [(v, c) for c, v in enumerate(self.raw_values[name])],
                                   f"loading the values of {name!r}")
        self.on_step(f"coding {self.table_name} into the base frequency set")
        self._code_base([c for c in self.null_checked if c in with_nulls])
        if self._weight is not None:  # read by the two scans only
            self.session.execute(q.drop_table(q.GROUPED), f"dropping the grouped rows of {self.table_name!r}")
            self._weight = None  # a base coded again (after ``end``) reads the source
        self.stats.base_seconds = time.perf_counter() - started

    def _group_source(self) -> None:
        """The source grouped by the columns Veil reads (``source_grouped``: on PostgreSQL the one parallel
        statement over the source; a temporary table, written by the leader from the workers' partial groups),
        which the two scans then read in its stead (``_read``), its rows in a column no source column is named."""
        columns = list(dict.fromkeys([qi.column for qi in self.quasi_identifiers] + list(self.sensitive)
                                     + list(self.null_checked)))
        weight = q.WEIGHT
        while weight in self.columns:
            weight += "_"
        what = f"grouping source table {self.table_name!r}"
        grouped = q.source_grouped(self.source_table(columns), columns, weight)
        self.session.execute(q.working_table(relation(q.GROUPED), grouped), what)
        self.session.analyze(relation(q.GROUPED), what)  # else PostgreSQL joins it to the dimensions by nested loops
        self._weight = weight

    def _read(self, names: Sequence[str]) -> sa.Table:
        """What the scans read: the source, or its grouped rows (``_group_source``)."""
        if self._weight is None:
            return self.source_table(names)
        types = {n: self.columns[n].sa_type if self.columns[n].sa_type is not None else sa.NullType() for n in names}
        return q.source_table(None, q.GROUPED, {**types, self._weight: sa.BigInteger()})

    def _scan(self) -> tuple[dict[str, list[tuple[Any, int]]], dict[str, int]]:
        """One scan of the source (``source_values``): every QI's and counted column's values with their rows, the
        rows, and the NULLs the policy looks at (``[source] nulls``: an error, or the rows left out).  Returns the
        values per column, each with the rows the policy keeps (a value only in rows left out is no value of the
        table: not in a hierarchy built from the data, not in ``P`` nor an ordered domain), and the columns
        holding NULLs with their rows."""
        qis = [qi.column for qi in self.quasi_identifiers]
        columns = qis + list(self.sensitive)
        table = self._read(columns + list(self.null_checked))
        rows = self.session.rows(q.source_values(table, columns, self.null_checked, weight=self._weight),
                                 f"scanning source table {self.table_name!r}")
        m = len(columns)
        values: dict[str, list[tuple[Any, int]]] = {c: [] for c in columns}
        nulls: dict[str, int] = dict.fromkeys(columns, 0)
        total, complete, checked = 0, 0, [0] * len(self.null_checked)
        for row in rows:
            grouped = [k for k in range(m) if not row[m + k]]
            if not grouped:  # the whole table
                total, complete = int(row[2 * m]), int(row[-1] or 0)
                checked = [int(x or 0) for x in row[2 * m + 1:-1]]
            elif row[grouped[0]] is None:
                nulls[columns[grouped[0]]] = int(row[2 * m])
            elif row[-1]:  # a value with its kept rows: rows the NULL policy leaves out are not in T (SPEC §1)
                values[columns[grouped[0]]].append((row[grouped[0]], int(row[-1])))
        nulls.update(zip(self.null_checked, checked))
        with_nulls = {k: v for k, v in nulls.items() if v}
        if with_nulls and self.source.nulls == "error":
            listing = ", ".join(f"{k!r} ({v} rows)" for k, v in with_nulls.items())
            raise SourceError(f"source table {self.table_name!r} has NULLs in column(s) {listing}; "
                              "set [source] nulls = \"drop\" to leave those rows out of the release")
        self.stats.rows_read = total
        self.stats.rows_dropped_null = total - complete
        self.rows = complete
        return values, with_nulls

    def _code_base(self, not_null: Sequence[str]) -> None:
        """``veil_base`` from the source (``base_coded``), checked to hold every row the NULL policy kept."""
        qis = [qi.column for qi in self.quasi_identifiers]
        table = self._read(qis + list(self.sensitive) + list(not_null))
        cards = [[h.cardinality(j) for j in range(h.height + 1)] for h in self.hierarchies]
        sizes, tiny = [d.size for d in self.domains], self.session.backend.tiny_integers
        self._into = self.session.scratch(self.rows * q.row_bytes(cards, sizes, tiny), self.scratch_threshold)
        self.stats.scratch = self._into is not None
        self.session.execute(q.base_coded(self.layout, table, qis, self.sensitive, not_null, cards, sizes, tiny=tiny,
                                          into=self._into, weight=self._weight),
                             f"coding source table {self.table_name!r} into the base frequency set")
        self._not_null = tuple(not_null)
        coded, cells = self.session.rows(base_total(self.layout), "checking the base frequency set")[0]
        if int(coded) != self.rows:
            raise BackendError(f"coding the base frequency set lost rows ({coded} of {self.rows}); "
                               "a value's type differs between the source and its dimension table")
        self._base_cells = int(cells)
        self.stats.base_cells = self._base_cells
        budget = self.session.backend.local_cells if self.local_cells is None else self.local_cells
        if self._base_cells <= budget:
            self._local = self._fetch_base()
        # floors: in memory from the base held here; from the warehouse only where a statement's fixed cost
        # outweighs rolling its cells up here (``Backend.batch_sizes``: Spark) — elsewhere the warehouse's own
        # rollups answer a node faster than memory does (bench/results/search_arx.json, docs/lattice.md)
        # (in memory, the floors together hold at most as many cells as the base: memory at most twice its own)
        self._floors = (Floors(self.hierarchies, min(budget, self._base_cells)) if self._local is not None
                        else Floors(self.hierarchies, budget) if self._batched else None)
        self._cells = self._rollups(q.BASE, self.layout, self._base_cells, bounded=bool(self.sensitive))

    def _fetch_base(self) -> FrequencySet:
        """The base frequency set's cells, fetched once (``queries.base_leaves``), with each hierarchy's map from
        a leaf code to its code at every level."""
        data = self.session.columns(q.base_leaves(self.layout), "fetching the base frequency set", narrow=True)
        self.stats.local_cells += len(data["n"])
        return FrequencySet([data[f"q{i}_0"] for i in range(len(self.hierarchies))],
                            [[h.ancestors(0, j) for j in range(h.height + 1)] for h in self.hierarchies],
                            [[h.cardinality(j) for j in range(h.height + 1)] for h in self.hierarchies],
                            np.column_stack([data[f"s{j}"] for j in range(len(self.sensitive))])
                            if self.sensitive else np.zeros((len(data["n"]), 0), dtype=np.int64), data["n"])

    @property
    def local(self) -> FrequencySet | None:
        """The base's cells held here, when it has at most ``local_cells`` (coded again after ``end_counting``)."""
        if self._cells is None and self._ended:
            self._cell_rollups  # noqa: B018 — codes the base again, and fetches it when small
        return self._local

    @property
    def tests_in_sql(self) -> bool:
        """Whether threshold tests may run as statements (``block_tests``): not when every node is counted here."""
        return self.block_tests_enabled and self.session.backend.block_tests and self.local is None

    def _holder(self, node: tuple[Level, ...]) -> FrequencySet | None:
        """The cells held here that ``node`` rolls up from: the fewest of a kept floor below it, or the base's."""
        local = self.local
        floor = self._floors.holder(node) if self._floors is not None else None
        return floor if floor is not None else local

    def _counted_here(self, node: tuple[Level, ...], held: FrequencySet) -> dict[str, np.ndarray]:
        """``node``'s cells rolled up from ``held``; kept as a floor when they are at most a quarter of those
        (Incognito's rollup, in memory: the nodes above it then sort fewer cells).  The last node's are
        remembered (a search asks a node's sizes, then its cells)."""
        if self._last_counted is not None and self._last_counted[0] == node:
            return self._last_counted[1]
        data = held.counts(node)
        self._last_counted = (node, data)
        self.stats.local_nodes += 1
        if (self._floors is not None and len(data["n"]) * 4 <= held.cells
                and self._floors.keep(node, data, len(self.sensitive)) is not None):
            self.stats.floors += 1
        return data

    @property
    def _batched(self) -> bool:
        """Whether a statement's fixed cost outweighs a pass over the data (``Backend.batch_sizes``; tests force it)."""
        return bool(self.session.backend.batch_sizes if self.batch is None else self.batch)

    def _floor(self, node: tuple[Level, ...]) -> FrequencySet | None:
        """Count a full node about to be streamed whose cells fit what may be kept (its blocks × the sensitive
        domains) whole instead — one statement either way — and keep them as a floor; ``None`` (no statement)
        when they may not fit.  (Counting a node only to keep it costs a statement the search may never repay:
        on Spark's 10M census, k = 10, 238 floors for 282 nodes took 522 s against 424 s without.)"""
        bound = self._cells_bound(node)
        if (self._local is not None or self._floors is None or None in node or bound is None
                or not self._floors.room(bound)):
            return None
        self.counts(node)  # keeps its cells
        return self._floors.holder(node)

    def load_dimension(self, i: int, h: Hierarchy, level0_type: Any) -> None:
        """Create and bulk-load dimension table ``i``: ``level_0..level_h`` and ``code_0..code_h``.  Every value
        must fit ``level_0``'s type (the source column's): PostgreSQL and DuckDB would refuse one beyond its
        range, each in its own words, and round one with more decimals than its scale, maybe onto another."""
        misfit = next((leaf for leaf in h.leaves if not q.fits(level0_type, leaf)), None)
        if misfit is not None:
            raise HierarchyError(f"hierarchy for column {h.attribute!r} ({h.source}) lists value {label_text(misfit)}, "
                                 f"which column {h.attribute!r} ({level0_type}) cannot hold")
        ddl = q.dim_table(i, h.height, level0_type)
        self.session.execute(create_table(ddl), f"creating the dimension table of {h.attribute!r}")
        codes = [h.codes(j).tolist() for j in range(h.height + 1)]
        rows = [(leaf, *(col[k] for col in h.labels), *(c[k] for c in codes)) for k, leaf in enumerate(h.leaves)]
        self.session.bulk_load(ddl, rows, f"loading the hierarchy of {h.attribute!r}")

    # --- node counts -----------------------------------------------------------------------------------------

    def _checked(self, node: Sequence[Level]) -> tuple[Level, ...]:
        node = tuple(node)
        if len(node) != len(self.quasi_identifiers):
            raise ValueError(f"node {node} has {len(node)} levels for {len(self.quasi_identifiers)} quasi-identifiers")
        for lv, h in zip(node, self.heights):
            if lv is not None and not 0 <= lv <= h:
                raise ValueError(f"node {_show(node)} is outside the lattice (heights {self.heights})")
        return node

    def sizes(self, node: Sequence[Level]) -> SizeHistogram:
        """``node``'s block-size histogram, aggregated in SQL (``node_sizes``: a few numbers, no block list)."""
        node = self._checked(node)
        cached = self._sizes.get(node)
        if cached is not None:
            self.stats.cache_hits += 1
            return cached
        started = time.perf_counter()
        held = self._holder(node)
        if held is not None:
            # counted whole (its cells may roll up the nodes above; its stream, next, reads them again)
            self._counted_here(node, held)
            hist = SizeHistogram(node, *held.sizes(node))  # the blocks just grouped, remembered by ``held``
            self._sizes[node] = hist
            self.stats.node_seconds += time.perf_counter() - started
            return hist
        what = f"counting the block sizes of node {_show(node)}"
        blocks = self._block_rollups()
        with self._reading(blocks, node, what) as (name, floor):
            data = self.session.columns(q.node_sizes(blocks.layout, node, floor, source=name), what)
        self.stats.size_queries += 1
        hist = SizeHistogram(node, data["size"].astype(np.int64), data["blocks"].astype(np.int64))
        self._know_sizes(blocks, hist)
        self.stats.node_seconds += time.perf_counter() - started
        return hist

    def _know_sizes(self, blocks: Rollups, hist: SizeHistogram) -> None:
        """Remember a node's block-size histogram, and what its blocks tell the rollups about its cells."""
        blocks.know(hist.node, hist.n_blocks, exact=True)
        if blocks is not self._cell_rollups:
            self._cell_rollups.know(hist.node, hist.n_blocks)  # a node has at least as many cells as blocks
        self._sizes[hist.node] = hist

    def prefetch_sizes(self, nodes: Sequence[Sequence[Level]]) -> None:
        """The block-size histograms of nodes a search will ask next (``incognito``'s frontier of one height,
        ``brute-force``'s next nodes: ``search.run``'s ``prefetch``), counted together — one ``GROUP BY GROUPING SETS`` over their meet's source
        (``queries.grouped_sizes``, ``Rollups.reading_many``), at most ``PREFETCH`` nodes a statement — where the
        backend says a statement's fixed cost outweighs a pass over the data (``Backend.batch_sizes``: Spark);
        ``sizes`` then answers from them.  Elsewhere nothing: each node is counted when asked, and no node the
        search never reads is counted (on DuckDB and PostgreSQL one statement per node was the faster,
        ``bench/bench_grouping_sets.py``)."""
        if not (self.session.backend.batch_sizes if self.batch is None else self.batch) or self.local is not None:
            return
        todo = list(dict.fromkeys(n for n in map(self._checked, nodes)
                                  if n not in self._sizes and self._holder(n) is None))
        for part in (todo[lo:lo + PREFETCH] for lo in range(0, len(todo), PREFETCH)):
            if len(part) > 1:
                self._sizes_together(part)

    def _sizes_together(self, nodes: list[tuple[Level, ...]]) -> None:
        started = time.perf_counter()
        what = f"counting the block sizes of {len(nodes)} nodes together"
        blocks = self._block_rollups()
        self.stats.node_queries += 1
        self.stats.size_queries += 1
        self.stats.batched += len(nodes)
        with blocks.reading_many(nodes, self._next_ident, what) as (name, floor):
            grouped = q.grouped_sizes(blocks.layout, nodes, floor, source=name)
            data = self.session.columns(grouped.statement, what)
        gid, size, count = (data[c].astype(np.int64) for c in ("gid", "size", "blocks"))
        for node, ident in zip(nodes, grouped.ids):
            mine = gid == ident
            order = np.argsort(size[mine], kind="stable")
            self._know_sizes(blocks, SizeHistogram(node, size[mine][order], count[mine][order]))
        self.stats.node_seconds += time.perf_counter() - started

    def counted_sizes(self, node: Sequence[Level]) -> SizeHistogram | None:
        """``node``'s block-size histogram when ``sizes`` already counted it (no query), else ``None``."""
        return self._sizes.get(tuple(node))

    def block_tests(self, node: Sequence[Level], attribute: str, tests: Sequence[tuple[str, float]]) -> BlockTests | None:
        """Threshold tests on ``attribute``'s per-block histograms at ``node`` computed in SQL (``node_statistics``:
        a few rows per node, no histogram); ``None`` when floating point leaves a block undecided (evaluate the
        node from its histograms then).  Ordered-EMD tests alone are tried first from bounds on the cells counted
        per value bucket (``node_bounds``), and per cell only when those leave a block open."""
        node = self._checked(node)
        if self._holder(node) is not None:  # counted here, no statement: the checkers read its histograms
            return None
        started = time.perf_counter()
        what = f"testing the blocks of node {_show(node)}"
        statements = self._test_statements(node, list(self.sensitive).index(attribute), tests)
        rows: list[Any] = []
        for statement in statements:
            with self._reading(self._cell_rollups, node, what) as (name, floor):
                rows = self.session.rows(statement(name, floor), what)
            self.stats.test_queries += 1
            if not self._undecided(rows, len(tests)):
                break
        self.stats.node_seconds += time.perf_counter() - started
        if self._undecided(rows, len(tests)):
            self.stats.undecided += 1
            return None
        r = len(tests)
        flags = np.asarray([row[1:1 + r] for row in rows], dtype=np.int64).reshape(len(rows), r)
        return BlockTests(np.asarray([row[0] for row in rows], dtype=np.int64),
                          np.asarray([row[1 + r] for row in rows], dtype=np.int64), flags == 1,
                          np.asarray([row[2 + r:] for row in rows], dtype=np.float64).reshape(len(rows), r))

    def _test_statements(self, node: tuple[Level, ...], j: int,
                         tests: Sequence[tuple[str, float]]) -> list[Callable[[str, Any], Any]]:
        """The statements ``block_tests`` tries in order, each a function of the table it reads and its floor."""
        widths = [h.cardinality(lv) for h, lv in zip(self.hierarchies, node) if lv is not None]
        kinds = [k for k, _ in tests]
        reference = self._reference(j) if any(k in q.distances.KINDS for k in kinds) else None
        statements = [lambda name, floor: q.node_statistics(self.layout, node, j, tests, floor, source=name,
                                                            reference=reference, widths=widths)]
        if reference is not None and all(k == "ordered" for k in kinds):  # bounds first: fewer rows per block
            buckets = self._buckets[j]
            statements.insert(0, lambda name, floor: q.node_bounds(self.layout, node, j, [t for _, t in tests],
                                                                   reference, buckets, floor, source=name,
                                                                   widths=widths))
        return statements

    @staticmethod
    def _undecided(rows: Sequence[Sequence[Any]], tests: int) -> bool:
        return any(q.UNDECIDED in row[1:1 + tests] for row in rows)

    def _reference(self, j: int) -> q.distances.Reference:
        """Sensitive column ``j``'s distribution as the lookup tables of the distance tests, loaded once."""
        if j not in self._references:
            d = Distribution.of(self.domains[j].total)
            width, buckets = d.bucket_table(self.bound_buckets)
            name = self.sensitive[j]
            for ddl, columns in zip((*q.distances.lookup_tables(j), q.distances.bucket_table(j)),
                                    (d.positions, d.inverse, buckets)):
                self.session.execute(create_table(ddl), f"creating the distribution table of {name!r}")
                self.session.load_columns(ddl, columns, f"loading the distribution of {name!r}")
            self._references[j] = q.distances.Reference(j, d.rows, d.width, d.buckets, d.integral)
            self._buckets[j] = q.distances.Buckets(j, width, len(buckets["k"]) - 1)
        return self._references[j]

    def stream(self, node: Sequence[Level]) -> Iterator[NodeCounts]:
        """``node``'s counts in chunks of complete blocks (block-key order), about ``chunk_cells`` cells each
        (a chunk ends at the last block boundary; a block larger than a chunk arrives whole).  Only one chunk
        is ever held here; every chunk's blocks are numbered on their own."""
        node = self._checked(node)
        started = time.perf_counter()
        held = self._holder(node) or self._floor(node)
        if held is not None:  # held here: one chunk of at most ``local_cells`` cells
            counts = self._node_counts(node, self._counted_here(node, held))
            self.stats.node_seconds += time.perf_counter() - started
            yield counts
            return
        what = f"counting node {_show(node)}"
        keys = q.node_keys(self.layout, node)
        self.stats.streamed += 1
        carry: dict[str, np.ndarray] | None = None
        cells = 0
        with self._reading(self._cell_rollups, node, what) as (name, floor):
            for data in self.session.stream(q.node_counts(self.layout, node, floor, source=name), keys,
                                            self.chunk_cells, what):
                cells += len(data["n"])
                if carry is not None:
                    data = {k: np.concatenate([carry[k], v]) for k, v in data.items()}
                last = _last_block_start(data, keys)
                carry = {k: v[last:] for k, v in data.items()}
                if last:
                    self.stats.chunks += 1
                    self.stats.node_seconds += time.perf_counter() - started
                    yield self._node_counts(node, {k: v[:last] for k, v in data.items()})
                    started = time.perf_counter()
        self._cell_rollups.know(node, cells, exact=True)
        self.stats.node_seconds += time.perf_counter() - started
        if carry is not None and len(carry["n"]):
            self.stats.chunks += 1
            yield self._node_counts(node, carry)

    def counts(self, node: Sequence[Level]) -> NodeCounts:
        """The per-q*-block counts of ``node`` (one ``GROUP BY`` unless cached)."""
        node = self._checked(node)
        cached = self._cache.get(node)
        if cached is not None:
            self.stats.cache_hits += 1
            return cached
        started = time.perf_counter()
        held = self._holder(node)
        if held is not None:
            data = self._counted_here(node, held)
        else:
            what = f"counting node {_show(node)}"
            with self._reading(self._cell_rollups, node, what) as (name, floor):
                data = self.session.columns(q.node_counts(self.layout, node, floor, source=name), what, narrow=True)
            self._cell_rollups.know(node, len(data["n"]), exact=True)
            if (self._local is None and self._floors is not None
                    and self._floors.keep(node, data, len(self.sensitive)) is not None):
                self.stats.floors += 1
                self.stats.local_cells += len(data["n"])
        result = self._node_counts(node, data)
        self.stats.node_seconds += time.perf_counter() - started
        self._remember(node, result)
        return result

    def _remember(self, node: tuple[Level, ...], counts: NodeCounts) -> None:
        """Cache a node's counts, evicting the oldest beyond ``cache_bytes`` (big tables, long searches)."""
        self._cache[node] = counts
        self._cached_bytes += counts.nbytes
        while self._cached_bytes > self.cache_bytes and len(self._cache) > 1:
            oldest = next(iter(self._cache))
            self._cached_bytes -= self._cache.pop(oldest).nbytes

    # --- rollups (Incognito; veil.rollup) ------------------------------------------------------------------

    @contextlib.contextmanager
    def _reading(self, rollups: Rollups, node: tuple[Level, ...],
                 what: str) -> Iterator[tuple[str, tuple[Level, ...] | None]]:
        """The table one node query reads (``Rollups.reading``), counted as a node query."""
        self.stats.node_queries += 1
        with rollups.reading(node, self._next_ident, what) as found:
            yield found

    def _next_ident(self) -> int:
        self._idents += 1
        return self._idents

    def _rollups(self, base: str, layout: q.Layout, cells: int, bounded: bool) -> Rollups:
        cards = tuple(tuple(h.cardinality(j) for j in range(h.height + 1)) for h in self.hierarchies)
        spread = math.prod(d.size for d in self.domains[:layout.sensitive_count])
        return Rollups(self.session, layout, base, cells, self.stats.rollups, self._up_tables, enabled=self.rollup,
                       ratio=self.rollup_ratio, min_cells=self.rollup_min_cells, budget=self.rollup_budget,
                       bounded=bounded, upper=self._cells_bound, cardinalities=cards, spread=spread,
                       hub_ratio=self.session.backend.hub_ratio if self.hub_ratio is None else self.hub_ratio,
                       into=self._into if self.session.backend.scratch_nodes else None)

    @property
    def _cell_rollups(self) -> Rollups:
        if self._cells is None and self._ended:  # a node after end_counting (a release's report): code it again
            self.on_step(f"coding {self.table_name} into the base frequency set again")
            self._ended = False
            self._code_base(self._not_null)
        if self._cells is None:
            raise RuntimeError("no base frequency set: prepare() the warehouse before counting nodes")
        return self._cells

    def _block_rollups(self) -> Rollups:
        """Rollups for block-size queries: of the cells when no sensitive column is counted, else of the same base
        read without its sensitive columns (its blocks' sizes summed over them), whose rollups — hubs first —
        keep the blocks alone: a size query then reads no more rows than a k-anonymity search's rollups."""
        cells = self._cell_rollups
        if not self.sensitive:
            return cells
        if self._blocks is None:
            self._blocks = self._rollups(q.BASE, q.Layout(self.heights, 0), self._base_cells, bounded=False)
        return self._blocks

    def _cells_bound(self, node: tuple[Level, ...]) -> int | None:
        """An upper bound on ``node``'s cells: its blocks (when their sizes were counted) × every counted sensitive
        column's domain (``None`` without its block count)."""
        hist = self._sizes.get(node)
        if hist is None:
            return None
        return hist.n_blocks * math.prod(d.size for d in self.domains)

    def end_search(self) -> None:
        """The search is over: drop the rollups it kept, and let the database free them where that cannot change
        what the run reads (``Session.settle``).  The base frequency set stays; a later node query works as
        before, materializing again what it needs."""
        for rollups in self.rollups:
            rollups.drop_kept("dropping the search's working tables")
        self.session.settle()

    def end_counting(self) -> None:
        """The run counts no more nodes (a release holding its node's counts): drop the rollups and the base
        frequency set itself, and let the database free them before the release's own steps grow.  A node
        query after this (a release's report) codes the base again from the source: one more scan."""
        self.end_search()
        self._cache.clear()  # the caller holds the counts it needs
        self._cached_bytes = 0
        if self._cells is not None:
            self.session.execute(q.drop_table(q.BASE), "dropping the base frequency set")
            self._cells = self._blocks = self._local = self._floors = self._last_counted = None
            self._ended = True
            self.session.settle()

    @property
    def rollups(self) -> tuple[Rollups, ...]:
        """This run's rollups: of the cells, and of the blocks alone when sensitive values are counted."""
        return tuple(r for r in (self._cells, self._blocks) if r is not None)

    def _node_counts(self, node: tuple[Level, ...], data: dict[str, np.ndarray]) -> NodeCounts:
        r = len(data["n"])
        qi_codes = np.zeros((r, len(node)), dtype=np.int32)  # codes fit; NodeCounts keeps only the blocks' keys
        for i, level in enumerate(node):
            if level is not None:
                qi_codes[:, i] = data[f"g{i}"]
        s_codes = np.column_stack([data[f"s{j}"] for j in range(len(self.sensitive))]) if self.sensitive \
            else np.zeros((r, 0), dtype=np.int64)
        cards = [self.hierarchies[i].cardinality(lv) if lv is not None else 1 for i, lv in enumerate(node)]
        return NodeCounts.from_cells(self.attributes, node, qi_codes, s_codes, data["n"], cards, self.domains,
                                     self.hierarchies)


def _last_block_start(data: dict[str, np.ndarray], keys: Sequence[str]) -> int:
    """Index of the first cell of the last block in ``data`` (cells ordered by the block ``keys``).

    >>> _last_block_start({"g0": np.array([1, 1, 2, 2]), "n": np.ones(4)}, ["g0"])
    2
    """
    r = len(data["n"])
    if r == 0 or not keys:
        return 0
    change = np.zeros(r, dtype=bool)
    for k in keys:
        col = data[k]
        change[1:] |= col[1:] != col[:-1]
    starts = np.flatnonzero(change)
    return int(starts[-1]) if len(starts) else 0


def _show(node: Sequence[Level]) -> str:
    return "(" + ",".join("*" if lv is None else str(lv) for lv in node) + ")"


def value_text(v: Any) -> str:
    """A value as the JSON output writes it."""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, (dt.date, dt.datetime)):
        return v.isoformat()
    return str(v)
