"""A Spark catalog's reads over many nights, with and without compaction (``veil.release.compaction``,
docs/spark.md §3 and §9).

Two catalogs made by ``veil init``'s code (``veil.catalog.upgrade``) take a night's catalog appends through Veil's
own Spark session — a run started and published (two appends to ``releases``), the pointer moved, a node and a
series version recorded — with the session's clock a day later each night.  One is compacted as a run's clean-up
compacts it (``compaction.due``, then ``compaction.compact``), the other never.  At the nights listed, each reads
its release's runs (``queries.catalog.runs_of``, what every run reads first) and its nodes, three times each
alternating (medians), and counts the files its ``releases`` view reads.  Also: each compaction's time and
statements, and the Spark processes' peak RSS.  Results: ``bench/results/spark_catalog_compaction.json``.

    .venv/bin/python bench/bench_catalog_compaction.py [--nights 120] [--spark sc://127.0.0.1:15002]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
import uuid
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from bench_spark import Sampler
from common import machine_facts, save

from veil import catalog
from veil.backends import open_backend
from veil.queries import appendonly
from veil.queries import catalog as qc
from veil.queries import publication as pub
from veil.release import compaction

WAREHOUSE = Path(__file__).resolve().parent.parent / "deploy" / "spark" / "run" / "warehouse"
SCHEMAS = {"compacted": "bench_compaction_on", "never": "bench_compaction_off"}
REAL_NS = time.time_ns


def night(session: Any, tables: catalog.CatalogTables, n: int) -> None:
    """A night's catalog appends: the run started and published, the pointer moved, a node and a series version."""
    run = str(uuid.uuid4())
    r = tables.releases
    session.execute(r.insert().values(id=run, name="census", status="running", config_hash="h"), "start")
    session.execute(sa.update(r).where(r.c.id == run).values(status="published", version=n), "publish")
    when = sa.func.current_timestamp()
    pointer = pub.set_pointer if n > 1 else pub.add_pointer
    args = (tables.publications, "census", n, when) if n > 1 else (tables.publications, "census", "out", n, when)
    session.execute(pointer(*args), "pointer")
    session.execute(tables.release_nodes.insert().values(release_id=run, node="[0, 1]", passed=True), "node")
    session.execute(tables.series_versions.insert().values(name="census", version=n, release_id=run), "series")


def files(schema: str, table: str, layout: appendonly.Layout) -> int:
    """Data files a view of ``table`` reads: its base's and its log's partitions after the watermark."""
    root = WAREHOUSE / f"{schema}.db"
    count = 0
    if layout.watermark is not None:
        count += sum(1 for _ in (root / f"{table}_base_{layout.watermark}").glob("part-*"))
    for part in (root / f"{table}_log").glob("veil_day=*"):
        if layout.watermark is None or int(part.name.split("=")[1]) > layout.watermark:
            count += sum(1 for _ in part.glob("part-*"))
    return count


def reads(session: Any, tables: catalog.CatalogTables) -> dict[str, float]:
    times: dict[str, list[float]] = {"runs_of": [], "release_nodes": []}
    for _ in range(3):
        for what, stmt in (
            ("runs_of", qc.runs_of(tables.releases, "census")),
            ("release_nodes", sa.select(tables.release_nodes.c.node)),
        ):
            started = time.perf_counter()
            session.rows(stmt, what)
            times[what].append(time.perf_counter() - started)
    return {f"{k}_s": round(statistics.median(v), 3) for k, v in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spark", default=os.environ.get("VEIL_TEST_SPARK_URL", "sc://127.0.0.1:15002"))
    ap.add_argument("--nights", type=int, default=120)
    args = ap.parse_args()
    marks = sorted({1, 7, 30, 60, 120, 240, 365, args.nights} & set(range(1, args.nights + 1)))
    results: dict[str, Any] = {"machine": machine_facts(), "every": compaction.EVERY, "points": [], "compactions": []}
    shift = [0]
    time.time_ns = lambda: REAL_NS() + shift[0] * appendonly.NANOS_A_DAY  # type: ignore[assignment]
    backend = open_backend(args.spark)
    with backend.session() as session, Sampler() as sampler:
        cats = {}
        for kind, schema in SCHEMAS.items():
            session.execute(sa.text(f"DROP SCHEMA IF EXISTS `{schema}` CASCADE"), "dropping")
            catalog.upgrade(session, schema)
            cats[kind] = catalog.tables(schema)
        for n in range(1, args.nights + 1):
            shift[0] = n
            for kind, tables in cats.items():
                night(session, tables, n)
                if kind == "compacted" and compaction.due(compaction.layout(session, tables), appendonly.today()):
                    before, started = session.statements, time.perf_counter()
                    compaction.compact(session, tables, appendonly.today())
                    done = {"night": n, "seconds": round(time.perf_counter() - started, 2)}
                    results["compactions"].append({**done, "statements": session.statements - before})
            if n in marks:
                for kind, tables in cats.items():
                    layout = compaction.layout(session, tables)
                    point = {"night": n, "catalog": kind, "files": files(SCHEMAS[kind], "releases", layout)}
                    point.update(reads(session, tables))
                    results["points"].append(point)
                    print(json.dumps(point), flush=True)
        for schema in SCHEMAS.values():
            session.execute(sa.text(f"DROP SCHEMA IF EXISTS `{schema}` CASCADE"), "dropping")
    results["spark_driver_peak_rss_mib"] = round(sampler.driver, 1)
    results["spark_executors_peak_rss_mib"] = round(sampler.executors, 1)
    print(json.dumps(results["compactions"]))
    print(f"wrote {save('spark_catalog_compaction', results)}")


if __name__ == "__main__":
    main()
