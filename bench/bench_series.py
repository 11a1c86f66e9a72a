"""A year of nightly releases of the synthetic census with the cohort series (docs/series.md §8): each night
``--change`` of the rows change (half leave, half join), a release runs as a fresh ``veil`` process.  Per night:
rows withheld (waiting) and standing in (published for people who left) as a share of the table, the largest
gap between a block's published and true rows (standing in − waiting, k = 10), the release's
wall time and peak RSS (``/usr/bin/time``), the members table's rows (the state kept between nights) and the database file's size; per
joiner, the nights from joining to being published (median, p95, max; people still waiting counted as waiting
so far).  Results in ``bench/results/series_<rows>_<nights>.json``; a table every ``--every`` nights.

    .venv/bin/python bench/bench_series.py [--rows 100000] [--nights 365] [--change 0.001] [--every 30]
        [--sensitive occupation+income] [--series-block 667 [--series-block-share 0.95]] [--series-delay 90]
        [--series-budget 0.06] [--tag TAG] [--keep 45,365]

``--keep``: the warehouse file as those nights left it, copied to ``bench/.work/<results name>_night<N>.duckdb``
(its path and the run's config in the results, ``kept``) for ``bench/bench_series_replay.py``, which runs the
night after each of them alternately — a state's cost without the machine's drift over the year.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
from pathlib import Path
from typing import Any

import duckdb

from common import CENSUS_RELEASE, WORK, census_config, census_duckdb, duckdb_file, machine_facts, run_cli, save


def night(path: str, rows: int, change: float, n: int) -> None:
    """Night ``n``: the people with the smallest hash(person_id, n) leave; as many new people join."""
    from veil.demo import census_sql

    half = max(1, round(rows * change / 2))
    con = duckdb.connect(path)
    try:
        con.execute(
            "DELETE FROM bench.series_census WHERE person_id IN (SELECT person_id FROM bench.series_census "
            "ORDER BY hash(person_id, $n) LIMIT $k)",
            {"n": n, "k": half},
        )
        top = con.execute("SELECT max(person_id) FROM bench.series_census").fetchone()[0]
        con.execute(
            f"INSERT INTO bench.series_census SELECT * REPLACE (person_id + $top AS person_id) FROM ({census_sql()})",
            {"rows": half, "seed": 1000 + n, "top": top},
        )
    finally:
        con.close()


def delays(path: str, version: int) -> tuple[list[int], list[int], int]:
    """Nights from joining to entering the release for people who entered tonight; how long each waiting
    joiner has waited so far; the members table's rows."""
    con = duckdb.connect(path, read_only=True)
    try:
        entered = [
            int(d)
            for (d,) in con.execute(
                "SELECT veil_since - veil_joined FROM bench_veil.census_members WHERE veil_since = ? AND veil_joined > 1",
                [version],
            ).fetchall()
        ]
        waiting = [
            int(d)
            for (d,) in con.execute(
                "SELECT ? - veil_joined FROM bench_veil.census_members WHERE veil_state = 0 AND veil_joined > 1",
                [version],
            ).fetchall()
        ]
        size = int(con.execute("SELECT count(*) FROM bench_veil.census_members").fetchone()[0])
    finally:
        con.close()
    return entered, waiting, size


QIS = ("age", "sex", "race", "marital_status", "education", "zip")
CHANGE = 0.001  # the share of rows changing a night (half leave, half join): issue 34's 0.1%


def blocks_off(path: str) -> dict[str, float]:
    """How far the published table is from the true one per block of the series' node: a block publishes its
    published and standing-in members and holds its published and waiting ones, so it is off by
    standing-in − waiting rows.  The largest |off|, the blocks off by more than k (10) rows, and the largest and
    median |off| over the block's published rows."""
    labels = ", ".join(QIS)
    con = duckdb.connect(path, read_only=True)
    try:
        worst, over, share, median = con.execute(
            "SELECT coalesce(max(abs(off)), 0), count(*) FILTER (WHERE abs(off) > 10), "
            "coalesce(max(abs(off)::DOUBLE / shown), 0), coalesce(median(abs(off)::DOUBLE / shown), 0) FROM ("
            "SELECT sum(CASE veil_state WHEN 2 THEN 1 WHEN 0 THEN -1 ELSE 0 END) AS off, "
            "greatest(count(*) FILTER (WHERE veil_state IN (1, 2)), 1) AS shown "
            f"FROM bench_veil.census_members GROUP BY {labels})"
        ).fetchone()
    finally:
        con.close()
    return {
        "max_abs": int(worst),
        "blocks_over_k": int(over),
        "max_share": round(float(share), 4),
        "median_share": round(float(median), 4),
    }


