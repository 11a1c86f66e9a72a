"""The ``veil`` command: thin.  Each command parses its options, runs one body under the shared contract
(:mod:`veil.contract`: exit codes 0/1/2, one JSON document with ``--json``, one error line, Ctrl-C, logging,
``--wait``) and renders its result.

Adding a command: declare its options with the shared ``*Opt`` annotations below (every option with a help
text: the docs' CLI reference is generated from this app), write a ``body()`` returning a
:class:`~veil.contract.Result` (a document with ``status``, an exit code, a human rendering), and end with
``finish("<name>", Options(as_json, quiet, verbose, wait, log_format), body)``.  A command reading a config
resolves it with :func:`config_path` (``--config``, else ``veil.toml`` here, else ``$VEIL_CONFIG``).  Import heavy modules
inside ``body`` so ``veil --help`` stays fast (it imports no numpy, SQLAlchemy or driver); a short command
imports them under ``with _loading():`` (no garbage collection over what they allocate).
"""

from __future__ import annotations

import atexit
import copy
import enum
import gc
import logging
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, NoReturn, Optional

import typer

import veil
from veil import log
from veil.contract import FAILED, NO_SOLUTION, OK, Options, Result, console, emit, execute, say
from veil.registry import STRATEGIES  # stdlib only: names read without importing the search

CONFIG_FILE = "veil.toml"  # looked for in the working folder when --config is not given
CONFIG_ENV = "VEIL_CONFIG"  # else the config this environment variable names

app = typer.Typer(
    add_completion=False,
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Veil: publish anonymized releases of warehouse tables (k-anonymity, l-diversity, "
    "t-closeness, ε-privacy).  Every command reads the config given with --config, else "
    f"{CONFIG_FILE} in the working folder, else the file ${CONFIG_ENV} names.  Exit codes: 0 "
    "done, 2 no node satisfies the models, 1 failure.",
)


class LogFormat(str, enum.Enum):
    """``--log-format``: text lines (short on a terminal, timestamped elsewhere) or one JSON object a record."""

    text = "text"
    json = "json"


ConfigOpt = Annotated[
    Optional[Path],
    typer.Option(
        "--config",
        "-c",
        show_default=False,
        help=f"The config (TOML).  Default: {CONFIG_FILE} in the working folder, else the file ${CONFIG_ENV} names.",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print exactly one JSON document on stdout, whatever happens.")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Log errors only.")]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Log details too.")]
WaitOpt = Annotated[
    float,
    typer.Option(
        "--wait",
        metavar="SECONDS",
        min=0.0,
        help="Retry while the database is busy (a DuckDB file open in another "
        "process, a concurrent release) for up to this many seconds.",
    ),
]
LogFormatOpt = Annotated[
    LogFormat,
    typer.Option(
        "--log-format",
        envvar="VEIL_LOG_FORMAT",
        case_sensitive=False,
        help="Log records on stderr as text lines (short on a terminal, ISO-timestamped elsewhere) or as one JSON "
        "object each: time (ISO 8601 with offset), level, command, message.",
    ),
]
NodeOpt = Annotated[Optional[str], typer.Option("--node", help="Levels, e.g. 1,0,2 (default: all 0).")]
COUNTS_LIMIT = 50  # blocks ``veil counts`` shows by default, the smallest first
MINIMAL_LIMIT = 20  # minimal nodes ``veil search`` prints by default, the lowest first


def finish(command: str, options: Options, body: Callable[[], Result]) -> NoReturn:
    """Run ``body`` under the shared contract and exit with its code."""
    raise typer.Exit(execute(command, options, body))


def _version(value: bool) -> None:
    if value:
        say(f"veil {veil.__version__}")
        raise typer.Exit(OK)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", is_eager=True, callback=_version, help="Print Veil's version and exit.")
    ] = False,
) -> None:
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


def config_path(given: Path | None) -> Path:
    """The config a command reads: ``--config``, else ``veil.toml`` in the working folder, else the file
    ``$VEIL_CONFIG`` names; none of them is one line saying where it looked."""
    from veil.errors import ConfigError

    if given is not None:
        return given
    here = Path.cwd() / CONFIG_FILE
    if here.is_file():
        return here
    named = os.environ.get(CONFIG_ENV, "")
    if named and not Path(named).is_file():
        raise ConfigError(f"{CONFIG_ENV}={named}: no such file (no --config given, no {CONFIG_FILE} in {Path.cwd()})")
    if named:
        return Path(named)
    raise ConfigError(f"no config: no --config given, no {CONFIG_FILE} in {Path.cwd()}, and {CONFIG_ENV} is not set")


