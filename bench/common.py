"""Shared benchmark helpers: data sets loaded into DuckDB and PostgreSQL, configs, timing.

Benchmarks read the real data from ../shared/data (not shipped with the project); results go to
bench/results/*.json.  Never part of the test run."""

from __future__ import annotations

import hashlib
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
ADULT_QIS = [
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
    "salary-class",
]


def duckdb_file(name: str) -> Path:
    WORK.mkdir(parents=True, exist_ok=True)
    return WORK / f"{name}.duckdb"


def load_adult_duckdb(path: Path) -> None:
    con = duckdb.connect(str(path))
    con.execute("CREATE SCHEMA IF NOT EXISTS bench")
    con.execute(
        "CREATE OR REPLACE TABLE bench.adult AS SELECT * FROM read_csv(?, delim=';', header=true, "
        "types={'age': 'INTEGER'})",
        [str(SHARED / "adult" / "adult.csv")],
    )
    con.close()


def load_adult_postgres() -> None:
    """Copy the Adult table into PostgreSQL schema ``bench`` (via DuckDB's CSV reader and COPY)."""
    con = duckdb.connect()
    rows = con.execute(
        "SELECT * FROM read_csv(?, delim=';', header=true, types={'age': 'INTEGER'})",
        [str(SHARED / "adult" / "adult.csv")],
    ).fetchall()
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


def adult_config(backend: str, duck: Path, qis: list[str], sensitive: list[str], models: str, extra: str = "") -> Path:
    text = source(backend, duck, "adult") + f'\n[files]\nallow = ["{SHARED / "adult"}"]\n' + extra
    for q in qis:
        text += f'\n[[quasi_identifiers]]\ncolumn = "{q}"\nhierarchy = {{ csv = "{SHARED / "adult" / f"adult_hierarchy_{q}.csv"}" }}\n'
    if sensitive:
        text += "\n[sensitive]\ncolumns = [" + ", ".join(f'"{s}"' for s in sensitive) + "]\n"
    text += models
    WORK.mkdir(parents=True, exist_ok=True)
    path = WORK / f"adult_{backend}_{abs(hash(text)) % 10**8}.toml"
    path.write_text(text)
    return path


RUN_CLI = (
    "import sys; from veil.cli import main; main()"  # ``python -c``: the ``veil`` command of whatever imports as veil
)


def run_cli(
    *args: str, log: Path | None = None, code: dict[str, str] | None = None
) -> tuple[float, dict[str, Any], int, float]:
    """Wall time of a ``veil`` process from start to its JSON, the JSON, the exit code and the process's peak
    resident memory in MiB (``/usr/bin/time``'s maximum resident set size).  Its modules run compiled, as from an
    installed wheel: where ``PYTHONDONTWRITEBYTECODE`` is set (this machine's environment) every process would
    compile each module it imports again — pyspark's alone took 1.3 s of a Spark search — so the bytecode goes to
    ``bench/.work/pycache`` (written by the first process, read by the next).  ``log``: where its stderr (the log
    lines) is kept.  ``code``: the environment of other code (``bench_ab.earlier_code``), run as ``python -c``."""
    env = {**os.environ, "VEIL_BENCH_PG_URL": PG_URL, "PYTHONPYCACHEPREFIX": str(WORK / "pycache"), **(code or {})}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    veil = [str(Path(sys.executable).parent / "veil")] if code is None else [sys.executable, "-c", RUN_CLI]
    t = time.perf_counter()
    res = subprocess.run(
        ["/usr/bin/time", "-f", "VEIL-PEAK-RSS-KB %M", *veil, *args, "--json"],
        capture_output=True,
        text=True,
        env=env,
    )
    wall = time.perf_counter() - t
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(res.stderr, encoding="utf-8")
    if res.returncode not in (0, 2):
        raise RuntimeError(res.stderr)
    peak = [line for line in res.stderr.splitlines() if line.startswith("VEIL-PEAK-RSS-KB ")]
    return wall, json.loads(res.stdout), res.returncode, round(int(peak[-1].split()[1]) / 1024, 1)


