"""The foundation: base frequency set and per-node ``GROUP BY`` on the synthetic census (veil.demo's seeded
generator, seed 42) at 1M and 10M rows, on DuckDB and PostgreSQL.

Per backend, size, sensitive set (occupation + income, or none: k-anonymity groups by the QIs alone) and
rollup mode (off; on with the defaults; on with ``rollup_min_cells=0``), one fresh warehouse: the prepare
time (``wh.stats.base_seconds``: the single source scan, hierarchy validation, dimension tables, coded base)
and base cells, then a fixed set of 8 lattice nodes from bottom to top, each a distinct node (a cache
miss), timed in full (``wh.counts``), with the SQL + fetch part and any materialization split out.

    .venv/bin/python bench/bench_counts.py [--backends duckdb,postgres] [--sizes 1m,10m]
        [--sensitive both|sizes|occupation,income]

Loads (census into DuckDB, DuckDB → PostgreSQL) are timed and reported separately; tables are reused when
already there.  Results: bench/results/counts.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

from common import RESULTS, census_config, census_duckdb, census_postgres, duckdb_file, machine_facts, save

from veil import config as cfg
from veil import queries as q
from veil.lattice import Lattice
from veil.run import open_warehouse

SEED = 42
SIZES = {"100k": 100_000, "1m": 1_000_000, "10m": 10_000_000}
SENSITIVE = ("occupation", "income")
MODELS = '[[models]]\ntype = "k-anonymity"\nk = 10\n'
# (name, rollup, tuning)
ROLLUPS: list[tuple[str, bool, dict[str, Any]]] = [
    ("off", False, {}),
    ("default", True, {}),
    ("forced", True, {"rollup_min_cells": 0}),
]


def pick_nodes(heights: tuple[int, ...]) -> list[tuple[int, ...]]:
    """8 nodes from bottom to top: the bottom, six in between (fractions of each height, so most lie on one
    chain and later nodes can roll up from earlier ones, plus two off it), and the top."""

    def at(*fractions: float) -> tuple[int, ...]:
        return tuple(min(h, round(f * h)) for f, h in zip(fractions, heights))

    nodes = [
        tuple(0 for _ in heights),
        at(0.25, 0, 0.5, 0.5, 0.34, 0.2),  # low: close to the bottom
        at(0, 1, 0, 0, 0, 0.6),  # zip masked to 2 digits, sex suppressed, others raw
        at(0.5, 0, 0.5, 0.5, 0.34, 0.4),  # middle
        at(0.25, 1, 0.5, 0.5, 0.67, 0.4),  # middle, off the chain
        at(0.5, 1, 1, 0.5, 0.67, 0.6),  # upper middle
        at(0.75, 1, 1, 1, 0.67, 0.8),  # high
        tuple(heights),
    ]
    seen: list[tuple[int, ...]] = []
    for n in nodes:
        if n not in seen:
            seen.append(n)
    return seen


def _plan_summary(plan: dict[str, Any]) -> str:
    """The plan's node types, outermost first, with what spilled (e.g. ``HashAggregate[batches 5, disk 120MB]``)."""
    parts = []
    while plan:
        extra = []
        if plan.get("HashAgg Batches", 1) > 1:
            extra.append(f"batches {plan['HashAgg Batches']}")
        if plan.get("Disk Usage"):
            kb = plan["Disk Usage"]
            extra.append(f"disk {kb / 1024:.0f}MB" if kb >= 1024 else f"disk {kb}kB")
        if "Sort Method" in plan:
            extra.append(plan["Sort Method"])
        if plan.get("Workers Launched"):
            extra.append(f"workers {plan['Workers Launched']}")
        kind = plan["Node Type"] if plan["Node Type"] != "Aggregate" else f"{plan.get('Strategy', '')}Aggregate"
        parts.append(kind + (f"[{', '.join(extra)}]" if extra else ""))
        plan = (plan.get("Plans") or [None])[0]
    return " <- ".join(parts)


