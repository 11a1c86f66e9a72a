"""What one catalog append costs on Spark, by kind, and whether appends sent together from threads of one Connect
session finish sooner (docs/spark.md §9: a release's catalog statements).

A catalog log is a table partitioned by day (``queries.appendonly``); an append to it is one of: rows sent as an
Arrow batch (``SparkSQLSession.bulk_load``: ``createDataFrame`` + ``insertInto``), an ``INSERT … VALUES`` (an
``INSERT`` of a catalog table, ``appendonly.logged``), or an ``INSERT … SELECT`` reading the table's view first (an
``UPDATE`` of a logged table: the row's other columns come from the view).  Each kind of append of 1, 10 and 200
rows is timed ``--rounds`` times; then six one-row appends to six tables one after another and from six threads,
to tables partitioned by day and to plain ones.  Medians.  Results: ``bench/results/spark_catalog_appends.json``.

    .venv/bin/python bench/bench_catalog_appends.py [--spark sc://127.0.0.1:15002] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from common import machine_facts, save

TABLES = 6


def _timed(run: Callable[[], Any]) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def kinds(spark: Any, schema: str, rounds: int) -> dict[str, dict[str, float]]:
    """Median seconds of each kind of append, by rows appended."""
    import pyarrow as pa

    spark.sql(
        f"CREATE TABLE {schema}.log (a INT, b STRING, veil_seq BIGINT, veil_day INT) USING parquet PARTITIONED BY (veil_day)"
    )
    spark.sql(f"CREATE VIEW {schema}.logged AS SELECT a, b, veil_seq, veil_day FROM {schema}.log")
    out: dict[str, dict[str, float]] = {}
    for n in (1, 10, 200):
        batch = pa.table(
            {
                "a": pa.array(range(n), pa.int32()),
                "b": pa.array(["x"] * n),
                "veil_seq": pa.array([1] * n, pa.int64()),
                "veil_day": pa.array([20_000] * n, pa.int32()),
            }
        )
        values = ", ".join(f"({i}, 'x', 1, 20000)" for i in range(n))
        runs: dict[str, list[float]] = {"arrow batch": [], "insert values": [], "insert select from the view": []}
        for _ in range(rounds):
            runs["arrow batch"].append(_timed(lambda: spark.createDataFrame(batch).write.insertInto(f"{schema}.log")))
            runs["insert values"].append(_timed(lambda: spark.sql(f"INSERT INTO {schema}.log VALUES {values}")))
            runs["insert select from the view"].append(
                _timed(
                    lambda: spark.sql(
                        f"INSERT INTO {schema}.log SELECT a, 'y', 2, veil_day FROM {schema}.logged WHERE a < {n}"
                    )
                )
            )
        out[f"{n} rows"] = {kind: round(statistics.median(ts), 3) for kind, ts in runs.items()}
    return out


def together(spark: Any, schema: str, rounds: int) -> dict[str, dict[str, float]]:
    """Six one-row appends to six tables: one after another, and from six threads at once."""
    out: dict[str, dict[str, float]] = {}
    for layout, clause in (("partitioned by day", "PARTITIONED BY (veil_day)"), ("plain", "")):
        names = [f"{schema}.t{i}_{len(out)}" for i in range(TABLES)]
        for name in names:
            spark.sql(f"CREATE TABLE {name} (a INT, b STRING, veil_day INT) USING parquet {clause}")

        def append(name: str, k: int) -> None:
            spark.sql(f"INSERT INTO {name} VALUES ({k}, 'x', 20000)")

        def threads(k: int) -> None:
            started = [threading.Thread(target=append, args=(name, k)) for name in names]
            for t in started:
                t.start()
            for t in started:
                t.join()

        seq, par = [], []
        for k in range(rounds):
            seq.append(_timed(lambda: [append(name, k) for name in names]))
            par.append(_timed(lambda: threads(k)))
        out[layout] = {
            "one after another": round(statistics.median(seq), 3),
            "six threads": round(statistics.median(par), 3),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spark", default=os.environ.get("VEIL_TEST_SPARK_URL", "sc://127.0.0.1:15002"))
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    from pyspark.sql.connect.session import SparkSession

    spark = SparkSession.builder.remote(args.spark).create()
    schema = f"bench_appends_{uuid.uuid4().hex[:6]}"
    spark.sql(f"CREATE SCHEMA {schema}")
    try:
        result = {
            "what": __doc__.split("\n\n")[0],
            "rounds": args.rounds,
            "machine": machine_facts(),
            "seconds_an_append": kinds(spark, schema, args.rounds),
            "six_appends": together(spark, schema, args.rounds),
        }
    finally:
        spark.sql(f"DROP SCHEMA {schema} CASCADE")
        spark.stop()
    print({k: v for k, v in result.items() if k != "machine"})
    print("wrote", save("spark_catalog_appends", result))


if __name__ == "__main__":
    main()
