"""Publishing that is safe for every reader (docs/publication.md), on both backends: a REPEATABLE READ reader
keeps its version across a whole release (even when the release deletes that version's rows), a reader that
holds a transaction open never makes a release wait, an analyst's own views never block a release, history
is kept to ``keep_versions`` and can be listed and rolled back; least privilege, concurrent first runs, and
Ctrl-C / SIGTERM marking the catalog row at once."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import uuid

import pytest
import sqlalchemy as sa

from veil import config as cfg
from veil.release import init, release
from tests.conftest import PG_URL, Db, error_line, run_veil
from tests.test_series_db import change, cleanup, people_db  # noqa: F401 (fixture)
from tests import prewarmed

pytestmark = pytest.mark.notimpl(
    ["spark"],
    reason=(
        "the transactional publication (docs/publication.md): readers in snapshot transactions through their own "
        "SQLAlchemy engine (none for sc://), the rows tables <name>_rows behind views, TEXT columns; Spark publishes "
        "by the autocommit one (a table per version), tested in tests/spark/test_release_spark.py"
    ),
)


def in_thread(fn, timeout: float = 180):
    """Run ``fn`` in a thread; fail (instead of hanging) if it waits on a lock."""
    box: dict = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - reported below
            box["error"] = exc

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), f"the release waited on a reader for more than {timeout} s"
    if "error" in box:
        raise box["error"]
    return box["value"]


def rows(conn: sa.Connection, sql: str) -> list[tuple]:
    return sorted(tuple(r) for r in conn.exec_driver_sql(sql))


def reader(db: Db, isolation: str) -> sa.Connection:
    eng = sa.create_engine(db.url, poolclass=sa.pool.NullPool)
    conn = eng.connect()
    if db.kind == "postgres":
        conn = conn.execution_options(isolation_level=isolation)
    return conn


@pytest.mark.parametrize("isolation", ["REPEATABLE READ", "SERIALIZABLE"])
def test_a_snapshot_reader_keeps_its_version_across_a_whole_release(db: Db, cleanup, isolation: str) -> None:
    path, out, _ = people_db(db, "off", "keep_versions = 1")
    init(cfg.load(path))
    release(cfg.load(path))
    conn = reader(db, isolation)
    try:
        conn.begin()
        before = rows(conn, f'SELECT zip, age, disease FROM "{out}".people')
        blocks = rows(conn, f'SELECT zip, age, block_size, disease, count FROM "{out}".people_blocks')
        assert len(before) == 16
        change(db, add=[(17, "a1", 20, "cancer"), (18, "b2", 35, "flu")], remove=[1])
        outcome = in_thread(lambda: release(cfg.load(path)))
        assert outcome.version == 2
        # version 1's rows are deleted (keep_versions = 1) and the pointer moved; the reader's snapshot holds
        assert rows(conn, f'SELECT zip, age, disease FROM "{out}".people') == before
        assert rows(conn, f'SELECT zip, age, block_size, disease, count FROM "{out}".people_blocks') == blocks
        conn.commit()
        after = rows(conn, f'SELECT zip, age, disease FROM "{out}".people')
        assert len(after) == 17 and after != before
    finally:
        conn.close()


def test_a_reader_holding_a_transaction_never_makes_a_release_wait(db: Db, cleanup) -> None:
    path, out, cat = people_db(db, "off", "keep_versions = 1")
    init(cfg.load(path))
    release(cfg.load(path))
    conn = reader(db, "READ COMMITTED")
    try:
        conn.begin()
        assert len(rows(conn, f'SELECT * FROM "{out}".people')) == 16
        assert len(rows(conn, f'SELECT * FROM "{out}".people_v1')) == 16  # holds a share lock on people_v1
        change(db, add=[(17, "a1", 20, "cancer")])
        started = time.monotonic()
        outcome = in_thread(lambda: release(cfg.load(path)), timeout=120)
        assert outcome.version == 2 and time.monotonic() - started < 100
        if db.kind == "postgres":  # dropping the expired version's view would wait for the reader: left for later
            assert any("people_v1" in x for x in outcome.series["expired_objects_kept"])
    finally:
        conn.rollback()
        conn.close()
    change(db, add=[(18, "b2", 35, "flu")])
    release(cfg.load(path))  # the reader is gone: this run drops people_v1 and people_v2
    names = {r[0] for r in db.query(f"SELECT table_name FROM information_schema.tables WHERE table_schema = '{out}'")}
    assert {"people_v1", "people_v1_blocks", "people_v2", "people_v2_blocks"}.isdisjoint(names)
    assert {"people", "people_blocks", "people_releases", "people_v3", "people_rows"} <= names


def test_an_analysts_views_never_block_a_release(db: Db, cleanup) -> None:
    path, out, _ = people_db(db, "off", "keep_versions = 1")
    mine = "analyst" if db.kind == "duckdb" else f"{db.schema}_mine"
    init(cfg.load(path))
    release(cfg.load(path))
    db.execute(
        f'CREATE SCHEMA "{mine}"',
        f'CREATE VIEW "{mine}".latest AS SELECT zip, disease FROM "{out}".people',
        f'CREATE VIEW "{mine}".first AS SELECT zip, disease FROM "{out}".people_v1',
    )
    try:
        for night, person in enumerate([(17, "a1", 20, "cancer"), (18, "b2", 35, "flu")], start=2):
            change(db, add=[person])
            outcome = release(cfg.load(path))
            assert outcome.version == night
        assert len(db.query(f'SELECT * FROM "{mine}".latest')) == 18  # follows the current version
        assert db.query(f'SELECT * FROM "{mine}".first') == []  # version 1 expired: no rows
        assert any("people_v1 " in x for x in outcome.series["expired_objects_kept"])  # kept for the view on it
    finally:
        db.execute(f'DROP SCHEMA IF EXISTS "{mine}" CASCADE')


def test_keep_versions_history_and_rollback(db: Db, cleanup) -> None:
    path, out, cat = people_db(db, "off", "keep_versions = 2")
    assert run_veil("init", "--config", str(path)).returncode == 0
    for night in range(3):
        if night:
            change(db, add=[(16 + night, "a1", 20, "cancer")])
        assert run_veil("release", "--config", str(path)).returncode == 0
    assert db.query(f'SELECT version, status FROM "{cat}".releases ORDER BY version') == [
        (1, "expired"),
        (2, "published"),
        (3, "published"),
    ]
    assert sorted(db.query(f'SELECT DISTINCT veil_version FROM "{out}".people_rows')) == [(2,), (3,)]
    indexes = (
        f"SELECT table_name FROM duckdb_indexes() WHERE schema_name = '{out}'"
        if db.kind == "duckdb"
        else f"SELECT tablename FROM pg_indexes WHERE schemaname = '{out}' AND indexname = tablename || '_version'"
    )
    found = sorted(t for (t,) in db.query(indexes) if t in ("people_rows", "people_block_rows"))
    assert found == ([] if db.kind == "duckdb" else ["people_block_rows", "people_rows"])  # docs/publication.md §1
    res = run_veil("releases", "--config", str(path), "--json")
    doc = json.loads(res.stdout)
    assert res.returncode == 0 and doc["current"] == 3
    assert [(r["version"], r["status"], r["current"]) for r in doc["releases"]] == [
        (1, "expired", False),
        (2, "published", False),
        (3, "published", True),
    ]
    assert doc["releases"][0]["node"] is not None and doc["releases"][2]["rows_published"] == 18
    res = run_veil("rollback", "--config", str(path), "--to", "1")
    assert res.returncode == 1 and "version 1 of 'people' has expired" in res.stderr and "[2, 3]" in res.stderr
    res = run_veil("rollback", "--config", str(path), "--to", "2", "--json")
    assert res.returncode == 0 and json.loads(res.stdout)["from"] == 3
    assert len(db.query(f'SELECT * FROM "{out}".people')) == 17
    assert db.query(f'SELECT version FROM "{out}".people_releases WHERE "current"') == [(2,)]
    assert db.query(f"SELECT status, version FROM \"{cat}\".releases WHERE status = 'rollback'") == [("rollback", 2)]
    history = json.loads(run_veil("releases", "--config", str(path), "--json").stdout)
    assert history["current"] == 2 and history["releases"][-1]["status"] == "rollback"
    assert history["releases"][-1]["message"] == "rolled back 'people' from version 3 to version 2"
    change(db, add=[(20, "b2", 35, "flu")])
    assert run_veil("release", "--config", str(path)).returncode == 0  # v4 becomes current; v2 expires
    assert db.query(
        f'SELECT version, status FROM "{cat}".releases WHERE version IS NOT NULL AND status <> '
        "'rollback' ORDER BY version"
    ) == [(1, "expired"), (2, "expired"), (3, "published"), (4, "published")]
    res = run_veil("rollback", "--config", str(path), "--to", "9")
    assert res.returncode == 1 and "never published" in error_line(res.stderr)


@pytest.mark.parametrize("db", ["postgres"], indirect=True)  # roles and grants exist only on PostgreSQL
def test_least_privilege_with_exactly_the_readme_grants(db: Db, cleanup) -> None:
    role = f"veil_lp_{uuid.uuid4().hex[:8]}"
    database = sa.make_url(PG_URL).database
    path, out, cat = people_db(db, "cohort")
    db.execute(
        f'CREATE ROLE "{role}" LOGIN',
        f'GRANT USAGE ON SCHEMA "{db.schema}" TO "{role}"',
        f'GRANT SELECT ON ALL TABLES IN SCHEMA "{db.schema}" TO "{role}"',
        f'GRANT TEMPORARY ON DATABASE "{database}" TO "{role}"',
        f'CREATE SCHEMA "{out}"',
        f'CREATE SCHEMA "{cat}"',
        f'GRANT USAGE, CREATE ON SCHEMA "{out}" TO "{role}"',
        f'GRANT USAGE, CREATE ON SCHEMA "{cat}" TO "{role}"',
    )
    try:
        assert db.query(f"SELECT has_database_privilege('{role}', '{database}', 'CREATE')") == [(False,)]
        env = {"VEIL_TEST_PG_URL": sa.make_url(PG_URL).set(username=role).render_as_string(hide_password=False)}
        res = run_veil("init", "--config", str(path), env=env)
        assert res.returncode == 0, res.stderr
        res = run_veil("release", "--config", str(path), "--json", env=env)
        assert res.returncode == 0, res.stderr
        change(db, add=[(17, "a1", 20, "cancer")])
        res = run_veil("release", "--config", str(path), "--json", env=env)
        assert res.returncode == 0 and json.loads(res.stdout)["rows_deferred"] == 1, res.stderr
        assert len(db.query(f'SELECT * FROM "{out}".people')) == 16
    finally:
        for schema in (out, cat):
            db.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        db.execute(f'DROP OWNED BY "{role}"', f'DROP ROLE "{role}"')


# PostgreSQL only: DuckDB's file lock lets one process at a time in, so nothing runs concurrently to race
@pytest.mark.parametrize("db", ["postgres"], indirect=True)
def test_concurrent_inits_and_first_releases_on_a_fresh_database(db: Db, cleanup) -> None:
    path, out, cat = people_db(db, "cohort")
    other = path.with_name("other.toml")
    other.write_text(path.read_text().replace('name = "people"', 'name = "others"'))
    env = {**os.environ}
    for args in (
        (["init", "--config", str(path)], ["init", "--config", str(path)]),
        (["release", "--config", str(path)], ["release", "--config", str(other)]),
    ):
        procs = [prewarmed.Popen([*a], env=env) for a in args]
        results = [(p.wait(timeout=180), p.stderr.read()) for p in procs]
        assert [code for code, _ in results] == [0, 0], results
    assert {r[0] for r in db.query(f'SELECT name FROM "{cat}".publications')} == {"people", "others"}


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupt_marks_the_run_failed_at_once(db: Db, cleanup, sig: signal.Signals) -> None:
    path, out, cat = people_db(db, "cohort")
    assert run_veil("init", "--config", str(path)).returncode == 0
    assert run_veil("release", "--config", str(path)).returncode == 0
    change(db, add=[(17, "a1", 20, "cancer")])
    mark = db.workdir / "paused"
    env = {
        **os.environ,
        "VEIL_FAILPOINT": "pause:materialize",
        "VEIL_FAILPOINT_SECONDS": "120",
        "VEIL_FAILPOINT_FILE": str(mark),
    }
    proc = prewarmed.Popen(["release", "--config", str(path)], env=env)
    deadline = time.time() + 110
    while not mark.exists() and time.time() < deadline:  # paused mid-release, inside its transaction
        time.sleep(0.2)
    assert mark.exists(), "the release never reached its pause"
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and "interrupted" in err
    last = db.query(f'SELECT status, error FROM "{cat}".releases ORDER BY started_at')[-1]
    assert last[0] == "failed" and last[1].startswith("interrupted") and "nothing was published" in last[1]
    assert [r[0] for r in db.query(f'SELECT version FROM "{out}".people_releases')] == [1]


def test_an_earlier_veils_views_are_upgraded_in_place(db: Db, cleanup) -> None:
    """An earlier Veil published table people_v1 behind views it re-created each release; an analyst built a
    view on them.  The first release after the upgrade copies version 1 into the rows tables, replaces the views
    in place (the analyst's view keeps working) and publishes version 2 the new way."""
    path, out, cat = people_db(db, "cohort")
    init(cfg.load(path))
    labels = [
        ("a1", "<30", "flu"),
        ("a2", "<30", "cold"),
        ("a1", "<30", "hiv"),
        ("a2", "<30", "cancer"),
        ("b1", ">=30", "flu"),
        ("b2", ">=30", "cold"),
        ("b1", ">=30", "hiv"),
        ("b2", ">=30", "cancer"),
    ] * 2
    mine = "analyst" if db.kind == "duckdb" else f"{db.schema}_mine"
    db.execute(
        f'CREATE SCHEMA "{out}"',
        f'CREATE TABLE "{out}".people_v1 (zip TEXT, age TEXT, disease VARCHAR)',
        *(f"INSERT INTO \"{out}\".people_v1 VALUES ('{z}', '{a}', '{d}')" for z, a, d in labels),
        f'CREATE TABLE "{out}".people_v1_blocks AS SELECT zip, age, disease, count(*) AS n '
        f'FROM "{out}".people_v1 GROUP BY zip, age, disease',
        f'CREATE VIEW "{out}".people AS SELECT zip, age, disease FROM "{out}".people_v1',
        f'CREATE VIEW "{out}".people_blocks AS SELECT zip, age, CAST(sum(n) OVER (PARTITION BY zip, age) AS '
        f'BIGINT) AS block_size, disease, n AS count FROM "{out}".people_v1_blocks',
        f'CREATE VIEW "{out}".people_releases AS SELECT version, id AS release_id, published_at, node, '
        f'rows_published, rows_suppressed, achieved, output_table FROM "{cat}".releases '
        f"WHERE name = 'people' AND status = 'published'",
        f'INSERT INTO "{cat}".releases (id, name, version, status, started_at, published_at, config, '
        f"config_hash, node, rows_published, rows_suppressed, output_table) VALUES ('old', 'people', 1, "
        f"'published', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'x', 'h', '[0, 1]', 16, 0, '{out}.people_v1')",
        f'CREATE SCHEMA "{mine}"',
        f'CREATE VIEW "{mine}".latest AS SELECT disease FROM "{out}".people',
    )
    try:
        outcome = release(cfg.load(path))
        assert outcome.version == 2 and outcome.rows_published == 16
        assert sorted(db.query(f'SELECT DISTINCT veil_version FROM "{out}".people_rows')) == [(1,), (2,)]
        assert len(db.query(f'SELECT * FROM "{mine}".latest')) == 16
        assert db.query(f'SELECT version FROM "{out}".people_releases WHERE "current"') == [(2,)]
        res = run_veil("rollback", "--config", str(path), "--to", "1")
        assert res.returncode == 0, res.stderr
        assert sorted(db.query(f'SELECT zip, age, disease FROM "{out}".people')) == sorted(labels)
    finally:
        db.execute(f'DROP SCHEMA IF EXISTS "{mine}" CASCADE')
