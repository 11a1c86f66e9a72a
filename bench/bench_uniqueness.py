"""The population-uniqueness estimators against the truth (issue 38): a known population — UCI Adult's 30,162
records on the quasi-identifiers age, sex, race, marital-status and education — sampled without replacement at
1%, 10% and 50%, each estimate (Pitman, Zayatz, SNB, Dankar et al.'s rule) compared with the population's true
number of uniques and with how many of the sample's uniques truly are population uniques.

    .venv/bin/python bench/bench_uniqueness.py [--replicates 20] [--arx /tmp/arx]

``--arx DIR``: also run ARX's own estimators (``org.deidentifier.arx.risk``, compiled in DIR with the small
harness of docs/reidentification.md) on the same histograms, for the column "ARX".  Writes
bench/results/uniqueness_simulation.json; docs/reidentification.md shows the table.
"""

from __future__ import annotations

import argparse
import csv
import math
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import SHARED, save  # noqa: E402

from veil.reidentification.classes import ClassSizes  # noqa: E402
from veil.reidentification.snb import snb  # noqa: E402
from veil.reidentification.uniqueness import population_uniqueness  # noqa: E402

QIS = ("age", "sex", "race", "marital-status", "education")
FRACTIONS = (0.01, 0.1, 0.5)


def population() -> np.ndarray:
    """Each Adult record's class id on ``QIS``."""
    with (SHARED / "adult" / "adult.csv").open(newline="") as fh:
        keys = [tuple(r[q] for q in QIS) for r in csv.DictReader(fh, delimiter=";")]
    _, ids = np.unique(np.asarray(keys, dtype=object).astype(str), axis=0, return_inverse=True)
    return ids.reshape(-1)


def arx_estimates(arx: Path, lines: list[str]) -> list[list[str]]:
    jars = ":".join(str(p) for p in (arx / "lib").rglob("*.jar"))
    out = subprocess.run(
        ["java", "-cp", f"{arx / 'out'}:{jars}", "org.deidentifier.arx.risk.Harness"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [line.split() for line in out.splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--replicates", type=int, default=20)
    parser.add_argument("--seed", type=int, default=38)
    parser.add_argument("--arx", type=Path, default=None)
    args = parser.parse_args()
    ids = population()
    big = len(ids)
    pop_sizes = np.bincount(ids)
    true_uniques = int((pop_sizes == 1).sum())
    rng = np.random.default_rng(args.seed)
    runs = []
    for fraction in FRACTIONS:
        n = round(big * fraction)
        for r in range(args.replicates):
            sample = rng.choice(big, size=n, replace=False)
            counts = np.bincount(ids[sample], minlength=len(pop_sizes))
            classes = ClassSizes.of(counts[counts > 0])
            unique_in_sample = counts == 1
            truly = int((unique_in_sample & (pop_sizes == 1)).sum())
            est = population_uniqueness(classes, big)
            runs.append(
                {
                    "fraction": fraction,
                    "replicate": r,
                    "records": n,
                    "sample_uniques": classes.of_size(1),
                    "sample_uniques_that_are_population_uniques": truly,
                    "pitman": est.pitman,
                    "zayatz": est.zayatz,
                    "snb": est.snb,
                    "snb_arx_variant": _none(snb(classes, big, "arx")),
                    "dankar": est.dankar,
                    "dankar_model": est.dankar_model,
                    "histogram": classes.document(),
                }
            )
    if args.arx is not None:
        lines = [f"{big} " + " ".join(f"{s}:{c}" for s, c in run["histogram"]) for run in runs]
        for run, row in zip(runs, arx_estimates(args.arx, lines)):
            run["arx"] = {
                "pitman": float(row[0]),
                "zayatz": float(row[1]),
                "snb": float(row[2]),
                "dankar": float(row[3]),
                "dankar_model": row[4].lower(),
            }
    table = []
    for fraction in FRACTIONS:
        mine = [r for r in runs if r["fraction"] == fraction]
        row = {
            "fraction": fraction,
            "records": mine[0]["records"],
            "replicates": len(mine),
            "true_population_uniques": true_uniques,
            "sample_uniques": _mean([r["sample_uniques"] for r in mine]),
            "sample_uniques_that_are_population_uniques": _mean(
                [r["sample_uniques_that_are_population_uniques"] for r in mine]
            ),
        }
        for model in ("pitman", "zayatz", "snb", "snb_arx_variant", "dankar"):
            values = [r[model] for r in mine if r[model] is not None]
            row[model] = {
                "mean": _mean(values),
                "available": len(values),
                "mean_relative_error": _mean([(v - true_uniques) / true_uniques for v in values]),
            }
        row["dankar_models"] = sorted({r["dankar_model"] for r in mine})
        if args.arx is not None:
            for model in ("pitman", "zayatz", "snb", "dankar"):
                pairs = [(r[model], r["arx"][model]) for r in mine if r[model] is not None and r["arx"][model]]
                row[f"arx_{model}_max_relative_difference"] = max((abs(a - b) / abs(b) for a, b in pairs), default=None)
                row[f"arx_{model}_available"] = sum(1 for r in mine if r["arx"][model])
        table.append(row)
    path = save(
        "uniqueness_simulation",
        {
            "population": f"UCI Adult ({big} records)",
            "quasi_identifiers": QIS,
            "population_classes": int(len(pop_sizes)),
            "true_population_uniques": true_uniques,
            "seed": args.seed,
            "table": table,
            "runs": runs,
        },
    )
    print(f"population: {big} records, {len(pop_sizes)} classes, {true_uniques} uniques")
    print("fraction | sample uniques | truly unique | Pitman | Zayatz | SNB | SNB (ARX eq.) | Dankar (model)")
    for row in table:
        print(
            f"{row['fraction']:>8} | {row['sample_uniques']:>14.1f} | "
            f"{row['sample_uniques_that_are_population_uniques']:>12.1f} | "
            + " | ".join(_fmt(row[m]) for m in ("pitman", "zayatz", "snb", "snb_arx_variant", "dankar"))
            + f" ({', '.join(row['dankar_models'])})"
        )
    print(f"wrote {path}")


def _none(v: float) -> float | None:
    return None if math.isnan(v) or v == 0 else v


def _mean(values: list[float]) -> float | None:
    return float(np.mean(values)) if values else None


def _fmt(cell: dict) -> str:
    if cell["mean"] is None:
        return "n/a"
    return f"{cell['mean']:.0f} ({cell['available']})"


if __name__ == "__main__":
    main()
