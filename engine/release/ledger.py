"""The series ledger in the catalog (docs/series-ledger.md §6): reading every published version back as
``series.Version`` s, building the candidate from the source's cells, and recording what a version published.

Block labels and value tuples are stored once (``series_blocks``, ``series_values``) as canonical text: a
QI's level-0 value as Python's ``str`` of the driver value (the catalog's hierarchy snapshots use the same),
higher levels as the hierarchy's labels.  ``series_cells`` holds (block, value, rows) with the versions the
row is valid for; a version rewrites only the blocks whose content changed (all of them when the node or the
published columns change).  Hierarchies are stored once per distinct definition (``series_hierarchies``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import sqlalchemy as sa

from veil import catalog
from veil import queries as q
from veil.backends.base import Session
from veil.counts import fits_int32, narrowed, pair_keys, sorted_sum
from veil.errors import ReleaseError
from veil.hierarchy import Hierarchy
from veil.queries.ddl import create_table, drop_temporary
from veil.release.alignment import Chain, Dictionary, Layout
from veil.release.series import Version


def canonical(value: Any) -> str | None:
    """How the ledger writes a published value (``None`` stays NULL)."""
    return None if value is None else str(value)


def chain_of(h: Hierarchy) -> Chain:
    return Chain(
        h.attribute, tuple(str(leaf) for leaf in h.leaves), tuple(tuple(str(x) for x in col) for col in h.labels)
    )


@dataclass
class Ledger:
    """One release's ledger as read at the start of a run, plus what this run adds."""

    name: str
    tables: catalog.CatalogTables
    dictionary: Dictionary = field(default_factory=Dictionary)
    versions: list[Version] = field(default_factory=list)
    policies: dict[int, str] = field(default_factory=dict)
    stored_chains: set[str] = field(default_factory=set)
    first_block: int = 0
    first_value: int = 0

    @property
    def latest(self) -> Version | None:
        return self.versions[-1] if self.versions else None


def load(
    session: Session,
    tables: catalog.CatalogTables,
    name: str,
    cells: bool = True,
    versions: Sequence[tuple[Any, ...]] | None = None,
) -> Ledger:
    """Every version of release ``name`` the ledger recorded, oldest first; without ``cells`` their layouts only
    (empty content, for deciding the node: ``read_cells`` adds the content later).  ``versions``: the rows of
    ``q.ledger.versions_of_release`` where this run read them already (``Publication.ledger_versions``)."""
    t = tables
    ledger = Ledger(name, t)

    def chains_stored() -> list[tuple[Any, ...]]:
        return session.rows(
            q.ledger.of_release(t.series_hierarchies, name, "digest", "definition"), "reading the ledger"
        )

    rows: Sequence[tuple[Any, ...]]
    if versions is None:  # two reads, sent at once where each is a remote job (Spark)
        what = "reading the ledger's versions"
        stored, rows = session.together(
            [chains_stored, lambda: session.rows(q.ledger.versions_of_release(t.series_versions, name), what)]
        )
    else:
        stored, rows = chains_stored(), versions
    chains = {d: Chain.parse(text) for d, text in stored}
    ledger.stored_chains = set(chains)
    none = np.zeros(0, dtype=np.int32)
    for number, _run, node, attributes, columns, hierarchies, policy in rows:
        cols, digests = json.loads(columns), json.loads(hierarchies)
        layout = Layout(
            tuple(json.loads(node)),
            tuple(chains[digests[a]] for a in json.loads(attributes)),
            tuple(cols["sensitive"]),
            tuple(cols["keep"]),
        )
        ledger.versions.append(Version(int(number), layout, none, none, none, cols["totals"], policy != "off"))
        ledger.policies[int(number)] = policy
    if cells:
        read_cells(session, ledger)
    return ledger


def read_cells(session: Session, ledger: Ledger) -> None:
    """The dictionary of blocks and values, and every loaded version's content (cells valid for it), read narrow."""
    read_dictionary(session, ledger)
    if not ledger.versions:  # a version's cells are recorded after its row (``record_version``): none without one
        return
    t, name = ledger.tables, ledger.name
    what = "reading the ledger's cells"
    total = session.sizing(q.ledger.rows_of_release(t.series_cells, name), what)
    cells = read_columns(session, q.ledger.of_release(t.series_cells, name, *CELL_COLUMNS), total, what)
    ledger.versions = with_cells(ledger.versions, cells)


