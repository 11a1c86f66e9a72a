"""The base frequency set in the warehouse (``veil_base``: one row per distinct combination of the
quasi-identifiers' leaf codes and the counted sensitive values' codes, with its rows — docs/lattice.md) and
what every node query reads from it: the rollups over it (``veil.rollup``: of its cells, and of its blocks alone
for block-size queries) and, when it is small, its cells held in this process (``veil.heldcells``).

``BaseSet.code`` codes the rows the scans read (``veil.sourcescan``) through the dimension tables
(``veil.dimensiontables``); ``end_counting`` drops it, and a node query after that codes it again (one more
scan).  Builds SQL only through ``veil.queries``; executes only through a backend ``Session``.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from veil import queries as q
from veil.backends.base import Backend
from veil.counts import Level, SensitiveDomain, SizeHistogram
from veil.errors import BackendError
from veil.frequencies import Floors, FrequencySet
from veil.heldcells import LOCAL_FLOORS_FROM, HeldCells
from veil.hierarchy import Hierarchy
from veil.lattice import show
from veil.queries.nodes import base_total
from veil.rollup import Rollups
from veil.sourcecells import SourceCells, merged
from veil.sourcescan import SourceScan
from veil.workstats import Stats

Node = tuple[Level, ...]


@dataclass(frozen=True)
class Options:
    """The run's choices for the base and the rollups over it (``Warehouse``'s fields of the same names)."""

    rollup: bool
    rollup_ratio: float
    rollup_min_cells: int
    rollup_budget: float
    hub_ratio: float | None
    batch: bool | None
    scratch_threshold: int | None
    local_cells: int | None

    def batched(self, backend: Backend) -> bool:
        """Whether a statement's fixed cost outweighs a pass over the data (``Backend.batch_sizes``; tests force it)."""
        return bool(backend.batch_sizes if self.batch is None else self.batch)

    def budget(self, backend: Backend) -> int:
        """The most cells held here (``local_cells``, else the backend's own)."""
        return backend.local_cells if self.local_cells is None else self.local_cells

    def held_first(self, backend: Backend, rows: int) -> bool:
        """Whether a source of ``rows`` rows is held first — its rows grouped and fetched before anything is
        counted in the warehouse (``veil.sourcecells``) — where a statement costs more than a pass over the data
        (``batched``) and the rows fit ``budget`` (so the cells do)."""
        return self.batched(backend) and 0 < rows <= self.budget(backend)


