"""The release job end to end on DuckDB and PostgreSQL: catalog, versions, views, verification, failure
injection at every step, a killed process, concurrency, read-only source role, grants."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import time
import uuid

import pytest
import sqlalchemy as sa

from veil import catalog
from veil import config as cfg
from veil.backends import open_backend
from tests.conftest import PG_URL, Db, error_line, inpatient_body, run_veil
from tests import prewarmed

RELEASE = """
[[models]]
type = "distinct-l-diversity"
l = 2

[search]
max_suppression = 0.34

[release]
name = "inpatient"
schema = "{out}"
catalog_schema = "{cat}"
drop_columns = ["id"]
"""


def setup(db: Db, extra: str = "") -> tuple[str, str, str]:
    """Config path, output schema, catalog schema (unique per PostgreSQL test)."""
    out = "published" if db.kind == "duckdb" else f"{db.schema}_pub"
    cat = "veil" if db.kind == "duckdb" else f"{db.schema}_cat"
    path = db.write_config("patients", inpatient_body() + RELEASE.format(out=out, cat=cat) + extra)
    if db.kind == "postgres":
        db.cleanup_schemas = [out, cat]  # type: ignore[attr-defined]
    return str(path), out, cat


@pytest.fixture
def pg_cleanup(db: Db):
    yield
    for schema in getattr(db, "cleanup_schemas", []):
        db.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def veil(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_veil(*args, env=env)


def views(db: Db, out: str) -> dict[str, list[tuple]]:
    return {
        "latest": sorted(db.query(f'SELECT zip, age, nationality, condition FROM "{out}".inpatient')),
        "releases": db.query(
            f'SELECT version, rows_published, rows_suppressed, node FROM "{out}".inpatient_releases ORDER BY version'
        ),
    }


def catalog_rows(db: Db, cat: str) -> list[tuple]:
    return db.query(f'SELECT status, version, error FROM "{cat}".releases ORDER BY started_at')


@pytest.mark.notimpl(
    ["spark"], reason=("reads the published view's columns from information_schema.columns, which Spark lacks")
)
def test_release_query_change_rerun(inpatient: Db, pg_cleanup) -> None:
    path, out, cat = setup(inpatient)
    assert veil("init", "--config", path).returncode == 0
    res = veil("release", "--config", path, "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["status"] == "published" and doc["version"] == 1 and doc["node"] == [1, 2, 1]
    assert doc["rows_published"] == 12 and doc["rows_suppressed"] == 0
    assert doc["achieved"] == {"k-anonymity": 4.0, "distinct-l-diversity:condition": 3.0}
    v = views(inpatient, out)
    assert ("1305*", "<40", "*", "Cancer") in v["latest"] and len(v["latest"]) == 12
    assert v["releases"] == [(1, 12, 0, "[1, 2, 1]")]
    # no direct identifier, no unlisted column
    cols = [
        r[0]
        for r in inpatient.query(
            f"SELECT column_name FROM information_schema.columns WHERE table_schema = '{out}' AND table_name = 'inpatient'"
        )
    ]
    assert sorted(cols) == ["age", "condition", "nationality", "zip"]
    blocks = inpatient.query(
        f'SELECT zip, age, nationality, block_size, condition, count FROM "{out}".inpatient_blocks '
        "WHERE zip = '1485*'"
    )
    assert sorted(blocks) == [
        ("1485*", ">=40", "*", 4, "Cancer", 1),
        ("1485*", ">=40", "*", 4, "Heart Disease", 1),
        ("1485*", ">=40", "*", 4, "Viral Infection", 2),
    ]

    # unchanged rerun: exit 0, nothing published, a skipped row in the catalog
    res = veil("release", "--config", path, "--json")
    assert res.returncode == 0 and json.loads(res.stdout)["status"] == "skipped"
    assert views(inpatient, out)["releases"] == [(1, 12, 0, "[1, 2, 1]")]

    # the source changes: version 2, views repointed, history kept
    inpatient.execute(sa.text(f"INSERT INTO \"{inpatient.schema}\".patients VALUES (13, '13053', 33, 'Indian', 'Flu')"))
    res = veil("release", "--config", path, "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["status"] == "published" and doc["version"] == 2
    v = views(inpatient, out)
    # series = "cohort" (the default): the newcomer alone would be the difference of the two versions: he waits
    assert doc["rows_deferred"] == 1 and doc["series"]["waiting"]["too few"] == 1
    assert len(v["latest"]) + doc["rows_suppressed"] + doc["rows_deferred"] == 13
    assert [r[0] for r in v["releases"]] == [1, 2]
    assert len(inpatient.query(f'SELECT * FROM "{out}".inpatient_v1')) == 12  # the old version is kept
    assert [s for s, _, _ in catalog_rows(inpatient, cat)] == ["published", "skipped", "published"]
    # --force publishes even when unchanged
    res = veil("release", "--config", path, "--force", "--json")
    assert json.loads(res.stdout)["version"] == 3
    if inpatient.kind == "postgres":  # the blocks table was analyzed with version 3 in it, before its recount
        stats = inpatient.query(
            f"SELECT most_common_vals::text FROM pg_stats WHERE schemaname = '{out}' "
            "AND tablename = 'inpatient_block_rows' AND attname = 'veil_version'"
        )
        assert stats and "3" in stats[0][0].strip("{}").split(","), stats


@pytest.mark.spark_too
def test_release_needs_init(inpatient: Db, pg_cleanup) -> None:
    path, _, _ = setup(inpatient)
    res = veil("release", "--config", path)
    assert res.returncode == 1 and "veil init" in error_line(res.stderr)


@pytest.mark.notimpl(
    ["spark"], reason=("catalog_rows looks for the catalog table in information_schema.tables, which Spark lacks")
)
def test_no_node_satisfies_exit_2(inpatient: Db, pg_cleanup) -> None:
    path, out, cat = setup(inpatient, '\n[[models]]\ntype = "distinct-l-diversity"\nl = 4\n')
    veil("init", "--config", path)
    res = veil("release", "--config", path)
    assert res.returncode == 2, res.stderr
    assert "distinct l-diversity (l=4) on condition fails" in res.stderr and "best level reached: 3" in res.stderr
    assert "k-anonymity" not in res.stderr
    assert catalog_rows(inpatient, cat)[0][0] == "failed"
    assert inpatient.query(f"SELECT count(*) FROM information_schema.tables WHERE table_schema = '{out}'") == [(0,)]


@pytest.mark.parametrize("step", ["search", "materialize", "verify", "views", "catalog", "corrupt"])
@pytest.mark.notimpl(
    ["spark"],
    reason=(
        "changes the source with DELETE, which Spark's tables refuse; the "
        "autocommit publication's failures, kills and orphans are "
        "tests/spark/test_release_spark.py's"
    ),
)
def test_failure_at_any_step_keeps_the_previous_release(inpatient: Db, pg_cleanup, step: str) -> None:
    path, out, cat = setup(inpatient)
    veil("init", "--config", path)
    assert veil("release", "--config", path).returncode == 0
    before = views(inpatient, out)
    tables_before = inpatient.objects()
    inpatient.execute(sa.text(f'DELETE FROM "{inpatient.schema}".patients WHERE id = 1'))
    res = veil("release", "--config", path, env={"VEIL_FAILPOINT": step})
    assert res.returncode == 1
    line = error_line(res.stderr)
    assert ("verification failed" in line) if step == "corrupt" else (f"injected failure at step '{step}'" in line)
    assert views(inpatient, out) == before
    assert inpatient.objects() == tables_before  # no partial table visible
    statuses = catalog_rows(inpatient, cat)
    assert [s for s, _, _ in statuses] == ["published", "failed"]
    assert statuses[1][2] == line
    # and the next run publishes version 2
    res = veil("release", "--config", path, "--json")
    assert res.returncode == 0 and json.loads(res.stdout)["version"] == 2


@pytest.mark.notimpl(
    ["spark"],
    reason=(
        "changes the source with DELETE, which Spark's tables refuse; the "
        "autocommit publication's failures, kills and orphans are "
        "tests/spark/test_release_spark.py's"
    ),
)
def test_killed_process_leaves_previous_release_and_consistent_catalog(inpatient: Db, pg_cleanup) -> None:
    path, out, cat = setup(inpatient)
    veil("init", "--config", path)
    assert veil("release", "--config", path).returncode == 0
    before = views(inpatient, out)
    tables_before = inpatient.objects()
    inpatient.execute(sa.text(f'DELETE FROM "{inpatient.schema}".patients WHERE id = 2'))
    env = {**os.environ, "VEIL_FAILPOINT": "pause:materialize", "VEIL_FAILPOINT_SECONDS": "60"}
    proc = prewarmed.Popen(["release", "--config", path], env=env)
    assert proc.stderr is not None
    for line in proc.stderr:  # its log: mid-release once it materializes (running row committed, snapshot taken)
        if "materializing" in line:
            break
    time.sleep(0.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert views(inpatient, out) == before
    assert inpatient.objects() == tables_before
    res = veil("release", "--config", path, "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["version"] == 2
    statuses = catalog_rows(inpatient, cat)
    assert [s for s, _, _ in statuses] == ["published", "failed", "published"]
    assert "interrupted" in statuses[1][2]


def test_two_concurrent_releases_publish_once(inpatient: Db, pg_cleanup) -> None:
    path, out, cat = setup(inpatient)
    veil("init", "--config", path)
    env = {**os.environ, "VEIL_FAILPOINT": "pause:materialize", "VEIL_FAILPOINT_SECONDS": "3"}
    procs = [prewarmed.Popen(["release", "--config", path, "--json"], env=env) for _ in range(2)]
    results = [p.communicate(timeout=120) + (p.returncode,) for p in procs]
    codes = sorted(r[2] for r in results)
    assert codes == [0, 1], results
    loser = next(r for r in results if r[2] == 1)
    assert "another" in error_line(loser[1])
    assert [r[0] for r in views(inpatient, out)["releases"]] == [1]


def test_source_schema_is_never_written(inpatient: Db, pg_cleanup) -> None:
    path, out, cat = setup(inpatient)
    everything = inpatient.objects()
    before = {t for t in everything if t[0] == inpatient.schema}
    veil("init", "--config", path)
    assert veil("release", "--config", path).returncode == 0
    assert {t for t in inpatient.objects() if t[0] == inpatient.schema} == before
    created = {s for s, _ in inpatient.objects()} - {s for s, _ in everything}
    assert created == {out, cat}


@pytest.mark.parametrize("db", ["duckdb"], indirect=True)  # PostgreSQL grants: test_read_only_source_role_and_grants
def test_grants_on_duckdb_are_a_clear_error(inpatient: Db, pg_cleanup) -> None:
    path, out, cat = setup(inpatient)
    text = open(path).read().replace("[release]", '[release]\ngrant_select_to = ["analyst"]')
    open(path, "w").write(text)
    veil("init", "--config", path)
    res = veil("release", "--config", path)
    assert res.returncode == 1 and "grant_select_to" in res.stderr and "DuckDB" in res.stderr


@pytest.mark.parametrize("db", ["postgres"], indirect=True)  # roles: PostgreSQL only (DuckDB: the test above)
def test_read_only_source_role_and_grants(db: Db, pg_cleanup) -> None:
    from veil.demo import inpatient_rows
    from tests.conftest import INPATIENT_COLUMNS

    db.create_table("patients", INPATIENT_COLUMNS, inpatient_rows())
    role, analyst = f"veil_ro_{uuid.uuid4().hex[:8]}", f"analyst_{uuid.uuid4().hex[:8]}"
    database = sa.make_url(PG_URL).database  # VEIL_TEST_PG_URL's database
    db.execute(
        f'CREATE ROLE "{role}" LOGIN',
        f'CREATE ROLE "{analyst}" LOGIN',
        f'GRANT USAGE ON SCHEMA "{db.schema}" TO "{role}"',
        f'GRANT SELECT ON ALL TABLES IN SCHEMA "{db.schema}" TO "{role}"',
        f'GRANT CREATE ON DATABASE "{database}" TO "{role}"',
    )
    try:
        path, out, cat = setup(db, "")
        text = open(path).read().replace("[release]", '[release]\ngrant_select_to = ["%s"]' % analyst)
        open(path, "w").write(text)
        url = sa.make_url(PG_URL).set(username=role).render_as_string(hide_password=False)
        env = {"VEIL_TEST_PG_URL": url}
        assert veil("init", "--config", path, env=env).returncode == 0
        res = veil("release", "--config", path, env=env)
        assert res.returncode == 0, res.stderr
        # the role could not have written to the source schema
        eng = sa.create_engine(url, poolclass=sa.pool.NullPool)
        with pytest.raises(sa.exc.ProgrammingError):
            with eng.begin() as c:
                c.execute(sa.text(f'CREATE TABLE "{db.schema}".x (a int)'))
        eng.dispose()
        # the analyst reads the views
        aurl = sa.make_url(PG_URL).set(username=analyst)
        eng = sa.create_engine(aurl, poolclass=sa.pool.NullPool)
        with eng.connect() as c:
            assert c.execute(sa.text(f'SELECT count(*) FROM "{out}".inpatient')).scalar() == 12
        eng.dispose()
    finally:
        for schema in (f"{db.schema}_pub", f"{db.schema}_cat"):
            db.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        db.execute(
            f'REVOKE ALL ON DATABASE "{database}" FROM "{role}"',
            f'DROP OWNED BY "{role}"',
            f'DROP OWNED BY "{analyst}"',
            f'DROP ROLE "{role}"',
            f'DROP ROLE "{analyst}"',
        )


@pytest.mark.notimpl(
    ["spark"],
    raises=AssertionError,
    reason=(
        "Alembic cannot run on Spark (Backend.migrations): veil init creates the catalog at the "
        "head revision, 0009, not at 0001"
    ),
)
def test_catalog_upgrade_from_the_first_migration(db: Db, pg_cleanup) -> None:
    cat = "veil" if db.kind == "duckdb" else f"{db.schema}_cat"
    if db.kind == "postgres":
        db.cleanup_schemas = [cat]  # type: ignore[attr-defined]
    backend = open_backend(db.url)
    backend.create_missing = True  # a fresh DuckDB file (Veil's commands refuse a missing one)
    with backend.session() as s:
        assert catalog.upgrade(s, cat, "0001") == (None, "0001")
        s.execute(
            sa.text(
                f'INSERT INTO "{cat}".releases (id, name, status, started_at, config, config_hash) '
                "VALUES ('r1', 'old', 'published', CURRENT_TIMESTAMP, 'x', 'h')"
            )
        )
        s.commit()
        assert catalog.upgrade(s, cat) == ("0001", catalog.HEAD)
        releases = catalog.tables(cat).releases
        rows = s.rows(sa.select(releases.c.name, releases.c.backend, releases.c.rows_deferred))
        assert rows == [("old", None, None)]
        assert catalog.upgrade(s, cat) == (catalog.HEAD, catalog.HEAD)
        indexes = (
            "SELECT index_name FROM duckdb_indexes() WHERE schema_name = 'veil'"
            if db.kind == "duckdb"
            else f"SELECT indexname FROM pg_indexes WHERE schemaname = '{cat}' AND tablename = 'series_cells'"
        )
        # the ledger's open cells are indexed where the backend indexes by version (migrations/versions/0005)
        assert [n for (n,) in s.rows(sa.text(indexes)) if n == "series_cells_open"] == (
            [] if db.kind == "duckdb" else ["series_cells_open"]
        )


def test_uncounted_sensitive_column_follows_the_null_policy(db: Db, pg_cleanup) -> None:
    """A sensitive column no model reads is published but not counted; its NULLs still follow the policy."""
    from veil.demo import inpatient_rows
    from tests.conftest import INPATIENT_COLUMNS

    rows = [(*r, "w1" if r[0] % 3 else "w2") for r in inpatient_rows()] + [(13, "13053", 33, "Indian", "Cancer", None)]
    db.create_table("patients", {**INPATIENT_COLUMNS, "ward": sa.String}, rows)
    body = inpatient_body().replace('columns = ["condition"]', 'columns = ["condition", "ward"]')
    body = body.replace('type = "k-anonymity"', 'type = "k-anonymity"').replace("k = 4", "k = 4") + RELEASE.format(
        out="published" if db.kind == "duckdb" else f"{db.schema}_pub",
        cat="veil" if db.kind == "duckdb" else f"{db.schema}_cat",
    ).replace('type = "distinct-l-diversity"', 'type = "distinct-l-diversity"\nattribute = "condition"')
    if db.kind == "postgres":
        db.cleanup_schemas = [f"{db.schema}_pub", f"{db.schema}_cat"]  # type: ignore[attr-defined]
    path = db.write_config("patients", body)
    assert veil("init", "--config", str(path)).returncode == 0
    res = veil("release", "--config", str(path))
    assert res.returncode == 1 and "'ward' (1 rows)" in res.stderr
    path = db.write_config("patients", body, source_extra='nulls = "drop"\n')
    res = veil("release", "--config", str(path), "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["rows_published"] + doc["rows_suppressed"] == 12


@pytest.mark.parametrize(
    "line, message",
    [
        ('series = "maybe"', "[release] key 'series' must be one of 'cohort', 'refuse', 'off', got 'maybe'"),
        (
            'series = "defer"',
            '[release] key \'series\' "defer" was replaced by "cohort" (its padding depended on a '
            'leaver\'s values, so a reader could replay it: docs/series.md §4); write series = "cohort"',
        ),
        ("keep_versions = 0", "[release] key 'keep_versions' must be at least 1 (the current version), got 0"),
        ('keep_versions = "3"', "[release] key 'keep_versions' must be a whole number, got str '3'"),
    ],
)
def test_series_and_keep_versions_are_validated(tmp_path, line: str, message: str) -> None:
    path = tmp_path / "veil.toml"
    path.write_text(
        f'[source]\nurl = "duckdb:///w.duckdb"\ntable = "raw.t"\n{inpatient_body()}\n[release]\nname = "x"\n{line}\n'
    )
    with pytest.raises(cfg.ConfigError) as err:
        cfg.load(path)
    assert str(err.value) == f"{path}: {message}"
    path.write_text(path.read_text().replace(line, ""))
    rel = cfg.load(path).release
    assert rel is not None and (rel.series, rel.keep_versions) == ("cohort", 10)


NT_BODY = """
[[quasi_identifiers]]
column = "zip"
hierarchy = { taxonomy = { "z1" = ["A", "*"], "z2" = ["A", "*"], "z3" = ["B", "*"] } }

