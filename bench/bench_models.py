"""Benchmark of the privacy-model checkers (engine/models) — a script, never part of the test run.

Three workloads (checkers read sparse per-block histograms, ``BlockCounts``; their build from the cells is
timed separately, and ``check()`` with them already built):

1. synthetic: 1,000,000 q*-blocks (2 QIs × 1000 codes each, hierarchies of height 3) × 50 numeric sensitive
   values (plus a 4-valued second sensitive attribute for multi-attribute l-diversity), random counts from a
   fixed seed;
2. sparse: 1,000,000 q*-blocks of ~12 cells over an income-like numeric attribute with ~20,000 distinct
   values (log-normal incomes rounded to 10), the case dense blocks × values matrices could not hold
   (1M × 20k int64 = 160 GB): t-closeness ordered / equal / hierarchical (income bands), the l-diversity
   family, (ε,m), (δ,l), ε-privacy, and (n,t)-closeness (its verdicts; its achieved level, which needs every
   node above for every small block, only up to 200,000 blocks);
3. Adult (UCI, 45,222 rows, ``adult_clean.csv``): QIs age, sex, race, marital-status, education, native-country
   at the bottom node (9,880 blocks) and at the generalized node (3,0,1,1,3,2) of ARX's hierarchies (20 blocks,
   where the levels are not all 1); sensitive occupation and income (categorical) and hours-per-week (numeric,
   for the ordered distance and the proximity models); ARX's hierarchies for (n,t) and the hierarchical EMD.
   pycanon (dev-only) is timed on the same rows (QIs replaced by their generalized labels) for the measures it
   has, and its values are compared with ours.

Usage::

    .venv/bin/python bench/bench_models.py                      # all workloads, writes bench/results/models.json
    .venv/bin/python bench/bench_models.py --blocks 100000 --skip-pycanon   # quicker
    .venv/bin/python bench/bench_models.py --skip-synthetic --skip-adult    # only the sparse income workload
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from veil.counts import NodeCounts, SensitiveDomain  # noqa: E402
from veil.hierarchy import CsvSpec, Hierarchy, ValueKind, build  # noqa: E402
from veil.models import (  # noqa: E402
    DeltaLDiversity,
    DistinctLDiversity,
    EMAnonymity,
    EntropyLDiversity,
    EpsilonPrivacy,
    FrequencyLDiversity,
    KAnonymity,
    MultiAttributeLDiversity,
    NpdRecursiveCLDiversity,
    NTCloseness,
    PdRecursiveCLDiversity,
    RecursiveCLDiversity,
    TCloseness,
)

ADULT = Path("/work/shared/data/adult_from_pypi/adult_clean.csv")
ARX = Path("/work/shared/data/adult")
ADULT_QIS = ["age", "sex", "race", "marital-status", "education", "native-country"]
# age in 20-year bands, sex, marital status in 2 groups (ARX hierarchies), the rest suppressed: 20 blocks
GENERALIZED = (3, 0, 1, 1, 3, 2)


def timed(fn: Callable[[], Any], repeats: int, before: Callable[[], None] | None = None) -> tuple[list[float], Any]:
    times, out = [], None
    for _ in range(repeats):
        if before is not None:
            before()
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return times, out


def summary(times: list[float]) -> dict[str, float]:
    return {"min_s": min(times), "median_s": statistics.median(times), "runs": len(times)}


def level(v: Any) -> float | None:
    return None if v is None else float(v)


# --- synthetic ------------------------------------------------------------------------------------------


def synthetic(n_blocks: int, n_values: int, per_block: int, seed: int, tmp: Path) -> tuple[NodeCounts, dict]:
    rng = np.random.default_rng(seed)
    side = int(round(math.sqrt(n_blocks)))
    n_blocks = side * side
    block = np.repeat(np.arange(n_blocks, dtype=np.int64), per_block)
    weights = 1.0 / np.arange(1, n_values + 1) ** 0.8
    s = rng.choice(n_values, size=len(block), p=weights / weights.sum())
    t = rng.integers(0, 4, size=len(block))
    count = rng.integers(1, 21, size=len(block))
    qi = np.column_stack([block // side, block % side])
    values = np.arange(1, n_values + 1) * 1000
    dom_s = SensitiveDomain(
        "s", values, np.bincount(s, weights=count, minlength=n_values).astype(np.int64), numeric=True
    )
    dom_t = SensitiveDomain(
        "t", np.array(["a", "b", "c", "d"], dtype=object), np.bincount(t, weights=count, minlength=4).astype(np.int64)
    )

    def chain(name: str) -> Hierarchy:
        leaves = tuple(range(side))
        return Hierarchy(
            name,
            leaves,
            (tuple(f"{v // 10}" for v in leaves), tuple(f"{v // 100}" for v in leaves), tuple("*" for _ in leaves)),
        )

    gens = (chain("zip"), chain("age"))
    nc = NodeCounts.from_cells(
        ("zip", "age"), (0, 0), qi, np.column_stack([s, t]), count, (side, side), (dom_s, dom_t), generalizers=gens
    )
    csv = tmp / "s_taxonomy.csv"
    csv.write_text("".join(f"{v};g{v // 5000};h{v // 25000};*\n" for v in values.tolist()))
    info = {
        "blocks": n_blocks,
        "values": n_values,
        "cells": int(len(block)),
        "rows": int(count.sum()),
        "cells_per_block": per_block,
        "seed": seed,
        "hierarchy_heights": [3, 3],
    }
    return nc, {"info": info, "taxonomy": str(csv), "first_value": str(values[0])}


def synthetic_models(extra: dict) -> list[tuple[str, Any]]:
    a = "s"
    return [
        ("k-anonymity (k=50)", KAnonymity(k=50)),
        ("distinct-l (l=5)", DistinctLDiversity(l=5, attribute=a)),
        ("frequency-l (l=3)", FrequencyLDiversity(l=3, attribute=a)),
        ("entropy-l (l=3)", EntropyLDiversity(l=3, attribute=a)),
        ("recursive (c=3,l=3)", RecursiveCLDiversity(c=3, l=3, attribute=a)),
        (
            "pd-recursive (c=3,l=3,|Y|=1)",
            PdRecursiveCLDiversity(c=3, l=3, allowed=(extra["first_value"],), attribute=a),
        ),
        (
            "npd-recursive (c1=3,c2=1,l=3)",
            NpdRecursiveCLDiversity(c1=3, c2=1, l=3, allowed=(), protected=(extra["first_value"],), attribute=a),
        ),
        ("multi-attribute entropy (l=2)", MultiAttributeLDiversity(instantiation="entropy", l=2)),
        ("t-closeness equal (t=0.3)", TCloseness(t=0.3, distance="equal", attribute=a)),
        ("t-closeness ordered (t=0.3)", TCloseness(t=0.3, distance="ordered", attribute=a)),
        (
            "t-closeness hierarchical (t=0.3)",
            TCloseness(t=0.3, distance="hierarchical", attribute=a, hierarchy=extra["taxonomy"]),
        ),
        ("(n,t)-closeness equal (n=200,t=0.3)", NTCloseness(n=200, t=0.3, distance="equal", attribute=a)),
        ("(eps,m)-anonymity (eps=2000,m=2)", EMAnonymity(epsilon=2000, m=2, attribute=a)),
        ("(eps,m)-anonymity relative (eps=0.1,m=2)", EMAnonymity(epsilon=0.1, m=2, mode="relative", attribute=a)),
        ("(delta,l)-diversity (delta=1000,l=2)", DeltaLDiversity(delta=1000, l=2, attribute=a)),
        (
            "eps-privacy I (table, sigma=1000)",
            EpsilonPrivacy(epsilon=3, adversary="I", prior="table", stubbornness=1000, attribute=a),
        ),
        ("eps-privacy II (sigma=1000)", EpsilonPrivacy(epsilon=3, adversary="II", stubbornness=1000, attribute=a)),
        ("eps-privacy III (uniform)", EpsilonPrivacy(epsilon=3, adversary="III", prior="uniform", attribute=a)),
        ("eps-privacy IV", EpsilonPrivacy(epsilon=3, adversary="IV", attribute=a)),
    ]


def sparse_income(n_blocks: int, n_values: int, per_block: int, seed: int, tmp: Path) -> tuple[NodeCounts, dict]:
    """Income-like values (log-normal, rounded to 10, ``n_values`` distinct), ``per_block`` cells per block."""
    rng = np.random.default_rng(seed)
    side = int(round(math.sqrt(n_blocks)))
    n_blocks = side * side
    draws = np.unique(np.round(rng.lognormal(10.5, 0.8, size=4 * n_values), -1).astype(np.int64))
    values = np.sort(rng.choice(draws, size=min(n_values, len(draws)), replace=False))
    block = np.repeat(np.arange(n_blocks, dtype=np.int64), per_block)
    weights = np.exp(-0.5 * ((np.log(values) - 10.5) / 0.8) ** 2)
    s = rng.choice(len(values), size=len(block), p=weights / weights.sum())
    count = rng.integers(1, 9, size=len(block))
    order = np.lexsort((s, block))  # the warehouse returns cells ordered by (block, value)
    block, s, count = block[order], s[order], count[order]
    dom = SensitiveDomain(
        "income", values, np.bincount(s, weights=count, minlength=len(values)).astype(np.int64), numeric=True
    )

    def chain(name: str) -> Hierarchy:
        leaves = tuple(range(side))
        return Hierarchy(
            name,
            leaves,
            (tuple(f"{v // 10}" for v in leaves), tuple(f"{v // 100}" for v in leaves), tuple("*" for _ in leaves)),
        )

    nc = NodeCounts.from_cells(
        ("zip", "age"),
        (0, 0),
        np.column_stack([block // side, block % side]),
        s[:, None],
        count,
        (side, side),
        (dom,),
        generalizers=(chain("zip"), chain("age")),
    )
    csv = tmp / "income_bands.csv"
    csv.write_text("".join(f"{v};{v // 5000 * 5000};{v // 50000 * 50000}\n" for v in values.tolist()))
    info = {
        "blocks": n_blocks,
        "values": int(len(values)),
        "cells": int(len(block)),
        "rows": int(count.sum()),
        "cells_per_block": per_block,
        "seed": seed,
    }
    return nc, {"info": info, "bands": str(csv)}


def sparse_models(extra: dict) -> list[tuple[str, Any]]:
    a = "income"
    return [
        ("t-closeness ordered (t=0.3)", TCloseness(t=0.3, distance="ordered", attribute=a)),
        ("t-closeness equal (t=0.9)", TCloseness(t=0.9, distance="equal", attribute=a)),
        (
            "t-closeness hierarchical bands (t=0.5)",
            TCloseness(t=0.5, distance="hierarchical", attribute=a, hierarchy=extra["bands"]),
        ),
        ("distinct-l (l=5)", DistinctLDiversity(l=5, attribute=a)),
        ("frequency-l (l=3)", FrequencyLDiversity(l=3, attribute=a)),
        ("entropy-l (l=3)", EntropyLDiversity(l=3, attribute=a)),
        ("recursive (c=3,l=3)", RecursiveCLDiversity(c=3, l=3, attribute=a)),
        ("(eps,m)-anonymity (eps=2000,m=2)", EMAnonymity(epsilon=2000, m=2, attribute=a)),
        ("(eps,m)-anonymity relative (eps=0.05,m=2)", EMAnonymity(epsilon=0.05, m=2, mode="relative", attribute=a)),
        ("(delta,l)-diversity (delta=1000,l=2)", DeltaLDiversity(delta=1000, l=2, attribute=a)),
        (
            "eps-privacy I (table, sigma=1000)",
            EpsilonPrivacy(epsilon=3, adversary="I", prior="table", stubbornness=1000, attribute=a),
        ),
        ("eps-privacy III (uniform)", EpsilonPrivacy(epsilon=3, adversary="III", prior="uniform", attribute=a)),
        ("(n,t)-closeness ordered (n=100,t=0.2)", NTCloseness(n=100, t=0.2, distance="ordered", attribute=a)),
    ]


def run_models(nc: NodeCounts, models: list[tuple[str, Any]], repeats: int, nt_achieved: bool = True) -> list[dict]:
    """``check()`` per model with the histograms built; (n,t)'s lazily computed achieved level (every node above)
    timed on top when ``nt_achieved``."""
    rows = []
    for name, model in models:
        needs_sub = isinstance(model, MultiAttributeLDiversity)

        def fresh() -> None:
            nc._cache.clear()  # a new n(E,s) matrix: no cached sorts / proportions
            for d in nc.sensitive:
                nc.blocks(d.name)
                if needs_sub:
                    nc.sub_blocks(d.name)
            if hasattr(model, "_cache"):
                model._cache.clear()  # hierarchies are read again
            if hasattr(model, "validate"):
                model.validate({d.name: d for d in nc.sensitive})

        times, verdict = timed(lambda: model.check(nc), repeats, fresh)
        row = {
            "model": name,
            "check": summary(times),
            "failing_blocks": int((~verdict.passed).sum()),
            "blocks": int(len(verdict.passed)),
        }
        if isinstance(model, NTCloseness) and nt_achieved:
            t_ach, ach = timed(lambda: model.check(nc).achieved, 1, fresh)
            row["check_plus_achieved"] = summary(t_ach)
            row["achieved"] = level(ach)
        elif isinstance(model, NTCloseness):
            row["achieved"] = "not computed"
        else:
            row["achieved"] = level(verdict.achieved)
        rows.append(row)
        print(
            f"  {name:44s} {row['check']['min_s']:8.3f} s   failing {row['failing_blocks']:>9,}   "
            f"achieved {row['achieved']}",
            flush=True,
        )
    return rows


# --- Adult ------------------------------------------------------------------------------------------------


def adult_counts(df, sensitive: list[str], numeric: set[str], gens: list[Hierarchy]) -> NodeCounts:  # noqa: ANN001
    import pandas as pd

    qcodes = []
    for q, h in zip(ADULT_QIS, gens):
        index = {leaf: i for i, leaf in enumerate(h.leaves)}
        qcodes.append(df[q].map(index).to_numpy(dtype=np.int64))
    doms, scodes = [], []
    for s in sensitive:
        codes, uniq = pd.factorize(df[s], sort=True)
        vals = np.asarray(uniq.tolist()) if s in numeric else np.asarray(uniq.tolist(), dtype=object)
        doms.append(SensitiveDomain(s, vals, np.bincount(codes, minlength=len(uniq)), numeric=s in numeric))
        scodes.append(codes)
    cols = [f"c{i}" for i in range(len(qcodes) + len(scodes))]
    frame = pd.DataFrame(np.column_stack(qcodes + scodes), columns=cols)
    grouped = frame.groupby(cols, sort=False).size().reset_index(name="n")
    cells = grouped.to_numpy()
    d = len(ADULT_QIS)
    return NodeCounts.from_cells(
        tuple(ADULT_QIS),
        (0,) * d,
        cells[:, :d],
        cells[:, d:-1],
        cells[:, -1],
        tuple(h.cardinality(0) for h in gens),
        tuple(doms),
        generalizers=tuple(gens),
    )


def adult_models(nc_cat: NodeCounts, nc_num: NodeCounts) -> list[tuple[str, Any, NodeCounts, str | None]]:
    occ_h = str(ARX / "adult_hierarchy_occupation.csv")
    o, h = "occupation", "hours-per-week"
    return [
        ("k-anonymity (k=5)", KAnonymity(k=5), nc_cat, "k"),
        ("distinct-l occupation (l=2)", DistinctLDiversity(l=2, attribute=o), nc_cat, "l_distinct"),
        ("frequency-l occupation (l=2)", FrequencyLDiversity(l=2, attribute=o), nc_cat, None),
        ("entropy-l occupation (l=2)", EntropyLDiversity(l=2, attribute=o), nc_cat, "l_entropy"),
        ("recursive occupation (c=3,l=2)", RecursiveCLDiversity(c=3, l=2, attribute=o), nc_cat, None),
        (
            "pd-recursive occupation (c=3,l=2)",
            PdRecursiveCLDiversity(c=3, l=2, allowed=("Prof-specialty",), attribute=o),
            nc_cat,
            None,
        ),
        (
            "npd-recursive occupation (c1=3,c2=5,l=2)",
            NpdRecursiveCLDiversity(c1=3, c2=5, l=2, allowed=(), protected=("Sales",), attribute=o),
            nc_cat,
            None,
        ),
        (
            "multi-attribute distinct occ+income (l=2)",
            MultiAttributeLDiversity(instantiation="distinct", l=2),
            nc_cat,
            "multi_distinct",
        ),
        (
            "multi-attribute entropy occ+income (l=2)",
            MultiAttributeLDiversity(instantiation="entropy", l=2),
            nc_cat,
            "multi_entropy",
        ),
        ("t-closeness equal occupation (t=0.3)", TCloseness(t=0.3, distance="equal", attribute=o), nc_cat, "t_equal"),
        (
            "t-closeness hierarchical occupation (t=0.3)",
            TCloseness(t=0.3, distance="hierarchical", attribute=o, hierarchy=occ_h),
            nc_cat,
            None,
        ),
        (
            "t-closeness ordered hours-per-week (t=0.3)",
            TCloseness(t=0.3, distance="ordered", attribute=h),
            nc_num,
            "t_ordered",
        ),
        (
            "(n,t)-closeness equal occupation (n=50,t=0.3)",
            NTCloseness(n=50, t=0.3, distance="equal", attribute=o),
            nc_cat,
            None,
        ),
        ("(eps,m)-anonymity hours (eps=5,m=2)", EMAnonymity(epsilon=5, m=2, attribute=h), nc_num, None),
        ("(delta,l)-diversity hours (delta=2,l=2)", DeltaLDiversity(delta=2, l=2, attribute=h), nc_num, None),
        (
            "eps-privacy I occupation (table, sigma=1000)",
            EpsilonPrivacy(epsilon=3, adversary="I", prior="table", stubbornness=1000, attribute=o),
            nc_cat,
            None,
        ),
        (
            "eps-privacy II occupation (sigma=1000)",
            EpsilonPrivacy(epsilon=3, adversary="II", stubbornness=1000, attribute=o),
            nc_cat,
            None,
        ),
        (
            "eps-privacy III occupation (uniform)",
            EpsilonPrivacy(epsilon=3, adversary="III", prior="uniform", attribute=o),
            nc_cat,
            None,
        ),
    ]


def adult(repeats: int, skip_pycanon: bool, nodes: list[tuple[int, ...]]) -> dict:
    import pandas as pd

    df = pd.read_csv(ADULT)
    gens = [
        build(
            CsvSpec(ARX / f"adult_hierarchy_{q}.csv"),
            q,
            df[q].unique().tolist(),
            ValueKind.INTEGER if q == "age" else ValueKind.TEXT,
        )
        for q in ADULT_QIS
    ]
    t_cat, bottom_cat = timed(lambda: adult_counts(df, ["occupation", "income"], set(), gens), repeats)
    t_num, bottom_num = timed(lambda: adult_counts(df, ["hours-per-week"], {"hours-per-week"}, gens), repeats)
    out: dict[str, Any] = {
        "rows": int(len(df)),
        "qis": ADULT_QIS,
        "bottom_counts_build_s": {"occupation+income": summary(t_cat), "hours-per-week": summary(t_num)},
        "nodes": [],
    }
    for node in nodes:
        if any(node):
            t_up, nc_cat = timed(lambda: bottom_cat.rollup(node), repeats)
            _, nc_num = timed(lambda: bottom_num.rollup(node), 1)
            build_cat, build_num = min(t_cat) + min(t_up), min(t_num) + min(t_up)
            how = "group-by of the rows at the bottom node, rolled up"
        else:
            nc_cat, nc_num, build_cat, build_num = bottom_cat, bottom_num, min(t_cat), min(t_num)
            how = "pandas group-by of the rows"
        print(
            f"Adult node {node}: {len(df):,} rows, {nc_cat.n_blocks:,} blocks; counts in {build_cat:.3f} s ({how})",
            flush=True,
        )
        rows = []
        for name, model, nc, key in adult_models(nc_cat, nc_num):
            sub = run_models(nc, [(name, model)], repeats)[0]
            sub["pycanon_measure"] = key
            sub["counts_build_s"] = build_cat if nc is nc_cat else build_num
            rows.append(sub)
        entry = {"node": list(node), "blocks": int(nc_cat.n_blocks), "counts": how, "models": rows}
        if not skip_pycanon:
            entry["pycanon"] = pycanon_adult(generalize(df, gens, node), rows)
        out["nodes"].append(entry)
    return out


def generalize(df, gens: list[Hierarchy], node: tuple[int, ...]):  # noqa: ANN001, ANN201
    """The rows with each QI replaced by its label at the node's level (what pycanon sees)."""
    data = df[ADULT_QIS + ["occupation", "income", "hours-per-week"]].reset_index(drop=True).copy()
    for q, h, lv in zip(ADULT_QIS, gens, node):
        if lv:
            labels = {leaf: h.domain(lv)[h.codes(lv)[i]] for i, leaf in enumerate(h.leaves)}
            data[q] = data[q].map(labels)
    return data