def _load(config: Path | None) -> Any:
    from veil import config as cfg

    return cfg.load(config_path(config))


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
def counts(
    config: ConfigOpt = None,
    node: NodeOpt = None,
    limit: Annotated[
        int,
        typer.Option(
            "--limit",
            min=0,
            metavar="N",
            help="Show at most N blocks, the smallest first (the riskiest: fewest people share their key); 0 "
            "shows all.  The totals (blocks, rows, blocks not shown) are always printed.",
        ),
    ] = COUNTS_LIMIT,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    wait: WaitOpt = 0.0,
    log_format: LogFormatOpt = LogFormat.text,
) -> None:
    """The q*-blocks at one lattice node, smallest first: generalized key, size and sensitive histograms
    (at most --limit of them; --json carries the same blocks and the totals)."""

    def body() -> Result:
        with _loading():
            from veil.run import counts_document, open_warehouse

        conf = _load(config)
        with open_warehouse(conf, sensitive=conf.sensitive, on_step=log.step, rollup=False) as wh:
            doc = counts_document(wh, wh.counts(_node(node, wh.heights)), limit=limit)
        return Result({"status": "ok", **doc}, OK, lambda: _show_counts(conf, doc))

    finish("counts", Options(as_json, quiet, verbose, wait, log_format.value), body)


def _say_lines(lines: Iterable[str]) -> None:
    """Each line of human output, in order."""
    for line in lines:
        say(line)


def _write(text: str) -> None:
    """Text on stdout as it is (a CSV, its own newlines)."""
    sys.stdout.write(text)


def _show_counts(conf: Any, doc: dict[str, Any]) -> None:
    from rich.table import Table

    which = "smallest first" if not doc["blocks_not_shown"] else f"the {len(doc['blocks'])} smallest shown"
    table = Table(
        title=f"{conf.source.qualified} at node {doc['node']}: {doc['block_count']:,} blocks, "
        f"{doc['rows']:,} rows; {which}"
    )
    for name in [*doc["attributes"], "size", *conf.sensitive]:
        table.add_column(name, justify="right" if name == "size" else "left")
    for b in doc["blocks"]:
        hist = [", ".join(f"{v}: {c}" for v, c in b["sensitive"][s].items()) for s in conf.sensitive]
        table.add_row(*b["key"], str(b["size"]), *hist)
    console().print(table)
    if doc["blocks_not_shown"]:
        say(
            f"{doc['blocks_not_shown']:,} more block(s) with {doc['rows_not_shown']:,} row(s) not shown "
            "(--limit N shows N, --limit 0 all)"
        )


@app.command()
def check(
    config: ConfigOpt = None,
    node: Annotated[Optional[str], typer.Option(help="Levels, e.g. 1,0,2 (default: the source as it stands).")] = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    wait: WaitOpt = 0.0,
    log_format: LogFormatOpt = LogFormat.text,
) -> None:
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
            say(
                f"{conf.source.qualified} at node {doc['node']}: {doc['blocks']} blocks, {doc['rows']} rows — "
                f"{verdict}{suppressing}"
            )
            table = Table()
            for col in ("model", "attribute", "passed", "achieved", "violating blocks"):
                table.add_column(col)
            for m, model in zip(doc["models"], conf.models):
                achieved = "∞ / undefined" if m["achieved"] is None else f"{m['achieved']:.6g}"
                table.add_row(
                    model.describe(),
                    m["attribute"] or "",
                    "yes" if m["passed"] else "no",
                    achieved,
                    str(m["violating_blocks"]),
                )
            console().print(table)

        return Result({"status": "ok", **doc}, OK, show)

    finish("check", Options(as_json, quiet, verbose, wait, log_format.value), body)