[sensitive]
columns = ["s"]

[[models]]
type = "k-anonymity"
k = 2

[[models]]
type = "nt-closeness"
n = 3
t = 0.2
distance = "equal"

[search]
metric = "height"
max_suppression = 0.2
"""


def test_nt_closeness_achieved_level_uses_supersets_of_the_original_table(db: Db, release_schemas) -> None:
    """Issue 9: the (n,t) level a release records is over the released blocks, with natural supersets of the
    ORIGINAL table (suppressed rows included, docs/models.md).  z1 {a} is suppressed (k = 2); z2 {a, b} has 2 < n
    rows and passes through its superset A = z1 ∪ z2 = {a, a, b}: EMD = ½(|½ - ⅔| + |½ - ⅓|) = 1/6.  Counting
    the released rows only, A = {a, b} would be too small and the table {a, b, b, b, b} gives 0.3."""
    import sqlalchemy as sa

    db.create_table(
        "cells",
        {"id": sa.Integer, "zip": sa.Text, "s": sa.Text},
        [(1, "z1", "a"), (2, "z2", "a"), (3, "z2", "b"), (4, "z3", "b"), (5, "z3", "b"), (6, "z3", "b")],
    )
    path = db.write_config("cells", NT_BODY + release_schemas.section(name="cells") + 'series = "refuse"\n')
    assert run_veil("init", "--config", str(path)).returncode == 0
    res = run_veil("release", "--config", str(path), "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["node"] == [0] and doc["rows_suppressed"] == 1 and doc["rows_published"] == 5
    assert doc["achieved"]["nt-closeness:s"] == pytest.approx(1 / 6, abs=1e-12)


@pytest.mark.notimpl(
    ["spark"],
    raises=AssertionError,
    reason=(
        "no scratch database or work schema: Spark's working tables are cached session views "
        "(Session.scratch answers None)"
    ),
)
def test_a_release_with_its_working_tables_in_scratch_publishes_what_temporary_ones_do(
    inpatient: Db, pg_cleanup, monkeypatch
) -> None:
    """Working tables in DuckDB's scratch database or PostgreSQL's unlogged work schema (forced here, chosen for
    big bases) inside the release's snapshot transaction: the same node and rows as with temporary tables, and
    nothing left behind."""
    from veil.backends.duckdb import DuckDBSession
    from veil.backends.postgres import PostgresSession
    from veil.release import init, release

    path, out, cat = setup(inpatient)
    init(cfg.load(path))
    plain = release(cfg.load(path))
    used: list[str | None] = []
    for kind in (DuckDBSession, PostgresSession):

        def forced(self, needed, threshold=None, scratch=kind.scratch):
            used.append(scratch(self, needed, 0))
            return used[-1]

        monkeypatch.setattr(kind, "scratch", forced)
    scratched = release(cfg.load(path), force=True)
    assert used and all(u and u.startswith("veil_work_") for u in used), used
    assert (scratched.version, scratched.node, scratched.rows_published, scratched.rows_suppressed) == (
        2,
        plain.node,
        plain.rows_published,
        plain.rows_suppressed,
    )
    assert sorted(inpatient.query(f'SELECT zip, age, nationality, condition FROM "{out}".inpatient_v2')) == sorted(
        inpatient.query(f'SELECT zip, age, nationality, condition FROM "{out}".inpatient_v1')
    )
    assert list(inpatient.workdir.glob(".veil-work-*")) == []
    if inpatient.kind == "postgres":
        assert not inpatient.query(f"SELECT nspname FROM pg_namespace WHERE nspname = '{used[0]}'")


def test_a_hierarchy_text_is_recorded_once(inpatient: Db, pg_cleanup) -> None:
    """Every run records the hierarchies it loaded; their ARX text only the first time (catalog revision 0008),
    so the table no longer grows by the hierarchies' size a night.  (``series = "off"``: the newcomer of the second
    version is published at once on every backend, Spark's too, whose only other policy refuses him.)"""
    db = inpatient
    path, _out, cat = setup(db, 'series = "off"\n')
    assert veil("init", "--config", path).returncode == 0
    assert veil("release", "--config", path).returncode == 0
    db.execute(f"INSERT INTO \"{db.schema}\".patients VALUES (13, '13053', 33, 'Indian', 'Flu')")
    res = veil("release", "--config", path, "--json")
    assert res.returncode == 0 and json.loads(res.stdout)["version"] == 2, res.stderr
    rows = db.query(
        f'SELECT r.version, h.attribute, h.definition, h.digest FROM "{cat}".hierarchies h '
        f'JOIN "{cat}".releases r ON r.id = h.release_id ORDER BY r.version, h.attribute'
    )
    first = [(a, text, digest) for v, a, text, digest in rows if v == 1]
    second = [(a, text, digest) for v, a, text, digest in rows if v == 2]
    assert [a for a, _t, _d in first] == ["age", "nationality", "zip"]
    assert all(text and digest == hashlib.sha256(text.encode()).hexdigest() for _a, text, digest in first)
    assert first[0][1].split("\n")[:2] == ["0;<30;<40;*", "1;<30;<40;*"]  # a line per leaf, its labels upward
    assert second == [(a, None, digest) for a, _t, digest in first]