def warm_bytecode(*modules: str, extra: dict[str, str] | None = None) -> None:
    """Compile ``modules`` (and what they import) into ``run_cli``'s bytecode cache, so that no measured process
    compiles them; ``extra``: environment variables of the measured processes (an earlier commit's ``PYTHONPATH``)."""
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(WORK / "pycache"), **(extra or {})}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-c", "; ".join(f"import {m}" for m in modules)], env=env, check=True)


def save(name: str, data: Any) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(data, indent=2, default=str))
    return path


# --- synthetic census (veil.demo's generator) ------------------------------------------------------------

CENSUS_TYPES = {
    "person_id": "BIGINT",
    "age": "INTEGER",
    "sex": "TEXT",
    "race": "TEXT",
    "marital_status": "TEXT",
    "education": "TEXT",
    "zip": "TEXT",
    "occupation": "TEXT",
    "income": "INTEGER",
}


def pg_connect() -> Any:
    import psycopg

    url = sa.make_url(PG_URL)
    return psycopg.connect(
        host=url.host, port=url.port or 5432, user=url.username, dbname=url.database, autocommit=True
    )


def census_duckdb(path: Path, table: str, rows: int, seed: int = 42) -> float | None:
    """Create ``bench.<table>`` (``rows`` census rows, ``seed``) in DuckDB file ``path`` unless it is already
    there with that many rows; seconds taken, or ``None`` when reused."""
    from veil.demo import census_sql

    con = duckdb.connect(str(path))
    try:
        con.execute("CREATE SCHEMA IF NOT EXISTS bench")
        have = con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'bench' AND table_name = ?", [table]
        ).fetchone()[0]
        if have and con.execute(f'SELECT count(*) FROM bench."{table}"').fetchone()[0] == rows:
            return None
        t = time.perf_counter()
        con.execute(f'CREATE OR REPLACE TABLE bench."{table}" AS ' + census_sql(), {"rows": rows, "seed": seed})
        con.execute("CHECKPOINT")
        return time.perf_counter() - t
    finally:
        con.close()


def _census_fingerprint_duckdb(path: Path, table: str) -> tuple[int, int, int]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        r = con.execute(f'SELECT count(*), sum(person_id), sum(income) FROM bench."{table}"').fetchone()
        return int(r[0]), int(r[1]), int(r[2])
    finally:
        con.close()


def census_postgres(path: Path, table: str) -> dict[str, float] | None:
    """Copy ``bench.<table>`` from DuckDB file ``path`` into PostgreSQL schema ``bench`` (DuckDB writes a CSV
    under bench/.work, psycopg streams it through ``COPY ... FROM STDIN``, then ``VACUUM ANALYZE``), unless an
    identical table (row count, sum of person_id and income) is already there.  Seconds per step, or ``None``."""
    want = _census_fingerprint_duckdb(path, table)
    with pg_connect() as pg:
        pg.execute("CREATE SCHEMA IF NOT EXISTS bench")
        exists = pg.execute("SELECT to_regclass(%s)", [f"bench.{table}"]).fetchone()[0]
        if exists:
            r = pg.execute(f'SELECT count(*), sum(person_id), sum(income) FROM bench."{table}"').fetchone()
            if tuple(int(x or 0) for x in r) == want:
                return None
    csv_path = WORK / f"{table}.csv"
    steps: dict[str, float] = {}
    t = time.perf_counter()
    con = duckdb.connect(str(path), read_only=True)
    try:
        con.execute(f"COPY bench.\"{table}\" TO '{csv_path}' (FORMAT csv, HEADER false)")
    finally:
        con.close()
    steps["export_csv_s"] = time.perf_counter() - t
    try:
        with pg_connect() as pg:
            t = time.perf_counter()
            pg.execute(f'DROP TABLE IF EXISTS bench."{table}"')
            pg.execute(
                f'CREATE TABLE bench."{table}" (' + ", ".join(f'"{c}" {ty}' for c, ty in CENSUS_TYPES.items()) + ")"
            )
            cols = ", ".join(f'"{c}"' for c in CENSUS_TYPES)
            with pg.cursor() as cur, csv_path.open("rb") as fh:
                with cur.copy(f'COPY bench."{table}" ({cols}) FROM STDIN WITH (FORMAT csv)') as cp:
                    while chunk := fh.read(1 << 20):
                        cp.write(chunk)
            steps["copy_s"] = time.perf_counter() - t
            t = time.perf_counter()
            pg.execute(f'VACUUM (ANALYZE) bench."{table}"')
            steps["vacuum_analyze_s"] = time.perf_counter() - t
            r = pg.execute(f'SELECT count(*), sum(person_id), sum(income) FROM bench."{table}"').fetchone()
            if tuple(int(x) for x in r) != want:
                raise RuntimeError(f"PostgreSQL bench.{table} differs from DuckDB's after the load: {r} vs {want}")
    finally:
        csv_path.unlink(missing_ok=True)
    return steps


