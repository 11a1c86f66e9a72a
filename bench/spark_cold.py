"""Spark searches on a cluster restarted just before each one (``deploy/spark/cluster.sh stop`` and ``start``), beside
Spark's floor measured right after that restart: what a ``veil`` process meets on a cluster that has just come up
(the case table of ``bench_search.py --arx`` divides by one floor measured on a warm cluster at the start of its
run, and restarts only after a run it capped).  The census configs of ``bench_spark.py`` (run it once first at the
same ``--rows``, which registers the table in Spark and writes them).  Results:
``bench/results/spark_<rows>-cold-<tag>.json``.

    VEIL_BENCH_SPARK_URL=sc://127.0.0.1:15002 .venv/bin/python bench/spark_cold.py --rows 1000000 --rounds 2
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from case_table import restart_spark

from common import ROOT, WORK, machine_facts, run_cli, save

MODELS = {"k": "da970316", "entropy": "8333d931"}  # bench_spark.py's configs of k = 10 and k + entropy l = 3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--models", default="entropy", choices=sorted(MODELS))
    ap.add_argument("--strategies", default="optimal,incognito")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tag", default="")
    args = ap.parse_args()
    config = WORK / f"census_{args.rows}_duckdb_{MODELS[args.models]}_spark.toml"
    if not config.exists():
        raise SystemExit(f"{config} is missing: run bench/bench_spark.py --rows {args.rows} first")
    os.environ.setdefault("VEIL_SPARK_PYTHON", str(ROOT / ".venv" / "bin" / "python"))
    runs: list[dict[str, Any]] = []
    for _ in range(args.rounds):
        for strategy in args.strategies.split(","):
            restart = restart_spark(f"census_{args.rows}")
            wall, doc, _code, rss = run_cli("search", "--config", str(config), "--strategy", strategy)
            runs.append({"strategy": strategy, "models": args.models, **restart, "wall_s": round(wall, 2),
                         "peak_rss_mib": rss, "statements": doc["work"]["statements"],
                         "over_floor": round(wall / restart["floor_s"], 2)})  # fmt: skip
            print(runs[-1], flush=True)
    tag = f"-{args.tag}" if args.tag else ""
    print("wrote", save(f"spark_{args.rows}-cold{tag}", {"machine": machine_facts(), "args": vars(args), "runs": runs}))


if __name__ == "__main__":
    main()
