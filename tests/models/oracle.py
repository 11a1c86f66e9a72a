"""Exact oracles: every model's block condition as docs/models.md §2-5 writes it, in integers and fractions,
on one block given as a dense list of counts.  Independent of the engine's formulas (no closed forms, no
sparse tricks): the property tests in test_exact.py compare the two on and around every boundary.

A parameter is the decimal it is written as: ``q(2.2) == Fraction(11, 5)``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from fractions import Fraction

Q = Fraction


def q(x) -> Fraction:  # noqa: ANN001
    """The rational a parameter denotes (ints exactly, floats by their shortest repr)."""
    if isinstance(x, Fraction):
        return x
    if isinstance(x, int):
        return Fraction(x)
    return Fraction(repr(float(x)))


def _present(counts: Sequence[int]) -> list[int]:
    return [int(c) for c in counts if c > 0]


def _ints(counts: Sequence[int]) -> list[int]:
    return [int(c) for c in counts]


def k_anonymity(counts: Sequence[int], k: int) -> bool:
    return sum(counts) >= k


def distinct(counts: Sequence[int], l) -> bool:  # noqa: ANN001
    return len(_present(counts)) >= q(l)


def frequency(counts: Sequence[int], l) -> bool:  # noqa: ANN001
    """``r1 / n <= 1/l``."""
    counts = _ints(counts)
    n = sum(counts)
    return max(counts) * q(l) <= n


def entropy(counts: Sequence[int], l) -> bool:  # noqa: ANN001
    """``-sum p ln p >= ln l``  ⇔  ``n^n · den^n >= num^n · prod c^c`` for ``l = num/den``."""
    lq = q(l)
    cs = _present(counts)
    n = sum(cs)
    rhs = lq.numerator**n
    for c in cs:
        rhs *= c**c
    return n**n * lq.denominator**n >= rhs


def recursive(counts: Sequence[int], c, l: int) -> bool:  # noqa: ANN001
    """``r1 < c · (rl + ... + rm)``; l = 1 always holds."""
    if l <= 1:
        return True
    r = sorted(_present(counts), reverse=True)
    return r[0] < q(c) * sum(r[l - 1 :])


def pd_recursive(counts: Sequence[int], c, l: int, allowed: set[int]) -> bool:  # noqa: ANN001
    """docs/models.md §2.3 read literally, for the first tie order (ties do not matter: test_ldiversity)."""
    counts = _ints(counts)
    if l <= 1:
        return True
    order = sorted([(n, i) for i, n in enumerate(counts) if n > 0], key=lambda t: -t[0])
    r = [n for n, _ in order]
    ys = [k for k, (_, i) in enumerate(order, start=1) if i not in allowed]
    if not ys:
        return True
    y = ys[0]
    ry = r[y - 1]
    if y <= l - 1:
        tail = sum(r[l - 1 :])
    else:
        tail = sum(r[l - 2 : y - 1]) + sum(r[y:])
    return ry < q(c) * tail


def npd_recursive(
    counts: Sequence[int],
    c1,
    c2,
    l: int,
    allowed: set[int],  # noqa: ANN001
    protected: set[int],
) -> bool:
    counts = _ints(counts)
    n = sum(counts)
    return pd_recursive(counts, c1, l, allowed) and all(100 * counts[w] >= q(c2) * n for w in protected)


def multi_attribute(joint, instantiation: str, l, c=None) -> bool:  # noqa: ANN001
    """``joint[s][w]``: counts over two sensitive attributes; each judged with the other in the key."""
    rows = [_ints(r) for r in joint]
    cols = [list(col) for col in zip(*rows)]

    def one(h: list[int]) -> bool:
        if instantiation == "distinct":
            return distinct(h, l)
        if instantiation == "frequency":
            return frequency(h, l)
        if instantiation == "entropy":
            return entropy(h, l)
        return recursive(h, c, int(l))

    subs = [col for col in cols if any(col)] + [row for row in rows if any(row)]
    return all(one(h) for h in subs)


# --- Earth Mover's Distances -------------------------------------------------------------------------------


def dist(counts: Sequence[int]) -> list[Fraction]:
    counts = _ints(counts)
    n = sum(counts)
    return [Q(c, n) for c in counts]


def emd_equal(p: Sequence[Fraction], r: Sequence[Fraction]) -> Fraction:
    return sum((abs(a - b) for a, b in zip(p, r)), Q(0)) / 2


def emd_ordered(p: Sequence[Fraction], r: Sequence[Fraction]) -> Fraction:
    m = len(p)
    if m <= 1:
        return Q(0)
    running, total = Q(0), Q(0)
    for a, b in zip(p, r):
        running += a - b
        total += abs(running)
    return total / (m - 1)


def emd_hierarchical(p: Sequence[Fraction], r: Sequence[Fraction], labels: Sequence[Sequence[str]]) -> Fraction:
    """The internal-node form: ``sum over internal N of level(N)/H · min(pos(N), neg(N))``; ``labels[i]`` are
    value i's level-1..L labels; a root is added above L when level L has several labels."""
    levels = len(labels[0])
    chain = [list(row) for row in labels]
    if len({row[-1] for row in chain}) > 1 or levels == 0:
        chain = [row + ["<root>"] for row in chain]
    height = len(chain[0])
    extra = {("leaf", i): a - b for i, (a, b) in enumerate(zip(p, r))}
    below = [("leaf", i) for i in range(len(p))]
    total = Q(0)
    for j in range(height):
        parent = {("leaf", i) if j == 0 else (j - 1, chain[i][j - 1]): (j, chain[i][j]) for i in range(len(p))}
        nodes: dict = {}
        for child in set(below):
            nodes.setdefault(parent[child], []).append(child)
        new_extra = {}
        for node, children in nodes.items():
            pos = sum((extra[ch] for ch in children if extra[ch] > 0), Q(0))
            neg = sum((-extra[ch] for ch in children if extra[ch] < 0), Q(0))
            total += Q(j + 1, height) * min(pos, neg)
            new_extra[node] = pos - neg
        extra, below = new_extra, list(nodes)
    return total


