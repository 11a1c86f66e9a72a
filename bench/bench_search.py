"""Lattice search on real data: Adult (ARX's table and 9 hierarchies) and ARX's integer-recoded benchmark
tables, on DuckDB and PostgreSQL.  Reports lattice size, nodes evaluated, node queries issued, in-process
search time and wall time of ``veil search`` (process start to JSON).

    .venv/bin/python bench/bench_search.py [--backends duckdb,postgres] [--strategies optimal,incognito]
    .venv/bin/python bench/bench_search.py --only suppression --strategies optimal   # beside ARX's 12 s
    .venv/bin/python bench/bench_search.py --arx [--repeat 3]   # issue 36's case table: before / after / ARX 3.9.2

``--arx`` runs each of issue 36's Adult cases (8 quasi-identifiers, optimal, discernibility) as ``veil search``
processes, interleaved: *before* with ``[search] local_cells = 0`` (every node a statement, the path before
nodes were counted in memory) and *after* with the default; medians of ``--repeat`` runs, statements and ms a
node from the JSON's ``work``, peak RSS from ``/usr/bin/time``; ARX 3.9.2's wall and nodes from the issue.
"""

from __future__ import annotations

import argparse
import time

from common import ADULT_QIS, SHARED, adult_config, duckdb_file, load_adult_duckdb, load_adult_postgres, run_cli, save

from veil import config as cfg
from veil.run import open_warehouse, search_warehouse

OCC = "occupation"
QIS_8 = [q for q in ADULT_QIS if q != OCC]
SUPPRESSION = "\n[search]\nmax_suppression = 0.02\n"
CASES: list[tuple[str, list[str], list[str], str] | tuple[str, list[str], list[str], str, str]] = [
    ("k=5 (9 QIs)", ADULT_QIS, [], '[[models]]\ntype = "k-anonymity"\nk = 5\n'),
    ("distinct l=2 (8 QIs, occupation)", QIS_8, [OCC], '[[models]]\ntype = "distinct-l-diversity"\nl = 2\n'),
    ("entropy l=2 (8 QIs, occupation)", QIS_8, [OCC], '[[models]]\ntype = "entropy-l-diversity"\nl = 2\n'),
    (
        "recursive (3,2) (8 QIs, occupation)",
        QIS_8,
        [OCC],
        '[[models]]\ntype = "recursive-cl-diversity"\nc = 3\nl = 2\n',
    ),
    (
        "t=0.2 equal (8 QIs, occupation)",
        QIS_8,
        [OCC],
        '[[models]]\ntype = "t-closeness"\nt = 0.2\ndistance = "equal"\n',
    ),
    # issue 11's comparison with ARX 3.9.2 (k = 5, 2% suppression: 12 s, ~1,100 nodes, on 2 cores), and a model that
    # is not monotone under suppression, so a pass tags nothing above it
    ("k=5, 2% suppression (9 QIs)", ADULT_QIS, [], '[[models]]\ntype = "k-anonymity"\nk = 5\n', SUPPRESSION),
    (
        "k=5 + entropy l=2, 2% suppression (8 QIs, occupation)",
        QIS_8,
        [OCC],
        '[[models]]\ntype = "k-anonymity"\nk = 5\n[[models]]\ntype = "entropy-l-diversity"\nl = 2\n',
        SUPPRESSION,
    ),
]


K5 = '[[models]]\ntype = "k-anonymity"\nk = 5\n'
NO_AGE = [q for q in ADULT_QIS if q != "age"]
# issue 36's table: (case, QIs, sensitive, models, [search] extra, ARX 3.9.2 wall s, ARX nodes)
ARX_CASES = [
    ("k=5", QIS_8, [], K5, "", 3.14, 142),
    ("k=5 + entropy l=2", QIS_8, [OCC], K5 + '[[models]]\ntype = "entropy-l-diversity"\nl = 2\n', "", 6.28, 121),
    (
        "k=5 + t=0.2 equal",
        QIS_8,
        [OCC],
        K5 + '[[models]]\ntype = "t-closeness"\nt = 0.2\ndistance = "equal"\n',
        "",
        7.51,
        26,
    ),
    (
        "k=5 + t=0.2 ordered (age)",
        NO_AGE,
        ["age"],
        K5 + '[[models]]\ntype = "t-closeness"\nt = 0.2\ndistance = "ordered"\n',
        "",
        7.80,
        109,
    ),
    ("k=5, 2%", QIS_8, [], K5, SUPPRESSION, 4.27, 1088),
    (
        "k=5 + entropy l=2, 2%",
        QIS_8,
        [OCC],
        K5 + '[[models]]\ntype = "entropy-l-diversity"\nl = 2\n',
        SUPPRESSION,
        11.02,
        998,
    ),
    (
        "k=5 + t ordered (age), 2%",
        NO_AGE,
        ["age"],
        K5 + '[[models]]\ntype = "t-closeness"\nt = 0.2\ndistance = "ordered"\n',
        SUPPRESSION,
        14.24,
        618,
    ),
    (
        "k=5 + t=0.2 equal, 2%",
        QIS_8,
        [OCC],
        K5 + '[[models]]\ntype = "t-closeness"\nt = 0.2\ndistance = "equal"\n',
        SUPPRESSION,
        3.92,
        2117,
    ),
]