def pycanon_adult(data, rows: list[dict]) -> dict:  # noqa: ANN001
    from pycanon import anonymity as pa

    q = ADULT_QIS
    measures = {
        "k": lambda: pa.k_anonymity(data, q),
        "l_distinct": lambda: pa.l_diversity(data, q, ["occupation"]),
        "l_entropy": lambda: pa.entropy_l_diversity(data, q, ["occupation"]),
        "multi_distinct": lambda: pa.l_diversity(data, q, ["occupation", "income"], gen=False),
        "multi_entropy": lambda: pa.entropy_l_diversity(data, q, ["occupation", "income"], gen=False),
        "t_equal": lambda: pa.t_closeness(data, q, ["occupation"]),
        "t_ordered": lambda: pa.t_closeness(data, q, ["hours-per-week"]),
    }
    out = {}
    by_key = {r["pycanon_measure"]: r for r in rows if r["pycanon_measure"]}
    for key, fn in measures.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            times, value = timed(fn, 1)
        ours = by_key[key]["achieved"]
        if key in ("l_entropy", "multi_entropy"):
            agree = ours is not None and (
                int(value) == math.floor(ours + 1e-9) or int(value) == math.floor(ours - 1e-9)
            )
        else:
            agree = ours is not None and abs(float(value) - ours) <= 1e-9
        out[key] = {
            "seconds": times[0],
            "value": float(value),
            "ours": ours,
            "agree": bool(agree),
            "ours_check_s": by_key[key]["check"]["min_s"],
            "ours_with_counts_s": by_key[key]["check"]["min_s"] + by_key[key]["counts_build_s"],
        }
        print(
            f"  pycanon {key:16s} {times[0]:9.3f} s  value {float(value):.6g}  ours {ours}  agree {agree}", flush=True
        )
    return out


