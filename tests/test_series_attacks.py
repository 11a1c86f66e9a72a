"""The three attacks of issue 34 on a cohort series, on DuckDB and PostgreSQL, by a reader written from
docs/series.md §1–3: he keeps every version, knows everyone's quasi-identifiers and who joined and left on which
night, and knows the mechanism — so he attributes every change of a block to the people it must be: a cohort
entering is *everyone* who joined the block since its last cohort entered and is still there (§2: all waiting
rows form the cohort together); stand-ins leaving are the people of one cohort who left since its stand-ins last
left.  Per person he intersects the values of every batch he must be in, and of the version his cohort
entered in; one value left singles him out.  He also replays the decisions (``veil.release.cohorts``) under every
hypothesis about a person's value, with the coins unknown; reads ``<name>_releases`` for held rows; and tries a
node change, which must start a new series explicitly and be reported.

Against the mechanism this replaced (``defer``), the same nights gave this reader's replay of the padding rule
the leavers' values (issue 34: 469 of 750 on the census); ``bench/bench_series.py`` measures the census here.
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import sqlalchemy as sa

from veil import config as cfg
from veil.models import DistinctLDiversity, KAnonymity
from veil.release import exposure, init, release
from veil.release.cohorts import Checks, Cohort, decide
from veil.release.differences import Judge
from veil.release.memberstore import current
from tests.conftest import Db, run_veil
from tests.test_series_db import BODY, cleanup  # noqa: F401 (fixture)
from tests.test_series_world import AGES, ZIPS, label, up

DISEASES = ("flu", "cold", "hiv", "cancer")
COLUMNS = {"id": sa.Integer, "zip": sa.String, "age": sa.Integer, "disease": sa.String}


@dataclass
class World:
    """The source, as the reader knows it: everyone's quasi-identifiers and the nights they joined and left."""

    db: Db
    rng: random.Random
    people: dict[int, tuple[str, int, str]] = field(default_factory=dict)
    joined: dict[int, int] = field(default_factory=dict)
    left: dict[int, int] = field(default_factory=dict)
    next_id: int = 1

    def add(self, night: int, zip_: str, age: int, disease: str | None = None) -> None:
        self.people[self.next_id] = (zip_, age, disease or self.rng.choice(DISEASES))
        self.joined[self.next_id] = night
        self.next_id += 1

    def night(
        self, n: int, leave: int, join: list[tuple[str, int]], where: tuple[str, int] | None = None, successors: int = 0
    ) -> None:
        """``leave`` people go (from ``where`` when it has enough), ``join`` arrive; the first ``successors``
        leavers are followed by a newcomer with their very row (the same block and disease: a takeover)."""
        present = sorted(i for i in self.people if i not in self.left)
        near = [i for i in present if where is not None and self.people[i][:2] == where]
        gone = self.rng.sample(near if len(near) >= leave else present, leave)
        for i in gone:
            self.left[i] = n
        for zip_, age in join:
            self.add(n, zip_, age)
        for i in gone[:successors]:
            self.add(n, self.people[i][0], self.people[i][1], self.people[i][2])
        rows = [(i, *p) for i, p in self.people.items() if i not in self.left]
        self.db.replace_rows("people", COLUMNS, rows)  # Spark's tables have no DELETE: overwritten there


