"""How a reader lines up two published versions: the common generalization of their blocks and the columns
both publish (docs/series-ledger.md §2).  Pure: no SQL.

A version labels each quasi-identifier at its node's level with its own hierarchy.  Two versions are
compared on the finest partition of people that both labelings determine.  With one hierarchy this is the
level ``max(la, lb)`` (the componentwise maximum of the nodes, ``G``); in general each side is first rolled
up to that level in its own hierarchy, then two labels are one class when they are the same string or cover
a common value (union-find), the conservative reading of a hierarchy that changed between versions.  A
quasi-identifier one version does not publish is ``*`` for both.

>>> a = Chain.of("age", {"21": ("<30", "*"), "35": ("<40", "*")})
>>> left, right = attribute_classes(a, 0, a, 1)
>>> left["21"] == right["<30"], left["35"] == right["<30"]
(True, False)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from json.encoder import encode_basestring

import numpy as np


@dataclass(frozen=True, eq=False)
class Chain:
    """One attribute's hierarchy as published: leaf keys (canonical text) and ``labels[j-1][i]``, the level-j
    label of leaf i."""

    attribute: str
    leaves: tuple[str, ...]
    labels: tuple[tuple[str, ...], ...]

    @classmethod
    def of(cls, attribute: str, chains: Mapping[str, Sequence[str]]) -> Chain:
        """From ``{leaf: (level-1 label, level-2 label, ...)}``."""
        leaves = tuple(chains)
        height = len(next(iter(chains.values()))) if chains else 0
        return cls(attribute, leaves, tuple(tuple(str(chains[x][j]) for x in leaves) for j in range(height)))

    @property
    def height(self) -> int:
        return len(self.labels)

    @cached_property
    def digest(self) -> str:
        return hashlib.sha256(self.definition().encode()).hexdigest()

    def definition(self) -> str:
        """The JSON the ledger stores (docs/series-ledger.md §4)."""
        return json.dumps(
            {"attribute": self.attribute, "leaves": list(self.leaves), "labels": [list(c) for c in self.labels]},
            ensure_ascii=False,
            separators=(",", ":"),
        )

    @classmethod
    def parse(cls, text: str) -> Chain:
        data = json.loads(text)
        return cls(data["attribute"], tuple(data["leaves"]), tuple(tuple(c) for c in data["labels"]))

    def column(self, level: int) -> Sequence[str]:
        """Each leaf's label at ``level`` (level 0: the leaf itself)."""
        return self.leaves if level == 0 else self.labels[level - 1]

    def up(self, level: int, target: int) -> dict[str, str]:
        """Label at ``level`` → its label at ``target >= level``."""
        return dict(zip(self.column(level), self.column(target)))


class UnionFind:
    def __init__(self) -> None:
        self.parent: dict[object, object] = {}

    def find(self, x: object) -> object:
        self.parent.setdefault(x, x)
        root = x
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[x] != root:
            self.parent[x], x = root, self.parent[x]
        return root

    def union(self, a: object, b: object) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


def attribute_classes(a: Chain, la: int, b: Chain, lb: int) -> tuple[dict[str, int], dict[str, int]]:
    """Classes of the common coarsening of ``a`` at level ``la`` and ``b`` at level ``lb``: each side's label
    → class number (docs/series-ledger.md §2)."""
    g = max(la, lb)
    ga, gb = min(g, a.height), min(g, b.height)
    up_a, up_b = a.up(la, ga), b.up(lb, gb)
    if a.digest == b.digest and ga == gb:
        names = {label: k for k, label in enumerate(dict.fromkeys(a.column(ga)))}
        return {x: names[y] for x, y in up_a.items()}, {x: names[y] for x, y in up_b.items()}
    uf = UnionFind()
    for label in set(up_a.values()):
        uf.find(("a", label))
    for label in set(up_b.values()):
        uf.find(("b", label))
        if ga == gb and ("a", label) in uf.parent:
            uf.union(("a", label), ("b", label))
    at_b = dict(zip(b.leaves, b.column(gb)))
    for leaf, label in zip(a.leaves, a.column(ga)):
        other = at_b.get(leaf)
        if other is not None:
            uf.union(("a", label), ("b", other))
    roots: dict[object, int] = {}
    left = {x: roots.setdefault(uf.find(("a", y)), len(roots)) for x, y in up_a.items()}
    right = {x: roots.setdefault(uf.find(("b", y)), len(roots)) for x, y in up_b.items()}
    return left, right