def arx_table(repeat: int) -> list[dict[str, object]]:
    """Issue 36's case table on DuckDB: before (every node a statement) and after (counted in memory)."""
    import statistics

    duck = duckdb_file("adult")
    load_adult_duckdb(duck)
    rows = []
    print(
        f"{'case':30} {'ARX s/nodes':>12} | {'before s':>8} {'nodes':>5} {'stmts':>5} {'ms/node':>7} {'MiB':>5} | "
        f"{'after s':>7} {'nodes':>5} {'stmts':>5} {'ms/node':>7} {'MiB':>5} | {'after/ARX':>9}"
    )
    for name, qis, sens, models, extra, arx_s, arx_nodes in ARX_CASES:
        runs: dict[str, list[tuple[float, dict, float]]] = {"before": [], "after": []}
        paths = {
            "before": adult_config("duckdb", duck, qis, sens, models, (extra or "\n[search]\n") + "local_cells = 0\n"),
            "after": adult_config("duckdb", duck, qis, sens, models, extra),
        }
        for _ in range(repeat):
            for label in ("before", "after"):
                wall, doc, _code, rss = run_cli("search", "--config", str(paths[label]), "--strategy", "optimal")
                runs[label].append((wall, doc, rss))
        row: dict[str, object] = {"case": name, "arx_wall_s": arx_s, "arx_nodes": arx_nodes}
        for label, done in runs.items():
            wall = statistics.median(w for w, _, _ in done)
            doc = done[0][1]
            nodes, work = doc["nodes_evaluated"], doc["work"]
            row[label] = {
                "wall_s": round(wall, 3),
                "walls": [round(w, 3) for w, _, _ in done],
                "nodes": nodes,
                "statements": work["node_queries"],
                "search_s": doc["seconds"],
                "ms_per_node": round(1000 * doc["seconds"] / max(nodes, 1), 2),
                "peak_rss_mib": max(r for _, _, r in done),
                "optimal": doc["optimal"],
                "local_cells": work.get("local_cells"),
            }
        b, a = row["before"], row["after"]
        assert b["optimal"] == a["optimal"], (name, b["optimal"], a["optimal"])  # type: ignore[index]
        row["after_over_arx"] = round(a["wall_s"] / arx_s, 2)  # type: ignore[index]
        rows.append(row)
        print(
            f"{name:30} {arx_s:6.2f}/{arx_nodes:<5} | {b['wall_s']:8.2f} {b['nodes']:5} {b['statements']:5} "  # type: ignore[index]
            f"{b['ms_per_node']:7.2f} {b['peak_rss_mib']:5.0f} | {a['wall_s']:7.2f} {a['nodes']:5} "  # type: ignore[index]
            f"{a['statements']:5} {a['ms_per_node']:7.2f} {a['peak_rss_mib']:5.0f} | {row['after_over_arx']:9.2f}",  # type: ignore[index]
            flush=True,
        )
    return rows


GENETIC = SHARED / "arx-genetic-benchmark"
# ARX's integer-recoded benchmark tables: every attribute an integer code with an ARX hierarchy.  The exact
# lattice of all 24 (creditcard) or 16 (mach2019) attributes has 10^8+ nodes; these subsets keep it exact.
GENETIC_CASES = [
    (
        "adult_int",
        [
            "sex",
            "age",
            "race",
            "marital-status",
            "education",
            "native-country",
            "workclass",
            "occupation",
            "salary-class",
        ],
    ),
    ("creditcard_int", ["LIMIT_BAL", "SEX", "EDUCATION", "MARRIAGE", "AGE", "PAY_0"]),
    ("mach2019_int", ["age", "familysize", "gender", "married", "race", "religion"]),
]


def load_genetic(duck, name: str, backend: str) -> None:
    import duckdb

    path = GENETIC / "data" / f"{name}.csv"
    con = duckdb.connect(str(duck))
    con.execute("CREATE SCHEMA IF NOT EXISTS bench")
    con.execute(
        f"CREATE OR REPLACE TABLE bench.\"{name}\" AS SELECT * FROM read_csv(?, delim=';', header=true, "
        "all_varchar=false)",
        [str(path)],
    )
    cols = [r[0] for r in con.execute(f'DESCRIBE bench."{name}"').fetchall()]
    rows = con.execute(f'SELECT * FROM bench."{name}"').fetchall() if backend == "postgres" else []
    con.close()
    if backend == "postgres":
        from common import copy_rows

        copy_rows(name, cols, {c: "BIGINT" for c in cols}, rows)


