"""The candidate's cells — the source at the chosen node, every row, with its published values: held here (the base
in memory rolled up), fetched whole in one statement, or counted into working tables (``veil_cells``,
``veil_cell_values``) that the series step streams, copies or compares shard by shard."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from veil import queries as q
from veil.errors import ReleaseError
from veil.release import fetchedcells, firstversion
from veil.release import ledger as ledger_mod
from veil.release.alignment import Layout
from veil.release.state import Run

CELL_CHUNK = 1 << 18  # candidate cells per fetched chunk
CANDIDATE = "counting the candidate's cells"


@dataclass(frozen=True)
class Cells:
    """A candidate's cells as they come: its layout, its distinct published value tuples (in ``vid`` order) and
    its cells (``fetchedcells.Chunks``)."""

    layout: Layout
    distinct: list[tuple[Any, ...]]
    chunks: fetchedcells.Chunks


def held(run: Run, node: tuple[int, ...]) -> Cells | None:
    """The candidate's cells rolled up from the source's cells held here (``Warehouse.valued``), with no statement,
    where they come into Veil whole and the cells held hold every published column — counted (k + entropy on the
    1M census, one statement of 2.7 s less on Spark) or carried (``Warehouse.carried``: ``job._inspect`` asks for
    them); else ``None``."""
    if run.publication.staged_ledger:
        return None
    layout = layout_of(run, node)
    valued = run.wh.valued(node, layout.columns)
    if valued is None:
        return None
    cells, factors = valued
    codes = {k: v for k, v in cells.items() if k != "n"}
    distinct, chunks = fetchedcells.held(codes, factors, cells["n"])
    return Cells(layout, distinct, chunks)


def valued_cells(run: Run, layout: Layout) -> Any:
    not_null = list(run.config.sensitive) if run.config.source.nulls == "drop" else []
    return q.valued_cells(run.source, run.wh.layout, layout.node, run.wh.attributes, layout.columns, not_null)


def streamed(run: Run) -> fetchedcells.Chunks:
    """The candidate's cells streamed from ``veil_cells`` (``count_cells``), ordered by the database when asked;
    its working tables dropped once read."""
    d = len(run.wh.attributes)

    def chunks(ordered: bool) -> Iterator[dict[str, np.ndarray]]:
        order = [*(f"g{i}" for i in range(d)), "vid"] if ordered else []
        return _then(run.session.stream(q.coded_cells(d), order, CELL_CHUNK, CANDIDATE), lambda: _drop_cells(run))

    return chunks


def count_values(run: Run, layout: Layout) -> firstversion.Values:
    """The candidate's distinct published values ranked, with their rows (``veil_cell_values``, read in rank
    order)."""
    not_null = list(run.config.sensitive) if run.config.source.nulls == "drop" else []
    what = "counting the candidate's values"
    width = len(layout.columns)
    run.session.execute(q.values_table(run.source, run.wh.attributes, layout.columns, not_null), what)
    ranked = run.session.rows(q.cell_values(width), what)
    if any(int(r[-1]) != k for k, r in enumerate(ranked)):
        raise ReleaseError("the candidate's distinct published values came back without consecutive ranks")
    distinct = [tuple(r[:-2]) for r in ranked]
    nulls = [
        "none" if all(v[j] is not None for v in distinct) else "all" if all(v[j] is None for v in distinct) else "some"
        for j in range(width)
    ]
    return firstversion.Values(distinct, np.asarray([int(r[-2]) for r in ranked], dtype=np.int64), nulls)


def count_cells(
    run: Run, node: tuple[int, ...], narrow: bool = False, values: firstversion.Values | None = None
) -> tuple[Layout, list[tuple[Any, ...]], str | None]:
    """The candidate's working tables: its distinct published values ranked (``count_values`` unless given,
    returned in rank order) and its cells (``veil_cells``: every row, suppressed blocks included), created in the
    scratch database returned (``None``: temporary) — read, and dropped there, before the release writes.

    ``narrow``: the cells' keys as the narrowest integers (``queries.cells_table``) — for cells that stay in the
    database or are copied (shards read a copy with 64-bit keys).  Cells streamed into Veil from ``veil_cells``
    keep 64-bit keys: with narrow ones a 10M census's second version peaked at 1,151 MB against 1,032 MB
    (``/usr/bin/time``, same run; the cause is inside DuckDB, not found)."""
    config, wh = run.config, run.wh
    layout = layout_of(run, node)
    values = values if values is not None else count_values(run, layout)
    not_null = list(config.sensitive) if config.source.nulls == "drop" else []
    into = run.session.scratch(wh.rows * q.cell_bytes(len(wh.attributes)))
    sizes = [len(h.domain(level)) for h, level in zip(wh.hierarchies, node)] if narrow else None
    run.session.execute(
        q.cells_table(
            run.source,
            wh.layout,
            node,
            wh.attributes,
            layout.columns,
            not_null,
            values.nulls,
            into,
            sizes,
            len(values.distinct),
        ),
        CANDIDATE,
    )
    return layout, values.distinct, into


def layout_of(run: Run, node: tuple[int, ...]) -> Layout:
    """The candidate's layout: its node, each QI's hierarchy chain, the published columns."""
    return Layout(
        node,
        tuple(ledger_mod.chain_of(h) for h in run.wh.hierarchies),
        tuple(run.config.sensitive),
        tuple(run.rel.keep_columns),
    )


def drop_counted(run: Run, into: str | None) -> None:
    """The candidate's working tables once the ledger holds the version (a scratch file or work schema goes with the session)."""
    for table in (q.VALUES,) if into is not None else (q.CELLS, q.VALUES):
        run.session.execute(q.drop_table(table), CANDIDATE)


def numeric_of(run: Run, layout: Layout) -> dict[str, bool]:
    return {c: bool(run.wh.columns[c].kind is not None and run.wh.columns[c].kind.numeric) for c in layout.columns}


def _then(chunks: Iterator[dict[str, np.ndarray]], done: Callable[[], None]) -> Iterator[dict[str, np.ndarray]]:
    """``chunks``, then ``done()`` once the last one was taken."""
    yield from chunks
    done()


def _drop_cells(run: Run) -> None:
    """The candidate's working tables, once read: dropped, and (nothing is written yet) freed by the database
    before numpy sorts the cells (``Session.discard``)."""
    run.session.discard((q.CELLS, q.VALUES), CANDIDATE)
