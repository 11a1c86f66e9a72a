"""A candidate's cells fetched whole with their published values (``queries.valued_cells``) and numbered here:
what ``values_table``, ``cell_values``, ``cells_table`` and ``coded_cells`` give in four statements, in one — for
a release whose ledger is written after its checks (``Publication.staged_ledger`` False: the autocommit
publication, whose backend hands every result over whole and pays a job per statement, docs/spark.md §9).

The distinct value tuples are numbered in their sorted order (NULL after every value), so a version's numbering
depends on its values alone, not on the order the rows arrived in:

>>> codes = [np.array([1, 0, 1, -1]), np.array([0, 0, 1, 0])]  # ("a", 7), ("b", 7), ("a", 3), (NULL, 7)
>>> distinct, vid = numbered([(codes[0], ["b", "a"]), (codes[1], [7, 3])])
>>> distinct, vid.tolist()
([('a', 3), ('a', 7), ('b', 7), (None, 7)], [1, 2, 0, 3])
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from veil.backends.base import Factor, Session

Chunks = Callable[[bool], Iterator[dict[str, np.ndarray]]]  # ordered? → the cells (``g<i>``, ``vid``, ``n``)


def fetch(session: Session, stmt: Any, qi_count: int, width: int, what: str) -> tuple[list[tuple[Any, ...]], Chunks]:
    """The distinct published value tuples (in ``vid`` order) and the cells of ``stmt`` (``valued_cells``: ``g<i>``
    for ``qi_count`` QIs, ``v<j>`` for ``width`` columns, ``n``) as ``coded_cells`` chunks: one chunk, sorted by the
    codes and then ``vid`` when asked to be ordered."""
    data = session.factors(stmt, what)
    cells = {f"g{i}": _ints(data[f"g{i}"]) for i in range(qi_count)}
    n = _ints(data["n"])
    distinct, vid = numbered([data[f"v{j}"] for j in range(width)], len(n))
    cells["vid"], cells["n"] = vid, n

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
    stacked = np.column_stack([codes for codes, _values in columns])
    unique, inverse = np.unique(stacked, axis=0, return_inverse=True)
    tuples = [tuple(None if c < 0 else values[c] for c, (_codes, values) in zip(row, columns)) for row in unique]
    order = sorted(range(len(tuples)), key=lambda k: tuple((v is None, v) for v in tuples[k]))
    rank = np.empty(len(tuples), dtype=np.int64)
    rank[order] = np.arange(len(tuples), dtype=np.int64)
    return [tuples[k] for k in order], rank[inverse.reshape(-1)]


def _ints(factor: Factor) -> np.ndarray:
    """An integer column that holds no NULL, from its factors."""
    codes, values = factor
    return np.asarray(values, dtype=np.int64)[codes] if len(codes) else np.zeros(0, dtype=np.int64)