StrategyOpt = Annotated[
    Optional[str],
    typer.Option(
        help=f"{' | '.join(STRATEGIES.names())} (or several, comma-separated, sharing counts; default: the "
        "config's [search] strategy)."
    ),
]
MetricOpt = Annotated[
    Optional[str],
    typer.Option(
        help="height | precision | avg-block-size | "
        "discernibility | kl-divergence | workload "
        "(veil.metrics.REGISTRY; default: the config's "
        "[search] metric)."
    ),
]
MinimalLimitOpt = Annotated[
    int,
    typer.Option(
        "--limit",
        min=0,
        metavar="N",
        help="Print at most N minimal passing nodes, lowest first (0: all); --json always lists all.",
    ),
]


@app.command()
def search(
    config: ConfigOpt = None,
    strategy: StrategyOpt = None,
    metric: MetricOpt = None,
    limit: MinimalLimitOpt = MINIMAL_LIMIT,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    wait: WaitOpt = 0.0,
    log_format: LogFormatOpt = LogFormat.text,
) -> None:
    """Search the lattice: every minimal passing node (incognito, brute-force) and/or the proven-optimal one
    (optimal), with what each strategy evaluated (exit 2: no node passes)."""

    def body() -> Result:
        from veil.errors import ConfigError

        with _loading():
            from veil import config as cfg

        conf = _load(config)
        strategies = _strategies(strategy or conf.search.strategy)
        if metric is not None and metric not in cfg.METRICS:
            raise ConfigError(f"--metric {metric!r}: one of {', '.join(cfg.METRICS)}")
        return _searched(cfg.override(conf, metric=metric), strategies, limit)

    finish("search", Options(as_json, quiet, verbose, wait, log_format.value), body)


def _strategies(text: str) -> tuple[str, ...]:
    """``--strategy`` (else the config's): comma-separated names, each a registered strategy."""
    from veil.errors import ConfigError

    strategies = tuple(s.strip() for s in text.split(",") if s.strip())
    for s in strategies:
        if s not in STRATEGIES:
            raise ConfigError(f"--strategy {s!r}: one of {', '.join(STRATEGIES.names())}")
    return strategies


def _searched(conf: Any, strategies: tuple[str, ...], limit: int) -> Result:
    """``veil search``'s result: the strategies run on ``conf``'s table, the search's document with the work done
    and the ``[[workload]]`` extras (exit 2 and why when no node passes), printed by ``_show_search``."""
    with _loading():
        from veil.run import no_solution, open_run, search_warehouse
        from veil.privacy import Specification
        from veil.workload import search_document
    with open_run(conf, on_step=log.step) as (conf, wh):
        result = search_warehouse(wh, conf, strategies)
        failure = (
            None if result.any_passing else no_solution(wh, Specification(conf.models, conf.search.max_suppression))
        )
        extras = search_document(wh, conf, result)  # [[workload]] errors, utility per attribute (issue 38)
        stats = wh.work_done()
    doc = {**result.document(), "work": stats.document(), **extras}
    status = (
        {"status": "ok"} if failure is None else {"status": failure.status, "error": str(failure), **failure.details}
    )
    return Result(
        {**status, **doc},
        OK if failure is None else NO_SOLUTION,
        lambda: _show_search(doc, limit, None if failure is None else str(failure)),
    )


def _show_search(doc: dict[str, Any], limit: int, failure: str | None) -> None:
    """The search in words: the lattice, what each strategy evaluated, the minimal nodes (lowest first, at most
    ``limit``), the optimum."""
    from rich.table import Table

    size = doc["lattice_size"]
    work = doc["work"]
    counted = (
        f"every node counted in memory from the {work['local_cells']:,} cells fetched"
        if work["local_cells"]
        else f"{work['node_queries']:,} queries to the database"
    )
    say(f"lattice of {size:,} nodes (heights {doc['heights']}); searched in {doc['seconds']:.3f} s with {counted}")
    for i, w in enumerate(doc["by_strategy"]):
        parts = [f"evaluated {w['lattice_nodes']:,}{' more' if i else ''} of the {size:,} nodes"]
        if w["subset_nodes"]:
            parts.append(
                f"{w['subset_nodes']:,} nodes of smaller lattices (subsets of the quasi-identifiers, not "
                "nodes of this lattice)"
            )
        if w["nodes_bounded"]:
            parts.append(f"ruled out {w['nodes_bounded']:,} more by their block sizes alone")
        say(f"  {w['strategy']} ({w['seconds']:.3f} s): {'; '.join(parts)}")
    if len(doc["by_strategy"]) > 1:
        say("  (the strategies share their evaluations: a node is evaluated once)")
    minimal = sorted(doc["minimal"] or [], key=lambda n: (sum(n), n))
    if minimal:
        shown = minimal if limit == 0 else minimal[:limit]
        more = f", the first {len(shown)} shown" if len(shown) < len(minimal) else ""
        table = Table(title=f"{len(minimal):,} minimal passing node(s), lowest height first{more}")
        for a in [*doc["attributes"], "height"]:
            table.add_column(a, justify="right")
        for n in shown:
            table.add_row(*map(str, n), str(sum(n)))
        console().print(table)
        if len(shown) < len(minimal):
            say(f"… and {len(minimal) - len(shown):,} more minimal node(s) (--limit 0 prints all; --json lists all)")
    if doc["optimal"] is not None:
        o = doc["optimal"]
        say(f"optimal node {o['node']} ({o['metric']} = {o['value']:.6g})")
    if failure is not None:
        say(failure)


