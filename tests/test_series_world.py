"""A small world for the series guarantee, in memory: people with (zip, age, disease[, ward]), versions
published at any node of the 3×3 lattice, and an *attacker* written independently of ``veil.release``: he
keeps every published version as rows of labels, rolls two versions up to their common node with the
hierarchies, and diffs the multisets per block (docs/series-ledger.md §1).  Used by tests/test_series.py; the few
tests here check the world itself."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from veil.release import series
from veil.release.alignment import Chain, Dictionary, Layout
from veil.release.differences import Judge
from veil.models import DistinctLDiversity, KAnonymity

ZIPS = {"a1": ("a*", "*"), "a2": ("a*", "*"), "b1": ("b*", "*"), "b2": ("b*", "*")}
AGES = {"20": ("<30", "*"), "25": ("<30", "*"), "30": (">=30", "*"), "35": (">=30", "*")}
DISEASES = ("flu", "cold", "hiv", "cancer")
WARDS = ("w1", "w2")
NODES = [(a, b) for a in range(3) for b in range(3)]

Person = tuple[str, str, str, str]  # zip, age, disease, ward


def label(chain: dict[str, tuple[str, ...]], value: str, level: int) -> str:
    return value if level == 0 else chain[value][level - 1]


def up(chain: dict[str, tuple[str, ...]], text: str, level: int, target: int) -> str:
    """The attacker's roll-up: any value carrying ``text`` at ``level``, read at ``target``."""
    for value in chain:
        if label(chain, value, level) == text:
            return label(chain, value, target)
    raise KeyError(text)


@dataclass
class Published:
    """What the attacker keeps of one version: its node and its rows (labels and published values)."""

    node: tuple[int, int]
    rows: list[tuple[str, ...]]


def attack(a: Published, b: Published, k: int, l: int, keep: bool) -> list[tuple[str, int]]:
    """Failing differences between two published versions, as (side, rows), at their common node."""
    g = (max(a.node[0], b.node[0]), max(a.node[1], b.node[1]))

    def rolled(p: Published, width: int) -> Counter:
        return Counter(
            (up(ZIPS, r[0], p.node[0], g[0]), up(AGES, r[1], p.node[1], g[1]), *r[2 : 2 + width]) for r in p.rows
        )

    out = []
    for width in (2, 1) if keep else (1,):  # full rows, and the _blocks view (disease only)
        ra, rb = rolled(a, width), rolled(b, width)
        for side, diff in (("added", rb - ra), ("removed", ra - rb)):
            blocks: dict[tuple[str, str], Counter] = {}
            for key, n in diff.items():
                blocks.setdefault(key[:2], Counter())[key[2]] += n
            for hist in blocks.values():
                if sum(hist.values()) < k or len(hist) < l:
                    out.append((side, sum(hist.values())))
    return out


