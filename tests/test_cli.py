"""The CLI contract, for every command: exit codes 0/1/2 only, usage errors as one line (exit 1) whichever
click typer brings, bare ``veil`` printing the help, exactly one JSON document with ``status`` on stdout with
``--json`` whatever happens (its timestamps ISO 8601 with an offset), ``--version``, Ctrl-C and SIGTERM, log
lines (timestamped and unwrapped off a terminal, short with a progress bar on one, or JSON records with
``--log-format json``), ``--quiet`` and ``--verbose``, the config found without ``--config`` (``veil.toml`` here,
``$VEIL_CONFIG``), ``counts`` bounded, ``search`` saying what each strategy evaluated, a help text for every
option, a ``--help`` that imports nothing heavy and a ``search`` that imports only what it uses."""

from __future__ import annotations

import importlib.metadata
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import veil
from tests.conftest import INPATIENT_COLUMNS, LOG_LINE, Db, ReleaseSchemas, error_line, inpatient_body, run_veil
from tests import prewarmed
from tests.test_startup import CLI_MODULES  # what the CLI alone loads

COMMANDS_WITH_JSON = ["counts", "check", "search", "init", "release"]
BOX = set("│╭╮╰╯─┌┐└┘")


def _json(stdout: str) -> dict:
    """stdout is exactly one JSON document (json.loads rejects anything around it)."""
    doc = json.loads(stdout)
    assert isinstance(doc, dict) and "status" in doc
    return doc


USAGE_ERRORS = [
    (["frobnicate"], "No such command 'frobnicate'"),
    (["doctr"], "No such command 'doctr'. Did you mean 'doctor'? (see"),  # said once (typer and click both suggest)
    (["rollback", "--config", "v.toml"], "Missing option '--to'"),
    (["release", "--log-format", "xml"], "Invalid value for '--log-format'"),
    (["release", "--config", "v.toml", "--frobnicate"], "No such option"),
    (["search", "--config", "v.toml", "--wait", "soon"], "Invalid value for '--wait'"),
    (["search", "--config", "v.toml", "--wait", "-1"], "Invalid value for '--wait'"),
    (["counts", "--config", "v.toml", "--node"], "requires an argument"),
    (["check", "--config", "v.toml", "surplus"], "unexpected extra argument"),
    (["demo", "--rows", "0"], "Invalid value for '--rows'"),
    (["schedule", "--config", "v.toml"], "Missing option '--cron'"),
    (["release", "--config"], "requires an argument"),
]


@pytest.mark.parametrize(("args", "message"), USAGE_ERRORS)
def test_usage_error_is_one_line_and_exit_1(args: list[str], message: str) -> None:
    res = run_veil(*args, timeout=60)
    assert res.returncode == 1, res
    assert res.stdout == ""
    line = error_line(res.stderr)
    assert line.startswith("usage: ") and message.lower() in line.lower() and "--help" in line
    assert not BOX & set(res.stderr) and "Traceback" not in res.stderr


@pytest.mark.parametrize(("args", "message"), [u for u in USAGE_ERRORS if u[0][-1:] != ["--config"]])
def test_usage_error_with_json_is_one_document(args: list[str], message: str) -> None:
    res = run_veil(*args[:1], "--json", *args[1:], timeout=60)
    assert res.returncode == 1
    doc = _json(res.stdout)
    assert doc["status"] == "failed" and doc["error"].startswith("usage: ") and doc["error"] == error_line(res.stderr)


def test_version() -> None:
    res = run_veil("--version", timeout=60)
    assert res.returncode == 0 and res.stderr == ""
    assert res.stdout == f"veil {veil.__version__}\n"
    assert importlib.metadata.version("veil") == veil.__version__


HEAVY = {
    "numpy",
    "sqlalchemy",
    "duckdb",
    "psycopg",
    "alembic",
    "pandas",
    "pyarrow",
    "duckdb_engine",
    "rich",
    "cronsim",
    "scipy",
    "hypothesis",
    "yaml",
}