def summary(values: list[int]) -> dict[str, float | None]:
    if not values:
        return {"median": None, "p95": None, "max": None}
    ordered = sorted(values)
    return {
        "median": statistics.median(ordered),
        "p95": ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))],
        "max": ordered[-1],
    }


def flatness(nights: list[dict[str, Any]], span: int = 30) -> dict[str, dict[str, float | None]]:
    """Issue 34's "night 365 within 1.2× night 5" for time and peak RSS, literally (night 5 against the last night)
    and robustly: the median and the maximum of the first ``span`` nights after the first release against the last
    ``span`` — a night's peak swings by a fifth with the same work (DuckDB's closing checkpoint, docs/series.md §9.4),
    so two single nights can fall on either side of it.

    >>> flatness([{"night": i, "wall_s": 1.0, "peak_rss_mib": 100.0 + i % 2} for i in range(8)], span=3)["peak_rss_mib"]
    {'night_5': 101.0, 'last': 101.0, 'last_over_night_5': 1.0, 'median_ratio': 1.0, 'max_ratio': 1.0}
    """
    later = [n for n in nights if n["night"] >= 1]
    first, last = later[:span], later[-span:]
    fifth = next((n for n in nights if n["night"] == 5), None)
    out: dict[str, dict[str, float | None]] = {}
    for key in ("wall_s", "peak_rss_mib"):
        if not first:
            out[key] = {}
            continue
        a, b = [n[key] for n in first], [n[key] for n in last]
        out[key] = {
            "night_5": fifth[key] if fifth else None,
            "last": later[-1][key],
            "last_over_night_5": round(later[-1][key] / fifth[key], 2) if fifth else None,
            "median_ratio": round(statistics.median(b) / statistics.median(a), 2),
            "max_ratio": round(max(b) / max(a), 2),
        }
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    source = duckdb_file("series_source")
    census_duckdb(source, f"census_{args.rows}", args.rows)
    path = duckdb_file(_name(args))
    shutil.copyfile(source, path)
    con = duckdb.connect(str(path))
    con.execute(f"CREATE OR REPLACE TABLE bench.series_census AS SELECT * FROM bench.census_{args.rows}")
    con.execute("DROP SCHEMA IF EXISTS bench_published CASCADE")
    con.execute("DROP SCHEMA IF EXISTS bench_veil CASCADE")
    con.close()
    release = CENSUS_RELEASE
    if args.series_block:
        release += f"series_block = {args.series_block}\nseries_block_share = {args.series_block_share}\n"
    if args.series_delay is not None:
        release += f"series_delay = {args.series_delay}\n"
    if args.series_standing is not None:
        release += f"series_standing = {args.series_standing}\n"
    if args.series_cohort is not None:
        release += f"series_cohort = {args.series_cohort}\n"
    if args.series_budget is not None:
        release += f"series_budget = {args.series_budget}\n"
    config = census_config("duckdb", path, "series_census", args.sensitive.split("+"), release)
    run_cli("init", "--config", str(config))
    nights, entered_all = [], []
    keep = {int(n) for n in args.keep.split(",")} if args.keep else set()
    kept: dict[int, str] = {}
    for n in range(args.nights + 1):
        if n:
            night(str(path), args.rows, args.change, n)
        wall, doc, code, rss = run_cli("release", "--config", str(config), "--force")
        version = doc.get("version")
        entered, waiting, size = delays(str(path), version)
        entered_all += entered
        series = doc.get("series") or {}
        table = (doc.get("rows_published") or 0) - series.get("standing_in", 0) + (doc.get("rows_deferred") or 0)
        entry = {
            "night": n,
            "exit": code,
            "version": version,
            "node": doc.get("node"),
            "node_note": {k: series.get(k) for k in ("node", "node_reason", "node_delay") if series.get(k)},
            "wall_s": round(wall, 2),
            "peak_rss_mib": rss,
            "rows_published": doc.get("rows_published"),
            "withheld": doc.get("rows_deferred"),
            "standing_in": series.get("standing_in"),
            "withheld_pct": round(100 * (doc.get("rows_deferred") or 0) / max(table, 1), 3),
            "stale_pct": round(100 * series.get("standing_in", 0) / max(doc.get("rows_published") or 1, 1), 3),
            "cohorts_formed": series.get("cohorts_formed"),
            "cohorts_left": series.get("cohorts_left"),
            "members_rows": size,
            "database_mib": _mib(path),
            "wal_mib": _mib(f"{path}.wal"),
            "delay_entered": summary(entered),
            "waiting_so_far": summary(waiting),
            "block_off": blocks_off(str(path)),
        }
        nights.append(entry)
        if n in keep:
            kept[n] = str(WORK / f"{_name(args)}_night{n}.duckdb")
            shutil.copyfile(path, kept[n])
        if n % args.every == 0 or n == args.nights:
            print(
                f"night {n}: withheld {entry['withheld_pct']}%, stale {entry['stale_pct']}%, "
                f"{entry['wall_s']} s, {rss} MiB, members {size}, delay so far {summary(entered_all)}, "
                f"block off {entry['block_off']}, node {entry['node']} {entry['node_note'] or ''}",
                flush=True,
            )
            save(
                _name(args),
                {"machine": machine_facts(), "args": vars(args), "nights": nights, "delay": summary(entered_all)},
            )
    return {
        "machine": machine_facts(),
        "args": vars(args),
        "nights": nights,
        "delay": summary(entered_all),
        "still_waiting_at_end": nights[-1]["waiting_so_far"],
        "flatness": flatness(nights),
        "kept": {"config": str(config), "nights": kept},
    }


