"""DuckDB: what an index on ``veil_version`` costs a release and buys a reader (docs/publication.md §1).

A release appends a version's rows to ``<name>_rows``, counts its blocks into ``<name>_block_rows`` and commits;
a reader selects one version.  Timed with and without an ART index on ``veil_version`` of both tables, two
versions each, on synthetic rows shaped like the demo census's (six text labels, a text and an integer
sensitive column, nearly every row its own cell), at DuckDB's memory limit of Veil (512MB)::

    python bench/bench_version_index.py --rows 10000000

Results in ``bench/results/version_index.json``: seconds of the insert, the blocks' count, the commit and a
reader's scan of one version, with peak RSS of the process.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import RESULTS, WORK  # noqa: E402

SOURCE = """CREATE TABLE src AS SELECT
  '[' || (hash(i) % 5)::VARCHAR || '0-' || (hash(i) % 5)::VARCHAR || '9]' AS a, 'b' || (hash(i + 1) % 2)::VARCHAR AS b,
  'c' || (hash(i + 2) % 4)::VARCHAR AS c, 'd' || (hash(i + 3) % 3)::VARCHAR AS d,
  'e' || (hash(i + 4) % 6)::VARCHAR AS e, lpad((hash(i + 5) % 7400)::VARCHAR, 5, '0') AS f,
  'occupation ' || (hash(i + 6) % 14)::VARCHAR AS occ, (hash(i + 7) % 8000)::INTEGER AS income
  FROM range(?) t(i)"""
COLUMNS = "a TEXT, b TEXT, c TEXT, d TEXT, e TEXT, f TEXT, occ TEXT, income INTEGER"


def run(rows: int, indexed: bool) -> list[dict[str, float | int | bool]]:
    path = WORK / f"version_index_{rows}_{int(indexed)}.duckdb"
    path.unlink(missing_ok=True)
    con = duckdb.connect(str(path), config={"memory_limit": "512MB"})
    con.execute(SOURCE, [rows])
    con.execute(f"CREATE TABLE rows (veil_version INTEGER NOT NULL, {COLUMNS})")
    con.execute(f"CREATE TABLE block_rows (veil_version INTEGER NOT NULL, {COLUMNS}, n BIGINT NOT NULL)")
    if indexed:
        con.execute("CREATE INDEX rows_version ON rows (veil_version)")
        con.execute("CREATE INDEX block_rows_version ON block_rows (veil_version)")
    con.execute("CHECKPOINT")
    out = []
    for version in (1, 2):
        con.execute("BEGIN")
        t0 = time.perf_counter()
        con.execute("INSERT INTO rows SELECT ?, * FROM src", [version])
        t1 = time.perf_counter()
        con.execute(
            "INSERT INTO block_rows SELECT ?, a, b, c, d, e, f, occ, income, count(*) FROM rows "
            "WHERE veil_version = ? GROUP BY ALL",
            [version, version],
        )
        t2 = time.perf_counter()
        con.execute("COMMIT")
        t3 = time.perf_counter()
        con.execute("SELECT count(*), sum(income) FROM rows WHERE veil_version = ?", [version]).fetchall()
        t4 = time.perf_counter()
        out.append(
            {
                "rows": rows,
                "indexed": indexed,
                "version": version,
                "insert_seconds": round(t1 - t0, 3),
                "blocks_seconds": round(t2 - t1, 3),
                "commit_seconds": round(t3 - t2, 3),
                "read_version_seconds": round(t4 - t3, 4),
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            }
        )
        print(json.dumps(out[-1]), flush=True)
    con.close()
    path.unlink(missing_ok=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--indexed", type=int, choices=[0, 1], help="one variant in this process (peak RSS its own)")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    if args.indexed is not None:
        run(args.rows, bool(args.indexed))
        return
    results = []
    for indexed in (1, 0):  # each variant in a fresh process
        done = subprocess.run(
            [sys.executable, __file__, "--rows", str(args.rows), "--indexed", str(indexed)],
            check=True,
            capture_output=True,
            text=True,
        )
        results += [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        print(done.stdout, end="", flush=True)
    (RESULTS / "version_index.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
