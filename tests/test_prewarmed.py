"""The forking server of tests/prewarmed.py: a command that hangs is reported with its stacks, not a bare timeout."""

from __future__ import annotations

import os
import time
from pathlib import Path

import duckdb
import pytest

from tests import prewarmed
from tests.conftest import inpatient_body


def test_a_hung_command_is_killed_and_its_stacks_are_in_the_failure(tmp_path: Path) -> None:
    duckdb.connect(str(tmp_path / "w.duckdb")).close()  # the file init opens; the pause comes before its tables
    config = tmp_path / "veil.toml"
    config.write_text(
        f'[source]\nurl = "duckdb:///{tmp_path}/w.duckdb"\ntable = "patients"\n' + inpatient_body(), encoding="utf-8"
    )
    mark = tmp_path / "paused"
    env = {
        **os.environ,
        "VEIL_FAILPOINT": "pause:init",
        "VEIL_FAILPOINT_SECONDS": "120",
        "VEIL_FAILPOINT_FILE": str(mark),
    }
    proc = prewarmed.Popen(["init", "--config", str(config)], env=env)
    if not isinstance(proc, prewarmed.Forked):
        pytest.fail("the forking server did not run the command (no `veil` script beside this interpreter?)")
    with pytest.raises(prewarmed.Hung) as hung:
        while not mark.exists():
            assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.05)
        proc.communicate(timeout=1)
    assert "in failpoint" in str(hung.value)  # the paused frame, named in the failure
    assert proc.wait(timeout=30) != 0  # killed
