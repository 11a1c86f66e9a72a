"""The ``veil`` command: thin.  Each command parses its options, runs one body under the shared contract
(:mod:`veil.command`: exit codes 0/1/2, one JSON document with ``--json``, one error line, Ctrl-C, logging,
``--wait``) and renders its result.

Adding a command: declare its options with the shared ``*Opt`` annotations below, write a ``body()``
returning a :class:`~veil.command.Result` (a document with ``status``, an exit code, a human rendering),
and end with ``finish("<name>", Options(as_json, quiet, verbose, wait), body)``.  Import heavy modules
inside ``body`` so ``veil --help`` stays fast (it imports no numpy, SQLAlchemy or driver); a short command
imports them under ``with _loading():`` (no garbage collection over what they allocate).
"""

from __future__ import annotations

import atexit
import gc
import logging
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn, Optional

import click
import typer

import veil
from veil import log
from veil.command import FAILED, NO_SOLUTION, OK, Options, Result, console, emit, execute, say

app = typer.Typer(add_completion=False, no_args_is_help=False, pretty_exceptions_enable=False,
                  rich_markup_mode=None, context_settings={"help_option_names": ["-h", "--help"]},
                  help="Veil: publish anonymized releases of warehouse tables (k-anonymity, l-diversity, "
                       "t-closeness, ε-privacy).  Exit codes: 0 done, 2 no node satisfies the models, 1 failure.")

ConfigOpt = Annotated[Path, typer.Option("--config", "-c", help="Release config (TOML).", show_default=False)]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print exactly one JSON document on stdout, whatever happens.")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Log errors only.")]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Log details too.")]
WaitOpt = Annotated[float, typer.Option("--wait", metavar="SECONDS", min=0.0,
                                        help="Retry while the database is busy (a DuckDB file open in another "
                                             "process, a concurrent release) for up to this many seconds.")]
NodeOpt = Annotated[Optional[str], typer.Option("--node", help="Levels, e.g. 1,0,2 (default: all 0).")]


def finish(command: str, options: Options, body: Callable[[], Result]) -> NoReturn:
    """Run ``body`` under the shared contract and exit with its code."""
    raise typer.Exit(execute(command, options, body))


def _version(value: bool) -> None:
    if value:
        say(f"veil {veil.__version__}")
        raise typer.Exit(OK)


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", is_eager=True, callback=_version,
                                                 help="Print Veil's version and exit.")] = False) -> None:
    """Veil: publish anonymized releases of warehouse tables."""


