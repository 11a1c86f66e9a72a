"""t-closeness and (n,t)-closeness with the Earth Mover's Distance (Li, Li & Venkatasubramanian, ICDE 2007 /
TKDE 2010, summarized in papers/001; SPEC §2 and §3).

Three ground distances over the sensitive domain of the whole table (SPEC §3), all vectorized over rows of
``p`` (blocks) against ``q`` (one reference row, or one per block):

- ``equal``: ``1/2 sum |p_i - q_i|``;
- ``ordered`` (numeric values, sorted): ``1/(m-1) sum_i |sum_{j<=i} (p_j - q_j)|``;
- ``hierarchical`` (a taxonomy of height H, ground distance = level of the lowest common ancestor / H):
  ``sum over internal nodes N of level(N)/H · min(pos(N), neg(N))``.

Worked example (SPEC §3, Li et al.'s salary table): salaries 3K..11K once each; a block {3K,4K,5K} is at
ordered EMD 0.375 from the table, {3K,5K,9K} and {6K,8K,11K} at 1/6.

>>> q = np.full(9, 1 / 9)
>>> blocks = np.zeros((3, 9)); blocks[0, [0, 1, 2]] = blocks[1, [0, 2, 6]] = blocks[2, [3, 5, 8]] = 1 / 3
>>> np.round(emd_ordered(blocks, q), 4).tolist()
[0.375, 0.1667, 0.1667]
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from engine.counts import NodeCounts, SensitiveDomain
from engine.errors import ConfigError, HierarchyError
from engine.hierarchy import CsvSpec, Hierarchy, ValueKind, build
from engine.models.base import Needs, Properties, Verdict
from engine.models.common import TOL, domain_of, fail, fmt, level, number, per_rows, require_numeric, whole

DISTANCES = ("equal", "ordered", "hierarchical")


# --- ground distances --------------------------------------------------------------------------------------


def emd_equal(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Equal ground distance: ``1/2 sum_i |p_i - q_i|`` per row.

    >>> emd_equal(np.array([[1.0, 0.0], [0.5, 0.5]]), np.array([0.5, 0.5])).tolist()
    [0.5, 0.0]
    """
    return 0.5 * np.abs(p - q).sum(axis=-1)


