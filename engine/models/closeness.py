"""t-closeness and (n,t)-closeness with the Earth Mover's Distance (Li, Li & Venkatasubramanian, "t-Closeness:
Privacy Beyond k-Anonymity and l-Diversity", ICDE 2007, and "Closeness: A New Privacy Measure for Data
Publishing", TKDE 2010; docs/models.md §2.5, §3).

The three ground distances (equal, ordered, hierarchical) are computed on sparse histograms by
``veil.models.emd``, each block against its reference: the whole table's distribution ``P`` for t-closeness,
its natural supersets for (n,t)-closeness.  Verdicts are exact on the knife-edge (the EMDs are rational in
the counts, docs/models.md §7).

Worked example (docs/models.md §3, Li et al.'s salary table): salaries 3K..11K once each; a block {3K,4K,5K}
is at ordered EMD 0.375 from the table, {3K,5K,9K} and {6K,8K,11K} at 1/6.

>>> from veil.counts import NodeCounts, SensitiveDomain
>>> dom = SensitiveDomain("salary", np.arange(3, 12), np.ones(9, dtype=np.int64), numeric=True)
>>> b = np.repeat([0, 1, 2], 3)
>>> v = np.array([0, 1, 2, 0, 2, 6, 3, 5, 8])
>>> nc = NodeCounts.from_cells(("zip",), (0,), b[:, None], v[:, None], np.ones(9), (3,), (dom,))
>>> np.round(TCloseness(t=0.2, distance="ordered", attribute="salary").distances(nc), 4).tolist()
[0.375, 0.1667, 0.1667]
>>> TCloseness(t=0.375, distance="ordered", attribute="salary").check(nc).passed.tolist()   # 3/8 <= 0.375
[True, True, True]
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from veil.counts import BlockCounts, NodeCounts, SensitiveDomain
from veil.errors import ConfigError, HierarchyError
from veil.hierarchy import CsvSpec, Hierarchy, HierarchySpec, RowsSpec, TableSpec, ValueKind, build
from veil.models import emd as emds
from veil.models.base import Needs, Properties, Reduction, Reference, Statistic, Verdict
from veil.models import common
from veil.models.common import achieved, domain_of, fail, fmt, number, require_numeric, whole
from veil.models.emd import Taxonomy
from veil.models.exact import Rule, decide
from veil.models.params import Params
from veil.registry import MODELS

DISTANCES = ("equal", "ordered", "hierarchical")

# (block histograms, reference histograms, each block's reference, exact?) -> EMD per block
Distance = Callable[[BlockCounts, BlockCounts, np.ndarray, bool], np.ndarray]


def taxonomy_of(hierarchy: Hierarchy, values: Sequence[Any]) -> Taxonomy:
    """The part of ``hierarchy`` above ``values`` (the domain's columns, each a leaf of it)."""
    index = {leaf: i for i, leaf in enumerate(hierarchy.leaves)}
    leaves = np.asarray([index[v] for v in values], dtype=np.int64)
    codes = [np.arange(len(values), dtype=np.int64)]
    for j in range(1, hierarchy.height + 1):
        _, inv = np.unique(hierarchy.codes(j)[leaves], return_inverse=True)
        codes.append(inv.reshape(-1).astype(np.int64))
    return Taxonomy.from_codes(codes)


def _value_kind(domain: SensitiveDomain) -> ValueKind:
    if domain.numeric:
        if all(isinstance(v, int) and not isinstance(v, bool) for v in domain.values.tolist()):
            return ValueKind.INTEGER
        return ValueKind.FLOAT
    return ValueKind.TEXT


class _Distance:
    """Resolves a model's distance for one domain (hierarchies are read once per domain and cached)."""

    @staticmethod
    def resolve(model: Any, domain: SensitiveDomain) -> Distance:
        if model.distance == "equal":
            return emds.equal
        if model.distance == "ordered":
            require_numeric(
                domain,
                model.where,
                "the ordered distance needs numeric values (use 'equal' or 'hierarchical' for categories)",
            )
            return emds.ordered
        key = (id(domain), domain.name)
        cached = model._cache.get(key)
        if cached is None or cached[0] is not domain:
            assert model.hierarchy is not None
            spec = model.hierarchy
            if isinstance(spec, (str, os.PathLike)):
                spec = CsvSpec(Path(spec), model.delimiter)
            try:
                h = build(spec, domain.name, domain.values.tolist(), _value_kind(domain))
            except HierarchyError as exc:
                raise HierarchyError(f"{model.where}: parameter 'hierarchy': {exc}") from None
            cached = (domain, taxonomy_of(h, domain.values.tolist()))
            model._cache[key] = cached
        return cached[1].distances


def _check_distance(where: str, distance: str, hierarchy: str | Path | HierarchySpec | None) -> None:
    if distance not in DISTANCES:
        raise fail(where, "distance", f"must be one of {', '.join(map(repr, DISTANCES))}, got {distance!r}")
    if distance == "hierarchical" and hierarchy is None:
        raise ConfigError(
            f"{where}: missing required parameter 'hierarchy' (distance 'hierarchical'), "
            'e.g. hierarchy = {{ csv = "disease.csv" }}'
        )
    if distance != "hierarchical" and hierarchy is not None:
        raise fail(where, "hierarchy", f"only applies to distance 'hierarchical', not {distance!r}")


def _chunked(emd: Distance, bc: BlockCounts, refs: BlockCounts, ref_of: np.ndarray) -> np.ndarray:
    """``emd`` in float over slices of blocks (bounded temporaries)."""
    parts = [emd(bc.slice(a, b), refs, ref_of[a:b], False) for a, b in bc.chunks(common.CHUNK_CELLS)]
    return np.concatenate(parts) if parts else np.zeros(0)


def distances_to(
    emd: Distance, bc: BlockCounts, refs: BlockCounts, ref_of: np.ndarray, t: float
) -> tuple[np.ndarray, np.ndarray]:
    """(EMD <= t, EMD) per block against its reference, exact on the knife-edge (docs/models.md §7)."""
    d = _chunked(emd, bc, refs, ref_of)
    ok = decide(d, t, Rule.AT_MOST, exact_levels=lambda idx: list(emd(bc.take(idx), refs, ref_of[idx], True)))
    return ok, d


def hierarchy_param(p: Params) -> tuple[str | HierarchySpec | None, str]:
    """A closeness model's ``hierarchy`` parameter and its delimiter: ``{ csv = "disease.csv" }`` (a path),
    ``{ table = "dims.diseases", columns = [...] }`` (read by the run through its session, see
    ``veil.hierarchytables.resolve``), or rows the Python API made of a DataFrame."""
    if not p.has("hierarchy"):
        return None, ";"
    raw = p.raw("hierarchy")
    if isinstance(raw, RowsSpec):
        return raw, ";"
    if isinstance(raw, Mapping) and "table" in raw:
        columns = raw.get("columns")
        if (
            not isinstance(raw["table"], str)
            or not raw["table"]
            or set(raw) - {"table", "columns"}
            or not (
                columns is None
                or (
                    isinstance(columns, (list, tuple))
                    and len(columns) >= 2
                    and all(isinstance(c, str) and c for c in columns)
                )
            )
        ):
            raise p.error(
                "hierarchy",
                'must be a table like hierarchy = { table = "dims.diseases" } (optionally with '
                f'columns = ["value", "level1", ...] naming at least two columns), got {raw!r}',
            )
        return TableSpec(raw["table"], tuple(columns) if columns is not None else None), ";"
    shape = (
        'must be a table like hierarchy = { csv = "disease.csv" } (optionally with delimiter = ";") or '
        'hierarchy = { table = "dims.diseases" }'
    )
    if not isinstance(raw, Mapping) or not isinstance(raw.get("csv"), str) or set(raw) - {"csv", "delimiter"}:
        raise p.error("hierarchy", f"{shape}, got {raw!r}")
    delimiter = raw.get("delimiter", ";")
    if not isinstance(delimiter, str) or len(delimiter) != 1:
        raise p.error("hierarchy", f"delimiter must be one character, got {delimiter!r}")
    return str(p.path(raw["csv"])), delimiter


# --- t-closeness ----------------------------------------------------------------------------------------------


@MODELS.register("t-closeness")
@dataclass(frozen=True)
class TCloseness:
    """t-closeness (Li, Li & Venkatasubramanian, ICDE 2007, Def. 2; docs/models.md §2.5, §3): every block has
    ``EMD(p(E,·), P) <= t``; a block's level is its EMD, the table's the max.

    >>> from veil.counts import NodeCounts, SensitiveDomain
    >>> dom = SensitiveDomain("salary", np.arange(3, 12), np.ones(9, dtype=np.int64), numeric=True)
    >>> cells = [(0, 0), (0, 1), (0, 2), (1, 0), (1, 2), (1, 6), (2, 3), (2, 5), (2, 8)]
    >>> b, v = np.array(cells).T
    >>> nc = NodeCounts.from_cells(("zip",), (0,), b[:, None], v[:, None], np.ones(9), (3,), (dom,))
    >>> verdict = TCloseness(t=0.2, distance="ordered", attribute="salary").check(nc)
    >>> verdict.passed.tolist(), verdict.achieved
    ([False, True, True], 0.375)
    """

    type: ClassVar[str]  # set by the registration above
    reference: ClassVar[Reference] = Reference(
        achieved=(
            "`max EMD`; `hierarchy` (`{ csv = ... }` or `{ table = ..., columns = [...] }`) for the hierarchical "
            "distance"
        ),
        sample={
            "t": 0.2,
            "distance": "hierarchical",
            "hierarchy": {"csv": "s.csv", "delimiter": ";"},
            "attribute": "s",
        },
    )
    t: float
    distance: str
    attribute: str
    hierarchy: str | HierarchySpec | None = None  # a CSV path, or a spec: { table = ... } read by the run
    delimiter: str = ";"
    where: str = "t-closeness"
    _cache: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    @classmethod
    def from_params(cls, p: Params) -> TCloseness:
        """The model of a ``[[models]]`` table."""
        t = p.number("t", minimum=0, maximum=1)
        distance = p.text("distance", choices=DISTANCES)
        hierarchy, delimiter = hierarchy_param(p)
        return cls(
            t=t, distance=distance, attribute=p.attribute(), hierarchy=hierarchy, delimiter=delimiter, where=p.where
        )

    def __post_init__(self) -> None:
        number(self.where, "t", self.t, minimum=0, maximum=1)
        _check_distance(self.where, self.distance, self.hierarchy)

    @property
    def properties(self) -> Properties:
        reduction = (
            Reduction(Statistic(self.distance), self.attribute, float(self.t), at_most=True)
            if self.distance in ("ordered", "equal")
            else None
        )  # the warehouse computes these EMDs
        return Properties(
            True,
            False,
            Needs.VALUES if self.distance == "ordered" else Needs.HISTOGRAM,
            "EMD(., P) is convex and a merged block's distribution is a convex combination; not "
            "with suppression: t=0.5, a block equal to P merged with a far block moves away from P",
            achieved="max",
            reduction=reduction,
        )

    def judge(self, bc: BlockCounts) -> tuple[np.ndarray, np.ndarray]:
        emd = _Distance.resolve(self, bc.domain)
        table = emds.whole_table(bc.domain)
        return distances_to(emd, bc, table, np.zeros(bc.blocks, dtype=np.int64), self.t)

    def distances(self, counts: NodeCounts) -> np.ndarray:
        """EMD of every block to the whole table's distribution ``P`` (exact on the knife-edge at t)."""
        return self.judge(counts.blocks(self.attribute))[1]

    levels = distances

    def check(self, counts: NodeCounts) -> Verdict:
        passed, d = self.judge(counts.blocks(self.attribute))
        return Verdict(passed, achieved(d, "max"))

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        _Distance.resolve(self, domain_of(domains, self.attribute, self.where))

    def describe(self) -> str:
        return f"t-closeness (t={fmt(self.t)}, {self.distance} distance) on {self.attribute}"


# --- (n,t)-closeness ----------------------------------------------------------------------------------------------


class _LazyVerdict(Verdict):
    """A ``Verdict`` whose achieved level is computed on first access: (n,t)'s per-block verdicts stop as soon
    as every small block found a close superset, its achieved t* needs every node above."""

    _compute: Callable[[], float | None] | None  # None: the value was given (``_value``)

    def __init__(
        self, passed: np.ndarray, achieved: float | None = None, *, compute: Callable[[], float | None] | None = None
    ) -> None:
        object.__setattr__(self, "passed", passed)
        object.__setattr__(self, "_compute", compute)
        if compute is None:  # dataclasses.replace() passes the value itself
            object.__setattr__(self, "_value", achieved)

    @property
    def achieved(self) -> float | None:
        if "_value" not in self.__dict__:
            assert self._compute is not None  # no value given: __init__ had compute
            object.__setattr__(self, "_value", self._compute())
        return self.__dict__["_value"]

    def __repr__(self) -> str:
        return f"Verdict(passed={self.passed!r}, achieved={self.achieved!r})"


@MODELS.register("nt-closeness")
@dataclass(frozen=True)
class NTCloseness:
    """(n,t)-closeness (Li, Li & Venkatasubramanian, "Closeness: A New Privacy Measure for Data Publishing",
    TKDE 2010, Def. 3; docs/models.md §2.5): block E at node N passes if ``n(E) >= n``, or a natural superset
    E' — the block containing E at a node strictly above N — has ``n(E') >= n`` and ``EMD(p(E), p(E')) <= t``.
    The whole table is a superset only as the top node's block when that node has a single block (every
    hierarchy's top level one value); a block whose supersets are all smaller than n fails.

    Supersets come from the counts themselves (``NodeCounts.superset_index``, no query), top node first; only
    the still-unresolved small blocks are compared at the next node.  A block's level is the smallest t for
    which it passes: 0 if ``n(E) >= n``, else the min EMD over its large supersets (``inf`` if none); the
    table's achieved ``t*`` is the max, computed on first access to ``Verdict.achieved``.  The supersets are
    the blocks of ``counts``: pass the whole node (suppressed blocks included) to judge released blocks against
    the original table.

    Example (hand-computed): zip 1→a, 2→a, 3→b at level 1, * at level 2; whole table 6 rows.  At level 0 the
    blocks are zip 1 {x,x}, zip 2 {y,y}, zip 3 {x,y}; with n = 3 all are small.  Supersets at level 1:
    a = {x,x,y,y} (n=4), b = {x,y} (n=2, too small); at level 2 the table {x×3, y×3}.  Equal distance:
    zip 1 to a = ½, to the table ½; zip 3 to the table 0.  So t* = ½ and with t = 0.4 zips 1, 2 fail.

    >>> from veil.counts import NodeCounts, SensitiveDomain
    >>> from veil.hierarchy import Hierarchy
    >>> zips = Hierarchy("zip", (1, 2, 3), (("a", "a", "b"), ("*", "*", "*")))
    >>> dom = SensitiveDomain("s", np.array(["x", "y"], dtype=object), np.array([3, 3]))
    >>> nc = NodeCounts.from_cells(("zip",), (0,), [[0], [1], [2], [2]], [[0], [1], [0], [1]],
    ...                            np.array([2, 2, 1, 1]), (3,), (dom,), generalizers=(zips,))
    >>> m = NTCloseness(n=3, t=0.4, distance="equal", attribute="s")
    >>> v = m.check(nc)
    >>> v.passed.tolist(), v.achieved, m.levels(nc).tolist()
    ([False, False, True], 0.5, [0.5, 0.5, 0.0])
    """

    type: ClassVar[str]  # set by the registration above
    reference: ClassVar[Reference] = Reference(
        achieved="smallest t; `hierarchy` as for t-closeness",
        sample={"n": 5, "t": 0.2, "distance": "equal", "attribute": "s"},
    )
    n: int
    t: float
    distance: str
    attribute: str
    hierarchy: str | HierarchySpec | None = None  # a CSV path, or a spec: { table = ... } read by the run
    delimiter: str = ";"
    where: str = "nt-closeness"
    _cache: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    @classmethod
    def from_params(cls, p: Params) -> NTCloseness:
        """The model of a ``[[models]]`` table."""
        n = p.integer("n", minimum=1)
        t = p.number("t", minimum=0, maximum=1)
        distance = p.text("distance", choices=DISTANCES)
        hierarchy, delimiter = hierarchy_param(p)
        return cls(
            n=n,
            t=t,
            distance=distance,
            attribute=p.attribute(),
            hierarchy=hierarchy,
            delimiter=delimiter,
            where=p.where,
        )

    def __post_init__(self) -> None:
        whole(self.where, "n", self.n, 1)
        number(self.where, "t", self.t, minimum=0, maximum=1)
        _check_distance(self.where, self.distance, self.hierarchy)

    @property
    def properties(self) -> Properties:
        return Properties(
            False,
            False,
            Needs.SUPERSETS,
            "not monotone over the lattice: a small block may pass through a close superset at a "
            "node that is not above a more general node, where its merged block has only the "
            "whole table left (tests/models/test_closeness.py::test_nt_not_monotone_on_lattice)",
            achieved="max",
        )

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

    def superset_distances(
        self, counts: NodeCounts, m: Sequence[int | None], idx: np.ndarray, emd: Distance
    ) -> np.ndarray:
        """EMD of blocks ``idx`` to their superset at node ``m`` (``inf`` where it has fewer than n rows), exact
        on the knife-edge at t.  Only the supersets that contain a block of ``idx`` are aggregated."""
        bc = counts.blocks(self.attribute)
        _, up = counts.superset_index(m)
        size = np.bincount(up, weights=bc.sizes, minlength=int(up.max()) + 1 if len(up) else 0)
        out = np.full(len(idx), np.inf)
        large = size[up[idx]] >= self.n
        if not large.any():
            return out
        wanted, ref_of = np.unique(up[idx[large]], return_inverse=True)
        rank = np.full(len(size), -1, dtype=np.int64)
        rank[wanted] = np.arange(len(wanted))
        cell_ref = rank[up][bc.block_of_cell]
        keep = cell_ref >= 0
        refs = BlockCounts.from_cells(cell_ref[keep], bc.codes[keep], bc.counts[keep], len(wanted), bc.domain)
        out[large] = distances_to(emd, bc.take(idx[large]), refs, ref_of.reshape(-1), self.t)[1]
        return out

    def _scan(self, counts: NodeCounts, early: bool) -> tuple[np.ndarray, np.ndarray]:
        """(passed, level) per block; ``early`` stops once every small block found a superset within t (the
        levels are then upper bounds)."""
        bc = counts.blocks(self.attribute)
        emd = _Distance.resolve(self, bc.domain)
        passed = bc.sizes >= self.n
        best = np.where(passed, 0.0, np.inf)
        todo = np.flatnonzero(~passed)
        for m in self.nodes_above(counts) if len(todo) else []:
            d = self.superset_distances(counts, m, todo, emd)
            best[todo] = np.minimum(best[todo], d)
            ok = d <= self.t  # refined on the knife-edge: agrees with the exact comparison
            passed[todo[ok]] = True
            if early:
                todo = todo[~ok]
                if len(todo) == 0:
                    break
        return passed, best

    def levels(self, counts: NodeCounts) -> np.ndarray:
        """Per block, the smallest t for which it passes given its supersets in ``counts`` (0: ``n(E) >= n``;
        ``inf``: no superset has n rows)."""
        return self._scan(counts, early=False)[1]

    def check(self, counts: NodeCounts) -> Verdict:
        passed, _ = self._scan(counts, early=True)
        return _LazyVerdict(passed, compute=lambda: achieved(self.levels(counts), "max"))

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        _Distance.resolve(self, domain_of(domains, self.attribute, self.where))

    def describe(self) -> str:
        return f"(n,t)-closeness (n={self.n}, t={fmt(self.t)}, {self.distance} distance) on {self.attribute}"
