"""A model of the cohort series over years (not Veil's code: docs/series.md §9): 100,000 people in 438 blocks of
lognormal sizes, 14 sensitive values skewed per block, k = 10 and entropy l = 3, 0.1% of the people replaced
each night, coins of probability 1/2 — the rules of ``veil.release.cohorts`` on lists instead of tables, so that
five years run in minutes.  Prints stale (stand-ins), withheld (waiting) and the joiners' delay per year.

Variants (none is Veil's yet): ``--subst`` — a joiner whose published row (block and value) equals a stand-in's
takes it over, so nothing published changes; ``--mult M`` — a joiners' cohort needs M*k rows; ``--escalate D`` —
a joiner waiting D nights moves to a pool of 8 blocks (published one level coarser), after 2D nights to the top;
``--blocks B`` / ``--values V`` — B blocks (a coarser or finer node), V values a block's rows take (28: the census's
published (occupation, income) pairs, with which the first year matches Veil's measured year); ``--sizes FILE:NODE``
— the blocks of a census node instead of lognormal ones (``bench/results/census_block_sizes.json``, keyed by node).

    python bench/series_model.py --nights 1825 [--subst] [--escalate 7] [--mult 2] [--blocks 438] [--values 14]
"""

import argparse
import random
import math
import collections
import json

ap = argparse.ArgumentParser()
ap.add_argument("--churn", type=float, default=0.001)
ap.add_argument("--nights", type=int, default=1825)
ap.add_argument("--subst", action="store_true")
ap.add_argument("--mult", type=float, default=1.0)
ap.add_argument("--escalate", type=int, default=0)
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--blocks", type=int, default=438)
ap.add_argument("--values", type=int, default=14)
ap.add_argument("--sizes", default=None, help="FILE:NODE — the blocks of a census node (census_block_sizes.json)")
a = ap.parse_args()
R = random.Random(a.seed)
sizes = None
if a.sizes:
    file, node = a.sizes.rsplit(":", 1)
    with open(file) as f:
        sizes = json.load(f)[node]
N, BLOCKS, VALUES, K, L = 100_000, len(sizes) if sizes else a.blocks, a.values, 10, 3
bw = list(sizes) if sizes else [math.exp(R.gauss(0, 1.2)) for _ in range(BLOCKS)]
vw = [[math.exp(R.gauss(0, 1.0)) for _ in range(VALUES)] for _ in range(BLOCKS)]


def draw():
    b = R.choices(range(BLOCKS), bw)[0]
    return b, R.choices(range(VALUES), vw[b])[0]


def passes(vals, size=K):
    c = collections.Counter(vals)
    n = sum(c.values())
    if n < size:
        return False
    return -sum(x / n * math.log(x / n) for x in c.values()) >= math.log(L)


def pool_of(b, level):  # level 0: the block, 1: 8 blocks, 2: everything
    return (0, b) if level == 0 else (1, b // 8) if level == 1 else (2, 0)


people = {}
cohorts = {}
nextp = 0
nextc = 0
waiting = collections.defaultdict(set)  # pool -> pids
standins = collections.defaultdict(list)  # (pool, value) -> cohort ids


def new_cohort(pool, pids):
    global nextc
    cohorts[nextc] = {"pool": pool, "live": set(pids), "gone": []}
    for p in pids:
        people[p]["st"] = "pub"
        people[p]["c"] = nextc
    nextc += 1


byb = collections.defaultdict(list)
for _ in range(N):
    b, v = draw()
    people[nextp] = {"b": b, "v": v, "st": "wait", "c": None, "j": 0, "pool": (0, b)}
    byb[b].append(nextp)
    nextp += 1
for b, ps in byb.items():
    if passes([people[p]["v"] for p in ps]):
        new_cohort((0, b), ps)
    else:
        waiting[(0, b)].update(ps)
delays = []
out = []
for night in range(1, a.nights + 1):
    nch = int(N * a.churn)
    for p in R.sample(list(people), nch):
        d = people.pop(p)
        if d["st"] == "wait":
            waiting[d["pool"]].discard(p)
        else:
            co = cohorts[d["c"]]
            co["live"].discard(p)
            co["gone"].append(d["v"])
            standins[(co["pool"], d["v"])].append(d["c"])
    for _ in range(nch):
        b, v = draw()
        p = nextp
        nextp += 1
        people[p] = {"b": b, "v": v, "st": "wait", "c": None, "j": night, "pool": (0, b)}
        if a.subst:
            for lvl in (0, 1, 2) if a.escalate else (0,):
                key = (pool_of(b, lvl), v)
                if standins.get(key):
                    c = standins[key].pop(R.randrange(len(standins[key])))
                    cohorts[c]["gone"].remove(v)
                    cohorts[c]["live"].add(p)
                    people[p].update(st="pub", c=c)
                    delays.append(0)
                    break
        if people[p]["st"] == "wait":
            waiting[(0, b)].add(p)
    if a.escalate:
        for pool in list(waiting):
            if pool[0] == 2:
                continue
            for p in list(waiting[pool]):
                if night - people[p]["j"] >= a.escalate * (pool[0] + 1):
                    waiting[pool].discard(p)
                    np_ = pool_of(people[p]["b"], pool[0] + 1)
                    people[p]["pool"] = np_
                    waiting[np_].add(p)
    for pool in list(waiting):
        ps = waiting[pool]
        need = K * a.mult
        if len(ps) >= need and passes([people[p]["v"] for p in ps], need) and R.random() < 0.5:
            for p in ps:
                delays.append(night - people[p]["j"])
            new_cohort(pool, list(ps))
            waiting[pool] = set()
    for cid in list(cohorts):
        co = cohorts[cid]
        if not co["gone"]:
            continue
        lv = [people[p]["v"] for p in co["live"]]
        if not lv or (len(co["gone"]) >= K and len(lv) >= K and passes(co["gone"]) and passes(lv) and R.random() < 0.5):
            for v in co["gone"]:
                standins[(co["pool"], v)].remove(cid)
            co["gone"] = []
            if not lv:
                del cohorts[cid]
    if night % 365 == 0 or night in (30, 90, 180):
        stale = sum(len(c["gone"]) for c in cohorts.values())
        w = sum(len(s) for s in waiting.values())
        coarse = sum(len(c["live"]) + len(c["gone"]) for c in cohorts.values() if c["pool"][0] > 0)
        ds = sorted(delays)

        def q(f: float, ds: list[int] = ds) -> int | None:
            return ds[min(len(ds) - 1, int(f * len(ds)))] if ds else None

        print(
            f"night {night}: stale {stale / N:.2%} withheld {w / N:.2%} coarse rows {coarse / N:.2%} "
            f"cohorts {len(cohorts)} delay (last year) med {q(0.5)} p95 {q(0.95)} max {ds[-1] if ds else None}",
            flush=True,
        )
        delays = [] if night % 365 == 0 else delays
