"""The notebook path on UCI Adult (issue 35): ``veil.anonymize`` on a pandas DataFrame of the 30,162 rows, 7
quasi-identifiers (ARX's hierarchies), k = 5, distinct l = 3 on ``occupation``, 2% suppression — timed from
the call to its return, once per strategy asked for, beside the CLI's ``veil search`` on the same table.

    .venv/bin/python bench/bench_notebook.py                       # the API's default strategy
    .venv/bin/python bench/bench_notebook.py --strategy optimal --strategy incognito --cli

``--strategy`` is passed to ``veil.anonymize`` only when given (a Veil before issue 35 has no such argument:
it ran optimal and incognito, always: ``PYTHONPATH`` at an export of an earlier tree times it).  Results:
bench/results/notebook.json."""

from __future__ import annotations

import argparse
import inspect
import time
from typing import Any

import pandas as pd

import veil
from common import SHARED, adult_config, duckdb_file, load_adult_duckdb, run_cli, save

QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass"]
SENSITIVE = ["occupation"]
MODELS = [{"type": "k-anonymity", "k": 5}, {"type": "distinct-l-diversity", "l": 3}]
MODELS_TOML = '[[models]]\ntype = "k-anonymity"\nk = 5\n[[models]]\ntype = "distinct-l-diversity"\nl = 3\n'
SUPPRESSION = 0.02


def call(df: pd.DataFrame, strategy: str | None) -> dict[str, Any]:
    hierarchies = {q: {"csv": str(SHARED / "adult" / f"adult_hierarchy_{q}.csv")} for q in QIS}
    extra = {} if strategy is None else {"strategy": strategy}
    t = time.perf_counter()
    out = veil.anonymize(df, hierarchies, sensitive=SENSITIVE, models=MODELS, max_suppression=SUPPRESSION, **extra)
    seconds = time.perf_counter() - t
    return {
        "strategy": strategy or "(default)",
        "seconds": round(seconds, 2),
        "node": list(out.node),
        "suppressed_rows": out.suppressed_rows,
        "rows": len(out.data),
        "nodes_evaluated": out.nodes_evaluated,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--strategy", action="append", help="a strategy for veil.anonymize (repeatable)")
    ap.add_argument("--cli", action="store_true", help="also time `veil search --strategy optimal` on the table")
    ap.add_argument("--save", default="notebook", help="results file name in bench/results (default: notebook)")
    args = ap.parse_args()
    df = pd.read_csv(SHARED / "adult" / "adult.csv", sep=";")
    has_strategy = "strategy" in inspect.signature(veil.anonymize).parameters
    print(f"Adult: {len(df):,} rows; veil.anonymize {'has' if has_strategy else 'has no'} strategy=")
    results = []
    for strategy in args.strategy or [None]:
        results.append(call(df, strategy))
        print(results[-1])
    if args.cli:
        duck = duckdb_file("adult")
        load_adult_duckdb(duck)
        path = adult_config(
            "duckdb", duck, QIS, SENSITIVE, MODELS_TOML, f"\n[search]\nmax_suppression = {SUPPRESSION}\n"
        )
        wall, doc, _, _ = run_cli("search", "--config", str(path), "--strategy", "optimal")
        results.append(
            {
                "strategy": "cli optimal",
                "seconds": round(wall, 2),
                "node": doc["optimal"]["node"],
                "nodes_evaluated": doc["nodes_evaluated"],
            }
        )
        print(results[-1])
    print(
        "results:",
        save(args.save, {"data": str(SHARED / "adult"), "strategy_argument": has_strategy, "results": results}),
    )


if __name__ == "__main__":
    main()
