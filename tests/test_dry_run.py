"""``veil release --dry-run`` (issue 35): everything a release decides — version, node, rows published,
suppressed, deferred by the series step, the levels achieved — with nothing written: no catalog row (not even
``running``), no schema, no rows, no views, no ledger, on both backends; exactly what the real release then
publishes; and the release's lock respected like a run's."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Db, ReleaseSchemas, error_line, inpatient_body, run_veil
from tests import prewarmed

pytestmark = pytest.mark.notimpl(
    ["spark"],
    reason=(
        "release --dry-run rehearses a release in a transaction it rolls back; Spark commits every statement on its own "
        "and refuses it (docs/spark.md §2); the tests' state() also reads information_schema.schemata, which Spark lacks"
    ),
)

DECIDED = ("version", "node", "rows_published", "rows_suppressed", "rows_deferred", "achieved")


def state(db: Db, schemas: ReleaseSchemas) -> dict[str, Any]:
    """What a release could write: the schemas, every table and view, and every row of the publication's and
    the catalog's schemas (the catalog's runs, the pointer, the ledger, the rows and blocks tables)."""
    schemata = {
        s
        for (s,) in db.query("SELECT schema_name FROM information_schema.schemata")
        if db.kind == "duckdb" or str(s).startswith(db.schema)
    }  # other tests share the server
    objects = db.objects()
    rows = {
        f"{s}.{t}": sorted(map(repr, db.query(f'SELECT * FROM "{s}"."{t}"')))
        for s, t in sorted(objects)
        if s in (schemas.out, schemas.cat)
    }
    return {"schemata": schemata, "objects": objects, "rows": rows}


def release(path: str, *args: str) -> tuple[int, dict[str, Any], str]:
    res = run_veil("release", "--config", path, "--json", *args)
    return res.returncode, json.loads(res.stdout), res.stderr


def test_a_first_release_rehearsed_writes_nothing_and_predicts_the_release(
    inpatient: Db, release_schemas: ReleaseSchemas
) -> None:
    path = str(inpatient.write_config("patients", inpatient_body() + release_schemas.section()))
    assert run_veil("init", "--config", path).returncode == 0
    before = state(inpatient, release_schemas)
    code, rehearsed, stderr = release(path, "--dry-run")
    assert code == 0, stderr
    assert (rehearsed["status"], rehearsed["dry_run"], rehearsed["release_id"]) == ("would_publish", True, None)
    assert rehearsed["message"].startswith("dry run: would publish 'inpatient' version 1 at node [1, 2, 1]: 12 rows")
    assert rehearsed["message"].endswith("nothing was written")
    assert state(inpatient, release_schemas) == before  # no running row, no schema, no rows, no views
    assert release_schemas.out not in before["schemata"]
    code, published, stderr = release(path)
    assert code == 0 and published["status"] == "published", stderr
    assert {k: rehearsed[k] for k in DECIDED} == {k: published[k] for k in DECIDED}


def test_a_later_version_rehearsed_writes_nothing(inpatient: Db, release_schemas: ReleaseSchemas) -> None:
    path = str(inpatient.write_config("patients", inpatient_body() + release_schemas.section()))
    assert run_veil("init", "--config", path).returncode == 0
    assert release(path)[0] == 0
    unchanged = state(inpatient, release_schemas)
    code, skipped, _ = release(path, "--dry-run")  # nothing changed: a real run would record a skipped row
    assert (code, skipped["status"], skipped["dry_run"]) == (0, "skipped", True)
    assert skipped["message"].startswith("dry run: release 'inpatient' is unchanged since version 1")
    assert state(inpatient, release_schemas) == unchanged
    patients = f'"{inpatient.schema}".patients'
    inpatient.execute(
        f"INSERT INTO {patients} SELECT id + 100, zip, age, nationality, condition FROM {patients} WHERE id <= 4"
    )
    before = state(inpatient, release_schemas)
    code, rehearsed, stderr = release(path, "--dry-run")
    assert code == 0 and rehearsed["status"] == "would_publish" and rehearsed["version"] == 2, stderr
    assert state(inpatient, release_schemas) == before
    code, published, stderr = release(path)
    assert code == 0 and published["version"] == 2, stderr
    assert {k: rehearsed[k] for k in DECIDED} == {k: published[k] for k in DECIDED}
    assert rehearsed["series"]["policy"] == published["series"]["policy"]


def test_a_rehearsal_that_finds_no_node_exits_2_and_writes_nothing(
    inpatient: Db, release_schemas: ReleaseSchemas
) -> None:
    body = inpatient_body().replace("k = 4", "k = 13")
    path = str(inpatient.write_config("patients", body + release_schemas.section()))
    assert run_veil("init", "--config", path).returncode == 0
    before = state(inpatient, release_schemas)
    code, doc, stderr = release(path, "--dry-run")
    assert (code, doc["status"]) == (2, "no_solution")
    assert "no lattice node satisfies the models" in error_line(stderr)
    assert state(inpatient, release_schemas) == before


def test_a_rehearsal_waits_its_turn_like_a_release(
    inpatient: Db, release_schemas: ReleaseSchemas, tmp_path: Path
) -> None:
    """While a release runs (paused mid-materialize: it holds the lock, or the DuckDB file), a dry run without
    --wait fails at once naming what is busy and writes nothing; the paused release, stopped, leaves the way
    free for the next dry run."""
    path = str(inpatient.write_config("patients", inpatient_body() + release_schemas.section()))
    assert run_veil("init", "--config", path).returncode == 0
    mark = tmp_path / "paused"
    env = {
        **os.environ,
        "VEIL_FAILPOINT": "pause:materialize",
        "VEIL_FAILPOINT_SECONDS": "300",
        "VEIL_FAILPOINT_FILE": str(mark),
    }
    running = prewarmed.Popen(["release", "--config", path], env=env)
    try:
        deadline = time.monotonic() + 240
        while not mark.exists() and running.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # polls for the failpoint's file: the release is then mid-materialize
        assert mark.exists(), running.communicate()
        code, doc, stderr = release(path, "--dry-run")
        assert code == 1 and doc["status"] == "failed"
        line = error_line(stderr)
        busy = (
            "advisory lock held" if inpatient.kind == "postgres" else f"in use by another veil run, PID {running.pid}"
        )
        assert busy in line and "--wait" in line, line
    finally:
        if running.poll() is None:
            running.send_signal(signal.SIGTERM)
        running.communicate(timeout=120)
    before = state(inpatient, release_schemas)
    code, doc, stderr = release(path, "--dry-run")
    assert (code, doc["status"]) == (0, "would_publish"), stderr
    assert state(inpatient, release_schemas) == before
