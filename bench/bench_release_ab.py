"""A Spark release, an earlier commit's code against this checkout's, interleaved on the same cluster (issue 36:
"a release within 3× its search").

The census of ``bench_spark.py`` at ``--rows`` (generated and registered in Spark as that bench does), k = 10 (or
``--models`` another of that bench's model sets), ``series = "refuse"``, the published columns those of
``bench_spark.py --release``. Each round runs, for each side in turn, ``veil init`` into fresh schemas, then two
``veil release --force`` (a first version and a second: a night's), each a fresh process. Measured: wall seconds
from process start to the JSON, the process's peak RSS (``/usr/bin/time``) and the statements the run reports
(``veil release --json``: the earlier code may not report them). Results:
``bench/results/spark_<rows>-release-ab[-<tag>].json``; the schemas are dropped afterwards.

    .venv/bin/python bench/bench_release_ab.py --before b89f790 [--rows 1000000] [--rounds 3] [--tag opencost]
    .venv/bin/python bench/bench_release_ab.py --before f2a2ce4 --models "k=10 + entropy l=3 (occupation)"
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from bench_ab import PY, RUN_CLI, earlier_code
from bench_spark import MODEL_SETS, _drop_schemas, export_parquet, register_in_spark
from common import WORK, census_config, census_duckdb, machine_facts, save, warm_bytecode


def release_pair(config: Path, env: dict[str, str], tag: str) -> dict[str, Any]:
    """``veil init`` into fresh schemas, then a first and a second release, each timed; the schemas' names."""
    pub, cat = f"ab_pub_{tag}", f"ab_cat_{tag}"
    path = config.with_name(f"{config.stem}_ab_{tag}.toml")
    path.write_text(
        config.read_text() + f'\n[release]\nname = "census"\nschema = "{pub}"\ncatalog_schema = "{cat}"\n'
        'drop_columns = ["person_id"]\nseries = "refuse"\n'
    )
    run_env = {**os.environ, **env, "PYTHONPYCACHEPREFIX": str(WORK / "pycache")}
    run_env.pop("PYTHONDONTWRITEBYTECODE", None)
    try:
        subprocess.run([PY, "-c", RUN_CLI, "init", "--config", str(path)], env=run_env, check=True, capture_output=True)
        out: dict[str, Any] = {"schemas": [pub, cat]}
        for night in ("first", "second"):
            started = time.perf_counter()
            proc = subprocess.run(
                ["/usr/bin/time", "-f", "VEIL-PEAK-RSS-KB %M", PY, "-c", RUN_CLI]
                + ["release", "--json", "--force", "--config", str(path)],
                env=run_env,
                capture_output=True,
                text=True,
            )
            wall = time.perf_counter() - started
            if proc.returncode != 0:
                raise RuntimeError(proc.stderr[-600:])
            doc = json.loads(proc.stdout[proc.stdout.index('{"status"') :])
            peak = [ln for ln in proc.stderr.splitlines() if ln.startswith("VEIL-PEAK-RSS-KB ")][-1].split()[1]
            out[night] = {
                "seconds": round(wall, 2),
                "peak_rss_mib": round(int(peak) / 1024, 1),
                "statements": doc.get("statements"),
                "version": doc.get("version"),
                "node": doc.get("node"),
            }
        return out
    finally:
        path.unlink()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True, help="the earlier commit")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--spark", default=os.environ.get("VEIL_TEST_SPARK_URL", "sc://127.0.0.1:15002"))
    ap.add_argument("--tag", default="", help="appended to the results file's name (keeps an earlier run's file)")
    ap.add_argument("--models", choices=sorted(MODEL_SETS), default="k=10", help="the model set (bench_spark's)")
    args = ap.parse_args()
    table = f"census_{args.rows}"
    WORK.mkdir(parents=True, exist_ok=True)
    duck = WORK / "spark_census.duckdb"
    census_duckdb(duck, table, args.rows)
    register_in_spark(args.spark, table, export_parquet(duck, table), args.rows)
    os.environ["VEIL_BENCH_SPARK_URL"] = args.spark
    duck_config = census_config("duckdb", duck, table, ["occupation"], MODEL_SETS[args.models])
    config = duck_config.with_name(duck_config.stem + "_spark.toml")
    config.write_text(duck_config.read_text().replace(f'url = "duckdb:///{duck}"', 'url_env = "VEIL_BENCH_SPARK_URL"'))
    results: dict[str, Any] = {
        "rows": args.rows,
        "models": args.models,
        "machine": machine_facts(),
        "before": args.before,
        "rounds": [],
    }
    with earlier_code(args.before) as before:
        sides = [("before", before), ("after", {})]
        for _label, env in sides:
            warm_bytecode("veil.cli", "veil.release", "pyspark.sql.connect.session", "pyarrow", extra=env)
        for r in range(args.rounds):
            for label, env in sides:
                pair = release_pair(config, env, f"{label}{r}_{uuid.uuid4().hex[:6]}")
                _drop_schemas("spark", args.spark, duck, tuple(pair.pop("schemas")))
                results["rounds"].append({"round": r, "code": label, **pair})
                print(json.dumps(results["rounds"][-1]), flush=True)
    print(f"wrote {save(f'spark_{args.rows}-release-ab' + (f'-{args.tag}' if args.tag else ''), results)}")


if __name__ == "__main__":
    sys.exit(main())