@pytest.mark.notimpl(
    ["spark"],
    raises=AssertionError,
    reason="Spark's catalog tables take appends only: the texts of expired versions stay (docs/spark.md §8)",
)
def test_expired_versions_hierarchy_texts_are_forgotten(inpatient: Db, pg_cleanup) -> None:
    """A ``mask`` hierarchy is built from the ZIP codes present, so a new ZIP code is a new text; once no published
    version uses a text (``keep_versions = 1``), the catalog clears it, and writes it again if it returns."""
    from tests.conftest import INPATIENT_COLUMNS
    from veil.demo import inpatient_rows

    db = inpatient
    path, _out, cat = setup(db, 'series = "off"\nkeep_versions = 1\n')
    assert veil("init", "--config", path).returncode == 0
    newcomer = (13, "13069", 33, "Indian", "Flu")
    for rows in (None, [*inpatient_rows(), newcomer], inpatient_rows()):  # then the 12 rows again
        if rows is not None:
            db.replace_rows("patients", INPATIENT_COLUMNS, rows)
        res = veil("release", "--config", path, "--json")
        assert res.returncode == 0, res.stderr
    rows = db.query(
        f'SELECT r.version, r.status, h.attribute, h.definition, h.digest FROM "{cat}".hierarchies h '
        f'JOIN "{cat}".releases r ON r.id = h.release_id ORDER BY r.version, h.attribute'
    )
    digest = {(v, a): d for v, _s, a, _t, d in rows}
    assert [(v, s) for v, s, a, _t, _d in rows if a == "zip"] == [(1, "expired"), (2, "expired"), (3, "published")]
    assert digest[1, "zip"] == digest[3, "zip"] != digest[2, "zip"]  # the ZIP codes of version 1 again
    texts = {(v, a): t for v, _s, a, t, _d in rows if t is not None}
    # version 3's digests each have their text once; version 2's ZIP text (no published version uses it) is gone
    assert sorted(texts) == [(1, "age"), (1, "nationality"), (3, "zip")], sorted(texts)
    assert all(hashlib.sha256(t.encode()).hexdigest() == digest[key] for key, t in texts.items())
    assert "13069" not in "".join(texts.values())