@contextmanager
def _loading() -> Iterator[None]:
    """Import a command's modules with the cyclic garbage collector off, then exempt what they allocated from
    later collections (``gc.freeze``): SQLAlchemy and numpy leave tens of thousands of objects that live as long
    as the process, and rescanning them costs a short command (``search`` on a small table) tens of
    milliseconds."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        atexit.register(gc.unfreeze)  # collectable again when the interpreter finalizes (drivers check for leaks)
        if enabled:
            gc.enable()


def _load(config: Path) -> Any:
    from veil import config as cfg

    return cfg.load(config)


def _node(text: str | None, heights: tuple[int, ...]) -> tuple[int, ...]:
    from veil.errors import ConfigError
    from veil.lattice import parse_node

    if text is None:
        return tuple(0 for _ in heights)
    try:
        return parse_node(text, heights)
    except ValueError as exc:
        raise ConfigError(f"--node: {exc}") from None


@app.command()
def counts(config: ConfigOpt, node: NodeOpt = None, as_json: JsonOpt = False, quiet: QuietOpt = False,
           verbose: VerboseOpt = False, wait: WaitOpt = 0.0) -> None:
    """The q*-blocks at one lattice node: generalized key, size and sensitive histograms."""

    def body() -> Result:
        with _loading():
            from veil.run import counts_document, open_warehouse

        conf = _load(config)
        with open_warehouse(conf, sensitive=conf.sensitive, on_step=log.step, rollup=False) as wh:
            doc = counts_document(wh, wh.counts(_node(node, wh.heights)))

        def show() -> None:
            from rich.table import Table

            table = Table(title=f"{conf.source.qualified} at node {doc['node']}: {len(doc['blocks'])} blocks, "
                                f"{doc['rows']} rows")
            for name in [*doc["attributes"], "size", *conf.sensitive]:
                table.add_column(name, justify="right" if name == "size" else "left")
            for b in doc["blocks"]:
                hist = [", ".join(f"{v}: {c}" for v, c in b["sensitive"][s].items()) for s in conf.sensitive]
                table.add_row(*b["key"], str(b["size"]), *hist)
            console().print(table)

        return Result({"status": "ok", **doc}, OK, show)

    finish("counts", Options(as_json, quiet, verbose, wait), body)


@app.command()
def check(config: ConfigOpt,
          node: Annotated[Optional[str], typer.Option(help="Levels, e.g. 1,0,2 (default: the source as it stands).")] = None,
          as_json: JsonOpt = False, quiet: QuietOpt = False, verbose: VerboseOpt = False, wait: WaitOpt = 0.0) -> None:
    """Evaluate every model at one node: passed, achieved level, violating blocks (exit 0 either way)."""

    def body() -> Result:
        with _loading():
            from veil.privacy import Specification
            from veil.run import check_document, evaluate_node, open_run

        with open_run(_load(config), on_step=log.step, rollup=False) as (conf, wh):
            spec = Specification(conf.models, conf.search.max_suppression)  # hierarchies read from tables
            counts, evaluation = evaluate_node(wh, spec, _node(node, wh.heights))
            doc = check_document(wh, spec, counts, evaluation)

        def show() -> None:
            from rich.table import Table

            verdict = "passes" if doc["passed"] else "fails"
            suppressing = f", suppressing {doc['suppressed_rows']} rows" if doc["suppressed_rows"] else ""
            say(f"{conf.source.qualified} at node {doc['node']}: {doc['blocks']} blocks, {doc['rows']} rows — "
                f"{verdict}{suppressing}")
            table = Table()
            for col in ("model", "attribute", "passed", "achieved", "violating blocks"):
                table.add_column(col)
            for m, model in zip(doc["models"], conf.models):
                achieved = "∞ / undefined" if m["achieved"] is None else f"{m['achieved']:.6g}"
                table.add_row(model.describe(), m["attribute"] or "", "yes" if m["passed"] else "no", achieved,
                              str(m["violating_blocks"]))
            console().print(table)

        return Result({"status": "ok", **doc}, OK, show)

    finish("check", Options(as_json, quiet, verbose, wait), body)


@app.command()
def search(config: ConfigOpt,
           strategy: Annotated[Optional[str], typer.Option(
               help="optimal | incognito | brute-force (or several, comma-separated, sharing counts).")] = None,
           metric: Annotated[Optional[str], typer.Option(help="height | precision | avg-block-size | "
                                                               "discernibility | kl-divergence")] = None,
           as_json: JsonOpt = False, quiet: QuietOpt = False, verbose: VerboseOpt = False, wait: WaitOpt = 0.0) -> None:
    """Search the lattice: every minimal passing node and/or the proven-optimal one (exit 2: none passes)."""

    def body() -> Result:
        from veil.errors import ConfigError

        with _loading():
            from veil import config as cfg
            from veil.run import run_search

        conf = _load(config)
        strategies = tuple(s.strip() for s in (strategy or conf.search.strategy).split(",") if s.strip())
        for s in strategies:
            if s not in cfg.STRATEGIES:
                raise ConfigError(f"--strategy {s!r}: one of {', '.join(cfg.STRATEGIES)}")
        if metric is not None and metric not in cfg.METRICS:
            raise ConfigError(f"--metric {metric!r}: one of {', '.join(cfg.METRICS)}")
        result, stats, failure = run_search(cfg.override(conf, metric=metric), strategies, on_step=log.step)
        doc = {**result.document(), "work": stats.document()}
        status = {"status": "ok"} if failure is None else {"status": failure.status, "error": str(failure),
                                                            **failure.details}

        def show() -> None:
            from rich.table import Table

            bounded = f", {doc['nodes_bounded']} ruled out by block sizes" if doc["nodes_bounded"] else ""
            say(f"lattice of {doc['lattice_size']} nodes (heights {doc['heights']}): {doc['nodes_evaluated']} "
                f"evaluated{bounded}, {stats.node_queries} node queries, {doc['seconds']:.3f} s")
            if doc["minimal"]:
                table = Table(title=f"{len(doc['minimal'])} minimal passing node(s)")
                for a in doc["attributes"]:
                    table.add_column(a, justify="right")
                for n in doc["minimal"]:
                    table.add_row(*map(str, n))
                console().print(table)
            if doc["optimal"] is not None:
                o = doc["optimal"]
                say(f"optimal node {o['node']} ({o['metric']} = {o['value']:.6g})")
            if failure is not None:
                say(str(failure))

        return Result({**status, **doc}, OK if failure is None else NO_SOLUTION, show)

    finish("search", Options(as_json, quiet, verbose, wait), body)


@app.command()
def init(config: ConfigOpt, as_json: JsonOpt = False, quiet: QuietOpt = False, verbose: VerboseOpt = False,
         wait: WaitOpt = 60.0) -> None:  # two at once serialize: a second waits for a DuckDB file (job.INIT_WAIT)
    """Create or upgrade Veil's catalog (Alembic migrations) in the target database."""

    def body() -> Result:
        from veil.release import init as do_init

        conf = _load(config)
        before, after = do_init(conf, wait)
        where = f"schema {conf.catalog_schema!r}"
        text = (f"catalog in {where} is up to date (revision {after})" if before == after
                else f"catalog in {where}: {before or 'none'} → {after}")
        return Result({"status": "ok", "catalog_schema": conf.catalog_schema, "revision_before": before,
                       "revision": after, "message": text}, OK, lambda: say(text))

    finish("init", Options(as_json, quiet, verbose, wait), body)


