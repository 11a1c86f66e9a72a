"""``veil.backends.scratch``: DuckDB size settings read, the scratch folder chosen, and a killed run's scratch
files deleted by the next run while a live run's are kept."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from veil.backends.scratch import PREFIX, Scratch, folder, parse_bytes, sweep


def test_duckdb_sizes_in_bytes() -> None:
    assert parse_bytes("488.2 MiB") == int(488.2 * 2**20)
    assert parse_bytes("4GB") == 4_000_000_000 and parse_bytes("1.5 GiB") == 3 * 2**29
    assert parse_bytes("134217728B") == 134_217_728 and parse_bytes("0 bytes") == 0
    with pytest.raises(ValueError, match="not a DuckDB size"):
        parse_bytes("lots")


def test_scratch_goes_beside_the_warehouse_or_into_the_temp_directory(tmp_path: Path) -> None:
    assert folder(str(tmp_path / "w.duckdb"), None) == tmp_path.resolve()
    assert folder(str(tmp_path / "w.duckdb"), str(tmp_path / "spill")) == tmp_path / "spill"
    assert folder(":memory:", None) is None and folder(None, None) is None and folder("md:x", None) is None


def test_a_killed_runs_scratch_files_are_deleted_and_a_live_runs_kept(tmp_path: Path) -> None:
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    dead = int(ended.stdout)  # that process has exited
    stale = [tmp_path / f"{PREFIX}{dead}-0a0a0a0a.duckdb", tmp_path / f"{PREFIX}{dead}-0a0a0a0a.duckdb.wal"]
    mine = tmp_path / f"{PREFIX}{os.getpid()}-0b0b0b0b.duckdb"
    other = tmp_path / "warehouse.duckdb"
    for f in (*stale, mine, other):
        f.write_bytes(b"x")
    fresh = Scratch.new(tmp_path)  # sweeps before naming its own file
    assert sorted(f.name for f in tmp_path.iterdir()) == sorted([mine.name, other.name])
    assert fresh.path.parent == tmp_path and fresh.path.name.startswith(f"{PREFIX}{os.getpid()}-")
    assert fresh.alias.startswith(f"veil_work_{os.getpid()}_") and not fresh.path.exists()
    fresh.path.write_bytes(b"x")
    fresh.path.with_name(fresh.path.name + ".wal").write_bytes(b"x")
    fresh.remove()
    assert sweep(tmp_path) == [] and sorted(f.name for f in tmp_path.iterdir()) == sorted([mine.name, other.name])


def test_duckdbs_memory_limit_error_says_how_to_raise_it(tmp_path: Path) -> None:
    """A statement that outgrows DuckDB's memory (here 20MB and no room to spill) fails in one line naming the
    limit and the URL setting that raises it — not the driver's multi-line advice."""
    import sqlalchemy as sa

    from veil.backends import open_backend
    from veil.errors import BackendError

    import duckdb

    duckdb.connect(str(tmp_path / "w.duckdb")).close()
    url = f"duckdb:///{tmp_path / 'w.duckdb'}?memory_limit=20MB&max_temp_directory_size=0KiB"
    big = sa.select(sa.func.count()).select_from(
        sa.select((sa.cast(sa.column("range"), sa.Text) + "x").label("v"))
        .select_from(sa.func.range(3_000_000))
        .distinct()
        .subquery()
    )
    with open_backend(url).session() as session:
        with pytest.raises(BackendError) as failed:
            session.scalar(big, "counting distinct values")
    message = str(failed.value)
    assert message.startswith("DuckDB failed while counting distinct values: Out of Memory Error")
    assert "memory_limit = 20MB (Veil's default 512MB)" in message and "?memory_limit=2GB" in message
    assert "\n" not in message


def test_a_duckdb_session_prints_no_progress_bar(tmp_path: Path) -> None:
    """DuckDB prints a progress bar on stdout for a statement over 2 s wherever it takes the process for
    interactive (``python -c``, a notebook), and stdout carries ``--json``: Veil's sessions turn it off.  Run
    as ``python -c``, where a bare DuckDB connection has it on."""
    path = tmp_path / "w.duckdb"
    code = (
        "import duckdb; from veil import queries as q; from veil.backends import open_backend\n"
        f"duckdb.connect({str(path)!r}).close()\n"
        "print(duckdb.connect().execute(\"SELECT current_setting('enable_progress_bar')\").fetchone()[0])\n"
        f"with open_backend('duckdb:///{path}').session() as s:\n"
        "    print(s.scalar(q.current_setting('enable_progress_bar'), 'reading a setting'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "False"], out
