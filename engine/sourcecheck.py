"""What the one scan of the source tells before any hierarchy is built: an empty source, a source whose rows
all have NULLs, non-finite numbers, and quasi-identifiers that look like direct identifiers.

``Warehouse.prepare`` calls :func:`check_scan` right after the scan (and after the NULL policy applied), with
what the scan counted — the source's rows, those the NULL policy kept, the distinct values of every
quasi-identifier and counted sensitive column and their row counts — so the checks cost no query.  Errors are ``SourceError`` lines naming the table, the column and how many rows;
the identifier checks only warn (``veil.sourcecheck`` log lines, WARNING).

Non-finite numbers (NaN, +Infinity, -Infinity in a DOUBLE/REAL or a PostgreSQL NUMERIC column) have no place
in an interval (``[nan, nan)``), sort nowhere and make the numeric models' distances undefined, so they are
refused upfront: the user filters or replaces them in a view.

>>> non_finite_rows([(1.5, 3), (float("nan"), 2), (float("inf"), 1), (None, 4)])
{'NaN': 2, 'Infinity': 1}
"""

from __future__ import annotations

import decimal
import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any

from veil.errors import SourceError
from veil.hierarchy import ValueKind

log = logging.getLogger("veil.sourcecheck")

Values = Sequence[tuple[Any, int]]


def check_scan(
    table: str,
    read: int,
    rows: int,
    kinds: Mapping[str, ValueKind | None],
    values: Mapping[str, Values],
    nulls: Mapping[str, int],
) -> None:
    """Raise for an empty source, one left empty by the NULL policy, or non-finite numbers; warn about
    quasi-identifiers that look like direct identifiers.  ``table``: the source as named to the user;
    ``read``: the rows scanned; ``rows``: those the NULL policy kept; ``kinds``: quasi-identifier → its
    column's kind of value; ``values``: column → (value, rows) as scanned; ``nulls``: column → rows with a
    NULL there (the columns the NULL policy looked at).

    >>> check_scan("raw.t", 3, 0, {"age": None}, {}, {"age": 3})
    Traceback (most recent call last):
    veil.errors.SourceError: all 3 rows of source table 'raw.t' have NULLs in column(s) 'age' (3 rows); ...
    """
    if read == 0:
        raise SourceError(f"source table {table!r} has no rows; there is nothing to anonymize")
    if rows == 0:
        listing = ", ".join(f"{k!r} ({v} rows)" for k, v in nulls.items() if v)
        raise SourceError(
            f"all {read} rows of source table {table!r} have NULLs in column(s) {listing}; "
            '[source] nulls = "drop" leaves every row out, so there is nothing to anonymize'
        )
    bad = []
    for name, vals in values.items():
        found = non_finite_rows(vals)
        if found:
            counted = ", ".join(f"{k}: {n}" for k, n in found.items())
            bad.append(f"column {name!r} in {sum(found.values())} rows ({counted})")
    if bad:
        raise SourceError(
            f"source table {table!r} holds non-finite numbers: {'; '.join(bad)}; Veil cannot "
            "generalize or count NaN or ±Infinity, so filter or replace them (a view over the "
            "table) first"
        )
    for column, kind in kinds.items():
        message = identifier_warning(column, kind, values.get(column, ()), rows)
        if message:
            log.warning(f"source table {table!r}: {message}")


def non_finite_rows(values: Values) -> dict[str, int]:
    """Rows holding NaN, Infinity or -Infinity among scanned ``(value, rows)`` pairs (floats and decimals)."""
    found: dict[str, int] = {}
    for v, n in values:
        if isinstance(v, float) and not math.isfinite(v):
            key = "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
        elif isinstance(v, decimal.Decimal) and not v.is_finite():
            key = "NaN" if v.is_nan() else ("Infinity" if v > 0 else "-Infinity")
        else:
            continue
        found[key] = found.get(key, 0) + int(n)
    return {k: found[k] for k in ("NaN", "Infinity", "-Infinity") if k in found}


MIN_ROWS = 100  # below this, a column with a value per row is no sign of a direct identifier


def identifier_warning(column: str, kind: ValueKind | None, values: Values, rows: int) -> str | None:
    """Why quasi-identifier ``column`` looks like a direct identifier (a value per row, or a floating-point
    measurement with at least half as many distinct values as rows), or ``None``.  Each distinct value is a leaf of its hierarchy and a row of its dimension
    table, so such a column also costs memory in proportion to the table.

    Small tables (fewer than ``MIN_ROWS`` rows) are left alone: 12 patients with 12 different ages are normal.

    >>> identifier_warning("id", ValueKind.INTEGER, [(i, 1) for i in range(100)], 100)
    "quasi-identifier 'id' is unique per row (100 distinct values in 100 rows): it looks like a direct identifier; drop it from the release rather than generalize it"
    >>> identifier_warning("id", ValueKind.INTEGER, [(1, 1), (2, 1), (3, 1)], 3) is None
    True
    >>> identifier_warning("age", ValueKind.INTEGER, [(30, 2), (31, 1)], 3) is None
    True
    """
    distinct = sum(1 for v, _ in values if v is not None)
    if rows >= MIN_ROWS and distinct >= rows and all(int(n) == 1 for v, n in values if v is not None):
        return (
            f"quasi-identifier {column!r} is unique per row ({distinct} distinct values in {rows} rows): it looks "
            "like a direct identifier; drop it from the release rather than generalize it"
        )
    if kind in (ValueKind.FLOAT, ValueKind.REAL) and rows >= MIN_ROWS and 2 * distinct >= rows:
        return (
            f"quasi-identifier {column!r} is a floating-point column ({distinct} distinct values in {rows} rows): "
            "measurements make near-unique keys and look like a direct identifier; round or bucket it in a "
            "view, or drop it if it identifies people"
        )
    return None
