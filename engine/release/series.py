"""A series of releases that stays private (docs/series-ledger.md).  Pure: no SQL.

Every version a release ever published is a ``Version``: its layout (node, hierarchies, columns) and its
content, cells of (block id, value id, rows) at its own node.  For the version about to be published (the
*candidate*) and every earlier version, ``differences`` gives the rows added and removed per class of their
common generalization; the guarantee is that each of those multisets is empty or passes the release's models.

- ``check`` lists the differences that fail (``series = "refuse"``; ``exposure`` does it for every pair of
  published versions);
The attack is the composition attack of Ganta, Kasiviswanathan & Smith ("Composition attacks and auxiliary
information in data privacy", KDD 2008) within one release's own series; m-invariance (Xiao & Tao, SIGMOD
2007) answers it with counterfeit rows; Veil's default series answers it with cohorts (docs/series.md).  Example:
version 1 shows two flu cases in block ``a*``; one hiv case joins — alone, it would be the difference:

>>> from veil.models import KAnonymity
>>> from veil.release.alignment import Chain
>>> d = Dictionary()
>>> layout = Layout((1,), (Chain.of("zip", {"a1": ("a*",), "a2": ("a*",)}),), ("s",))
>>> block, flu, hiv = d.add_block(("a*",)), d.add_value({"s": "flu"}), d.add_value({"s": "hiv"})
>>> v1 = Version(1, layout, np.array([block]), np.array([flu]), np.array([2]))
>>> v2 = Version(2, layout, np.array([block, block]), np.array([flu, hiv]), np.array([2, 1]))
>>> judge = Judge((KAnonymity(k=2),), ("s",), {})
>>> [e.describe() for e in check(d, judge, v2, [v1])]
['against version 1 (compared at node [1]): 1 block(s) with 1 added row(s) that fail the models']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from veil.counts import narrowed, pair_keys, sorted_sum
from veil.release.alignment import Alignment, Dictionary, Layout, align
from veil.release.differences import Judge, Reference, split


@dataclass(frozen=True, eq=False)
class Version:
    """One published version (or the candidate): layout, content at its node, and its table's distribution of
    each sensitive column (the reference for models like t-closeness)."""

    number: int
    layout: Layout
    blocks: np.ndarray
    values: np.ndarray
    counts: np.ndarray
    totals: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    checked: bool = True


@dataclass(frozen=True)
class Exposure:
    """Failing differences of one kind between two versions: counts only, never values."""

    earlier: int
    later: int
    projection: str
    side: str
    blocks: int
    rows: int
    compared_at: tuple[int, ...]

    def describe(self) -> str:
        view = "" if self.projection == "rows" else " (in the _blocks view)"
        return (
            f"against version {self.earlier} (compared at node {list(self.compared_at)}): {self.blocks} "
            f"block(s) with {self.rows} {self.side} row(s) that fail the models{view}"
        )


@dataclass(eq=False)
class _Pair:
    earlier: Version
    later: Version
    alignment: Alignment
    right_class: np.ndarray
    right_values: list[np.ndarray]
    applicable: list[np.ndarray]
    added_ref: Reference
    removed_ref: Reference
    added_codes: list[np.ndarray] = field(default_factory=list)
    removed_codes: list[np.ndarray] = field(default_factory=list)
    sums: list[_Sums] = field(default_factory=list)
    _order: np.ndarray | None = None

    def side_codes(self, side: str, k: int) -> np.ndarray:
        return self.added_codes[k] if side == "added" else self.removed_codes[k]

    def side_ref(self, side: str) -> Reference:
        return self.added_ref if side == "added" else self.removed_ref

    def cells(self, klass: int) -> np.ndarray:
        """The later version's cells in ``klass`` (sorted once)."""
        if self._order is None:
            self._order = np.argsort(self.right_class, kind="stable")
            self._sorted = self.right_class[self._order]
        lo, hi = np.searchsorted(self._sorted, [klass, klass + 1])
        return self._order[lo:hi]