def emd_ordered(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Ordered ground distance ``|i-j|/(m-1)``: ``1/(m-1) sum_i |cumsum(p - q)_i|`` per row (m = columns).

    >>> emd_ordered(np.array([[1.0, 0.0, 0.0]]), np.array([0.0, 0.0, 1.0])).tolist()
    [1.0]
    """
    m = p.shape[-1]
    if m <= 1:
        return np.zeros(p.shape[:-1])
    return np.abs(np.cumsum(p - q, axis=-1)).sum(axis=-1) / (m - 1)


@dataclass(frozen=True, eq=False)
class Taxonomy:
    """The tree above the sensitive values: ``parents[j-1][i]`` is the level-``j`` node of level-``(j-1)`` node
    ``i`` (level 0 = the domain's columns); ``height`` = H.  A taxonomy whose top level has several nodes
    gets an implicit root one level higher (so H is its height + 1).

    Example (hand-computed): flu, cold under "respiratory"; gastritis, ulcer under "stomach"; root "*" (H=2).
    Table uniform (¼ each).  Block (½,½,0,0): extra = (¼,¼,-¼,-¼); "respiratory" and "stomach" each have one
    sign only (cost 0); at the root pos = neg = ½, cost 2/2·½ = ½.  Block (½,0,½,0): each level-1 node has
    pos = neg = ¼, cost ½·¼ twice; the root sees 0 and 0: EMD ¼.

    >>> tax = Taxonomy.from_labels([["respiratory", "*"], ["respiratory", "*"], ["stomach", "*"], ["stomach", "*"]])
    >>> tax.emd(np.array([[0.5, 0.5, 0, 0], [0.5, 0, 0.5, 0]]), np.full(4, 0.25)).tolist()
    [0.5, 0.25]
    """

    parents: tuple[np.ndarray, ...]
    height: int

    @classmethod
    def from_labels(cls, labels: Sequence[Sequence[Any]]) -> Taxonomy:
        """``labels[i]`` = the level-1..H labels of domain column ``i`` (a function chain)."""
        width = len(labels)
        heights = {len(row) for row in labels}
        if len(heights) > 1:
            raise ValueError("every value needs the same number of levels")
        h = heights.pop() if heights else 0
        codes = [np.arange(width, dtype=np.int64)]
        for j in range(h):
            column = [str(row[j]) for row in labels]
            _, inv = np.unique(np.asarray(column, dtype=object), return_inverse=True)
            codes.append(inv.reshape(-1).astype(np.int64))
        return cls._from_codes(codes)

    @classmethod
    def _from_codes(cls, codes: list[np.ndarray]) -> Taxonomy:
        if len(codes) == 1 or len(np.unique(codes[-1])) > 1:
            codes = codes + [np.zeros_like(codes[0])]
        parents = []
        for below, above in zip(codes, codes[1:]):
            up = np.zeros(int(below.max()) + 1 if len(below) else 0, dtype=np.int64)
            up[below] = above
            parents.append(up)
        return cls(tuple(parents), len(parents))

    @classmethod
    def from_hierarchy(cls, hierarchy: Hierarchy, values: Sequence[Any]) -> Taxonomy:
        """The part of ``hierarchy`` above ``values`` (the domain's columns, each a leaf of it)."""
        index = {leaf: i for i, leaf in enumerate(hierarchy.leaves)}
        leaves = np.asarray([index[v] for v in values], dtype=np.int64)
        codes = [np.arange(len(values), dtype=np.int64)]
        for j in range(1, hierarchy.height + 1):
            _, inv = np.unique(hierarchy.codes(j)[leaves], return_inverse=True)
            codes.append(inv.reshape(-1).astype(np.int64))
        return cls._from_codes(codes)

    @cached_property
    def members(self) -> tuple[np.ndarray, ...]:
        """Per level, the 0/1 matrix (nodes below × nodes above) of the parent relation."""
        out = []
        for up in self.parents:
            member = np.zeros((len(up), int(up.max()) + 1 if len(up) else 0))
            member[np.arange(len(up)), up] = 1.0
            out.append(member)
        return tuple(out)

    def emd(self, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        """Hierarchical EMD per row of ``p`` against ``q`` (SPEC §3)."""
        extra = np.asarray(p, dtype=np.float64) - q
        total = np.zeros(extra.shape[:-1])
        for j, member in enumerate(self.members, start=1):
            pos = np.clip(extra, 0, None) @ member
            neg = np.clip(-extra, 0, None) @ member
            total += (j / self.height) * np.minimum(pos, neg).sum(axis=-1)
            extra = pos - neg
        return total


def _value_kind(domain: SensitiveDomain) -> ValueKind:
    if domain.numeric:
        if all(isinstance(v, int) and not isinstance(v, bool) for v in domain.values.tolist()):
            return ValueKind.INTEGER
        return ValueKind.FLOAT
    return ValueKind.TEXT


class _Distance:
    """Resolves a model's distance for one domain (hierarchies are read once per domain and cached)."""

    @staticmethod
    def resolve(model: Any, domain: SensitiveDomain) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        if model.distance == "equal":
            return emd_equal
        if model.distance == "ordered":
            require_numeric(domain, model.where, "the ordered distance needs numeric values (use 'equal' or "
                                                 "'hierarchical' for categories)")
            return emd_ordered
        key = (id(domain), domain.name)
        cached = model._cache.get(key)
        if cached is None or cached[0] is not domain:
            assert model.hierarchy is not None
            try:
                h = build(CsvSpec(Path(model.hierarchy), model.delimiter), domain.name, domain.values.tolist(),
                          _value_kind(domain))
            except HierarchyError as exc:
                raise HierarchyError(f"{model.where}: parameter 'hierarchy': {exc}") from None
            cached = (domain, Taxonomy.from_hierarchy(h, domain.values.tolist()))
            model._cache[key] = cached
        return cached[1].emd


def _check_distance(where: str, distance: str, hierarchy: str | Path | None) -> None:
    if distance not in DISTANCES:
        raise fail(where, "distance", f"must be one of {', '.join(map(repr, DISTANCES))}, got {distance!r}")
    if distance == "hierarchical" and hierarchy is None:
        raise ConfigError(f"{where}: missing required parameter 'hierarchy' (distance 'hierarchical'), "
                          "e.g. hierarchy = {{ csv = \"disease.csv\" }}")
    if distance != "hierarchical" and hierarchy is not None:
        raise fail(where, "hierarchy", f"only applies to distance 'hierarchical', not {distance!r}")


# --- t-closeness ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TCloseness:
    """t-closeness (Li et al. Def. 2; SPEC §2): every block has ``EMD(p(E,·), P) <= t``; achieved ``max EMD``.

    >>> from engine.counts import NodeCounts, SensitiveDomain
    >>> dom = SensitiveDomain("salary", np.arange(3, 12), np.ones(9, dtype=np.int64), numeric=True)
    >>> cells = [(0, 0), (0, 1), (0, 2), (1, 0), (1, 2), (1, 6), (2, 3), (2, 5), (2, 8)]
    >>> b, v = np.array(cells).T
    >>> nc = NodeCounts.from_cells(("zip",), (0,), b[:, None], v[:, None], np.ones(9), (3,), (dom,))
    >>> verdict = TCloseness(t=0.2, distance="ordered", attribute="salary").check(nc)
    >>> verdict.passed.tolist(), verdict.achieved
    ([False, True, True], 0.375)
    """

    type: ClassVar[str] = "t-closeness"
    t: float
    distance: str
    attribute: str
    hierarchy: str | None = None
    delimiter: str = ";"
    where: str = "t-closeness"
    _cache: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        number(self.where, "t", self.t, minimum=0, maximum=1)
        _check_distance(self.where, self.distance, self.hierarchy)

    @property
    def properties(self) -> Properties:
        return Properties(True, False, Needs.VALUES if self.distance == "ordered" else Needs.HISTOGRAM,
                          "EMD(., P) is convex and a merged block's distribution is a convex combination; not "
                          "with suppression: t=0.5, a block equal to P merged with a far block moves away from P", achieved="max")

    def distances(self, counts: NodeCounts) -> np.ndarray:
        """EMD of every block to the whole table's distribution."""
        bc = counts.blocks(self.attribute)
        emd = _Distance.resolve(self, bc.domain)
        ref = bc.domain.reference
        return per_rows(lambda c, n: emd(c / np.maximum(n, 1)[:, None], ref), bc.counts, bc.sizes)

    def check(self, counts: NodeCounts) -> Verdict:
        d = self.distances(counts)
        return Verdict(d <= self.t + TOL, level(d.max()) if len(d) else None)

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        _Distance.resolve(self, domain_of(domains, self.attribute, self.where))

    def describe(self) -> str:
        return f"t-closeness (t={fmt(self.t)}, {self.distance} distance) on {self.attribute}"


# --- (n,t)-closeness ----------------------------------------------------------------------------------------------


def first_cells(counts: NodeCounts) -> np.ndarray:
    """One cell index per block (any: all cells of a block share its superset), to read a block's superset
    off the rolled-up cells."""
    first = np.full(counts.n_blocks, -1, dtype=np.int64)
    first[counts.cell_block] = np.arange(len(counts.cell_block))
    return first


class _LazyVerdict(Verdict):
    """A ``Verdict`` whose achieved level is computed on first access: (n,t)'s per-block verdicts stop as soon
    as every small block found a close superset, its achieved t* needs every node above."""

    def __init__(self, passed: np.ndarray, achieved: float | None = None, *,
                 compute: Callable[[], float | None] | None = None) -> None:
        object.__setattr__(self, "passed", passed)
        object.__setattr__(self, "_compute", compute)
        if compute is None:                       # dataclasses.replace() passes the value itself
            object.__setattr__(self, "_value", achieved)

    @property  # type: ignore[override]
    def achieved(self) -> float | None:
        if "_value" not in self.__dict__:
            object.__setattr__(self, "_value", self._compute())
        return self.__dict__["_value"]

    def __repr__(self) -> str:
        return f"Verdict(passed={self.passed!r}, achieved={self.achieved!r})"


@dataclass(frozen=True)
class NTCloseness:
    """(n,t)-closeness (Li et al. TKDE 2010 Def. 3; papers/001 §IV; SPEC §2): block E at node N passes if
    ``n(E) >= n``, or a natural superset E' (the block containing E at a node strictly above N; the top node's
    single block is the whole table) has ``n(E') >= n`` and ``EMD(p(E), p(E')) <= t``.

    Supersets come from ``counts.rollup`` (no query), top node first; only the still-unresolved small
    blocks are compared at the next node.  Achieved ``t*`` = the smallest t for which the table passes
    (``max`` over small blocks of the ``min`` over their large supersets), computed on first access to
    ``Verdict.achieved``; 0 if every block has ``n(E) >= n``; ``None`` if a small block has no large superset.

    Example (hand-computed): zip 1→a, 2→a, 3→b at level 1, * at level 2; whole table 6 rows.  At level 0 the
    blocks are zip 1 {x,x}, zip 2 {y,y}, zip 3 {x,y}; with n = 3 all are small.  Supersets at level 1:
    a = {x,x,y,y} (n=4), b = {x,y} (n=2, too small); at level 2 the table {x×3, y×3}.  Equal distance:
    zip 1 to a = ½, to the table ½; zip 3 to the table 0.  So t* = ½ and with t = 0.4 zips 1, 2 fail.

    >>> from engine.counts import NodeCounts, SensitiveDomain
    >>> from engine.hierarchy import Hierarchy
    >>> zips = Hierarchy("zip", (1, 2, 3), (("a", "a", "b"), ("*", "*", "*")))
    >>> dom = SensitiveDomain("s", np.array(["x", "y"], dtype=object), np.array([3, 3]))
    >>> nc = NodeCounts.from_cells(("zip",), (0,), [[0], [1], [2], [2]], [[0], [1], [0], [1]],
    ...                            np.array([2, 2, 1, 1]), (3,), (dom,), generalizers=(zips,))
    >>> v = NTCloseness(n=3, t=0.4, distance="equal", attribute="s").check(nc)
    >>> v.passed.tolist(), v.achieved
    ([False, False, True], 0.5)
    """

    type: ClassVar[str] = "nt-closeness"
    n: int
    t: float
    distance: str
    attribute: str
    hierarchy: str | None = None
    delimiter: str = ";"
    where: str = "nt-closeness"
    _cache: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        whole(self.where, "n", self.n, 1)
        number(self.where, "t", self.t, minimum=0, maximum=1)
        _check_distance(self.where, self.distance, self.hierarchy)

    @property
    def properties(self) -> Properties:
        return Properties(False, False, Needs.SUPERSETS,
                          "not monotone over the lattice: a small block may pass through a close superset at a "
                          "node that is not above a more general node, where its merged block has only the "
                          "whole table left (tests/models/test_closeness.py::test_nt_not_monotone_on_lattice)", achieved="max")

    def nodes_above(self, counts: NodeCounts) -> list[tuple[int | None, ...]]:
        """Every node strictly above ``counts.node``, most general first (the top node is first)."""
        node = counts.node
        if all(lv is None for lv in node):
            return []
        if counts.generalizers is None:
            raise ValueError(f"{self.where}: (n,t)-closeness needs the hierarchies (NodeCounts.generalizers)")
        ranges = []
        for lv, g in zip(node, counts.generalizers):
            ranges.append([None] if lv is None else list(range(lv, g.height + 1)))
        above = [m for m in itertools.product(*ranges) if m != tuple(node)]
        above.sort(key=lambda m: -sum(x for x in m if x is not None))
        return above

    def _is_top(self, counts: NodeCounts, m: Sequence[int | None]) -> bool:
        gens = counts.generalizers or ()
        return all(lv is None or lv == g.height for lv, g in zip(m, gens))

    def superset_distances(self, counts: NodeCounts, m: Sequence[int | None], idx: np.ndarray,
                           emd: Callable[[np.ndarray, np.ndarray], np.ndarray],
                           first_cell: np.ndarray | None = None) -> np.ndarray:
        """EMD of blocks ``idx`` to their superset at node ``m`` (``inf`` where the superset has < n rows).

        Only the supersets that contain a block of ``idx`` are aggregated, from the cells of ``counts.rollup(m)``
        (``first_cell[b]`` is one cell of block b: :func:`first_cells`)."""
        bc = counts.blocks(self.attribute)
        sizes = np.maximum(bc.sizes, 1)[:, None]
        out = np.full(len(idx), np.inf)
        if self._is_top(counts, m):
            if bc.domain.total.sum() >= self.n:
                ref = bc.domain.reference
                out[:] = per_rows(lambda ix: emd(bc.counts[ix] / sizes[ix], ref), idx)
            return out
        if first_cell is None:
            first_cell = first_cells(counts)
        rolled = counts.rollup(m)
        cell_sup = rolled.cell_block
        wanted, which = np.unique(cell_sup[first_cell[idx]], return_inverse=True)
        row = np.full(rolled.n_blocks, -1, dtype=np.int64)
        row[wanted] = np.arange(len(wanted))
        cell_row = row[cell_sup]
        keep = cell_row >= 0
        v = bc.domain.size
        col = counts.cell_values[:, [d.name for d in counts.sensitive].index(self.attribute)]
        if keep.all():
            flat, weight = cell_row * v + col, counts.cell_count
        else:
            flat, weight = cell_row[keep] * v + col[keep], counts.cell_count[keep]
        hist = np.bincount(flat, weights=weight, minlength=len(wanted) * v).reshape(-1, v)
        size = hist.sum(axis=1)[:, None]
        big = size[which, 0] >= self.n
        if big.any():
            out[big] = per_rows(lambda ix, r: emd(bc.counts[ix] / sizes[ix], hist[r] / size[r]), idx[big], which[big])
        return out

    def check(self, counts: NodeCounts) -> Verdict:
        bc = counts.blocks(self.attribute)
        emd = _Distance.resolve(self, bc.domain)
        passed = bc.sizes >= self.n
        small = np.flatnonzero(~passed)
        if len(small) == 0:
            return Verdict(passed, 0.0 if bc.blocks else None)
        nodes = self.nodes_above(counts)
        first = first_cells(counts)
        best = np.full(len(small), np.inf)                 # closest large superset so far, per small block
        resolved_at = np.full(len(small), len(nodes))      # the node at which a small block found one within t
        todo = np.arange(len(small))
        for j, m in enumerate(nodes):
            if len(todo) == 0:
                break
            d = self.superset_distances(counts, m, small[todo], emd, first)
            best[todo] = np.minimum(best[todo], d)
            ok = d <= self.t + TOL
            resolved_at[todo[ok]] = j
            todo = todo[~ok]
        passed[small[resolved_at < len(nodes)]] = True

        def achieved() -> float | None:
            if len(todo):            # a block has no superset within t: its best distance exceeds every resolved one
                return level(best[todo].max())
            final = best.copy()      # the table passes: resolved blocks still need the nodes after their resolution
            for j, m in enumerate(nodes):
                need = np.flatnonzero(resolved_at < j)
                if len(need):
                    final[need] = np.minimum(final[need], self.superset_distances(counts, m, small[need], emd, first))
            return level(final.max())

        return _LazyVerdict(passed, compute=achieved)

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        _Distance.resolve(self, domain_of(domains, self.attribute, self.where))

    def describe(self) -> str:
        return f"(n,t)-closeness (n={self.n}, t={fmt(self.t)}, {self.distance} distance) on {self.attribute}"
