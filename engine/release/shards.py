"""The series step in shards (docs/series.md §6): a partition of the blocks that no comparison crosses, so that
a later version's cells and the ledger's are read, compared and recorded a shard at a time.  Pure: no SQL.

Two versions are compared per class of their common generalization ``G`` (docs/series.md §2).  When every
version of the ledger and the candidate publish the same quasi-identifiers with the same hierarchies, ``G``
of every pair lies below ``top``, the componentwise maximum of all their nodes, so each class of every pair
falls inside one block of ``top``: a shard is a set of ``top``'s blocks (a hash of their codes), and each shard's
series step — differences, holding back, padding, the blocks' own models — is the one the whole version would
run on those blocks.  That last part needs models that judge a block alone: a model that reads natural
supersets ((n,t)-closeness) compares it with blocks of other shards, so then there is one shard.  Hierarchies
that changed between versions line up by the union of their values (``alignment.attribute_classes``), which a
hash of codes does not follow: one shard too.

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

from veil.release.alignment import Layout

MIX = np.uint64(0x9E3779B97F4A7C15)  # odd: multiplying by it permutes the 64-bit integers


@dataclass(frozen=True)
class Sharding:
    """``count`` shards of the blocks of ``top``; ``codes[i]``: quasi-identifier ``i``'s label (at any level a
    version uses) → its code at ``top[i]``."""

    count: int
    top: tuple[int, ...]
    codes: tuple[dict[str, int], ...]

    @classmethod
    def of(cls, layouts: Sequence[Layout], cells: int, per_shard: int) -> Sharding | None:
        """The sharding of versions ``layouts`` (the ledger's and the candidate's) holding ``cells`` cells in all,
        about ``per_shard`` a shard; ``None`` when the layouts do not allow one (module docstring)."""
        first = layouts[0]
        if any(v.attributes != first.attributes or [c.digest for c in v.chains] != [c.digest for c in first.chains]
               for v in layouts):
            return None
        top = tuple(max(v.node[i] for v in layouts) for i in range(len(first.chains)))
        codes = []
        for i, chain in enumerate(first.chains):
            target = min(top[i], chain.height)
            names = {label: k for k, label in enumerate(dict.fromkeys(chain.column(target)))}
            code: dict[str, int] = {}
            for level in sorted({min(v.node[i], chain.height) for v in layouts}):
                for label, up in chain.up(level, target).items():
                    if code.setdefault(label, names[up]) != names[up]:
                        return None  # one label at two levels, under two blocks of ``top``: not a partition
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
