"""Warehouse scale (issue 11): ``veil search`` on the synthetic census of ``veil demo`` at 1M / 10M rows (``--rows
100000000`` for 100M), DuckDB and PostgreSQL, three model sets, each search a fresh process.

For every (rows, backend, model set): the floor (one ``GROUP BY`` of the 6 quasi-identifiers + occupation,
best of two), the search's wall time and peak RSS (``/usr/bin/time -v`` of the child), on PostgreSQL the
server's peak private memory above its baseline (sampled every 0.2 s), nodes evaluated, node queries issued
(size-only / streamed), the phases (``work`` of ``veil search --json``: prepare, node queries, checkers and
search, the rest), the optimal node, and the ratio to the floor; then ``veil check`` of that node (every
model on the whole node's counts, fresh process): its time and peak RSS.  Results: ``bench/results/scale.json``
(``scale-stop16.json``: the figures before issue 11's flat-memory work; ``scale-stop17.json`` to
``scale-stop21.json``: earlier sessions'; same machine).

    nice python bench/bench_scale.py --rows 1000000 --backends duckdb postgresql
    nice python bench/bench_scale.py --rows 10000000 --backends duckdb --sets k entropy --release

``--release``: after the ``entropy`` set's search (the demo's models), ``veil init`` + ``veil release`` of the same
config from scratch (version 1, fresh process): its wall time and peak RSS beside the search's, and their ratio;
then ``veil release --force`` (version 2, compared with version 1): ``release_v2_*``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import duckdb
import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import PG_URL, RESULTS, WORK  # noqa: E402

from veil.demo import HIERARCHIES, census_sql  # noqa: E402
from veil.demo.setup import CONFIG  # noqa: E402

QIS = ["age", "sex", "race", "marital_status", "education", "zip"]
SETS = {
    "k": '[[models]]\ntype = "k-anonymity"\nk = 10\n',
    "entropy": (
        '[[models]]\ntype = "k-anonymity"\nk = 10\n'
        '[[models]]\ntype = "entropy-l-diversity"\nattribute = "occupation"\nl = 3\n'
    ),
    "closeness": (
        '[[models]]\ntype = "k-anonymity"\nk = 10\n'
        '[[models]]\ntype = "t-closeness"\nattribute = "income"\nt = 0.2\ndistance = "ordered"\n'
    ),
}
FLOOR_SQL = (
    "SELECT count(*) FROM (SELECT age, sex, race, marital_status, education, zip, occupation, count(*) "
    "FROM {table} GROUP BY age, sex, race, marital_status, education, zip, occupation) AS g"
)
VEIL = str(Path(sys.executable).with_name("veil"))


def duckdb_warehouse(rows: int) -> Path:
    WORK.mkdir(parents=True, exist_ok=True)
    path = WORK / f"scale_{rows}.duckdb"
    if not path.exists():
        con = duckdb.connect(str(path))
        con.execute("CREATE SCHEMA IF NOT EXISTS raw")
        con.execute("CREATE TABLE raw.census AS " + census_sql(), {"rows": rows, "seed": 42})
        con.close()
    return path


def postgres_table(rows: int) -> str:
    """``bench.census_<rows>`` in PostgreSQL, copied from the DuckDB warehouse through a CSV file."""
    import psycopg

    table = f"census_{rows}"
    url = sa.make_url(PG_URL)
    with psycopg.connect(host=url.host, port=url.port or 5432, user=url.username, dbname=url.database) as pg:
        with pg.cursor() as cur:
            cur.execute("CREATE SCHEMA IF NOT EXISTS bench")
            cur.execute(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'bench' AND table_name = %s",
                (table,),
            )
            if cur.fetchone()[0]:  # type: ignore[index]
                return table
            with tempfile.TemporaryDirectory() as tmp:
                csv = Path(tmp) / "census.csv"
                con = duckdb.connect(str(duckdb_warehouse(rows)), read_only=True)
                con.execute(f"COPY raw.census TO '{csv}' (HEADER false)")
                con.close()
                cur.execute(
                    f'CREATE TABLE bench."{table}" (person_id bigint, age integer, sex text, race text, '
                    "marital_status text, education text, zip text, occupation text, income integer)"
                )
                with cur.copy(f'COPY bench."{table}" FROM STDIN (FORMAT csv)') as cp, csv.open("rb") as fh:
                    while block := fh.read(1 << 20):
                        cp.write(block)
            cur.execute(f'ANALYZE bench."{table}"')
        pg.commit()
    return table


def floor_seconds(backend: str, rows: int) -> tuple[float, int]:
    """Best of two runs of the floor query, and its number of groups."""
    times, groups = [], 0
    for _ in range(2):
        if backend == "duckdb":
            con = duckdb.connect(str(duckdb_warehouse(rows)), read_only=True)
            started = time.perf_counter()
            groups = con.execute(FLOOR_SQL.format(table="raw.census")).fetchone()[0]  # type: ignore[index]
            times.append(time.perf_counter() - started)
            con.close()
        else:
            engine = sa.create_engine(PG_URL, poolclass=sa.pool.NullPool)
            with engine.connect() as c:
                started = time.perf_counter()
                groups = c.execute(sa.text(FLOOR_SQL.format(table=f'bench."census_{rows}"'))).scalar()
                times.append(time.perf_counter() - started)
            engine.dispose()
    return min(times), int(groups)


def config_dir(backend: str, rows: int, models: str, memory_limit: str | None = None) -> Path:
    d = WORK / f"scale_{backend}_{rows}{'_' + memory_limit if memory_limit else ''}"
    (d / "hierarchies").mkdir(parents=True, exist_ok=True)
    for f in HIERARCHIES.glob("census_*.csv"):
        shutil.copyfile(f, d / "hierarchies" / f.name)
    body = CONFIG.format()
    body = body[: body.index("[[models]]")] + models + body[body.index("[search]") :]
    if backend == "duckdb":
        limit = f"?memory_limit={memory_limit}" if memory_limit else ""  # DuckDB spills beyond it
        body = body.replace('url = "duckdb:///warehouse.duckdb"', f'url = "duckdb:///{duckdb_warehouse(rows)}{limit}"')
    else:
        body = body.replace('url = "duckdb:///warehouse.duckdb"', 'url_env = "VEIL_BENCH_PG_URL"')
        body = body.replace('table = "raw.census"', f'table = "bench.census_{rows}"')
    (d / "veil.toml").write_text(body, encoding="utf-8")
    return d


def postgres_private_mb() -> float:
    """Private memory (``RssAnon``) of every PostgreSQL server process, summed, in MiB (shared buffers excluded)."""
    total = 0
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue
        if text.startswith("Name:\tpostgres"):
            found = re.search(r"RssAnon:\s+(\d+) kB", text)
            total += int(found[1]) if found else 0
    return total / 1024


class ServerMemory:
    """Samples PostgreSQL's private memory every 0.2 s while a run lasts: the peak above the baseline."""

    def __init__(self) -> None:
        self.baseline = postgres_private_mb()
        self.peak = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, postgres_private_mb() - self.baseline)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return round(self.peak, 1)


