"""PostgreSQL's work schema (issue 11): the base frequency set as a temporary table against an UNLOGGED table in
the run's work schema, which parallel workers can scan (``veil/backends/postgres.py``).

Two warehouses of the same census config (``bench_scale.py``'s ``k`` set; ``--rows``, default 10M) are
prepared by Veil itself on two connections at once: one with its base kept a temporary table
(``scratch_threshold`` out of reach), one as Veil chooses (above ``WORK_THRESHOLD``: the work schema, with
parallel plans priced free).  Then, alternately on the one and the other, the statements a search runs
against the base: materializing nodes the 10M ``k`` search materializes from the base (``q.materialize``,
each dropped again) and block-size histograms read straight from the base (``q.node_sizes``).  Each round
times every statement on both; the answers are compared (same cells, same histograms).  The time to code
the base is reported for each, and the peak memory of the whole run: this process's (with ``--duckdb``
DuckDB's too) and PostgreSQL's server processes' private memory above their baseline.  ``--duckdb``: the
same statements on DuckDB's base of the same census too (its warehouse from ``bench_scale.py``, the default
memory limit), in the same rounds: the ratio of the two engines on identical work, which bounds how near
PostgreSQL's node queries can come to DuckDB's.  Results: ``bench/results/pg_parallel.json``.

    nice .venv/bin/python bench/bench_pg_parallel.py --rows 10000000 --rounds 2 --duckdb
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.bench_scale import SETS, ServerMemory, config_dir, duckdb_warehouse, postgres_table  # noqa: E402
from bench.common import RESULTS  # noqa: E402

from veil import config as cfg  # noqa: E402
from veil import queries as q  # noqa: E402
from veil.run import open_warehouse  # noqa: E402
from veil.warehouse import Warehouse  # noqa: E402

# Nodes the 10M ``k`` search materialized from the base (its statement log), and two it would count there.
MATERIALIZED = [
    (1, 0, 0, 0, 1, 3),
    (0, 0, 1, 1, 1, 3),
    (0, 1, 2, 1, 1, 2),
    (0, 1, 2, 2, 0, 2),
    (0, 0, 1, 2, 3, 1),
    (0, 0, 1, 0, 2, 3),
]
SIZES = [(0, 0, 0, 0, 3, 5), (1, 1, 1, 1, 2, 2)]


def timed(wh: Warehouse, label: str, rounds: int, out: list[dict[str, Any]], answers: dict[Any, Any]) -> None:
    """One pass of every statement on ``wh``, each timed; the answers are kept by statement."""
    s, layout = wh.session, wh.layout
    for k, node in enumerate(MATERIALIZED):
        started = time.perf_counter()
        s.execute(q.materialize(layout, 9000 + k, node), "materializing")
        seconds = time.perf_counter() - started
        table = layout.node_table(9000 + k, node)
        cells = int(s.scalar(q.count_rows(table), "counting"))
        s.execute(q.drop_table(table.name), "dropping")
        s.settle()
        answers.setdefault(("materialize", node), set()).add(cells)
        out.append(
            {
                "where": label,
                "round": rounds,
                "statement": "materialize",
                "node": list(node),
                "cells": cells,
                "seconds": round(seconds, 3),
            }
        )
    for node in SIZES:
        started = time.perf_counter()
        data = s.columns(q.node_sizes(layout, node), "sizes")
        seconds = time.perf_counter() - started
        answers.setdefault(("sizes", node), set()).add(
            tuple(sorted(zip(data["size"].tolist(), data["blocks"].tolist())))
        )
        out.append(
            {"where": label, "round": rounds, "statement": "sizes", "node": list(node), "seconds": round(seconds, 3)}
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--duckdb", action="store_true", help="the same statements on DuckDB's base as well")
    args = parser.parse_args()
    postgres_table(args.rows)
    conf = cfg.load(config_dir("postgresql", args.rows, SETS["k"]) / "veil.toml")
    out: dict[str, Any] = {"rows": args.rows, "materialized": MATERIALIZED, "sizes": SIZES, "runs": []}
    places = {}
    server = ServerMemory()
    with contextlib.ExitStack() as stack:
        for label, c, options in (
            ("temporary", conf, {"scratch_threshold": 1 << 62}),
            ("work schema", conf, {}),
            *(
                (("duckdb", cfg.load(config_dir("duckdb", args.rows, SETS["k"]) / "veil.toml"), {}),)
                if args.duckdb
                else ()
            ),
        ):
            if label == "duckdb":
                duckdb_warehouse(args.rows)
            started = time.perf_counter()
            places[label] = stack.enter_context(open_warehouse(c, **options))
            out[f"{label}_prepare_seconds"] = round(time.perf_counter() - started, 3)
        assert places["work schema"].stats.scratch and not places["temporary"].stats.scratch
        out["base_cells"] = places["work schema"].stats.base_cells
        answers: dict[Any, Any] = {}
        for r in range(args.rounds):
            for label, wh in places.items():
                timed(wh, label, r, out["runs"], answers)
                total = sum(x["seconds"] for x in out["runs"] if x["where"] == label and x["round"] == r)
                print(json.dumps({"round": r, "where": label, "seconds": round(total, 3)}), flush=True)
        assert all(len(v) == 1 for v in answers.values()), "the placements disagree"
    out["server_peak_private_mb"] = server.stop()  # PostgreSQL's processes, above their baseline
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # this process
    out["totals"] = {
        f"{label}, {what}": round(
            sum(x["seconds"] for x in out["runs"] if x["where"] == label and x["statement"] == what), 3
        )
        for label in places
        for what in ("materialize", "sizes")
    }
    print(json.dumps(out["totals"]))
    (RESULTS / "pg_parallel.json").write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
