"""Lattice search on real data: Adult (ARX's table and 9 hierarchies) and ARX's integer-recoded benchmark
tables, on DuckDB and PostgreSQL.  Reports lattice size, nodes evaluated, node queries issued, in-process
search time and wall time of ``veil search`` (process start to JSON).

    .venv/bin/python bench/bench_search.py [--backends duckdb,postgres] [--strategies optimal,incognito]
    .venv/bin/python bench/bench_search.py --only suppression --strategies optimal   # beside ARX's 12 s
    .venv/bin/python bench/bench_search.py --arx [--repeat 3] [--before 7e5c391] [--groups adult,resample,spark]

``--arx`` prints issue 36's whole case table (``case_table``): the eight Adult cases beside ARX 3.9.2, the
resampled Adult on DuckDB and PostgreSQL beside each one's floor, the census on Spark at 1M and 10M beside Spark's
floor; *before* (``--before``, by default the code issue 36 was filed against) and *after* (this checkout)
interleaved in one run, with nodes, statements, ms a node and peak RSS.  It needs PostgreSQL and, for the Spark
rows, the local cluster (``deploy/spark/cluster.sh start``).
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
    ap.add_argument("--arx", action="store_true", help="issue 36's whole case table, before and after (case_table)")
    ap.add_argument("--repeat", type=int, default=3, help="--arx: interleaved rounds of each Adult case")
    ap.add_argument("--before", default="7e5c391", help="--arx: the before side's commit (default: issue 36 filed)")
    ap.add_argument("--groups", default="adult,resample,spark", help="--arx: which of adult,resample,spark")
    ap.add_argument("--cap", type=float, default=300.0, help="--arx: stop a run after this many seconds")
    ap.add_argument("--resample-rows", type=int, default=10_000_000)
    ap.add_argument("--resample-k", type=int, default=1650)
    ap.add_argument("--spark", default="sc://127.0.0.1:15002", help="--arx: the Spark Connect cluster")
    ap.add_argument("--spark-rows", type=lambda v: [int(n) for n in v.split(",")], default=[1_000_000, 10_000_000])
    ap.add_argument("--out", default="case_table", help="--arx: results as bench/results/<out>.json")
    args = ap.parse_args()
    if args.arx:
        from case_table import table

        args.groups = args.groups.split(",")
        table(args)
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
