"""Small helpers the model modules share: parameter checks, value matching, top-k sums, per-q*-block roll-up.

Floating-point comparisons that sit exactly on a boundary the user can reach by hand (entropy of a uniform
block vs ``ln l``, an EMD of 0.375 vs ``t = 0.375``, ε-privacy's R1 with equality) are made with a slack of
``TOL`` relative, so rounding in the last bit never flips a verdict.

>>> top_k(np.array([[1, 5, 3], [2, 2, 0]]), 2).tolist()
[[5, 3], [2, 2]]
>>> all_sub_blocks(np.array([True, False, True]), np.array([0, 0, 1]), 2).tolist()
[False, True]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from engine.counts import SensitiveDomain
from engine.errors import ConfigError

TOL = 1e-12


CHUNK_ROWS = 1 << 15  # rows per slice of a (blocks, values) computation: temporaries stay ~10 MB


def per_rows(fn: Callable[..., Any], *arrays: np.ndarray, rows: int | None = None) -> Any:
    """``fn`` over row slices of ``arrays`` (all of one length), results concatenated (an array or a tuple of
    arrays).  Bounded temporaries: a 1M x 50 float temporary costs ~1 s of page faults on a fresh allocation,
    a slice is reused from the allocator.

    >>> per_rows(lambda a: a.sum(axis=1), np.ones((5, 3)), rows=2).tolist()
    [3.0, 3.0, 3.0, 3.0, 3.0]
    """
    n = len(arrays[0])
    rows = rows or CHUNK_ROWS
    if n <= rows:
        return fn(*arrays)
    parts = [fn(*(a[start:start + rows] for a in arrays)) for start in range(0, n, rows)]
    if isinstance(parts[0], tuple):
        return tuple(np.concatenate(column) for column in zip(*parts))
    return np.concatenate(parts)


def slack(bound: np.ndarray | float) -> np.ndarray | float:
    """``bound`` widened by ``TOL`` relative (absolute near zero), for ``x <= slack(bound)``."""
    return bound + TOL * np.maximum(1.0, np.abs(bound))


def fail(where: str, name: str, message: str) -> ConfigError:
    """The one error shape: ``<where>: parameter 'name' <message>``."""
    return ConfigError(f"{where}: parameter {name!r} {message}")


def whole(where: str, name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise fail(where, name, f"must be a whole number, got {value!r}")
    if value < minimum:
        raise fail(where, name, f"must be >= {minimum}, got {value!r}")
    return int(value)


def number(where: str, name: str, value: Any, minimum: float | None = None, maximum: float | None = None,
           above: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(value)):
        raise fail(where, name, f"must be a finite number, got {value!r}")
    if minimum is not None and value < minimum:
        raise fail(where, name, f"must be >= {minimum:g}, got {value!r}")
    if maximum is not None and value > maximum:
        raise fail(where, name, f"must be <= {maximum:g}, got {value!r}")
    if above is not None and value <= above:
        raise fail(where, name, f"must be > {above:g}, got {value!r}")
    return float(value)


def domain_of(domains: Mapping[str, SensitiveDomain], attribute: str, where: str) -> SensitiveDomain:
    if attribute not in domains:
        raise fail(where, "attribute", f"names {attribute!r}, which is not a counted sensitive column "
                                       f"(counted: {', '.join(map(repr, domains)) or 'none'})")
    return domains[attribute]


def require_numeric(domain: SensitiveDomain, where: str, why: str) -> None:
    if not domain.numeric:
        raise fail(where, "attribute", f"names {domain.name!r}, which is not numeric; {why}")


def match_values(domain: SensitiveDomain, names: Sequence[str], where: str, param: str) -> np.ndarray:
    """Column indices of the domain values named in a config list (strings; numbers compare numerically).

    Raises naming the parameter and the values the data does not have."""
    exact = {str(v): i for i, v in enumerate(domain.values.tolist())}
    numeric: dict[float, int] = {}
    if domain.numeric:
        numeric = {float(v): i for i, v in enumerate(domain.values.tolist())}
    found: list[int] = []
    unknown: list[str] = []
    for name in names:
        if name in exact:
            found.append(exact[name])
            continue
        if numeric:
            try:
                f = float(name)
            except ValueError:
                f = math.nan
            if f in numeric:
                found.append(numeric[f])
                continue
        unknown.append(name)
    if unknown:
        shown = ", ".join(repr(u) for u in unknown[:20])
        raise fail(where, param, f"names value(s) that column {domain.name!r} does not have: {shown}")
    return np.unique(np.asarray(found, dtype=np.int64))


def top_k(counts: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` largest entries of each row, descending (``r1..rk``; zeros when a row has fewer)."""
    b, v = counts.shape
    if k <= 0:
        return np.zeros((b, 0), dtype=counts.dtype)
    if k >= v or v <= 256:  # a full row sort beats partition + sort on short rows (measured at v = 50)
        out = -np.sort(-counts, axis=1)[:, :k]
        if k > v:
            out = np.concatenate([out, np.zeros((b, k - v), dtype=counts.dtype)], axis=1)
        return out
    if k >= v:
        out = -np.sort(-counts, axis=1)
        if k > v:
            out = np.concatenate([out, np.zeros((b, k - v), dtype=counts.dtype)], axis=1)
        return out
    part = -np.partition(-counts, k - 1, axis=1)[:, :k]
    return -np.sort(-part, axis=1)


def all_sub_blocks(sub_passed: np.ndarray, parent: np.ndarray, n_blocks: int) -> np.ndarray:
    """A q*-block passes iff every one of its sub-blocks passes."""
    failures = np.bincount(parent[~sub_passed], minlength=n_blocks)
    return failures == 0


def level(x: float | np.floating | None) -> float | None:
    """An achieved level as a plain float, ``None`` when infinite or undefined."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def fmt(x: float) -> str:
    """Parameters in ``describe()``: ``3`` not ``3.0``."""
    return f"{x:g}"