@app.command()
def init(
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    wait: WaitOpt = 60.0,  # two at once serialize: a second waits for a DuckDB file (job.INIT_WAIT)
    log_format: LogFormatOpt = LogFormat.text,
) -> None:
    """Create or upgrade Veil's catalog (Alembic migrations) in the target database."""

    def body() -> Result:
        from veil.release import init as do_init

        conf = _load(config)
        before, after = do_init(conf, wait)
        where = f"schema {conf.catalog_schema!r}"
        text = (
            f"catalog in {where} is up to date (revision {after})"
            if before == after
            else f"catalog in {where}: {before or 'none'} → {after}"
        )
        return Result(
            {
                "status": "ok",
                "catalog_schema": conf.catalog_schema,
                "revision_before": before,
                "revision": after,
                "message": text,
            },
            OK,
            lambda: say(text),
        )

    finish("init", Options(as_json, quiet, verbose, wait, log_format.value), body)


@app.command()
def release(
    config: ConfigOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Publish even if source and config are unchanged.")] = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Decide everything a release would — node, rows published, suppressed, deferred "
            "and held back by the series step — and verify it, then roll back: nothing is "
            "written (no catalog row, schema, rows or views).  Status would_publish, or "
            "skipped when nothing changed.",
        ),
    ] = False,
    new_series: Annotated[
        bool,
        typer.Option(
            "--new-series",
            help="Begin a new series with this version: search the node again and forget the "
            "last series' members (a reader can intersect both series: `veil audit "
            "--series` says how many people; docs/series.md §5).",
        ),
    ] = False,
    erase_departed: Annotated[
        bool,
        typer.Option(
            "--erase-departed",
            help="Every row still standing in for someone who left leaves tonight, whatever "
            "its batch (an erasure that must take effect now; what it exposes is "
            "recorded: docs/series.md §4).",
        ),
    ] = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    wait: WaitOpt = 0.0,
    log_format: LogFormatOpt = LogFormat.text,
) -> None:
    """Search, materialize, verify and publish a new release version (exit 2: no node satisfies); with
    --dry-run, say what it would publish and write nothing."""

    def body() -> Result:
        from veil.release import release as do_release

        conf = _load(config)
        if (new_series or erase_departed) and conf.release is not None:
            conf = replace(conf, release=replace(conf.release, new_series=new_series, erase_departed=erase_departed))
        outcome = do_release(conf, force=force, wait=wait, on_step=log.step, dry_run=dry_run)
        return Result(outcome.document(), outcome.exit_code, lambda: say(outcome.message))

    finish("release", Options(as_json, quiet, verbose, wait, log_format.value), body)