def setup(db: Db, k: int = 3, extra: str = "", capped: bool = False) -> tuple[World, Path, str, str]:
    """16 blocks of 8 people at the world's finest node; ``series_standing = 0`` keeps them the first version's
    blocks (``capped``: Veil's default, which caps that version at 8 blocks: docs/series.md §9.5)."""
    extra = extra if capped else f"series_standing = 0\n{extra}"
    out = "published" if db.kind == "duckdb" else f"{db.schema}_pub"
    cat = "veil" if db.kind == "duckdb" else f"{db.schema}_cat"
    if db.kind == "postgres":
        db.cleanup_schemas = [out, cat]  # type: ignore[attr-defined]
    (db.workdir / "zip.csv").write_text("".join(f"{z};{';'.join(up)}\n" for z, up in ZIPS.items()))
    (db.workdir / "age.csv").write_text("".join(f"{a};{';'.join(up)}\n" for a, up in AGES.items()))
    world = World(db, random.Random(34))
    for z in ZIPS:
        for a in AGES:
            for _ in range(8):
                world.add(0, z, int(a))
    db.create_table("people", COLUMNS, [(i, *p) for i, p in world.people.items()])
    body = BODY.format(
        zip=db.workdir / "zip.csv", age=db.workdir / "age.csv", out=out, cat=cat, policy="cohort", extra=extra
    )
    path = db.write_config("people", body.replace("k = 2\n", f"k = {k}\n"))
    init(cfg.load(path))
    return world, path, out, cat


def run_nights(
    world: World, path: Path, nights: int, enough: Callable[[list[Any]], bool] = lambda _: True, most: int = 0
) -> list[Any]:
    """Version 1, then ``nights`` nights — and more, up to ``most``, until ``enough`` of the outcomes: three
    people leave and four join, mostly from and into two blocks."""
    outcomes = [release(cfg.load(path))]
    n = 0
    while n < nights or (n < most and not enough(outcomes)):
        n += 1
        hot = [("a1", 20), ("b2", 35)][n % 2]
        join = [hot] * 3 + [(world.rng.choice(list(ZIPS)), int(world.rng.choice(list(AGES))))]
        world.night(n, 3, join, [("a2", 25), ("b1", 30)][n % 2], successors=int(n % 3 == 0))
        outcomes.append(release(cfg.load(path)))
    return outcomes


def versions(db: Db, out: str) -> dict[int, tuple[tuple[int, ...], list[tuple[str, str, str]]]]:
    """What the reader kept: each version's node and rows (its view ``people_v<N>``, in either publication's
    layout)."""
    kept = {}
    for v, node in db.query(f'SELECT version, node FROM "{out}".people_releases ORDER BY version'):
        rows = [tuple(map(str, r)) for r in db.query(f'SELECT zip, age, disease FROM "{out}".people_v{int(v)}')]
        # a version a later run recorded (Spark, docs/spark.md §5) carries the node its series recorded, too
        assert node is not None, f"version {v} shows no node"
        kept[int(v)] = (tuple(json.loads(node)), rows)
    return kept


def members_of(db: Db, cat: str) -> str:
    """The members table of the series as its newest published version left it: the ``series_state`` row
    ``memberstore.current`` chooses (one table in place, or a table per version on Spark: docs/spark.md §7)."""
    names = [str(m) for (m,) in db.query(f"SELECT members FROM \"{cat}\".series_state WHERE name = 'people'")]
    kept = db.query(f"SELECT version FROM \"{cat}\".releases WHERE status IN ('published', 'expired')")
    chosen = current("people", names, [int(v) for (v,) in kept])
    assert chosen is not None
    return f'"{cat}".{chosen}'


def block(world: World, person: int, node: tuple[int, ...]) -> tuple[str, str]:
    zip_, age, _ = world.people[person]
    return label(ZIPS, zip_, node[0]), label(AGES, str(age), node[1])