def run_search(directory: Path, timeout: float, server: bool = False) -> dict[str, Any]:
    """``veil search --json`` in a fresh process under ``/usr/bin/time -v``: wall time, peak RSS, the search's
    own figures and the warehouse's phases (``work``); with ``server``, PostgreSQL's peak private memory."""
    cmd = ["/usr/bin/time", "-v", VEIL, "search", "--json", "--config", str(directory / "veil.toml")]
    sampler = ServerMemory() if server else None
    started = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=directory)
    except subprocess.TimeoutExpired:
        if sampler is not None:
            sampler.stop()
        return {"finished": False, "seconds": timeout}
    seconds = time.perf_counter() - started
    server_mb = sampler.stop() if sampler is not None else None
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        doc = {}
    work = doc.get("work", {})
    search_seconds = doc.get("seconds")
    phases = None
    if work and search_seconds is not None:
        phases = {
            "prepare": work["prepare_seconds"],
            "node_queries": work["node_query_seconds"],
            "checkers_and_search": round(search_seconds - work["node_query_seconds"], 3),
            "other": round(seconds - search_seconds - work["prepare_seconds"], 3),
        }
    return {
        "finished": proc.returncode in (0, 2),
        "exit_code": proc.returncode,
        "seconds": round(seconds, 3),
        "peak_rss_mb": peak_mb(proc.stderr),
        **({"server_peak_private_mb": server_mb} if server else {}),
        "nodes_evaluated": doc.get("nodes_evaluated"),
        "nodes_bounded": doc.get("nodes_bounded"),
        "node_queries": work.get("node_queries"),
        "size_queries": work.get("size_queries"),
        "streamed_nodes": work.get("streamed"),
        "search_seconds": search_seconds,
        "phases": phases,
        "optimal": doc["optimal"]["node"] if doc.get("optimal") else None,
        **({} if proc.returncode in (0, 2) else {"error": _failure(proc.stdout, proc.stderr)}),
    }


def peak_mb(stderr: str) -> float | None:
    """The peak RSS ``/usr/bin/time -v`` reported, in MiB."""
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr)
    return round(int(rss[1]) / 1024, 1) if rss else None


