"""Small helpers the model modules share: parameter checks, value matching, per-chunk evaluation over sparse
histograms, the largest counts of each block, the table's achieved level.

Exactness on a boundary is ``veil.models.exact``'s business; nothing here widens a comparison.

>>> from veil.counts import BlockCounts, SensitiveDomain
>>> bc = BlockCounts.from_dense(np.array([[1, 5, 3], [2, 2, 0]]), SensitiveDomain("s", np.arange(3), np.ones(3)))
>>> top = top_parts(bc, 2)
>>> top.first.tolist(), top.kth.tolist(), top.through.tolist()
([5, 2], [3, 2], [8, 4])
>>> achieved(np.array([2.0, np.inf]), "min"), achieved(np.array([2.0, np.inf]), "max")
(2.0, None)
"""

from __future__ import annotations

import math
from fractions import Fraction
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from veil.counts import BlockCounts, SensitiveDomain
from veil.errors import ConfigError
from veil.models.exact import Exact, Rule, decide

CHUNK_CELLS = 1 << 20  # cells per slice of a per-cell computation: each temporary stays ~8 MB


def per_chunk(bc: BlockCounts, fn: Callable[[BlockCounts], Any], max_cells: int | None = None) -> Any:
    """``fn`` over consecutive slices of blocks of ``bc`` (at most ``max_cells`` cells each, default
    ``CHUNK_CELLS``), per-block results concatenated (an array or a tuple of arrays).

    >>> from veil.counts import BlockCounts, SensitiveDomain
    >>> bc = BlockCounts.from_dense(np.ones((5, 3)), SensitiveDomain("s", np.arange(3), np.ones(3)))
    >>> per_chunk(bc, lambda part: part.sizes, max_cells=4).tolist()
    [3, 3, 3, 3, 3]
    """
    ranges = bc.chunks(max_cells or CHUNK_CELLS)
    if len(ranges) <= 1:
        return fn(bc)
    parts = [fn(bc.slice(a, b)) for a, b in ranges]
    if isinstance(parts[0], tuple):
        return tuple(np.concatenate(column) for column in zip(*parts))
    return np.concatenate(parts)


def judge(
    bc: BlockCounts,
    param: Any,
    rule: Rule,
    levels: Callable[[BlockCounts], Any],
    exact_levels: Callable[[BlockCounts], Sequence[Exact]] | None = None,
    exact_signs: Callable[[BlockCounts, Fraction], Sequence[int]] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(passed, level) per block of ``bc``: ``levels`` (float, per chunk of blocks; or ``(level, error)`` with a
    per-block absolute error bound) compared with ``param`` by ``rule``, and the blocks on the knife-edge
    decided again by ``exact_levels`` / ``exact_signs`` on just those blocks (``veil.models.exact.decide``)."""
    out = per_chunk(bc, levels)
    lv, err = out if isinstance(out, tuple) else (out, None)
    lv = np.asarray(lv, dtype=np.float64)
    return decide(
        lv,
        param,
        rule,
        exact_levels=(lambda idx: exact_levels(bc.take(idx))) if exact_levels else None,
        exact_signs=(lambda idx, p: exact_signs(bc.take(idx), p)) if exact_signs else None,
        error=err,
    ), lv


def achieved(levels: np.ndarray, kind: str) -> float | None:
    """The table's level: the ``min`` or ``max`` of the blocks' levels; ``None`` when infinite or no block."""
    if len(levels) == 0:
        return None
    return level(levels.min() if kind == "min" else levels.max())


def fail(where: str, name: str, message: str) -> ConfigError:
    """The one error shape: ``<where>: parameter 'name' <message>``."""
    return ConfigError(f"{where}: parameter {name!r} {message}")


def whole(where: str, name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise fail(where, name, f"must be a whole number, got {value!r}")
    if value < minimum:
        raise fail(where, name, f"must be >= {minimum}, got {value!r}")
    return int(value)


def number(
    where: str,
    name: str,
    value: Any,
    minimum: float | None = None,
    maximum: float | None = None,
    above: float | None = None,
) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float, np.integer, np.floating))
        or not math.isfinite(float(value))
    ):
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
        raise fail(
            where,
            "attribute",
            f"names {attribute!r}, which is not a counted sensitive column "
            f"(counted: {', '.join(map(repr, domains)) or 'none'})",
        )
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


class Top(NamedTuple):
    """Per block, from its counts sorted descending ``r1 >= r2 >= ...`` (zeros past the last):"""

    first: np.ndarray  # r1
    kth: np.ndarray  # rk
    before: np.ndarray  # r1 + ... + r(k-1)
    through: np.ndarray  # r1 + ... + rk


def top_parts(bc: BlockCounts, k: int) -> Top:
    """``r1``, ``rk`` and the sums of the ``k-1`` and ``k`` largest counts of each block (``k >= 1``).  Removes
    one maximum per block ``k`` times (linear in the cells each time) for ``k <= 6``, else ranks all cells
    once by a sort: never a blocks × k array."""
    zero = np.zeros(bc.blocks, dtype=np.int64)
    if bc.cells == 0:
        return Top(zero, zero, zero, zero)
    if k <= 6:
        work = bc.counts.copy()
        owner = bc.block_of_cell
        first, kth, before = zero, zero, zero.copy()
        for j in range(k):
            kth = bc.block_max(work)
            if j == 0:
                first = kth
            if j < k - 1:
                before += kth
                hit = np.flatnonzero((work == kth[owner]) & (work > 0))
                lead = np.ones(len(hit), dtype=bool)
                lead[1:] = owner[hit[1:]] != owner[hit[:-1]]
                work[hit[lead]] = 0
        return Top(first, kth, before, before + kth)
    rank = descending_rank(bc)
    kth = zero.copy()
    at = rank == k - 1
    kth[bc.block_of_cell[at]] = bc.counts[at]
    before = bc.block_sum(np.where(rank < k - 1, bc.counts, 0))
    return Top(bc.block_max(bc.counts), kth, before, before + kth)


def descending_rank(bc: BlockCounts) -> np.ndarray:
    """Per cell, its 0-based rank in its block by count, largest first (ties in code order)."""
    order = np.lexsort((-bc.counts, bc.block_of_cell))
    rank = np.empty(bc.cells, dtype=np.int64)
    rank[order] = np.arange(bc.cells, dtype=np.int64) - np.repeat(bc.indptr[:-1], bc.distinct)
    return rank


def level(x: float | np.floating | None) -> float | None:
    """An achieved level as a plain float, ``None`` when infinite or undefined."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def fmt(x: float) -> str:
    """Parameters in ``describe()``: ``3`` not ``3.0``."""
    return f"{x:g}"
