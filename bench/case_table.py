"""Issue 36's whole case table in one run (``bench_search.py --arx``): every case as ``veil search --json``
processes, *before* (an earlier commit's code, a git worktree: ``bench_ab.earlier_code``) and *after* (this
checkout) interleaved, beside ARX 3.9.2's figures from the issue and each case's own floor.

The cases: UCI Adult with 8 quasi-identifiers, optimal, discernibility (k = 5; + entropy l = 2; + t = 0.2 equal;
+ t = 0.2 ordered on age; each with and without 2% suppression) on DuckDB; Adult resampled to ``--resample-rows``
(``bench_pg_scan``: the same rows in a DuckDB file and in PostgreSQL, k = 1650) on both, beside that backend's
floor (one ``GROUP BY`` of the 8 quasi-identifiers and occupation); the census of ``veil demo`` at each of
``--spark-rows`` on the local Spark cluster (``bench_spark``: k = 10 and k = 10 + entropy l = 3, optimal and
Incognito), beside Spark's floor (one ``GROUP BY`` of the 6 quasi-identifiers and occupation through Spark Connect).

Per run: wall from process start to its JSON, nodes evaluated, node statements (``work.node_queries``) and every
statement the session executed (``work.statements``, where the code counts them), ms a node (the search's own
seconds over nodes), the process's peak RSS (``/usr/bin/time``) and, on Spark, the driver's and executors' peak
RSS (``bench_spark.Sampler``).  Modules run compiled on both sides (one bytecode cache, warmed per side first).
A side still running after ``--cap`` seconds is stopped and shown as ``>cap``; on Spark *after* runs first, and
a stopped or failed run is followed by a restart of the cluster (a stopped client's statement goes on in the
server, its session's cached tables with it) and Spark's floor measured again (``restart``).  Each case's sides
must agree on the optimum; a disagreement is printed and recorded (``agree``).  Results, saved after every case:
``bench/results/case_table.json``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from common import PG_URL, RESULTS, WORK, census_config, census_duckdb, machine_facts, save, warm_bytecode

PY = sys.executable
RUN_CLI = "import sys; from veil.cli import main; main()"
PYCACHE = WORK / "pycache"
# the longest a restarted cluster is given to settle before the next run (``restart_spark``)
SETTLE_S = 240.0


@dataclass
class Case:
    """One row of the table: a config searched with a strategy, ARX's figures where the issue has them, and the
    floor of the backend it runs on (seconds, or ``None``)."""

    group: str
    name: str
    config: Path
    strategy: str = "optimal"
    arx_wall_s: float | None = None
    arx_nodes: int | None = None
    floor_s: float | None = None
    spark: bool = False
    table: str = ""
    repeat: int = 1
    runs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def _env(side_env: dict[str, str]) -> dict[str, str]:
    env = {**os.environ, "VEIL_BENCH_PG_URL": PG_URL, "PYTHONPYCACHEPREFIX": str(PYCACHE), **side_env}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def warm(side_env: dict[str, str]) -> None:
    """Compile the side's modules into the shared bytecode cache, so that no measured process compiles them."""
    warm_bytecode(
        "veil.cli", "veil.run", "veil.search", "veil.backends.duckdb", "veil.backends.postgres", extra=side_env
    )
    with contextlib.suppress(subprocess.CalledProcessError):  # pyspark only where the extra is installed
        warm_bytecode("pyspark.sql.connect.session", "pyarrow", extra=side_env)