def read_dictionary(session: Session, ledger: Ledger) -> None:
    """The ledger's dictionary of blocks and values (``ledger.first_block``, ``first_value``: the ids this run
    adds start there)."""
    t, name = ledger.tables, ledger.name
    blocks, values = session.together(  # two reads, sent at once where each is a remote job (Spark)
        [
            lambda: session.rows(
                q.ledger.of_release(t.series_blocks, name, "id", "labels"), "reading the ledger's blocks"
            ),
            lambda: session.rows(
                q.ledger.of_release(t.series_values, name, "id", "value"), "reading the ledger's values"
            ),
        ]
    )
    for ident, labels in sorted(blocks):
        ledger.dictionary.add_block(tuple(json.loads(labels)), int(ident))
    for ident, value in sorted(values):
        ledger.dictionary.add_value(json.loads(value), int(ident), key=value)
    ledger.first_block, ledger.first_value = len(ledger.dictionary.blocks), len(ledger.dictionary.values)


def cell_rows(session: Session, ledger: Ledger) -> int:
    """The rows of ``series_cells`` the release holds."""
    return int(
        session.scalar(q.ledger.rows_of_release(ledger.tables.series_cells, ledger.name), "reading the ledger's cells")
    )


def with_cells(versions: Sequence[Version], cells: Mapping[str, np.ndarray]) -> list[Version]:
    """``versions`` with their content: the ``cells`` (columns ``CELL_COLUMNS``) valid for each."""
    out = []
    for v in versions:
        live = (cells["first_version"] <= v.number) & (v.number <= cells["last_version"])
        every = bool(live.all())  # one version (or all cells still valid): its columns are the ledger's, not copies
        out.append(
            replace(
                v,
                blocks=cells["block_id"] if every else cells["block_id"][live],
                values=cells["value_id"] if every else cells["value_id"][live],
                counts=cells["count"] if every else cells["count"][live],
            )
        )
    return out


CELL_COLUMNS = ("block_id", "value_id", "count", "first_version", "last_version")
CHUNK = 1 << 18  # ledger cells per fetched chunk


def read_columns(session: Session, stmt: sa.Select[Any], total: int | None, what: str) -> dict[str, np.ndarray]:
    """``stmt``'s ``total`` rows of integer columns streamed in chunks into arrays as narrow as their values allow
    (int32, widened to int64 only when a value needs it): no whole-result copy in the client.  ``total=None``:
    as many as come (the chunks are joined at the end)."""
    if total is None:
        parts = list(session.stream(stmt, [], CHUNK, what))
        names = [c.name for c in stmt.selected_columns]
        return {
            c: narrowed(np.concatenate([p[c] for p in parts]).astype(np.int64, copy=False))
            if parts
            else np.zeros(0, dtype=np.int32)
            for c in names
        }
    out: dict[str, np.ndarray] = {}
    at = 0
    for chunk in session.stream(stmt, [], CHUNK, what):
        n = len(next(iter(chunk.values()))) if chunk else 0
        if at + n > total:
            raise ReleaseError("the ledger's cells changed while they were read")
        for name, column in chunk.items():
            if name not in out:
                out[name] = np.empty(total, dtype=np.int32)
            if out[name].dtype == np.int32 and not fits_int32(column):
                out[name] = out[name].astype(np.int64)
            out[name][at : at + n] = column
        at += n
    if at != total:
        raise ReleaseError(f"the ledger's cells changed while they were read ({at} of {total} rows)")
    names = [c.name for c in stmt.selected_columns]
    return {c: out.get(c, np.zeros(0, dtype=np.int32)) for c in names}


@dataclass(frozen=True)
class Candidate:
    """The version about to be published, as the series step sees it (one cell per distinct block codes ×
    published values of the source), columnar: cell ``i`` lies in the block with codes
    ``block_codes[cell_block[i]]`` (distinct, lexicographic) and publishes ``distinct[value_index[i]]``."""

    version: Version
    block_codes: np.ndarray  # (blocks, QIs) the distinct block codes at the node, lexicographic
    cell_block: np.ndarray  # per cell, its row of ``block_codes``
    value_index: np.ndarray  # per cell, its published non-QI values in ``distinct``
    distinct: list[tuple[Any, ...]]  # the distinct published non-QI values as the driver gave them
    numeric: Mapping[str, bool]

    def raw(self, cell: int) -> tuple[Any, ...]:
        return self.distinct[int(self.value_index[cell])]

    def codes(self, cell: int) -> tuple[int, ...]:
        return tuple(int(c) for c in self.block_codes[int(self.cell_block[cell])])


