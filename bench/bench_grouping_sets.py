"""Cube Incognito's GROUPING SETS against one statement per node (issue 11, "Fewer scans"), on the census of
``bench_scale.py`` with the ``closeness`` set's base frequency set (6 QIs + income: the widest base).

Two measurements on each backend, one process, the warehouse prepared by Veil itself (``open_warehouse``):

- **sizes**: the block-size histograms of ``--nodes`` lattice nodes of one height (a search's frontier) read
  from ``veil_base``, one ``node_sizes`` statement per node against one statement grouping all of them
  (``GROUP BY GROUPING SETS``, the histogram per ``GROUPING()`` id): one pass over the base instead of many;
- **hubs**: the same number of rollup tables materialized from ``veil_base`` (the hubs ``veil.rollup`` picks),
  one ``materialize`` statement each against one ``CREATE TABLE AS`` with every hub as a grouping set.

Each variant runs twice, alternating; the answers are compared (the same histograms, the same cells).  Seconds
and the process's peak RSS (PostgreSQL: the client's; the server's work is in its own processes)::

    nice python bench/bench_grouping_sets.py --rows 10000000 --backend duckdb
    nice python bench/bench_grouping_sets.py --rows 1000000 --backend postgresql

Results: ``bench/results/grouping_sets.json`` (one entry per backend and rows, replaced when run again).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.bench_scale import SETS, config_dir, duckdb_warehouse, postgres_table  # noqa: E402
from bench.common import RESULTS  # noqa: E402

from veil import config as cfg  # noqa: E402
from veil import queries as q  # noqa: E402
from veil.lattice import Lattice  # noqa: E402
from veil.queries.ddl import working_table  # noqa: E402
from veil.run import open_warehouse  # noqa: E402

Node = tuple[int, ...]


def peak_mib() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def grouped_sizes(layout: q.Layout, nodes: list[Node]) -> sa.Select[Any]:
    """One statement for every node's block-size histogram: ``(gid, size, blocks)``; ``gid`` is ``GROUPING()`` of
    every column any node groups by, so each node's rows are told apart whatever NULLs the other sets leave."""
    base = layout.base().alias("b")
    used = sorted({f"q{i}_{lv}" for n in nodes for i, lv in enumerate(n)})
    cols = [base.c[c] for c in used]
    sets = [sa.tuple_(*(base.c[f"q{i}_{lv}"] for i, lv in enumerate(n))) for n in nodes]
    blocks = (
        sa.select(sa.func.grouping(*cols).label("gid"), sa.func.sum(base.c.n).label("size"))
        .group_by(sa.func.grouping_sets(*sets))
        .subquery("e")
    )
    return sa.select(blocks.c.gid, blocks.c.size, sa.func.count().label("blocks")).group_by(blocks.c.gid, blocks.c.size)


def gid_of(node: Node, used: list[str]) -> int:
    """``GROUPING(used…)`` of the set grouping ``node``'s columns: bit set (first column most significant) for every
    column the set leaves out."""
    mine = {f"q{i}_{lv}" for i, lv in enumerate(node)}
    return sum(1 << (len(used) - 1 - k) for k, c in enumerate(used) if c not in mine)


def grouped_hubs(layout: q.Layout, hubs: list[Node]) -> Any:
    """Every hub's cells (with the sensitive code) in one working table ``veil_gs``: a grouping set per hub."""
    base = layout.base().alias("b")
    used = sorted({f"q{i}_{lv}" for n in hubs for i, lv in enumerate(n)})
    sens = [base.c[f"s{k}"] for k in range(layout.sensitive_count)]
    sets = [sa.tuple_(*(base.c[f"q{i}_{lv}"] for i, lv in enumerate(n)), *sens) for n in hubs]
    stmt = sa.select(
        sa.func.grouping(*(base.c[c] for c in used)).label("gid"),
        *(base.c[c] for c in used),
        *sens,
        sa.cast(sa.func.sum(base.c.n), sa.BigInteger).label("n"),
    ).group_by(sa.func.grouping_sets(*sets))
    return working_table(sa.table("veil_gs", *(sa.column(c) for c in ["gid", *used])), stmt, None)