@pytest.mark.notimpl(
    ["spark"],
    raises=AssertionError,
    reason="Alembic cannot run on Spark (Backend.migrations): veil init creates the catalog at the head revision",
)
def test_catalog_0008_keeps_each_hierarchy_text_once(db: Db, pg_cleanup) -> None:
    cat = "veil" if db.kind == "duckdb" else f"{db.schema}_cat"
    if db.kind == "postgres":
        db.cleanup_schemas = [cat]  # type: ignore[attr-defined]
    backend = open_backend(db.url)
    backend.create_missing = True
    with backend.session() as s:
        assert catalog.upgrade(s, cat, "0007") == (None, "0007")
        insert = sa.text(
            f'INSERT INTO "{cat}".hierarchies (release_id, attribute, height, source, leaves, definition) '
            "VALUES (:r, :a, 1, 'csv', 2, :d)"
        )
        for rid, attribute, text in [("r1", "age", "1;*\n2;*"), ("r2", "age", "1;*\n2;*"), ("r2", "zip", "z;*")]:
            s.execute(insert, "adding a hierarchy", {"r": rid, "a": attribute, "d": text})
        s.commit()
        assert catalog.upgrade(s, cat) == ("0007", catalog.HEAD)
        listed = sa.text(f'SELECT release_id, attribute, definition, digest FROM "{cat}".hierarchies ORDER BY 1, 2')
        rows = s.rows(listed)
        sha = {t: hashlib.sha256(t.encode()).hexdigest() for t in ("1;*\n2;*", "z;*")}
        assert rows == [
            ("r1", "age", "1;*\n2;*", sha["1;*\n2;*"]),
            ("r2", "age", None, sha["1;*\n2;*"]),
            ("r2", "zip", "z;*", sha["z;*"]),
        ]
        # back to 0007: every row has its text again
        from alembic import command
        from alembic.config import Config as AlembicConfig

        alembic = AlembicConfig()
        alembic.set_main_option("script_location", str(catalog.migrations_dir()))
        alembic.attributes.update(connection=s.conn, schema=cat, version_indexes=s.backend.version_indexes)
        command.downgrade(alembic, "0007")
        s.commit()
        texts = s.rows(sa.text(f'SELECT release_id, attribute, definition FROM "{cat}".hierarchies ORDER BY 1, 2'))
        assert texts == [("r1", "age", "1;*\n2;*"), ("r2", "age", "1;*\n2;*"), ("r2", "zip", "z;*")]
        assert catalog.revision(s, cat) == "0007"


