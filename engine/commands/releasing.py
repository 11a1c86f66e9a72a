"""``veil init``, ``veil release``, ``veil releases`` and ``veil rollback``: the catalog, a release's versions and the
pointer readers follow."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any

import typer

from veil import log
from veil.contract import OK, Options, Result, say
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
)


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

        conf = load_config(config)
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

        conf = load_config(config)
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

        doc = history(load_config(config))

        def show() -> None:
            say(f"release {doc['name']!r}: current version {doc['current']}")
            for r in doc["releases"]:
                say("  " + "; ".join(p for p in _history_line(r) if p))

        return Result({"status": "ok", **doc}, OK, show)

    finish("releases", Options(as_json, quiet, verbose, wait, log_format.value), body)


def _history_line(r: dict[str, Any]) -> list[str]:
    """The parts of one run's line in ``veil releases``."""
    achieved = ", ".join(f"{k} {v:.4g}" if v is not None else f"{k} ∞" for k, v in (r["achieved"] or {}).items())
    counts = ""
    if r["rows_published"] is not None:
        counts = (
            f"{r['rows_published']} published, {r['rows_suppressed']} suppressed, {r['rows_deferred'] or 0} deferred"
        )
        counts += f", {r['standing_in']} standing in" if r["standing_in"] is not None else ""
    return [
        f"v{r['version']}" if r["version"] is not None else "-",
        r["status"] + (" (current)" if r["current"] else ""),
        f"node {r['node']}" if r["node"] else "",
        counts,
        *_series_notes(r["series_notes"]),
        achieved,
        f"started {r['started_at']}",
        f"published {r['published_at']}" if r["published_at"] else "",
        r["message"] or "",
    ]


def _series_notes(notes: dict[str, Any]) -> list[str]:
    """What a publisher watches in a series (docs/how-to/nightly-job.md): a move up and why, the joiners' cohort
    size the series' plan asked, and the bounds it could not keep (docs/series.md §2a, §2b).  ``--json`` has every
    note."""
    moved = notes.get("node") == "series, moved up"
    return [
        f"moved up from {notes.get('previous_node')}: {notes.get('node_reason')}" if moved else "",
        f"joiners' cohorts of {notes['joiners_cohort']}" if "joiners_cohort" in notes else "",
        f"series_budget: {notes['node_budget']}" if "node_budget" in notes else "",
        f"series_delay: {notes['node_delay']}" if "node_delay" in notes else "",
    ]


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

        doc = do_rollback(load_config(config), to, wait)
        return Result({"status": "ok", **doc}, OK, lambda: say(doc["message"]))

    finish("rollback", Options(as_json, quiet, verbose, wait, log_format.value), body)