def attribute(world: World, kept: dict[int, tuple[tuple[int, ...], list[tuple[str, str, str]]]]) -> dict[int, set[str]]:
    """The reader's inference (docs/series.md §2–3): per person, the values he can still have.  Where the node
    moved up (§2a) he reads the earlier version at the later node: the same rows, coarser, the cohorts of the
    merged blocks together."""
    nodes = [n for _v, (n, _rows) in sorted(kept.items())]
    assert all(all(a <= b for a, b in zip(x, y)) for x, y in zip(nodes, nodes[1:])), "a series' node only moves up"
    node = nodes[0]
    candidates: dict[int, set[str]] = {}
    cohorts: dict[tuple[str, str], list[list[int]]] = defaultdict(list)  # per block: cohorts (their people)
    removed: dict[int, set[int]] = defaultdict(set)  # per cohort index: people whose stand-ins left
    per_block = [
        {b: Counter(r[2] for r in rows if r[:2] == b) for b in {r[:2] for r in rows}}
        for _v, (_n, rows) in sorted(kept.items())
    ]
    first = per_block[0]
    for person in world.people:
        if world.joined[person] == 0 and block(world, person, node) in first:
            cohorts[block(world, person, node)] = cohorts[block(world, person, node)] or [[]]
            cohorts[block(world, person, node)][0].append(person)
            candidates[person] = set(first[block(world, person, node)])
    exact: set[int] = set()  # joiners the reader placed in an entering cohort for certain
    for v in range(2, len(per_block) + 1):
        before, after = per_block[v - 2], per_block[v - 1]
        night = v - 1  # version v is published on night v - 1
        if nodes[v - 1] != node:  # moved up: the earlier rows and cohorts read at the new node
            before, cohorts = moved(before, cohorts, node, nodes[v - 1])
            node = nodes[v - 1]
        for b in set(before) | set(after):
            diff = Counter(after.get(b, Counter()))
            diff.subtract(before.get(b, Counter()))
            added = {d for d, n in diff.items() if n > 0}
            gone = {d for d, n in diff.items() if n < 0}
            shown = set(before.get(b, Counter()))
            if added:  # a cohort entered: everyone waiting in the block (joined since, still there) —
                seen = {p for c in cohorts[b] for p in c}  # but for those who took a stand-in over (§2)
                waiting = [
                    p
                    for p in world.people
                    if world.joined[p] <= night
                    and p not in seen
                    and world.left.get(p, 10**9) > night
                    and block(world, p, node) == b
                ]
                cohorts[b].append(waiting)
                entered = sum(n for n in diff.values() if n > 0)
                possible = set(added) if entered == len(waiting) else set(added) | shown
                if entered == len(waiting):
                    exact.update(waiting)
                for p in waiting:
                    candidates[p] = candidates.get(p, possible) & possible
            if gone:  # stand-ins left: the people of one cohort who left since, each among them
                # a joiner of the block not placed for certain may have taken over a stand-in (§2): a departed
                # person's row may then stay, held by him, so the reader can only say "left, or still shown"
                takers = any(
                    world.joined[p] > 0 and p not in exact and block(world, p, node) == b and world.joined[p] <= night
                    for p in world.people
                )
                for i, c in enumerate(cohorts[b]):
                    departed = {p for p in c if world.left.get(p, 10**9) <= night} - removed[id(c)]
                    if departed and sum(-n for n in diff.values() if n < 0) <= len(departed):
                        possible = set(gone) | (set(after.get(b, Counter())) if takers else set())
                        for p in departed:
                            candidates[p] = candidates.get(p, possible) & possible
                        removed[id(c)] |= departed
                        break
    return candidates


def moved(
    rows: dict[tuple[str, str], Counter[str]],
    cohorts: dict[tuple[str, str], list[list[int]]],
    node: tuple[int, ...],
    target: tuple[int, ...],
) -> tuple[dict[tuple[str, str], Counter[str]], dict[tuple[str, str], list[list[int]]]]:
    """A version's per-block values and the cohorts per block, read at ``target`` above ``node``."""

    def lift(b: tuple[str, str]) -> tuple[str, str]:
        return up(ZIPS, b[0], node[0], target[0]), up(AGES, b[1], node[1], target[1])

    coarse: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    merged: dict[tuple[str, str], list[list[int]]] = defaultdict(list)
    for b, values in rows.items():
        coarse[lift(b)].update(values)
    for b, members in cohorts.items():
        merged[lift(b)].extend(members)
    return dict(coarse), merged