@dataclass
class World:
    k: int = 2
    l: int = 2
    keep: bool = False
    dictionary: Dictionary = field(default_factory=Dictionary)
    versions: list[series.Version] = field(default_factory=list)
    published: list[Published] = field(default_factory=list)

    @property
    def models(self) -> tuple:
        return (KAnonymity(k=self.k), DistinctLDiversity(l=self.l, attribute="disease"))

    def layout(self, node: tuple[int, int]) -> Layout:
        return Layout(
            node, (Chain.of("zip", ZIPS), Chain.of("age", AGES)), ("disease",), ("ward",) if self.keep else ()
        )

    def candidate(self, people: Sequence[Person], node: tuple[int, int]) -> series.Version:
        cells: Counter = Counter()
        for z, a, d, w in people:
            block = self.dictionary.add_block((label(ZIPS, z, node[0]), label(AGES, a, node[1])))
            value = self.dictionary.add_value({"disease": d, "ward": w} if self.keep else {"disease": d})
            cells[(block, value)] += 1
        keys = sorted(cells)
        totals = {"disease": dict(Counter(p[2] for p in people))}
        return series.Version(
            len(self.versions) + 1,
            self.layout(node),
            np.asarray([b for b, _ in keys], dtype=np.int64),
            np.asarray([v for _, v in keys], dtype=np.int64),
            np.asarray([cells[x] for x in keys], dtype=np.int64),
            totals,
        )

    def judge(self) -> Judge:
        return Judge(self.models, ("disease",), {})

    def passes(self, cand: series.Version, p: np.ndarray) -> np.ndarray:
        """Per cell: its block passes k-anonymity and distinct l-diversity with ``p`` rows per cell."""
        ok_block = {}
        for b in np.unique(cand.blocks).tolist():
            mine = (cand.blocks == b) & (p > 0)
            diseases = {self.dictionary.values[v]["disease"] for v in cand.values[mine].tolist()}
            ok_block[b] = int(p[mine].sum()) >= self.k and len(diseases) >= self.l
        return np.asarray([ok_block[b] for b in cand.blocks.tolist()], dtype=bool)

    def before(self, cand: series.Version) -> np.ndarray:
        last = self.versions[-1] if self.versions else None
        if last is None or last.layout.node != cand.layout.node:
            return np.zeros(len(cand.counts), dtype=np.int64)
        old = {(b, v): n for b, v, n in zip(last.blocks.tolist(), last.values.tolist(), last.counts.tolist())}
        return np.minimum([old.get((b, v), 0) for b, v in zip(cand.blocks.tolist(), cand.values.tolist())], cand.counts)

    def release(
        self, people: Sequence[Person], node: tuple[int, int], policy: str = "refuse"
    ) -> tuple[series.Version, np.ndarray, list[series.Exposure]]:
        """Publish ``people`` at ``node``: blocks failing the models are suppressed (as the search would);
        returns the candidate, rows published per cell, and the exposures left (refuse: nothing published)."""
        cand = self.candidate(people, node)
        start = np.where(self.passes(cand, cand.counts), cand.counts, 0)
        exposures: list[series.Exposure] = []
        published = start
        if policy == "refuse" and self.versions:
            exposures = series.check(
                self.dictionary,
                self.judge(),
                series.Version(cand.number, cand.layout, cand.blocks, cand.values, start, cand.totals),
                self.versions,
            )
            if exposures:
                return cand, published, exposures
        self.versions.append(
            series.Version(cand.number, cand.layout, cand.blocks, cand.values, published, cand.totals, policy != "off")
        )
        rows = []
        for b, v, n in zip(cand.blocks.tolist(), cand.values.tolist(), published.tolist()):
            value = self.dictionary.values[v]
            rows += [(*self.dictionary.blocks[b], value["disease"], *([value["ward"]] if self.keep else []))] * n
        self.published.append(Published(node, rows))
        return cand, published, exposures

    def exposed_pairs(self) -> list[tuple[int, int, list[tuple[str, int]]]]:
        out = []
        for j in range(len(self.published)):
            for i in range(j):
                bad = attack(self.published[i], self.published[j], self.k, self.l, self.keep)
                if bad:
                    out.append((i + 1, j + 1, bad))
        return out


def test_the_attacker_sees_a_newcomer_at_one_node() -> None:
    base = [
        ("a1", "20", "flu", "w1"),
        ("a2", "25", "cold", "w1"),
        ("b1", "30", "hiv", "w2"),
        ("b2", "35", "cancer", "w2"),
    ]
    a = Published((1, 1), [("a*", "<30", "flu"), ("a*", "<30", "cold")])
    b = Published((1, 1), [("a*", "<30", "flu"), ("a*", "<30", "cold"), ("a*", "<30", "hiv")])
    assert attack(a, b, 2, 2, False) == [("added", 1)]
    assert attack(a, a, 2, 2, False) == []
    assert label(ZIPS, base[0][0], 2) == "*" and up(AGES, "<30", 1, 2) == "*"