def explain_postgres(wh: Any, node: tuple[int, ...]) -> dict[str, Any]:
    """Server-side execution time of a node's GROUP BY on ``veil_base`` (``EXPLAIN (ANALYZE, TIMING OFF)``:
    the query runs, rows are not sent), its JIT time and the plan's shape."""
    stmt = q.node_counts(wh.layout, node)
    compiled = stmt.compile(dialect=wh.session.dialect)
    params = dict(compiled.params)
    doc = wh.session.conn.exec_driver_sql(
        "EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) " + str(compiled), params
    ).scalar()
    top = doc[0]
    return {
        "server_s": round(top["Execution Time"] / 1000, 4),
        "planning_s": round(top["Planning Time"] / 1000, 4),
        "jit_s": round(top.get("JIT", {}).get("Timing", {}).get("Total", 0.0) / 1000, 4),
        "plan": _plan_summary(top["Plan"]),
    }


def measure(
    conf: cfg.Config, sensitive: tuple[str, ...], rollup: bool, tuning: dict[str, Any], explain: bool = False
) -> dict[str, Any]:
    with open_warehouse(conf, sensitive=sensitive, rollup=rollup, **tuning) as wh:
        prep = wh.stats.base_seconds
        heights = wh.heights
        lattice = Lattice(heights)
        nodes = pick_nodes(heights)
        sql_time = [0.0]
        last_cells = [0]
        columns = wh.session.columns
        rollups = wh.rollups[0]  # counts() reads the cells' rollups

        def timed_columns(*a: Any, **k: Any) -> Any:
            t = time.perf_counter()
            data = columns(*a, **k)
            sql_time[0] += time.perf_counter() - t
            last_cells[0] = len(data["n"])
            return data

        wh.session.columns = timed_columns  # type: ignore[method-assign]
        per_node = []
        for node in nodes:
            source_name, _floor, source_cells = rollups._finest(node)
            sql_time[0] = 0.0
            materialized_before = wh.stats.materialized
            t = time.perf_counter()
            nc = wh.counts(node)
            total = time.perf_counter() - t
            per_node.append(
                {
                    "node": list(node),
                    "source": source_name,
                    "source_cells": source_cells,
                    "cells": last_cells[0],
                    "blocks": nc.n_blocks,
                    "total_s": round(total, 4),
                    "sql_fetch_s": round(sql_time[0], 4),
                    "numpy_s": round(total - sql_time[0], 4),
                    "materialized": wh.stats.materialized > materialized_before,
                }
            )
            if explain:
                per_node[-1].update(explain_postgres(wh, node))
        times = [p["total_s"] for p in per_node]
        return {
            "heights": list(heights),
            "lattice_size": lattice.size,
            "rows": wh.rows,
            "prepare_s": round(prep, 3),
            "base_cells": wh.stats.base_cells,
            "node_queries": wh.stats.node_queries,
            "rolled_up": wh.stats.rolled_up,
            "node_min_s": round(min(times), 4),
            "node_median_s": round(statistics.median(times), 4),
            "node_max_s": round(max(times), 4),
            "node_total_s": round(sum(times), 3),
            "nodes": per_node,
        }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backends", default="duckdb,postgres")
    ap.add_argument("--sizes", default="1m,10m")
    ap.add_argument("--sensitive", default="both", help="both, sizes (none) or occupation,income")
    ap.add_argument("--rollups", default=",".join(r[0] for r in ROLLUPS))
    ap.add_argument(
        "--fresh",
        action="store_true",
        help="start counts.json afresh (default: merge, replacing rows of the same configuration)",
    )
    ap.add_argument(
        "--no-explain",
        action="store_true",
        help="skip EXPLAIN ANALYZE of each node (PostgreSQL, rollup off) for server-side times",
    )
    args = ap.parse_args()
    backends = args.backends.split(",")
    sizes = args.sizes.split(",")
    sens_sets = {"both": [SENSITIVE, ()], "sizes": [()]}.get(args.sensitive, [tuple(args.sensitive.split(","))])

    duck = duckdb_file("census")
    facts = machine_facts()
    print("machine:", facts, flush=True)
    previous = RESULTS / "counts.json"
    old = json.loads(previous.read_text()) if previous.exists() and not args.fresh else {}
    loads: dict[str, Any] = old.get("loads", {})
    for size in sizes:
        table = f"census_{size}"
        t = census_duckdb(duck, table, SIZES[size], SEED)
        if t is not None or f"duckdb {table}" not in loads:
            loads[f"duckdb {table}"] = {"generate_s": round(t, 3)} if t is not None else "reused"
        print(f"load duckdb   {table}: {loads[f'duckdb {table}']}", flush=True)
        if "postgres" in backends:
            steps = census_postgres(duck, table)
            if steps or f"postgres {table}" not in loads:
                loads[f"postgres {table}"] = {k: round(v, 3) for k, v in steps.items()} if steps else "reused"
            print(f"load postgres {table}: {loads[f'postgres {table}']}", flush=True)

    def key(r: dict[str, Any]) -> tuple[Any, ...]:
        return r["backend"], r["table"], tuple(r["sensitive"]), r["rollup"]

    results: list[dict[str, Any]] = []
    kept = old.get("results", [])

    def document() -> dict[str, Any]:
        mine = {key(r) for r in results}
        merged = [r for r in kept if key(r) not in mine] + results
        order = {b: i for i, b in enumerate(("duckdb", "postgres"))}
        merged.sort(
            key=lambda r: (
                order.get(r["backend"], 9),
                r["rows"],
                not r["sensitive"],
                [x[0] for x in ROLLUPS].index(r["rollup"]),
            )
        )
        return {"seed": SEED, "machine": facts, "loads": loads, "results": merged}

    header = (
        f"{'backend':8} {'rows':>10} {'sensitive':17} {'rollup':7} {'prepare':>8} {'base cells':>10} "
        f"{'node min':>8} {'median':>8} {'max':>8} {'8 nodes':>8} {'rolled':>6}"
    )
    for backend in backends:
        for size in sizes:
            table = f"census_{size}"
            for sens in sens_sets:
                conf = cfg.load(census_config(backend, duck, table, list(SENSITIVE), MODELS))
                for rname, rollup, tuning in ROLLUPS:
                    if rname not in args.rollups.split(","):
                        continue
                    explain = backend == "postgres" and not rollup and not args.no_explain
                    row = {
                        "backend": backend,
                        "table": table,
                        "sensitive": list(sens),
                        "rollup": rname,
                        **measure(conf, sens, rollup, tuning, explain),
                    }
                    results.append(row)
                    print(
                        f"{backend:8} {row['rows']:10,} {','.join(sens) or '(sizes only)':17} {rname:7} "
                        f"{row['prepare_s']:7.2f}s {row['base_cells']:10,} {row['node_min_s']:7.3f}s "
                        f"{row['node_median_s']:7.3f}s {row['node_max_s']:7.3f}s {row['node_total_s']:7.2f}s "
                        f"{row['rolled_up']:6}",
                        flush=True,
                    )
                    for p in row["nodes"]:
                        print(
                            f"    node {str(tuple(p['node'])):20} from {p['source']:12} cells {p['cells']:10,} "
                            f"blocks {p['blocks']:10,}  total {p['total_s']:7.3f}s  sql+fetch "
                            f"{p['sql_fetch_s']:7.3f}s  numpy {p['numpy_s']:6.3f}s"
                            + ("  materialized" if p["materialized"] else "")
                            + (
                                f"  | server {p['server_s']:7.3f}s jit {p['jit_s']:5.3f}s {p['plan']}"
                                if "server_s" in p
                                else ""
                            ),
                            flush=True,
                        )
                    save("counts", document())

    print()
    print(header)
    doc = document()
    for row in doc["results"]:
        print(
            f"{row['backend']:8} {row['rows']:10,} {','.join(row['sensitive']) or '(sizes only)':17} "
            f"{row['rollup']:7} {row['prepare_s']:7.2f}s {row['base_cells']:10,} {row['node_min_s']:7.3f}s "
            f"{row['node_median_s']:7.3f}s {row['node_max_s']:7.3f}s {row['node_total_s']:7.2f}s "
            f"{row['rolled_up']:6}"
        )
    print("loads:", loads)
    print("results:", save("counts", doc))


if __name__ == "__main__":
    main()