@app.command()
def release(config: ConfigOpt,
            force: Annotated[bool, typer.Option("--force", help="Publish even if source and config are unchanged.")] = False,
            as_json: JsonOpt = False, quiet: QuietOpt = False, verbose: VerboseOpt = False, wait: WaitOpt = 0.0) -> None:
    """Search, materialize, verify and publish a new release version (exit 2: no node satisfies)."""

    def body() -> Result:
        from veil.release import release as do_release

        outcome = do_release(_load(config), force=force, wait=wait, on_step=log.step)
        return Result(outcome.document(), outcome.exit_code, lambda: say(outcome.message))

    finish("release", Options(as_json, quiet, verbose, wait), body)


@app.command()
def releases(config: ConfigOpt, as_json: JsonOpt = False, quiet: QuietOpt = False, verbose: VerboseOpt = False,
             wait: WaitOpt = 0.0) -> None:
    """The release's history: every run and version (status, node, rows, achieved levels, times)."""

    def body() -> Result:
        from veil.release import releases as history

        doc = history(_load(config))

        def show() -> None:
            say(f"release {doc['name']!r}: current version {doc['current']}")
            for r in doc["releases"]:
                achieved = ", ".join(f"{k} {v:.4g}" if v is not None else f"{k} ∞"
                                     for k, v in (r["achieved"] or {}).items())
                counts = (f"{r['rows_published']} published, {r['rows_suppressed']} suppressed, "
                          f"{r['rows_deferred'] or 0} deferred" if r["rows_published"] is not None else "")
                parts = [f"v{r['version']}" if r["version"] is not None else "-",
                         r["status"] + (" (current)" if r["current"] else ""), f"node {r['node']}" if r["node"] else "",
                         counts, achieved, f"started {r['started_at']}",
                         f"published {r['published_at']}" if r["published_at"] else "", r["message"] or ""]
                say("  " + "; ".join(p for p in parts if p))

        return Result({"status": "ok", **doc}, OK, show)

    finish("releases", Options(as_json, quiet, verbose, wait), body)


