"""``veil audit``, ``veil risk`` and ``veil report``: what a published version discloses, measured."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from veil import log
from veil.contract import OK, Options, Result, console, say
from veil.commandline import (
    ConfigOpt,
    JsonOpt,
    LogFormat,
    LogFormatOpt,
    QuietOpt,
    VerboseOpt,
    WaitOpt,
    app,
    finish,
    load_config,
    loading,
)


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
            return _series_exposure(load_config(config))
        from veil.adversary.subject import run_audit

        doc = run_audit(load_config(config), node=node, release=release, on_step=log.step).document()
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
        with loading():
            from veil.reidentification.subject import run_risk

        summary = run_risk(
            load_config(config),
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
            say(f"  {_gaps_line(c['gaps'], c['longest_wait'])}")
            if c["over_time"]["versions"]:
                say(f"  {_trend_line(c['over_time'])}")
            for st in c["starts"]:
                say(
                    f"  version {st['version']} began series {st['series']} at node {st['node']}: "
                    f"{st['previous_published']} people the previous series published can be intersected"
                )
            for mv in c["moves"]:
                say(
                    f"  version {mv['version']} moved series {mv['series']} up from node {mv['previous_node']} to "
                    f"{mv['node']} (the joiners' delay bound): every row coarser, nothing to intersect"
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


def _gaps_line(g: dict[str, Any], wait: int | None) -> str:
    """What analysts' counts by block are off by, and the longest wait (docs/series.md §6)."""
    waited = "nobody waits" if wait is None else f"the longest wait {wait} version(s)"
    if g["block"] is None:
        return f"every block shows as many rows as it has people; {waited}"
    return (
        f"the largest block gap {g['rows']:+d} row(s) ({g['share']:+.1%} of the {g['rows_shown']} its block "
        f"{g['block']} shows); {g['blocks_off']} block(s) off, {g['blocks_off_beyond_batch']} by more than the "
        f"batch; {waited}"
    )


def _trend_line(t: dict[str, Any]) -> str:
    """The series' stale and withheld shares now and at their most (docs/series.md §6)."""
    st, wh = t["stale"], t["withheld"]
    return (
        f"over {t['versions']} version(s): standing in {st['now']:.2%} now, at most {st['most']:.2%} (version "
        f"{st['at']}); waiting {wh['now']:.2%} now, at most {wh['most']:.2%} (version {wh['at']})"
    )


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
        from veil.release.history import releases
        from veil.report import build_report

        conf = load_config(config)
        history = releases(conf)["releases"] if release is not None else ()
        path = build_report(conf, out_file, node=node, release=release, on_step=log.step, history=history)
        return Result({"status": "ok", "out": str(path)}, OK, lambda: say(f"report written to {path}"))

    finish("report", Options(as_json, quiet, verbose, wait, log_format.value), body)
