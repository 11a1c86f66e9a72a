"""Start-up (issue 36): process start to output of ``import veil.cli``, ``veil --help`` and ``veil search --json``
(Adult, 9 quasi-identifiers with ARX's hierarchies, k = 5, optimal, DuckDB), before and after one change, in one
run: fresh processes interleaved (before, after, before, after…) under ``/usr/bin/time`` (wall and peak RSS),
medians and after/before ratios from the same run; and where a search's process time goes (``-X importtime``
per package, the search's own seconds from its JSON).

The *after* side is a snapshot of this checkout's ``engine/``; the *before* side is the same snapshot with the
change's files (``--files``, default ``CHANGE``) as they are at ``--before`` (default ``HEAD``), or with
``--patch`` (a unified diff of the change, paths ``a/engine/...``) reversed when others' uncommitted work shares
those files — either way the rest of the tree is the same on both sides.  Each side is imported first through ``PYTHONPATH`` (``veil`` → the snapshot,
its ``migrations`` and ``sql`` → this checkout's) and run as ``python -c "from veil.cli import main; main()"``
with this checkout's ``.venv``.  Two bytecode modes: ``env`` as this environment runs Python (with
``PYTHONDONTWRITEBYTECODE=1`` every process compiles Veil's modules again; an installed wheel has them
compiled) and ``cached`` (``PYTHONPYCACHEPREFIX`` in a temporary folder, warmed once per side).  ``-X importtime``
does not list a module imported through ``importlib.import_module`` (only its imports): SQLAlchemy loads
duckdb_engine that way when it finds the dialect by entry point, so a side doing so shows ~20 ms less import.

    .venv/bin/python bench/bench_startup.py [--repeat 5] [--before HEAD] [--files engine/cli.py ...]
    .venv/bin/python bench/bench_startup.py --patch bench/.work/startup.patch   # the change, reversed

Results: bench/results/startup.json."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import ADULT_QIS, ROOT, adult_config, duckdb_file, load_adult_duckdb, save

PY = str(Path(sys.executable))
RUN_CLI = "from veil.cli import main; main()"
CHANGE = [
    "engine/cli.py",
    "engine/backends/duckdb.py",
    "engine/queries/__init__.py",
    "engine/release/__init__.py",
    "engine/release/cohort_series.py",
]
MODELS = '[[models]]\ntype = "k-anonymity"\nk = 5\n'
GROUPS = {
    "veil": ("veil",),
    "sqlalchemy": ("sqlalchemy",),
    "numpy": ("numpy",),
    "duckdb": ("duckdb", "_duckdb", "duckdb_engine"),
    "typer+click": ("typer", "click", "shellingham"),
}
_IMPORT = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)\s*$", re.MULTILINE)


def snapshot(where: Path, ref: str | None, files: list[str], patch: Path | None = None) -> Path:
    """A package folder whose ``veil`` is a copy of this checkout's ``engine/``: ``files`` as at ``ref``, or
    ``patch`` reversed."""
    engine = where / "veil"
    shutil.copytree(ROOT / "engine", engine, ignore=shutil.ignore_patterns("__pycache__"))
    if patch is not None:
        subprocess.run(["patch", "-R", "-p2", "-s", "-d", str(engine)], input=patch.read_bytes(), check=True)
    for path in files if ref is not None and patch is None else []:
        target = engine / Path(path).relative_to("engine")
        shown = subprocess.run(["git", "show", f"{ref}:{path}"], cwd=ROOT, capture_output=True)
        if shown.returncode == 0:
            target.write_bytes(shown.stdout)
        else:  # new in this change
            target.unlink(missing_ok=True)
    for sub in ("migrations", "sql"):  # as pyproject.toml installs them: veil.migrations, veil.sql
        (engine / sub).symlink_to(ROOT / sub)
    return where


def environment(package: Path, mode: str, cache: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(package)}
    if mode == "cached":
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(cache)
    return env


def timed(
    args: list[str], env: dict[str, str], cwd: Path
) -> tuple[float, float, float, subprocess.CompletedProcess[str]]:
    """Wall seconds (start to exit), CPU seconds (user + system, all threads) and peak RSS (MiB) of one fresh
    process.  On a shared machine the CPU seconds drift less than the wall."""
    started = time.perf_counter()
    proc = subprocess.run(
        ["/usr/bin/time", "-f", "VEIL-TIME %e %M %U %S", *args], capture_output=True, text=True, env=env, cwd=cwd
    )
    wall = time.perf_counter() - started
    line = [x for x in proc.stderr.splitlines() if x.startswith("VEIL-TIME ")][-1].split()
    return wall, float(line[3]) + float(line[4]), int(line[2]) / 1024, proc


def document(stdout: str) -> dict[str, Any]:
    # ``python -c`` has no ``__main__.__file__``: DuckDB may draw its progress bar on stdout before the JSON
    return json.loads(stdout[stdout.index('{"status"') :])


def commands(config: Path) -> dict[str, list[str]]:
    return {
        "import veil.cli": [PY, "-c", "import veil.cli"],
        "veil --help": [PY, "-c", RUN_CLI, "--help"],
        "veil search --json": [PY, "-c", RUN_CLI, "search", "--config", str(config), "--json"],
    }


def imports(args: list[str], env: dict[str, str], cwd: Path) -> dict[str, float]:
    """Milliseconds of imports under ``-X importtime``: the total and each package group's own time."""
    proc = subprocess.run([args[0], "-X", "importtime", *args[1:]], capture_output=True, text=True, env=env, cwd=cwd)
    rows = [(int(m[1]), int(m[2]), len(m[3]) - 1, m[4]) for m in _IMPORT.finditer(proc.stderr)]
    out = {"total": sum(c for _, c, depth, _ in rows if depth == 0) / 1000}
    for group, roots in GROUPS.items():
        out[group] = sum(s for s, _, _, name in rows if name.split(".")[0] in roots) / 1000
    out["other"] = out["total"] - sum(out[g] for g in GROUPS)
    return out


