"""Faults after a release's commit, and interrupts, on DuckDB and PostgreSQL (issue 33).

Once the pointer moved (the commit), the version is published whatever happens next.  A raised error, Ctrl-C
(SIGINT) or SIGTERM at every step boundary after the commit (``committed``: right after it, before the expired
versions' dimension views are dropped; ``cleanup-views``: before their version views are; ``cleaned``: after;
``report``: before the report) leaves the catalog row ``published``, the pointer on the new version, its rows
readable, and the command exits 0 with one warning line; the next run — a skipped one, or a release of a changed
source — finishes the clean-up (``keep_versions = 1``: the expired version's views gone).  ``run_case`` is the
scenario; ``bench/fault_table.py`` runs the same matrix and prints it as a table.

Also: Ctrl-C or SIGTERM while the database itself runs a long statement is recorded as ``interrupted: <what>``
(never DuckDB's "Query interrupted" as an internal error, never an empty reason); a Ctrl-C during DuckDB's own
import of pandas is an interrupt, not "'pandas' is required"; a failed or no-solution first release leaves no
schema; two ``veil init`` at once both succeed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from veil import config as cfg
from veil.errors import BackendError
from veil.release import init, release
from tests.conftest import LOG_LINE, Db, ReleaseSchemas, error_line, inpatient_body, run_veil
from tests import prewarmed

STEPS = ("committed", "cleanup-views", "cleaned", "report")
FAULTS = ("error", "SIGINT", "SIGTERM")
SIGNALS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM}
REASONS = {
    "error": "injected failure at step",
    "SIGINT": "interrupted: Ctrl-C (SIGINT)",
    "SIGTERM": "interrupted: terminated (SIGTERM)",
}
TIMEOUT = 180  # seconds: generous, the machines that run the suite are loaded


def warning_line(stderr: str) -> str:
    """The one warning of a command that succeeded with a warning: every stderr line a well-formed log line (no
    traceback), no ERROR, exactly one WARNING; its message is returned."""
    lines = stderr.splitlines()
    assert lines and all(LOG_LINE.match(line) for line in lines), stderr
    levels = [LOG_LINE.match(line).group(1) for line in lines]  # type: ignore[union-attr]
    assert "ERROR" not in levels and levels.count("WARNING") == 1, stderr
    return lines[levels.index("WARNING")].split(": ", 1)[1]


def config(db: Db, schemas: ReleaseSchemas) -> Path:
    """The inpatient release, keeping one version: each new version expires the one before."""
    return db.write_config("patients", inpatient_body() + schemas.section() + "keep_versions = 1\n")


def add_patient(db: Db, pid: int) -> None:
    db.execute(f"INSERT INTO \"{db.schema}\".patients VALUES ({pid}, '13053', 33, 'Indian', 'Flu')")


def signalled(
    args: list[str], env: dict[str, str], mark: Path, signum: int, settle: float = 0.0
) -> subprocess.CompletedProcess[str]:
    """Run ``veil <args>`` paused (or stalled) at a failpoint that creates ``mark``; once it is there (and
    ``settle`` seconds more), send ``signum``; the finished process."""
    proc = prewarmed.Popen([*args], env={**os.environ, **env})
    deadline = time.monotonic() + TIMEOUT
    while not mark.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if mark.exists():
        time.sleep(settle)
        proc.send_signal(signum)
    out, err = proc.communicate(timeout=TIMEOUT)
    assert mark.exists(), f"the run never reached its failpoint: {err}"
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def faulted(path: Path, step: str, fault: str, mark: Path) -> subprocess.CompletedProcess[str]:
    """``veil release`` with ``fault`` at ``step``: raised there, or a signal sent while it pauses there."""
    args = ["release", "--config", str(path)]
    if fault == "error":
        return run_veil(*args, env={"VEIL_FAILPOINT": step}, timeout=TIMEOUT)
    env = {"VEIL_FAILPOINT": f"pause:{step}", "VEIL_FAILPOINT_SECONDS": str(TIMEOUT), "VEIL_FAILPOINT_FILE": str(mark)}
    return signalled(args, env, mark, SIGNALS[fault])


def version_objects(db: Db, out: str, version: int) -> list[str]:
    """Version ``version``'s own views in ``out``: ``inpatient_v<N>``, its blocks and dimension views."""
    names = [n for (n,) in db.query(f"SELECT table_name FROM information_schema.tables WHERE table_schema = '{out}'")]
    own = f"inpatient_v{version}"
    return sorted(n for n in names if n == own or n.startswith(own + "_"))


def catalog_row(db: Db, cat: str, version: int) -> tuple[str, dict[str, Any]]:
    status, series = db.query(
        f"SELECT status, series FROM \"{cat}\".releases WHERE version = {version} AND status <> 'rollback'"
    )[0]
    return status, json.loads(series) if series else {}


