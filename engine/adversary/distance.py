"""Attacks on diverse blocks: skewness and similarity (Li, Li & Venkatasubramanian, "t-Closeness: Privacy
Beyond k-Anonymity and l-Diversity", ICDE 2007, §3), proximity on numeric values (Li, Tao & Xiao,
"Preservation of Proximity Privacy in Publishing Numerical Sensitive Data", SIGMOD 2008: (ε,m)-anonymity's
ε-neighbourhood), and the beliefs of a realistic adversary (ε-privacy, Machanavajjhala, Gehrke & Götz,
VLDB 2009).

Similarity, Li et al.'s Table 4: the block {gastric ulcer, gastritis, stomach cancer} is 3-diverse, yet
every value is a stomach disease.  Proximity, Figure 1 of the proximity paper: in {490, 500, 510, 1000}
three of four salaries lie within 10 of 500.

>>> from veil.counts import NodeCounts, SensitiveDomain
>>> dom = SensitiveDomain("salary", np.array([490, 500, 510, 600, 700, 1000]), np.ones(6, dtype=np.int64),
...                       numeric=True)
>>> nc = NodeCounts.from_cells(("q",), (0,), [[0], [0], [0], [0], [1], [1]], [[0], [1], [2], [5], [3], [4]],
...                            np.ones(6), (2,), (dom,))
>>> windows(Histogram.of(nc, "salary"), 10.0, "absolute")[0].tolist()
[3, 1]
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from veil.adversary.adapters import emd_to_table, epsilon_beliefs, window_ranges
from veil.adversary.exposure import Exposure, Label, exposure, shown, values_text
from veil.adversary.histogram import Histogram
from veil.counts import NodeCounts
from veil.models.epsilon import EpsilonPrivacy


def skewness(
    counts: NodeCounts,
    h: Histogram,
    distance: str,
    hierarchy: Path | None,
    delimiter: str,
    t: float,
    worst: int,
    label: Label,
) -> Exposure:
    """Blocks whose distribution is farther than ``t`` (EMD) from the whole table's (skewness attack)."""
    emd = emd_to_table(counts, h.domain.name, distance, hierarchy, delimiter)
    values = h.domain.values
    return exposure(
        "skewness",
        h.domain.name,
        f"EMD ({distance} ground distance) of a block's distribution to the table's > t: the block "
        "shifts the adversary's belief far from the population's (Li et al. ICDE 2007, §3.1, Def. 2)",
        {"t": t, "distance": distance},
        "EMD to the table",
        score=emd,
        exposed=emd > t,
        sizes=h.sizes,
        worst=worst,
        label=label,
        describe=lambda b: f"EMD {emd[b]:.3g}; " + values_text(values, h.of_block(b)),
        extra={"max_emd": float(emd.max()) if len(emd) else None},
    )


def similarity(h: Histogram, group: np.ndarray, names: list[str], level: int, worst: int, label: Label) -> Exposure:
    """Blocks whose values all fall in one group of the sensitive hierarchy at ``level`` (similarity attack);
    ``group[v]`` is value ``v``'s group, ``names`` the groups' labels."""
    g = group[h.value]
    width = max(len(names), 1)
    pair, inverse = np.unique(h.block * width + g, return_inverse=True)
    per_group = np.bincount(inverse.reshape(-1), weights=h.count, minlength=len(pair))
    pair_block = pair // width
    groups = np.bincount(pair_block, minlength=h.n_blocks)
    top = np.zeros(h.n_blocks)
    np.maximum.at(top, pair_block, per_group)
    top_group = np.zeros(h.n_blocks, dtype=np.int64)
    order = np.lexsort((-per_group, pair_block))
    first = np.searchsorted(pair_block[order], np.arange(h.n_blocks))
    present = groups > 0
    top_group[present] = (pair % width)[order][first[present]]
    share = top / np.maximum(h.sizes, 1)
    one = groups == 1
    diverse = one & (h.distinct >= 2)
    values = h.domain.values
    return exposure(
        "similarity",
        h.domain.name,
        f"every value of a block lies in one group of the sensitive hierarchy (level {level}): the "
        "adversary learns the group, e.g. 'a stomach disease' (Li et al. ICDE 2007, §3.1)",
        {"level": level},
        "share of the largest group",
        score=share,
        exposed=one,
        sizes=h.sizes,
        worst=worst,
        label=label,
        describe=lambda b: (
            f"{share[b]:.3g} in {names[top_group[b]]!r} ({h.distinct[b]} distinct); "
            + values_text(values, h.of_block(b))
        ),
        extra={"diverse_blocks": int(diverse.sum()), "diverse_rows": int(h.sizes[diverse].sum())},
    )