class BaseSet:
    """The base of the rows ``scan`` reads (``rows`` of them, as the NULL policy kept), coded through
    ``hierarchies`` and the counted sensitive columns' ``domains`` (their values as the driver gives them:
    ``raw_values``), laid out as ``layout``.  ``known_sizes``: the
    block-size histograms counted so far (``veil.blocksizes``), which bound the cells of their nodes."""

    def __init__(
        self,
        scan: SourceScan,
        layout: q.Layout,
        hierarchies: Sequence[Hierarchy],
        domains: Sequence[SensitiveDomain],
        raw_values: Sequence[Sequence[Any]],
        rows: int,
        stats: Stats,
        options: Options,
        on_step: Callable[[str], None],
    ) -> None:
        self.scan, self.session, self.layout = scan, scan.session, layout
        self.hierarchies, self.domains, self.rows = tuple(hierarchies), tuple(domains), rows
        self.raw_values = tuple(raw_values)  # each domain's values as the driver gives them (``SourceScan.domain``)
        self.stats, self.options, self.on_step = stats, options, on_step
        self.known_sizes: dict[Node, SizeHistogram] = {}
        self.cells = 0  # the base's cells
        self._cells: Rollups | None = None  # rollups of the cells (veil_base)
        self._blocks: Rollups | None = None  # rollups of the blocks alone (the base without its sensitive columns)
        self._held: HeldCells | None = None
        # the kept rows' cells with the carried columns (``SourceCells.valued``) and their values, where held first
        self.valued: tuple[FrequencySet, list[Sequence[Any]]] | None = None
        self._up_tables: set[tuple[int, int]] = set()
        self._idents = 0
        self._into: str | None = None  # the scratch database or work schema of the base (None: temporary tables)
        self._not_null: tuple[str, ...] = ()  # the columns whose NULLs the base left out (coded again after the end)
        self._ended = False

    def code(self, not_null: Sequence[str], cells: SourceCells | None = None) -> None:
        """The base frequency set of the rows the NULL policy kept: coded here from the source's ``cells`` where
        the source is held first (``Options.held_first``: fetched now if not given), else ``veil_base`` in the
        warehouse (``base_coded``), checked to hold every row the NULL policy kept."""
        self._not_null = tuple(not_null)
        if cells is None and self.options.held_first(self.session.backend, self.rows):
            cells = self.scan.cells()
        if cells is None:
            self._code_in_warehouse()
            return
        if not cells.carried:
            self._hold(cells.coded(self.hierarchies, self.raw_values))
            return
        data, values = cells.valued(self.hierarchies, self.raw_values)  # once, the carried columns summed away after
        carried = np.column_stack([data.pop(f"c{j}") for j in range(cells.carried)])
        coded = merged(data, [k for k in data if k != "n"])
        self.valued = self._frequency_set(data, carried), values
        del data, carried
        self._hold(coded)

    def _hold(self, data: dict[str, np.ndarray]) -> None:
        """The base's cells held here, and nothing in the warehouse until a statement needs it (``cell_rollups``)."""
        coded = int(data["n"].sum())
        if coded != self.rows:
            raise BackendError(f"coding the base frequency set lost rows ({coded} of {self.rows})")
        self.cells = self.stats.base_cells = len(data["n"])
        budget = self.options.budget(self.session.backend)
        self._held = HeldCells(self._held_cells(data), self._local_floors(budget), len(self.domains), self.stats)

    def _local_floors(self, budget: int) -> Floors | None:
        """Floors over the base held here: only for a base of at least ``LOCAL_FLOORS_FROM`` cells, below which
        rolling every node up from the base costs less than counting and keeping floors (``veil.heldcells``)."""
        return Floors(self.hierarchies, min(budget, self.cells)) if self.cells >= LOCAL_FLOORS_FROM else None

    def _code_in_warehouse(self) -> None:
        """``veil_base`` from the source (``base_coded``), checked to hold every row the NULL policy kept."""
        scan, session, not_null = self.scan, self.session, self._not_null
        table = scan.read(scan.quasi_identifiers + scan.sensitive + list(not_null))
        cards = [[h.cardinality(j) for j in range(h.height + 1)] for h in self.hierarchies]
        sizes = [d.size for d in self.domains]
        self._into = session.scratch(
            self.rows * q.row_bytes(cards, sizes, session.dialect), self.options.scratch_threshold
        )
        self.stats.scratch = self._into is not None
        session.execute(
            q.base_coded(
                self.layout,
                table,
                scan.quasi_identifiers,
                scan.sensitive,
                not_null,
                cards,
                sizes,
                into=self._into,
                weight=scan.weight,
            ),
            f"coding source table {scan.name!r} into the base frequency set",
        )
        coded, cells = session.rows(base_total(self.layout), "checking the base frequency set")[0]
        if int(coded) != self.rows:
            raise BackendError(
                f"coding the base frequency set lost rows ({coded} of {self.rows}); "
                "a value's type differs between the source and its dimension table"
            )
        self.cells = self.stats.base_cells = int(cells)
        if self._held is None:  # else its cells are held here already (the source held first): not fetched again
            self._held = self._fetched()
        self._cells = self._rollups(
            q.BASE,
            self.layout,
            self.cells,
            bounded=bool(self.domains),
            on_keep=functools.partial(self._fetch, False) if self.batched else None,
        )

    def _fetched(self) -> HeldCells:
        """The base's cells fetched when they fit ``local_cells``, and where floors are kept."""
        budget = self.options.budget(self.session.backend)
        local = self._held_cells(self._leaves()) if self.cells <= budget else None
        # floors: in memory from the base held here; from the warehouse only where a statement's fixed cost
        # outweighs rolling its cells up here (``Backend.batch_sizes``: Spark) — elsewhere the warehouse's own
        # rollups answer a node faster than memory does (bench/results/search_arx.json, docs/lattice.md)
        # (in memory, the floors together hold at most as many cells as the base: memory at most twice its own;
        # fetched floors take both shares, the base not being held — Incognito with k + entropy on Spark's 10M census
        # fetched its 34 floors 190 times with one share, 94 with two: docs/benchmarks.md, "Beside ARX")
        # (with no budget, ``local_cells = 0``, none: a node then never has a hub materialized for a fetch)
        fetching = self.batched and budget > 0
        floors = (
            self._local_floors(budget)
            if local is not None
            else Floors(self.hierarchies, 2 * budget)
            if fetching
            else None
        )
        # the blocks alone (block-size queries, when sensitive values are counted) get floors of their own there
        blocks = Floors(self.hierarchies, budget) if local is None and fetching and self.domains else None
        return HeldCells(local, floors, len(self.domains), self.stats, blocks)

    def _leaves(self) -> dict[str, np.ndarray]:
        """The base frequency set's cells (``queries.base_leaves``)."""
        return self.session.columns(q.base_leaves(self.layout), "fetching the base frequency set", narrow=True)

    def _held_cells(self, data: dict[str, np.ndarray]) -> FrequencySet:
        """The base frequency set's cells held here, fetched once, with each hierarchy's map from a leaf code to
        its code at every level."""
        self.stats.local_cells += len(data["n"])
        return self._frequency_set(data)

    def _frequency_set(self, data: dict[str, np.ndarray], carried: np.ndarray | None = None) -> FrequencySet:
        """Coded cells (``SourceCells.coded``'s columns) as a ``FrequencySet``, each ``carried`` column a further
        sensitive column after the counted ones."""
        columns = [data[f"s{j}"] for j in range(len(self.domains))]
        if carried is not None:
            columns += list(carried.T)
        return FrequencySet(
            [data[f"q{i}_0"] for i in range(len(self.hierarchies))],
            [[h.ancestors(0, j) for j in range(h.height + 1)] for h in self.hierarchies],
            [[h.cardinality(j) for j in range(h.height + 1)] for h in self.hierarchies],
            np.column_stack(columns) if columns else np.zeros((len(data["n"]), 0), dtype=np.int64),
            data["n"],
            narrow=True,  # codes in the narrowest integers: a tally's packing adds them to its key at half the cost
        )

    def leaf_totals(self) -> list[np.ndarray]:
        """Rows per leaf code of every quasi-identifier (the base's marginals): from the cells held here, else one
        statement over the base (``queries.leaf_totals``) — never the bottom node's cells, which are as many as
        the base's (7.1M for the 10M-row census)."""
        held = self.held
        local = held.local if held is not None else None
        cards = [h.cardinality(0) for h in self.hierarchies]
        if local is not None:
            return [np.bincount(c, weights=local.n, minlength=m).astype(np.int64) for c, m in zip(local.leaves, cards)]
        self.cell_rollups  # noqa: B018 — the base in the warehouse (coded there again after ``end_counting``)
        data = self.session.columns(q.leaf_totals(self.layout), "counting the rows of every quasi-identifier's values")
        totals = [np.zeros(m, dtype=np.int64) for m in cards]
        for i, leaves in enumerate(totals):
            mine = data["qi"] == i
            leaves[data["code"][mine]] = data["n"][mine]
        return totals

    @property
    def held(self) -> HeldCells | None:
        """The cells held here (coded again after ``end_counting``); ``None`` before the base is coded."""
        if self._ended:
            self._again()
        return self._held

    def _again(self) -> None:
        """A node after ``end_counting`` (a release's report): the base coded again."""
        self.on_step(f"coding {self.scan.name} into the base frequency set again")
        self._ended = False
        self.code(self._not_null)

    @property
    def batched(self) -> bool:
        """Whether a statement's fixed cost outweighs a pass over the data (``Options.batched``)."""
        return self.options.batched(self.session.backend)

    # --- the rollups (Incognito; veil.rollup) ------------------------------------------------------------------

    @contextlib.contextmanager
    def reading(self, rollups: Rollups, node: Node, what: str) -> Iterator[tuple[str, Node | None]]:
        """The table one node query reads (``Rollups.reading``), counted as a node query."""
        self.stats.node_queries += 1
        with rollups.reading(node, self.next_ident, what) as found:
            yield found

    def next_ident(self) -> int:
        self._idents += 1
        return self._idents

    def _rollups(
        self,
        base: str,
        layout: q.Layout,
        cells: int,
        bounded: bool,
        on_keep: Callable[[Node, str, int], int | None] | None = None,
    ) -> Rollups:
        cards = tuple(tuple(h.cardinality(j) for j in range(h.height + 1)) for h in self.hierarchies)
        spread = math.prod(d.size for d in self.domains[: layout.sensitive_count])
        o, backend = self.options, self.session.backend
        return Rollups(
            self.session,
            layout,
            base,
            cells,
            self.stats.rollups,
            self._up_tables,
            enabled=o.rollup,
            ratio=o.rollup_ratio,
            min_cells=o.rollup_min_cells,
            budget=o.rollup_budget,
            bounded=bounded,
            upper=self.cells_bound,
            cardinalities=cards,
            spread=spread,
            hub_ratio=backend.hub_ratio if o.hub_ratio is None else o.hub_ratio,
            into=self._into if backend.scratch_nodes else None,
            on_keep=on_keep,
        )

    def holder(self, node: Node, what: str, sizes: bool = False) -> FrequencySet | None:
        """The cells held here that ``node`` (its block ``sizes`` alone, or its counts) rolls up from, or ``None``
        when ``node`` needs a statement.  Where the base is not held but floors are (a batched backend: Spark), a
        node no floor covers first has its hub materialized, whose cells are fetched and kept as a floor when they
        fit (``_fetch``): ``node`` and every node above the hub are then counted here.  For ``sizes``, failing that,
        the hub of the blocks' rollups, kept as a floor of blocks."""
        held = self.held
        if held is None:
            return None
        found = held.size_holder(node) if sizes else held.holder(node)
        if found is not None or held.local is not None or held.floors is None:
            return found
        self.cell_rollups.prepare(node, self.next_ident, what)
        found = held.holder(node)
        if found is None and sizes and held.block_floors is not None:
            self.block_rollups().prepare(node, self.next_ident, what)
            found = held.size_holder(node)
        return found

    def _fetch(self, blocks: bool, node: Node, table: str, cells: int) -> int | None:
        """A node of the cells' rollups (or the ``blocks``' alone) just kept in the warehouse — a hub, mostly: its
        cells fetched and kept as a floor here (of block sizes, for ``blocks``) when they fit the floors' budget and
        no floor already covers it (``veil.heldcells``); how many were fetched (``None``: none).  ``cells`` may be a
        bound (a hub just made: ``Rollups._materialize``), so that its fetch counts them, with no statement of its
        own (Spark's 10M census, k + entropy: 33 such statements of 0.1-0.4 s)."""
        held = self._held
        floors = None if held is None or held.local is not None else held.block_floors if blocks else held.floors
        if held is None or floors is None or not floors.room(cells):
            return None
        if (held.size_holder(node) if blocks else held.holder(node)) is not None:
            return None
        layout = q.Layout(self.layout.heights, 0) if blocks else self.layout
        what = f"fetching the {'blocks' if blocks else 'cells'} of node {show(node)}"
        data = self.session.columns(q.node_counts(layout, node, node, source=table), what, narrow=True)
        held.keep_counted(node, data, blocks)
        return len(data["n"])

    @property
    def cell_rollups(self) -> Rollups:
        """Rollups of the cells, for counts and threshold tests (the base coded again after ``end_counting``)."""
        if self._ended:
            self._again()
        if self._cells is None and self._held is not None:  # held here alone: a statement needs it in the warehouse
            self._code_in_warehouse()
        if self._cells is None:
            raise RuntimeError("no base frequency set: prepare() the warehouse before counting nodes")
        return self._cells

    def block_rollups(self) -> Rollups:
        """Rollups for block-size queries: of the cells when no sensitive column is counted, else of the same base
        read without its sensitive columns (its blocks' sizes summed over them), whose rollups — hubs first —
        keep the blocks alone: a size query then reads no more rows than a k-anonymity search's rollups."""
        cells = self.cell_rollups
        if not self.domains:
            return cells
        if self._blocks is None:
            self._blocks = self._rollups(
                q.BASE,
                q.Layout(self.layout.heights, 0),
                self.cells,
                bounded=False,
                on_keep=functools.partial(self._fetch, True) if self.batched else None,
            )
        return self._blocks

    @property
    def rollups(self) -> tuple[Rollups, ...]:
        """The rollups kept: of the cells, and of the blocks alone when sensitive values are counted."""
        return tuple(r for r in (self._cells, self._blocks) if r is not None)

    def cells_bound(self, node: Node) -> int | None:
        """An upper bound on ``node``'s cells: its blocks (when their sizes were counted) × every counted sensitive
        column's domain (``None`` without its block count)."""
        hist = self.known_sizes.get(node)
        if hist is None:
            return None
        return hist.n_blocks * math.prod(d.size for d in self.domains)

    def end_search(self) -> None:
        """Drop the rollups kept — in the warehouse, and the floors held here — and let the database free them where
        that cannot change what the run reads (``Session.settle``).  The base stays; a later node query
        materializes again what it needs."""
        for rollups in self.rollups:
            rollups.drop_kept("dropping the search's working tables")
        if self._held is not None:
            self._held.forget()
        self.session.settle()

    def end_counting(self) -> None:
        """Drop the rollups and the base itself, and let the database free them; a node query after this codes
        the base again from the source."""
        self.end_search()
        if self._cells is not None:
            self.session.execute(q.drop_table(q.BASE), "dropping the base frequency set")
        self.valued = None
        if self._cells is not None or self._held is not None:
            self._cells = self._blocks = self._held = None
            self._ended = True
            self.session.settle()