@dataclass
class Case:
    """What one fault did, and what the next run did after it."""

    step: str
    fault: str
    next_run: str
    exit_code: int
    stderr: str
    status: str
    series: dict[str, Any]
    pointer: int
    rows: int
    rows_published: int
    listed: list[int]
    left_behind: list[str]
    next_exit: int
    next_status: str
    next_stderr: str
    left_after: list[str]
    expired: str


def run_case(db: Db, schemas: ReleaseSchemas, step: str, fault: str, next_run: str) -> Case:
    """Version 1 published; version 2 with ``fault`` at ``step`` after its commit; then the next run
    (``skipped``: nothing changed; ``changed``: a new patient) — and what each left."""
    path = config(db, schemas)
    out, cat = schemas.out, schemas.cat
    init(cfg.load(path))
    assert release(cfg.load(path)).version == 1
    add_patient(db, 13)
    res = faulted(path, step, fault, db.workdir / f"mark-{step}-{fault}")
    status, series = catalog_row(db, cat, 2)
    pointer = db.query(f"SELECT current_version FROM \"{cat}\".publications WHERE name = 'inpatient'")[0][0]
    rows = db.query(f'SELECT count(*) FROM "{out}".inpatient')[0][0]
    published = db.query(f'SELECT rows_published FROM "{cat}".releases WHERE version = 2')[0][0]
    listed = [v for (v,) in db.query(f'SELECT version FROM "{out}".inpatient_releases ORDER BY version')]
    left = version_objects(db, out, 1)
    if next_run == "changed":
        add_patient(db, 14)
    nxt = run_veil("release", "--config", str(path), "--json", timeout=TIMEOUT)
    next_status = json.loads(nxt.stdout)["status"] if nxt.stdout.strip() else "-"
    return Case(
        step,
        fault,
        next_run,
        res.returncode,
        res.stderr,
        status,
        series,
        pointer,
        rows,
        published,
        listed,
        left,
        nxt.returncode,
        next_status,
        nxt.stderr,
        version_objects(db, out, 1),
        catalog_row(db, cat, 1)[0],
    )


@pytest.mark.notimpl(
    ["spark"],
    raises=(AssertionError, IndexError),
    reason=(
        'its second version (one patient joins) is refused under series = "refuse", the default of the Spark fixture '
        "(docs/spark.md §7), before the step the fault is injected at; it also reads information_schema and the transactional layout's ``inpatient_rows``"
    ),
)
@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("step", STEPS)
def test_a_fault_after_the_commit_leaves_the_version_published(
    inpatient: Db, release_schemas: ReleaseSchemas, step: str, fault: str
) -> None:
    next_run = "changed" if fault == "SIGTERM" else "skipped"
    case = run_case(inpatient, release_schemas, step, fault, next_run)
    # the faulted run: published, exit 0, one warning naming what happened and that the next run cleans up
    assert case.exit_code == 0, case.stderr
    warning = warning_line(case.stderr)
    assert "version 2 is published" in warning and REASONS[fault] in warning and "next `veil release`" in warning
    assert case.status == "published" and case.series["cleanup"] == warning
    assert case.pointer == 2 and case.listed == [1, 2]  # published and expired versions
    assert case.rows == case.rows_published > 0
    # the fault landed where it says: before the expired version's views were dropped, or after
    assert bool(case.left_behind) == (step in ("committed", "cleanup-views")), case.left_behind
    # the next run finishes the clean-up: keep_versions = 1 honoured, nothing of version 1 left
    assert case.next_exit == 0, case.next_stderr
    assert case.next_status == ("published" if next_run == "changed" else "skipped")
    assert case.left_after == [] and case.expired == "expired"
    out = release_schemas.out
    assert inpatient.query(f'SELECT count(*) FROM "{out}".inpatient_rows WHERE veil_version = 1') == [(0,)]