def attackable(outcomes: list[Any]) -> bool:
    """The reader had batches to attack: two cohorts formed and one cohort's stand-ins left after version 1.
    Whether stand-ins leave on a night is the secret's coin (§2), so a series may need a few more nights."""
    formed = sum(o.series["cohorts_formed"] for o in outcomes[1:])
    return formed >= 2 and sum(o.series["cohorts_left"] for o in outcomes[1:]) >= 1


@pytest.mark.backend
@pytest.mark.parametrize(
    "capped, extra", [(False, ""), (True, ""), (False, "series_cohort = 5\n")], ids=["finest", "capped", "cohort5"]
)
def test_no_one_is_singled_out_by_differences_intersections_or_replay(
    db: Db, cleanup, capped: bool, extra: str
) -> None:
    world, path, out, cat = setup(db, extra=f"keep_versions = 30\n{extra}", capped=capped)  # the reader keeps all
    outcomes = run_nights(world, path, 9, attackable, most=24)
    assert all(o.status == "published" for o in outcomes)
    kept = versions(db, out)
    blocks = len({(z, a) for z, a, _d in kept[min(kept)][1]})
    assert blocks == 8 if capped else blocks == 16, blocks  # the cap merged the first version's blocks
    assert len(kept) == len(outcomes)  # at one node, or moved up (§2a, §2b): the reader reads every version
    assert attackable(outcomes), [(o.series["cohorts_formed"], o.series["cohorts_left"]) for o in outcomes]
    assert sum(o.series["taken_over"] for o in outcomes[1:]) >= 2  # successors took stand-ins over
    candidates = attribute(world, kept)
    assert all(world.people[p][2] in c for p, c in candidates.items())  # the reader reasons soundly
    single = {p: c for p, c in candidates.items() if len(c) < 2}
    assert single == {}
    assert len([p for p in candidates if world.joined[p] > 0]) >= 6  # joiners were attributed and stayed hidden
    # replay: under every hypothesis about a waiting joiner's value, with the coins against it, the decisions
    # are the ones a night without batches shows — nothing a reader saw rules a hypothesis out
    judge = Judge((KAnonymity(k=3), DistinctLDiversity(attribute="disease", l=2)), ("disease",), {"disease": False})
    table = {"disease": {d: 10 for d in DISEASES}}
    tails = type("Tails", (), {"flip": lambda self, kind, key: False})()
    for hypothesis in DISEASES:
        pending = {
            "a1|20": ([{"disease": hypothesis}, {"disease": "flu"}, {"disease": "cold"}], np.ones(3, dtype=np.int64))
        }
        plan = decide(
            pending,
            [Cohort(1, ([{"disease": "flu"}], np.array([4])), ([{"disease": hypothesis}], np.array([3])))],
            Checks(judge, table, table, 3),
            tails,
        )
        assert (plan.form, plan.remove) == ([], [])


@pytest.mark.backend
def test_the_reader_singles_out_everyone_when_nothing_protects_the_series(db: Db, cleanup) -> None:
    """The same reader against ``series = "off"`` (every night the true table at the searched node): a joiner alone
    in his block's change is read off it — the attack is real, and the mechanism is what stops it."""
    world, path, out, cat = setup(db, capped=True)  # series = "off" takes no cap
    path.write_text(path.read_text().replace('series = "cohort"', 'series = "off"'))
    init(cfg.load(path))
    outcomes = [release(cfg.load(path))]
    world.night(1, 0, [("a2", 25)])
    outcomes.append(release(cfg.load(path)))
    kept = versions(db, out)
    assert kept[1][0] == kept[2][0]
    newcomer = max(world.people)
    b = block(world, newcomer, kept[1][0])
    diff = Counter(r[2] for r in kept[2][1] if r[:2] == b)
    diff.subtract(Counter(r[2] for r in kept[1][1] if r[:2] == b))
    assert [d for d, n in diff.items() if n > 0] == [world.people[newcomer][2]]  # his disease, read off