@app.command()
def rollback(config: ConfigOpt,
             to: Annotated[int, typer.Option("--to", help="The kept version the views should show.")],
             as_json: JsonOpt = False, quiet: QuietOpt = False, verbose: VerboseOpt = False, wait: WaitOpt = 0.0) -> None:
    """Repoint the release's views to a kept version, atomically (recorded in the catalog)."""

    def body() -> Result:
        from veil.release import rollback as do_rollback

        doc = do_rollback(_load(config), to, wait)
        return Result({"status": "ok", **doc}, OK, lambda: say(doc["message"]))

    finish("rollback", Options(as_json, quiet, verbose, wait), body)


@app.command()
def audit(config: ConfigOpt,
          node: Annotated[Optional[str], typer.Option(help="A lattice node, e.g. 1,0,2.")] = None,
          release: Annotated[Optional[int], typer.Option("--release", help="A published version (read back from "
                                                         "the warehouse).")] = None,
          series: Annotated[bool, typer.Option("--series", help="What the published history exposes: every pair "
                                               "of versions' differences that fail the models.")] = False,
          as_json: JsonOpt = False, quiet: QuietOpt = False, verbose: VerboseOpt = False, wait: WaitOpt = 0.0) -> None:
    """Attack audit: rows and blocks exposed per attack (default: the table as it stands, already generalized);
    with --series, the exposure of the published history."""

    def body() -> Result:
        from veil.errors import ConfigError

        if sum(x is not None for x in (node, release)) + series > 1:
            raise ConfigError("veil audit: --node, --release and --series are mutually exclusive")
        if series:
            return _series_exposure(_load(config))
        from veil.risk.subject import run_audit

        doc = run_audit(_load(config), node=node, release=release, on_step=log.step).document()
        return Result({"status": "ok", **doc}, OK, lambda: _show_audit(doc))

    finish("audit", Options(as_json, quiet, verbose, wait), body)


def _series_exposure(conf: Any) -> Result:
    from veil.release import exposure

    doc = exposure(conf)

    def show() -> None:
        say(f"release {doc['name']!r}: {len(doc['versions'])} version(s) in the ledger, {doc['pairs_checked']} "
            f"pair(s) checked, {doc['exposed_pairs']} exposing, {doc['rows_exposed']} row(s) exposed in all")
        for p in doc["pairs"]:
            say(f"  versions {p['versions'][0]} → {p['versions'][1]} (at node {p['compared_at']}): "
                f"{p['blocks']} block(s), {p['rows_exposed']} row(s) exposed")

    return Result({"status": "ok", **doc}, OK, show)


def _show_audit(doc: dict[str, Any]) -> None:
    from rich.markup import escape
    from rich.table import Table

    say(f"audit of {doc['subject']}: {doc['rows']} rows in {doc['blocks']} blocks (smallest {doc['smallest_block']})")
    table = Table()
    for col in ("attribute", "attack", "blocks", "rows", "worst block", "why"):
        table.add_column(col, justify="right" if col in ("blocks", "rows") else "left")
    for a in doc["attacks"]:
        w = a["worst"][0] if a["worst"] else None
        where = f"{', '.join(w['key'])} ({w['size']} rows)" if w else ""
        table.add_row(escape(a["attribute"]), a["attack"], "" if a["skipped"] else str(a["blocks"]),
                      "" if a["skipped"] else str(a["rows"]), escape(where),
                      escape(a["skipped"] or (w["detail"] if w else "")))
    console().print(table)
    for a in doc["attacks"]:
        if not a["skipped"]:
            say(f"{a['attack']} ({a['attribute']}): {a['definition']}")