@pytest.mark.notimpl(
    ["spark"],
    raises=AssertionError,
    reason=(
        'its second version (one patient joins) is refused under series = "refuse", the default of the Spark fixture '
        "(docs/spark.md §7), before the step the fault is injected at (tests/spark/test_spark_backend.py interrupts Spark's own statements)"
    ),
)
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_an_interrupt_inside_a_long_statement_is_recorded_as_interrupted(
    inpatient: Db, release_schemas: ReleaseSchemas, sig: str
) -> None:
    """The signal lands while the database runs a statement (``stall:materialize``: DuckDB hashing, PostgreSQL's
    pg_sleep): DuckDB swallows the handler's exception into "Query interrupted", psycopg cancels the statement;
    either way the row says why, in words, and the command prints one line."""
    path = config(inpatient, release_schemas)
    init(cfg.load(path))
    assert release(cfg.load(path)).version == 1
    add_patient(inpatient, 13)
    mark = inpatient.workdir / "stalled"
    env = {
        "VEIL_FAILPOINT": "stall:materialize",
        "VEIL_FAILPOINT_SECONDS": str(TIMEOUT),
        "VEIL_FAILPOINT_FILE": str(mark),
    }
    res = signalled(["release", "--config", str(path)], env, mark, SIGNALS[sig], settle=1.0)
    assert res.returncode == 1 and error_line(res.stderr) == "interrupted", res.stderr
    status, error = inpatient.query(f'SELECT status, error FROM "{release_schemas.cat}".releases ORDER BY started_at')[
        -1
    ]
    assert (status, error) == ("failed", f"{REASONS[sig]}; nothing was published"), res.stderr
    assert [v for (v,) in inpatient.query(f'SELECT version FROM "{release_schemas.out}".inpatient_releases')] == [1]


PANDAS_INTERRUPTED = """
import sys
import sqlalchemy as sa
from veil.backends import open_backend

class Interrupted:  # Ctrl-C landing while pandas is imported
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "pandas":
            raise KeyboardInterrupt
        return None

backend = open_backend("duckdb:///:memory:")
for name in [m for m in sys.modules if m.split(".")[0] == "pandas"]:
    del sys.modules[name]
sys.meta_path.insert(0, Interrupted())
with backend.session() as session:
    try:
        list(session.stream(sa.select(sa.literal(1).label("a")), [], 10))
    except KeyboardInterrupt:
        print("interrupted")
    except Exception as exc:
        print(type(exc).__name__, exc)
"""


def test_ctrl_c_during_duckdbs_import_of_pandas_is_an_interrupt() -> None:
    """DuckDB imports pandas on its first chunked fetch and reports any failed import as "'pandas' is required
    for this operation but it was not installed" — a Ctrl-C landing during that import included (issue 35)."""
    pytest.importorskip("pandas")
    res = subprocess.run([sys.executable, "-c", PANDAS_INTERRUPTED], capture_output=True, text=True, timeout=TIMEOUT)
    assert res.stdout.strip() == "interrupted", res.stdout + res.stderr


def schema_exists(db: Db, schema: str) -> bool:
    return bool(db.query(f"SELECT count(*) FROM information_schema.schemata WHERE schema_name = '{schema}'")[0][0])


@pytest.mark.notimpl(
    ["spark"],
    raises=BackendError,
    reason="the test lists schemas from information_schema.schemata, which Spark does not have",
)
@pytest.mark.parametrize("how", ["no-solution", "failure"])
def test_a_first_release_that_fails_leaves_no_schema(inpatient: Db, release_schemas: ReleaseSchemas, how: str) -> None:
    models = '\n[[models]]\ntype = "distinct-l-diversity"\nl = 4\n' if how == "no-solution" else ""
    path = inpatient.write_config("patients", inpatient_body() + models + release_schemas.section())
    assert run_veil("init", "--config", str(path)).returncode == 0
    res = run_veil("release", "--config", str(path), env={"VEIL_FAILPOINT": "verify"} if how == "failure" else {})
    assert res.returncode == (2 if how == "no-solution" else 1), res.stderr
    assert not schema_exists(inpatient, release_schemas.out)
    assert inpatient.query(f'SELECT status FROM "{release_schemas.cat}".releases') == [("failed",)]
    if how == "failure":  # and the next run creates it
        assert run_veil("release", "--config", str(path)).returncode == 0
        assert schema_exists(inpatient, release_schemas.out)


def test_two_inits_at_once_both_succeed(inpatient: Db, release_schemas: ReleaseSchemas) -> None:
    """docs/publication.md §5: two ``veil init`` at once serialize — on DuckDB the second waits for the file the
    first holds (each holds it 5 s here: ``pause:init``), on PostgreSQL for the advisory lock."""
    path = inpatient.write_config("patients", inpatient_body() + release_schemas.section())
    env = {**os.environ, "VEIL_FAILPOINT": "pause:init", "VEIL_FAILPOINT_SECONDS": "5"}
    procs = [prewarmed.Popen(["init", "--config", str(path)], env=env) for _ in range(2)]
    results = [(p.communicate(timeout=TIMEOUT)[1], p.returncode)[::-1] for p in procs]
    assert [code for code, _ in results] == [0, 0], results
    if inpatient.kind == "duckdb":  # one of them found the file held and waited for it
        assert any("waiting up to 60 s" in err for _, err in results), results
    assert inpatient.query(f'SELECT version_num FROM "{release_schemas.cat}".alembic_version')