@dataclass(eq=False)
class _Sums:
    """One projection's (class, value) keys of a pair, sorted once: each round only re-adds the later side."""

    keys: np.ndarray  # (keys, 2): class, projected value
    right: np.ndarray | None  # per later-side cell: its key's index (``None``: the cell's own, cells are the keys)
    left: np.ndarray  # per key: the earlier version's rows (narrow when they fit)

    @classmethod
    def of(
        cls,
        right_class: np.ndarray,
        right_value: np.ndarray,
        left_class: np.ndarray,
        left_value: np.ndarray,
        left_count: np.ndarray,
    ) -> _Sums:
        """The keys of both sides, the later side's cells indexed into them, the earlier side summed.  A version's
        cells are distinct and mostly come sorted (a kept node, a nightly delta): then no sort and no copy is made,
        and when both sides hold the same keys the positions are the cells' own."""
        width = int(max(right_value.max(initial=0), left_value.max(initial=0))) + 1
        left_keys, left_rows = sorted_sum(pair_keys(left_class, left_value, width), left_count)
        rk = pair_keys(right_class, right_value, width)
        uniq = _union(_distinct(rk), left_keys)
        narrow = np.int32 if len(uniq) < 2**31 else np.int64
        if len(uniq) == len(left_keys):  # the earlier side holds every key (in order)
            left = narrowed(left_rows)
        else:
            left = np.zeros(len(uniq), dtype=left_rows.dtype)
            left[np.searchsorted(uniq, left_keys)] = left_rows
        del left_keys, left_rows
        right = None if uniq is rk else np.searchsorted(uniq, rk).astype(narrow)  # None: the cells are the keys
        del rk
        keys = np.empty((len(uniq), 2), dtype=narrow)
        np.remainder(uniq, width, out=keys[:, 1], casting="unsafe")
        np.floor_divide(uniq, width, out=uniq)
        keys[:, 0] = uniq
        return cls(keys, right, left)

    def signed(self, right_count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Net differences later − earlier per key, zeros dropped (``differences.signed``, faster)."""
        if self.right is None:
            total = np.asarray(right_count, dtype=np.int64).copy()
        else:
            total = np.bincount(self.right, weights=right_count, minlength=len(self.left))  # exact below 2**53 rows
        total -= self.left
        nz = total != 0
        return self.keys[nz], total[nz].astype(np.int64)


def _distinct(keys: np.ndarray) -> np.ndarray:
    """The distinct values of ``keys``, sorted (no copy when they already are sorted and distinct).

    >>> _distinct(np.array([3, 1, 3, 2])).tolist(), _distinct(np.array([1, 2, 5])).tolist()
    ([1, 2, 3], [1, 2, 5])
    """
    if len(keys) > 1 and (keys[1:] > keys[:-1]).all():
        return keys
    return np.unique(keys)


def _union(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The union of two sorted arrays of distinct keys, sorted (``np.union1d`` without its concatenated copy of
    both: versions mostly share their keys, so only ``b``'s own are added to ``a``).

    >>> _union(np.array([1, 3, 5]), np.array([2, 3, 6])).tolist()
    [1, 2, 3, 5, 6]
    """
    if len(a) == 0 or len(b) == 0:
        return a if len(b) == 0 else b
    at = np.searchsorted(a, b)
    np.minimum(at, len(a) - 1, out=at)
    only = b[a[at] != b]
    del at
    if len(only) == 0:
        return a
    out = np.concatenate([a, only])
    out.sort()
    return out


@dataclass(eq=False)
class _Failure:
    pair: _Pair
    projection: int
    klass: int
    side: str
    values: np.ndarray
    counts: np.ndarray
    keys: np.ndarray
    amounts: np.ndarray


class _References:
    """Each version's table as the models saw it (cached: models cache per domain object)."""

    def __init__(self, judge: Judge) -> None:
        self.judge = judge
        self.cache: dict[int, Reference] = {}

    def of(self, version: Version) -> Reference:
        if version.number not in self.cache:
            self.cache[version.number] = self.judge.reference(version.totals)
        return self.cache[version.number]


def _pair(dictionary: Dictionary, judge: Judge, refs: _References, earlier: Version, later: Version) -> _Pair:
    a = align(dictionary, earlier.layout, earlier.blocks, later.layout, later.blocks)
    pair = _Pair(
        earlier,
        later,
        a,
        a.right[later.blocks],
        [p.ids[later.values] for p in a.projections],
        [judge.applicable(p.columns) for p in a.projections],
        refs.of(later),
        refs.of(earlier),
    )
    pair.added_codes = [judge.codes(p.columns, p.values, pair.added_ref) for p in a.projections]
    pair.removed_codes = [judge.codes(p.columns, p.values, pair.removed_ref) for p in a.projections]
    left_class = a.left[earlier.blocks]  # the earlier side is only ever summed: its cells are not kept
    pair.sums = [
        _Sums.of(pair.right_class, pair.right_values[k], left_class, p.ids[earlier.values], earlier.counts)
        for k, p in enumerate(a.projections)
    ]
    return pair


def _scan(pairs: Sequence[_Pair], later_counts: np.ndarray | None, judge: Judge) -> list[_Failure]:
    """Every failing difference of every pair (``later_counts`` replaces the later side's counts)."""
    found: list[_Failure] = []
    entries = []
    for pair in pairs:
        counts = pair.later.counts if later_counts is None else later_counts
        for k in range(len(pair.alignment.projections)):
            keys, amounts = pair.sums[k].signed(counts)
            for klass, side, values, rows in split(keys, amounts):
                found.append(_Failure(pair, k, klass, side, values, rows, keys, amounts))
                entries.append((pair.side_codes(side, k)[values], rows, pair.applicable[k], pair.side_ref(side)))
    fails = judge.failing(entries)
    return [f for f, bad in zip(found, fails.tolist()) if bad]


def _summarize(failures: Sequence[_Failure]) -> list[Exposure]:
    groups: dict[tuple[int, int, str, str], list[_Failure]] = {}
    for f in failures:
        name = f.pair.alignment.projections[f.projection].name
        groups.setdefault((f.pair.earlier.number, f.pair.later.number, name, f.side), []).append(f)
    return [
        Exposure(e, l, name, side, len(fs), int(sum(f.counts.sum() for f in fs)), fs[0].pair.alignment.compared_at)
        for (e, l, name, side), fs in sorted(groups.items())
    ]


def check(dictionary: Dictionary, judge: Judge, candidate: Version, history: Sequence[Version]) -> list[Exposure]:
    """The candidate's failing differences with every earlier version (``series = "refuse"``)."""
    refs = _References(judge)
    pairs = [_pair(dictionary, judge, refs, v, candidate) for v in history]
    return _summarize(_scan(pairs, None, judge))


def exposure(dictionary: Dictionary, judge: Judge, history: Sequence[Version]) -> list[Exposure]:
    """Every failing difference between any two published versions (what earlier releases leaked)."""
    refs = _References(judge)
    out: list[Exposure] = []
    for j, later in enumerate(history):
        pairs = [_pair(dictionary, judge, refs, earlier, later) for earlier in history[:j]]
        out.extend(_summarize(_scan(pairs, None, judge)))
    return out
