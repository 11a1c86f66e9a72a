"""Every node of the census lattice by its blocks, and what a series' largest block can be off by (docs/series.md
§9.5, "Why no block stays within a few k").

Runs on a ``veil demo`` folder's config (the census, 100,000 rows): for each of the lattice's nodes its number of
blocks, smallest and largest block and Σ size² (the warehouse's size histogram, ``Warehouse.sizes``), written to
``bench/results/census_nodes.json``; then, among the nodes whose blocks all hold at least ``--floor`` rows (the
joiners' delay bound's, docs/series.md §2a), the smallest largest block; and for a block of that size the arithmetic
of its first year's gap with joiners' cohorts of ``m`` people (``gap``).

    .venv/bin/veil demo --dir /tmp/demo -q && .venv/bin/python bench/census_nodes.py /tmp/demo/veil.toml
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

from veil import config as cfg
from veil.run import open_run

OUT = Path(__file__).parent / "results" / "census_nodes.json"


def nodes(config_path: str) -> dict[str, list[int]]:
    """Per node ("0,1,2,2,3,5"): [blocks, smallest block, largest block, Σ size²]."""
    out: dict[str, list[int]] = {}
    with open_run(cfg.load(config_path)) as (_config, wh):
        for node in itertools.product(*(range(h + 1) for h in wh.heights)):
            h = wh.sizes(node)
            out[",".join(map(str, node))] = [int(h.blocks.sum()), int(h.sizes.min()), int(h.sizes.max()), h.squares]
    return out


def gap(rows: int, m: int, nights: int, churn: float = 0.001, batch: int = 10) -> tuple[float, float, float]:
    """A block of ``rows`` rows whose joiners enter in cohorts of ``m`` people, at night ``nights``: the rows standing
    in (each cohort holds its leavers until ``batch`` of them may leave with ``batch`` people still there: docs/series.md
    §9.5's first bullet), the rows waiting at most (a cohort's worth), and the largest gap over the cycle of a cohort
    (published − true: stand-ins minus the rows waiting).  Half the churn joins and half leaves, so a person stays
    ``2 / churn`` nights and the block receives ``rows · churn / 2`` joiners a night.

    >>> standing, waiting, worst = gap(10283, 10, 365)
    >>> round(standing), waiting, round(worst)
    (171, 10.0, 171)
    """
    stay, joiners = 2 / churn, rows * churn / 2
    every, standing, age = m / joiners, 0.0, 0.0
    while age <= nights:
        left = m * age / stay
        shed = m >= 2 * batch and left >= batch and m - left >= batch
        standing += left % batch if shed else left
        age += every
    return standing, float(m), max(standing, m - standing)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("config", help="a veil demo folder's veil.toml")
    ap.add_argument("--floor", type=int, default=222, help="every block at least this many rows")
    ap.add_argument("--nights", type=int, default=365)
    a = ap.parse_args()
    found = nodes(a.config)
    OUT.write_text(json.dumps(found))
    fit = sorted((v[2], k, v) for k, v in found.items() if v[1] >= a.floor)
    print(f"{len(found)} nodes; {len(fit)} with every block of at least {a.floor} rows; the smallest largest blocks:")
    for largest, node, (blocks, smallest, _, _) in fit[:3]:
        print(f"  [{node}] {blocks} blocks of {smallest} to {largest} rows")
    largest = fit[0][0]
    print(f"a block of {largest:,} rows at night {a.nights}: joiners' cohorts of m people")
    for m in (10, 20, 55, 80, 110, 150, 200, 300):
        standing, waiting, worst = gap(largest, m, a.nights)
        print(
            f"  m = {m:3d}: standing in {standing:5.0f}, waiting up to {waiting:3.0f}, off by up to {worst:4.0f} rows"
        )


if __name__ == "__main__":
    main()