def print_tables(result: dict) -> None:
    for key in ("synthetic", "sparse"):
        if key not in result:
            continue
        info = result[key]["info"]
        print(
            f"\n== {key}: {info['blocks']:,} blocks x {info['values']:,} values, {info['cells']:,} cells "
            f"(min of {result[key]['models'][0]['check']['runs']} runs) =="
        )
        print(f"{'model':46s} {'check s':>9s} {'ns/block':>9s} {'failing':>10s}  achieved")
        for r in result[key]["models"]:
            extra = (
                f"  (check + achieved: {r['check_plus_achieved']['min_s']:.3f} s)" if "check_plus_achieved" in r else ""
            )
            print(
                f"{r['model']:46s} {r['check']['min_s']:9.3f} {1e9 * r['check']['min_s'] / r['blocks']:9.1f} "
                f"{r['failing_blocks']:>10,}  {r['achieved']}{extra}"
            )
    for entry in result.get("adult", {}).get("nodes", []):
        print(f"\n== Adult node {tuple(entry['node'])}: {entry['blocks']:,} blocks ==")
        print(f"{'model':46s} {'check s':>9s} {'failing':>8s}  achieved")
        for r in entry["models"]:
            print(f"{r['model']:46s} {r['check']['min_s']:9.4f} {r['failing_blocks']:>8,}  {r['achieved']}")
        if "pycanon" in entry:
            print(
                f"\n{'measure':16s} {'pycanon s':>10s} {'ours check s':>13s} {'ours+counts s':>14s} {'speed-up':>9s}"
                f"  {'pycanon':>9s} {'ours':>9s} agree"
            )
            for key, r in entry["pycanon"].items():
                print(
                    f"{key:16s} {r['seconds']:10.3f} {r['ours_check_s']:13.5f} {r['ours_with_counts_s']:14.5f} "
                    f"{r['seconds'] / r['ours_with_counts_s']:8.0f}x  {r['value']:9.6g} {r['ours']:9.6g} {r['agree']}"
                )