def median(values: list[float], digits: int = 3) -> float:
    return round(statistics.median(values), digits)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="interleaved rounds (medians over them)")
    ap.add_argument("--before", default="HEAD", help="where the change's files come from on the before side")
    ap.add_argument("--files", nargs="+", default=CHANGE, help="the change's files (paths in this checkout)")
    ap.add_argument("--patch", type=Path, help="the change as a unified diff: the before side reverses it")
    ap.add_argument("--modes", nargs="+", default=["env", "cached"], choices=["env", "cached"])
    ap.add_argument("--save", default="startup", help="results file name in bench/results")
    args = ap.parse_args()
    duck = duckdb_file("startup_adult")
    if not duck.exists():
        load_adult_duckdb(duck)
    config = adult_config("duckdb", duck, ADULT_QIS, [], MODELS, '\n[search]\nstrategy = "optimal"\n')
    ref = subprocess.run(
        ["git", "rev-parse", "--short", args.before], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()
    label = f"before ({ref})" if args.patch is None else f"before ({args.patch.name} reversed)"
    runs: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    floors: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sides = {
            label: snapshot(work / "before", ref, args.files, args.patch),
            "after": snapshot(work / "after", None, []),
        }
        envs = {
            (s, m): environment(p, m, work / f"pycache-{i}")
            for i, (s, p) in enumerate(sides.items())
            for m in args.modes
        }
        for env in envs.values():  # warm the bytecode caches, and DuckDB's file
            subprocess.run(commands(config)["veil search --json"], env=env, cwd=work, capture_output=True, check=True)
        for _ in range(args.repeat):
            floors.append(timed([PY, "-c", "pass"], dict(os.environ), work)[0])
            for (side, mode), env in envs.items():
                for name, command in commands(config).items():
                    wall, cpu, rss, proc = timed(command, env, work)
                    if proc.returncode != 0:
                        raise RuntimeError(f"{side} {mode} {name}: {proc.stderr[-800:]}")
                    run: dict[str, Any] = {"seconds": wall, "cpu_seconds": cpu, "peak_rss_mb": rss}
                    if name == "veil search --json":
                        doc = document(proc.stdout)
                        run.update(
                            search_seconds=doc["seconds"],
                            prepare_seconds=doc["work"]["prepare_seconds"],
                            optimal=doc["optimal"]["node"],
                            value=doc["optimal"]["value"],
                            nodes_evaluated=doc["nodes_evaluated"],
                        )
                    runs.setdefault((side, mode, name), []).append(run)
                for name in ("import veil.cli", "veil search --json"):
                    runs.setdefault((side, mode, f"imports of {name}"), []).append(
                        imports(commands(config)[name], env, work)
                    )
    results: list[dict[str, Any]] = []
    for (side, mode, name), rs in runs.items():
        row: dict[str, Any] = {"code": side, "bytecode": mode, "command": name, "runs": len(rs)}
        if name.startswith("imports of "):
            row["import_ms"] = {k: median([r[k] for r in rs], 1) for k in rs[0]}
        else:
            row["seconds"] = median([r["seconds"] for r in rs])
            row["cpu_seconds"] = median([r["cpu_seconds"] for r in rs], 2)
            row["peak_rss_mb"] = median([r["peak_rss_mb"] for r in rs], 1)
            if "search_seconds" in rs[0]:
                row["search_seconds"] = median([r["search_seconds"] for r in rs])
                row["prepare_seconds"] = median([r["prepare_seconds"] for r in rs])
                row["outside_search_seconds"] = median(
                    [r["seconds"] - r["search_seconds"] - r["prepare_seconds"] for r in rs]
                )
                row["optimal"], row["value"] = rs[0]["optimal"], rs[0]["value"]
                row["nodes_evaluated"] = rs[0]["nodes_evaluated"]
                assert all(r["optimal"] == row["optimal"] and r["value"] == row["value"] for r in rs)
        results.append(row)
    ratios = []
    for row in results:
        if row["code"] == "after" and "seconds" in row:
            before = next(
                r
                for r in results
                if r["code"] != "after" and r["bytecode"] == row["bytecode"] and r["command"] == row["command"]
            )
            ratio = {
                "bytecode": row["bytecode"],
                "command": row["command"],
                "after_to_before": round(row["seconds"] / before["seconds"], 3),
                "saved_seconds": round(before["seconds"] - row["seconds"], 3),
                "cpu_after_to_before": round(row["cpu_seconds"] / before["cpu_seconds"], 3)
                if before["cpu_seconds"]
                else None,
            }
            if "outside_search_seconds" in row:
                ratio["outside_search_saved_seconds"] = round(
                    before["outside_search_seconds"] - row["outside_search_seconds"], 3
                )
            ratios.append(ratio)
    change = (
        args.files
        if args.patch is None
        else sorted(set(re.findall(r"^\+\+\+ b/(\S+)", args.patch.read_text(), re.MULTILINE)))
    )
    out = {
        "issue": 36,
        "data": "Adult (30,162 rows), 9 QIs, k = 5, optimal, DuckDB",
        "head": ref,
        "before": label,
        "change": change,
        "repeat": args.repeat,
        "python": sys.version.split()[0],
        "env_PYTHONDONTWRITEBYTECODE": os.environ.get("PYTHONDONTWRITEBYTECODE"),
        "load_average": os.getloadavg(),
        "interpreter_floor_seconds": median(floors),
        "note": "seconds: wall from start to exit; outside_search_seconds: that minus the search's and the "
        "prepare step's own seconds (its JSON); import_ms: -X importtime self times per package (the "
        "total is the top-level imports' cumulative), inflated by -X importtime itself and blind to "
        "importlib.import_module (duckdb_engine through an entry point on a side without the dialect "
        "registered)",
        "results": results,
        "ratios": ratios,
    }
    print(json.dumps(ratios, indent=1))
    print(save(args.save, out))


if __name__ == "__main__":
    main()