@app.command()
def report(config: ConfigOpt,
           out_file: Annotated[Path, typer.Option("--out", help="The HTML file to write.")],
           node: Annotated[Optional[str], typer.Option(help="A candidate lattice node, e.g. 1,0,2 (default: the "
                                                          "search's choice).")] = None,
           release: Annotated[Optional[int], typer.Option("--release", help="A published version.")] = None,
           as_json: JsonOpt = False, quiet: QuietOpt = False, verbose: VerboseOpt = False, wait: WaitOpt = 0.0) -> None:
    """One self-contained HTML report (lattice, blocks, distributions, levels, utility, audit) of a release or node."""

    def body() -> Result:
        from veil.report import build_report

        path = build_report(_load(config), out_file, node=node, release=release, on_step=log.step)
        return Result({"status": "ok", "out": str(path)}, OK, lambda: say(f"report written to {path}"))

    finish("report", Options(as_json, quiet, verbose, wait), body)


@app.command()
def hierarchy(config: ConfigOpt,
              column: Annotated[Optional[str], typer.Option(help="Print this column's hierarchy (ARX CSV format).")] = None,
              out_file: Annotated[Optional[Path], typer.Option("--out", help="Write the CSV to this file.")] = None,
              check_all: Annotated[bool, typer.Option("--check", help="Check every hierarchy against the source and "
                                                      "list every value each one misses (exit 1: any invalid).")] = False,
              as_json: JsonOpt = False, quiet: QuietOpt = False, verbose: VerboseOpt = False, wait: WaitOpt = 0.0) -> None:
    """Print one hierarchy as `value;level1;...;levelh`, or check all of them against the source at once."""

    def body() -> Result:
        from veil import config as cfg
        from veil.coverage import check_hierarchies, export_hierarchy
        from veil.errors import ConfigError

        if check_all == (column is not None):
            raise ConfigError("veil hierarchy: give exactly one of --column C (print a hierarchy) or --check")
        conf = cfg.load(config, check_hierarchies=not check_all)  # --check reports each hierarchy's own errors
        if check_all:
            report = check_hierarchies(conf)
            doc = report.document()
            return Result({"status": "ok" if report.valid else "failed", **doc}, OK if report.valid else FAILED,
                          lambda: [say(line) for line in report.lines()])
        assert column is not None
        h, text = export_hierarchy(conf, column)
        if out_file is not None:
            out_file.write_text(text, encoding="utf-8")
            log.step(f"wrote the hierarchy of {column!r} ({h.source}, height {h.height}, {len(h.leaves)} values) "
                     f"to {out_file}")
        doc = {"status": "ok", "column": column, "source": h.source, "height": h.height, "values": len(h.leaves),
               "csv": text if out_file is None else None, "out": str(out_file) if out_file else None}
        return Result(doc, OK, (lambda: sys.stdout.write(text)) if out_file is None else None)

    finish("hierarchy", Options(as_json, quiet, verbose, wait), body)


