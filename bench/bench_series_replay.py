"""Nights of a ``bench_series.py`` run replayed side by side (docs/series.md §8): the warehouse files that run kept
(``--keep``) are each copied, given the next night's change (``bench_series.night``) and released
(``veil release --force``, a fresh process as every night of the run), alternately for ``--rounds`` rounds.  A
year's nights run one after another over many minutes of a machine whose speed drifts by a fifth or more in that
time; alternating the states measures what a night costs at each of them in the same minutes.  Results in
``bench/results/series_replay_<run's name>.json``: each release's wall seconds and peak RSS, the medians per state,
and each state's medians over the first's.

    .venv/bin/python bench/bench_series.py --nights 365 --series-delay 90 --keep 45,365
    .venv/bin/python bench/bench_series_replay.py bench/results/series_100000_365_delay90.json [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
from pathlib import Path
from typing import Any

from bench_series import night
from common import WORK, machine_facts, run_cli, save


def replay(state: str, config: Path, n: int, rows: int, change: float) -> tuple[float, float]:
    """Night ``n + 1`` on a copy of the warehouse file ``state`` (night ``n``'s): wall seconds and peak RSS."""
    copy = WORK / "series_replay.duckdb"
    shutil.copyfile(state, copy)
    text = config.read_text()
    url = next(line for line in text.splitlines() if line.startswith("url = "))
    run = WORK / "series_replay.toml"  # beside the run's config: its hierarchy files resolve the same
    run.write_text(text.replace(url, f'url = "duckdb:///{copy}"', 1))
    night(str(copy), rows, change, n + 1)
    wall, doc, code, rss = run_cli("release", "--config", str(run), "--force")
    if code != 0:
        raise SystemExit(f"night {n + 1} on {state} exited {code}: {doc.get('message')}")
    return round(wall, 2), rss


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("results", help="a bench_series.py results file whose run kept nights (--keep)")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    results = json.loads(Path(args.results).read_text())
    kept, run_args = results.get("kept") or {}, results["args"]
    states = {int(n): path for n, path in (kept.get("nights") or {}).items()}
    if len(states) < 2:
        raise SystemExit(f"{args.results} kept {len(states)} night(s); run bench_series.py with --keep N,N")
    runs: dict[int, list[tuple[float, float]]] = {n: [] for n in sorted(states)}
    for r in range(args.rounds):
        for n in sorted(states):
            wall, rss = replay(states[n], Path(kept["config"]), n, run_args["rows"], run_args["change"])
            runs[n].append((wall, rss))
            print(f"round {r + 1}: night {n + 1} after night {n}'s state: {wall} s, {rss} MiB", flush=True)
    first = min(runs)
    medians = {
        n: (round(statistics.median(w for w, _ in v), 2), round(statistics.median(m for _, m in v), 1))
        for n, v in runs.items()
    }
    out: dict[str, Any] = {
        "machine": machine_facts(),
        "results": args.results,
        "rounds": args.rounds,
        "runs": {n: [{"wall_s": w, "peak_rss_mib": m} for w, m in v] for n, v in runs.items()},
        "medians": {n: {"wall_s": w, "peak_rss_mib": m} for n, (w, m) in medians.items()},
        "over_first": {
            n: {"wall_s": round(w / medians[first][0], 2), "peak_rss_mib": round(m / medians[first][1], 2)}
            for n, (w, m) in medians.items()
        },
    }
    print(json.dumps(out["medians"]), json.dumps(out["over_first"]))
    print("wrote", save(f"series_replay_{Path(args.results).stem}", out))
    for name in ("series_replay.duckdb", "series_replay.duckdb.wal", "series_replay.toml"):
        (WORK / name).unlink(missing_ok=True)


if __name__ == "__main__":
    main()
