"""The workload metric's cost against discernibility's (issue 38) on Adult (ARX's table and 9 hierarchies,
k = 5), DuckDB: the optimal node under each metric, each node's workload error, the search times, and the workload
metric's time per node — for two workloads of 10 two- and three-column count queries:

- ``spread`` (docs/examples/adult_workload.toml): queries spread over all nine quasi-identifiers;
- ``labour`` (docs/examples/adult_workload_labour.toml): a labour-market team's queries, on the 5 attributes such a
  team asks about (age, sex, education, occupation, salary-class); why these, in the file.

Every search runs in a fresh process (``--child``), so each time has its own peak resident memory beside it
(the process's ``ru_maxrss``: Python, DuckDB, the warehouse's counts and the search).

    .venv/bin/python bench/bench_workload.py [--repeat 3] [--suppression 0.02] [--workload spread --workload labour]

Goal: the workload-optimal node's error at most half the discernibility-optimal node's, found in at most 2x the
discernibility search's time.  Results: bench/results/workload_adult.json.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from common import (
    ADULT_QIS,
    CENSUS_RELEASE,
    ROOT,
    adult_config,
    census_config,
    census_duckdb,
    duckdb_file,
    load_adult_duckdb,
    save,
)

CENSUS = ROOT / "docs" / "examples" / "census_workload.toml"  # --census: a statistics office's ten tables
WORKLOADS = {
    "spread": ROOT / "docs" / "examples" / "adult_workload.toml",
    "labour": ROOT / "docs" / "examples" / "adult_workload_labour.toml",
}
WHY = {
    "spread": "10 queries spread over all nine quasi-identifiers (the first benchmark workload)",
    "labour": "a labour-market team's 10 queries on age, sex, education, occupation and salary-class: the pay "
    "gap by sex, age and education, returns to education, occupational segregation (chosen before "
    "the run from what such a team asks, not tuned to the result)",
}
K5 = '[[models]]\ntype = "k-anonymity"\nk = 5\n'
METRICS = ("discernibility", "workload")


def peak_rss_mib() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def child(config_path: str, name: str) -> None:
    """One search under metric ``name`` in this process; prints its facts as one JSON line."""
    from veil import config as cfg
    from veil.privacy import Specification
    from veil.run import metric_for, open_run, search_warehouse

    config = cfg.load(config_path)
    with open_run(cfg.override(config, metric=name)) as (conf, wh):
        started, cpu = time.perf_counter(), time.process_time()
        result = search_warehouse(wh, conf, ("optimal",))  # workload: its cells read inside (prepare)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        rss_search = peak_rss_mib()
        assert result.optimal is not None
        workload = metric_for(wh, "workload", conf)
        spec = Specification(conf.models, conf.search.max_suppression)
        counts = wh.counts(result.optimal.node)
        gone = spec.evaluate(counts, wh.rows).failing
        t = time.perf_counter()
        error = workload.loss(counts, gone, wh.rows)
        per_node = time.perf_counter() - t
        doc = {
            "optimal_node": list(result.optimal.node),
            "value": result.optimal.value,
            "workload_error": error,
            "per_query_errors": workload.errors(counts, gone),
            "nodes_evaluated": result.nodes_evaluated,
            "lattice_size": result.lattice_size,
            "search_seconds": round(seconds, 4),
            "search_cpu_seconds": round(cpu, 4),
            "peak_rss_mib_after_search": rss_search,
            "workload_seconds_one_node_cold": round(per_node, 5),
            "peak_rss_mib": peak_rss_mib(),
        }
    print(json.dumps(doc))


def run_child(config_path: Path, name: str) -> dict[str, Any]:
    res = subprocess.run(
        [sys.executable, __file__, "--child", name, "--config", str(config_path)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parent,
    )
    if res.returncode:
        raise RuntimeError(res.stderr)
    return json.loads(res.stdout.strip().splitlines()[-1])


def bench(label: str, duck: Path, repeat: int, suppression: float, census: str | None = None) -> dict[str, Any]:
    file = CENSUS if census else WORKLOADS[label]
    extra = f'\n[search]\nstrategy = "optimal"\nmax_suppression = {suppression}\n\n' + file.read_text()
    path = (
        census_config("duckdb", duck, census, ["occupation"], CENSUS_RELEASE, extra)
        if census
        else adult_config("duckdb", duck, ADULT_QIS, [], K5, extra)
    )
    out: dict[str, Any] = {
        "workload": label,
        "file": str(file.relative_to(ROOT)),
        "why": "a statistics office's ten tables (see the file)" if census else WHY[label],
        "queries": file.read_text().count("[[workload]]"),
    }
    runs: dict[str, list[dict[str, Any]]] = {m: [] for m in METRICS}
    for _ in range(repeat):
        for name in METRICS:
            runs[name].append(run_child(path, name))
    for name, docs in runs.items():
        last = docs[-1]
        times = [d["search_seconds"] for d in docs]
        out[name] = {
            **{
                k: v
                for k, v in last.items()
                if k not in ("search_seconds", "search_cpu_seconds", "peak_rss_mib", "peak_rss_mib_after_search")
            },
            "search_seconds_median": round(statistics.median(times), 4),
            "search_cpu_seconds_median": round(statistics.median(d["search_cpu_seconds"] for d in docs), 4),
            "peak_rss_mib_median": round(statistics.median(d["peak_rss_mib"] for d in docs), 1),
            "runs": [
                {
                    "search_seconds": d["search_seconds"],
                    "search_cpu_seconds": d["search_cpu_seconds"],
                    "peak_rss_mib": d["peak_rss_mib"],
                    "peak_rss_mib_after_search": d["peak_rss_mib_after_search"],
                }
                for d in docs
            ],
        }
        assert all(d["optimal_node"] == last["optimal_node"] for d in docs)
    w, d = out["workload"], out["discernibility"]
    out["error_ratio"] = w["workload_error"] / d["workload_error"] if d["workload_error"] else None
    out["time_ratio"] = w["search_seconds_median"] / d["search_seconds_median"]
    out["cpu_time_ratio"] = w["search_cpu_seconds_median"] / d["search_cpu_seconds_median"]
    out["goal_met"] = bool(out["error_ratio"] is not None and out["error_ratio"] <= 0.5 and out["time_ratio"] <= 2)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--suppression", type=float, default=0.0)
    ap.add_argument("--workload", action="append", choices=sorted(WORKLOADS))
    ap.add_argument("--child", choices=METRICS, help=argparse.SUPPRESS)
    ap.add_argument("--config", help=argparse.SUPPRESS)
    ap.add_argument(
        "--out",
        help="the results file's name in bench/results (default workload_adult, "
        "workload_census_N; e.g. a run of an older engine through PYTHONPATH)",
    )
    ap.add_argument(
        "--census",
        type=int,
        help="the census of this many rows instead of Adult (k = 10, entropy "
        "l = 3 on occupation; docs/examples/census_workload.toml)",
    )
    args = ap.parse_args()
    if args.child:
        child(args.config, args.child)
        return
    if args.census:
        census(args)
        return
    duck = duckdb_file("adult")
    load_adult_duckdb(duck)
    out: dict[str, Any] = {
        "table": "adult (30,162 rows, ARX's 9 hierarchies)",
        "qis": ADULT_QIS,
        "k": 5,
        "backend": "duckdb",
        "max_suppression": args.suppression,
        "repeat": args.repeat,
        "rss": "peak_rss_mib: the search process's peak resident set (each search runs in a fresh process)",
        "workloads": {},
    }
    for label in args.workload or list(WORKLOADS):
        out["workloads"][label] = bench(label, duck, args.repeat, args.suppression)
        r = out["workloads"][label]
        print(
            f"{label}: error {r['workload']['workload_error']:.4f} vs {r['discernibility']['workload_error']:.4f} "
            f"(ratio {r['error_ratio']:.3f}), {r['workload']['search_seconds_median']} s "
            f"({r['workload']['peak_rss_mib_median']} MiB) vs {r['discernibility']['search_seconds_median']} s "
            f"({r['discernibility']['peak_rss_mib_median']} MiB), time ratio {r['time_ratio']:.2f} (cpu {r['cpu_time_ratio']:.2f})"
        )
    suffix = "" if not args.suppression else f"_supp{args.suppression:g}"
    save(args.out or f"workload_adult{suffix}", out)


def census(args: argparse.Namespace) -> None:
    """``--census N``: the demo's census at N rows (DuckDB), its release's models, the office's ten tables."""
    duck = duckdb_file("census")
    table = f"census_{args.census}"
    census_duckdb(duck, table, args.census)
    r = bench("census", duck, args.repeat, args.suppression, census=table)
    out = {
        "table": f"census ({args.census:,} rows; bench/common.py census_config)",
        "backend": "duckdb",
        "models": "k = 10, entropy l = 3 on occupation",
        "max_suppression": args.suppression,
        "repeat": args.repeat,
        "workloads": {"census": r},
    }
    print(
        f"census {args.census}: error {r['workload']['workload_error']:.4f} vs "
        f"{r['discernibility']['workload_error']:.4f} (ratio {r['error_ratio']:.3f}), "
        f"{r['workload']['search_seconds_median']} s ({r['workload']['peak_rss_mib_median']} MiB) vs "
        f"{r['discernibility']['search_seconds_median']} s ({r['discernibility']['peak_rss_mib_median']} MiB), "
        f"time ratio {r['time_ratio']:.2f} (cpu {r['cpu_time_ratio']:.2f}); one node's workload error {r['workload']['workload_seconds_one_node_cold']} s"
    )
    save(args.out or f"workload_census_{args.census}", out)


if __name__ == "__main__":
    main()
