"""Scale on the local Spark cluster against DuckDB on the same machine (issue 12, "Scale figures").

The synthetic census of ``veil demo`` (seed 42) at ``--rows`` (default 10M) is generated in a DuckDB file,
exported once as Parquet under ``bench/.work`` and registered in Spark's catalog as an external table
(``bench.census_<rows>``) over those files, so DuckDB and Spark read the same rows.  Then, for each model
set, ``veil search --strategy optimal`` runs as a fresh process against DuckDB and against the cluster
(``sc://`` from ``--spark``, default ``sc://127.0.0.1:15002``; start it with ``deploy/spark/cluster.sh start``).

Measured per run: wall time from process start to its JSON, the ``veil`` process's peak RSS (``/usr/bin/time``'s
maximum resident set), and for Spark the peak RSS of the Spark Connect server (the Spark driver, a JVM on this
machine; sampled every 0.2 s) and of the executors (the workers' children).  Results: bench/results/spark_<rows>.json.

    .venv/bin/python bench/bench_spark.py [--rows 10000000] [--spark sc://127.0.0.1:15002]
    .venv/bin/python bench/bench_spark.py --rows 1000000 --models k --before c666707   # same-run A/B on Spark
    .venv/bin/python bench/bench_spark.py --rows 100000 --models k --strategy incognito --before c666707
    .venv/bin/python bench/bench_spark.py --rows 1000000 --release     # and a first release after each search
    .venv/bin/python bench/bench_spark.py --rows 1000000 --models k --release --before c05e0dc   # releases A/B

``--release``: after each search a first release of the same config into fresh schemas and a later version of it
(``veil release --force``: version 2, compared with version 1), then the search and the releases once more
(``again``: all warm), and the release ÷ search ratios of each pair (``release_over_search``,
``later_over_search``).  With ``--before`` each side releases with its own code (``bench_release_ab.py``
interleaves releases alone, round after round).

``--before COMMIT``: every Spark search runs twice, interleaved, with that commit's code and with this checkout's
(``bench_ab.earlier_code``), so a change's effect on Spark is measured in one run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import duckdb

from common import ROOT, WORK, census_config, census_duckdb, machine_facts, run_cli, save, warm_bytecode

MODEL_SETS = {
    "k=10": '\n[[models]]\ntype = "k-anonymity"\nk = 10\n',
    "k=10 + entropy l=3 (occupation)": (
        '\n[[models]]\ntype = "k-anonymity"\nk = 10\n'
        '\n[[models]]\ntype = "entropy-l-diversity"\nattribute = "occupation"\nl = 3\n'
    ),
}


DRIVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
EXECUTOR_CLASS = "org.apache.spark.executor.CoarseGrainedExecutorBackend"


def _jvms(main_class: str, cluster: Path | None = None) -> list[int]:
    """The processes running ``main_class``, found by their command line — whichever state directory
    (``VEIL_SPARK_DIR``) started the cluster, and wherever its pid files are; with ``cluster`` (that state
    directory, ``_cluster``) only those working in it, so a second cluster on the machine is not counted."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if main_class.encode() in cmdline.read_bytes().split(b"\0"):
                if cluster is None or Path(os.readlink(cmdline.parent / "cwd")).is_relative_to(cluster):
                    found.append(int(cmdline.parent.name))
        except (OSError, ValueError):
            continue
    return found


def _cluster(url: str | None) -> Path | None:
    """The state directory of the cluster whose Spark Connect server listens on ``url``'s port on this machine:
    the working directory of the process holding that listening socket (``deploy/spark/cluster.sh`` starts every
    daemon there and each executor below it); ``None`` when there is no such process here."""
    if not url or ":" not in url.rsplit("/", 1)[-1]:
        return None
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":  # 0A: LISTEN
                    inodes.add(f"socket:[{fields[9]}]")
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        with contextlib.suppress(OSError):
            if any(os.readlink(fd) in inodes for fd in fd_dir.iterdir()):
                return Path(os.readlink(fd_dir.parent / "cwd"))
    return None


