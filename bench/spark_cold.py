"""Spark searches on a cluster restarted just before each one (``deploy/spark/cluster.sh stop`` and ``start``), beside
Spark's floor measured right after that restart: what a ``veil`` process meets on a cluster that has just come up
(the case table of ``bench_search.py --arx`` divides by one floor measured on a warm cluster at the start of its
run, and restarts only after a run it capped).  The cases are the case table's Spark ones (``case_table.spark_cases``:
the census registered in Spark, k and k + entropy, optimal and Incognito), those whose name holds ``--only``.
Results: ``bench/results/spark_<rows>-cold-<tag>.json``.

    VEIL_BENCH_SPARK_URL=sc://127.0.0.1:15002 .venv/bin/python bench/spark_cold.py --rows 1000000 --rounds 2
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from case_table import restart_spark, spark_cases

from common import ROOT, machine_facts, run_cli, save


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--spark", default="sc://127.0.0.1:15002")
    ap.add_argument("--only", default="entropy", help="the cases whose name holds this (default: k + entropy)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tag", default="")
    args = ap.parse_args()
    os.environ.setdefault("VEIL_SPARK_PYTHON", str(ROOT / ".venv" / "bin" / "python"))
    cases = [c for c in spark_cases(args.spark, args.rows) if args.only in c.name]
    runs: list[dict[str, Any]] = []
    for _ in range(args.rounds):
        for case in cases:
            restart = restart_spark(case.table)
            wall, doc, _code, rss = run_cli("search", "--config", str(case.config), "--strategy", case.strategy)
            runs.append({"case": case.name, **restart, "wall_s": round(wall, 2), "peak_rss_mib": rss,
                         "statements": doc["work"]["statements"], "over_floor": round(wall / restart["floor_s"], 2)})  # fmt: skip
            print(runs[-1], flush=True)
    tag = f"-{args.tag}" if args.tag else ""
    print("wrote", save(f"spark_{args.rows}-cold{tag}", {"machine": machine_facts(), "args": vars(args), "runs": runs}))


if __name__ == "__main__":
    main()
