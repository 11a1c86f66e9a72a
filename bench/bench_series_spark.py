"""Nights of the census's cohort series on Spark beside DuckDB (docs/spark.md §7): each night the source changes
in a DuckDB file as bench/bench_series.py changes it (``--change`` of the rows: half leave, half join), is
exported as Parquet and registered in Spark's catalog under the same name, and a fresh ``veil release`` process
publishes it on each backend.  Per night and backend: wall time, peak RSS of Veil's process, the statements sent,
the rows published, withheld and standing in; on Spark also the driver's and the executors' peak RSS.  A cohort
series' decisions draw coins from a secret each catalog makes for itself, so the two backends' versions differ in
which cohorts go when, not in their sizes' order.  Results in ``bench/results/series_spark_<rows>_<nights>.json``.

    .venv/bin/python bench/bench_series_spark.py [--rows 100000] [--nights 10] [--change 0.001] [--tag TAG] [--logs]
        [--backends duckdb,spark]

``--backends spark`` releases on Spark alone (the source still changes in DuckDB): a long 10M run then spends its
hours on the backend it measures.
"""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path
from typing import Any

import duckdb

from bench_series import night
from bench_spark import Sampler, _drop_schemas, register_in_spark
from common import CENSUS_RELEASE, WORK, census_config, census_duckdb, duckdb_file, machine_facts, run_cli, save

SCHEMAS = ("bench_published", "bench_veil")  # CENSUS_RELEASE's


def export(path: Path, n: int) -> tuple[Path, int]:
    """Tonight's source as Parquet, in a folder of its own (Spark lists a table's files once per table)."""
    folder = WORK / f"series_spark_night{n}.parquet"
    shutil.rmtree(folder, ignore_errors=True)
    con = duckdb.connect(str(path), read_only=True)
    try:
        con.execute(f"COPY bench.series_census TO '{folder}' (FORMAT parquet, PER_THREAD_OUTPUT true)")
        rows = con.execute("SELECT count(*) FROM bench.series_census").fetchone()
    finally:
        con.close()
    assert rows is not None
    return folder, int(rows[0])


def released(config: Path, spark: bool, log: Path | None = None) -> dict[str, Any]:
    """A fresh ``veil release --force`` of ``config``; ``log``: run ``--verbose`` and keep its log lines there (each
    statement's time on Spark)."""
    verbose = ["--verbose"] if log is not None else []
    with Sampler() as sampler:
        wall, doc, code, rss = run_cli("release", "--config", str(config), "--force", *verbose, log=log)
    series = doc.get("series") or {}
    out = {
        "exit": code,
        "version": doc.get("version"),
        "node": doc.get("node"),
        "wall_s": round(wall, 2),
        "peak_rss_mib": rss,
        "statements": doc.get("statements"),
        "rows_published": doc.get("rows_published"),
        "withheld": doc.get("rows_deferred"),
        "standing_in": series.get("standing_in"),
        "cohorts_formed": series.get("cohorts_formed"),
        "cohorts_left": series.get("cohorts_left"),
    }
    if spark:
        out.update(
            spark_driver_peak_rss_mib=round(sampler.driver, 1), spark_executors_peak_rss_mib=round(sampler.executors, 1)
        )
    if code != 0:
        out["error"] = doc.get("error")
    return out


def _line(backend: str, r: dict[str, Any]) -> str:
    driver = f" (driver {r['spark_driver_peak_rss_mib']} MiB)" if "spark_driver_peak_rss_mib" in r else ""
    return (
        f"{backend} {r['wall_s']} s {r['peak_rss_mib']} MiB, {r['statements']} statements{driver}, withheld "
        f"{r['withheld']}, standing in {r['standing_in']}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--nights", type=int, default=10)
    ap.add_argument("--change", type=float, default=0.001)
    ap.add_argument("--spark", default=os.environ.get("VEIL_TEST_SPARK_URL", "sc://127.0.0.1:15002"))
    ap.add_argument("--tag", default="", help="appended to the results' name")
    ap.add_argument("--backends", default="duckdb,spark", help="comma-separated: duckdb, spark or both (the default)")
    ap.add_argument(
        "--logs",
        action="store_true",
        help="run Spark's releases --verbose, their logs kept in bench/.work/<results' name>",
    )
    args = ap.parse_args()
    backends = [b for b in args.backends.split(",") if b]
    if not backends or set(backends) - {"duckdb", "spark"}:
        ap.error(f"--backends: {args.backends!r} is not a comma-separated list of duckdb and spark")
    source = duckdb_file("series_source")
    census_duckdb(source, f"census_{args.rows}", args.rows)
    path = duckdb_file("series_spark")
    shutil.copyfile(source, path)
    con = duckdb.connect(str(path))
    con.execute(f"CREATE OR REPLACE TABLE bench.series_census AS SELECT * FROM bench.census_{args.rows}")
    for schema in SCHEMAS:
        con.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    con.close()
    _drop_schemas("spark", args.spark, path, SCHEMAS)
    os.environ["VEIL_BENCH_SPARK_URL"] = args.spark
    duck = census_config("duckdb", path, "series_census", ["occupation", "income"], CENSUS_RELEASE)
    spark = duck.with_name(duck.stem + "_spark.toml")
    spark.write_text(duck.read_text().replace(f'url = "duckdb:///{path}"', 'url_env = "VEIL_BENCH_SPARK_URL"'))
    for config in (duck, spark):
        run_cli("init", "--config", str(config))
    nights: list[dict[str, Any]] = []
    name = f"series_spark_{args.rows}_{args.nights}" + (f"_{args.tag}" if args.tag else "")
    folder: Path | None = None
    for n in range(args.nights + 1):
        if n:
            night(str(path), args.rows, args.change, n)
        previous, (folder, rows) = folder, export(path, n)
        register_in_spark(args.spark, "series_census", folder, rows)
        if previous is not None:
            shutil.rmtree(previous, ignore_errors=True)
        log = WORK / name / f"night{n}_spark.log" if args.logs else None
        entry: dict[str, Any] = {"night": n, "rows": rows}
        if "duckdb" in backends:
            entry["duckdb"] = released(duck, False)
        if "spark" in backends:
            entry["spark"] = released(spark, True, log)
        nights.append(entry)
        print(f"night {n}: " + "; ".join(_line(b, entry[b]) for b in backends), flush=True)
        save(name, {"machine": machine_facts(), "args": vars(args), "nights": nights})
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"wrote bench/results/{name}.json")


if __name__ == "__main__":
    main()
