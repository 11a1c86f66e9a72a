"""A series of nightly releases of the synthetic census (docs/series.md §8): 0.1% of rows change per night
(half leave, half join) over 10 nights, on DuckDB; per night and per series policy, rows published and
deferred (and why), and the release's wall time; at the end the exposure of the whole history
(``veil.release.exposure``): version pairs whose differences fail the models, and rows exposed.

    .venv/bin/python bench/bench_series.py [--rows 200000] [--nights 10] [--change 0.001]
        [--runs defer:occupation+income,off:occupation+income,defer:occupation]

Published columns matter: with income published next to occupation almost every row is unique, so a leaver
never cancels against a joiner; with occupation alone many do.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time

import duckdb

from common import CENSUS_RELEASE, WORK, census_config, census_duckdb, duckdb_file, machine_facts, run_cli, save

MODELS = CENSUS_RELEASE + 'series = "{policy}"\n'


def night(path: str, rows: int, change: float, n: int) -> tuple[int, int]:
    """Night ``n``: the people with the smallest hash(person_id, n) leave; as many new people join."""
    from veil.demo import census_sql

    half = max(1, round(rows * change / 2))
    con = duckdb.connect(path)
    try:
        con.execute("DELETE FROM bench.series_census WHERE person_id IN (SELECT person_id FROM bench.series_census "
                    "ORDER BY hash(person_id, $n) LIMIT $k)", {"n": n, "k": half})
        top = con.execute("SELECT max(person_id) FROM bench.series_census").fetchone()[0]
        con.execute(f"INSERT INTO bench.series_census SELECT * REPLACE (person_id + $top AS person_id) "
                    f"FROM ({census_sql()})", {"rows": half, "seed": 1000 + n, "top": top})
    finally:
        con.close()
    return half, half


def series_run(policy: str, sensitive: list[str], rows: int, nights: int, change: float, source: str) -> dict:
    path = duckdb_file(f"series_{policy}_{len(sensitive)}")
    shutil.copyfile(source, path)
    con = duckdb.connect(str(path))
    con.execute(f"CREATE OR REPLACE TABLE bench.series_census AS SELECT * FROM bench.census_{rows}")
    con.execute("DROP SCHEMA IF EXISTS bench_published CASCADE")
    con.execute("DROP SCHEMA IF EXISTS bench_veil CASCADE")
    con.close()
    config = census_config("duckdb", path, "series_census", sensitive, MODELS.format(policy=policy))
    subprocess.run([sys.executable, "-m", "veil.cli", "init", "--config", str(config)], check=True,
                   capture_output=True)
    out = []
    for n in range(nights + 1):
        left = joined = 0
        if n:
            left, joined = night(str(path), rows, change, n)
        wall, doc, code, rss = run_cli("release", "--config", str(config), "--force")
        entry = {"night": n, "left": left, "joined": joined, "wall_s": round(wall, 2), "peak_rss_mib": rss, "exit": code,
                 "version": doc.get("version"), "node": doc.get("node"), "rows_published": doc.get("rows_published"),
                 "rows_suppressed": doc.get("rows_suppressed"), "rows_deferred": doc.get("rows_deferred"),
                 "held": (doc.get("series") or {}).get("held"), "node_choice": (doc.get("series") or {}).get("node"),
                 "release_s": doc.get("seconds")}
        print(f"{policy} {'+'.join(sensitive)} night {n}: {entry}", flush=True)
        out.append(entry)
    from veil import config as cfg
    from veil.release import exposure

    t = time.perf_counter()
    report = exposure(cfg.load(config))
    return {"policy": policy, "sensitive": sensitive, "nights": out, "exposure": {k: report[k] for k in ("pairs_checked", "exposed_pairs",
                                                                                  "rows_exposed")},
            "exposure_s": round(time.perf_counter() - t, 2)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--nights", type=int, default=10)
    ap.add_argument("--change", type=float, default=0.001)
    ap.add_argument("--runs", default="defer:occupation+income,off:occupation+income,defer:occupation",
                    help="policy:sensitive columns (joined by +), comma-separated")
    args = ap.parse_args()
    source = duckdb_file("series_source")
    census_duckdb(source, f"census_{args.rows}", args.rows)
    results = {"machine": machine_facts(), "rows": args.rows, "nights": args.nights, "change_per_night": args.change,
               "note": "loaded 2-core machine shared with other jobs; times are indicative only", "runs": []}
    for spec in args.runs.split(","):
        policy, columns = spec.split(":")
        results["runs"].append(series_run(policy, columns.split("+"), args.rows, args.nights, args.change,
                                          str(source)))
        save("series", results)
    print("wrote", save("series", results))
    for run in results["runs"]:
        print(run["policy"], run["sensitive"], "exposure:", run["exposure"])
    shutil.rmtree(WORK / "series", ignore_errors=True)


if __name__ == "__main__":
    main()