def windows(h: Histogram, epsilon: float, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """Per block: the most rows within the ε-neighbourhood of one of its values (``[v-ε, v+ε]`` absolute,
    ``[v(1-ε), v(1+ε)]`` relative), and that value's index.  Sparse: entries keyed by (block, value rank) and
    two binary searches per entry over one cumulative sum."""
    left, right = window_ranges(h.domain, epsilon, mode)  # exact code ranges (codes are in value order)
    width = max(h.domain.size, 1)
    key = h.block * width + h.value
    by_key = np.argsort(key, kind="stable")
    keys, counts = key[by_key], h.count[by_key]
    cum = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum(counts, out=cum[1:])
    pos = h.value[by_key]
    block = h.block[by_key]
    x = (
        cum[np.searchsorted(keys, block * width + right[pos], side="left")]
        - cum[np.searchsorted(keys, block * width + left[pos], side="left")]
    )
    best = np.zeros(h.n_blocks, dtype=np.int64)
    np.maximum.at(best, block, x)
    at = np.full(h.n_blocks, -1, dtype=np.int64)
    winner = x == best[block]
    at[block[winner][::-1]] = h.value[by_key][winner][::-1]  # the smallest such value
    return best, at


def proximity(h: Histogram, epsilon: float, mode: str, share: float, worst: int, label: Label) -> Exposure:
    """Blocks where at least ``share`` of the rows lie within ε of one value (a proximity breach)."""
    best, at = windows(h, epsilon, mode)
    ratio = best / np.maximum(h.sizes, 1)
    values = h.domain.values
    width = f"±{epsilon:g}" if mode == "absolute" else f"±{epsilon:.3g}×"
    return exposure(
        "proximity",
        h.domain.name,
        f"at least {share:g} of a block's rows lie in the ε-neighbourhood of one value ({mode} ε = "
        f"{epsilon:g}): the adversary learns the value up to ε (Li, Tao & Xiao SIGMOD 2008, (ε,m)-"
        "anonymity's neighbourhood)",
        {"epsilon": epsilon, "mode": mode, "share": share},
        "largest share within ε of one value",
        score=ratio,
        exposed=ratio >= share - 1e-9,
        sizes=h.sizes,
        worst=worst,
        label=label,
        describe=lambda b: f"{best[b]} of {h.sizes[b]} within {width} of {shown(values[at[b]])}",
    )


def beliefs(model: EpsilonPrivacy, counts: NodeCounts, h: Histogram, worst: int, label: Label) -> Exposure:
    """Per block, the smallest ε for which it is ε-private against the adversary, and p_in / p_out at the
    value whose belief grows most; exposed: blocks above the model's ε."""
    b = epsilon_beliefs(model, counts)
    values = h.domain.values

    def text(k: int) -> str:
        level = "∞" if not np.isfinite(b.level[k]) else f"{b.level[k]:.4g}"
        return f"ε ≥ {level}: p_in({shown(values[b.value[k]])}) = {b.p_in[k]:.3g}, p_out = {b.p_out[k]:.3g}"

    return exposure(
        "epsilon-privacy",
        h.domain.name,
        f"belief of a realistic adversary with the individual in (p_in) and out (p_out) of the table; "
        f"a block breaches when p_in/p_out or (1-p_out)/(1-p_in) can exceed ε = {model.epsilon:g} "
        f"(Machanavajjhala, Gehrke & Götz VLDB 2009, Def. 4; {model.describe()})",
        {"epsilon": model.epsilon, "adversary": model.adversary},
        "smallest ε the block satisfies",
        score=b.level,
        exposed=b.level > model.epsilon * (1 + 1e-9),
        sizes=h.sizes,
        worst=worst,
        label=label,
        describe=text,
        extra={"max_level": float(b.level.max()) if len(b.level) and np.isfinite(b.level.max()) else None},
    )
