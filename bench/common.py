"""Shared benchmark helpers: data sets loaded into DuckDB and PostgreSQL, configs, timing.

Benchmarks read the real data from ../shared/data (not shipped with the project); results go to
bench/results/*.json.  Never part of the test run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import duckdb
import sqlalchemy as sa

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / ".work"
RESULTS = ROOT / "bench" / "results"
SHARED = Path(os.environ.get("VEIL_SHARED_DATA", ROOT.parent / "shared" / "data"))
PG_URL = os.environ.setdefault("VEIL_BENCH_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
ADULT_QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation",
             "salary-class"]


def duckdb_file(name: str) -> Path:
    WORK.mkdir(parents=True, exist_ok=True)
    return WORK / f"{name}.duckdb"


def load_adult_duckdb(path: Path) -> None:
    con = duckdb.connect(str(path))
    con.execute("CREATE SCHEMA IF NOT EXISTS bench")
    con.execute("CREATE OR REPLACE TABLE bench.adult AS SELECT * FROM read_csv(?, delim=';', header=true, "
                "types={'age': 'INTEGER'})", [str(SHARED / "adult" / "adult.csv")])
    con.close()


def load_adult_postgres() -> None:
    """Copy the Adult table into PostgreSQL schema ``bench`` (via DuckDB's CSV reader and COPY)."""
    con = duckdb.connect()
    rows = con.execute("SELECT * FROM read_csv(?, delim=';', header=true, types={'age': 'INTEGER'})",
                       [str(SHARED / "adult" / "adult.csv")]).fetchall()
    cols = [d[0] for d in con.description]
    copy_rows("adult", cols, {c: ("INTEGER" if c == "age" else "TEXT") for c in cols}, rows)


def copy_rows(table: str, cols: list[str], types: dict[str, str], rows: Any) -> None:
    import psycopg

    url = sa.make_url(PG_URL)
    with psycopg.connect(host=url.host, port=url.port or 5432, user=url.username, dbname=url.database) as pg:
        with pg.cursor() as cur:
            cur.execute("CREATE SCHEMA IF NOT EXISTS bench")
            cur.execute(f'DROP TABLE IF EXISTS bench."{table}"')
            cur.execute(f'CREATE TABLE bench."{table}" (' + ", ".join(f'"{c}" {types[c]}' for c in cols) + ")")
            with cur.copy(f'COPY bench."{table}" (' + ", ".join(f'"{c}"' for c in cols) + ") FROM STDIN") as cp:
                for r in rows:
                    cp.write_row(r)
            cur.execute(f'ANALYZE bench."{table}"')


def source(backend: str, duck: Path, table: str) -> str:
    if backend == "duckdb":
        return f'[source]\nurl = "duckdb:///{duck}"\ntable = "bench.{table}"\n'
    return f'[source]\nurl_env = "VEIL_BENCH_PG_URL"\ntable = "bench.{table}"\n'


def adult_config(backend: str, duck: Path, qis: list[str], sensitive: list[str], models: str,
                 extra: str = "") -> Path:
    text = source(backend, duck, "adult") + extra
    for q in qis:
        text += f'\n[[quasi_identifiers]]\ncolumn = "{q}"\nhierarchy = {{ csv = "{SHARED / "adult" / f"adult_hierarchy_{q}.csv"}" }}\n'
    if sensitive:
        text += "\n[sensitive]\ncolumns = [" + ", ".join(f'"{s}"' for s in sensitive) + "]\n"
    text += models
    WORK.mkdir(parents=True, exist_ok=True)
    path = WORK / f"adult_{backend}_{abs(hash(text)) % 10**8}.toml"
    path.write_text(text)
    return path


def run_cli(*args: str) -> tuple[float, dict[str, Any], int]:
    """Wall time of a ``veil`` process from start to its JSON, the JSON, and the exit code."""
    env = {**os.environ, "VEIL_BENCH_PG_URL": PG_URL}
    t = time.perf_counter()
    res = subprocess.run([str(Path(sys.executable).parent / "veil"), *args, "--json"], capture_output=True,
                         text=True, env=env)
    wall = time.perf_counter() - t
    if res.returncode not in (0, 2):
        raise RuntimeError(res.stderr)
    return wall, json.loads(res.stdout), res.returncode


def save(name: str, data: Any) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(data, indent=2, default=str))
    return path