def _blocks_of(
    chunks: Iterable[Mapping[str, np.ndarray]], d: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(block codes, cell → block, value index, count) from ``coded_cells`` chunks ordered by the codes: a new
    block starts wherever a cell's codes differ from the cell before it (across chunk borders too)."""
    firsts, blocks, values, counts = [], [], [], []
    last: np.ndarray | None = None
    seen = 0
    for chunk in chunks:
        n = len(chunk["n"])
        if n == 0:
            continue
        codes = np.column_stack([chunk[f"g{i}"] for i in range(d)]) if d else np.zeros((n, 0), dtype=np.int64)
        new = np.ones(n, dtype=bool)
        new[1:] = (codes[1:] != codes[:-1]).any(axis=1)
        if last is not None:
            new[0] = bool((codes[0] != last).any())
        last = codes[-1].copy()
        firsts.append(codes[new])
        blocks.append((np.cumsum(new) + (seen - 1)).astype(np.int32 if seen + n < 2**31 else np.int64))
        seen += int(new.sum())
        values.append(np.asarray(chunk["vid"], dtype=np.int32))
        counts.append(np.asarray(chunk["n"], dtype=np.int64))
    if not counts:
        return np.zeros((0, d), dtype=np.int64), np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.int64)
    return np.vstack(firsts), np.concatenate(blocks), np.concatenate(values), np.concatenate(counts)


KEY_LIMIT = 2**62  # block codes × value id packed into one int64 below this


def packs(sizes: Sequence[int], values: int) -> bool:
    """Whether every cell's block codes (code ``i`` below ``sizes[i]``) and value id (below ``values``) pack into
    one int64 key: then the cells may come in any order and are sorted here (``_cells_keyed``)."""
    return math.prod(max(s, 1) for s in sizes) * max(values, 1) < KEY_LIMIT