def run_check(directory: Path, node: list[int], timeout: float) -> dict[str, Any]:
    """``veil check --json --node <node>`` (every model at the search's optimum, the whole node's counts) in a
    fresh process under ``/usr/bin/time -v``: wall time and peak RSS."""
    cmd = [
        "/usr/bin/time",
        "-v",
        VEIL,
        "check",
        "--json",
        "--node",
        ",".join(map(str, node)),
        "--config",
        str(directory / "veil.toml"),
    ]
    started = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=directory)
    except subprocess.TimeoutExpired:
        return {"check_finished": False, "check_seconds": timeout}
    return {
        "check_finished": proc.returncode == 0,
        "check_seconds": round(time.perf_counter() - started, 3),
        "check_peak_rss_mb": peak_mb(proc.stderr),
        **({} if proc.returncode == 0 else {"check_error": _failure(proc.stdout, proc.stderr)}),
    }


def fresh_release(backend: str, rows: int) -> None:
    """Drop the release objects of an earlier run (never the source): every run publishes version 1."""
    statements = ["DROP SCHEMA IF EXISTS published CASCADE", "DROP SCHEMA IF EXISTS veil CASCADE"]
    if backend == "duckdb":
        con = duckdb.connect(str(duckdb_warehouse(rows)))
        for statement in statements:
            con.execute(statement)
        con.close()
        return
    engine = sa.create_engine(PG_URL, poolclass=sa.pool.NullPool)
    with engine.begin() as c:
        for statement in statements:
            c.execute(sa.text(statement))
    engine.dispose()


def run_release(directory: Path, backend: str, rows: int, timeout: float) -> dict[str, Any]:
    """``veil init`` + ``veil release --json`` of the demo config (models of the ``entropy`` set) from scratch, then
    ``veil release --force --json`` (version 2 of the same source: the node kept, every cell compared with version
    1 — the nightly run's path), each in a fresh process under ``/usr/bin/time -v``: wall time, peak RSS (and
    PostgreSQL's peak private memory)."""
    fresh_release(backend, rows)
    config = str(directory / "veil.toml")
    subprocess.run([VEIL, "init", "--config", config], check=True, capture_output=True, cwd=directory)
    first = _timed_release([VEIL, "release", "--json", "--config", config], directory, backend, timeout, "release")
    if not first["release_finished"]:
        return first
    second = _timed_release(
        [VEIL, "release", "--force", "--json", "--config", config], directory, backend, timeout, "release_v2"
    )
    return {**first, **second}


def _timed_release(command: list[str], directory: Path, backend: str, timeout: float, key: str) -> dict[str, Any]:
    sampler = ServerMemory() if backend == "postgresql" else None
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            ["/usr/bin/time", "-v", *command], capture_output=True, text=True, timeout=timeout, cwd=directory
        )
    except subprocess.TimeoutExpired:
        if sampler is not None:
            sampler.stop()
        return {f"{key}_finished": False, f"{key}_seconds": timeout}
    seconds = time.perf_counter() - started
    doc = json.loads(proc.stdout) if proc.returncode == 0 else {}
    return {
        f"{key}_finished": proc.returncode == 0,
        f"{key}_seconds": round(seconds, 3),
        f"{key}_peak_rss_mb": peak_mb(proc.stderr),
        **({f"{key}_server_peak_private_mb": sampler.stop()} if sampler is not None else {}),
        f"{key}_version": doc.get("version"),
        f"{key}_node": doc.get("node"),
        f"{key}_rows_published": doc.get("rows_published"),
        **({f"{key}_series": doc["series"]} if doc.get("series") else {}),
        **({} if proc.returncode == 0 else {f"{key}_error": _failure(proc.stdout, proc.stderr)}),
    }