@dataclass(frozen=True, eq=False)
class Layout:
    """How one version publishes: its node, quasi-identifiers with their hierarchies, and the other columns."""

    node: tuple[int, ...]
    chains: tuple[Chain, ...]
    sensitive: tuple[str, ...]
    keep: tuple[str, ...] = ()

    @property
    def attributes(self) -> tuple[str, ...]:
        return tuple(c.attribute for c in self.chains)

    @property
    def columns(self) -> tuple[str, ...]:
        return (*self.sensitive, *self.keep)

    def same_as(self, other: Layout) -> bool:
        """Same node, hierarchies and columns: blocks and values mean the same in both."""
        return (
            self.node == other.node
            and self.columns == other.columns
            and [c.digest for c in self.chains] == [c.digest for c in other.chains]
        )


@dataclass(frozen=True, eq=False)
class Projection:
    """The columns two versions are compared on, and each side's value id → projected value id."""

    name: str  # "rows" (every published column both share) or "blocks" (the _blocks view)
    columns: tuple[str, ...]
    ids: np.ndarray  # value id → projected value id (−1: the value lacks a column)
    values: tuple[dict[str, str | None], ...]  # projected value id → column → canonical text


@dataclass(frozen=True, eq=False)
class Alignment:
    """Two versions lined up: each side's block id → class (−1: not used), and the projections."""

    left: np.ndarray
    right: np.ndarray
    classes: int
    projections: tuple[Projection, ...]
    compared_at: tuple[int, ...]  # max of the two nodes per attribute (informative when hierarchies differ)


@dataclass
class Dictionary:
    """The ids the ledger gives block labels and value tuples (shared by every version of a release)."""

    blocks: list[tuple[str, ...]] = field(default_factory=list)
    values: list[dict[str, str | None]] = field(default_factory=list)
    value_keys: list[str] = field(default_factory=list)  # each value's :meth:`value_key`, what the ledger stores
    _block_ids: dict[tuple[str, ...], int] = field(default_factory=dict)
    _value_ids: dict[str, int] = field(default_factory=dict)
    _projections: dict[tuple[tuple[str, ...], int], tuple[np.ndarray, tuple[dict[str, str | None], ...]]] = field(
        default_factory=dict
    )

    @staticmethod
    def value_key(value: Mapping[str, str | None]) -> str:
        """The ledger's text of a value tuple: its JSON object, keys sorted, no spaces — written here from the
        JSON text of each string (``json.encoder.encode_basestring``), a third of ``json.dumps``'s time, which
        a first version spends once per distinct value (51,039 in the 10M census).

        >>> Dictionary.value_key({"s": "flü", "a": None})
        '{"a":null,"s":"flü"}'
        """
        if not all(isinstance(x, str) or x is None for x in value.values()):
            return json.dumps(dict(sorted(value.items())), ensure_ascii=False, separators=(",", ":"))
        return (
            "{"
            + ",".join(
                f"{encode_basestring(c)}:{'null' if x is None else encode_basestring(x)}"
                for c, x in sorted(value.items())
            )
            + "}"
        )

    def add_block(self, labels: tuple[str, ...], ident: int | None = None) -> int:
        found = self._block_ids.get(labels)
        if found is None:
            found = len(self.blocks) if ident is None else ident
            self._block_ids[labels] = found
            self._grow(self.blocks, found, labels)
        return found

    def add_value(self, value: Mapping[str, str | None], ident: int | None = None, key: str | None = None) -> int:
        """The id of ``value`` (``key``: its :meth:`value_key` when the caller has it)."""
        key = self.value_key(value) if key is None else key
        found = self._value_ids.get(key)
        if found is None:
            found = len(self.values) if ident is None else ident
            self._value_ids[key] = found
            self._grow(self.values, found, dict(value))
            self._grow(self.value_keys, found, key)
        return found

    @staticmethod
    def _grow(items: list, index: int, item: object) -> None:
        while len(items) <= index:
            items.append(None)
        items[index] = item