def _rss_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class Sampler:
    """Peak RSS of the Spark Connect server (driver) and of all executors together, sampled while a run lasts —
    of the cluster at ``$VEIL_BENCH_SPARK_URL`` when it runs on this machine (``_cluster``), else of every one."""

    def __init__(self) -> None:
        self.cluster = _cluster(os.environ.get("VEIL_BENCH_SPARK_URL"))
        self.driver = 0.0
        self.executors = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.driver = max(self.driver, sum(_rss_mib(p) for p in _jvms(DRIVER_CLASS, self.cluster)))
            self.executors = max(self.executors, sum(_rss_mib(p) for p in _jvms(EXECUTOR_CLASS, self.cluster)))
            time.sleep(0.2)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *_exc: Any) -> None:
        self._stop.set()
        self._thread.join()


def timed_search(config: Path, strategy: str = "optimal") -> dict[str, Any]:
    """One ``veil search`` process: wall seconds, its peak RSS (MiB), the JSON's result."""
    wall, doc, _code, rss = run_cli("search", "--config", str(config), "--strategy", strategy)
    return {
        "seconds": round(wall, 2),
        "peak_rss_mib": rss,
        "optimal": doc.get("optimal"),
        "minimal": len(doc["minimal"]) if doc.get("minimal") is not None else None,
        "nodes_evaluated": doc.get("nodes_evaluated"),
        "search_seconds": doc.get("seconds"),
        "node_queries": doc.get("work", {}).get("node_queries"),
        "batched": doc.get("work", {}).get("batched"),
        "prepare_s": doc.get("work", {}).get("prepare_seconds"),
        "local_cells": doc.get("work", {}).get("local_cells"),
        "local_nodes": doc.get("work", {}).get("local_nodes"),
        "floors": doc.get("work", {}).get("floors"),
    }


