"""Start-up (issue 36): a command imports only what its path needs.  ``import veil.cli``, ``veil --help`` and a
command's own ``--help`` load no numpy, SQLAlchemy, driver, rich, pandas, charting library, Spark or Alembic, and
no Veil module beyond the CLI's own; the release history commands load no release job (nor the search behind it);
a command's run builds that command's options alone.  Module lists (``sys.modules`` at the end of a fresh
interpreter: ``-X importtime`` does not list a module imported through ``importlib.import_module``), never
timings (``bench/bench_startup.py`` times the commands; ``tests/test_cli.py`` checks what ``veil search`` loads)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import INPATIENT_COLUMNS, Db, inpatient_body, run_veil
from veil import cli

HEAVY = {
    "numpy",
    "sqlalchemy",
    "duckdb",
    "duckdb_engine",
    "psycopg",
    "psycopg_binary",
    "pandas",
    "pyarrow",
    "pyspark",
    "alembic",
    "rich",
    "altair",
    "vl_convert",
    "narwhals",
    "jinja2",
    "jsonschema",
    "cronsim",
    "scipy",
    "yaml",
}
CLI_MODULES = {"veil", "veil.cli", "veil.contract", "veil.lockwait", "veil.log", "veil.errors", "veil.registry"} | {
    "veil.commandline",
    "veil.commands",
    *(f"veil.commands.{kind}" for kind in ("inspection", "releasing", "auditing", "tools")),
}
LISTED = "\nprint('MODULES ' + ' '.join(sorted(sys.modules)), file=sys.stderr)\n"
RUN_CLI = (
    "import sys\nfrom veil.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n"
    "    assert e.code == 0, e.code" + LISTED
)


def imported(code: str, *args: str, cwd: Path | None = None) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run ``code`` (with ``args``) in a fresh interpreter: the process and every module it had imported."""
    res = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, cwd=cwd)
    listed = [line for line in res.stderr.splitlines() if line.startswith("MODULES ")]
    assert res.returncode == 0 and listed, res.stderr[-2000:]
    return res, set(listed[-1].split()[1:])


def heavy(modules: set[str]) -> set[str]:
    return HEAVY & {m.split(".")[0] for m in modules}


def veil_modules(modules: set[str]) -> set[str]:
    return {m for m in modules if m.split(".")[0] == "veil"}


def test_import_cli_loads_only_the_cli() -> None:
    _, modules = imported("import sys, veil.cli" + LISTED)
    assert "veil.cli" in modules
    assert heavy(modules) == set()
    assert veil_modules(modules) <= CLI_MODULES  # no config, models, warehouse, report, release, ...


def test_import_release_loads_no_job() -> None:
    """``veil.release``'s names load their module on first use: the package alone is nothing."""
    _, modules = imported("import sys, veil.release" + LISTED)
    assert veil_modules(modules) == {"veil", "veil.release"} and heavy(modules) == set()


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        [],
        ["--version"],
        ["search", "--help"],
        ["release", "--help"],
        ["report", "--help"],
        ["audit", "--help"],
        ["init", "--help"],
    ],
)
def test_help_loads_only_the_cli(args: list[str]) -> None:
    res, modules = imported(RUN_CLI, *args)
    assert res.stdout.startswith("veil ") if args == ["--version"] else "Usage: veil" in res.stdout
    assert heavy(modules) == set()
    assert veil_modules(modules) <= CLI_MODULES


def test_release_history_loads_no_release_job(tmp_path: Path) -> None:
    """``veil releases`` reads the catalog (``veil init`` made it): no release job, search, warehouse, lattice
    metrics, report or Alembic."""
    from veil.demo import inpatient_rows

    db = Db("duckdb", f"duckdb:///{tmp_path / 'warehouse.duckdb'}", "raw", tmp_path)
    db.create_table("patients", INPATIENT_COLUMNS, inpatient_rows())
    path = db.write_config("patients", inpatient_body() + '\n[release]\nname = "inpatient"\nschema = "published"\n')
    init = run_veil("init", "--config", str(path), cwd=tmp_path, timeout=120)
    assert init.returncode == 0, init.stderr
    res, modules = imported(RUN_CLI, "releases", "--config", str(path), "--json", cwd=tmp_path)
    doc = json.loads(res.stdout[res.stdout.index('{"status"') :])
    assert doc["status"] == "ok" and doc["releases"] == []
    loaded = sorted(
        m
        for m in modules
        if m.startswith(
            (
                "veil.release.job",
                "veil.release.publishing",
                "veil.release.seriesstep",
                "veil.release.candidate",
                "veil.release.nodechoice",
                "veil.release.stops",
                "veil.run",
                "veil.search",
                "veil.metrics",
                "veil.warehouse",
                "veil.report",
                "veil.adversary.attacks",
                "veil.notebook",
            )
        )
    )
    assert loaded == []
    assert not heavy(modules) & {"alembic", "rich", "pandas", "altair", "vl_convert", "pyspark"}


def test_a_command_builds_its_own_options_alone() -> None:
    """``veil <command> ...`` runs on ``app`` holding that command only; help and usage errors are the same."""
    names = [c.callback.__name__ for c in cli.app.registered_commands if c.callback is not None]
    assert len(names) > 10
    for name in names:
        one = cli._app_for([name, "--json"])
        assert one is not cli.app and [c.callback.__name__ for c in one.registered_commands if c.callback] == [name]
    assert len(cli.app.registered_commands) == len(names)  # the app itself untouched
    for args in (["--help"], [], ["--version"], ["serch"], ["SEARCH"]):
        assert cli._app_for(args) is cli.app
    runner = CliRunner()
    for args in [[n, "--help"] for n in names] + [
        ["search", "--frobnicate"],
        ["rollback"],
        ["counts", "--limit", "x"],
        ["search", "surplus"],
    ]:
        whole = runner.invoke(cli.app, args, prog_name="veil")
        alone = runner.invoke(cli._app_for(args), args, prog_name="veil")
        assert (alone.exit_code, alone.output) == (whole.exit_code, whole.output), args