def census_config(backend: str, duck: Path, table: str, sensitive: list[str], models: str, extra: str = "") -> Path:
    """The census QIs age (intervals 5/10/20), sex (suppress), race, marital_status, education (the bundled
    ARX hierarchies) and zip (mask), with ``sensitive`` columns and ``models``."""
    from veil.demo import HIERARCHIES

    text = source(backend, duck, table) + extra
    hier = {"age": "{ intervals = [5, 10, 20] }", "sex": "{ suppress = true }"}
    copies = WORK / "hierarchies"  # inside the config's folder: an earlier commit's code (``--before``) reads them too
    copies.mkdir(parents=True, exist_ok=True)
    for q in ("race", "marital_status", "education"):
        name = f"census_{q}.csv"
        (copies / name).write_bytes((HIERARCHIES / name).read_bytes())
        hier[q] = f'{{ csv = "hierarchies/{name}" }}'
    hier["zip"] = "{ mask = true }"
    for q, spec in hier.items():
        text += f'\n[[quasi_identifiers]]\ncolumn = "{q}"\nhierarchy = {spec}\n'
    if sensitive:
        text += "\n[sensitive]\ncolumns = [" + ", ".join(f'"{s}"' for s in sensitive) + "]\n"
    text += models
    WORK.mkdir(parents=True, exist_ok=True)
    path = WORK / f"{table}_{backend}_{hashlib.sha256(text.encode()).hexdigest()[:8]}.toml"
    path.write_text(text)
    return path


CENSUS_RELEASE = """
[[models]]
type = "k-anonymity"
k = 10

[[models]]
type = "entropy-l-diversity"
attribute = "occupation"
l = 3

[release]
name = "census"
schema = "bench_published"
catalog_schema = "bench_veil"
drop_columns = ["person_id"]
"""  # the demo's models and a release of the census, for bench_release and bench_series


def machine_facts() -> dict[str, Any]:
    """nproc, RAM, CPU model, DuckDB and PostgreSQL versions and the PostgreSQL settings that matter here."""
    import platform

    facts: dict[str, Any] = {"nproc": os.cpu_count(), "python": platform.python_version(), "duckdb": duckdb.__version__}
    try:
        mem = Path("/proc/meminfo").read_text().split("\n")[0].split()
        facts["ram_gib"] = round(int(mem[1]) / 2**20, 1)
        cpu = [ln for ln in Path("/proc/cpuinfo").read_text().splitlines() if ln.startswith("model name")]
        facts["cpu"] = cpu[0].split(":", 1)[1].strip() if cpu else None
    except OSError:
        pass
    try:
        with pg_connect() as pg:
            facts["postgresql"] = pg.execute("SHOW server_version").fetchone()[0]
            facts["postgresql_settings"] = {
                s: pg.execute(f"SHOW {s}").fetchone()[0]
                for s in ("shared_buffers", "work_mem", "temp_buffers", "max_parallel_workers_per_gather", "jit")
            }
    except Exception as exc:  # no server: DuckDB-only runs still work
        facts["postgresql"] = f"unavailable: {exc}"
    return facts
