"""How a read of Spark's append-only catalog grows with its files (docs/spark.md §9), and what counting a file's
opening as ``OPEN_COST`` bytes (a Veil session's ``spark.sql.files.openCostInBytes``) changes.

A table shaped as a catalog log (``bench_catalog.t_log``: key, name, version, status, a 200-byte payload,
``veil_seq``) takes one-row appends — each a file, as every catalog append is — and after 1, 100, 300 and 1,000 of
them its newest-entry view (the ``row_number`` window of ``queries.appendonly.view`` before compaction) is read five times with Spark's
default open cost and five times with Veil's, alternating; medians, the scan stage's tasks (Spark's UI), and the
Spark driver's and executors' peak RSS over the run.  Results: ``bench/results/spark_catalog_files.json``.

    .venv/bin/python bench/bench_catalog_files.py [--spark sc://127.0.0.1:15002]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
import urllib.request
from typing import Any

from bench_spark import Sampler
from common import machine_facts, save

from veil.backends.spark import OPEN_COST

SPARK_DEFAULT = 4 * 1024 * 1024
VIEW = (
    "SELECT id, name, version, status FROM (SELECT *, row_number() OVER (PARTITION BY id ORDER BY veil_seq DESC) "
    "AS veil_rn FROM bench_catalog.t_log) WHERE veil_rn = 1 AND name = 'census'"
)


def _scan_tasks(ui: str) -> int | None:
    """Tasks of the newest job's first stage (the scan), from the driver's UI."""
    try:
        app = json.load(urllib.request.urlopen(f"{ui}/api/v1/applications"))[0]["id"]
        job = json.load(urllib.request.urlopen(f"{ui}/api/v1/applications/{app}/jobs"))[0]
        stage = min(job["stageIds"])
        return int(json.load(urllib.request.urlopen(f"{ui}/api/v1/applications/{app}/stages/{stage}"))[0]["numTasks"])
    except (OSError, LookupError, ValueError):
        return None


def read_times(spark: Any, ui: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    times: dict[int, list[float]] = {SPARK_DEFAULT: [], OPEN_COST: []}
    for _ in range(5):
        for cost in times:
            spark.conf.set("spark.sql.files.openCostInBytes", str(cost))
            started = time.perf_counter()
            spark.sql(VIEW).toArrow()
            times[cost].append(time.perf_counter() - started)
            out[f"tasks_{cost}"] = _scan_tasks(ui)
    for cost, ts in times.items():
        out[f"seconds_{cost}"] = round(statistics.median(ts), 3)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spark", default=os.environ.get("VEIL_TEST_SPARK_URL", "sc://127.0.0.1:15002"))
    ap.add_argument("--ui", default="http://127.0.0.1:4040", help="the Spark driver's UI (for the tasks)")
    args = ap.parse_args()
    from pyspark.sql.connect.session import SparkSession

    spark = SparkSession.builder.remote(args.spark).create()
    results: dict[str, Any] = {"machine": machine_facts(), "open_cost": OPEN_COST, "points": []}
    try:
        spark.sql("CREATE SCHEMA IF NOT EXISTS bench_catalog")
        spark.sql("DROP TABLE IF EXISTS bench_catalog.t_log")
        spark.sql(
            "CREATE TABLE bench_catalog.t_log (id STRING, name STRING, version INT, status STRING, payload STRING, "
            "veil_seq BIGINT) USING parquet"
        )
        appended = 0
        with Sampler() as sampler:
            for target in (1, 100, 300, 1000):
                while appended < target:
                    spark.sql(
                        "INSERT INTO bench_catalog.t_log VALUES (:id, 'census', :v, 'published', :p, :seq)",
                        args={"id": f"run{appended // 3}", "v": appended // 3, "p": "x" * 200, "seq": appended},
                    )
                    appended += 1
                point = {"appends": appended, **read_times(spark, args.ui)}
                results["points"].append(point)
                print(json.dumps(point), flush=True)
        results["spark_driver_peak_rss_mib"] = round(sampler.driver, 1)
        results["spark_executors_peak_rss_mib"] = round(sampler.executors, 1)
    finally:
        spark.sql("DROP SCHEMA IF EXISTS bench_catalog CASCADE")
        spark.stop()
    print(f"wrote {save('spark_catalog_files', results)}")


if __name__ == "__main__":
    main()