@app.command()
def releases(
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    wait: WaitOpt = 0.0,
    log_format: LogFormatOpt = LogFormat.text,
) -> None:
    """The release's history: every run and version (status, node, rows, achieved levels, times in ISO 8601
    UTC)."""

    def body() -> Result:
        from veil.release import releases as history

        doc = history(_load(config))

        def show() -> None:
            say(f"release {doc['name']!r}: current version {doc['current']}")
            for r in doc["releases"]:
                achieved = ", ".join(
                    f"{k} {v:.4g}" if v is not None else f"{k} ∞" for k, v in (r["achieved"] or {}).items()
                )
                counts = (
                    f"{r['rows_published']} published, {r['rows_suppressed']} suppressed, "
                    f"{r['rows_deferred'] or 0} deferred"
                    if r["rows_published"] is not None
                    else ""
                )
                parts = [
                    f"v{r['version']}" if r["version"] is not None else "-",
                    r["status"] + (" (current)" if r["current"] else ""),
                    f"node {r['node']}" if r["node"] else "",
                    counts,
                    achieved,
                    f"started {r['started_at']}",
                    f"published {r['published_at']}" if r["published_at"] else "",
                    r["message"] or "",
                ]
                say("  " + "; ".join(p for p in parts if p))

        return Result({"status": "ok", **doc}, OK, show)

    finish("releases", Options(as_json, quiet, verbose, wait, log_format.value), body)


@app.command()
def rollback(
    to: Annotated[int, typer.Option("--to", help="The kept version the views should show.")],
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    wait: WaitOpt = 0.0,
    log_format: LogFormatOpt = LogFormat.text,
) -> None:
    """Repoint the release's views to a kept version, atomically (recorded in the catalog)."""

    def body() -> Result:
        from veil.release import rollback as do_rollback

        doc = do_rollback(_load(config), to, wait)
        return Result({"status": "ok", **doc}, OK, lambda: say(doc["message"]))

    finish("rollback", Options(as_json, quiet, verbose, wait, log_format.value), body)


@app.command()
def audit(
    config: ConfigOpt = None,
    node: Annotated[Optional[str], typer.Option(help="A lattice node, e.g. 1,0,2.")] = None,
    release: Annotated[
        Optional[int], typer.Option("--release", help="A published version (read back from the warehouse).")
    ] = None,
    series: Annotated[
        bool,
        typer.Option(
            "--series",
            help="What the published history exposes: every pair of versions' differences that fail the models.",
        ),
    ] = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    wait: WaitOpt = 0.0,
    log_format: LogFormatOpt = LogFormat.text,
) -> None:
    """Attack audit: rows and blocks exposed per attack (default: the table as it stands, already generalized);
    with --series, the exposure of the published history."""

    def body() -> Result:
        from veil.errors import ConfigError

        if sum(x is not None for x in (node, release)) + series > 1:
            raise ConfigError("veil audit: --node, --release and --series are mutually exclusive")
        if series:
            return _series_exposure(_load(config))
        from veil.adversary.subject import run_audit

        doc = run_audit(_load(config), node=node, release=release, on_step=log.step).document()
        return Result({"status": "ok", **doc}, OK, lambda: _show_audit(doc))

    finish("audit", Options(as_json, quiet, verbose, wait, log_format.value), body)


RiskNodeOpt = Annotated[
    Optional[str], typer.Option(help="A lattice node, e.g. 1,0,2 (default: all 0, the source as it stands).")
]
RecountedReleaseOpt = Annotated[
    Optional[int], typer.Option("--release", help="A published version (its rows recounted from the warehouse).")
]
RiskThresholdOpt = Annotated[
    float,
    typer.Option(
        min=0.0, max=1.0, help="Records whose re-identification risk is above this are at risk (ARX's default 0.2)."
    ),
]
PopulationTableOpt = Annotated[
    Optional[str],
    typer.Option(
        "--population-table",
        help="A table of the whole population with the same quasi-identifier columns "
        "(schema.table): journalist and marketer risk against its class sizes.",
    ),
]
SamplingFractionOpt = Annotated[
    Optional[float],
    typer.Option(
        "--sampling-fraction",
        min=1e-9,
        max=1.0,
        help="The share of the population the table holds: population uniqueness estimated for n / fraction people.",
    ),
]
PopulationOpt = Annotated[
    Optional[int], typer.Option("--population", min=1, help="The population's size, instead of a sampling fraction.")
]


