"""``veil hierarchy``, ``veil doctor``, ``veil schedule``, ``veil demo`` and ``veil seed``: the tools around a release."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Optional

import typer

from veil import log
from veil.contract import FAILED, OK, Options, Result, say
from veil.commandline import (
    ConfigOpt,
    JsonOpt,
    LogFormat,
    LogFormatOpt,
    QuietOpt,
    VerboseOpt,
    WaitOpt,
    app,
    config_path,
    finish,
    load_config,
    say_lines,
    write,
)


@app.command()
def hierarchy(
    config: ConfigOpt = None,
    column: Annotated[Optional[str], typer.Option(help="Print this column's hierarchy (ARX CSV format).")] = None,
    out_file: Annotated[Optional[Path], typer.Option("--out", help="Write the CSV to this file.")] = None,
    check_all: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Check every hierarchy against the source and list every value each one misses (exit 1: any invalid).",
        ),
    ] = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    wait: WaitOpt = 0.0,
    log_format: LogFormatOpt = LogFormat.text,
) -> None:
    """Print one hierarchy as `value;level1;...;levelh`, or check all of them against the source at once."""

    def body() -> Result:
        from veil import config as cfg
        from veil.hierarchycheck import check_hierarchies, export_hierarchy
        from veil.errors import ConfigError

        if check_all == (column is not None):
            raise ConfigError("veil hierarchy: give exactly one of --column C (print a hierarchy) or --check")
        conf = cfg.load(config_path(config), check_hierarchies=not check_all)  # --check: each hierarchy's own errors
        if check_all:
            report = check_hierarchies(conf)
            doc = report.document()
            return Result(
                {"status": "ok" if report.valid else "failed", **doc},
                OK if report.valid else FAILED,
                lambda: say_lines(report.lines()),
            )
        assert column is not None
        h, text = export_hierarchy(conf, column)
        if out_file is not None:
            out_file.write_text(text, encoding="utf-8")
            log.step(
                f"wrote the hierarchy of {column!r} ({h.source}, height {h.height}, {len(h.leaves)} values) "
                f"to {out_file}"
            )
        doc = {
            "status": "ok",
            "column": column,
            "source": h.source,
            "height": h.height,
            "values": len(h.leaves),
            "csv": text if out_file is None else None,
            "out": str(out_file) if out_file else None,
        }
        return Result(doc, OK, (lambda: write(text)) if out_file is None else None)

    finish("hierarchy", Options(as_json, quiet, verbose, wait, log_format.value), body)


@app.command()
def doctor(
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    wait: WaitOpt = 0.0,
    log_format: LogFormatOpt = LogFormat.text,
) -> None:
    """Check the setup a release needs, one line per check (ok, warn or fail): the config, the connection, the
    source table and its columns, each hierarchy's coverage of the source, schemas and grants (PostgreSQL:
    what the role may use and create, whether the grant_select_to roles exist and can be granted to), the
    catalog's revision.  Writes nothing.  Exit 0 when no check fails (warnings pass), 1 otherwise."""

    def body() -> Result:
        from veil.doctor import diagnose

        found = diagnose(config_path(config), wait)
        if not found.passed:
            log.log.error(found.summary())
        return Result(found.document(), OK if found.passed else FAILED, lambda: say_lines(found.lines()))

    finish("doctor", Options(as_json, quiet, verbose, wait, log_format.value), body)


@app.command()
def schedule(
    cron: Annotated[str, typer.Option(help='Cron expression, e.g. "0 2 * * *", or @daily.')],
    config: ConfigOpt = None,
    tz: Annotated[
        Optional[str],
        typer.Option("--tz", help="IANA time zone of the cron times, e.g. Europe/Paris (default: local time)."),
    ] = None,
    max_runs: Annotated[Optional[int], typer.Option(min=0, help="Stop after this many runs.")] = None,
    run_now: Annotated[
        bool, typer.Option("--now", help="Also run once at start, before the first fire time (counts as a run).")
    ] = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    wait: WaitOpt = 0.0,
    log_format: LogFormatOpt = LogFormat.text,
) -> None:
    """Run `veil release` on a cron schedule (for hosts without an orchestrator), each run in a fresh process.

    At start it checks the config, the connection, the source table and the catalog, and fails at once if
    one is wrong; then it logs "next run at ..." before each wait and one line per run."""

    def body() -> Result:
        from veil.errors import ConfigError
        from veil.preflight import preflight
        from veil.schedule import clock, parse_cron, run_schedule, zone

        conf = load_config(config)
        try:
            spec = parse_cron(cron)
        except ValueError as exc:
            raise ConfigError(f"--cron: {exc}") from None
        try:
            where = zone(tz)
        except ValueError as exc:
            raise ConfigError(f"--tz: {exc}") from None
        log.step(preflight(conf))
        log.step(f"schedule {spec} ({spec.describe()}), {tz or 'local time'}")
        flags = (
            ["--quiet"] * quiet
            + ["--verbose"] * verbose
            + (["--wait", f"{wait:g}"] if wait else [])
            + ["--log-format", log_format.value]
        )
        code = run_schedule(
            spec,
            lambda: _run_subcommand(["release", "--config", str(conf.path), *flags]),
            now=clock(where),
            max_runs=max_runs,
            at_start=run_now,
        )
        return Result({"status": "ok", "exit_code": code}, code)

    finish("schedule", Options(False, quiet, verbose, wait, log_format.value), body)


def _run_subcommand(args: Sequence[str]) -> int:
    """One scheduled run in a fresh process, so a crash or a leak never takes the scheduler down.  If the
    scheduler is stopped meanwhile, the run is interrupted the same way (and rolls back) before it exits."""
    import signal
    import subprocess

    child = subprocess.Popen([sys.executable, "-m", "veil.cli", *args])
    try:
        return child.wait()
    except BaseException:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
            try:
                child.wait(timeout=30)
            except subprocess.TimeoutExpired:
                child.kill()
        raise


@app.command()
def demo(
    directory: Annotated[Path, typer.Option("--dir", help="Where to create the demo warehouse.")] = Path("veil-demo"),
    rows: Annotated[int, typer.Option(min=1, help="Synthetic census rows.")] = 100_000,
    reset: Annotated[bool, typer.Option("--reset", help="Start from a new warehouse.")] = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    log_format: LogFormatOpt = LogFormat.text,
) -> None:
    """Create a demo warehouse (embedded DuckDB, synthetic census) and publish a real release of it; prints
    commands that query it, runnable as printed from the working folder."""

    def body() -> Result:
        from veil.demo.setup import run_demo

        code = run_demo(directory, rows=rows, reset=reset, say=say, step=log.step)
        return Result({"status": "ok"}, code)

    finish("demo", Options(False, quiet, verbose, log_format=log_format.value), body)


@app.command()
def seed(
    config: ConfigOpt = None,
    rows: Annotated[int, typer.Option(min=1, help="Synthetic census rows.")] = 100_000,
    random_seed: Annotated[int, typer.Option("--seed", help="Generator seed (same seed, same rows).")] = 42,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    wait: WaitOpt = 0.0,
    log_format: LogFormatOpt = LogFormat.text,
) -> None:
    """Load the synthetic census into the config's source table if that table does not exist (demo,
    docker-compose's first start); an existing table is never touched."""

    def body() -> Result:
        from veil.demo.seed import seed as do_seed

        conf = load_config(config)
        text = do_seed(conf, rows=rows, seed=random_seed, step=log.step)
        return Result({"status": "ok", "table": conf.source.qualified, "message": text}, OK, lambda: say(text))

    finish("seed", Options(as_json, quiet, verbose, wait, log_format.value), body)
