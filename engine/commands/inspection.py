"""``veil counts``, ``veil check`` and ``veil search``: a node's blocks, whether the models hold on the source or at a
node, and the lattice searched."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from veil import log
from veil.contract import NO_SOLUTION, OK, Options, Result, console, say
from veil.registry import STRATEGIES  # stdlib only: names read without importing the search
from veil.commandline import (
    ConfigOpt,
    JsonOpt,
    LogFormat,
    LogFormatOpt,
    NodeOpt,
    QuietOpt,
    VerboseOpt,
    WaitOpt,
    app,
    finish,
    load_config,
    loading,
    node_option,
)


COUNTS_LIMIT = 50  # blocks ``veil counts`` shows by default, the smallest first
MINIMAL_LIMIT = 20  # minimal nodes ``veil search`` prints by default, the lowest first


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
        with loading():
            from veil.run import counts_document, open_warehouse

        conf = load_config(config)
        with open_warehouse(conf, sensitive=conf.sensitive, on_step=log.step, rollup=False) as wh:
            doc = counts_document(wh, wh.counts(node_option(node, wh.heights)), limit=limit)
        return Result({"status": "ok", **doc}, OK, lambda: _show_counts(conf, doc))

    finish("counts", Options(as_json, quiet, verbose, wait, log_format.value), body)


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
        with loading():
            from veil.privacy import Specification
            from veil.run import check_document, evaluate_node, open_run

        with open_run(load_config(config), on_step=log.step, rollup=False) as (conf, wh):
            spec = Specification(conf.models, conf.search.max_suppression)  # hierarchies read from tables
            counts, evaluation = evaluate_node(wh, spec, node_option(node, wh.heights))
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

        with loading():
            from veil import config as cfg

        conf = load_config(config)
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
    with loading():
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
