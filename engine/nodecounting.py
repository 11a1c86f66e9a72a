"""A node's counts: whole (``NodeCounter.counts``, for the commands that show, check or publish a node; cached
within ``cache_bytes``) or in chunks of complete blocks (``stream``, for a search: only one chunk is ever held
here).  Each is rolled up from the cells held here (``veil.heldcells``) when there are some below the node, else
one ``GROUP BY`` over the base or a finer rollup (``veil.baseset``).

Builds SQL only through ``veil.queries``; executes only through a backend ``Session``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence

import numpy as np

from veil import queries as q
from veil.baseset import BaseSet, Node
from veil.counts import NodeCounts
from veil.frequencies import FrequencySet
from veil.lattice import show


class NodeCounter:
    """Counts of the nodes over ``base`` (quasi-identifiers named ``attributes``), a whole node's kept in
    ``cache`` (the oldest evicted beyond ``cache_bytes``), a streamed node's in chunks of ``chunk_cells``."""

    def __init__(self, base: BaseSet, attributes: Sequence[str], cache_bytes: int, chunk_cells: int) -> None:
        self.base, self.attributes = base, tuple(attributes)
        self.cache_bytes, self.chunk_cells = cache_bytes, chunk_cells
        self.cache: dict[Node, NodeCounts] = {}
        self._cached_bytes = 0

    def counts(self, node: Node) -> NodeCounts:
        """The per-q*-block counts of ``node`` (one ``GROUP BY`` unless cached or held here)."""
        base, stats = self.base, self.base.stats
        cached = self.cache.get(node)
        if cached is not None:
            stats.cache_hits += 1
            return cached
        started = time.perf_counter()
        what = f"counting node {show(node)}"
        held = base.held
        holder = base.holder(node, what)
        if held is not None and holder is not None:
            data = held.counted(node, holder)
        else:
            with base.reading(base.cell_rollups, node, what) as (name, floor):
                data = base.session.columns(q.node_counts(base.layout, node, floor, source=name), what, narrow=True)
            base.cell_rollups.know(node, len(data["n"]), exact=True)
            if base.held is not None:
                base.held.keep_counted(node, data)
        result = self._node_counts(node, data)
        stats.node_seconds += time.perf_counter() - started
        self._remember(node, result)
        return result

    def stream(self, node: Node) -> Iterator[NodeCounts]:
        """``node``'s counts in chunks of complete blocks (block-key order), about ``chunk_cells`` cells each
        (a chunk ends at the last block boundary; a block larger than a chunk arrives whole).  Only one chunk
        is ever held here; every chunk's blocks are numbered on their own."""
        base, stats = self.base, self.base.stats
        started = time.perf_counter()
        held = base.held
        holder = base.holder(node, f"counting node {show(node)}")
        if holder is None:
            holder = self._floor(node)
        if held is not None and holder is not None:  # held here: one chunk of at most ``local_cells`` cells
            counts = self._node_counts(node, held.counted(node, holder))
            stats.node_seconds += time.perf_counter() - started
            yield counts
            return
        what = f"counting node {show(node)}"
        keys = q.node_keys(base.layout, node)
        stats.streamed += 1
        carry: dict[str, np.ndarray] | None = None
        cells = 0
        with base.reading(base.cell_rollups, node, what) as (name, floor):
            for data in base.session.stream(
                q.node_counts(base.layout, node, floor, source=name), keys, self.chunk_cells, what
            ):
                cells += len(data["n"])
                if carry is not None:
                    data = {k: np.concatenate([carry[k], v]) for k, v in data.items()}
                last = _last_block_start(data, keys)
                carry = {k: v[last:] for k, v in data.items()}
                if last:
                    stats.chunks += 1
                    stats.node_seconds += time.perf_counter() - started
                    yield self._node_counts(node, {k: v[:last] for k, v in data.items()})
                    started = time.perf_counter()
        base.cell_rollups.know(node, cells, exact=True)
        stats.node_seconds += time.perf_counter() - started
        if carry is not None and len(carry["n"]):
            stats.chunks += 1
            yield self._node_counts(node, carry)

    def _floor(self, node: Node) -> FrequencySet | None:
        """Count a full node about to be streamed whose cells fit what may be kept (its blocks × the sensitive
        domains) whole instead — one statement either way — and keep them as a floor; ``None`` (no statement)
        when they may not fit.  (Counting a node only to keep it costs a statement the search may never repay:
        on Spark's 10M census, k = 10, 238 floors for 282 nodes took 522 s against 424 s without.)"""
        held = self.base.held
        if held is None or held.floors is None or not held.may_keep(node, self.base.cells_bound(node)):
            return None
        self.counts(node)  # keeps its cells
        return held.floors.holder(node)

    def forget(self) -> None:
        """Drop the counts kept (the caller holds those it needs)."""
        self.cache.clear()
        self._cached_bytes = 0

    def _remember(self, node: Node, counts: NodeCounts) -> None:
        """Cache a node's counts, evicting the oldest beyond ``cache_bytes`` (big tables, long searches)."""
        self.cache[node] = counts
        self._cached_bytes += counts.nbytes
        while self._cached_bytes > self.cache_bytes and len(self.cache) > 1:
            oldest = next(iter(self.cache))
            self._cached_bytes -= self.cache.pop(oldest).nbytes

    def _node_counts(self, node: Node, data: dict[str, np.ndarray]) -> NodeCounts:
        """``NodeCounts`` of a node's cells, grouped into blocks here unless they come grouped (held here:
        ``FrequencySet.counts``)."""
        r = len(data["n"])
        sensitive = len(self.base.domains)
        s_codes = (
            np.column_stack([data[f"s{j}"] for j in range(sensitive)])
            if sensitive
            else np.zeros((r, 0), dtype=np.int64)
        )
        hierarchies = self.base.hierarchies
        cards = [hierarchies[i].cardinality(lv) if lv is not None else 1 for i, lv in enumerate(node)]
        if "block" in data:
            return NodeCounts.from_blocks(self.attributes, node, data["blocks"], data["block"], s_codes, data["n"],
                                          cards, self.base.domains, hierarchies)  # fmt: skip
        qi_codes = np.zeros((r, len(node)), dtype=np.int32)  # codes fit; NodeCounts keeps only the blocks' keys
        for i, level in enumerate(node):
            if level is not None:
                qi_codes[:, i] = data[f"g{i}"]
        return NodeCounts.from_cells(
            self.attributes, node, qi_codes, s_codes, data["n"], cards, self.base.domains, hierarchies
        )


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