def _mib(path: object) -> float:
    """A file's size in MiB (0 when it does not exist): the warehouse file carries the source, the catalog and
    the members table, and DuckDB opens it every night."""
    return round(os.path.getsize(str(path)) / 2**20, 1) if os.path.exists(str(path)) else 0.0


def _name(args: argparse.Namespace) -> str:
    floor = f"_block{args.series_block}_{round(100 * args.series_block_share)}" if args.series_block else ""
    delay = f"_delay{args.series_delay}" if args.series_delay is not None else ""
    standing = f"_standing{args.series_standing:g}" if args.series_standing is not None else ""
    change = f"_change{args.change:g}" if args.change != CHANGE else ""  # 0.1%, the default, unnamed as before
    cohort = f"_cohort{args.series_cohort}" if args.series_cohort is not None else ""
    budget = f"_budget{args.series_budget:g}" if args.series_budget is not None else ""
    tag = f"_{args.tag}" if args.tag else ""
    return f"series_{args.rows}_{args.nights}{change}{floor}{delay}{standing}{cohort}{budget}{tag}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--nights", type=int, default=365)
    ap.add_argument("--change", type=float, default=CHANGE)
    ap.add_argument("--every", type=int, default=30)
    ap.add_argument("--sensitive", default="occupation+income")
    ap.add_argument("--series-block", type=int, default=None, help="[release] series_block (docs/series.md §9.4)")
    ap.add_argument("--series-block-share", type=float, default=0.95)
    ap.add_argument("--series-delay", type=int, default=None, help="[release] series_delay (default: Veil's, 90)")
    ap.add_argument(
        "--series-standing", type=float, default=None, help="[release] series_standing (default: Veil's, 0.01; §9.5)"
    )
    ap.add_argument("--series-cohort", type=int, default=None, help="[release] series_cohort (docs/series.md §9.5)")
    ap.add_argument("--series-budget", type=float, default=None, help="[release] series_budget (docs/series.md §2b)")
    ap.add_argument("--tag", default="", help="appended to the results' name")
    ap.add_argument("--flatness", metavar="RESULTS", help="print the flatness of a results file's nights and stop")
    ap.add_argument("--keep", metavar="N,N", help="copy the warehouse file after these nights (bench_series_replay.py)")
    args = ap.parse_args()
    if args.flatness:
        print(json.dumps(flatness(json.loads(Path(args.flatness).read_text())["nights"]), indent=1))
        return
    results = run(args)
    print("wrote", save(_name(args), results))
    shutil.rmtree(WORK / "series", ignore_errors=True)


if __name__ == "__main__":
    main()
