"""PostgreSQL at the engine's own speed (issue 36): ``veil search`` of 10M resampled Adult, k = 1650, against
PostgreSQL's own floor over the same table.

The case: ARX's Adult (``adult.csv``, 30,162 rows) resampled with replacement to ``--rows`` rows (DuckDB,
``hash(i + seed)``, the same table every run), copied into PostgreSQL as ``bench."adult_<rows>"`` (``age`` an
integer, the rest text, as ``common.load_adult_postgres`` types Adult), then ``VACUUM (ANALYZE)``.  Its search is
issue 36's ``k=5`` case scaled: the 8 quasi-identifiers with ARX's hierarchies, occupation the sensitive column,
k-anonymity with k = 1650 (5 × 10M / 30,162), optimal, discernibility.

The floor is PostgreSQL's own: one ``GROUP BY`` of the 8 quasi-identifiers and occupation over the same table,
in a session with Veil's settings (``veil.backends.postgres.SETTINGS`` and ``PARALLEL``), materialized as Veil
materializes its base frequency set here (``CREATE UNLOGGED TABLE ... AS``, in a schema of its own); at the start
and at the end also as a temporary table, as ``SELECT count(*)`` over the grouping (with Veil's settings and with
PostgreSQL's own), and the bare scan (``SELECT count(*) FROM t``).

Each side is ``veil search --json --strategy optimal`` in a fresh process under ``/usr/bin/time``, with the
config's default ``[search] local_cells`` and with ``local_cells = 0`` (every node a statement): *before* is the
commit ``--before`` (default ``HEAD``) through a git worktree (``bench_ab.earlier_code``), *after* this checkout,
and with ``--proposed PATCH`` a third side, *proposed*: ``--before``'s code with this checkout's
``veil/backends/postgres.py`` and the patch applied (a change to files this bench's author does not own, measured
before it is made; the patch is kept in the results).  Interleaved, ``--repeat`` times, each run just after a floor
(the unlogged one: the machine is shared and its load drifts).  Recorded: wall, ``work.prepare_seconds``, node
statements and their seconds, peak RSS, PostgreSQL's peak private memory, the optimum (every side must agree), and
wall ÷ the floor just before (the summary: medians).  ``--explain``: then ``EXPLAIN (ANALYZE, BUFFERS, SETTINGS)``
of each side's preparation statements of at least ``--min-seconds``, in the session that issued them (``plans``).
Results: ``bench/results/pg_scan.json``.

    nice .venv/bin/python bench/bench_pg_scan.py --rows 10000000 --repeat 2 --explain [--proposed PATCH]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import sqlalchemy as sa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.bench_ab import PY, RUN_CLI, earlier_code  # noqa: E402
from bench.bench_scale import ServerMemory  # noqa: E402
from bench.common import PG_URL, RESULTS, SHARED, WORK, machine_facts, pg_connect  # noqa: E402

from veil.backends.postgres import PARALLEL, SETTINGS  # noqa: E402

QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]
SENSITIVE = "occupation"
COLUMNS = [
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
    "salary-class",
]  # adult.csv's order
ARX_WALL = 14.0  # ARX 3.9.2's wall on this case (issue 36), 2 cores
SEED = 36


def quoted(names: list[str]) -> str:
    return ", ".join(f'"{c}"' for c in names)


def resampled(con: duckdb.DuckDBPyConnection, rows: int) -> str:
    """The ``SELECT`` of Adult resampled with replacement to ``rows`` rows (deterministic: ``hash(i + SEED)``), over
    the temporary table ``adult`` this loads into DuckDB connection ``con``."""
    con.execute("SET enable_progress_bar = false")
    con.execute(
        "CREATE OR REPLACE TEMPORARY TABLE adult AS SELECT row_number() OVER () - 1 AS rid, * FROM read_csv(?, "
        "delim=';', header=true, types={'age': 'INTEGER'})",
        [str(SHARED / "adult" / "adult.csv")],
    )
    n = con.execute("SELECT count(*) FROM adult").fetchone()[0]  # type: ignore[index]
    return (
        f"SELECT {quoted(COLUMNS)} FROM range({int(rows)}) r(i) JOIN adult a "
        f"ON a.rid = hash(r.i + {SEED}) % {int(n)} ORDER BY r.i"
    )


def adult_table(rows: int) -> str:
    """``bench."adult_<rows>"`` in PostgreSQL: Adult resampled with replacement (deterministic), unless a table of
    that many rows is already there."""
    table = f"adult_{rows}"
    with pg_connect() as pg:
        pg.execute("CREATE SCHEMA IF NOT EXISTS bench")
        if pg.execute("SELECT to_regclass(%s)", [f"bench.{table}"]).fetchone()[0] is not None:
            if pg.execute(f'SELECT count(*) FROM bench."{table}"').fetchone()[0] == rows:
                return table
    WORK.mkdir(parents=True, exist_ok=True)
    csv_path = WORK / f"{table}.csv"
    con = duckdb.connect()
    try:
        con.execute(f"COPY ({resampled(con, rows)}) TO '{csv_path}' (FORMAT csv, HEADER false)")
    finally:
        con.close()
    try:
        with pg_connect() as pg:
            pg.execute(f'DROP TABLE IF EXISTS bench."{table}"')
            pg.execute(
                f'CREATE TABLE bench."{table}" ('
                + ", ".join(f'"{c}" {"integer" if c == "age" else "text"}' for c in COLUMNS)
                + ")"
            )
            with pg.cursor() as cur, csv_path.open("rb") as fh:
                with cur.copy(f'COPY bench."{table}" ({quoted(COLUMNS)}) FROM STDIN WITH (FORMAT csv)') as cp:
                    while chunk := fh.read(1 << 20):
                        cp.write(chunk)
            pg.execute(f'VACUUM (ANALYZE) bench."{table}"')
    finally:
        csv_path.unlink(missing_ok=True)
    return table


def config(table: str, k: int, local_cells: int | None) -> Path:
    text = (
        f'[source]\nurl_env = "VEIL_BENCH_PG_URL"\ntable = "bench.{table}"\n\n'
        f'[files]\nallow = ["{SHARED / "adult"}"]\n\n[search]\nstrategy = "optimal"\n'
    )
    if local_cells is not None:
        text += f"local_cells = {local_cells}\n"
    for c in QIS:
        text += (
            f'\n[[quasi_identifiers]]\ncolumn = "{c}"\n'
            f'hierarchy = {{ csv = "{SHARED / "adult" / f"adult_hierarchy_{c}.csv"}" }}\n'
        )
    text += f'\n[sensitive]\ncolumns = ["{SENSITIVE}"]\n\n[[models]]\ntype = "k-anonymity"\nk = {k}\n'
    WORK.mkdir(parents=True, exist_ok=True)
    path = WORK / f"pg_scan_{table}_k{k}{'' if local_cells is None else f'_local{local_cells}'}.toml"
    path.write_text(text, encoding="utf-8")
    return path


# --- the floor ------------------------------------------------------------------------------------------------


def floors(table: str, only: str | None = None) -> dict[str, float]:
    """One round of PostgreSQL's own floor over ``table`` (module docstring), seconds per variant: the grouping
    materialized as an unlogged table in a schema of its own (as Veil's base here) and as a temporary table,
    counted (``SELECT count(*)`` over it) under Veil's settings and under PostgreSQL's defaults, and the bare
    scan."""
    cols = quoted(QIS + [SENSITIVE])
    group = f'SELECT {cols}, count(*) AS n FROM bench."{table}" GROUP BY {cols}'
    statements = {
        "unlogged": f"CREATE UNLOGGED TABLE bench_pg_scan.floor AS {group}",
        "temporary": f"CREATE TEMPORARY TABLE floor AS {group}",
        "count": f"SELECT count(*) FROM ({group}) AS g",
        "scan": f'SELECT count(*) FROM bench."{table}"',
    }
    if only is not None:
        statements = {only: statements[only]}
    out: dict[str, float] = {}
    with pg_connect() as pg:
        pg.execute("CREATE SCHEMA IF NOT EXISTS bench_pg_scan")
        for name, value in {**SETTINGS, **PARALLEL}.items():
            pg.execute("SELECT set_config(%s, %s, false)", [name, value])
        for label, sql in statements.items():
            pg.execute("DROP TABLE IF EXISTS bench_pg_scan.floor")
            pg.execute("DROP TABLE IF EXISTS pg_temp.floor")
            started = time.perf_counter()
            cursor = pg.execute(sql)
            if sql.startswith("SELECT"):
                cursor.fetchall()
            out[label] = round(time.perf_counter() - started, 3)
        pg.execute("DROP SCHEMA bench_pg_scan CASCADE")
    if only is not None:
        return out
    with pg_connect() as pg:  # PostgreSQL's own settings (jit on, work_mem 4MB, parallel costs as shipped)
        started = time.perf_counter()
        pg.execute(statements["count"]).fetchall()
        out["count_defaults"] = round(time.perf_counter() - started, 3)
    return out


# --- the sides ------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def sides(before: str, proposed: str | None) -> Iterator[dict[str, dict[str, str]]]:
    """Each side's environment: ``before`` the commit's code (a worktree), ``after`` this checkout, ``proposed``
    (with ``--proposed PATCH``) the commit's code with this checkout's ``veil/backends/postgres.py`` and the patch
    applied (``git apply``): a change outside this bench's files, measured before it is made."""
    with contextlib.ExitStack() as stack:
        envs = {"before": stack.enter_context(earlier_code(before)), "after": {}}
        if proposed:
            env = stack.enter_context(earlier_code(before))
            tree = Path(env["PYTHONPATH"]).parent / "tree"
            shutil.copyfile(ROOT / "engine" / "backends" / "postgres.py", tree / "engine" / "backends" / "postgres.py")
            subprocess.run(["git", "apply", str(Path(proposed).resolve())], cwd=tree, check=True)
            envs["proposed"] = env
        yield envs


def search(path: Path, env: dict[str, str]) -> dict[str, Any]:
    """One ``veil search --json --strategy optimal`` in a fresh interpreter under ``/usr/bin/time``: wall, peak
    RSS, PostgreSQL's peak private memory, the work's phases and the answer."""
    server = ServerMemory()
    load = os.getloadavg()[0]
    started = time.perf_counter()
    proc = subprocess.run(
        ["/usr/bin/time", "-v", PY, "-c", RUN_CLI, "search", "--json", "--strategy", "optimal", "--config", str(path)],
        capture_output=True,
        text=True,
        cwd=path.parent,
        env={**os.environ, "VEIL_BENCH_PG_URL": PG_URL, **env},
    )
    seconds = time.perf_counter() - started
    server_mb = server.stop()
    if proc.returncode not in (0, 2):
        raise RuntimeError(proc.stderr[-1500:])
    doc = json.loads(proc.stdout[proc.stdout.index('{"status"') :])
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    work = doc["work"]
    return {
        "wall_s": round(seconds, 3),
        "prepare_s": work["prepare_seconds"],
        "node_statements": work["node_queries"],
        "node_statement_s": work["node_query_seconds"],
        "search_s": doc["seconds"],
        "nodes_evaluated": doc["nodes_evaluated"],
        "local_cells": work.get("local_cells"),
        "base_cells": work.get("base_cells"),
        "scratch": work.get("scratch"),
        "peak_rss_mib": round(int(rss[1]) / 1024, 1) if rss else None,
        "server_peak_private_mib": server_mb,
        "load_average_before": round(load, 2),
        "optimal": doc["optimal"]["node"] if doc.get("optimal") else None,
    }


# --- plans ----------------------------------------------------------------------------------------------------


def plans(path: Path, min_seconds: float) -> list[dict[str, Any]]:
    """Prepare the warehouse of ``path`` in this process (the side's ``veil``), timing every statement; then, in
    the same session, ``EXPLAIN (ANALYZE, BUFFERS, SETTINGS)`` each that took at least ``min_seconds`` (a
    ``CREATE ... AS`` runs again: its table is dropped first)."""
    from veil import config as cfg
    from veil.run import open_warehouse

    log: list[tuple[float, str, Any]] = []

    def before(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
        conn.info["veil_bench_started"] = time.perf_counter()

    def after(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
        log.append((time.perf_counter() - conn.info["veil_bench_started"], statement, parameters))

    sa.event.listen(sa.engine.Engine, "before_cursor_execute", before)
    sa.event.listen(sa.engine.Engine, "after_cursor_execute", after)
    out = []
    with open_warehouse(cfg.load(path)) as wh:
        sa.event.remove(sa.engine.Engine, "before_cursor_execute", before)
        sa.event.remove(sa.engine.Engine, "after_cursor_execute", after)
        conn = wh.session.conn
        for seconds, statement, parameters in [x for x in log if x[0] >= min_seconds]:
            if statement.startswith("CREATE"):
                conn.exec_driver_sql(f"DROP TABLE {statement.split(' AS ', 1)[0].split()[-1]}")
            plan = conn.exec_driver_sql("EXPLAIN (ANALYZE, BUFFERS, SETTINGS) " + statement, parameters).all()
            out.append({"seconds": round(seconds, 3), "statement": statement, "plan": [r[0] for r in plan]})
    return out


def side_plans(path: Path, env: dict[str, str], min_seconds: float) -> list[dict[str, Any]]:
    proc = subprocess.run(
        [PY, __file__, "--plans", str(path), "--min-seconds", str(min_seconds)],
        capture_output=True,
        text=True,
        env={**os.environ, "VEIL_BENCH_PG_URL": PG_URL, **env},
        cwd=ROOT,
        check=True,
    )
    return json.loads(proc.stdout)


# --- main -----------------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--k", type=int, default=1650)
    parser.add_argument("--repeat", type=int, default=2, help="interleaved rounds of every side and config")
    parser.add_argument("--before", default="HEAD", help="the commit of the before side")
    parser.add_argument("--proposed", help="a patch (git apply) measured as a third side on --before's code")
    parser.add_argument("--explain", action="store_true", help="EXPLAIN each side's slow preparation statements")
    parser.add_argument("--min-seconds", type=float, default=0.2, help="--explain: statements at least this slow")
    parser.add_argument("--plans", type=Path, help=argparse.SUPPRESS)  # in a side's interpreter: its plans as JSON
    parser.add_argument("--out", type=Path, default=RESULTS / "pg_scan.json")
    args = parser.parse_args()
    if args.plans:
        print(json.dumps(plans(args.plans, args.min_seconds)))
        return
    table = adult_table(args.rows)
    configs = {"default": config(table, args.k, None), "local_cells=0": config(table, args.k, 0)}
    doc: dict[str, Any] = {
        "rows": args.rows,
        "table": f"bench.{table}",
        "k": args.k,
        "quasi_identifiers": QIS,
        "sensitive": SENSITIVE,
        "arx_wall_s": ARX_WALL,
        "before": args.before,
        "before_commit": subprocess.run(
            ["git", "rev-parse", args.before], cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout.strip(),
        "settings": {**SETTINGS, **PARALLEL},
        "machine": machine_facts(),
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "floors": [],
        "runs": [],
    }
    if args.proposed:
        doc["proposed_patch"] = Path(args.proposed).read_text(encoding="utf-8")
    doc["floors"].append(floors(table))
    print(json.dumps({"floor": doc["floors"][-1]}), flush=True)
    with sides(args.before, args.proposed) as envs:
        for r in range(args.repeat):
            for label, env in envs.items():
                for name, path in configs.items():
                    floor = floors(table, "unlogged")["unlogged"]  # the floor just before: the machine is shared
                    run = {"side": label, "config": name, "round": r, "floor_s": floor, **search(path, env)}
                    run["wall_over_floor"] = round(run["wall_s"] / floor, 2)
                    doc["runs"].append(run)
                    print(json.dumps(run), flush=True)
        doc["floors"].append(floors(table))
        print(json.dumps({"floor": doc["floors"][-1]}), flush=True)
        if args.explain:
            doc["plans"] = {label: side_plans(configs["default"], env, args.min_seconds) for label, env in envs.items()}
    optima = {tuple(x["optimal"]) for x in doc["runs"] if x["optimal"]}
    assert len(optima) == 1, f"the sides disagree: {optima}"
    floor = statistics.median([x["floor_s"] for x in doc["runs"]] + [f["unlogged"] for f in doc["floors"]])
    doc["floor_s"] = floor  # the median of every floor measured in the run
    doc["summary"] = {}
    for label in envs:
        for name in configs:
            runs = [x for x in doc["runs"] if x["side"] == label and x["config"] == name]
            wall = statistics.median(x["wall_s"] for x in runs)
            doc["summary"][f"{label}, {name}"] = {
                "wall_s": round(wall, 3),
                "walls": [x["wall_s"] for x in runs],
                "prepare_s": round(statistics.median(x["prepare_s"] for x in runs), 3),
                "node_statement_s": round(statistics.median(x["node_statement_s"] for x in runs), 3),
                "node_statements": runs[0]["node_statements"],
                "peak_rss_mib": max(x["peak_rss_mib"] or 0 for x in runs),
                "server_peak_private_mib": max(x["server_peak_private_mib"] for x in runs),
                "wall_over_floor": round(statistics.median(x["wall_over_floor"] for x in runs), 2),  # each to its floor
                "wall_over_arx": round(wall / ARX_WALL, 2),
            }
    print(json.dumps({"floor_s": floor, "summary": doc["summary"]}, indent=2))
    args.out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
