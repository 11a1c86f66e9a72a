"""The attacks of Machanavajjhala, Kifer, Gehrke & Venkitasubramaniam, "l-Diversity: Privacy Beyond
k-Anonymity" (ICDE 2006): homogeneity (§1.1, Observation 1), background knowledge (§1.1, §4.1: an adversary
rules out up to l-1 values), and the Bayes-optimal posterior (§3, Theorem 3.1) with its positive (Def. 3.1)
and negative (Def. 3.2) disclosures.  Sparse: every measure reads ``Histogram`` entries, vectorized.

Worked example, the paper's Figure 2 (4-anonymous): blocks {heart ×2, viral ×2}, {cancer, heart, viral ×2},
{cancer ×4}.  Homogeneity exposes the third block (Bob has cancer): 4 rows.  An adversary who can rule out one
value (l = 2) also reveals every row of the first block (Umeko: not heart disease, so viral infection): 8
rows; the second block's most frequent value needs 2 eliminations.  Under a uniform prior the posterior of
the third block's cancer is 1 (prior 1/3); the first block rules out cancer for its 4 rows (negative
disclosure).

>>> from veil.counts import NodeCounts, SensitiveDomain
>>> dom = SensitiveDomain("condition", np.array(["cancer", "heart", "viral"], dtype=object), np.array([5, 3, 4]))
>>> nc = NodeCounts.from_cells(("q",), (0,), [[0], [0], [1], [1], [1], [2]], [[1], [2], [0], [1], [2], [0]],
...                            np.array([2, 2, 1, 1, 2, 4]), (3,), (dom,))
>>> h = Histogram.of(nc, "condition")
>>> eliminations(h, share=1.0).tolist()
[1, 1, 2, 2, 2, 0]
>>> top_eliminations(h, share=1.0).tolist()
[1, 2, 0]
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from veil.adversary.exposure import Exposure, Label, exposure, values_text
from veil.adversary.histogram import Histogram

SLACK = 1e-9


def eliminations(h: Histogram, share: float) -> np.ndarray:
    """Per entry (value v in block E): the fewest values the adversary must rule out of E so that v holds at
    least ``share`` of the rows that remain (``share = 1``: v is all that remains).  Ruling out the most
    frequent other values first is optimal; found for all entries at once by binary search on the prefix
    sums of each block's descending counts."""
    n = h.sizes[h.block].astype(np.float64)
    c = h.count.astype(np.float64)
    need = n - c / share - SLACK * n  # rows of other values that must go
    g = h.cumulative
    offset = h.start[h.block]
    base = g[offset].astype(np.float64)
    above = (g[offset + h.rank] - g[offset]).astype(np.float64)  # the values ranked above v
    within = np.searchsorted(g, base + need, side="left") - offset  # j <= rank: top-j others
    beyond = np.searchsorted(g, base + need + c, side="left") - offset - 1  # j > rank: v itself skipped
    out = np.where(above >= need, within, beyond)
    return np.where(need <= 0, 0, out).astype(np.int64)


def top_eliminations(h: Histogram, share: float) -> np.ndarray:
    """Per block: the fewest eliminations that reveal its most frequent value."""
    j = eliminations(h, share)
    out = np.zeros(h.n_blocks, dtype=np.int64)
    first = h.rank == 0
    out[h.block[first]] = j[first]
    return out


def homogeneity(h: Histogram, share: float, worst: int, label: Label) -> tuple[Exposure, Exposure]:
    """Blocks with one sensitive value (the homogeneity attack), and blocks where one value holds at least
    ``share`` of the rows."""
    ratio = h.top / np.maximum(h.sizes, 1)
    describe = _top_text(h)
    exact = exposure(
        "homogeneity",
        h.domain.name,
        "a block with a single sensitive value reveals it for every "
        "row (Machanavajjhala et al. ICDE 2006, §1.1 homogeneity attack)",
        {},
        "share of the most frequent value",
        score=ratio,
        exposed=h.distinct == 1,
        sizes=h.sizes,
        worst=worst,
        describe=describe,
        label=label,
    )
    near = exposure(
        "near-homogeneity",
        h.domain.name,
        f"one value holds >= {share:g} of a block: the posterior of "
        "that value is at least the share (ibid., §4.1, lack of diversity, Eq. 3)",
        {"share": share},
        "share of the most frequent value",
        score=ratio,
        exposed=ratio >= share - SLACK,
        sizes=h.sizes,
        worst=worst,
        describe=describe,
        label=label,
    )
    return exact, near