@pytest.mark.backend
def test_a_node_change_starts_a_new_series_explicitly_and_is_reported(db: Db, cleanup) -> None:
    world, path, out, cat = setup(db)
    release(cfg.load(path))
    world.night(1, 2, [("a1", 20)] * 2)
    release(cfg.load(path))
    path.write_text(path.read_text().replace("k = 3", "k = 6"))  # a publisher raises k
    world.night(2, 1, [])
    with pytest.raises(cfg.ConfigError, match="changed since its series 1 began .* --new-series"):
        release(cfg.load(path))
    assert len(versions(db, out)) == 2  # nothing published
    conf = cfg.load(path)
    assert conf.release is not None
    third = release(replace(conf, release=replace(conf.release, new_series=True)))
    assert third.series["series"] == 2 and third.series["previous_published"] > 0
    report = exposure(cfg.load(path))
    assert report["cohort"]["series"] == 2 and report["cohort"]["starts"] == [
        {"version": 3, "series": 2, "node": list(third.node), "previous_published": third.series["previous_published"]}
    ]


@pytest.mark.backend
def test_analysts_see_nothing_of_held_rows_and_an_erasure_is_recorded(db: Db, cleanup) -> None:
    world, path, out, cat = setup(db)
    outcomes = run_nights(world, path, 3)
    assert any(o.rows_deferred for o in outcomes[1:]) and any(o.series["standing_in"] for o in outcomes[1:])
    shown = db.query(f'SELECT rows_deferred FROM "{out}".people_releases')
    assert shown and all(r == (None,) for r in shown)  # the analysts' view: no count of held rows
    catalog = db.query(f"SELECT series FROM \"{cat}\".releases WHERE status = 'published' ORDER BY version")
    assert [json.loads(s)["rows_deferred"] for (s,) in catalog][1:] == [o.rows_deferred for o in outcomes[1:]]
    for o in outcomes:  # the publisher's line (never an analyst's view) says what the version holds back and shows
        assert f"{o.rows_deferred} deferred and {o.series['standing_in']} standing in by the series policy" in o.message
    standing = outcomes[-1].series["standing_in"]
    conf = cfg.load(path)
    assert conf.release is not None
    erased = release(replace(conf, release=replace(conf.release, erase_departed=True)), force=True)
    assert erased.series["erased"] == standing and erased.series["standing_in"] == 0
    assert exposure(cfg.load(path))["cohort"]["erased"] == standing


@pytest.mark.backend
def test_the_audit_reports_the_blocks_gaps_and_the_longest_wait(db: Db, cleanup) -> None:
    """Two of block (a2, 25)'s 8 people leave and one person joins (a1, 20) on night 1, one joins (b1, 30) on night
    2. With a batch of 3 neither the 2 stand-ins nor a lone joiner is a batch, so at version 3 (a2, 25) shows 8 rows
    for 6 people (+2, 2/8 of its rows), (a1, 20) and (b1, 30) one row fewer than their people (-1 each), and the
    first joiner has waited since version 2."""
    world, path, out, cat = setup(db)
    release(cfg.load(path))
    world.night(1, 2, [("a1", 20)], ("a2", 25))
    second = release(cfg.load(path))
    world.night(2, 0, [("b1", 30)])
    third = release(cfg.load(path))
    assert (second.version, third.version) == (2, 3) and third.series["standing_in"] == 2
    audit = exposure(cfg.load(path))["cohort"]
    assert audit["gaps"] == {
        "block": ["a2", "25"],
        "rows": 2,
        "rows_shown": 8,
        "share": 0.25,
        "blocks_off": 3,
        "blocks_off_beyond_batch": 0,
    }
    assert audit["longest_wait"] == 1
    over = audit["over_time"]  # 128 rows shown at every version; 2 of them stand in from version 2, 1 and 2 wait
    assert over["points"] == [[1, 128, 0, 0], [2, 128, 2, 1], [3, 128, 2, 2]]
    assert over["stale"] == {"now": round(2 / 128, 6), "most": round(2 / 128, 6), "at": 2}
    assert over["withheld"] == {"now": round(2 / 128, 6), "most": round(2 / 128, 6), "at": 3}
    said = run_veil("audit", "--series", "--config", str(path))
    assert said.returncode == 0, said.stderr
    assert "over 3 version(s): standing in 1.56% now, at most 1.56% (version 2); waiting 1.56% now" in said.stdout
    assert (
        "the largest block gap +2 row(s) (+25.0% of the 8 its block ['a2', '25'] shows); 3 block(s) off, 0 by more "
        "than the batch; the longest wait 1 version(s)" in said.stdout
    )


