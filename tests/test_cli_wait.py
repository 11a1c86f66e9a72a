"""A busy database: DuckDB's file lock held by a real second process (an analyst's connection), and a
concurrent release on both backends.  Every command that opens the warehouse fails at once with one line
naming the holder and what to do, or, with ``--wait S``, waits until the database is free.

The holder keeps the file until the test tells it to let go (a line on its stdin), never for a number of
seconds: on a loaded machine a command may take longer to start than any fixed hold (issue 35)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Db, ReleaseSchemas, error_line, inpatient_body, run_veil
from tests import prewarmed

HOLD = """
import sys, duckdb
con = duckdb.connect(sys.argv[1], read_only=sys.argv[2] == "ro")
print("holding", flush=True)
sys.stdin.readline()  # until the test says so (or is gone: end of file)
con.close()
print("released", flush=True)
"""


class Holder:
    """Another process that keeps the DuckDB file open (read-only, like an analyst's notebook) until
    ``release()`` (or ``stop()``)."""

    def __init__(self, path: str, mode: str = "ro") -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", HOLD, path, mode], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "holding"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def release(self) -> None:
        """Close the file now; returns once it is closed."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline().strip() == "released"
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)


@pytest.fixture
def duckdb_inpatient(tmp_path: Path) -> Iterator[tuple[Db, Path]]:
    """The inpatient table in a DuckDB file with a release config and an initialized catalog."""
    from veil.demo import inpatient_rows
    from tests.conftest import INPATIENT_COLUMNS

    db = Db("duckdb", f"duckdb:///{tmp_path / 'warehouse.duckdb'}", "raw", tmp_path)
    db.create_table("patients", INPATIENT_COLUMNS, inpatient_rows())
    path = db.write_config("patients", inpatient_body() + ReleaseSchemas("published", "veil").section())
    assert run_veil("init", "--config", str(path)).returncode == 0
    yield db, path


# `veil init` waits 60 s by default (two at once serialize, docs/publication.md §5): --wait 0 fails at once
@pytest.mark.parametrize(
    "command", [["counts", "--node", "1,1,1"], ["check"], ["search"], ["init", "--wait", "0"], ["release"]]
)
def test_a_reader_holding_the_file_is_named_in_one_line(duckdb_inpatient: tuple[Db, Path], command: list[str]) -> None:
    db, path = duckdb_inpatient
    holder = Holder(str(db.workdir / "warehouse.duckdb"))
    try:
        started = time.monotonic()
        res = run_veil(command[0], "--config", str(path), "--json", *command[1:])
        assert time.monotonic() - started < 60  # no --wait: fails at once
    finally:
        holder.stop()
    assert res.returncode == 1
    line = error_line(res.stderr)
    assert f"is locked by PID {holder.pid} (" in line and "warehouse.duckdb" in line
    assert "read-only connections" in line and "--wait" in line
    assert json.loads(res.stdout) == {"status": "failed", "error": line}


@pytest.mark.parametrize("command", [["counts", "--node", "1,1,1"], ["release"]])
def test_wait_retries_until_the_reader_is_gone(duckdb_inpatient: tuple[Db, Path], command: list[str]) -> None:
    """The command says it waits for the holder, the holder lets go only then, and the command goes on: no
    timing involved (the holder's release follows the command's "waiting" line)."""
    db, path = duckdb_inpatient
    holder = Holder(str(db.workdir / "warehouse.duckdb"))
    proc = prewarmed.Popen([command[0], "--config", str(path), "--wait", "300", "--json", *command[1:]])
    try:
        assert proc.stderr is not None
        seen = []
        for line in proc.stderr:  # until the command says it waits (or ends: then the assertion below fails)
            seen.append(line)
            if "waiting up to 300 s" in line:
                break
        assert any(f"PID {holder.pid}" in line and "waiting up to 300 s" in line for line in seen), "".join(seen)
        assert proc.poll() is None  # still waiting: the holder has not let go yet
        holder.release()
        out, rest = proc.communicate(timeout=300)
    finally:
        holder.stop()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, "".join(seen) + rest
    assert json.loads(out)["status"] in ("ok", "published")


def test_wait_gives_up_after_the_deadline(duckdb_inpatient: tuple[Db, Path]) -> None:
    db, path = duckdb_inpatient
    holder = Holder(str(db.workdir / "warehouse.duckdb"), mode="rw")
    try:
        started = time.monotonic()
        res = run_veil("release", "--config", str(path), "--wait", "3")
        waited = time.monotonic() - started
    finally:
        holder.stop()
    assert res.returncode == 1 and 3 <= waited < 60
    assert error_line(res.stderr).count("(still busy after waiting 3 s)") == 1


def test_concurrent_releases_with_wait_both_succeed(inpatient: Db, release_schemas: ReleaseSchemas) -> None:
    """Two runs at once, the second with --wait: on DuckDB it waits for the file, on PostgreSQL for the
    release lock; the first publishes, the second then finds nothing changed."""
    path = str(inpatient.write_config("patients", inpatient_body() + release_schemas.section()))
    assert run_veil("init", "--config", path).returncode == 0
    env = {**os.environ, "VEIL_FAILPOINT": "pause:materialize", "VEIL_FAILPOINT_SECONDS": "3"}
    procs = [prewarmed.Popen(["release", "--config", path, "--wait", "120", "--json"], env=env) for _ in range(2)]
    results = [p.communicate(timeout=240) + (p.returncode,) for p in procs]
    assert [r[2] for r in results] == [0, 0], results
    assert sorted(json.loads(r[0])["status"] for r in results) == ["published", "skipped"]
    assert [r[0] for r in inpatient.query(f'SELECT version FROM "{release_schemas.out}".inpatient_releases')] == [1]
