"""The series' plan looking further ahead (docs/series.md §2b): what ``veil.release.seriesplan`` itself predicts
for the census of docs/series.md §8 when its horizon is one, two or three years.

No release runs: the plan's model is asked, for a table of ``--rows`` rows whose first version formed one cohort
per block of a node of ``--first-blocks`` equal blocks (the census's series node: 73), at 0.1% and 1% churn, which
cohort size it would choose on nodes of 8 to 219 blocks and what share of the table it predicts withheld or
standing in at worst — and, on the series' node, how the stand-ins it predicts grow over a year with each cohort
size.  Results: bench/results/plan_horizon.json.

    .venv/bin/python bench/plan_horizon.py
"""

from __future__ import annotations

import argparse
from typing import Any

from common import save

from veil.release.seriesplan import GRID, Outlook

BLOCKS = (8, 15, 30, 48, 73, 100, 219)
HORIZONS = (365, 730, 1095)
RATES = {"0.1%": 0.0005, "1%": 0.005}  # joiners per row per night: half of the rows that change


def choices(rows: int, first: int, batch: int) -> dict[str, Any]:
    """Per churn and horizon: per node size, the plan's cohort size and its predicted worst share."""
    formed = {(rows // first, 0): first}
    return {
        churn: {
            str(h): {str(b): Outlook(rows, rate, batch, formed, horizon=h).cohort(b, batch) for b in BLOCKS}
            for h in HORIZONS
        }
        for churn, rate in RATES.items()
    }


def trajectory(rows: int, first: int, batch: int) -> dict[str, Any]:
    """On the series' node, at 0.1% churn over a year: withheld and the stand-ins at each eighth, per cohort size."""
    outlook = Outlook(rows, RATES["0.1%"], batch, {(rows // first, 0): first})
    out: dict[str, Any] = {"nights": [round(float(t), 1) for t in outlook.points()]}
    for m in sorted({g * batch for g in GRID}):
        withheld, standing = outlook.held(first, m)
        out[str(m)] = {
            "withheld_pct": round(100 * withheld / rows, 2),
            "standing_pct": [round(100 * float(s) / rows, 2) for s in standing],
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--first-blocks", type=int, default=73, help="blocks of the series' node, each one cohort")
    ap.add_argument("--batch", type=int, default=10)
    args = ap.parse_args()
    result = {
        "args": vars(args),
        "choices": choices(args.rows, args.first_blocks, args.batch),
        "trajectory_0.1%": trajectory(args.rows, args.first_blocks, args.batch),
    }
    for churn, by_horizon in result["choices"].items():
        for h, by_blocks in by_horizon.items():
            line = ", ".join(f"{b}: {m} → {100 * s:.2f}%" for b, (m, s) in by_blocks.items())
            print(f"{churn} churn, {h} nights — blocks: cohort → worst share: {line}")
    nights = result["trajectory_0.1%"].pop("nights")
    print(f"0.1% churn, {args.first_blocks} blocks, stand-ins at nights {nights}:")
    for m, row in result["trajectory_0.1%"].items():
        print(f"  cohorts of {m}: {row['withheld_pct']}% withheld, {row['standing_pct']}% standing in")
    result["trajectory_0.1%"]["nights"] = nights
    print(save("plan_horizon", result))


if __name__ == "__main__":
    main()