def t_closeness(counts: Sequence[int], table: Sequence[int], t, distance: str, labels=None) -> bool:  # noqa: ANN001
    p, r = dist(counts), dist(table)
    d = (
        emd_equal(p, r)
        if distance == "equal"
        else emd_ordered(p, r)
        if distance == "ordered"
        else emd_hierarchical(p, r, labels)
    )
    return d <= q(t)


# --- proximity ----------------------------------------------------------------------------------------------


def _within(u: Fraction, v: Fraction, eps: Fraction, relative: bool) -> bool:
    radius = abs(v) * eps if relative else eps
    return v - radius <= u <= v + radius


def em_anonymity(counts: Sequence[int], values: Sequence, eps, m, relative: bool = False) -> bool:  # noqa: ANN001
    counts = _ints(counts)
    vals = [q(v) for v in values]
    n = sum(counts)
    for i, c in enumerate(counts):
        if c:
            x = sum(cu for u, cu in zip(vals, counts) if _within(u, vals[i], q(eps), relative))
            if x * q(m) > n:
                return False
    return True


def delta_l(counts: Sequence[int], values: Sequence, delta, l) -> bool:  # noqa: ANN001
    return em_anonymity(counts, values, 2 * q(delta), l)


# --- ε-privacy (the conditions as written) ---------------------------------------------------------------------


def epsilon_privacy(
    counts: Sequence[int],
    eps,
    adversary: str,
    sigma: Sequence[Fraction],  # noqa: ANN001
    b: int = 0,
) -> bool:
    """``sigma``: σ(s) per value (class II: any, only their sum σ is read; class III: the shape)."""
    counts = _ints(counts)
    if adversary == "IV":
        return False
    e = q(eps)
    n = sum(counts)
    big_n = n - b
    if big_n <= 0:
        return False
    total = sum(sigma, Q(0))
    for s, c in enumerate(counts):
        if c == 0:
            continue
        x = Q(c, big_n)
        if adversary == "III":
            h = sigma[s] / total
            if not (x <= e * h and x <= 1 - (1 - h) / e):
                return False
            continue
        big_s = total + b
        delta = (e - 1) * big_n / big_s
        e1 = e * (1 - 1 / big_s)
        r1a = big_n >= big_s / (e - 1)
        if adversary == "II":
            r1, r2 = r1a, x <= 1 - 1 / (e1 + delta)
        else:
            k = (sigma[s] - 1) / big_s
            r1 = r1a or (delta < 1 and x <= e / (1 - delta) * k)
            r2 = x <= 1 - 1 / (e1 + delta) + k / (e1 + delta)
        if not (r1 and r2):
            return False
    return True


def sigma_of(
    adversary: str,
    prior,
    stubbornness,
    table: Sequence[int],  # noqa: ANN001
    names: Sequence[str],
) -> list[Fraction]:
    """σ(s) per value as the model denotes it."""
    v = len(table)
    if adversary in ("II", "IV"):
        return [q(stubbornness) / v if stubbornness is not None else Q(1)] * v
    if isinstance(prior, str):
        scale = q(stubbornness) if stubbornness is not None else Q(1)
        if prior == "table":
            return [scale * Q(t, sum(table)) for t in table]
        return [scale / v] * v
    named = dict(prior)
    return [q(named[name]) for name in names]


def tie_orders(counts: Sequence[int]) -> list[list[int]]:
    """Every descending order of the present values' indices (permuting within ties)."""
    groups = itertools.groupby(
        sorted([(n, i) for i, n in enumerate(counts) if n > 0], key=lambda t: -t[0]), key=lambda t: t[0]
    )
    tiers = [list(g) for _, g in groups]
    return [
        [i for tier in combo for _, i in tier]
        for combo in itertools.product(*[list(itertools.permutations(t)) for t in tiers])
    ]
