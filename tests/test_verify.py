"""The recount's coding (``veil.release.verify``): the database's numbers of each column's distinct values back to
the checkers' codes, and an unknown value named in the error."""

from __future__ import annotations

import pytest

from veil.errors import ReleaseError
from veil.release.verify import _error, _lookup


def test_numbers_map_to_codes_and_zero_stands_for_null() -> None:
    fail = lambda v: _error(0, "zip", (1,), 1, v)  # noqa: E731
    assert _lookup([("1*", 1), ("2*", 2)], {"2*": 0, "1*": 1}, fail).tolist() == [-1, 1, 0]
    assert _lookup([("flu", 1)], {None: 3, "flu": 0}, fail).tolist() == [3, 0]
    assert _lookup([], {}, fail).tolist() == [-1]


def test_a_value_without_a_code_is_named() -> None:
    with pytest.raises(ReleaseError, match=r"column 'zip' of the release holds '9\*', not a level-1 value"):
        _lookup([("1*", 1), ("9*", 2)], {"1*": 0}, lambda v: _error(0, "zip", (1,), 1, v))
    with pytest.raises(ReleaseError, match=r"sensitive column 'disease' holds 'pox', not a value of the source"):
        _lookup([("pox", 1)], {"flu": 0}, lambda v: _error(1, "disease", (1,), 1, v))