def _failure(stdout: str, stderr: str) -> str:
    """Why a run failed: its JSON document's error, else the log lines before ``/usr/bin/time``'s report."""
    try:
        return str(json.loads(stdout).get("error"))
    except (ValueError, AttributeError):
        log = stderr.split("\tCommand being timed")[0]
        return log[-1500:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--backends", nargs="+", default=["duckdb", "postgresql"], choices=["duckdb", "postgresql"])
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--out", type=Path, default=RESULTS / "scale.json")
    parser.add_argument("--duckdb-memory-limit", help="e.g. 512MB: DuckDB's memory_limit in the source URL")
    parser.add_argument(
        "--release",
        action="store_true",
        help="after the entropy set's search, time `veil release` of the same config (version 1, then a "
        "forced version 2 compared with it)",
    )
    args = parser.parse_args()
    results: list[dict[str, Any]] = json.loads(args.out.read_text()) if args.out.exists() else []
    for rows in args.rows:
        duckdb_warehouse(rows)
        for backend in args.backends:
            if backend == "postgresql":
                postgres_table(rows)
            floor, groups = floor_seconds(backend, rows)
            print(f"{rows:,} rows, {backend}: floor {floor:.3f} s ({groups:,} combinations)", flush=True)
            for name in args.sets:
                limit = args.duckdb_memory_limit if backend == "duckdb" else None
                run = run_search(
                    config_dir(backend, rows, SETS[name], limit), args.timeout, server=backend == "postgresql"
                )
                ratio = round(run["seconds"] / floor, 1) if run.get("finished") else None
                entry = {
                    "rows": rows,
                    "backend": backend,
                    "models": name,
                    "duckdb_memory_limit": limit,
                    "veil": VEIL,
                    "floor_seconds": round(floor, 3),
                    "combinations": groups,
                    "ratio_to_floor": ratio,
                    **run,
                    "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                }
                if run.get("optimal"):
                    entry.update(run_check(config_dir(backend, rows, SETS[name], limit), run["optimal"], args.timeout))
                key = (rows, backend, name, limit)
                results = [
                    r for r in results if (r["rows"], r["backend"], r["models"], r.get("duckdb_memory_limit")) != key
                ]
                if args.release and name == "entropy" and run.get("finished"):
                    entry.update(run_release(config_dir(backend, rows, SETS[name], limit), backend, rows, args.timeout))
                    entry["release_to_search"] = (
                        round(entry["release_seconds"] / run["seconds"], 2) if entry.get("release_finished") else None
                    )
                results.append(entry)
                print(json.dumps(entry), flush=True)
                args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(summary([r for r in results if r["rows"] in args.rows and not r.get("duckdb_memory_limit")]))


def summary(results: list[dict[str, Any]]) -> str:
    """The issue's table from ``results``: per rows, model set and backend the floor, the search (ratio to the floor,
    peak RSS), its node queries' time (PostgreSQL: and its ratio to DuckDB's), ``veil check`` and ``veil release``.

    >>> print(summary([{"rows": 10, "models": "k", "backend": "duckdb", "floor_seconds": 1.0, "seconds": 5.0,
    ...                 "finished": True, "ratio_to_floor": 5.0, "peak_rss_mb": 500.0, "phases": {"node_queries": 2.0}},
    ...                {"rows": 10, "models": "k", "backend": "postgresql", "floor_seconds": 9.0, "seconds": 45.0,
    ...                 "finished": True, "ratio_to_floor": 5.0, "peak_rss_mb": 90.0, "phases": {"node_queries": 30.0}}]))
    | rows | models | backend | floor | search (÷ floor) / peak | node queries (÷ DuckDB) | check / peak | release (÷ search) / peak |
    |---|---|---|---|---|---|---|---|
    | 10 | k | duckdb | 1.0 s | 5.0 s (5.0×) / 500 MiB | 2.0 s | — | — |
    | 10 | k | postgresql | 9.0 s | 45.0 s (5.0×) / 90 MiB | 30.0 s (15.0×) | — | — |
    """
    lines = [
        "| rows | models | backend | floor | search (÷ floor) / peak | node queries (÷ DuckDB) | check / peak "
        "| release (÷ search) / peak |",
        "|---|---|---|---|---|---|---|---|",
    ]
    duck = {(r["rows"], r["models"]): r for r in results if r["backend"] == "duckdb"}
    for r in sorted(results, key=lambda r: (r["rows"], list(SETS).index(r["models"]), r["backend"])):
        if not r.get("finished"):
            lines.append(
                f"| {r['rows']:,} | {r['models']} | {r['backend']} | {r['floor_seconds']} s | did not finish "
                f"in {r['seconds']:.0f} s | | | |"
            )
            continue
        queries = (r.get("phases") or {}).get("node_queries")
        other = duck.get((r["rows"], r["models"]))
        versus = ""
        if r["backend"] != "duckdb" and other and queries and (other.get("phases") or {}).get("node_queries"):
            versus = f" ({queries / other['phases']['node_queries']:.1f}×)"
        check = f"{r['check_seconds']:.1f} s / {r['check_peak_rss_mb']:,.0f} MiB" if r.get("check_finished") else "—"
        release = (
            f"{r['release_seconds']:.1f} s ({r['release_to_search']}×) / {r['release_peak_rss_mb']:,.0f} MiB"
            if r.get("release_finished")
            else "—"
        )
        lines.append(
            f"| {r['rows']:,} | {r['models']} | {r['backend']} | {r['floor_seconds']} s | {r['seconds']:.1f} s "
            f"({r['ratio_to_floor']}×) / {r['peak_rss_mb']:,.0f} MiB | "
            f"{'—' if queries is None else f'{queries:.1f} s'}{versus} | {check} | {release} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