@pytest.mark.backend
def test_joiners_wait_for_series_cohort_rows_before_they_form_a_cohort(db: Db, cleanup) -> None:
    """``series_cohort = 5`` with a batch of 3: three joiners of block (a1, 20) are a batch but not a cohort, so
    they wait whatever tonight's coin says ("too few"); with three more the six may form one (docs/series.md §9.5)."""
    world, path, out, cat = setup(db, extra="series_cohort = 5\nseries_delay = 0\n")
    first = release(cfg.load(path))
    assert first.series["cohorts_formed"] == 16  # the first version's blocks: series_cohort does not apply
    world.night(1, 0, [("a1", 20)] * 3)
    second = release(cfg.load(path))
    assert second.series["cohorts_formed"] == 0 and second.series["waiting"]["too few"] == 3
    assert second.rows_deferred == 3
    world.night(2, 0, [("a1", 20)] * 3)
    third = release(cfg.load(path))
    assert third.series["waiting"]["too few"] == 0  # six rows: judged by the models and the coin, as any batch
    assert third.series["cohorts_formed"] + third.series["waiting"]["models"] + third.series["waiting"]["coin"] >= 1
    assert third.series["cohorts_formed"] * 6 + third.rows_deferred == 6


@pytest.mark.backend
def test_a_series_moves_up_for_its_delay_bound_and_singles_no_one_out(db: Db, cleanup) -> None:
    """With ``series_delay = 4`` the blocks of 8 rows are too small for 3 joiners to gather in 4 nights at about
    4 joiners a night into 128 rows: once the join rate is read (night 7) the series moves up, every published row
    coarser, and the same reader — reading earlier versions at the later node — still singles out no one."""
    world, path, out, cat = setup(db, extra="series_delay = 4")
    outcomes = run_nights(world, path, 9)
    assert all(o.status == "published" for o in outcomes)
    kept = versions(db, out)
    nodes = [n for _v, (n, _rows) in sorted(kept.items())]
    moves = [o for o in outcomes if o.series.get("node") == "series, moved up"]
    assert len(moves) == 1 and moves[0].version == 8, [(o.version, o.series.get("node")) for o in outcomes]
    assert "joiners in 6 nights" in moves[0].series["node_reason"]
    assert nodes[0] != nodes[-1] and all(a <= b for a, b in zip(nodes[0], nodes[-1]))
    assert set(nodes[7:]) == {tuple(moves[0].node)}
    final = nodes[-1]
    zips, ages = {label(ZIPS, z, final[0]) for z in ZIPS}, {label(AGES, a, final[1]) for a in AGES}
    assert all(z in zips and a in ages for z, a, _d in kept[max(kept)][1])  # every row relabeled at the new node
    candidates = attribute(world, kept)
    assert all(world.people[p][2] in c for p, c in candidates.items())
    assert {p: c for p, c in candidates.items() if len(c) < 2} == {}
    audit = exposure(cfg.load(path))["cohort"]
    assert audit["node"] == list(moves[0].node) and audit["starts"] == []
    assert audit["moves"] == [{"version": 8, "series": 1, "node": list(nodes[-1]), "previous_node": list(nodes[0])}]
    said = run_veil("audit", "--series", "--config", str(path))
    assert said.returncode == 0, said.stderr
    assert f"version 8 moved series 1 up from node {list(nodes[0])} to {list(nodes[-1])}" in said.stdout