def _modules_after(args: list[str], cwd: Path | None = None) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run ``veil <args>`` in a fresh interpreter; the process and the modules it had imported by the end."""
    code = (
        "import sys\nfrom veil.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n"
        "    assert e.code == 0, e.code\nprint('MODULES ' + ' '.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    res = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, cwd=cwd)
    listed = [line for line in res.stderr.splitlines() if line.startswith("MODULES ")]
    assert res.returncode == 0 and listed, res.stderr
    return res, set(listed[-1].split()[1:])


def test_help_imports_nothing_heavy() -> None:
    res, modules = _modules_after(["--help"])
    assert "Usage: veil" in res.stdout and "release" in res.stdout
    assert not HEAVY & {m.split(".")[0] for m in modules}
    assert {m for m in modules if m.split(".")[0] == "veil"} <= CLI_MODULES  # no config, models, warehouse, ...


def test_search_imports_only_what_it_uses(tmp_path: Path) -> None:
    """``veil search`` (issue 11: process start to JSON) loads the driver, SQLAlchemy, numpy and the checkers its
    config names: no release, report, audit or catalog code, no other model's checker, no optional library."""
    from veil.demo import inpatient_rows

    db = Db("duckdb", f"duckdb:///{tmp_path / 'warehouse.duckdb'}", "raw", tmp_path)
    db.create_table("patients", INPATIENT_COLUMNS, inpatient_rows())
    path = db.write_config("patients", inpatient_body())  # k-anonymity only
    res, modules = _modules_after(["search", "--config", str(path), "--json"])
    assert json.loads(res.stdout)["optimal"]["node"]
    assert {"numpy", "sqlalchemy", "duckdb", "veil.models.kanonymity"} <= modules
    assert not ({m.split(".")[0] for m in modules} & (HEAVY - {"numpy", "sqlalchemy", "duckdb", "duckdb_engine"}))
    unused = (
        "veil.release",
        "veil.report",
        "veil.adversary.attacks",
        "veil.adversary.exposure",
        "veil.adversary.subject",
        "veil.catalog",
        "veil.notebook",
        "veil.schedule",
        "veil.demo.setup",
        "veil.hierarchycheck",
        "veil.preflight",
        "veil.backends.postgres",
        "veil.backends.spark",
        "veil.queries.spark",
        "veil.models.ldiversity",
        "veil.models.closeness",
        "veil.models.epsilon",
        "veil.models.proximity",
        "veil.models.emd",
    )
    assert sorted(m for m in modules if any(m == u or m.startswith(f"{u}.") for u in unused)) == []
    assert "nanobind" not in res.stderr and "leaked" not in res.stderr  # the frozen startup objects are freed at exit


@pytest.mark.parametrize("command", COMMANDS_WITH_JSON)
def test_failure_is_one_json_document(tmp_path: Path, command: str) -> None:
    res = run_veil(command, "--config", str(tmp_path / "missing.toml"), "--json", timeout=60)
    assert res.returncode == 1
    doc = _json(res.stdout)
    assert doc == {"status": "failed", "error": error_line(res.stderr)}
    assert "cannot read config file" in doc["error"]


def test_every_command_prints_one_json_document_with_status(inpatient: Db, release_schemas: ReleaseSchemas) -> None:
    path = str(inpatient.write_config("patients", inpatient_body() + release_schemas.section()))
    statuses = {}
    for args in (["counts", "--node", "2,1,1"], ["check"], ["search"], ["init"], ["release"], ["release"]):
        res = run_veil(args[0], "--config", path, "--json", *args[1:])
        assert res.returncode == 0, res.stderr
        statuses.setdefault(args[0], []).append(_json(res.stdout)["status"])
    assert statuses == {
        "counts": ["ok"],
        "check": ["ok"],
        "search": ["ok"],
        "init": ["ok"],
        "release": ["published", "skipped"],
    }


def test_no_solution_names_each_failing_models_best_level(inpatient: Db, release_schemas: ReleaseSchemas) -> None:
    body = inpatient_body().replace("k = 4", "k = 13") + '\n[[models]]\ntype = "distinct-l-diversity"\nl = 2\n'
    path = str(inpatient.write_config("patients", body + release_schemas.section()))
    failing = [{"type": "k-anonymity", "attribute": None, "best_level": 12.0, "at_node": [5, 3, 1]}]
    res = run_veil("search", "--config", path, "--json")
    assert res.returncode == 2, res.stderr
    doc = _json(res.stdout)
    assert (doc["status"], doc["models"], doc["minimal"], doc["optimal"]) == ("no_solution", failing, [], None)
    assert "k-anonymity (k=13) fails even at the most general node [5, 3, 1] (best level reached: 12)" in doc["error"]
    assert run_veil("init", "--config", path).returncode == 0
    res = run_veil("release", "--config", path, "--json")
    assert res.returncode == 2
    doc = _json(res.stdout)
    assert doc == {"status": "no_solution", "error": error_line(res.stderr), "models": failing}
    text = run_veil("search", "--config", path)
    assert text.returncode == 2 and "no lattice node satisfies the models" in text.stdout


