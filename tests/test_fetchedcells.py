"""``veil.release.fetchedcells``: a candidate's value tuples numbered in Veil, as the rows themselves say."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.release import fetchedcells

columns = st.lists(
    st.tuples(st.integers(0, 5), st.lists(st.integers(-1, 5), min_size=1, max_size=40)), min_size=1, max_size=3
)


def factors(spec: list[tuple[int, list[int]]], rows: int) -> list[tuple[np.ndarray, list[str]]]:
    """Columns of ``rows`` codes each (``-1`` NULL) over ``n + 1`` distinct values."""
    out = []
    for n, codes in spec:
        values = [f"v{k:02d}" for k in range(n + 1)]
        picked = np.array([(c if c <= n else n) for c in (codes * rows)[:rows]], dtype=np.int64)
        out.append((picked, values))
    return out


@pytest.mark.parametrize("packed", [True, False])
@settings(max_examples=150, deadline=None)
@given(spec=columns, rows=st.integers(1, 60))
def test_the_numbering_is_the_rows_distinct_tuples_in_order(
    spec: list[tuple[int, list[int]]], rows: int, packed: bool
) -> None:
    """Packed into one key or sorted as rows (``KEY_LIMIT``), each row's number names its own tuple, the tuples are
    distinct and sorted with NULL last."""
    limit = fetchedcells.KEY_LIMIT
    fetchedcells.KEY_LIMIT = limit if packed else 1
    try:
        cols = factors(spec, rows)
        distinct, vid = fetchedcells.numbered(cols, rows)
    finally:
        fetchedcells.KEY_LIMIT = limit
    own = [tuple(None if c[i] < 0 else values[c[i]] for c, values in cols) for i in range(rows)]
    assert [distinct[v] for v in vid] == own
    assert len(set(distinct)) == len(distinct) == len(set(own))
    assert distinct == sorted(distinct, key=lambda t: tuple((v is None, v) for v in t))


def test_no_columns_is_one_empty_tuple() -> None:
    distinct, vid = fetchedcells.numbered([], 3)
    assert distinct == [()] and vid.tolist() == [0, 0, 0]
    assert fetchedcells.numbered([], 0)[0] == []
