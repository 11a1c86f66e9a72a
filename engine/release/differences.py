"""What a reader computes from two published versions, and whether it is safe (docs/series-ledger.md §1, §3).
Pure: no SQL.

For versions A (earlier) and B (later) lined up by ``alignment.align``, per class ``g`` of the common
generalization and projected value ``t``: ``signed(g, t) = n_B(g, t) - n_A(g, t)``.  The rows *added* in
``g`` are the positive parts, the rows *removed* the negative ones — net multiset differences, so a batch
adding {flu, cold} and removing {flu} adds {cold}.  ``Judge`` runs the release's models on every such
multiset as if it were a block; a difference is safe when it is empty or passes every model.

>>> keys, amounts = signed(np.array([0, 0]), np.array([0, 1]), np.array([1, 1]),
...                        np.array([0]), np.array([0]), np.array([1]))
>>> keys.tolist(), amounts.tolist()     # class 0: flu unchanged, cold added
([[0, 1]], [1])
"""

from __future__ import annotations

import decimal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from veil.counts import NodeCounts, SensitiveDomain
from veil.errors import VeilError
from veil.hierarchy import Hierarchy
from veil.models.base import Model, Needs
from veil.privacy import verdict

SIDES = ("added", "removed")


def signed(
    right_class: np.ndarray,
    right_value: np.ndarray,
    right_count: np.ndarray,
    left_class: np.ndarray,
    left_value: np.ndarray,
    left_count: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Net differences right − left per (class, value): the keys (rows of ``[class, value]``) and amounts,
    zeros dropped."""
    cls = np.concatenate([right_class, left_class]).astype(np.int64)
    val = np.concatenate([right_value, left_value]).astype(np.int64)
    amount = np.concatenate([right_count, -np.asarray(left_count)]).astype(np.int64)
    if len(cls) == 0:
        return np.zeros((0, 2), dtype=np.int64), np.zeros(0, dtype=np.int64)
    width = int(val.max()) + 1
    key = cls * width + val
    uniq, inv = np.unique(key, return_inverse=True)
    total = np.bincount(inv.reshape(-1), weights=amount, minlength=len(uniq)).astype(np.int64)
    nz = total != 0
    keys = np.column_stack([uniq[nz] // width, uniq[nz] % width])
    return keys, total[nz]


@dataclass(frozen=True, eq=False)
class Difference:
    """One class's added or removed multiset (projected value ids and counts) between two versions."""

    earlier: int
    later: int
    projection: str
    klass: int
    side: str
    values: np.ndarray
    counts: np.ndarray

    @property
    def rows(self) -> int:
        return int(self.counts.sum())


def split(keys: np.ndarray, amounts: np.ndarray) -> list[tuple[int, str, np.ndarray, np.ndarray]]:
    """(class, side, values, counts) for every non-empty added / removed multiset."""
    out = []
    for side, mask in (("added", amounts > 0), ("removed", amounts < 0)):
        if not mask.any():
            continue
        k, a = keys[mask], np.abs(amounts[mask])
        order = np.argsort(k[:, 0], kind="stable")
        k, a = k[order], a[order]
        starts = np.flatnonzero(np.r_[True, k[1:, 0] != k[:-1, 0]])
        ends = np.r_[starts[1:], len(k)]
        for s, e in zip(starts.tolist(), ends.tolist()):
            out.append((int(k[s, 0]), side, k[s:e, 1], a[s:e]))
    return out


def _numeric(text: str | None) -> decimal.Decimal:
    """A numeric value's text as an exact number (``10**38 - 1`` and ``10**38 - 2`` stay two values, as the
    database counts them); NaN when it is not one.

    >>> _numeric("99999999999999999999999999999999999999") > _numeric("99999999999999999999999999999999999998")
    True
    """
    try:
        return decimal.Decimal(text) if text is not None else decimal.Decimal("NaN")
    except decimal.InvalidOperation:
        return decimal.Decimal("NaN")


@dataclass(frozen=True, eq=False)
class Reference:
    """One version's table as the models saw it when they judged it: per sensitive column its domain (the
    table's values, with their counts as ``P``) and each value text's column in it."""

    domains: tuple[SensitiveDomain, ...]
    index: tuple[dict[str, int], ...]


class Judge:
    """The release's models applied to differences (docs/series-ledger.md §3).  A difference is judged against one
    version's table (:meth:`reference`): the later version's for rows added, the earlier version's for rows
    removed — each version's rows are values of its own table — so a block that passed when it was published
    passes again as a removal, whatever the model (ordered and hierarchical distances read the domain too)."""

    def __init__(self, models: Sequence[Model], sensitive: Sequence[str], numeric: Mapping[str, bool]):
        self.models = tuple(models)
        self.sensitive = tuple(sensitive)
        self.numeric = {c: bool(numeric.get(c)) for c in self.sensitive}
        self.min_size = max((m.properties.min_block_size for m in self.models), default=1)
        # kept per object (with it, so that its id stays its own): a version's shards share them (veil.release.laterversion)
        self._references: dict[int, tuple[Mapping[str, Mapping[str, int]], Reference]] = {}
        self._codes: dict[tuple[Any, ...], tuple[Sequence[Mapping[str, str | None]], Reference, np.ndarray]] = {}

    def reference(self, totals: Mapping[str, Mapping[str, int]]) -> Reference:
        """Domains of a table whose sensitive columns hold ``totals`` (column → value text → rows); the same
        object for the same ``totals`` object."""
        hit = self._references.get(id(totals))
        if hit is not None and hit[0] is totals:
            return hit[1]
        ref = self._reference(totals)
        self._references[id(totals)] = (totals, ref)
        return ref

    def _reference(self, totals: Mapping[str, Mapping[str, int]]) -> Reference:
        domains, index = [], []
        for c in self.sensitive:
            counts = totals.get(c, {})
            if self.numeric[c]:
                keys = sorted({_numeric(t) for t in counts}, key=lambda k: (k.is_nan(), k if not k.is_nan() else 0))
                pos = {k: i for i, k in enumerate(keys)}
                where = {t: pos[_numeric(t)] for t in counts}
                shown = np.asarray([float(k) for k in keys], dtype=np.float64)
            else:
                ordered = sorted(counts)
                where = {t: i for i, t in enumerate(ordered)}
                shown = np.asarray(ordered, dtype=object)
            total = np.zeros(len(shown), dtype=np.int64)
            for t, n in counts.items():
                total[where[t]] += int(n)
            domains.append(SensitiveDomain(c, shown, total, numeric=self.numeric[c]))
            index.append(where)
        return Reference(tuple(domains), tuple(index))

    def codes(self, columns: Sequence[str], values: Sequence[Mapping[str, str | None]], ref: Reference) -> np.ndarray:
        """Per projected value, its column in each of ``ref``'s domains (−1 where the projection lacks the column,
        or the value is not in that table: a model that reads it then fails the difference).  Computed once per
        (columns, ``values`` object, ``ref`` object); callers never write into the array."""
        key = (tuple(columns), id(values), id(ref))
        hit = self._codes.get(key)
        if hit is not None and hit[0] is values and hit[1] is ref:
            return hit[2]
        out = np.full((len(values), len(self.sensitive)), -1, dtype=np.int64)
        for j, c in enumerate(self.sensitive):
            if c in columns:
                out[:, j] = [ref.index[j].get(v[c], -1) for v in values]  # type: ignore[arg-type]
        self._codes[key] = (values, ref, out)
        return out

    def applicable(self, columns: Sequence[str]) -> np.ndarray:
        """Which models can judge a difference on ``columns`` (a model whose attribute one of the two
        versions did not publish is skipped for that pair: docs/series-ledger.md §3)."""
        ok = []
        for m in self.models:
            if m.attribute is None:
                ok.append(m.properties.needs is not Needs.JOINT or set(self.sensitive) <= set(columns))
            else:
                ok.append(m.attribute in columns)
        return np.asarray(ok, dtype=bool)

    def failing(self, entries: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray, Reference]]) -> np.ndarray:
        """Whether each multiset fails an applicable model.  ``entries[i]`` = (value codes (n × S), counts (n),
        applicable models, reference table)."""
        fails = np.zeros(len(entries), dtype=bool)
        groups: dict[int, list[int]] = {}
        for i, e in enumerate(entries):
            groups.setdefault(id(e[3]), []).append(i)
        for members in groups.values():
            fails[members] = self._failing([entries[i] for i in members])
        return fails

    @staticmethod
    def as_blocks(entries: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray, Reference]]) -> NodeCounts:
        """The multisets of ``entries`` (one reference table) as the blocks of one table, in order."""
        n = len(entries)
        owner = np.concatenate([np.full(len(e[1]), i, dtype=np.int64) for i, e in enumerate(entries)])
        codes = np.vstack([e[0] for e in entries])
        counts = np.concatenate([e[1] for e in entries]).astype(np.int64)
        return NodeCounts.from_cells(
            ("difference",),
            (0,),
            owner[:, None],
            np.maximum(codes, 0),
            counts,
            (n,),
            entries[0][3].domains,
            (_flat(n),),
        )

    def _failing(self, entries: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray, Reference]]) -> np.ndarray:
        n = len(entries)
        owner = np.concatenate([np.full(len(e[1]), i, dtype=np.int64) for i, e in enumerate(entries)])
        codes = np.vstack([e[0] for e in entries])
        assert all(int(e[1].sum()) > 0 for e in entries), "a difference to judge is never empty"
        applicable = np.vstack([e[2] for e in entries])
        unknown = np.zeros(n, dtype=bool)  # a value its reference table lacks, in a column some model reads
        for j in range(codes.shape[1]):
            missing = np.bincount(owner, weights=(codes[:, j] < 0), minlength=n) > 0
            unknown |= missing & self._reads(j, applicable)
        nc = self.as_blocks(entries)
        fails = unknown.copy()
        for k, model in enumerate(self.models):
            if not applicable[:, k].any():
                continue
            try:
                passed = verdict(model, nc).passed
            except (VeilError, ValueError, KeyError, IndexError):
                passed = np.zeros(n, dtype=bool)  # a model that cannot judge a difference fails it
            fails |= ~passed & applicable[:, k]
        return fails

    def _reads(self, column: int, applicable: np.ndarray) -> np.ndarray:
        """Per entry: some applicable model reads sensitive column ``column``."""
        name = self.sensitive[column]
        reads = np.asarray([m.attribute == name or m.properties.needs is Needs.JOINT for m in self.models])
        return (applicable & reads).any(axis=1)


def _flat(n: int) -> Hierarchy:
    """The differences' one generalization: all of them together (the whole table, for (n,t)-closeness's
    natural supersets: docs/series-ledger.md §5)."""
    return Hierarchy("difference", tuple(range(n)), (("*",) * n,), _check=False)
