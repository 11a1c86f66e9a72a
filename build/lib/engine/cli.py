"""The ``veil`` command: thin.  Parses, calls one function, maps outcomes to exit codes for schedulers:
0 published / printed, 2 no node satisfies the models (nothing published), 1 any other failure.

With ``--json`` stdout holds exactly one JSON document; logs and progress go to stderr.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console
from rich.table import Table

from engine import config as cfg
from engine.errors import ConfigError, VeilError
from engine.lattice import parse_node

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Veil: publish anonymized releases of warehouse tables (k-anonymity, l-diversity, "
                       "t-closeness, ε-privacy).")
err = Console(stderr=True, highlight=False)
out = Console(highlight=False)

ConfigOpt = Annotated[Path, typer.Option("--config", "-c", help="Release config (TOML).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]


@app.callback()
def _root() -> None:
    """Veil: publish anonymized releases of warehouse tables."""


def _fail(message: str, code: int) -> None:
    err.print(f"[bold red]veil:[/] {message}", markup=True, soft_wrap=True)
    raise typer.Exit(code)


def _guard(fn: Callable[[], int | None]) -> None:
    """Run a command; VeilErrors become one line on stderr and their exit code."""
    try:
        code = fn()
    except VeilError as exc:
        _fail(str(exc).replace("[", "\\["), exc.exit_code)
    except KeyboardInterrupt:
        _fail("interrupted", 1)
    except typer.Exit:
        raise
    except Exception as exc:  # a bug in Veil: one line, the traceback only on request
        if os.environ.get("VEIL_DEBUG"):
            traceback.print_exc()
        _fail(f"internal error: {type(exc).__name__}: {exc} (set VEIL_DEBUG=1 for the traceback)", 1)
    else:
        raise typer.Exit(code or 0)


def _step(quiet: bool) -> Callable[[str], None]:
    def show(message: str) -> None:
        if not quiet and err.is_terminal:
            err.print(f"[dim]… {message}[/]")
    return show


def _node(text: str | None, heights: tuple[int, ...]) -> tuple[int, ...]:
    if text is None:
        return tuple(0 for _ in heights)
    try:
        return parse_node(text, heights)
    except ValueError as exc:
        raise ConfigError(f"--node: {exc}") from None


def _emit(document: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(document, ensure_ascii=False) + "\n")
    sys.stdout.flush()


@app.command()
def counts(config: ConfigOpt, node: Annotated[Optional[str], typer.Option(help="Levels, e.g. 1,0,2 (default: all 0).")] = None,
           as_json: JsonOpt = False) -> None:
    """The q*-blocks at one lattice node: generalized key, size and sensitive histograms."""

    def run() -> int:
        from engine.run import counts_document, open_warehouse

        conf = cfg.load(config)
        with open_warehouse(conf, sensitive=conf.sensitive, on_step=_step(as_json), rollup=False) as wh:
            level = _node(node, wh.heights)
            doc = counts_document(wh, wh.counts(level))
        if as_json:
            _emit(doc)
        else:
            table = Table(title=f"{conf.source.qualified} at node {list(level)}: {len(doc['blocks'])} blocks, "
                                f"{doc['rows']} rows")
            for a in doc["attributes"]:
                table.add_column(a)
            table.add_column("size", justify="right")
            for s in conf.sensitive:
                table.add_column(s)
            for b in doc["blocks"]:
                hist = [", ".join(f"{v}: {c}" for v, c in b["sensitive"][s].items()) for s in conf.sensitive]
                table.add_row(*b["key"], str(b["size"]), *hist)
            out.print(table)
        return 0

    _guard(run)


@app.command()
def check(config: ConfigOpt,
          node: Annotated[Optional[str], typer.Option(help="Levels, e.g. 1,0,2 (default: the source as it stands).")] = None,
          as_json: JsonOpt = False) -> None:
    """Evaluate every model at one node: passed, achieved level, violating blocks (exit 0 either way)."""

    def run() -> int:
        from engine.privacy import Specification
        from engine.run import check_document, open_warehouse

        conf = cfg.load(config)
        spec = Specification(conf.models, conf.search.max_suppression)
        with open_warehouse(conf, on_step=_step(as_json), rollup=False) as wh:
            level = _node(node, wh.heights)
            nc = wh.counts(level)
            doc = check_document(wh, spec, nc, spec.evaluate(nc, wh.rows))
        if as_json:
            _emit(doc)
            return 0
        verdict = "[green]passes[/]" if doc["passed"] else "[red]fails[/]"
        out.print(f"{conf.source.qualified} at node {doc['node']}: {doc['blocks']} blocks, {doc['rows']} rows — "
                  f"{verdict}" + (f", suppressing {doc['suppressed_rows']} rows" if doc["suppressed_rows"] else ""))
        table = Table()
        for col in ("model", "attribute", "passed", "achieved", "violating blocks"):
            table.add_column(col)
        for m, model in zip(doc["models"], conf.models):
            achieved = "∞ / undefined" if m["achieved"] is None else f"{m['achieved']:.6g}"
            table.add_row(model.describe(), m["attribute"] or "", "yes" if m["passed"] else "no", achieved,
                          str(m["violating_blocks"]))
        out.print(table)
        return 0

    _guard(run)


@app.command()
def search(config: ConfigOpt,
           strategy: Annotated[Optional[str], typer.Option(
               help="optimal | incognito | brute-force (or several, comma-separated, sharing counts).")] = None,
           metric: Annotated[Optional[str], typer.Option(help="height | precision | avg-block-size | "
                                                               "discernibility | kl-divergence")] = None,
           as_json: JsonOpt = False) -> None:
    """Search the lattice: every minimal passing node and/or the proven-optimal one (exit 2: none passes)."""

    def run() -> int:
        from engine.run import run_search

        conf = cfg.load(config)
        strategies = tuple(s.strip() for s in (strategy or conf.search.strategy).split(",") if s.strip())
        for s in strategies:
            if s not in cfg.STRATEGIES:
                raise ConfigError(f"--strategy {s!r}: one of {', '.join(cfg.STRATEGIES)}")
        if metric is not None and metric not in cfg.METRICS:
            raise ConfigError(f"--metric {metric!r}: one of {', '.join(cfg.METRICS)}")
        conf = cfg.override(conf, metric=metric)
        result, stats = run_search(conf, strategies, on_step=_step(as_json), progress=err if err.is_terminal else None)
        doc = result.document()
        if as_json:
            _emit(doc)
        else:
            out.print(f"lattice of {doc['lattice_size']} nodes (heights {doc['heights']}): {doc['nodes_evaluated']} "
                      f"evaluated, {stats.node_queries} node queries, {doc['seconds']:.3f} s")
            if doc["minimal"] is not None:
                table = Table(title=f"{len(doc['minimal'])} minimal passing node(s)")
                for a in doc["attributes"]:
                    table.add_column(a, justify="right")
                for n in doc["minimal"]:
                    table.add_row(*map(str, n))
                out.print(table)
            if doc["optimal"] is not None:
                o = doc["optimal"]
                out.print(f"optimal node {o['node']} ({o['metric']} = {o['value']:.6g})")
            elif not result.any_passing:
                out.print("[red]no node satisfies the privacy models[/]")
        return 0 if result.any_passing else 2

    _guard(run)


@app.command()
def init(config: ConfigOpt) -> None:
    """Create or upgrade Veil's catalog (Alembic migrations) in the target database."""

    def run() -> int:
        from engine.release import init as do_init

        conf = cfg.load(config)
        before, after = do_init(conf)
        where = f"schema {conf.catalog_schema!r}"
        if before == after:
            err.print(f"catalog in {where} is up to date (revision {after})")
        else:
            err.print(f"catalog in {where}: {before or 'none'} → {after}")
        return 0

    _guard(run)


