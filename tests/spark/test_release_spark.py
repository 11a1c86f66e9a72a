"""Releases on Spark (docs/spark.md), on the real cluster: ``veil init`` creates the catalog from its metadata,
a release publishes the same rows and blocks as DuckDB's release of the same data and config, an unchanged
source is skipped, and a run failing or killed at every step leaves the views on the previous verified
version; the next run repairs what it left (orphan tables dropped, views switched by a killed run recorded)
and publishes.  The lock table refuses a concurrent run and is taken over from a killed one."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from tests.conftest import inpatient_body, paused_at
from tests.spark.conftest import SPARK_URL, Twins
from veil import config as cfg
from veil import catalog
from veil.errors import BusyError, ReleaseError
from veil.queries import appendonly
from veil.queries import publication as qpub
from veil.queries.ddl import create_table
from veil.queries import spark as sq
from veil.release import init, release, releases, rollback
from veil.release import autocommit as sp


@dataclass(frozen=True)
class Target:
    """A release of the inpatient table on Spark (schemas of its own) and its DuckDB twin."""

    name: str
    pub: str
    cat: str
    spark: Path
    duckdb: Path


def _spark() -> Any:
    from pyspark.sql.connect.session import SparkSession

    return SparkSession.builder.remote(SPARK_URL).create()


@pytest.fixture
def target(twins: Twins) -> Iterator[Target]:
    name = f"inp_{uuid.uuid4().hex[:6]}"
    pub, cat = f"{twins.schema}_{name}_pub", f"{twins.schema}_{name}_cat"
    # series = "refuse": the autocommit publication's steps, without a cohort series' (tests/test_series_failures.py)
    section = (
        f'\n[release]\nname = "{name}"\nschema = "{{schema}}"\ncatalog_schema = "{{cat}}"\ndrop_columns = ["id"]\n'
        'series = "refuse"\n'
    )
    spark = twins.config_path("spark", "patients", inpatient_body() + section.format(schema=pub, cat=cat), name)
    duck = twins.config_path(
        "duckdb", "patients", inpatient_body() + section.format(schema="published", cat="veil"), name
    )
    try:
        yield Target(name, pub, cat, spark, duck)
    finally:
        s = _spark()
        try:
            for schema in (pub, cat):
                s.sql(f"DROP SCHEMA IF EXISTS `{schema}` CASCADE")
        finally:
            s.stop()


def _spark_rows(sql: str) -> list[tuple[Any, ...]]:
    s = _spark()
    try:
        return sorted(tuple(r) for r in s.sql(sql).collect())
    finally:
        s.stop()


def _state(t: Target) -> dict[str, Any]:
    """What a reader sees: each view's version property, the objects in the schema, the rows of ``<name>``."""
    s = _spark()
    try:
        objects = {x.name for x in s.catalog.listTables(f"`{t.pub}`")}
        shown = {}
        for view in (t.name, f"{t.name}_blocks", f"{t.name}_releases"):
            if view in objects:
                props = dict(tuple(r) for r in s.sql(f"SHOW TBLPROPERTIES `{t.pub}`.`{view}`").collect())
                shown[view] = int(props["veil.version"])
        rows = (
            sorted(tuple(r) for r in s.sql(f"SELECT * FROM `{t.pub}`.`{t.name}`").collect())
            if t.name in objects
            else []
        )
        locks = [x.name for x in s.catalog.listTables(f"`{t.cat}`") if x.name.startswith("veil_lock_")]
    finally:
        s.stop()
    return {"objects": objects, "shown": shown, "rows": rows, "locks": locks}