@app.command()
def risk(
    config: ConfigOpt = None,
    node: RiskNodeOpt = None,
    release: RecountedReleaseOpt = None,
    threshold: RiskThresholdOpt = 0.2,
    population_table: PopulationTableOpt = None,
    sampling_fraction: SamplingFractionOpt = None,
    population: PopulationOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    wait: WaitOpt = 0.0,
    log_format: LogFormatOpt = LogFormat.text,
) -> None:
    """Re-identification risk as ARX reports it (docs/reidentification.md): prosecutor, journalist and marketer
    risk, sample uniques and population uniqueness (Pitman, Zayatz, SNB, Dankar et al.'s rule), of a node or a
    published version."""

    def body() -> Result:
        with _loading():
            from veil.reidentification.subject import run_risk

        summary = run_risk(
            _load(config),
            node=node,
            release=release,
            threshold=threshold,
            population_table=population_table,
            sampling_fraction=sampling_fraction,
            population=population,
            on_step=log.step,
        )
        doc = summary.document()
        return Result({"status": "ok", **doc}, OK, lambda: _show_risk(doc))

    finish("risk", Options(as_json, quiet, verbose, wait, log_format.value), body)


def _show_risk(doc: dict[str, Any]) -> None:
    from veil.reidentification.report import lines

    for line in lines(doc):
        say(line)


def _series_exposure(conf: Any) -> Result:
    from veil.release import exposure

    doc = exposure(conf)

    def show() -> None:
        c = doc.get("cohort")
        if c is not None:
            say(
                f"release {doc['name']!r}: cohort series {c['series']} since version {c['started_version']} at node "
                f"{c['node']} (batch {c['batch']}): {c['cohorts']} cohort(s), {c['rows_published']} row(s) published, "
                f"{c['standing_in']} standing in, {c['waiting']} waiting; {c['cohorts_below_batch']} cohort(s) below "
                f"the batch, {c['cohorts_failing_models']} failing the models; {c['erased']} row(s) erased outside a "
                "batch"
            )
            for st in c["starts"]:
                say(
                    f"  version {st['version']} began series {st['series']} at node {st['node']}: "
                    f"{st['previous_published']} people the previous series published can be intersected"
                )
        say(
            f"release {doc['name']!r}: {len(doc['versions'])} version(s) in the ledger, {doc['pairs_checked']} "
            f"pair(s) checked, {doc['exposed_pairs']} exposing, {doc['rows_exposed']} row(s) exposed in all"
        )
        for p in doc["pairs"]:
            say(
                f"  versions {p['versions'][0]} → {p['versions'][1]} (at node {p['compared_at']}): "
                f"{p['blocks']} block(s), {p['rows_exposed']} row(s) exposed"
            )

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
        table.add_row(
            escape(a["attribute"]),
            a["attack"],
            "" if a["skipped"] else str(a["blocks"]),
            "" if a["skipped"] else str(a["rows"]),
            escape(where),
            escape(a["skipped"] or (w["detail"] if w else "")),
        )
    console().print(table)
    for a in doc["attacks"]:
        if not a["skipped"]:
            say(f"{a['attack']} ({a['attribute']}): {a['definition']}")