@pytest.mark.spark_too
def test_a_run_reads_the_releases_runs_once(inpatient: Db, pg_cleanup, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runs of the release are read once under the lock (``veil.release.runs``): they number the version,
    tell an unchanged source, and say which versions expire (``keep_versions = 2``); interrupted runs are closed
    only where some are still ``running`` (one statement less a night; on Spark a job of 0.2–0.5 s each)."""
    from veil.queries import catalog as qc
    from veil.release import release
    from veil.release.process import now

    path, out, cat = setup(inpatient, "keep_versions = 2\n")
    assert veil("init", "--config", path).returncode == 0
    calls: list[str] = []
    for fn in ("runs_of", "close_interrupted"):
        real = getattr(qc, fn)
        monkeypatch.setattr(qc, fn, lambda *a, _f=fn, _real=real: calls.append(_f) or _real(*a))
    conf = cfg.load(path)
    versions = [release(conf, force=True).version for _ in range(3)]
    assert versions == [1, 2, 3] and calls == ["runs_of"] * 3
    assert release(conf).status == "skipped" and calls == ["runs_of"] * 4  # same source, same config
    assert [v for v, _r, _s, _n in views(inpatient, out)["releases"]] == [1, 2, 3]
    assert [(s, v) for s, v, _e in catalog_rows(inpatient, cat) if v] == [
        ("expired", 1),
        ("published", 2),
        ("published", 3),
    ]

    backend = open_backend(conf.source.resolved_url())
    with backend.session() as session:  # a run killed mid-release left its row ``running``
        session.execute(qc.start_run(catalog.tables(cat).releases, "killed", "inpatient", now(), "", "", "x"), "")
        session.commit()
    calls.clear()
    assert release(conf, force=True).version == 4 and calls == ["runs_of", "close_interrupted"]
    statuses = {s for s, v, e in catalog_rows(inpatient, cat) if e and e.startswith("interrupted")}
    assert statuses == {"failed"}
