"""What ``[release] report`` costs a release (issue 38): the census's first release (``veil init`` then ``veil
release``, a fresh copy of the source each time) with and without a report folder, repeated and interleaved;
with ``--before COMMIT`` the same with that commit's code too (``bench_ab.earlier_code``).  Per run: wall time
from process start to its JSON and the process's peak RSS (``/usr/bin/time``).  Medians in
``bench/results/report_cost_<rows>.json``.

    .venv/bin/python bench/bench_report.py [--rows 100000] [--repeat 3] [--before f946dc8~1]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from bench_ab import PY, RUN_CLI, earlier_code
from veil.demo import HIERARCHIES

from common import CENSUS_RELEASE, WORK, census_config, census_duckdb, duckdb_file, machine_facts, save


def release(config: Path, env: dict[str, str]) -> tuple[float, float]:
    """``veil init`` then a timed ``veil release --json``: wall seconds and peak RSS in MiB."""
    base = [PY, "-c", RUN_CLI]
    full = {**os.environ, **env}
    init = subprocess.run([*base, "init", "--config", str(config)], capture_output=True, text=True, env=full)
    if init.returncode != 0:
        raise RuntimeError(init.stderr)
    started = time.perf_counter()
    proc = subprocess.run(
        ["/usr/bin/time", "-f", "PEAK-KB %M", *base, "release", "--json", "--config", str(config)],
        capture_output=True,
        text=True,
        env=full,
    )
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr)
    # the last line: code before DuckDB's progress bar was turned off (engine/backends/duckdb.py) printed it on
    # stdout under ``python -c`` for a statement over 2 s
    json.loads(proc.stdout.strip().splitlines()[-1])
    peak = [ln for ln in proc.stderr.splitlines() if ln.startswith("PEAK-KB ")]
    return wall, round(int(peak[-1].split()[1]) / 1024, 1)


def run(args: argparse.Namespace) -> dict[str, Any]:
    source = duckdb_file(f"report_cost_source_{args.rows}")
    census_duckdb(source, "census", args.rows)
    copy = duckdb_file(f"report_cost_{args.rows}")
    variants = {"no report": "", "report": f'report = "{WORK / "report_cost"}"\n'}
    timings: dict[str, list[tuple[float, float]]] = {}
    # the bundled hierarchies, allowed by name: to an earlier commit's code they are not its own package's
    allow = f'[files]\nallow = ["{HIERARCHIES}"]\n'

    with contextlib.ExitStack() as stack:
        codes = {"current": {}}
        if args.before:
            codes = {args.before: stack.enter_context(earlier_code(args.before)), **codes}
        for _ in range(args.repeat):
            for code, env in codes.items():
                for variant, extra in variants.items():
                    shutil.copyfile(source, copy)
                    config = census_config(
                        "duckdb", copy, "census", ["occupation", "income"], CENSUS_RELEASE + extra, allow
                    )
                    timings.setdefault(f"{code}: {variant}", []).append(release(config, env))
    return {
        "machine": machine_facts(),
        "args": vars(args),
        "runs": {
            key: {
                "wall_s": [round(w, 2) for w, _ in runs],
                "peak_rss_mib": [r for _, r in runs],
                "wall_median_s": round(statistics.median(w for w, _ in runs), 2),
                "peak_rss_median_mib": round(statistics.median(r for _, r in runs), 1),
            }
            for key, runs in timings.items()
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--before", default=None, help="also run this commit's code, interleaved")
    args = ap.parse_args()
    results = run(args)
    for key, r in results["runs"].items():
        print(f"{key}: {r['wall_median_s']} s, {r['peak_rss_median_mib']} MiB (medians of {len(r['wall_s'])})")
    print("wrote", save(f"report_cost_{args.rows}", results))
    shutil.rmtree(WORK / "report_cost", ignore_errors=True)


if __name__ == "__main__":
    main()