def search(case: Case, side_env: dict[str, str], cap: float) -> dict[str, Any]:
    """One ``veil search --json`` of ``case`` in a fresh interpreter with ``side_env``; stopped (its whole process
    group) after ``cap`` seconds."""
    command = [PY, "-c", RUN_CLI, "search", "--json", "--strategy", case.strategy, "--config", str(case.config)]
    started = time.perf_counter()
    proc = subprocess.Popen(
        ["/usr/bin/time", "-v", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=case.config.parent,
        env=_env(side_env),
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=cap)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return {"wall_s": None, "capped_at_s": cap}
    wall = time.perf_counter() - started
    if '{"status"' not in out:
        return {"wall_s": None, "error": err.split("\tCommand being timed")[0][-600:]}
    doc = json.loads(out[out.index('{"status"') :])  # python -c: DuckDB may draw a progress bar first
    if proc.returncode not in (0, 2):  # a failed run: its error, and the case goes on with the other sides
        return {"wall_s": None, "error": doc.get("error")}
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    work, nodes = doc["work"], doc["nodes_evaluated"]
    return {
        "wall_s": round(wall, 3),
        "search_s": doc["seconds"],
        "nodes": nodes,
        "node_statements": work["node_queries"],
        "statements": work.get("statements"),
        "ms_per_node": round(1000 * doc["seconds"] / max(nodes, 1), 2),
        "prepare_s": work.get("prepare_seconds"),
        "peak_rss_mib": round(int(rss[1]) / 1024, 1) if rss else None,
        "optimal": doc["optimal"]["node"] if doc.get("optimal") else None,
        "value": doc["optimal"]["value"] if doc.get("optimal") else None,
    }


def measure(case: Case, sides: dict[str, dict[str, str]], cap: float) -> None:
    """``case.repeat`` interleaved rounds of every side.  On Spark each run also samples the cluster's memory,
    *after* runs first, and a run stopped at the cap or failed is followed by a restart of the cluster: a stopped
    client's statement goes on in the server, and would share the cluster with the next run.  The run after a
    restart is preceded by one of the same side that is not counted (``warm_up_s``): the floor it is divided by
    was measured warm, and a settled floor does not mean a settled search (docs/benchmarks.md, 2026-11-29)."""
    from bench_spark import Sampler

    order = list(sides.items())
    if case.spark:
        order.reverse()
    for _ in range(case.repeat):
        for label, env in order:
            if not case.spark:
                case.runs.setdefault(label, []).append(search(case, env, cap))
                continue
            warm_up = search(case, env, cap)["wall_s"] if _restarted else None
            with Sampler() as sampler:
                run = search(case, env, cap)
            run.update(
                spark_driver_peak_rss_mib=round(sampler.driver, 1),
                spark_executors_peak_rss_mib=round(sampler.executors, 1),
                warm_up_s=warm_up,
            )
            _restarted.clear()
            if run["wall_s"] is None:
                run["restart"] = restart_spark(case.table, case.floor_s)
                _restarted.append(True)
            case.runs.setdefault(label, []).append(run)


_restarted: list[bool] = []  # the cluster was restarted after the last run (``measure``)


def restart_spark(table: str, warm_floor: float | None = None) -> dict[str, Any]:
    """Stop and start the local cluster (``deploy/spark/cluster.sh``; its catalog keeps the tables), then Spark's
    floor over ``table`` again until it settles: a cluster just started runs the floor and a search up to twice
    as slow for about two minutes of work (docs/benchmarks.md, "A restarted cluster"), and the next run is divided
    by ``warm_floor``, measured warm.  Rounds of the floor (``bench_spark.floor_spark``: 4 queries each) go on
    until one is within 1.2× ``warm_floor`` or ``SETTLE_S`` have passed; seconds each took."""
    from bench_spark import floor_spark

    from common import ROOT

    script = str(ROOT / "deploy" / "spark" / "cluster.sh")
    env = {**os.environ, "VEIL_SPARK_PYTHON": os.environ.get("VEIL_SPARK_PYTHON", PY)}
    started = time.perf_counter()
    subprocess.run([script, "stop"], env=env, check=True, capture_output=True)
    subprocess.run([script, "start"], env=env, check=True, capture_output=True)
    restarted = time.perf_counter() - started
    floors: list[float] = []
    settling = time.perf_counter()
    while True:
        floors.append(round(floor_spark(os.environ["VEIL_BENCH_SPARK_URL"], table), 3))
        settled = warm_floor is None or floors[-1] <= 1.2 * warm_floor
        if settled or time.perf_counter() - settling > SETTLE_S:
            break
    return {
        "restart_s": round(restarted, 1),
        "floor_s": floors[-1],
        "settling_floors_s": floors,
        "settled": settled,
        "settling_s": round(time.perf_counter() - settling, 1),
    }


def summary(case: Case) -> dict[str, Any]:
    """The case's row: per side the median wall (``None`` when a run was capped) and the first run's work; the
    ratios of *after* to ARX's wall and to the floor; whether the sides' optima agree."""
    row: dict[str, Any] = {
        "group": case.group,
        "case": case.name,
        "strategy": case.strategy,
        "config": case.config.name,
        "arx_wall_s": case.arx_wall_s,
        "arx_nodes": case.arx_nodes,
        "floor_s": case.floor_s,
    }
    for label, runs in case.runs.items():
        done = [r for r in runs if r["wall_s"] is not None]
        failed = [r for r in runs if r["wall_s"] is None]
        side = dict(done[0]) if not failed else dict(failed[0])
        if side["wall_s"] is not None:
            side["wall_s"] = round(statistics.median(r["wall_s"] for r in done), 3)
            side["walls"] = [r["wall_s"] for r in done]
            side["peak_rss_mib"] = max(r["peak_rss_mib"] or 0 for r in done)
        row[label] = side
    after = row.get("after", {})
    if after.get("wall_s") is not None:
        if case.arx_wall_s:
            row["after_over_arx"] = round(after["wall_s"] / case.arx_wall_s, 2)
        if case.floor_s:
            row["after_over_floor"] = round(after["wall_s"] / case.floor_s, 2)
    optima = {json.dumps(row[s].get("optimal")) for s in case.runs if row[s].get("wall_s") is not None}
    row["agree"] = len(optima) <= 1
    return row


HEADER = (
    f"{'case':44} {'ARX s':>6} {'floor':>6} | {'before s':>8} {'nodes':>5} {'stmts':>5} {'ms/node':>7} {'MiB':>5} | "
    f"{'after s':>7} {'nodes':>5} {'node st':>7} {'all st':>6} {'ms/node':>7} {'MiB':>5} | {'÷ARX':>5} {'÷floor':>6}"
)


def line(row: dict[str, Any]) -> str:
    """``row`` as one line of the printed table."""

    def num(value: Any, width: int, digits: int = 2) -> str:
        if value is None:
            return f"{'—':>{width}}"
        return f"{value:>{width}.{digits}f}" if isinstance(value, float) else f"{value:>{width}}"

    def side(s: dict[str, Any], after: bool) -> str:
        widths = (7, 5, 7, 6, 7, 5) if after else (8, 5, 5, 7, 5)
        if s.get("wall_s") is None:
            wall = f">{s['capped_at_s']:.0f}" if s.get("capped_at_s") else ("failed" if s.get("error") else "—")
            return f"{wall:>{widths[0]}} " + " ".join(f"{'—':>{w}}" for w in widths[1:])
        values = [s["wall_s"], s["nodes"], s["node_statements"]]
        values += (
            [s.get("statements"), s["ms_per_node"], s["peak_rss_mib"]]
            if after
            else [s["ms_per_node"], s["peak_rss_mib"]]
        )
        return " ".join(num(v, w, 0 if i == len(widths) - 1 else 2) for i, (v, w) in enumerate(zip(values, widths)))

    mark = "" if row["agree"] else "  OPTIMA DIFFER"
    return (
        f"{row['case'][:44]:44} {num(row['arx_wall_s'], 6)} {num(row['floor_s'], 6)} | "
        f"{side(row.get('before', {}), False)} | {side(row['after'], True)} | "
        f"{num(row.get('after_over_arx'), 5)} {num(row.get('after_over_floor'), 6)}{mark}"
    )


# --- the cases ------------------------------------------------------------------------------------------------


def adult_cases(repeat: int) -> list[Case]:
    """Issue 36's eight Adult cases on DuckDB (``bench_search.ARX_CASES``)."""
    from bench_search import ARX_CASES

    from common import adult_config, duckdb_file, load_adult_duckdb

    duck = duckdb_file("adult")
    load_adult_duckdb(duck)
    return [
        Case("Adult", name, adult_config("duckdb", duck, qis, sens, models, extra), "optimal", arx_s, arx_n, None,
             repeat=repeat)
        for name, qis, sens, models, extra, arx_s, arx_n in ARX_CASES
    ]  # fmt: skip


def resampled_duckdb(rows: int) -> tuple[Path, str]:
    """``bench."adult_<rows>"`` in a DuckDB file: the rows ``bench_pg_scan.adult_table`` copies into PostgreSQL."""
    from bench_pg_scan import resampled

    path, table = WORK / "adult_resampled.duckdb", f"adult_{rows}"
    con = duckdb.connect(str(path))
    try:
        con.execute("CREATE SCHEMA IF NOT EXISTS bench")
        have = con.execute("SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'bench' AND table_name = ?",
                           [table]).fetchone()[0]  # type: ignore[index]  # fmt: skip
        if not have or con.execute(f'SELECT count(*) FROM bench."{table}"').fetchone()[0] != rows:  # type: ignore[index]
            con.execute(f'CREATE OR REPLACE TABLE bench."{table}" AS {resampled(con, rows)}')
    finally:
        con.close()
    return path, table


def floor_duckdb_adult(path: Path, table: str) -> float:
    """DuckDB's floor: one ``GROUP BY`` of the 8 quasi-identifiers and occupation, in a fresh connection (median
    of 3 after a warm-up)."""
    from bench_pg_scan import QIS, SENSITIVE, quoted

    cols = quoted(QIS + [SENSITIVE])
    times = []
    con = duckdb.connect(str(path), read_only=True)
    try:
        for _ in range(4):
            started = time.perf_counter()
            con.execute(
                f'SELECT count(*) FROM (SELECT {cols}, count(*) FROM bench."{table}" GROUP BY {cols})'
            ).fetchall()
            times.append(time.perf_counter() - started)
    finally:
        con.close()
    return round(statistics.median(times[1:]), 3)


def resample_cases(rows: int, k: int) -> list[Case]:
    """The resampled Adult at ``rows`` (k = ``k``) on DuckDB and on PostgreSQL, each beside its floor."""
    from bench_pg_scan import adult_table, config, floors

    duck, table = resampled_duckdb(rows)
    pg_path = config(adult_table(rows), k, None)
    duck_path = pg_path.with_name(f"{pg_path.stem}_duckdb.toml")
    duck_path.write_text(pg_path.read_text().replace('url_env = "VEIL_BENCH_PG_URL"', f'url = "duckdb:///{duck}"'))
    pg_floor = statistics.median(floors(table, "unlogged")["unlogged"] for _ in range(3))
    label = f"{rows / 1e6:g}M resampled Adult, k={k}"
    return [
        Case("resample", f"{label}, DuckDB", duck_path, arx_wall_s=26.6, floor_s=floor_duckdb_adult(duck, table)),
        Case("resample", f"{label}, PostgreSQL", pg_path, arx_wall_s=14.0, floor_s=round(pg_floor, 3)),
    ]


SPARK_MODELS = {
    "k=10": '\n[[models]]\ntype = "k-anonymity"\nk = 10\n',
    "k=10+entropy l=3": (
        '\n[[models]]\ntype = "k-anonymity"\nk = 10\n'
        '\n[[models]]\ntype = "entropy-l-diversity"\nattribute = "occupation"\nl = 3\n'
    ),
}


def spark_cases(url: str, rows: int) -> list[Case]:
    """The census at ``rows`` on the Spark cluster at ``url`` (registered over Parquet as ``bench_spark`` does):
    k and k + entropy, optimal and Incognito, each beside Spark's floor."""
    from bench_spark import export_parquet, floor_spark, register_in_spark

    table, duck = f"census_{rows}", WORK / "spark_census.duckdb"
    census_duckdb(duck, table, rows)
    register_in_spark(url, table, export_parquet(duck, table), rows)
    os.environ["VEIL_BENCH_SPARK_URL"] = url
    floor = round(floor_spark(url, table), 3)
    cases = []
    for label, models in SPARK_MODELS.items():
        local = census_config("duckdb", duck, table, ["occupation"], models)
        path = local.with_name(local.stem + "_spark.toml")
        path.write_text(local.read_text().replace(f'url = "duckdb:///{duck}"', 'url_env = "VEIL_BENCH_SPARK_URL"'))
        for strategy in ("optimal", "incognito"):
            name = f"Spark {rows / 1e6:g}M census {label}, {strategy}"
            cases.append(Case("Spark", name, path, strategy, floor_s=floor, spark=True, table=table))
    return cases


# --- the run --------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def code_sides(before: str | None) -> Iterator[dict[str, dict[str, str]]]:
    """``before`` (a worktree of the commit, when given) and ``after`` (this checkout), each warmed."""
    from bench_ab import earlier_code

    with contextlib.ExitStack() as stack:
        sides = {"before": stack.enter_context(earlier_code(before))} if before else {}
        sides["after"] = {}
        for env in sides.values():
            warm(env)
        yield sides


def run(
    groups: list[Callable[[], list[Case]]],
    before: str | None,
    cap: float,
    saved: Callable[[list[dict[str, Any]]], None],
) -> list[dict[str, Any]]:
    """Every group's cases (built just before they run: a group prepares its own data), measured and printed;
    ``saved`` is given the rows so far after each case."""
    rows: list[dict[str, Any]] = []
    print(HEADER, flush=True)
    with code_sides(before) as sides:
        for build in groups:
            for case in build():
                measure(case, sides, cap)
                rows.append(summary(case))
                print(line(rows[-1]), flush=True)
                for label in sides:
                    if rows[-1].get(label, {}).get("error"):
                        print(f"    {label} failed: {rows[-1][label]['error']}", flush=True)
                saved(rows)
    return rows


def table(args: Any) -> None:
    """``bench_search.py --arx``: build the groups the arguments ask for, run them, save the table."""
    import subprocess as sp

    from common import ROOT

    groups: list[Callable[[], list[Case]]] = []
    if "adult" in args.groups:
        groups.append(lambda: adult_cases(args.repeat))
    if "resample" in args.groups:
        groups.append(lambda: resample_cases(args.resample_rows, args.resample_k))
    if "spark" in args.groups:
        for n in args.spark_rows:
            groups.append(lambda n=n: spark_cases(args.spark, n))
    commit = (
        sp.run(
            ["git", "rev-parse", "--short", args.before], cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout.strip()
        if args.before
        else None
    )
    head = sp.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    started = time.time()

    def saved(rows: list[dict[str, Any]]) -> None:
        doc = {
            "machine": machine_facts(),
            "before": commit,
            "after": head,
            "cap_s": args.cap,
            "repeat_adult": args.repeat,
            "minutes": round((time.time() - started) / 60, 1),
            "cases": rows,
        }
        save(args.out, doc)

    run(groups, commit, args.cap, saved)
    print("results:", RESULTS / f"{args.out}.json")


def markdown(doc: dict[str, Any]) -> str:
    """``doc`` (``case_table.json``) as the Markdown table of docs/benchmarks.md."""

    def side(s: dict[str, Any] | None, statements: bool) -> str:
        if not s or s.get("wall_s") is None:
            return f"> {s['capped_at_s']:.0f} s" if s and s.get("capped_at_s") else "failed" if s else "—"
        parts = [f"{s['wall_s']:.2f} s", f"{s['nodes']:,}", f"{s['node_statements']:,}"]
        if statements:
            parts.append(f"{s['statements']:,}" if s.get("statements") is not None else "—")
        return " / ".join([*parts, f"{s['ms_per_node']:.2f}", f"{s['peak_rss_mib']:.0f}"])

    lines = [
        "| case | ARX 3.9.2 | floor | before: wall / nodes / node statements / ms a node / MiB "
        "| after: wall / nodes / node statements / all statements / ms a node / MiB | after ÷ ARX | after ÷ floor |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in doc["cases"]:
        arx = (
            f"{r['arx_wall_s']:.2f} s" + (f" / {r['arx_nodes']:,}" if r.get("arx_nodes") else "")
            if r["arx_wall_s"]
            else "—"
        )
        floor = f"{r['floor_s']:.2f} s" if r.get("floor_s") else "—"
        lines.append(
            f"| {r['case']} | {arx} | {floor} | {side(r.get('before'), False)} | {side(r.get('after'), True)} "
            f"| {r.get('after_over_arx', '—')} | {r.get('after_over_floor', '—')} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":  # the Markdown table of a results file: python bench/case_table.py FILE
    print(markdown(json.loads(Path(sys.argv[1]).read_text())))