def background(h: Histogram, l: int, share: float, worst: int, label: Label) -> Exposure:
    """Rows whose value is revealed (holds >= ``share`` of what remains) after the adversary rules out up to
    ``l - 1`` values of their block; per block the fewest eliminations revealing its most frequent value."""
    j = eliminations(h, share)
    hit = j <= l - 1
    rows = int(h.count[hit].sum())
    blocks_hit = np.zeros(h.n_blocks, dtype=bool)
    blocks_hit[h.block[hit]] = True
    top = top_eliminations(h, share)
    values = h.domain.values

    def describe(b: int) -> str:
        v = values[h.top_value[b]]
        return f"{v} revealed after ruling out {top[b]} value(s); {values_text(values, h.of_block(b))}"

    return exposure(
        "background-knowledge",
        h.domain.name,
        f"the adversary rules out up to l-1 = {l - 1} values (instance-level knowledge, e.g. 'Umeko does "
        f"not have heart disease'); a row is revealed when its value then holds >= {share:g} of what "
        "remains (Machanavajjhala et al. ICDE 2006, §1.1, §4.1)",
        {"l": l, "share": share},
        "eliminations revealing the most frequent value (fewer is worse)",
        score=top.astype(np.float64),
        exposed=blocks_hit,
        sizes=h.sizes,
        worst=worst,
        describe=describe,
        label=label,
        rows=rows,
        ascending=True,
    )


def posterior(h: Histogram, threshold: float, worst: int, label: Label) -> tuple[Exposure, Exposure]:
    """The Bayes-optimal posterior (ibid., Theorem 3.1) under a uniform prior ``1/|S|`` that does not tell a
    row from its block: ``β(s) = n(E,s)/n(E)``.  Positive disclosure (Def. 3.1): the most likely value has
    ``β >= threshold`` and above the prior; negative disclosure (Def. 3.2): a value of the table has ``β = 0``
    in the block (ruled out for every row of it)."""
    d = max(h.domain.size, 1)
    prior = 1.0 / d
    beta = h.top / np.maximum(h.sizes, 1)
    values = h.domain.values
    top_text = _top_text(h)
    positive = exposure(
        "positive-disclosure",
        h.domain.name,
        "posterior β(s) = n(E,s)/n(E) of the most likely value, uniform prior 1/|S|; disclosed when "
        f"β >= {threshold:g} > prior (Machanavajjhala et al. ICDE 2006, Theorem 3.1, Def. 3.1)",
        {"posterior": threshold, "prior": round(prior, 6)},
        "posterior of the most likely value",
        score=beta,
        exposed=(beta >= threshold - SLACK) & (beta > prior),
        sizes=h.sizes,
        worst=worst,
        describe=lambda b: f"β({values[h.top_value[b]]}) = {beta[b]:.3g}, prior {prior:.3g}; " + top_text(b),
        label=label,
    )
    missing = (d - h.distinct).astype(np.float64)

    def absent(b: int) -> str:
        have = {v for v, _ in h.of_block(b)}
        gone = [str(values[i]) for i in range(d) if i not in have]
        if not gone:
            return "every value of the table occurs in the block"
        return f"rules out {len(gone)} value(s): " + ", ".join(gone[:4]) + (", …" if len(gone) > 4 else "")

    negative = exposure(
        "negative-disclosure",
        h.domain.name,
        "values of the table absent from a block have posterior 0 for its rows: the adversary "
        "learns what they do not have (ibid., Def. 3.2; Umeko does not have cancer)",
        {},
        "values ruled out",
        score=missing,
        exposed=missing > 0,
        sizes=h.sizes,
        worst=worst,
        describe=absent,
        label=label,
    )
    return positive, negative


def _top_text(h: Histogram) -> Callable[[int], str]:
    values = h.domain.values
    return lambda b: f"{h.top[b]} of {h.sizes[b]}: " + values_text(values, h.of_block(b))
