"""Same-run A/B of ``veil search`` (issue 11): an earlier commit against this checkout, on the census configs of
``bench_scale.py``, interleaved (before, after, before, after…) in fresh processes under ``/usr/bin/time -v``,
with one floor measured in the same run.  Ratios between sessions on a shared machine drift; an A/B does not.

The earlier commit is checked out as a git worktree and imported first through ``PYTHONPATH`` (a folder whose
``veil`` links to the worktree's ``engine/``, where ``migrations`` and ``sql`` link to the worktree's own, as the
installed package maps them); both sides use this checkout's ``.venv``.  Each side's optimum
and exact value are recorded, so a speed-up that changed the answer shows.  Results:
``bench/results/scale-ab-<commit>-<rows>.json`` (``-postgresql`` added on PostgreSQL).

    nice .venv/bin/python bench/bench_ab.py --before 1559279 --rows 10000000 --sets entropy closeness
    nice .venv/bin/python bench/bench_ab.py --before 7bfc786 --rows 10000000 --sets entropy --release
    nice .venv/bin/python bench/bench_ab.py --before 54c2fa4 --rows 1000000 --sets k entropy --backend postgresql
    nice .venv/bin/python bench/bench_ab.py --before 2d91bb6 --rows 10000000 --sets k --repeat 3
    nice .venv/bin/python bench/bench_ab.py --before e850100 --rows 1000000 --sets k entropy --strategy incognito

``--release``: after each side's search of a set, ``veil init`` + ``veil release --json`` of the same config from
scratch (version 1, the release objects dropped first), timed and measured alike.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.bench_scale import SETS, config_dir, floor_seconds, fresh_release, postgres_table  # noqa: E402
from bench.common import RESULTS, RUN_CLI  # noqa: E402, F401 (RUN_CLI: the benches that import it from here)

PY = str(Path(sys.executable))


@contextlib.contextmanager
def earlier_code(commit: str) -> Iterator[dict[str, str]]:
    """The environment that makes ``veil`` the earlier ``commit``'s: a git worktree of it whose ``engine/`` is
    imported first as ``veil`` (``PYTHONPATH``; run ``PY -c RUN_CLI``), removed on exit."""
    with tempfile.TemporaryDirectory() as tmp:
        tree, package = Path(tmp) / "tree", Path(tmp) / "package"
        subprocess.run(["git", "worktree", "add", "-q", "--detach", str(tree), commit], cwd=ROOT, check=True)
        try:
            package.mkdir()
            (package / "veil").symlink_to(tree / "engine")
            for sub in ("migrations", "sql"):  # the installed mapping (pyproject.toml) points at this checkout's
                (tree / "engine" / sub).symlink_to(tree / sub)
            yield {"PYTHONPATH": str(package)}
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)


def search(config: Path, env: dict[str, str], strategy: str = "optimal") -> dict[str, Any]:
    """One ``veil search --json`` in a fresh interpreter: wall time, peak RSS, the answer and the work."""
    started = time.perf_counter()
    proc = subprocess.run(
        ["/usr/bin/time", "-v", PY, "-c", RUN_CLI, "search", "--json", "--strategy", strategy, "--config", str(config)],
        capture_output=True,
        text=True,
        cwd=config.parent,
        env={**os.environ, **env},
    )
    seconds = time.perf_counter() - started
    if proc.returncode not in (0, 2):
        raise RuntimeError(proc.stderr[-600:])
    # ``python -c`` has no ``__main__.__file__``: DuckDB then draws its progress bar on stdout before the JSON
    doc = json.loads(proc.stdout[proc.stdout.index('{"status"') :])
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    work = doc["work"]
    return {
        "seconds": round(seconds, 2),
        "peak_rss_mb": round(int(rss[1]) / 1024, 1) if rss else None,
        "optimal": doc["optimal"]["node"] if doc.get("optimal") else None,
        "value": doc["optimal"]["value"] if doc.get("optimal") else None,
        "minimal": len(doc["minimal"]) if doc.get("minimal") is not None else None,
        "nodes_evaluated": doc["nodes_evaluated"],
        "nodes_bounded": doc.get("nodes_bounded"),
        **{k: work[k] for k in ("node_queries", "size_queries", "test_queries", "streamed", "node_query_seconds")},
        **({"batched": work["batched"]} if "batched" in work else {}),
    }


def release(config: Path, env: dict[str, str], rows: int, backend: str) -> dict[str, Any]:
    """``veil init`` + ``veil release --json`` of ``config`` from scratch in fresh interpreters: the release's
    wall time, peak RSS and what it published."""
    fresh_release(backend, rows)
    command = ["/usr/bin/time", "-v", PY, "-c", RUN_CLI]
    environ = {**os.environ, **env}
    subprocess.run(
        [PY, "-c", RUN_CLI, "init", "--config", str(config)],
        check=True,
        capture_output=True,
        cwd=config.parent,
        env=environ,
    )
    started = time.perf_counter()
    proc = subprocess.run(
        [*command, "release", "--json", "--config", str(config)],
        capture_output=True,
        text=True,
        cwd=config.parent,
        env=environ,
    )
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-600:])
    doc = json.loads(proc.stdout[proc.stdout.index('{"status"') :])
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    return {
        "release_seconds": round(seconds, 2),
        "release_peak_rss_mb": round(int(rss[1]) / 1024, 1) if rss else None,
        "release_node": doc["node"],
        "rows_published": doc["rows_published"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the earlier commit (anything git rev-parse accepts)")
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--sets", nargs="+", default=["entropy", "closeness"], choices=list(SETS))
    parser.add_argument("--release", action="store_true", help="also time `veil release` of each set's config")
    parser.add_argument("--backend", default="duckdb", choices=["duckdb", "postgresql"])
    parser.add_argument("--repeat", type=int, default=1, help="interleaved rounds of each set (before, after, ...)")
    parser.add_argument("--strategy", default="optimal", choices=["optimal", "incognito"])
    args = parser.parse_args()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", args.before], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp, earlier_code(commit) as before_env:
        if args.backend == "postgresql":
            postgres_table(args.rows)
        floor = round(floor_seconds(args.backend, args.rows)[0], 3)
        out: dict[str, Any] = {
            "rows": args.rows,
            "backend": args.backend,
            "before": commit,
            "strategy": args.strategy,
            "floor_seconds": floor,
            "runs": [],
        }
        for name in args.sets:
            config = Path(tmp) / name / "veil.toml"
            shutil.copytree(config_dir(args.backend, args.rows, SETS[name]), config.parent)
            sides = ((f"before ({commit})", before_env), ("after", {})) * args.repeat
            for code, env in sides:
                run = {"models": name, "code": code, **search(config, env, args.strategy)}
                run["ratio_to_floor"] = round(run["seconds"] / floor, 1)
                if args.release:
                    run.update(release(config, env, args.rows, args.backend))
                    run["release_to_search"] = round(run["release_seconds"] / run["seconds"], 2)
                out["runs"].append(run)
                print(json.dumps(run), flush=True)
    suffix = (
        ("" if args.strategy == "optimal" else f"-{args.strategy}")
        + ("-release" if args.release else "")
        + ("-postgresql" if args.backend == "postgresql" else "")
    )
    path = RESULTS / f"scale-ab-{commit}-{args.rows}{suffix}.json"
    path.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(path)


if __name__ == "__main__":
    main()
