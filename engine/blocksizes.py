"""A node's block-size histogram (``BlockSizes.sizes``: how many blocks of each size — a few numbers, no block
list), aggregated in SQL over the rollups of the blocks alone, or rolled up from the cells held here; and the
histograms of the nodes a search will ask next counted together where a statement's fixed cost outweighs a pass
over the data (``prefetch``: Spark).  Each histogram counted is kept in ``BaseSet.known_sizes``, where it also
bounds the node's cells.

Builds SQL only through ``veil.queries``; executes only through a backend ``Session``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

import numpy as np

from veil import queries as q
from veil.baseset import BaseSet, Node
from veil.counts import SizeHistogram
from veil.lattice import meet, show
from veil.rollup import Rollups

PREFETCH = 32  # nodes whose sizes one statement counts together (``prefetch``)


class BlockSizes:
    """The block-size histograms of the nodes over ``base``."""

    def __init__(self, base: BaseSet) -> None:
        self.base = base

    def sizes(self, node: Node) -> SizeHistogram:
        """``node``'s block-size histogram, aggregated in SQL (``node_sizes``: a few numbers, no block list)."""
        base, stats = self.base, self.base.stats
        cached = base.known_sizes.get(node)
        if cached is not None:
            stats.cache_hits += 1
            return cached
        started = time.perf_counter()
        what = f"counting the block sizes of node {show(node)}"
        held = base.held
        holder = base.holder(node, what, sizes=True)
        if held is not None and holder is not None:
            # counted whole where it may be kept (its cells may roll up the nodes above; its stream reads them)
            hist = SizeHistogram(node, *held.sized(node, holder))
            base.known_sizes[node] = hist
            stats.node_seconds += time.perf_counter() - started
            return hist
        blocks = base.block_rollups()
        with base.reading(blocks, node, what) as (name, floor):
            data = base.session.columns(q.node_sizes(blocks.layout, node, floor, source=name), what)
        stats.size_queries += 1
        hist = SizeHistogram(node, data["size"].astype(np.int64), data["blocks"].astype(np.int64))
        self._know(blocks, hist)
        stats.node_seconds += time.perf_counter() - started
        return hist

    def counted(self, node: Node) -> SizeHistogram | None:
        """``node``'s block-size histogram when ``sizes`` already counted it (no query), else ``None``."""
        return self.base.known_sizes.get(node)

    def _know(self, blocks: Rollups, hist: SizeHistogram) -> None:
        """Remember a node's block-size histogram, and what its blocks tell the rollups about its cells."""
        blocks.know(hist.node, hist.n_blocks, exact=True)
        if blocks is not self.base.cell_rollups:
            self.base.cell_rollups.know(hist.node, hist.n_blocks)  # a node has at least as many cells as blocks
        self.base.known_sizes[hist.node] = hist

    def prefetch(self, nodes: Iterable[Node]) -> None:
        """The block-size histograms of nodes a search will ask next (``incognito``'s frontier of one height,
        ``brute-force``'s next nodes: ``search.run``'s ``prefetch``), counted together — one ``GROUP BY GROUPING SETS`` over their meet's source
        (``queries.grouped_sizes``, ``Rollups.reading_many``), at most ``PREFETCH`` nodes a statement — where the
        backend says a statement's fixed cost outweighs a pass over the data (``Backend.batch_sizes``: Spark);
        ``sizes`` then answers from them — unless floors are kept (``BaseSet.holder``): then their meet's hub, or
        failing that each node's own, is fetched first, and only the nodes no floor covers go together.  Elsewhere
        nothing: each node is counted when asked, and no node the
        search never reads is counted (on DuckDB and PostgreSQL one statement per node was the faster,
        ``bench/bench_grouping_sets.py``)."""
        base = self.base
        held = base.held
        if not base.batched or (held is not None and held.local is not None):
            return
        todo = list(
            dict.fromkeys(
                n for n in nodes if n not in base.known_sizes and (held is None or held.size_holder(n) is None)
            )
        )
        for part in (todo[lo : lo + PREFETCH] for lo in range(0, len(todo), PREFETCH)):
            what = f"counting the block sizes of {len(part)} nodes"
            if len(part) < 2 or base.holder(meet(part), what, sizes=True) is not None:
                continue  # their meet's hub fetched: every one of them is counted here when asked
            # else each node's own hub, fetched, counts it and the nodes above it here; the rest go together
            rest = [
                n for n in part if base.holder(n, f"counting the block sizes of node {show(n)}", sizes=True) is None
            ]
            if len(rest) > 1:
                self._together(rest)

    def _together(self, nodes: list[Node]) -> None:
        base, stats = self.base, self.base.stats
        started = time.perf_counter()
        what = f"counting the block sizes of {len(nodes)} nodes together"
        blocks = base.block_rollups()
        stats.node_queries += 1
        stats.size_queries += 1
        stats.batched += len(nodes)
        with blocks.reading_many(nodes, base.next_ident, what) as (name, floor):
            grouped = q.grouped_sizes(blocks.layout, nodes, floor, source=name)
            data = base.session.columns(grouped.statement, what)
        gid, size, count = (data[c].astype(np.int64) for c in ("gid", "size", "blocks"))
        for node, ident in zip(nodes, grouped.ids):
            mine = gid == ident
            order = np.argsort(size[mine], kind="stable")
            self._know(blocks, SizeHistogram(node, size[mine][order], count[mine][order]))
        stats.node_seconds += time.perf_counter() - started
