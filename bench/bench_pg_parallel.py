"""Would PostgreSQL's working tables be faster as UNLOGGED tables that parallel workers can scan (issue 11)?

PostgreSQL never scans a temporary table in parallel (its pages live in the session's local buffers).  This
bench builds one base frequency set of the 10M census (``bench.census_10000000``, made by ``bench_scale.py``)
twice, as Veil's sessions would (``work_mem = 256MB``, ``temp_buffers = 1GB``, ``jit = off``): a temporary table
and an UNLOGGED table in a schema of its own, then times the same five node size queries (``GROUP BY`` a
node's levels, then the histogram of block sizes) on each, alternately, twice: on the unlogged table with the
planner's own choice and with parallel plans forced (``parallel_setup_cost = parallel_tuple_cost = 0``,
``min_parallel_table_scan_size = 0``).  Results: ``bench/results/pg_parallel.json``.

    nice .venv/bin/python bench/bench_pg_parallel.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.bench_scale import postgres_table  # noqa: E402
from bench.common import PG_URL, RESULTS  # noqa: E402

SESSION = {"work_mem": "256MB", "temp_buffers": "1GB", "jit": "off"}
FORCED = {"parallel_setup_cost": "0", "parallel_tuple_cost": "0", "min_parallel_table_scan_size": "0"}
NODES = ["a1, sex, race, zip", "a2, marital_status, education, z2", "age, sex, race, marital_status, education, z2",
         "a1, sex, zip, occupation", "a2, z2, occupation"]
SCHEMA = "veil_bench_parallel"


def base_select(source: str) -> str:
    return (f"SELECT age, age / 5 AS a1, age / 10 AS a2, sex, race, marital_status, education, zip, "
            f"left(zip, 3) AS z2, occupation, count(*)::bigint AS n FROM {source} GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10")


def nodes_seconds(cur: Any, table: str) -> float:
    started = time.perf_counter()
    for keys in NODES:
        cur.execute(f"SELECT size, count(*) FROM (SELECT sum(n) AS size FROM {table} GROUP BY {keys}) e GROUP BY size")
        cur.fetchall()
    return round(time.perf_counter() - started, 3)


def main() -> None:
    source = f'bench."{postgres_table(10_000_000)}"'
    url = sa.make_url(PG_URL)
    out: dict[str, Any] = {"rows": 10_000_000, "node_queries": NODES, "runs": []}
    with psycopg.connect(host=url.host, port=url.port or 5432, user=url.username, dbname=url.database,
                         autocommit=True) as con, con.cursor() as cur:
        for name, value in SESSION.items():
            cur.execute(f"SET {name} = '{value}'")
        started = time.perf_counter()
        cur.execute(f"CREATE TEMP TABLE bench_temp_base AS {base_select(source)}")
        out["temp_base_seconds"] = round(time.perf_counter() - started, 3)
        cur.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
        cur.execute(f"CREATE SCHEMA {SCHEMA}")
        started = time.perf_counter()
        cur.execute(f"CREATE UNLOGGED TABLE {SCHEMA}.base AS {base_select(source)}")
        out["unlogged_base_seconds"] = round(time.perf_counter() - started, 3)
        cur.execute("ANALYZE bench_temp_base")
        cur.execute(f"ANALYZE {SCHEMA}.base")
        try:
            for _ in range(2):
                out["runs"].append({"table": "temporary", "seconds": nodes_seconds(cur, "bench_temp_base")})
                out["runs"].append({"table": "unlogged", "seconds": nodes_seconds(cur, f"{SCHEMA}.base")})
                for name, value in FORCED.items():
                    cur.execute(f"SET {name} = '{value}'")
                out["runs"].append({"table": "unlogged, parallel forced", "seconds": nodes_seconds(cur, f"{SCHEMA}.base")})
                for name in FORCED:
                    cur.execute(f"RESET {name}")
                print(json.dumps(out["runs"][-3:]), flush=True)
        finally:
            cur.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
    (RESULTS / "pg_parallel.json").write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