def measure(rows: int, backend: str, count: int) -> dict[str, Any]:
    if backend == "duckdb":
        duckdb_warehouse(rows)
    else:
        postgres_table(rows)
    conf = cfg.load(config_dir(backend, rows, SETS["closeness"]) / "veil.toml")
    out: dict[str, Any] = {"rows": rows, "backend": backend, "nodes": count}
    with open_warehouse(conf) as wh:
        session, layout = wh.session, wh.layout
        lattice = Lattice(wh.heights)
        middle = sum(wh.heights) // 2
        nodes = [n for n in lattice.ordered if sum(n) == middle][:count]
        used = sorted({f"q{i}_{lv}" for n in nodes for i, lv in enumerate(n)})
        rollups = wh.rollups[0]
        hubs = sorted({h for h in (rollups.hub(n) for n in lattice.ordered) if h is not None})[:count]
        out.update(base_cells=wh.stats.base_cells, frontier=[list(n) for n in nodes], hubs=[list(h) for h in hubs])
        runs: list[dict[str, Any]] = []
        for rep in range(2):
            started = time.perf_counter()
            one = {n: session.columns(q.node_sizes(layout, n), "sizes") for n in nodes}
            runs.append({"what": "sizes", "how": "one statement per node", "seconds": time.perf_counter() - started})
            started = time.perf_counter()
            data = session.columns(grouped_sizes(layout, nodes), "sizes")
            runs.append({"what": "sizes", "how": "GROUPING SETS", "seconds": time.perf_counter() - started})
            for n in nodes:
                mine = data["gid"] == gid_of(n, used)
                got = sorted(zip(data["size"][mine].tolist(), data["blocks"][mine].tolist()))
                want = sorted(zip(one[n]["size"].tolist(), one[n]["blocks"].tolist()))
                assert got == want, f"node {n}: GROUPING SETS histogram differs"
            started = time.perf_counter()
            cells = 0
            for k, h in enumerate(hubs):
                session.execute(q.materialize(layout, 1000 + k, h), "hubs")
                cells += int(session.scalar(q.count_rows(layout.node_table(1000 + k, h)), "hubs"))
            runs.append({"what": "hubs", "how": "one statement per hub", "seconds": time.perf_counter() - started})
            started = time.perf_counter()
            session.execute(grouped_hubs(layout, hubs), "hubs")
            together = int(session.scalar(q.count_rows(sa.table("veil_gs")), "hubs"))
            runs.append({"what": "hubs", "how": "GROUPING SETS", "seconds": time.perf_counter() - started})
            assert together == cells, f"GROUPING SETS made {together} cells, the hubs {cells}"
            out["hub_cells"] = cells
            for k, h in enumerate(hubs):
                session.execute(q.drop_table(layout.node_table(1000 + k, h).name), "hubs")
            session.execute(q.drop_table("veil_gs"), "hubs")
            for r in runs[-4:]:
                r.update(seconds=round(r["seconds"], 3), peak_rss_mib=peak_mib(), rep=rep)
                print(json.dumps(r), flush=True)
        out["runs"] = runs
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--backend", choices=["duckdb", "postgresql"], default="duckdb")
    parser.add_argument("--nodes", type=int, default=20)
    args = parser.parse_args()
    result = measure(args.rows, args.backend, args.nodes)
    path = RESULTS / "grouping_sets.json"
    stored = json.loads(path.read_text()) if path.exists() else []
    stored = [r for r in stored if (r["rows"], r["backend"]) != (args.rows, args.backend)] + [result]
    path.write_text(json.dumps(stored, indent=2) + "\n")
    print(path)


if __name__ == "__main__":
    main()
