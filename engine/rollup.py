"""Incognito's rollups (LeFevre, DeWitt, Ramakrishnan, SIGMOD 2005): a node's counts aggregated from the
materialized counts of a finer node instead of the base frequency set.

One ``Rollups`` serves one base table and one layout of it: ``veil_base``'s cells (blocks × counted sensitive
values) or, when there are sensitive columns, its blocks alone (the sensitive values summed away, for
block-size queries; their rollups keep no sensitive column).  A node read from a
large source is materialized first, narrow (its own levels' codes only, ``queries.materialize``), and read from
its own table: materializing costs what one query costs, so a node with at most ``ratio`` × its source's cells
is kept for later rollups for free and a larger one is dropped after the query.  A node known to be too large
(a coarser node already has too many cells, or its upper bound says so) is read from its source directly.

A node that would read the base materializes a *hub* first (``Rollups.hub``): the finest node below it whose
cells the hierarchies bound to at most ``hub_ratio`` × the base's (the product of its levels' cardinalities),
then reads itself from the hub.  The hub costs what the node's own base read would have cost, and every later node
above it reads the hub instead of the base: a search that wanders over the lattice reads the base a few
times, not once per region it enters.

Builds SQL only through ``veil.queries``; executes only through a backend ``Session``.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from veil import queries as q
from veil.backends.base import Session
from veil.counts import Level
from veil.lattice import finer, meet

Node = tuple[Level, ...]


@dataclass
class Counters:
    """Node queries that read a materialized finer node, and the nodes materialized (kept or read once)."""

    rolled_up: int = 0
    materialized: int = 0
    hubs: int = 0  # of those, hubs materialized before a node that would have read the base


@dataclass
class Rollups:
    """The materialized nodes over one base table (``base``, ``base_cells`` cells, laid out as ``layout``).

    ``upper(node)``: an upper bound on ``node``'s cells when one is known; the cells of a node below it counted
    before bound it too.  With no bound a node is materialized only when ``bounded`` is false (its cells are its
    blocks: the query is the materialization).
    The rollups kept at once hold at most ``budget`` × ``base_cells`` cells, the least recently read dropped
    first; ``up_tables`` (shared by every ``Rollups`` of a session) are the ``veil_up_*`` code tables created."""

    session: Session
    layout: q.Layout
    base: str
    base_cells: int
    counters: Counters
    up_tables: set[tuple[int, int]]
    enabled: bool = True
    ratio: float = 0.25
    min_cells: int = 200_000
    budget: float = 1.0
    bounded: bool = False
    upper: Callable[[Node], int | None] = lambda _node: None
    cardinalities: tuple[tuple[int, ...], ...] = ()
    spread: int = 1
    hub_ratio: float = 0.1
    into: str | None = None  # the scratch database materialized nodes are created in (None: temporary tables)
    # told of each node kept — (node, its table, its cells or, for a hub just made, a bound on them) — and returns
    # the cells it fetched from that table, if it did (``None``: not fetched)
    on_keep: Callable[[Node, str, int], int | None] | None = None
    kept: dict[Node, tuple[int, int]] = field(default_factory=dict)  # node -> (ident, cells)
    _last_used: dict[Node, int] = field(default_factory=dict)
    _least: dict[Node, int] = field(default_factory=dict)  # lower bounds on cells
    _exact: dict[Node, int] = field(default_factory=dict)  # cells counted
    _reads: int = 0

    @contextlib.contextmanager
    def reading(self, node: Node, ident: Callable[[], int], what: str) -> Iterator[tuple[str, Node | None]]:
        """The table one query of ``node`` reads (``name`` and the node it holds; ``None``: the base): the finest
        kept node below ``node``, or ``node``'s own table materialized now (``ident()`` numbers it), or the
        base.  An own table too large to keep is dropped when the query is done."""
        self._reads += 1
        name, floor, cells = self._source(node, ident, what)
        if not self._worth(node, cells):
            self._ups(floor, (node,), what)
            yield name, floor
            return
        number = ident()
        table = self.layout.node_table(number, node).name
        made = self._materialize(number, node, floor, name, what)
        if made <= self.ratio * cells:
            self._keep(node, number, made, what)
            yield table, node
            return
        try:
            yield table, node
        except BaseException:  # a failed query, or a stream closed early: the original error is what matters
            with contextlib.suppress(Exception):
                self.session.execute(q.drop_table(table), what)
            raise
        self.session.execute(q.drop_table(table), what)

    @contextlib.contextmanager
    def reading_many(
        self, nodes: Sequence[Node], ident: Callable[[], int], what: str
    ) -> Iterator[tuple[str, Node | None]]:
        """The table one statement over several ``nodes`` reads (``queries.grouped_sizes``): what ``reading`` would
        read for their meet (each QI's lowest level among them; ``veil.lattice.meet``) — the finest kept node
        below it, or its hub materialized now, or the base — without materializing the meet or any of the nodes.
        Nodes of one height with the same QIs projected out (Incognito's frontier) often share a coarse meet."""
        self._reads += 1
        name, floor, _cells = self._source(meet(nodes), ident, what)
        self._ups(floor, nodes, what)
        yield name, floor

    def prepare(self, node: Node, ident: Callable[[], int], what: str) -> None:
        """Materialize (and keep) ``node``'s hub now if a query of ``node`` would read the base: what ``reading``
        does first, done before the query is built (``on_keep`` may then answer ``node`` with no query).  If it
        would read a kept node instead, ``on_keep`` is told of that one again: what it took from there may have
        been let go since."""
        name, floor, cells = self._finest(node)
        if floor is None:
            self._made_hub(node, ident, what)
        elif self.on_keep is not None:
            self.on_keep(floor, name, cells)

    def _source(self, node: Node, ident: Callable[[], int], what: str) -> tuple[str, Node | None, int]:
        """The smallest kept table ``node`` can be rolled up from; when that is the base, ``node``'s hub
        materialized first (then kept, and read instead of the base)."""
        name, floor, cells = self._finest(node)
        if floor is None:
            name, floor, cells = self._made_hub(node, ident, what) or (name, floor, cells)
        self.counters.rolled_up += floor is not None
        return name, floor, cells

    def _made_hub(self, node: Node, ident: Callable[[], int], what: str) -> tuple[str, Node, int] | None:
        """``node``'s hub materialized and kept (``None``: it has none)."""
        hub = self.hub(node)
        if hub is None:
            return None
        number = ident()
        made = self._materialize(number, hub, None, self.base, what, fetched=True)
        self._keep(hub, number, made, what)
        self.counters.hubs += 1
        return self.layout.node_table(number, hub).name, hub, made

    def hub(self, node: Node) -> Node | None:
        """The hub to materialize before ``node`` reads the base: from ``node``, levels lowered one at a time — each
        time the one multiplying the cells' bound least — while the bound stays within ``hub_ratio`` × the base's
        cells; ``None`` when no level can be lowered (or rollups are off, or the base is small).  A QI the node
        projects out (Incognito's subset nodes) comes back at its top level (usually one value: the bound stays)
        and is lowered like the others: a hub that keeps every QI serves every subset's nodes above it, where one
        projecting out the node's QIs would serve only nodes projecting out the same ones — and a subset node
        whose QIs are all at level 0 would have none.

        A base of 1,000 cells allows hubs of 250 (``hub_ratio`` 0.25).  From (2, 1), lowering QI 1 multiplies the bound
        by 5 and QI 0 by 10: (2, 0) bounds 5 cells, then (1, 0) 50; (0, 0) would bound 500.  (2, None) brings QI 1
        back at (2, 1), then lowers it to (2, 0) and QI 0 to (1, 0); (0, None), with no level of its own to lower, gets (0, 1).

        >>> r = Rollups(None, q.Layout((2, 1), 0), q.BASE, 1000, Counters(), set(), min_cells=1,
        ...             cardinalities=((100, 10, 1), (5, 1)), hub_ratio=0.25)
        >>> r.hub((2, 1)), r.hub((1, 0)), r.hub((0, 1)), r.hub((2, None)), r.hub((0, None))
        ((1, 0), None, None, (1, 0), (0, 1))
        """
        if not self.enabled or not self.cardinalities or self.base_cells < self.min_cells:
            return None
        limit = self.hub_ratio * self.base_cells
        levels = list(node)
        while True:
            options = []
            for i, level in enumerate(levels):
                if level is None or level:
                    lower = len(self.cardinalities[i]) - 1 if level is None else level - 1
                    lowered = levels[:i] + [lower] + levels[i + 1 :]
                    bound = self._bound(lowered)
                    if bound <= limit:
                        options.append((bound, i, lowered))
            if not options:
                break
            levels = min(options)[2]
        return tuple(levels) if tuple(levels) != tuple(node) else None

    def _bound(self, node: Sequence[Level]) -> int:
        """The most cells ``node`` can have: its levels' cardinalities and ``spread`` multiplied."""
        return math.prod(self.cardinalities[i][lv] for i, lv in enumerate(node) if lv is not None) * self.spread

    def know(self, node: Node, cells: int, exact: bool = False) -> None:
        """Remember a lower bound on ``node``'s cells — every node below it has at least as many — or (``exact``)
        its cells, which also bound every node above it."""
        self._least[node] = max(cells, self._least.get(node, 0))
        if exact:
            self._exact[node] = cells

    @property
    def kept_cells(self) -> int:
        return sum(c for _, c in self.kept.values())

    def _worth(self, node: Node, source_cells: int) -> bool:
        """A rollup may pay: the source is large, no coarser node is known to have too many cells to keep, and
        (``bounded``) the node's upper bound fits."""
        if not self.enabled or node in self.kept or source_cells < self.min_cells:
            return False
        least = max((c for other, c in self._least.items() if finer(node, other)), default=0)
        if least > self.ratio * source_cells:
            return False
        bounds = [c for other, c in self._exact.items() if finer(other, node)]
        given = self.upper(node)
        if given is not None:
            bounds.append(given)
        return min(bounds) <= self.ratio * source_cells if bounds else not self.bounded

    def _finest(self, node: Node) -> tuple[str, Node | None, int]:
        """The smallest kept table ``node`` can be rolled up from (default: the base)."""
        best: tuple[str, Node | None, int] = (self.base, None, self.base_cells)
        for other, (number, cells) in self.kept.items():
            if cells < best[2] and finer(other, node):
                best = (self.layout.node_table(number, other).name, other, cells)
        if best[1] is not None:
            self._last_used[best[1]] = self._reads
        return best

    def _materialize(
        self, number: int, node: Node, floor: Node | None, source: str, what: str, fetched: bool = False
    ) -> int:
        """``node``'s counts as narrow table ``number`` (rolled up from ``floor`` through the ``veil_up_*`` tables of
        the QIs it coarsens, ``_ups``): its cells — for a hub (``fetched``), counted by ``on_keep``'s fetch of them
        where it takes them (their bound fits what is held here: Spark's hubs), else by a statement of their own."""
        self._ups(floor, (node,), what)
        self.session.execute(q.materialize(self.layout, number, node, floor, source, into=self.into), what)
        table = self.layout.node_table(number, node)
        cells = None
        if fetched and self.on_keep is not None:
            cells = self.on_keep(node, table.name, min(self._bound(node), self.base_cells))
        if cells is None:
            cells = int(self.session.scalar(q.count_rows(table), what))
        self.counters.materialized += 1
        self.know(node, cells, exact=True)
        return cells

    def _ups(self, floor: Node | None, nodes: Sequence[Node], what: str) -> None:
        """The ``veil_up_*`` code tables a statement of ``nodes`` over the kept ``floor`` joins (one per QI some node
        coarsens, ``queries.nodes``), each created the first time a statement needs it: a kept node that is only
        fetched (Spark's hubs) or read at its own levels needs none (16 statements of 0.4-1.3 s each on Spark
        at 10M rows, before)."""
        if floor is None:
            return
        for i, low in enumerate(floor):
            if low is None or (i, low) in self.up_tables:
                continue
            if any((lv := n[i]) is not None and lv > low for n in nodes):
                self.session.execute(q.up_table(self.layout, i, low), what)
                self.up_tables.add((i, low))

    def drop_kept(self, what: str) -> None:
        """Drop every kept rollup (later queries read the base, or materialize again)."""
        for node, (number, _) in list(self.kept.items()):
            self.session.execute(q.drop_table(self.layout.node_table(number, node).name), what)
        self.kept.clear()
        self._last_used.clear()

    def _keep(self, node: Node, number: int, cells: int, what: str) -> None:
        """Keep a materialized node, dropping the least recently read beyond the budget: what the warehouse keeps
        stays proportional to the base, however many nodes a search rolls up."""
        self.kept[node] = (number, cells)
        self._last_used[node] = self._reads
        if self.on_keep is not None:
            self.on_keep(node, self.layout.node_table(number, node).name, cells)
        while self.kept_cells > self.budget * self.base_cells and len(self.kept) > 1:
            stale = min((n for n in self.kept if n != node), key=lambda n: self._last_used[n])
            stale_number, _ = self.kept.pop(stale)
            del self._last_used[stale]
            self.session.execute(q.drop_table(self.layout.node_table(stale_number, stale).name), what)