def _block_classes(
    dictionary: Dictionary,
    layout: Layout,
    used: np.ndarray,
    names: Sequence[str],
    per_attribute: Sequence[dict[str, int] | None],
) -> list[tuple[int, ...]]:
    position = {a: i for i, a in enumerate(layout.attributes)}
    keys = []
    for block in used.tolist():
        labels = dictionary.blocks[block]
        keys.append(tuple(0 if m is None else m[labels[position[a]]] for a, m in zip(names, per_attribute)))
    return keys


def align(dictionary: Dictionary, a: Layout, a_blocks: np.ndarray, b: Layout, b_blocks: np.ndarray) -> Alignment:
    """Line up version ``a`` (blocks ``a_blocks``) with version ``b``: docs/series-ledger.md §2."""
    names = list(dict.fromkeys([*b.attributes, *a.attributes]))
    maps_a: list[dict[str, int] | None] = []
    maps_b: list[dict[str, int] | None] = []
    at = []
    for name in names:
        if name in a.attributes and name in b.attributes:
            i, j = a.attributes.index(name), b.attributes.index(name)
            classes_a, classes_b = attribute_classes(a.chains[i], a.node[i], b.chains[j], b.node[j])
            maps_a.append(classes_a)
            maps_b.append(classes_b)
            at.append(max(a.node[i], b.node[j]))
        else:
            maps_a.append(None)
            maps_b.append(None)
            at.append(-1)
    used_a, used_b = np.unique(a_blocks), np.unique(b_blocks)
    keys_a = _block_classes(dictionary, a, used_a, names, maps_a)
    keys_b = _block_classes(dictionary, b, used_b, names, maps_b)
    ids: dict[tuple[int, ...], int] = {}
    size = len(dictionary.blocks)
    left = np.full(size, -1, dtype=np.int32)  # narrow: indexed by every cell of a version
    right = np.full(size, -1, dtype=np.int32)
    left[used_a] = [ids.setdefault(k, len(ids)) for k in keys_a]
    right[used_b] = [ids.setdefault(k, len(ids)) for k in keys_b]
    return Alignment(left, right, len(ids), projections(dictionary, a, b), tuple(at))


def _project(dictionary: Dictionary, columns: tuple[str, ...]) -> tuple[np.ndarray, tuple[dict[str, str | None], ...]]:
    cached = dictionary._projections.get((columns, len(dictionary.values)))
    if cached is not None:
        return cached
    ids: dict[tuple[str | None, ...], int] = {}
    out = np.full(len(dictionary.values), -1, dtype=np.int32)
    values: list[dict[str, str | None]] = []
    for k, value in enumerate(dictionary.values):
        if value is None or any(c not in value for c in columns):
            continue
        key = tuple(value[c] for c in columns)
        if key not in ids:
            ids[key] = len(ids)
            values.append(dict(zip(columns, key)))
        out[k] = ids[key]
    dictionary._projections[(columns, len(dictionary.values))] = (out, tuple(values))
    return out, tuple(values)


def projections(dictionary: Dictionary, a: Layout, b: Layout) -> tuple[Projection, ...]:
    """The full published tuple both versions share, and — when a version publishes keep_columns — the
    ``_blocks`` view's (sensitive columns only), which can cancel differently (docs/series-ledger.md §3)."""
    shared = tuple(sorted(set(a.columns) & set(b.columns)))
    out = [Projection("rows", shared, *_project(dictionary, shared))]
    if a.keep or b.keep:
        sens = tuple(sorted(set(a.sensitive) & set(b.sensitive)))
        out.append(Projection("blocks", sens, *_project(dictionary, sens)))
    return tuple(out)