@app.command()
def report(
    out_file: Annotated[Path, typer.Option("--out", help="The HTML file to write.")],
    config: ConfigOpt = None,
    node: Annotated[
        Optional[str], typer.Option(help="A candidate lattice node, e.g. 1,0,2 (default: the search's choice).")
    ] = None,
    release: Annotated[Optional[int], typer.Option("--release", help="A published version.")] = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    wait: WaitOpt = 0.0,
    log_format: LogFormatOpt = LogFormat.text,
) -> None:
    """One self-contained HTML report (lattice, blocks, distributions, levels, utility, audit) of a release or node."""

    def body() -> Result:
        from veil.report import build_report

        path = build_report(_load(config), out_file, node=node, release=release, on_step=log.step)
        return Result({"status": "ok", "out": str(path)}, OK, lambda: say(f"report written to {path}"))

    finish("report", Options(as_json, quiet, verbose, wait, log_format.value), body)


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
                lambda: _say_lines(report.lines()),
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
        return Result(doc, OK, (lambda: _write(text)) if out_file is None else None)

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
        return Result(found.document(), OK if found.passed else FAILED, lambda: _say_lines(found.lines()))

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

        conf = _load(config)
        text = do_seed(conf, rows=rows, seed=random_seed, step=log.step)
        return Result({"status": "ok", "table": conf.source.qualified, "message": text}, OK, lambda: say(text))

    finish("seed", Options(as_json, quiet, verbose, wait, log_format.value), body)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: bare ``veil`` prints the help; usage errors (unknown command or option, missing value, bad
    flag) are one line on stderr and exit 1 — never click's exit 2, which means "no node satisfies the models"
    here — whichever click typer runs on (click itself, or the copy typer 0.2x vendors as ``typer._click``)."""
    args = list(sys.argv[1:] if argv is None else argv) or ["--help"]
    if argv is None:  # the ``veil`` program itself: freed cells go back to the system (veil.allocator)
        from veil.allocator import pin_mmap_threshold

        pin_mmap_threshold()
    try:
        code = _app_for(args)(args=args, prog_name="veil", standalone_mode=False)
    except Exception as exc:  # what click raises while parsing: a command's own errors never get here (execute)
        kind = _click_kind(exc)
        if kind is None:
            raise
        code = _usage_error(exc, args) if kind == "usage" else _interrupted(args)
    code = code if isinstance(code, int) else OK
    if code == INTERRUPTED:  # typer ≥ 0.2x turns Ctrl-C while parsing into exit 130
        code = _interrupted(args)
    if argv is None:  # the ``veil`` program itself, not a caller in this interpreter
        _end_process(code)
    sys.exit(code)


INTERRUPTED = 130


def _app_for(args: Sequence[str]) -> typer.Typer:
    """The app that runs ``args``: when they start with a command's name, ``app`` holding that command alone, so
    typer turns one command's signature into click options instead of all of them (about 18 ms of every
    command's start, issue 36); the command's options, help, errors and exit codes are the same.  ``--help``,
    ``--version``, no command or a mistyped one run on ``app`` itself (every command listed, "Did you mean")."""
    if not args or args[0].startswith("-"):
        return app
    chosen = [
        c
        for c in getattr(app, "registered_commands", ())  # (a test may stand a plain function in)
        if (c.name or typer.main.get_command_name(getattr(c.callback, "__name__", ""))) == args[0]
    ]
    if len(chosen) != 1:
        return app
    one = copy.copy(app)
    one.registered_commands = chosen
    return one


def _click_kind(exc: BaseException) -> str | None:
    """``"usage"`` for click's usage errors (``ClickException`` and its subclasses), ``"abort"`` for its
    ``Abort``, else ``None`` — matched by class name, so that click's classes and those of the copy of click a
    typer release vendors (``typer._click``, not click's classes; ``typer.Abort``) are caught alike."""
    names = {c.__name__ for c in type(exc).__mro__}
    return "usage" if "ClickException" in names else "abort" if "Abort" in names else None


def _log_format(args: Sequence[str]) -> str:
    """The ``--log-format`` of a command line click could not parse (else ``$VEIL_LOG_FORMAT``, else text)."""
    chosen = os.environ.get("VEIL_LOG_FORMAT", "text")
    for i, arg in enumerate(args):
        if arg == "--log-format" and i + 1 < len(args):
            chosen = args[i + 1]
        elif arg.startswith("--log-format="):
            chosen = arg.split("=", 1)[1]
    return "json" if chosen.lower() == "json" else "text"


def _interrupted(args: Sequence[str]) -> int:
    """Ctrl-C before a command ran (while click parsed): one line, and the JSON document with ``--json``."""
    log.setup(fmt=_log_format(args))
    log.log.error("interrupted")
    if "--json" in args:
        emit({"status": "failed", "error": "interrupted"})
    return FAILED


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


def _usage_error(exc: Exception, args: Sequence[str]) -> int:
    ctx = getattr(exc, "ctx", None)
    where = ctx.command_path if ctx is not None else "veil"
    from veil.errors import redact

    message = _once(" ".join(exc.format_message().split())).rstrip(".")  # type: ignore[attr-defined]
    line = redact(f"usage: {message} (see `{where} --help`)")
    log.setup(fmt=_log_format(args))
    log.log.error(line)
    if "--json" in args:
        emit({"status": "failed", "error": line})
    return FAILED


def _once(message: str) -> str:
    """Each sentence of a usage error once: typer 0.2x and click 8.2+ both add "Did you mean ...?".

    >>> _once("No such command 'doctr'. Did you mean 'doctor'? Did you mean 'doctor'?")
    "No such command 'doctr'. Did you mean 'doctor'?"
    """
    sentences: list[str] = []
    for sentence in re.split(r"(?<=[.?!])\s+", message):
        if sentence not in sentences:
            sentences.append(sentence)
    return " ".join(sentences)


if __name__ == "__main__":
    main()