def timed_release(
    config: Path, backend: str, url: str, duck: Path, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """A first release of ``config`` into fresh schemas (``veil init``, then ``veil release``, each a fresh
    process), then a later version of it (``veil release --force``: version 2, compared with version 1 as a
    nightly run's is): each release's wall seconds and peak RSS, its node and rows; the schemas dropped
    afterwards.  ``env``: run with that code (``bench_ab.earlier_code``), else this checkout's."""
    tag = uuid.uuid4().hex[:6]
    pub, cat = f"bench_pub_{tag}", f"bench_cat_{tag}"
    release = config.with_name(f"{config.stem}_release_{tag}.toml")
    release.write_text(
        config.read_text() + f'\n[release]\nname = "census"\nschema = "{pub}"\n'
        f'catalog_schema = "{cat}"\ndrop_columns = ["person_id"]\nseries = "refuse"\n'
    )
    try:
        run_cli("init", "--config", str(release), code=env)
        first = _released(*run_cli("release", "--config", str(release), code=env))
        first["later"] = _released(*run_cli("release", "--force", "--config", str(release), code=env))
        return first
    finally:
        _drop_schemas(backend, url, duck, (pub, cat))
        release.unlink()


def _released(wall: float, doc: dict[str, Any], code: int, rss: float) -> dict[str, Any]:
    return {
        "seconds": round(wall, 2),
        "peak_rss_mib": rss,
        "exit": code,
        "version": doc.get("version"),
        "node": doc.get("node"),
        "rows_published": doc.get("rows_published"),
        "job_seconds": doc.get("seconds"),
        "statements": doc.get("statements"),
    }


def sampled_release(
    config: Path, backend: str, url: str, duck: Path, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """``timed_release``, with the Spark processes' peak RSS on Spark."""
    with Sampler() as sampler:
        out = timed_release(config, backend, url, duck, env)
    if backend == "spark":
        out.update(
            spark_driver_peak_rss_mib=round(sampler.driver, 1),
            spark_executors_peak_rss_mib=round(sampler.executors, 1),
        )
    return out


def _drop_schemas(backend: str, url: str, duck: Path, schemas: tuple[str, ...]) -> None:
    if backend == "duckdb":
        con = duckdb.connect(str(duck))
        try:
            for schema in schemas:
                con.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            con.close()
        return
    from pyspark.sql.connect.session import SparkSession

    spark = SparkSession.builder.remote(url).create()
    try:
        for schema in schemas:
            spark.sql(f"DROP SCHEMA IF EXISTS `{schema}` CASCADE")
    finally:
        spark.stop()


def export_parquet(duck: Path, table: str) -> Path:
    folder = WORK / f"{table}.parquet"
    if not folder.exists():
        con = duckdb.connect(str(duck), read_only=True)
        try:
            con.execute(f"COPY bench.\"{table}\" TO '{folder}' (FORMAT parquet, PER_THREAD_OUTPUT true)")
        finally:
            con.close()
    return folder


def register_in_spark(url: str, table: str, folder: Path, rows: int) -> None:
    from pyspark.sql.connect.session import SparkSession

    spark = SparkSession.builder.remote(url).create()
    try:
        spark.sql("CREATE SCHEMA IF NOT EXISTS bench")
        spark.sql(f"DROP TABLE IF EXISTS bench.`{table}`")
        spark.sql(f"CREATE TABLE bench.`{table}` USING parquet LOCATION '{folder.resolve()}'")
        have = spark.sql(f"SELECT count(*) AS n FROM bench.`{table}`").toArrow().column(0)[0].as_py()
        if have != rows:
            raise RuntimeError(f"Spark sees {have} rows in bench.{table}, expected {rows}")
    finally:
        spark.stop()


def floor_duckdb(duck: Path, table: str) -> float:
    """One GROUP BY of the 6 QIs + occupation (the issue's floor), in a fresh connection."""
    con = duckdb.connect(str(duck), read_only=True)
    try:
        t = time.perf_counter()
        con.execute(
            f"SELECT count(*) FROM (SELECT age, sex, race, marital_status, education, zip, occupation, "
            f'count(*) FROM bench."{table}" GROUP BY ALL)'
        ).fetchall()
        return time.perf_counter() - t
    finally:
        con.close()


FLOOR_SQL = (
    "SELECT count(*) FROM (SELECT age, sex, race, marital_status, education, zip, occupation, "
    "count(*) FROM bench.`{table}` GROUP BY ALL)"
)


def floor_spark(url: str, table: str) -> float:
    """Spark's own floor: the same one GROUP BY of the 6 QIs + occupation through Spark Connect (median of 3,
    after one warm-up: the table's files read once, as a search's scan would have)."""
    import statistics

    from pyspark.sql.connect.session import SparkSession

    spark = SparkSession.builder.remote(url).create()
    try:
        times = []
        for _ in range(4):
            t = time.perf_counter()
            spark.sql(FLOOR_SQL.format(table=table)).toArrow()
            times.append(time.perf_counter() - t)
        return statistics.median(times[1:])
    finally:
        spark.stop()


def floor_spark_cold(url: str, table: str) -> float:
    """The same GROUP BY as the first query of a new Spark Connect session (median of 3 sessions), as every
    ``veil`` process meets it: the first aggregation of a session ran its scan stage at about twice the executor
    time of the same statement run again in that session (Spark's stage metrics, 2026-11-28), so the warm floor
    above is one no single process reaches."""
    import statistics

    from pyspark.sql.connect.session import SparkSession

    times = []
    for _ in range(3):
        spark = SparkSession.builder.remote(url).create()
        try:
            t = time.perf_counter()
            spark.sql(FLOOR_SQL.format(table=table)).toArrow()
            times.append(time.perf_counter() - t)
        finally:
            spark.stop()
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--spark", default=os.environ.get("VEIL_TEST_SPARK_URL", "sc://127.0.0.1:15002"))
    ap.add_argument("--models", choices=["k", "all"], default="all", help="k: k=10 only; all: every model set")
    ap.add_argument("--before", help="an earlier commit: each Spark search also runs with its code, interleaved")
    ap.add_argument("--strategy", default="optimal", choices=["optimal", "incognito"])
    ap.add_argument(
        "--release",
        action="store_true",
        help="after each search, a first release of the same config "
        '(veil init + veil release, series = "refuse" on both backends), timed the same way',
    )
    ap.add_argument("--tag", default="", help="appended to the results file's name (keeps an earlier run's file)")
    args = ap.parse_args()
    table = f"census_{args.rows}"
    WORK.mkdir(parents=True, exist_ok=True)
    duck = WORK / "spark_census.duckdb"
    made = census_duckdb(duck, table, args.rows)
    folder = export_parquet(duck, table)
    register_in_spark(args.spark, table, folder, args.rows)
    os.environ["VEIL_BENCH_SPARK_URL"] = args.spark
    warm_bytecode("veil.cli", "veil.run", "veil.release", "pyspark.sql.connect.session", "pyarrow")
    results: dict[str, Any] = {
        "rows": args.rows,
        "machine": machine_facts(),
        "generated_s": made,
        "modules": "compiled, as an installed wheel's (common.run_cli)",
        "floor_duckdb_s": round(floor_duckdb(duck, table), 3),
        "floor_spark_s": round(floor_spark(args.spark, table), 3),
        "floor_spark_cold_s": round(floor_spark_cold(args.spark, table), 3),
        "runs": [],
    }
    print(
        f"floors: DuckDB {results['floor_duckdb_s']} s, Spark {results['floor_spark_s']} s "
        f"(first in a session: {results['floor_spark_cold_s']} s)",
        flush=True,
    )
    sets = dict(list(MODEL_SETS.items())[:1]) if args.models == "k" else MODEL_SETS
    with contextlib.ExitStack() as stack:
        sides: list[tuple[str, dict[str, str] | None]] = [("current", None)]
        if args.before:
            from bench_ab import earlier_code

            commit = subprocess.run(
                ["git", "rev-parse", "--short", args.before], cwd=ROOT, check=True, capture_output=True, text=True
            ).stdout.strip()
            sides = [(f"before ({commit})", stack.enter_context(earlier_code(commit))), ("after", {})]
            results["before"] = commit
        for label, models in sets.items():
            for backend in ("duckdb", "spark"):
                config = census_config("duckdb", duck, table, ["occupation"], models)
                if backend == "spark":
                    text = config.read_text().replace(f'url = "duckdb:///{duck}"', 'url_env = "VEIL_BENCH_SPARK_URL"')
                    config = config.with_name(config.stem + "_spark.toml")
                    config.write_text(text)
                for code, env in sides if backend == "spark" else sides[-1:]:
                    with Sampler() as sampler:
                        run = (
                            timed_search(config, args.strategy)
                            if env is None
                            else ab_search(config, env, args.strategy)
                        )
                    if backend == "spark":
                        run.update(
                            spark_driver_peak_rss_mib=round(sampler.driver, 1),
                            spark_executors_peak_rss_mib=round(sampler.executors, 1),
                        )
                    run.update(backend=backend, models=label, code=code, strategy=args.strategy)
                    if args.release:
                        run["release"] = sampled_release(config, backend, args.spark, duck, env)
                        # once more, search then release: both warm (a first release is the cluster's first
                        # write of each kind — a Connect server running every night has made them before)
                        again = (
                            timed_search(config, args.strategy)
                            if env is None
                            else ab_search(config, env, args.strategy)
                        )
                        run["again"] = again
                        again["release"] = sampled_release(config, backend, args.spark, duck, env)
                        pairs = (run, again)
                        run["release_over_search"] = [round(r["release"]["seconds"] / r["seconds"], 2) for r in pairs]
                        run["later_over_search"] = [
                            round(r["release"]["later"]["seconds"] / r["seconds"], 2) for r in pairs
                        ]
                    print(json.dumps(run), flush=True)
                    results["runs"].append(run)
    suffix = ("" if args.strategy == "optimal" else f"-{args.strategy}") + ("-ab" if args.before else "")
    suffix += ("-release" if args.release else "") + (f"-{args.tag}" if args.tag else "")
    print(f"wrote {save(f'spark_{args.rows}{suffix}', results)}")


def ab_search(config: Path, env: dict[str, str], strategy: str) -> dict[str, Any]:
    """``bench_ab.search`` (a fresh interpreter with ``env``: the earlier code, or this checkout's): its figures
    under the names ``timed_search`` gives."""
    from bench_ab import search

    run = search(config, env, strategy)
    return {
        "seconds": run["seconds"],
        "peak_rss_mib": run["peak_rss_mb"],
        "optimal": run["optimal"],
        "minimal": run["minimal"],
        "value": run["value"],
        "nodes_evaluated": run["nodes_evaluated"],
        "node_queries": run["node_queries"],
        "size_queries": run["size_queries"],
        "node_query_seconds": run["node_query_seconds"],
        "batched": run.get("batched"),
    }


if __name__ == "__main__":
    main()
