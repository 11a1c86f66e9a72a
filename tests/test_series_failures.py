"""A cohort series' night that fails at any step leaves the series as its last published version left it
(docs/series.md §2; ``veil.release.memberstore``): on DuckDB and PostgreSQL the run's transaction rolls the
members and the ``series_state`` row back; on Spark, where every statement commits, the night works on a members
table of its own version and appends its row, and the next night reads the row of the newest version the catalog
holds as published — the failed run's table is dropped, its row never read.  A run killed outright (SIGKILL: no
handler runs, its lock and its ``running`` row stay behind) leaves the series alike.  Then the series goes on:
published, every cohort a batch that passes, and the reader of tests/test_series_attacks.py singles no one out."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from veil import config as cfg
from veil.errors import ReleaseError
from veil.release import exposure, release
from veil.release.memberstore import generation
from tests.conftest import Db, paused_at
from tests.test_series_attacks import attribute, members_of, run_nights, setup, versions
from tests.test_series_db import cleanup  # noqa: F401 (fixture)

# before the series step (raised); after its members changed and before its row (killed); after its row, before the
# version's rows (raised); with the views switched and no catalog row (killed: Spark's next run records that version
# and goes on from its members).  The publication's own steps in between (verify, views) fail alike:
# tests/test_release.py, tests/test_release_faults.py, tests/spark.
STEPS = (("search", "error"), ("series", "SIGKILL"), ("materialize", "error"), ("catalog", "SIGKILL"))


def killed_at(path: Path, step: str) -> None:
    """``veil release`` paused at ``step`` and killed there with SIGKILL: nothing of Veil's runs after it."""
    with paused_at(path, step) as proc:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(60)
    assert proc.returncode == -signal.SIGKILL, step


def series_now(db: Db, cat: str) -> tuple[Any, list[tuple[str, ...]]]:
    """The series the next night reads: the ``series_state`` row of the members table ``members_of`` finds, and
    that table's rows."""
    members = members_of(db, cat)
    rows = db.query(
        f'SELECT members, series, started_version, node, next_cohort, secret FROM "{cat}".series_state '
        "WHERE name = 'people'"
    )
    (state,) = [r for r in rows if f'"{cat}".{r[0]}' == members]
    found = db.query(
        f"SELECT veil_id, veil_state, veil_cohort, veil_joined, veil_since, veil_gone, zip, age, disease FROM {members}"
    )
    return state, sorted(tuple(map(str, r)) for r in found)


def members_tables(db: Db, cat: str) -> set[str]:
    return {t for s, t in db.objects() if s == cat and t.startswith("people_members")}


@pytest.mark.backend
@pytest.mark.spark_too
def test_a_night_failing_at_any_step_leaves_the_series_as_published(
    db: Db, cleanup, monkeypatch: pytest.MonkeyPatch
) -> None:
    world, path, out, cat = setup(db, extra="keep_versions = 30\n")
    run_nights(world, path, 1)
    before = series_now(db, cat)
    world.night(2, 3, [("a1", 20)] * 3 + [("b2", 35)])  # leavers and joiners for the failing nights to take in
    for step, fault in STEPS:
        if fault == "SIGKILL":
            killed_at(path, step)
        else:
            monkeypatch.setenv("VEIL_FAILPOINT", step)
            with pytest.raises(ReleaseError, match=f"injected failure at step '{step}'"):
                release(cfg.load(path))
            monkeypatch.delenv("VEIL_FAILPOINT")
        assert series_now(db, cat) == before, (step, fault)
    outcome = release(cfg.load(path))
    assert outcome.status == "published"
    state, _members = series_now(db, cat)
    statuses = [s for (s,) in db.query(f'SELECT status FROM "{cat}".releases ORDER BY started_at')]
    assert "running" not in statuses  # the killed runs' rows: failed, or (Spark) the adopted version's published
    failed = db.query(f"SELECT version FROM \"{cat}\".releases WHERE status = 'failed' AND version IS NOT NULL")
    tables = members_tables(db, cat)  # the current one, and the one before it until the next night
    assert state[0] in tables and len(tables) <= 2
    assert not tables & {generation("people", int(v)) for (v,) in failed}  # the failed nights' tables dropped
    audit = exposure(cfg.load(path))["cohort"]
    assert audit["cohorts_below_batch"] == 0 and audit["cohorts_failing_models"] == 0
    for n in (3,):  # a night more, numbered as the reader counts versions (version v on night v - 1)
        world.night(n, 3, [("a1", 20)] * 3 + [("b2", 35)], ("b1", 30), successors=1)
        assert release(cfg.load(path)).status == "published"
    kept = versions(db, out)
    candidates = attribute(world, kept)
    assert all(world.people[p][2] in c for p, c in candidates.items())
    assert {p: c for p, c in candidates.items() if len(c) < 2} == {}
