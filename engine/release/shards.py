"""The series step in shards (docs/series-ledger.md §6): a partition of the blocks that no comparison crosses, so that
a later version's cells and the ledger's are read, compared and recorded a shard at a time.  Pure: no SQL.

Two versions are compared per class of their common generalization ``G`` (docs/series-ledger.md §2).  When every
version of the ledger and the candidate publish the same quasi-identifiers, ``G`` of every pair lies below
``top``, the componentwise maximum of all their nodes.  With one hierarchy each class of every pair then falls
inside one block of ``top``.  Hierarchies that changed between versions (a source's new values, a cut moved)
line up by union-find (``alignment.attribute_classes``: labels that share a value, or a label at one level):
here the labels at ``top`` of every version's hierarchy are joined by the same two rules, so each class of
every pair, at any level up to ``top``, falls inside one of those joined classes.  A shard is a set of them
(a hash of their numbers), and each shard's series step — differences, holding back, padding, the blocks' own
models — is the one the whole version would run on those blocks.  That last part needs models that judge a
block alone: a model that reads natural supersets ((n,t)-closeness) compares it with blocks of other shards,
so then the caller runs one pass.  So does a label that would belong to two classes (used at two levels with
other contents), or a quasi-identifier one version lacks.

Example: ages published at level 0 by version 1 and level 1 by the candidate share the shard of their level-1
label, whichever level a block is labelled at:

>>> from veil.release.alignment import Chain, Layout
>>> age = Chain.of("age", {"21": ("<30",), "25": ("<30",), "35": ("<40",)})
>>> plan = Sharding.of([Layout((0,), (age,), ("s",)), Layout((1,), (age,), ("s",))], 30, 10)
>>> plan.top, plan.count
((1,), 3)
>>> bool(plan.of_labels([("21",)])[0] == plan.of_labels([("<30",)])[0] == plan.of_labels([("25",)])[0])
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from veil.release.alignment import Chain, Layout, UnionFind

MIX = np.uint64(0x9E3779B97F4A7C15)  # odd: multiplying by it permutes the 64-bit integers


@dataclass(frozen=True)
class Sharding:
    """``count`` shards of the classes at ``top``; ``codes[i]``: quasi-identifier ``i``'s label (at any level a
    version uses) → the number of its class at ``top[i]``."""

    count: int
    top: tuple[int, ...]
    codes: tuple[dict[str, int], ...]

    @classmethod
    def of(cls, layouts: Sequence[Layout], cells: int, per_shard: int) -> Sharding | None:
        """The sharding of versions ``layouts`` (the ledger's and the candidate's) holding ``cells`` cells in all,
        about ``per_shard`` a shard; ``None`` when the layouts do not allow one (module docstring)."""
        first = layouts[0]
        if any(v.attributes != first.attributes for v in layouts):
            return None
        top = tuple(max(v.node[i] for v in layouts) for i in range(len(first.chains)))
        codes = []
        for i in range(len(first.chains)):
            code = _top_classes([(v.chains[i], v.node[i]) for v in layouts], top[i])
            if code is None:
                return None
            codes.append(code)
        return cls(max(1, math.ceil(cells / max(per_shard, 1))), top, tuple(codes))

    def of_codes(self, top_codes: np.ndarray) -> np.ndarray:
        """The shard of each row of ``top_codes`` (blocks × quasi-identifiers, codes at ``top``)."""
        h = np.zeros(len(top_codes), dtype=np.uint64)
        with np.errstate(over="ignore"):
            for i in range(top_codes.shape[1]):
                h = (h ^ top_codes[:, i].astype(np.uint64)) * MIX
                h ^= h >> np.uint64(29)
        return (h % np.uint64(self.count)).astype(np.int32)

    def of_blocks(self, text: Sequence[Sequence[str]], codes: np.ndarray) -> np.ndarray:
        """The shard of each row of ``codes`` (blocks × quasi-identifiers, codes at one node whose labels are
        ``text[i][code]``)."""
        top = np.zeros(codes.shape, dtype=np.int64)
        for i, code in enumerate(self.codes):
            top[:, i] = np.asarray([code[label] for label in text[i]], dtype=np.int64)[codes[:, i]]
        return self.of_codes(top)

    def of_labels(self, blocks: Sequence[Sequence[str]]) -> np.ndarray:
        """The shard of each block given by its labels (one per quasi-identifier, at its version's level)."""
        d = len(self.codes)
        top = np.zeros((len(blocks), d), dtype=np.int64)
        for i, code in enumerate(self.codes):
            top[:, i] = [code[b[i]] for b in blocks]
        return self.of_codes(top)


def _top_classes(used: Sequence[tuple[Chain, int]], top: int) -> dict[str, int] | None:
    """One quasi-identifier's labels, at the levels its versions use, → their class at ``top``: the labels at
    ``top`` of every version's hierarchy, joined where two hierarchies put a common value under them or share
    a label at some level (what ``alignment.attribute_classes`` joins for any pair, at any level up to ``top``).
    ``None`` when one label would belong to two classes (a label used at two levels with other contents)."""
    chains = list({c.digest: c for c, _ in used}.values())
    uf = UnionFind()
    for c in chains:
        target = min(top, c.height)
        for leaf, label in zip(c.leaves, c.column(target)):
            uf.union(("leaf", leaf), (c.digest, label))
        for level in range(1, target + 1):
            for label, up in c.up(level, target).items():
                uf.union(("label", level, label), (c.digest, up))
    roots: dict[object, int] = {}
    code: dict[str, int] = {}
    for c, level in used:
        target = min(top, c.height)
        for label, up in c.up(min(level, c.height), target).items():
            klass = roots.setdefault(uf.find((c.digest, up)), len(roots))
            if code.setdefault(label, klass) != klass:
                return None
    return code