def genetic_config(backend: str, duck, name: str, qis: list[str]):
    from common import WORK, source

    text = source(backend, duck, name) + f'\n[files]\nallow = ["{GENETIC / "hierarchies"}"]\n'
    for q in qis:
        text += (
            f'\n[[quasi_identifiers]]\ncolumn = "{q}"\n'
            f'hierarchy = {{ csv = "{GENETIC / "hierarchies" / f"{name}_hierarchy_{q}.csv"}" }}\n'
        )
    text += '\n[[models]]\ntype = "k-anonymity"\nk = 5\n'
    path = WORK / f"{name}_{backend}.toml"
    path.write_text(text)
    return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backends", default="duckdb,postgres")
    ap.add_argument("--strategies", default="optimal,incognito")
    ap.add_argument("--only", default="", help="only the Adult cases whose name contains this (no ARX tables)")
    ap.add_argument("--arx", action="store_true", help="issue 36's case table beside ARX 3.9.2's figures")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if args.arx:
        from common import machine_facts

        rows = arx_table(args.repeat)
        print(
            "results:",
            save(
                "search_arx",
                {"machine": machine_facts(), "data": str(SHARED / "adult"), "repeat": args.repeat, "cases": rows},
            ),
        )
        return
    duck = duckdb_file("adult")
    load_adult_duckdb(duck)
    backends = args.backends.split(",")
    if "postgres" in backends:
        load_adult_postgres()
    results = []
    for backend in backends:
        for name, qis, sens, models, *extra in CASES:
            if args.only not in name:
                continue
            for strategy in args.strategies.split(","):
                path = adult_config(backend, duck, qis, sens, models, *extra)
                wall, doc, code, rss = run_cli("search", "--config", str(path), "--strategy", strategy)
                conf = cfg.load(path)
                with open_warehouse(conf) as wh:
                    t = time.perf_counter()
                    res = search_warehouse(wh, conf, [strategy])
                    inner = time.perf_counter() - t
                    queries, prep = wh.stats.node_queries, wh.stats.base_seconds
                row = {
                    "backend": backend,
                    "case": name,
                    "strategy": strategy,
                    "lattice_size": doc["lattice_size"],
                    "nodes_evaluated": doc["nodes_evaluated"],
                    "node_queries": queries,
                    "minimal": len(doc["minimal"]) if doc["minimal"] is not None else None,
                    "optimal": doc["optimal"],
                    "exit": code,
                    "prepare_s": round(prep, 3),
                    "search_s": round(inner, 3),
                    "wall_s": round(wall, 3),
                    "peak_rss_mib": rss,
                }
                results.append(row)
                print(
                    f"{backend:8} {name:38} {strategy:9} lattice {row['lattice_size']:6} evaluated "
                    f"{row['nodes_evaluated']:5} queries {queries:5} prepare {prep:6.3f}s search {inner:7.3f}s "
                    f"wall {wall:6.3f}s peak {rss:6.1f} MiB optimal {doc['optimal'] and doc['optimal']['node']}",
                    flush=True,
                )
        for name, qis in GENETIC_CASES if not args.only else []:
            load_genetic(duck, name, backend)
            path = genetic_config(backend, duck, name, qis)
            for strategy in args.strategies.split(","):
                wall, doc, code, rss = run_cli("search", "--config", str(path), "--strategy", strategy)
                row = {
                    "backend": backend,
                    "case": f"{name} k=5 ({len(qis)} QIs)",
                    "strategy": strategy,
                    "lattice_size": doc["lattice_size"],
                    "nodes_evaluated": doc["nodes_evaluated"],
                    "minimal": len(doc["minimal"]) if doc["minimal"] is not None else None,
                    "optimal": doc["optimal"],
                    "exit": code,
                    "search_s": doc["seconds"],
                    "wall_s": round(wall, 3),
                    "peak_rss_mib": rss,
                }
                results.append(row)
                print(
                    f"{backend:8} {row['case']:38} {strategy:9} lattice {row['lattice_size']:6} evaluated "
                    f"{row['nodes_evaluated']:5} search {doc['seconds']:7.3f}s wall {wall:6.3f}s peak {rss:6.1f} MiB optimal "
                    f"{doc['optimal'] and doc['optimal']['node']}",
                    flush=True,
                )
    print("ARX Flash, published: k=5 on Adult with 9 QIs 0.22 s; anonbench: 115 nodes checked of 4,320.")
    print("ARX 3.9.2 on 2 cores (issue 11): Adult k=5, 2% suppression 12 s, ~1,100 nodes, 3.6 ms a node.")
    name = "search" if not args.only else "search_" + "".join(c if c.isalnum() else "_" for c in args.only)
    print("results:", save(name, {"data": str(SHARED / "adult"), "results": results}))


if __name__ == "__main__":
    main()
