"""A candidate's cells fetched whole with their published values (``queries.valued_cells``) and numbered here:
what ``values_table``, ``cell_values``, ``cells_table`` and ``coded_cells`` give in four statements, in one — for
a release whose ledger is written after its checks (``Publication.staged_ledger`` False: the autocommit
publication, whose backend hands every result over whole and pays a job per statement, docs/spark.md §9).  Where
the base frequency set is held in memory and counts every published column, the cells are that base rolled up to the
node instead (``held``), and no statement reads the source for them.

The distinct value tuples are numbered in their sorted order (NULL after every value), so a version's numbering
depends on its values alone, not on the order the rows arrived in:

>>> codes = [np.array([1, 0, 1, -1]), np.array([0, 0, 1, 0])]  # ("a", 7), ("b", 7), ("a", 3), (NULL, 7)
>>> distinct, vid = numbered([(codes[0], ["b", "a"]), (codes[1], [7, 3])])
>>> distinct, vid.tolist()
([('a', 3), ('a', 7), ('b', 7), (None, 7)], [1, 2, 0, 3])
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from veil.backends.base import Factor, Session
from veil.release import ledger

KEY_LIMIT = ledger.KEY_LIMIT  # packed keys stay below it (int64), as the ledger's
Chunks = Callable[[bool], Iterator[dict[str, np.ndarray]]]  # ordered? → the cells (``g<i>``, ``vid``, ``n``)


def fetch(session: Session, stmt: Any, qi_count: int, width: int, what: str) -> tuple[list[tuple[Any, ...]], Chunks]:
    """The distinct published value tuples (in ``vid`` order) and the cells of ``stmt`` (``valued_cells``: ``g<i>``
    for ``qi_count`` QIs, ``v<j>`` for ``width`` columns, ``n``) as ``coded_cells`` chunks (``held``)."""
    data = session.factors(stmt, what)
    codes = {f"g{i}": _ints(data[f"g{i}"]) for i in range(qi_count)}
    return held(codes, [data[f"v{j}"] for j in range(width)], _ints(data["n"]))


def held(codes: dict[str, np.ndarray], values: Sequence[Factor], n: np.ndarray) -> tuple[list[tuple[Any, ...]], Chunks]:
    """Cells here — block codes ``g<i>``, each published column's values factorized, rows ``n`` — as the distinct
    value tuples (in ``vid`` order) and ``coded_cells`` chunks: one chunk, sorted by the codes and then ``vid`` when
    asked to be ordered.  From a statement (``fetch``) or from the base held in memory rolled up to the node.

    >>> distinct, chunks = held({"g0": np.array([1, 0])}, [(np.array([0, 1]), ["b", "a"])], np.array([4, 5]))
    >>> distinct, next(chunks(True))["vid"].tolist(), next(chunks(True))["g0"].tolist()
    ([('a',), ('b',)], [0, 1], [0, 1])
    """
    qi_count = len(codes)
    cells = {f"g{i}": np.asarray(codes[f"g{i}"], dtype=np.int64) for i in range(qi_count)}
    distinct, vid = numbered(values, len(n))
    cells["vid"], cells["n"] = vid, np.asarray(n, dtype=np.int64)

    def chunks(ordered: bool) -> Iterator[dict[str, np.ndarray]]:
        if ordered and len(n):
            order = np.lexsort([vid, *(cells[f"g{i}"] for i in reversed(range(qi_count)))])  # g0 the primary key
            yield {k: v[order] for k, v in cells.items()}
        else:
            yield cells

    return distinct, chunks


def numbered(columns: Sequence[Factor], rows: int | None = None) -> tuple[list[tuple[Any, ...]], np.ndarray]:
    """The distinct tuples of the factorized ``columns`` (codes, ``-1`` for NULL, and values), sorted, and each
    row's number among them; without columns every row is the empty tuple (``rows`` of them)."""
    if not columns:
        count = rows or 0
        return ([()] if count else []), np.zeros(count, dtype=np.int64)
    unique, inverse = _distinct(columns)
    ranked = np.column_stack([_ranks(values)[codes] for codes, (_c, values) in zip(unique.T, columns)])
    order = np.lexsort(ranked.T[::-1])  # the first column the primary key
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order), dtype=np.int64)
    picked = [np.asarray([*values, None], dtype=object)[codes[order]] for codes, (_c, values) in zip(unique.T, columns)]
    return list(zip(*(p.tolist() for p in picked))), rank[inverse]


def _ranks(values: Sequence[Any]) -> np.ndarray:
    """Each value's place among ``values`` sorted, NULL's (code ``-1``, the array's last entry) after them all."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = np.empty(len(values) + 1, dtype=np.int64)
    ranks[order] = np.arange(len(values), dtype=np.int64)
    ranks[-1] = len(values)
    return ranks


def _distinct(columns: Sequence[Factor]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of the columns' codes and each row's place among them: the codes packed into one int64
    key (mixed radix, NULL as 0) and the keys sorted — one array of the cells' length, where sorting the rows
    themselves (``np.unique(axis=0)``) copies them all — 9M cells of two columns with 1.6M distinct pairs: the whole
    numbering 1.8 s against 15.6 s; the rows themselves only when the key would overflow."""
    radices = [len(values) + 1 for _codes, values in columns]
    if math.prod(radices) >= KEY_LIMIT:
        unique, inverse = np.unique(np.column_stack([c for c, _v in columns]), axis=0, return_inverse=True)
        return unique, inverse.reshape(-1)
    key = columns[0][0].astype(np.int64) + 1  # codes may come as int32 (``Factor``): the key needs 64 bits
    for (codes, _values), radix in zip(columns[1:], radices[1:]):
        key = key * radix + (codes + 1)
    keys, inverse = np.unique(key, return_inverse=True)
    unique = np.empty((len(keys), len(columns)), dtype=np.int64)
    for j in range(len(columns) - 1, -1, -1):
        keys, unique[:, j] = np.divmod(keys, radices[j])
    return unique - 1, inverse.reshape(-1)


def _ints(factor: Factor) -> np.ndarray:
    """An integer column that holds no NULL, from its factors."""
    codes, values = factor
    return np.asarray(values, dtype=np.int64)[codes] if len(codes) else np.zeros(0, dtype=np.int64)