@pytest.mark.backend
def test_a_bound_only_the_top_could_keep_leaves_the_node_and_says_so(db: Db, cleanup) -> None:
    """``series_delay = 1`` asks blocks of about 90 of the 128 rows: only the top holds that, one block of the 16 —
    fewer than an eighth — so the series keeps its node and each night's record says the bound cannot hold."""
    world, path, out, cat = setup(db, extra="series_delay = 1\nseries_budget = 0")  # the bound alone (§2a)
    outcomes = run_nights(world, path, 8)
    assert all(o.status == "published" for o in outcomes)
    assert len({tuple(o.node) for o in outcomes}) == 1
    said = [o.series.get("node_delay", "") for o in outcomes]
    assert all(not d for d in said[:7]) and all(d.startswith("unreachable with at least 2 blocks") for d in said[7:])


@pytest.mark.backend
def test_the_series_plan_moves_up_for_its_budget_and_singles_no_one_out(db: Db, cleanup) -> None:
    """About 4 joiners a night into 128 rows is a fast table (docs/series.md §2b): on night 7 the plan
    (``series_budget = 0.9``: this world's year ahead keeps most rows standing in at any node) moves the series up
    and asks joiners' cohorts for more than a batch of 3; every cohort formed after holds at least what its night
    asked, and the reader of the attacks above still singles out no one."""
    world, path, out, cat = setup(db, extra="series_budget = 0.9\nseries_delay = 30\nkeep_versions = 40")
    outcomes = run_nights(world, path, 7)
    formed: dict[int, list[int]] = {}
    for n in range(8, 40):  # nights like run_nights', each followed by the sizes of the cohorts it formed
        world.night(n, 3, [("a1", 20)] * 3 + [("b2", 35)], [("a2", 25), ("b1", 30)][n % 2])
        outcomes.append(release(cfg.load(path)))
        rows = db.query(
            f"SELECT COUNT(*) FROM {members_of(db, cat)} GROUP BY veil_cohort HAVING MIN(veil_since) = {n + 1}"
        )
        formed[n + 1] = [int(r[0]) for r in rows]
        if n >= 14 and sum(map(len, formed.values())) >= 2:  # two cohorts at the plan's sizes: the coins allowed
            break
    assert all(o.status == "published" for o in outcomes)
    moves = [o for o in outcomes if o.series.get("node") == "series, moved up"]
    assert moves and moves[0].version == 8, [(o.version, o.series.get("node")) for o in outcomes]
    assert "series_budget 0.9" in moves[0].series["node_reason"]
    asked = {o.version: o.series["joiners_cohort"] for o in outcomes if "joiners_cohort" in o.series}
    assert min(asked) == 8 and min(asked.values()) > 3, asked  # more than the batch from the plan's first night
    assert sum(len(f) for f in formed.values()) >= 2, formed  # cohorts did form at the plan's size
    assert all(size >= asked[v] for v, sizes in formed.items() for size in sizes), (formed, asked)
    kept = versions(db, out)
    candidates = attribute(world, kept)
    assert all(world.people[p][2] in c for p, c in candidates.items())
    assert {p: c for p, c in candidates.items() if len(c) < 2} == {}
    history = {
        r["version"]: r for r in json.loads(run_veil("releases", "--config", str(path), "--json").stdout)["releases"]
    }
    assert history[8]["series_notes"]["node"] == "series, moved up"  # the publisher reads the move, and why
    assert history[8]["series_notes"]["joiners_cohort"] == asked[8]
    last = outcomes[-1]
    assert history[last.version]["standing_in"] == last.series["standing_in"]
    text = run_veil("releases", "--config", str(path)).stdout
    line = next(x for x in text.splitlines() if x.strip().startswith("v8;"))
    assert f"moved up from {history[8]['series_notes']['previous_node']}: " in line, line
    assert f"joiners' cohorts of {asked[8]}" in line and " standing in" in line, line