def test_log_lines_quiet_verbose_and_unwrapped_output(inpatient: Db, release_schemas: ReleaseSchemas) -> None:
    path = str(inpatient.write_config("patients", inpatient_body() + release_schemas.section()))
    assert run_veil("init", "--config", path, "--quiet").stderr == ""
    res = run_veil("release", "--config", path)
    assert res.returncode == 0
    lines = res.stderr.splitlines()
    assert lines and all(LOG_LINE.match(line) for line in lines), res.stderr
    assert any(line.endswith("INFO veil release: searching the lattice") for line in lines)
    assert not any(" DEBUG " in line for line in lines)
    # the result is one unwrapped line on stdout, however long
    assert len(res.stdout.splitlines()) == 1 and len(res.stdout) > 120
    assert res.stdout.startswith("published 'inpatient' version 1 at node")
    quiet = run_veil("release", "--config", path, "--force", "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == "" and "version 2" in quiet.stdout
    verbose = run_veil("release", "--config", path, "--verbose")
    assert verbose.returncode == 0
    assert any(" DEBUG veil release: veil " in line for line in verbose.stderr.splitlines())
    assert all(LOG_LINE.match(line) for line in verbose.stderr.splitlines())


def test_on_a_terminal_release_shows_steps_and_progress(inpatient: Db, release_schemas: ReleaseSchemas) -> None:
    path = str(inpatient.write_config("patients", inpatient_body() + release_schemas.section()))
    assert run_veil("init", "--config", path).returncode == 0
    output = _in_terminal([sys.executable, "-m", "veil.cli", "release", "--config", path])
    assert "… searching the lattice" in output and "… materializing" in output
    assert re.search(r"searching.*━.*\d+/48\s+nodes", output), output  # rich's bar: done/total nodes
    assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d", output)  # no timestamps for a person watching
    assert "published 'inpatient' version 1" in output


def _in_terminal(argv: list[str], timeout: float = 120) -> str:
    """Run ``argv`` with stdout and stderr on a pseudo-terminal; everything it wrote."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        argv,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        close_fds=True,
        env={**os.environ, "COLUMNS": "120", "TERM": "xterm"},
    )
    os.close(follower)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                data = os.read(leader, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    proc.wait(timeout=30)
    os.close(leader)
    assert proc.returncode == 0, b"".join(chunks).decode(errors="replace")
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(chunks).decode(errors="replace"))


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_interrupt_is_one_line_and_leaves_nothing_half_written(
    inpatient: Db, release_schemas: ReleaseSchemas, signum: int
) -> None:
    path = str(inpatient.write_config("patients", inpatient_body() + release_schemas.section()))
    assert run_veil("init", "--config", path).returncode == 0
    assert run_veil("release", "--config", path).returncode == 0
    before = inpatient.objects()
    env = {**os.environ, "VEIL_FAILPOINT": "pause:materialize", "VEIL_FAILPOINT_SECONDS": "60"}
    proc = prewarmed.Popen(["release", "--config", path, "--force", "--json"], env=env)
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:  # wait until it is mid-release: the new version's table is being written
        seen.append(line)
        if "materializing" in line:
            break
    time.sleep(0.5)
    proc.send_signal(signum)
    out, rest = proc.communicate(timeout=60)
    stderr = "".join(seen) + rest
    assert proc.returncode == 1, stderr
    assert error_line(stderr) == "interrupted"
    assert _json(out) == {"status": "failed", "error": "interrupted"}
    assert inpatient.objects() == before  # no table of version 2, views unchanged
    assert [r[0] for r in inpatient.query(f'SELECT version FROM "{release_schemas.out}".inpatient_releases')] == [1]
    # the next run publishes normally (and closes the interrupted run in the catalog)
    res = run_veil("release", "--config", path, "--force", "--json")
    assert res.returncode == 0 and _json(res.stdout)["version"] == 2


def test_bare_veil_prints_the_help_and_exits_0() -> None:
    res = run_veil(timeout=60)
    assert res.returncode == 0 and res.stderr == ""
    assert res.stdout.startswith("Usage: veil") and "doctor" in res.stdout and "release" in res.stdout


class ClickException(Exception):  # noqa: N818 - the name of click's class, as a vendored copy of click has it
    """Not click's class: what the copy of click a typer release vendors (``typer._click``) raises."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.ctx = None

    def format_message(self) -> str:
        return self.args[0]


class UsageError(ClickException):
    pass


class Abort(RuntimeError):
    pass


@pytest.mark.parametrize(
    ("raised", "code", "line"),
    [
        (UsageError("No such command 'doctr'."), 1, "usage: No such command 'doctr' (see `veil --help`)"),
        (Abort(), 1, "interrupted"),
    ],
)
def test_usage_errors_of_a_vendored_click_are_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], raised: Exception, code: int, line: str
) -> None:
    """typer 0.2x vendors click as ``typer._click``: its exceptions are not click's classes (issue 35: any
    unknown command was a 40-line traceback).  They are caught by what they are, whichever click raised them."""
    from veil import cli

    def app(**_kwargs: object) -> None:
        raise raised

    monkeypatch.setattr(cli, "app", app)
    with pytest.raises(SystemExit) as exit_:
        cli.main(["doctr", "--json"])
    assert exit_.value.code == code
    out, err = capsys.readouterr()
    assert error_line(err) == line and "Traceback" not in err
    assert json.loads(out) == {"status": "failed", "error": line}