@app.command()
def schedule(config: ConfigOpt,
             cron: Annotated[str, typer.Option(help='Cron expression, e.g. "0 2 * * *", or @daily.')],
             tz: Annotated[Optional[str], typer.Option(
                 "--tz", help="IANA time zone of the cron times, e.g. Europe/Paris (default: local time).")] = None,
             max_runs: Annotated[Optional[int], typer.Option(min=0, help="Stop after this many runs.")] = None,
             quiet: QuietOpt = False, verbose: VerboseOpt = False, wait: WaitOpt = 0.0) -> None:
    """Run `veil release` on a cron schedule (for hosts without an orchestrator), each run in a fresh process.

    At start it checks the config, the connection, the source table and the catalog, and fails at once if
    one is wrong; then it logs "next run at ..." before each wait and one line per run."""

    def body() -> Result:
        from veil.errors import ConfigError
        from veil.preflight import preflight
        from veil.schedule import clock, parse_cron, run_schedule, zone

        conf = _load(config)
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
        flags = ["--quiet"] * quiet + ["--verbose"] * verbose + (["--wait", f"{wait:g}"] if wait else [])
        code = run_schedule(spec, lambda: _run_subcommand(["release", "--config", str(conf.path), *flags]),
                            now=clock(where), max_runs=max_runs)
        return Result({"status": "ok", "exit_code": code}, code)

    finish("schedule", Options(False, quiet, verbose, wait), body)


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
def demo(directory: Annotated[Path, typer.Option("--dir", help="Where to create the demo warehouse.")] = Path("veil-demo"),
         rows: Annotated[int, typer.Option(min=1, help="Synthetic census rows.")] = 100_000,
         reset: Annotated[bool, typer.Option("--reset", help="Start from a new warehouse.")] = False,
         quiet: QuietOpt = False, verbose: VerboseOpt = False) -> None:
    """Create a demo warehouse (embedded DuckDB, synthetic census) and publish a real release of it."""

    def body() -> Result:
        from veil.demo.setup import run_demo

        code = run_demo(directory, rows=rows, reset=reset, say=say, step=log.step)
        return Result({"status": "ok"}, code)

    finish("demo", Options(False, quiet, verbose), body)


@app.command()
def seed(config: ConfigOpt,
         rows: Annotated[int, typer.Option(min=1, help="Synthetic census rows.")] = 100_000,
         random_seed: Annotated[int, typer.Option("--seed", help="Generator seed (same seed, same rows).")] = 42,
         as_json: JsonOpt = False, quiet: QuietOpt = False, verbose: VerboseOpt = False, wait: WaitOpt = 0.0) -> None:
    """Load the synthetic census into the config's source table if that table does not exist (demo,
    docker-compose's first start); an existing table is never touched."""

    def body() -> Result:
        from veil.demo.seed import seed as do_seed

        conf = _load(config)
        text = do_seed(conf, rows=rows, seed=random_seed, step=log.step)
        return Result({"status": "ok", "table": conf.source.qualified, "message": text}, OK, lambda: say(text))

    finish("seed", Options(as_json, quiet, verbose, wait), body)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: usage errors (unknown option, missing value, bad flag, no command) are one line on
    stderr and exit 1 — never click's exit 2, which means "no node satisfies the models" here."""
    args = list(sys.argv[1:] if argv is None else argv)
    if argv is None:  # the ``veil`` program itself: freed cells go back to the system (veil.heap)
        from veil.heap import pin_mmap_threshold
        pin_mmap_threshold()
    try:
        code = app(args=args, prog_name="veil", standalone_mode=False)
    except click.ClickException as exc:
        code = _usage_error(exc, args)
    except click.Abort:
        log.setup()
        log.log.error("interrupted")
        code = FAILED
    code = code if isinstance(code, int) else OK
    if argv is None:  # the ``veil`` program itself, not a caller in this interpreter
        _end_process(code)
    sys.exit(code)


def _end_process(code: int) -> NoReturn:
    """End the ``veil`` process once its output is written, without the interpreter's teardown.

    The command is done when ``main`` gets its exit code: every backend session is a context that has closed
    its connection and ended its transaction, and the output and the log are flushed here.  Tearing the
    interpreter down would only collect, one by one, the objects SQLAlchemy, numpy and the driver allocated:
    about a tenth of a second, a tenth of a search on a small table (issue 11)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed or broken pipe: nothing more can be written anyway
            pass
    logging.shutdown()
    os._exit(code)


def _usage_error(exc: click.ClickException, args: Sequence[str]) -> int:
    ctx = getattr(exc, "ctx", None)
    where = ctx.command_path if ctx is not None else "veil"
    from veil.errors import redact

    message = " ".join(exc.format_message().split()).rstrip(".")
    line = redact(f"usage: {message} (see `{where} --help`)")
    log.setup()
    log.log.error(line)
    if "--json" in args:
        emit({"status": "failed", "error": line})
    return FAILED


if __name__ == "__main__":
    main()
