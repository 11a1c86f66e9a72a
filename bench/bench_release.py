"""The release job's wall time: `veil demo` (fresh), and `veil init` + `veil release` of a 1M-row synthetic
census on DuckDB and on PostgreSQL (then an unchanged rerun, which only fingerprints the source).

    .venv/bin/python bench/bench_release.py [--rows 1000000] [--backends duckdb,postgres]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from common import (
    CENSUS_RELEASE,
    PG_URL,
    WORK,
    census_config,
    census_duckdb,
    census_postgres,
    duckdb_file,
    machine_facts,
    save,
)

MODELS = CENSUS_RELEASE


def veil(*args: str) -> tuple[float, int, str, str]:
    env = {**os.environ, "VEIL_BENCH_PG_URL": PG_URL}
    t = time.perf_counter()
    res = subprocess.run([str(Path(sys.executable).parent / "veil"), *args], capture_output=True, text=True, env=env)
    return time.perf_counter() - t, res.returncode, res.stdout, res.stderr


def reset(backend: str, duck: Path) -> None:
    """Drop the release objects of earlier bench runs (never the source)."""
    if backend == "duckdb":
        import duckdb

        con = duckdb.connect(str(duck))
        for schema in ("bench_published", "bench_veil"):
            con.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        con.close()
    else:
        from common import pg_connect

        with pg_connect() as pg:
            for schema in ("bench_published", "bench_veil"):
                pg.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--backends", default="duckdb,postgres")
    args = ap.parse_args()
    results: dict[str, object] = {"machine": machine_facts(), "rows": args.rows, "runs": []}

    demo_dir = WORK / "demo"
    shutil.rmtree(demo_dir, ignore_errors=True)
    wall, code, out, err = veil("demo", "--dir", str(demo_dir))
    print(f"veil demo (fresh, 100,000 rows): {wall:.2f} s, exit {code}", flush=True)
    results["demo"] = {"wall_s": round(wall, 3), "exit": code}

    duck = duckdb_file("census")
    table = f"census_{args.rows // 1_000_000}m" if args.rows % 1_000_000 == 0 else f"census_{args.rows}"
    census_duckdb(duck, table, args.rows)
    for backend in args.backends.split(","):
        if backend == "postgres":
            census_postgres(duck, table)
        reset(backend, duck)
        path = census_config(backend, duck, table, ["occupation", "income"], MODELS)
        t_init, code_init, _, err_init = veil("init", "--config", str(path))
        t_rel, code_rel, out_rel, err_rel = veil("release", "--config", str(path), "--json")
        if code_rel != 0:
            raise RuntimeError(err_rel)
        doc = json.loads(out_rel)
        t_again, code_again, out_again, _ = veil("release", "--config", str(path), "--json")
        row = {
            "backend": backend,
            "init_s": round(t_init, 3),
            "release_s": round(t_rel, 3),
            "unchanged_rerun_s": round(t_again, 3),
            "status_rerun": json.loads(out_again)["status"],
            "node": doc["node"],
            "rows_published": doc["rows_published"],
            "rows_suppressed": doc["rows_suppressed"],
            "achieved": doc["achieved"],
        }
        results["runs"].append(row)  # type: ignore[union-attr]
        print(
            f"{backend:8} {args.rows:,} rows: init {t_init:.2f} s, release {t_rel:.2f} s (node {doc['node']}, "
            f"{doc['rows_published']:,} rows published), unchanged rerun {t_again:.2f} s",
            flush=True,
        )
        reset(backend, duck)
    print("results:", save("release", results))


if __name__ == "__main__":
    main()