def workload(
    name: str,
    make: Callable[[], tuple[NodeCounts, dict]],
    attribute: str,
    models: Callable[[dict], list[tuple[str, Any]]],
    repeats: int,
    nt_achieved: bool = True,
) -> dict:
    """Build one synthetic workload, time its sparse histograms and every model's ``check()``."""
    t0 = time.perf_counter()
    nc, extra = make()
    gen_s = time.perf_counter() - t0
    t_blocks, _ = timed(lambda: nc.blocks(attribute), repeats, nc._cache.clear)
    info = extra["info"]
    print(
        f"{name}: {info['blocks']:,} blocks x {info['values']:,} values, {info['cells']:,} cells, {info['rows']:,} "
        f"rows (built in {gen_s:.1f} s; sparse n(E,s) from the cells {min(t_blocks):.3f} s)",
        flush=True,
    )
    rows = run_models(nc, models(extra), repeats, nt_achieved=nt_achieved)
    return {"info": {**info, "generate_s": gen_s, "blocks_sparse": summary(t_blocks)}, "models": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--blocks", type=int, default=1_000_000)
    ap.add_argument("--values", type=int, default=50)
    ap.add_argument("--cells-per-block", type=int, default=12)
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sparse-values", type=int, default=20000)
    ap.add_argument("--skip-synthetic", action="store_true")
    ap.add_argument("--skip-sparse", action="store_true")
    ap.add_argument("--skip-adult", action="store_true")
    ap.add_argument("--skip-pycanon", action="store_true")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "models.json")
    args = ap.parse_args()
    result: dict[str, Any] = {
        "command": " ".join([Path(sys.executable).name] + sys.argv),
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
    }
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_synthetic:
            result["synthetic"] = workload(
                "synthetic",
                lambda: synthetic(args.blocks, args.values, args.cells_per_block, args.seed, Path(tmp)),
                "s",
                synthetic_models,
                args.repeats,
            )
        if not args.skip_sparse:
            result["sparse"] = workload(
                "sparse",
                lambda: sparse_income(args.blocks, args.sparse_values, args.cells_per_block, args.seed, Path(tmp)),
                "income",
                sparse_models,
                args.repeats,
                nt_achieved=args.blocks <= 200_000,
            )
        if not args.skip_adult:
            if ADULT.exists():
                nodes = [(0,) * len(ADULT_QIS), GENERALIZED]
                result["adult"] = adult(max(args.repeats, 3), args.skip_pycanon, nodes)
            else:
                print(f"Adult: {ADULT} not found, skipped")
    print_tables(result)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