def _cells_keyed(
    chunks: Iterable[Mapping[str, np.ndarray]], sizes: Sequence[int], values: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(block codes, cell → block, value index, count) from ``coded_cells`` chunks in any order: each cell's
    codes and ``vid`` packed into one key (mixed radix, the first code most significant), the keys sorted once,
    so the cells end up as ``_blocks_of`` gives them — by block codes, then value.

    >>> chunk = {"g0": np.array([1, 0, 1]), "g1": np.array([0, 2, 0]), "vid": np.array([1, 0, 0]), "n": np.array([5, 6, 7])}
    >>> codes, block, value, n = _cells_keyed([chunk], (2, 3), 2)
    >>> codes.tolist(), block.tolist(), value.tolist(), n.tolist()
    ([[0, 2], [1, 0]], [0, 1, 1], [0, 0, 1], [6, 7, 5])
    """
    d = len(sizes)
    radix = [int(math.prod(sizes[i + 1 :])) * max(values, 1) for i in range(d)]
    keys, counts = [], []
    for chunk in chunks:
        n = len(chunk["n"])
        if n == 0:
            continue
        key = np.asarray(chunk["vid"], dtype=np.int64).copy()
        for i in range(d):
            codes = np.asarray(chunk[f"g{i}"])
            if int(codes.max()) >= sizes[i] or int(codes.min()) < 0:
                raise ReleaseError(
                    f"a block code of quasi-identifier {i + 1} lies outside its level's {sizes[i]} values"
                )
            key += codes.astype(np.int64) * radix[i]
        keys.append(key)
        rows = np.asarray(chunk["n"])
        counts.append(narrowed(rows.astype(np.int64, copy=False)))
    if not keys:
        return np.zeros((0, d), dtype=np.int64), np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.int64)
    key = np.concatenate(keys)
    del keys
    count = np.concatenate(counts)
    del counts
    key, count = sorted_sum(key, count)  # the keys are distinct: a sort (packed with the cell's index when it fits)
    width = max(values, 1)
    value = np.empty(len(key), dtype=np.int32)
    np.remainder(key, width, out=value, casting="unsafe")
    key //= width
    new = np.ones(len(key), dtype=bool)
    new[1:] = key[1:] != key[:-1]
    block: np.ndarray = np.cumsum(new, dtype=np.int32 if len(key) < 2**31 else np.int64)
    block -= 1
    firsts = key[new]
    del key, new
    codes = (
        np.column_stack([(firsts // (radix[i] // width)) % sizes[i] for i in range(d)])
        if d
        else np.zeros((len(firsts), 0), dtype=np.int64)
    )
    return codes.astype(np.int64), block, value, count.astype(np.int64, copy=False)


def candidate(
    ledger: Ledger,
    number: int,
    layout: Layout,
    hierarchies: Sequence[Hierarchy],
    chunks: Iterable[Mapping[str, np.ndarray]],
    distinct: list[tuple[Any, ...]],
    numeric: Mapping[str, bool],
    ordered: bool = True,
    value_ids: np.ndarray | None = None,
    totals: Mapping[str, Mapping[str, int]] | None = None,
) -> Candidate:
    """The candidate from ``coded_cells`` chunks (integer columns ``g<i>``, ``vid``, ``n``; ``ordered``: by the
    codes, else in any order and :func:`packs` holds) and ``distinct``, the published values per ``vid``
    (``cell_values``); ids from the ledger's dictionary.  Only numpy columns (narrow where they can be) and the
    distinct published values outlive a chunk.  A shard of the candidate (``veil.release.laterversion``) passes the
    whole version's ``value_ids`` and column ``totals``."""
    text = block_text(layout, hierarchies)
    if ordered:
        block_codes, cell_block, value_index, counts = _blocks_of(chunks, len(layout.chains))
    else:
        block_codes, cell_block, value_index, counts = _cells_keyed(chunks, [len(t) for t in text], len(distinct))
    ids = block_ids(ledger, text, block_codes)  # a version's cells are many
    blocks = ids[cell_block] if len(counts) else np.zeros(0, dtype=np.int64)
    value_ids = value_ids_of(ledger, layout, distinct) if value_ids is None else value_ids
    values = value_ids[value_index] if len(counts) else np.zeros(0, dtype=np.int64)
    if totals is None:
        per_value = (
            np.bincount(value_index, weights=counts, minlength=len(distinct)).astype(np.int64)
            if len(counts)
            else np.zeros(len(distinct), dtype=np.int64)
        )
        totals = column_totals(layout, distinct, per_value)
    return Candidate(
        Version(number, layout, blocks, values, counts, totals), block_codes, cell_block, value_index, distinct, numeric
    )


def rows_per_value(session: Session, qi_count: int, values: int) -> np.ndarray:
    """The candidate's rows per ``vid`` (``veil_cells``, every block): the version's column totals."""
    out = np.zeros(values, dtype=np.int64)
    for vid, n in session.rows(q.ledger.rows_per_value(qi_count), "counting the candidate's cells"):
        out[int(vid)] += int(n)
    return out


def block_text(layout: Layout, hierarchies: Sequence[Hierarchy]) -> list[list[str]]:
    """Per QI, the ledger's text of each code at the layout's node."""
    return [[str(x) for x in h.domain(level)] for h, level in zip(hierarchies, layout.node)]


def block_ids(ledger: Ledger, text: Sequence[Sequence[str]], block_codes: np.ndarray) -> np.ndarray:
    """The dictionary's id of each block (rows of ``block_codes``), added in that order when new."""
    return narrowed(
        np.asarray(
            [ledger.dictionary.add_block(tuple(text[i][c] for i, c in enumerate(key))) for key in block_codes.tolist()],
            dtype=np.int64,
        )
    )


def value_ids_of(ledger: Ledger, layout: Layout, distinct: Sequence[tuple[Any, ...]]) -> np.ndarray:
    """The dictionary's id of each distinct published value tuple, added in that order when new."""
    return narrowed(
        np.asarray(
            [ledger.dictionary.add_value({c: canonical(x) for c, x in zip(layout.columns, v)}) for v in distinct],
            dtype=np.int64,
        )
    )


def column_totals(
    layout: Layout, distinct: Sequence[tuple[Any, ...]], per_value: np.ndarray
) -> dict[str, dict[str, int]]:
    """Rows per value of each sensitive column (NULLs left out), from the rows per distinct value tuple."""
    totals: dict[str, dict[str, int]] = {c: {} for c in layout.sensitive}
    for v, n in zip(distinct, per_value.tolist()):
        for c, x in zip(layout.columns, v):
            if c in totals and x is not None:
                totals[c][str(x)] = totals[c].get(str(x), 0) + n
    return totals


def _lookup(
    blocks: np.ndarray, values: np.ndarray, counts: np.ndarray, want_blocks: np.ndarray, want_values: np.ndarray
) -> np.ndarray:
    """Rows of (block, value) in the cells (``blocks``, ``values``, ``counts``) for each wanted pair (0: none).
    Keys are packed into one int64 and summed by ``counts.sorted_sum`` (a version's cells are many).

    >>> cells = np.array([0, 0, 1]), np.array([1, 1, 0]), np.array([2, 3, 4])   # blocks, values, counts
    >>> _lookup(*cells, np.array([0, 1, 1]), np.array([1, 0, 1])).tolist()
    [5, 4, 0]
    """
    width = int(max(values.max(initial=0), want_values.max(initial=0))) + 1
    uniq, sums = sorted_sum(pair_keys(blocks, values, width), counts)
    if len(uniq) == 0:
        return np.zeros(len(want_blocks), dtype=np.int64)
    want = pair_keys(want_blocks, want_values, width)
    pos = np.searchsorted(uniq, want)
    np.minimum(pos, len(uniq) - 1, out=pos)
    found = uniq[pos] == want
    del want
    out = np.zeros(len(found), dtype=np.int64)
    out[found] = sums[pos[found]]
    return out


def _same_shape(a: Layout, b: Layout) -> bool:
    """Blocks and values of ``a`` and ``b`` read alike (node, quasi-identifiers, columns)."""
    return a.node == b.node and a.attributes == b.attributes and a.columns == b.columns


def before(ledger: Ledger, cand: Candidate) -> np.ndarray:
    """Rows of each candidate cell the latest version published (0 when its layout differs)."""
    last, v = ledger.latest, cand.version
    if last is None or not _same_shape(last.layout, v.layout):
        return np.zeros(len(v.counts), dtype=np.int64)
    return narrowed(np.minimum(_lookup(last.blocks, last.values, last.counts, v.blocks, v.values), v.counts))


def record(
    session: Session, ledger: Ledger, cand: Candidate, published: np.ndarray, release_id: str, policy: str, when: Any
) -> None:
    """Write version ``cand.version.number``'s published content (``published`` rows per cell) to the ledger."""
    record_version(session, ledger, cand.version, cand.numeric, release_id, policy, when)
    _record_cells(session, ledger, cand, published)


def record_version(
    session: Session,
    ledger: Ledger,
    v: Version,
    numeric_columns: Mapping[str, bool],
    release_id: str,
    policy: str,
    when: Any,
) -> None:
    """Write what the ledger records of version ``v`` besides its cells: the blocks and values its dictionary
    gained, hierarchies not stored yet, and the version's row (layout, column totals, policy)."""
    t, name = ledger.tables, ledger.name
    d = ledger.dictionary
    blocks = [
        (name, i, json.dumps(list(d.blocks[i]), ensure_ascii=False)) for i in range(ledger.first_block, len(d.blocks))
    ]
    values = [(name, i, d.value_keys[i]) for i in range(ledger.first_value, len(d.values))]
    new_chains = {c.digest: c for c in v.layout.chains if c.digest not in ledger.stored_chains}
    chains = [(name, dg, c.attribute, c.definition()) for dg, c in new_chains.items()]
    session.together(  # three tables, none read here: in any order, but all before the version's row
        [
            lambda: session.bulk_load(t.series_blocks, blocks, "recording the ledger's blocks"),
            lambda: session.bulk_load(t.series_values, values, "recording the ledger's values"),
            lambda: session.bulk_load(t.series_hierarchies, chains, "recording the ledger's hierarchies"),
        ]
    )
    numeric = [c for c in v.layout.columns if numeric_columns.get(c)]
    columns = {
        "sensitive": list(v.layout.sensitive),
        "keep": list(v.layout.keep),
        "numeric": numeric,
        "totals": v.totals,
    }
    session.execute(
        q.ledger.record_version(
            t.series_versions,
            name=name,
            version=v.number,
            release_id=release_id,
            node=json.dumps(list(v.layout.node)),
            attributes=json.dumps(list(v.layout.attributes)),
            columns=json.dumps(columns, ensure_ascii=False),
            hierarchies=json.dumps({c.attribute: c.digest for c in v.layout.chains}),
            policy=policy,
            published_at=when,
        ),
        "recording the version in the ledger",
    )


def _changed(old: Version, keys: np.ndarray, rows: np.ndarray, width: int) -> np.ndarray:
    """Blocks whose content differs between the latest version (of the same shape) and the new one, given as its
    sorted distinct (block, value) ``keys`` with their ``rows``: the two sorted lists are matched, the earlier
    one summed on its own first, so no array spans both versions' cells at once."""
    old_keys, old_rows = _summed(old.blocks, old.values, old.counts, width)
    if len(old_keys) == len(keys) and np.array_equal(old_keys, keys):  # the same cells: only their rows may differ
        return np.unique(keys[old_rows != rows] // width)
    differ = [keys[~_matches(keys, rows, old_keys, old_rows)], old_keys[~_matches(old_keys, old_rows, keys, rows)]]
    del old_keys, old_rows
    return np.unique(np.concatenate(differ) // width)


def _summed(blocks: np.ndarray, values: np.ndarray, rows: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct (block, value) keys and their rows."""
    return sorted_sum(pair_keys(blocks, values, width), np.asarray(rows))


def _matches(keys: np.ndarray, rows: np.ndarray, other_keys: np.ndarray, other_rows: np.ndarray) -> np.ndarray:
    """Per key: the other sorted list has it with the same rows."""
    if len(other_keys) == 0:
        return np.zeros(len(keys), dtype=bool)
    pos = np.minimum(np.searchsorted(other_keys, keys), len(other_keys) - 1)
    return (other_keys[pos] == keys) & (other_rows[pos] == rows)


def _record_cells(session: Session, ledger: Ledger, cand: Candidate, published: np.ndarray) -> None:
    """The new version's content, summed per (block, value) once: only its changed blocks are written (every
    block when the latest version's shape differs), after the latest version's cells of those blocks close (a
    first version's: none to close)."""
    change = changes(ledger, cand, published)
    if change is None:
        return
    changed, block, value, rows_of = change
    if ledger.versions:  # else no cell is open: a version's cells are recorded after its row (``read_cells``)
        temp = q.ledger.changed_table()
        session.execute(create_table(temp), "listing the changed blocks")
        session.load_columns(temp, {temp.c.keys()[0]: changed}, "listing the changed blocks")
        close_changed(session, ledger, cand.version.number)
        session.execute(drop_temporary(temp), "listing the changed blocks")
    names = list(ledger.tables.series_cells.c.keys())  # name, block_id, value_id, count, first_version, last_version
    session.load_columns(
        ledger.tables.series_cells,
        dict(zip(names, (ledger.name, block, value, rows_of, cand.version.number, catalog.OPEN))),
        "recording the version's content",
    )


def close_changed(session: Session, ledger: Ledger, number: int) -> None:
    """End at ``number - 1`` the open content of the blocks listed in ``veil_changed_blocks``."""
    session.execute(
        q.ledger.close_cells(ledger.tables.series_cells, ledger.name, number, catalog.OPEN), "closing changed blocks"
    )


def changes(
    ledger: Ledger, cand: Candidate, published: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """What the new version changes in the ledger (``ledger.latest``: the latest version's cells of the same
    blocks): the block ids whose content changed, and their new cells (block, value, rows), narrow — ``None``
    when nothing changed."""
    v, old = cand.version, ledger.latest
    shaped = old if old is not None and _same_shape(old.layout, v.layout) else None  # else every block changed
    width = int(max(v.values.max(initial=0), shaped.values.max(initial=0) if shaped is not None else 0)) + 1
    keep = published > 0
    kept: np.ndarray | slice = slice(None) if keep.all() else keep  # no copies of the cells when all are kept
    keys, rows_of = _summed(v.blocks[kept], v.values[kept], published[kept], width)
    del keep, kept
    if shaped is not None:
        changed = _changed(shaped, keys, rows_of, width)
        mine = np.isin(keys // width, changed, kind="table")
        if not mine.all():
            keys, rows_of = keys[mine], rows_of[mine]
        del mine
    else:
        changed = np.unique(np.concatenate([keys // width, old.blocks if old is not None else np.zeros(0, np.int64)]))
    if len(changed) == 0:
        return None
    value = np.empty(len(keys), dtype=np.int32 if width <= 2**31 else np.int64)
    np.remainder(keys, width, out=value, casting="unsafe")
    block = narrowed(np.floor_divide(keys, width, out=keys))
    del keys
    return changed, block, value, narrowed(rows_of)  # DuckDB keeps every inserted array until the transaction ends