@app.command()
def release(config: ConfigOpt,
            force: Annotated[bool, typer.Option("--force", help="Publish even if source and config are unchanged.")] = False,
            wait: Annotated[float, typer.Option(help="Seconds to wait for a concurrent run of this release.")] = 0.0,
            as_json: JsonOpt = False) -> None:
    """Search, materialize, verify and publish a new release version (exit 2: no node satisfies)."""

    def run() -> int:
        from engine.release import release as do_release

        conf = cfg.load(config)
        outcome = do_release(conf, force=force, wait=wait, on_step=_step(as_json))
        if as_json:
            _emit(outcome.document())
        else:
            out.print(outcome.message)
        return outcome.exit_code

    _guard(run)


@app.command()
def schedule(config: ConfigOpt,
             cron: Annotated[str, typer.Option(help='Cron expression, e.g. "0 2 * * *" (local time).')],
             max_runs: Annotated[Optional[int], typer.Option(help="Stop after this many runs.")] = None) -> None:
    """Run `veil release` on a cron schedule (for hosts without an orchestrator)."""

    def run() -> int:
        from engine.schedule import parse_cron, run_schedule

        cfg.load(config)  # fail now, not at 2 a.m.
        try:
            spec = parse_cron(cron)
        except ValueError as exc:
            raise ConfigError(f"--cron: {exc}") from None

        def job() -> int:
            res = _run_subcommand(["release", "--config", str(config)])
            return res

        return run_schedule(spec, job, max_runs=max_runs, log=lambda m: err.print(m))

    _guard(run)


def _run_subcommand(args: list[str]) -> int:
    """One scheduled run in a fresh process, so a crash or a leak never takes the scheduler down."""
    import subprocess

    return subprocess.call([sys.executable, "-m", "engine.cli", *args])


@app.command()
def demo(directory: Annotated[Path, typer.Option("--dir", help="Where to create the demo warehouse.")] = Path("veil-demo"),
         rows: Annotated[int, typer.Option(help="Synthetic census rows.")] = 100_000,
         reset: Annotated[bool, typer.Option("--reset", help="Start from a new warehouse.")] = False) -> None:
    """Create a demo warehouse (embedded DuckDB, synthetic census) and publish a real release of it."""

    def run() -> int:
        from engine.demo.setup import run_demo

        return run_demo(directory, rows=rows, reset=reset, say=out.print, step=_step(False))

    _guard(run)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