def _duckdb_rows(twins: Twins, sql: str) -> list[tuple[Any, ...]]:
    engine = sa.create_engine(twins.duckdb_url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as c:
            return sorted(tuple(r) for r in c.execute(sa.text(sql)))
    finally:
        engine.dispose()


@pytest.mark.spark
def test_release_equals_duckdbs_and_an_unchanged_source_is_skipped(
    twins: Twins, target: Target, caplog: pytest.LogCaptureFixture
) -> None:
    t = target
    spark_conf, duck_conf = cfg.load(t.spark), cfg.load(t.duckdb)
    assert init(spark_conf) == (None, catalog.HEAD)
    assert init(spark_conf) == (catalog.HEAD, catalog.HEAD)  # a second init: nothing to do
    init(duck_conf)
    with caplog.at_level(logging.DEBUG, logger="veil.backends.spark"):
        on_spark = release(spark_conf)
    sent = [
        r.getMessage().split(", ", 1)[1].rsplit(":", 1)[0]
        for r in caplog.records
        if r.name == "veil.backends.spark" and r.getMessage().startswith("spark statement")
    ]
    assert "moving the publication pointer" in sent and not [w for w in sent if "pointer" in w and "reading" in w]
    on_duck = release(duck_conf)
    assert on_spark.status == on_duck.status == "published"
    assert (
        (on_spark.version, on_spark.node, on_spark.rows_published, on_spark.achieved)
        == (on_duck.version, on_duck.node, on_duck.rows_published, on_duck.achieved)
        == (1, (1, 2, 1), 12, {"k-anonymity": 4.0})
    )
    for view in (t.name, f"{t.name}_blocks", f"{t.name}_v1", f"{t.name}_v1_blocks"):
        assert _spark_rows(f"SELECT * FROM `{t.pub}`.`{view}`") == _duckdb_rows(
            twins, f"SELECT * FROM published.{view}"
        )
    releases_view = "SELECT version, status, node, rows_published, current FROM {}"
    assert (
        _spark_rows(releases_view.format(f"`{t.pub}`.`{t.name}_releases`"))
        == _duckdb_rows(twins, releases_view.format(f"published.{t.name}_releases"))
        == [(1, "published", "[1, 2, 1]", 12, True)]
    )
    again = release(spark_conf)
    assert again.status == "skipped" and again.exit_code == 0 and "unchanged since version 1" in again.message
    state = _state(t)
    assert state["shown"] == {t.name: 1, f"{t.name}_blocks": 1, f"{t.name}_releases": 1} and state["locks"] == []
    history = releases(spark_conf)
    assert history["current"] == 1 and [r["status"] for r in history["releases"]] == ["published", "skipped"]
    # the pointer row is appended whole, unread, at every version: the view shows its newest entry
    assert release(spark_conf, force=True).version == 2
    assert _spark_rows(f"SELECT name, schema, current_version FROM `{t.cat}`.publications") == [(t.name, t.pub, 2)]
    assert _spark_rows(f"SELECT schema, current_version FROM `{t.cat}`.publications_log") == [(t.pub, 1), (t.pub, 2)]
    assert releases(spark_conf)["current"] == 2


@pytest.mark.spark
def test_a_failure_at_every_step_leaves_the_previous_verified_version(
    target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    """materialize: nothing written.  verify: an orphan rows table.  views: verified tables and the ledger's v2,
    no view on them.  switch: killed between ``<name>_blocks`` and ``<name>``.  In all four ``<name>`` shows v1.
    catalog: the views show the verified v4 without its catalog row.  Each next run drops the orphans (v2 and
    v3 keep their numbers: the ledger recorded them), switches ``_blocks`` back, records v4 and publishes v5,
    compared with every version the ledger holds.  Then ``veil rollback`` switches the views; one killed after
    the switch leaves the pointer behind, which the next run moves."""
    t = target
    conf = cfg.load(t.spark)
    init(conf)
    assert release(conf).version == 1
    v1_rows = _state(t)["rows"]

    def fail(step: str) -> dict[str, Any]:
        monkeypatch.setenv("VEIL_FAILPOINT", step)
        with pytest.raises(ReleaseError, match=f"injected failure at step '{step}'"):
            release(conf, force=True)
        state = _state(t)
        assert state["rows"] == v1_rows and state["shown"][t.name] in (1, 4) and state["locks"] == []
        return state

    state = fail("materialize")
    assert set(state["shown"].values()) == {1} and not any("_v2" in o for o in state["objects"])
    state = fail("verify")
    assert f"{t.name}_rows_v2" in state["objects"] and f"{t.name}_v2" not in state["objects"]  # the orphan
    assert set(state["shown"].values()) == {1}
    state = fail("views")
    assert {f"{t.name}_rows_v2", f"{t.name}_block_rows_v2"} <= state["objects"] and f"{t.name}_v2" not in state[
        "objects"
    ]
    assert set(state["shown"].values()) == {1}
    state = fail("switch")
    assert state["shown"] == {t.name: 1, f"{t.name}_blocks": 3, f"{t.name}_releases": 1}
    assert not any("_v2" in o for o in state["objects"])  # v2's orphan tables were dropped
    state = fail("catalog")
    assert set(state["shown"].values()) == {4}  # verified, switched; its catalog row not written
    assert not any("_v2" in o or "_v3" in o for o in state["objects"])
    assert releases(conf)["current"] == 4  # the pointer row follows the views; no published row is current yet

    monkeypatch.delenv("VEIL_FAILPOINT")
    final = release(conf, force=True)
    assert final.status == "published" and final.version == 5
    # v1, v4 and v2, v3 (never shown, but in the ledger: compared all the same, the safe side)
    assert final.series is not None and final.series["versions_compared"] == 4
    history = releases(conf)
    published = {r["version"]: r for r in history["releases"] if r["status"] == "published"}
    assert history["current"] == 5 and sorted(published) == [1, 4, 5]
    assert "recorded by a later run" in published[4]["message"]
    assert published[4]["node"] == published[5]["node"] == [1, 2, 1]  # the node the ledger recorded for v4
    state = _state(t)
    assert set(state["shown"].values()) == {5} and state["rows"] == v1_rows  # same data, same node
    assert rollback(conf, 4)["version"] == 4
    assert set(_state(t)["shown"].values()) == {4} and releases(conf)["current"] == 4
    # a rollback killed after switching the views: its row is missing, so the next run reads the pointer and
    # moves it to the version shown (here before that run fails itself)
    monkeypatch.setenv("VEIL_FAILPOINT", "rollback-switched")
    with pytest.raises(ReleaseError, match="injected failure at step 'rollback-switched'"):
        rollback(conf, 5)
    assert set(_state(t)["shown"].values()) == {5} and releases(conf)["current"] == 4
    monkeypatch.setenv("VEIL_FAILPOINT", "materialize")
    with pytest.raises(ReleaseError, match="injected failure at step 'materialize'"):
        release(conf, force=True)
    assert set(_state(t)["shown"].values()) == {5} and releases(conf)["current"] == 5


@pytest.mark.spark
def test_sigkill_mid_release_and_the_lock(target: Target) -> None:
    """A ``veil release`` paused after writing its version table holds the lock: a concurrent run is refused
    with one line naming the lock table.  SIGKILLed there, it leaves the views on v1, its orphan table and its
    lock; the next run takes the lock over (its holder's PID is gone), drops the orphan and publishes v2."""
    t = target
    conf = cfg.load(t.spark)
    init(conf)
    assert release(conf).version == 1
    with paused_at(t.spark, "verify", "--force") as proc:
        with pytest.raises(BusyError) as busy:
            release(conf, force=True)
        message = str(busy.value)
        assert "\n" not in message and f"lock table {t.cat}.veil_lock_{t.name} held by PID {proc.pid}" in message
        assert f"DROP TABLE {t.cat}.veil_lock_{t.name}" in message
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    state = _state(t)
    assert f"{t.name}_rows_v2" in state["objects"] and set(state["shown"].values()) == {1}
    assert state["locks"] == [f"veil_lock_{t.name}"]
    after = release(conf, force=True)
    assert after.status == "published" and after.version == 2
    state = _state(t)
    assert set(state["shown"].values()) == {2} and state["locks"] == []
    statuses = [r["status"] for r in releases(conf)["releases"]]
    assert statuses == ["published", "failed", "published"]


@pytest.mark.spark
def test_a_compaction_keeps_the_series_rows_of_the_members_tables_still_there(
    target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cohort series on Spark appends a ``series_state`` row a version and keeps two members tables
    (``veil.release.memberstore``): a compaction leaves out the rows whose members table the nights dropped
    (``appendonly.NAMING``), so the table holds a few rows a series however many versions it had; the rows of
    the days a compaction leaves alone stay, whatever their table."""
    from veil.backends import open_backend
    from veil.queries import members as mq
    from veil.release import compaction

    real = time.time_ns
    shift = [0]
    monkeypatch.setattr(time, "time_ns", lambda: real() + shift[0] * appendonly.NANOS_A_DAY)
    d0 = appendonly.today()
    tables = catalog.tables(target.cat)
    state = tables.series_state

    def row(version: int, day: int) -> None:
        shift[0] = day
        members = f"inp_members_v{version}"
        values = {"name": "inp", "series": 1, "started_version": 1, "node": "[0]", "members": members, "batch": 2}
        session.execute(mq.record_state(state, values | {"next_cohort": version, "secret": "s"}), "its row")

    with open_backend(SPARK_URL).session() as session:
        catalog.ensure_schema(session, target.cat)
        catalog.upgrade(session, target.cat)
        for version, day in ((1, 0), (2, 2), (3, 4), (4, 6), (5, 9)):  # v5: within the days left alone
            row(version, day)
        for version in (3, 4):  # the members tables a night keeps: the current one and the one before it
            members = sa.Table(
                f"inp_members_v{version}", sa.MetaData(), sa.Column("veil_id", sa.BigInteger), schema=target.cat
            )
            session.execute(create_table(members), "a members table")
        assert compaction.compact(session, tables, d0 + 9) == d0 + 6
        kept = session.rows(sa.select(state.c.members, state.c.next_cohort), "the series' rows")
    assert sorted((str(m), int(n)) for m, n in kept) == [
        ("inp_members_v3", 3),
        ("inp_members_v4", 4),
        ("inp_members_v5", 5),
    ]


# --- without a cluster: the lock's rules and the append-only catalog's statements ------------------------------


def test_a_lock_is_stale_only_when_its_holder_ran_here_and_is_gone() -> None:
    import socket

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    here = socket.gethostname()
    assert sp._dead({"veil.host": here, "veil.pid": str(gone.pid)}) is True
    assert sp._dead({"veil.host": here, "veil.pid": str(os.getpid())}) is False  # alive
    assert sp._dead({"veil.host": here + "-other", "veil.pid": str(gone.pid)}) is False  # another host: unknown
    assert sp._dead({"veil.host": here}) is False


def test_the_busy_line_names_the_lock_table_and_how_to_clear_it() -> None:
    line = sp._busy("veil", "inpatient", {"veil.pid": "4242", "veil.host": "etl-1", "veil.started_at": "2026-01-02"})
    assert "\n" not in line
    assert "lock table veil.veil_lock_inpatient held by PID 4242 on etl-1 since 2026-01-02" in line
    assert line.endswith("clear the lock with DROP TABLE veil.veil_lock_inpatient")


def test_catalog_changes_are_appends_to_a_log() -> None:
    r = catalog.tables("veil").releases
    log = appendonly.log_table(r)
    assert [c.name for c in log.columns] == [*(c.name for c in r.columns), "veil_seq", "veil_day"]
    assert "PARTITIONED BY (`veil_day`)" in str(sq.compile_sql(create_table(log)))
    seq = 20_000 * appendonly.NANOS_A_DAY + 5
    insert = sq.compile_sql(appendonly.logged(r.insert().values(id="x", name="n", status="running"), log, seq))
    text = str(insert)
    assert text.startswith("INSERT INTO `veil`.`releases_log` (`id`, `name`, `version`")
    assert "CAST(NULL AS INT) AS `version`" in text and "FROM" not in text  # left-out columns: NULL
    assert set(insert.params.values()) == {"x", "n", "running", seq, 20_000}  # values stay parameters
    update = appendonly.logged(sa.update(r).where(r.c.id == "x").values(status="failed"), log, seq + 1)
    text = str(sq.compile_sql(update))
    assert "`veil`.`releases`.`name`" in text and "AS `status`" in text  # unchanged columns read back
    assert text.endswith("FROM `veil`.`releases` \nWHERE `veil`.`releases`.`id` = :id_1")
    view = str(sq.compile_sql(appendonly.view(r, appendonly.Layout(19_990, 19_983))))
    assert "PARTITION BY `entries`.`id` ORDER BY `entries`.`veil_seq` DESC" in view
    assert "FROM `veil`.`releases_base_19990` UNION ALL" in view and "`veil_day` > 19990" in view
    assert " AS `id`" not in view.split("UNION ALL")[0].rsplit("FROM (", 1)[1]  # no `x AS x` under a window
    fresh = str(sq.compile_sql(appendonly.view(r, appendonly.Layout.fresh(20_000))))
    assert "_base_" not in fresh and "WHERE `veil`.`releases_log`" not in fresh  # a new catalog reads its whole log


def test_orphans_are_recognized_by_name_and_kind() -> None:
    import re

    tables = re.compile(qpub.VERSION_TABLES.format(name=re.escape("inp")))
    views = re.compile(qpub.VERSION_VIEWS.format(name=re.escape("inp")))
    assert [
        bool(tables.match(n)) for n in ("inp_rows_v3", "inp_block_rows_v12", "inp_rows", "inp_v3", "inpx_rows_v1")
    ] == [True, True, False, False, False]
    assert [bool(views.match(n)) for n in ("inp_v3", "inp_v3_blocks", "inp_blocks", "inp_rows_v3", "inp_v")] == [
        True,
        True,
        False,
        False,
        False,
    ]


class _Reads:
    """A session that answers the one read ``_orphans`` may make, a view's properties (its release id); it records
    the views it was asked about."""

    def __init__(self, made_by: dict[str, str]) -> None:
        self.made_by, self.asked = made_by, []  # view → the release id in its properties

    def rows(self, stmt: Any, what: str = "") -> list[tuple[Any, ...]]:
        assert what.startswith("reading the properties of "), what
        view = what.rsplit(".", 1)[1]
        self.asked.append(view)
        return [(sp.RELEASE, self.made_by[view])] if view in self.made_by else []


def test_orphans_read_only_views_of_versions_not_kept() -> None:
    """A kept version's views are never read (they were two statements a view every night on Spark); a view of
    another version counts only when a run of this release made it (its release id among the runs read under the
    lock: no statement), a table always."""
    found = {
        "inp_v1": "VIEW",
        "inp_v1_blocks": "VIEW",
        "inp_rows_v1": "BASE TABLE",
        "inp_rows_v2": "BASE TABLE",
        "inp_v3": "VIEW",
        "inp_v4": "VIEW",
        "inp_v5": "VIEW",
        "inp_blocks": "VIEW",
    }
    reads = _Reads({"inp_v3": "run-3", "inp_v4": "a-run-of-another-release"})
    runs = {"run-1", "run-3"}
    orphans = sp._orphans(reads, "pub", "inp", found, keep={1}, runs=runs)  # type: ignore[arg-type]
    assert orphans == [2, 3] and sorted(reads.asked) == ["inp_v3", "inp_v4", "inp_v5"]


def _catalog_state(s: Any, cat: str) -> dict[str, Any]:
    """Every catalog view's rows, the compaction its ``releases`` view records, the bases and the logs' days."""
    names = {x.name for x in s.catalog.listTables(f"`{cat}`")}
    logs = [t for t in catalog.tables(cat).all() if appendonly.stored_as_log(t)]
    views = {t.name: sorted(map(repr, s.sql(f"SELECT * FROM `{cat}`.`{t.name}`").collect())) for t in logs}
    props = dict(tuple(r) for r in s.sql(f"SHOW TBLPROPERTIES `{cat}`.`releases`").collect())
    days = {int(str(r[0]).split("=")[1]) for r in s.sql(f"SHOW PARTITIONS `{cat}`.`releases_log`").collect()}
    bases = {n for n in names if "_base_" in n}
    return {"views": views, "layout": appendonly.Layout.read(props), "days": days, "bases": bases}


@pytest.mark.spark
def test_the_catalog_compacts_once_a_week_and_shows_the_same_rows(
    target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spark's catalog logs (``veil.queries.appendonly``) compacted by the runs (``veil.release.compaction``): not
    while another holds the compaction lock; then every view shows the same rows before and after; the next
    compaction drops the days only the views before the previous one read, and a base a stopped compaction left."""
    from veil.release import compaction

    t = target
    conf = cfg.load(t.spark)
    real = time.time_ns
    shift = [0]
    monkeypatch.setattr(time, "time_ns", lambda: real() + shift[0] * appendonly.NANOS_A_DAY)
    d0 = appendonly.today()
    seen: list[tuple[dict[str, Any], dict[str, Any]]] = []
    compact = compaction.compact

    def observed(session: Any, tables: Any, today: int) -> int | None:
        s = _spark()
        try:
            before = _catalog_state(s, t.cat)
            done = compact(session, tables, today)
            seen.append((before, _catalog_state(s, t.cat)))
        finally:
            s.stop()
        return done

    monkeypatch.setattr(compaction, "compact", observed)
    assert init(conf) == (None, catalog.HEAD)
    assert release(conf).version == 1
    shift[0] = 6
    assert release(conf, force=True).version == 2 and seen == []  # the last day a compaction at d0 + 9 takes
    s = _spark()
    try:  # a compaction under way elsewhere (a live holder on another host): this run leaves it alone
        props = "'veil.host'='elsewhere', 'veil.pid'='1', 'veil.run'='x'"
        s.sql(f"CREATE TABLE `{t.cat}`.`veil_lock_veil_compaction` (owner STRING) TBLPROPERTIES ({props})")
        shift[0] = 9
        assert release(conf, force=True).version == 3 and seen == []
        s.sql(f"DROP TABLE `{t.cat}`.`veil_lock_veil_compaction`")
        assert release(conf, force=True).version == 4  # due since day d0 + 7: compacted up to d0 + 6
        # a compaction stopped before its views switched left a base of the day the next one compacts to
        s.sql(f"CREATE TABLE `{t.cat}`.`releases_base_{d0 + 15}` AS SELECT 1 AS x")
    finally:
        s.stop()
    shift[0] = 18
    assert release(conf, force=True).version == 5
    assert len(seen) == 2
    (first_before, first), (second_before, second) = seen
    for before, after in seen:
        assert after["views"] == before["views"] and len(before["views"]["releases"]) >= 4
    assert first["layout"] == appendonly.Layout(d0 + 6, d0 - appendonly.MARGIN - 1)
    assert first["days"] == first_before["days"] == {d0, d0 + 6, d0 + 9}  # nothing dropped the first time
    assert first["bases"] == {f"{n}_base_{d0 + 6}" for n in first["views"]}
    assert second["layout"] == appendonly.Layout(d0 + 15, d0 + 6)
    assert second["days"] == {d0 + 9, d0 + 18}  # days d0 and d0 + 6: read only by the views before the first
    assert second["bases"] == {f"{n}_base_{d}" for n in second["views"] for d in (d0 + 6, d0 + 15)}
    history = releases(conf)
    assert [r["version"] for r in history["releases"]] == [1, 2, 3, 4, 5] and history["current"] == 5
    shown = _spark_rows(f"SELECT version, current FROM `{t.pub}`.`{t.name}_releases`")  # an analyst's view of them
    assert shown == [(1, False), (2, False), (3, False), (4, False), (5, True)]
    assert _state(t)["locks"] == []


@pytest.mark.spark
def test_a_compaction_loses_no_append_made_meanwhile_and_a_stopped_one_is_done_again(
    target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compaction's protocol against what runs beside it (``veil.release.compaction``), at the session: another
    run's appends while the bases are written are in the views after the switch; a compaction stopped after some
    views switched leaves every view showing the same rows, and the next one finishes it."""
    from veil.backends import open_backend
    from veil.release import compaction

    real = time.time_ns
    shift = [0]
    monkeypatch.setattr(time, "time_ns", lambda: real() + shift[0] * appendonly.NANOS_A_DAY)
    d0 = appendonly.today()
    tables = catalog.tables(target.cat)
    r, nodes = tables.releases, tables.release_nodes
    expected: dict[str, str] = {}  # run id → its newest status

    def run(tag: str, status: str, day: int) -> None:
        shift[0] = day
        if tag not in expected:
            session.execute(r.insert().values(id=tag, name="x", status="running"), "a run")
            session.execute(nodes.insert().values(release_id=tag, node=f"[{day}]"), "its node")
        session.execute(sa.update(r).where(r.c.id == tag).values(status=status), "its status")
        expected[tag] = status

    def shown() -> tuple[dict[str, str], list[str]]:
        runs = dict(session.rows(sa.select(r.c.id, r.c.status), "the runs"))
        return runs, sorted(str(n) for (n,) in session.rows(sa.select(nodes.c.node), "the nodes"))

    with open_backend(SPARK_URL).session() as session:
        catalog.ensure_schema(session, target.cat)
        catalog.upgrade(session, target.cat)
        for tag, day in (("a", 0), ("b", 3), ("c", 6)):
            run(tag, "published", day)
        run("a", "expired", 6)
        switch = appendonly.view

        def stopped(table: Any, layout: Any) -> Any:
            if table.name == "publications":  # every base written, ``release_nodes``' view switched, not ``releases``'
                raise RuntimeError("stopped")
            return switch(table, layout)

        monkeypatch.setattr(appendonly, "view", stopped)
        with pytest.raises(RuntimeError):
            compaction.compact(session, tables, d0 + 9)
        assert shown() == (expected, sorted(f"[{d}]" for d in (0, 3, 6)))
        assert compaction.layout(session, tables).watermark is None  # ``releases`` not switched: redone whole
        mixed = dict(session.rows(qpub.show_properties(target.cat, "release_nodes"), "its properties"))
        assert appendonly.Layout.read(mixed).watermark == d0 + 6

        def meanwhile(table: Any, layout: Any) -> Any:
            if "d" not in expected:  # every base written, no view switched yet
                run("d", "published", 9)
            return switch(table, layout)

        write = appendonly.compacted
        written: list[str] = []

        def readable(table: Any, layout: Any, upto: int, existing: Any) -> Any:  # the switched view reads on
            assert shown() == (expected, sorted(f"[{d}]" for d in (0, 3, 6)))  # while the bases are written
            written.append(table.name)
            return write(table, layout, upto, existing)

        monkeypatch.setattr(appendonly, "view", meanwhile)
        monkeypatch.setattr(appendonly, "compacted", readable)
        assert compaction.compact(session, tables, d0 + 9) == d0 + 6
        assert "releases" in written and "release_nodes" not in written  # its base, whole and read, kept
        assert compaction.layout(session, tables) == appendonly.Layout(d0 + 6, d0 - appendonly.MARGIN - 1)
        assert shown() == (expected, sorted(f"[{d}]" for d in (0, 3, 6, 9)))
        run("b", "expired", 10)
        assert shown()[0] == expected and compaction.compact(session, tables, d0 + 10) is None  # not due