def test_every_command_and_option_has_help() -> None:
    """The docs' CLI reference is generated from the app: nothing in it may be blank."""
    import typer

    from veil.cli import app

    group = typer.main.get_command(app)
    blank = [f"{name} (the command)" for name, cmd in group.commands.items() if not (cmd.help or "").strip()]
    blank += [
        f"{name} {p.name}"
        for name, cmd in group.commands.items()
        for p in cmd.params
        if not (getattr(p, "help", None) or "").strip()
    ]
    assert blank == []
    assert {"doctor", "release", "counts", "search"} <= set(group.commands)


def test_the_config_is_found_without_config(inpatient: Db, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--config``, else ``veil.toml`` in the working folder, else ``$VEIL_CONFIG``; none: one line saying where
    it looked."""
    monkeypatch.delenv("VEIL_CONFIG", raising=False)
    inpatient.write_config("patients", inpatient_body())  # veil.toml in the test's folder
    other = inpatient.write_config("patients", inpatient_body().replace("k = 4", "k = 13"), name="other.toml")
    here = run_veil("check", "--node", "2,1,1", "--json", cwd=inpatient.workdir)
    assert here.returncode == 0 and _json(here.stdout)["passed"] is True, here.stderr  # k = 4: veil.toml's
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    named = run_veil("check", "--node", "2,1,1", "--json", cwd=elsewhere, env={"VEIL_CONFIG": str(other)})
    assert named.returncode == 0 and _json(named.stdout)["passed"] is False, named.stderr  # k = 13: other.toml's
    both = run_veil("check", "--node", "2,1,1", "--json", cwd=inpatient.workdir, env={"VEIL_CONFIG": str(other)})
    assert _json(both.stdout)["passed"] is True  # the working folder's veil.toml first
    none = run_veil("check", "--json", cwd=elsewhere)
    assert none.returncode == 1
    assert (
        _json(none.stdout)["error"]
        == error_line(none.stderr)
        == (f"no config: no --config given, no veil.toml in {elsewhere}, and VEIL_CONFIG is not set")
    )
    gone = run_veil("check", cwd=elsewhere, env={"VEIL_CONFIG": str(elsewhere / "gone.toml")})
    assert gone.returncode == 1 and error_line(gone.stderr).startswith(
        f"VEIL_CONFIG={elsewhere / 'gone.toml'}: no such file"
    )


ISO_WITH_OFFSET = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?[+-]\d\d:\d\d")
LOOKS_LIKE_A_TIME = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d")


def _times(value: object) -> list[str]:
    """Every string in a JSON document that holds a date and a time."""
    if isinstance(value, dict):
        return [t for v in value.values() for t in _times(v)]
    if isinstance(value, list):
        return [t for v in value for t in _times(v)]
    return [value] if isinstance(value, str) and LOOKS_LIKE_A_TIME.search(value) else []


@pytest.mark.notimpl(
    ["spark"],
    raises=AssertionError,
    reason=(
        "runs release --dry-run, which Spark refuses: every statement commits on its own (the "
        "autocommit publication has nothing to roll back)"
    ),
)
def test_every_json_timestamp_is_iso_8601_with_an_offset(inpatient: Db, release_schemas: ReleaseSchemas) -> None:
    path = str(inpatient.write_config("patients", inpatient_body() + release_schemas.section()))
    found = []
    for args in (
        ["init"],
        ["release"],
        ["release", "--force", "--dry-run"],
        ["releases"],
        ["doctor"],
        ["audit", "--release", "1"],
        ["check"],
        ["rollback", "--to", "1"],
        ["releases"],
    ):
        res = run_veil(args[0], "--config", path, "--json", *args[1:])
        assert res.returncode == 0, (args, res.stderr)
        found += _times(_json(res.stdout))
    assert len(found) >= 4  # releases: started_at and published_at of version 1 and the rollback
    assert [t for t in found if not ISO_WITH_OFFSET.fullmatch(t)] == []


@pytest.mark.spark_too
def test_log_format_json_is_one_object_per_record(inpatient: Db, release_schemas: ReleaseSchemas) -> None:
    path = str(inpatient.write_config("patients", inpatient_body() + release_schemas.section()))
    res = run_veil("init", "--config", path, "--log-format", "json", "--verbose")
    assert res.returncode == 0, res.stderr
    records = [json.loads(line) for line in res.stderr.splitlines()]  # every line is one JSON object
    assert records and all(set(r) == {"time", "level", "command", "message"} for r in records)
    assert all(ISO_WITH_OFFSET.fullmatch(r["time"]) and r["command"] == "init" for r in records)
    assert {"DEBUG"} <= {r["level"] for r in records}
    failed = run_veil("release", "--config", str(Path(path).with_name("gone.toml")), env={"VEIL_LOG_FORMAT": "json"})
    (record,) = [json.loads(line) for line in failed.stderr.splitlines()]
    assert failed.returncode == 1 and record["level"] == "ERROR" and "cannot read config file" in record["message"]
    usage = run_veil("release", "--frobnicate", "--log-format", "json")
    (record,) = [json.loads(line) for line in usage.stderr.splitlines()]
    assert usage.returncode == 1 and record["command"] is None and record["message"].startswith("usage: No such option")


def test_counts_is_bounded_smallest_blocks_first_with_totals(inpatient: Db) -> None:
    path = str(inpatient.write_config("patients", inpatient_body()))
    doc = _json(run_veil("counts", "--config", path, "--node", "1,1,1", "--limit", "2", "--json").stdout)
    sizes = [b["size"] for b in doc["blocks"]]
    assert len(sizes) == 2 and sizes == sorted(sizes)
    assert (doc["block_count"], doc["blocks_not_shown"], doc["rows"]) == (
        doc["block_count"],
        doc["block_count"] - 2,
        12,
    )
    assert doc["rows_not_shown"] == 12 - sum(sizes)
    every = _json(run_veil("counts", "--config", path, "--node", "1,1,1", "--limit", "0", "--json").stdout)
    assert every["blocks_not_shown"] == 0 and len(every["blocks"]) == every["block_count"] > 2
    assert min(b["size"] for b in every["blocks"]) == sizes[0]
    text = run_veil("counts", "--config", path, "--node", "0,0,0", "--limit", "3")
    assert text.returncode == 0, text.stderr
    assert "12 blocks, 12 rows; the 3 smallest shown" in text.stdout
    assert "9 more block(s) with 9 row(s) not shown" in text.stdout
    bounded = run_veil("counts", "--config", path, "--node", "0,0,0")  # by default at most 50
    assert "12 blocks, 12 rows; smallest first" in bounded.stdout and "not shown" not in bounded.stdout


def test_search_says_what_each_strategy_evaluated(inpatient: Db) -> None:
    path = str(inpatient.write_config("patients", inpatient_body()))
    res = run_veil("search", "--config", path, "--strategy", "optimal,incognito", "--limit", "1", "--json")
    doc = _json(res.stdout)
    work = {w["strategy"]: w for w in doc["by_strategy"]}
    assert list(work) == ["optimal", "incognito"]
    assert sum(w["lattice_nodes"] + w["subset_nodes"] for w in work.values()) == doc["nodes_evaluated"]
    assert sum(w["lattice_nodes"] for w in work.values()) <= doc["lattice_size"] == 48
    assert work["incognito"]["subset_nodes"] > 0 and work["optimal"]["subset_nodes"] == 0
    assert doc["minimal"] == [[1, 2, 1], [2, 1, 1]]  # --json lists every minimal node whatever --limit says
    text = run_veil("search", "--config", path, "--strategy", "optimal,incognito", "--limit", "1").stdout
    assert "  optimal (" in text and f"evaluated {work['optimal']['lattice_nodes']} of the 48 nodes" in text
    assert (
        f"evaluated {work['incognito']['lattice_nodes']} more of the 48 nodes; "
        f"{work['incognito']['subset_nodes']} nodes of smaller lattices" in text
    )
    assert "2 minimal passing node(s), lowest height first, the first 1 shown" in text
    assert "… and 1 more minimal node(s)" in text
