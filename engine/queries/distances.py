"""Every block's Earth Mover's Distance to the whole table's distribution ``P``, computed in the warehouse
(t-closeness's ``Reduction``, docs/models.md §3): the statements ``nodes.node_statistics`` reads for the tests
``("ordered", t)`` and ``("equal", t)``, and the two lookup tables of ``veil.distribution`` they join.

Per cell of a block (value position ``a``, count ``c``; ``n`` the block's rows, ``S`` its rows up to ``a``,
``b`` the next cell's position or ``m``), with ``N``, ``m``, ``I`` and ``G`` as in ``veil.distribution``:

- ordered: ``(m-1)·EMD = sum_i |F(i) - G(i)|``; scaled by ``n·N`` the run ``[a, b)`` where ``F = S/n`` adds
  ``S·N·(σ-a) - n·(I(σ)-I(a)) + n·(I(b)-I(σ)) - S·N·(b-σ)`` with ``σ`` the split where ``G`` reaches ``S/n``
  (``lo`` of bucket ``floor(S·B/n)``, clipped to the run), and the block adds ``n·I(a₀)`` before its first
  value.  A split at ``lo`` is off by at most ``cnt`` positions, each miscounted by less than ``2/B``: the
  statistic's error bound ``2·sum cnt / (B·(m-1))`` travels with it (``slack``);
- equal: ``n·N·EMD = sum over the block's values of max(0, c·N - R·n)``.

One window over the node's cells (partitioned by block, ordered by value) gives ``S``, ``n`` and ``b``;
two joins with tables of ``m + 1`` and ``B + 1`` rows give ``I`` and ``σ``.  Floating point adds at most a few
ulps per cell: a block within ``slack + tolerance·(cells + 8)`` of ``t`` is undecided and the node is evaluated
from its histograms, exactly, as for the entropy test.

Bounds first (``bucket_bounds``, read by ``nodes.node_bounds``): the cells counted per value *bucket* (at most
``BOUND_BUCKETS`` rows a block) give ``F`` at the bucket edges and, from the first moment ``sum c·(end - s)``,
the exact ``sum (F - G)`` over each bucket.  With ``D = F - G``, ``sum |D| = sum D + 2·sum D- = -sum D +
2·sum D+`` on any range; over a bucket ``D- <= (G_max - F_before)+`` and ``D+ <= (F_after - G_min)+``, over the
empty buckets after it ``F`` is constant.  The smaller form is an upper bound, ``|sum D|`` a lower one, both
exact where ``D`` keeps one sign.  E.g. a block all below the table (``F >= G`` everywhere, ``D- = 0``) gets
its exact EMD ``sum D`` from the buckets alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

KINDS = ("ordered", "equal")


@dataclass(frozen=True)
class Reference:
    """The lookup tables of one sensitive attribute and the constants they were built with."""

    attribute: int  # the sensitive column's index (``s{attribute}``)
    rows: int  # N
    width: int  # m
    buckets: int  # B
    integral: int  # I(m)

    @property
    def positions(self) -> sa.TableClause:
        return sa.table(f"veil_emd_{self.attribute}", *(sa.column(c) for c in ("pos", "r", "c", "i")))

    @property
    def inverse(self) -> sa.TableClause:
        return sa.table(f"veil_emdinv_{self.attribute}", *(sa.column(c) for c in ("beta", "lo", "ilo", "cnt")))


def lookup_tables(attribute: int) -> tuple[sa.Table, sa.Table]:
    """DDL of the two temporary lookup tables of sensitive column ``attribute``."""
    md = sa.MetaData()
    big = sa.BigInteger
    return (
        sa.Table(
            f"veil_emd_{attribute}", md, *(sa.Column(c, big) for c in ("pos", "r", "c", "i")), prefixes=["TEMPORARY"]
        ),
        sa.Table(
            f"veil_emdinv_{attribute}",
            md,
            *(sa.Column(c, big) for c in ("beta", "lo", "ilo", "cnt")),
            prefixes=["TEMPORARY"],
        ),
    )


def _double(x: Any) -> Any:
    return sa.cast(x, sa.Double)


def cell_terms(cells: sa.Subquery, keys: list[str], ref: Reference) -> sa.Subquery:
    """Per cell of ``cells`` (``keys…, s, c``): the keys, ``c`` and the terms the block sums — ``run`` (ordered,
    scaled by n·N), ``ia`` (``I(a)``), ``slack`` (``cnt``), ``over`` (equal, scaled by n·N)."""
    e = ref.positions.alias("p")
    part = [cells.c[k] for k in keys]
    window: dict[str, Any] = {"partition_by": part, "order_by": cells.c.s}
    w = (
        sa.select(
            *part,
            cells.c.s.label("a"),
            cells.c.c,
            e.c.i.label("ia"),
            e.c.r.label("big_r"),
            sa.func.sum(cells.c.c).over(**window, rows=(None, 0)).label("cum"),
            sa.func.sum(cells.c.c).over(**window, rows=(None, None)).label("size"),  # one sort for all
            sa.func.lead(cells.c.s, 1, sa.literal(ref.width, sa.BigInteger)).over(**window).label("b"),
            sa.func.lead(e.c.i, 1, sa.literal(ref.integral, sa.BigInteger)).over(**window).label("ib"),
        )
        .select_from(cells.join(e, e.c.pos == cells.c.s))
        .subquery("w")
    )
    v = ref.inverse.alias("v")
    n, s_n = _double(w.c.size), _double(w.c.cum) * float(ref.rows)  # constants bound as doubles, never int4
    bucket = sa.cast(sa.func.floor(_double(w.c.cum) * float(ref.buckets) / n), sa.BigInteger)
    below, above = v.c.lo < w.c.a, v.c.lo > w.c.b
    sigma = sa.case((below, w.c.a), (above, w.c.b), else_=v.c.lo)
    i_sigma = sa.case((below, w.c.ia), (above, w.c.ib), else_=v.c.ilo)
    run = s_n * (sigma - w.c.a) - n * _double(i_sigma - w.c.ia) + n * _double(w.c.ib - i_sigma) - s_n * (w.c.b - sigma)
    excess = _double(w.c.c) * float(ref.rows) - _double(w.c.big_r) * n
    return (
        sa.select(
            *(w.c[k] for k in keys),
            w.c.c,
            w.c.ia,
            run.label("run"),
            v.c.cnt.label("slack"),
            sa.case((excess > 0, excess), else_=0.0).label("over"),
        )
        .select_from(w.join(v, v.c.beta == bucket))
        .subquery("c")
    )


def block_sums(cells: sa.Subquery) -> list[Any]:
    """The per-block aggregates the distance tests read, over ``cell_terms``' rows."""
    size = sa.func.sum(cells.c.c)
    return [
        (sa.func.sum(cells.c.run) + _double(sa.func.min(cells.c.ia)) * _double(size)).label("ordered_num"),
        sa.func.sum(cells.c.slack).label("slack"),
        sa.func.sum(cells.c.over).label("equal_num"),
    ]


def distance_test(
    blocks: Any, kind: str, threshold: float, ref: Reference, tolerance: float, undecided: int
) -> tuple[Any, Any]:
    """(verdict, level) of ``EMD <= threshold`` on the per-block aggregates ``blocks`` (size, m, ordered_num,
    slack, equal_num): 1 pass, 0 fail, ``undecided`` within the error bound."""
    scale = _double(blocks.c.size) * float(ref.rows)
    margin = tolerance * (_double(blocks.c.m) + 8.0)
    if kind == "ordered":
        steps = float(max(ref.width - 1, 1))
        emd = blocks.c.ordered_num / (scale * steps)
        margin = margin + 2.0 * _double(blocks.c.slack) / (float(ref.buckets) * steps)
    elif kind == "equal":
        emd = blocks.c.equal_num / scale
    else:
        raise ValueError(f"no distance {kind!r}")
    verdict = sa.case((emd <= threshold - margin, 1), (emd > threshold + margin, 0), else_=undecided)
    return verdict, emd


# --- bounds from value buckets ----------------------------------------------------------------------------------

BOUND_BUCKETS = 64  # value buckets of the bound statement: rows per block at most this many


@dataclass(frozen=True)
class Buckets:
    """Equal-width buckets of ``width`` positions over the ``m`` positions of one sensitive attribute, and the
    table ``veil_emdbkt_{attribute}``: per bucket ``k`` its first position ``u``, ``i = I(u)``, ``c = C_u`` (``N``
    at ``u = m``), ``p = C_{u-1}`` (0 at ``u = 0``), and the same four of bucket ``k + 1`` (``u1, i1, c1, p1``)."""

    attribute: int
    width: int
    count: int

    @property
    def table(self) -> sa.TableClause:
        return sa.table(f"veil_emdbkt_{self.attribute}", *(sa.column(c) for c in BUCKET_COLUMNS))


BUCKET_COLUMNS = ("k", "u", "i", "c", "p", "u1", "i1", "c1", "p1")


def bucket_table(attribute: int) -> sa.Table:
    """DDL of the temporary bucket table of sensitive column ``attribute``."""
    return sa.Table(
        f"veil_emdbkt_{attribute}",
        sa.MetaData(),
        *(sa.Column(c, sa.BigInteger) for c in BUCKET_COLUMNS),
        prefixes=["TEMPORARY"],
    )


def _plus(x: Any) -> Any:
    return sa.case((x > 0, x), else_=0.0)


def _piece(total_d: Any, psi: Any, chi: Any) -> tuple[Any, Any]:
    """(upper, lower) bound of ``sum |F - G|`` over a range of positions from the exact ``sum (F - G)`` and upper
    bounds of ``sum (G - F)+`` and ``sum (F - G)+``: ``|D| = D + 2·D- = -D + 2·D+`` and ``sum |D| >= |sum D|``."""
    upper = sa.func.least(total_d + 2.0 * psi, -total_d + 2.0 * chi)
    return upper, sa.func.abs(total_d)


def bucket_bounds(cells: sa.Subquery, keys: list[str], ref: Reference, bkt: Buckets) -> sa.Subquery:
    """Per (block, bucket) row of ``cells`` (``keys…, k, c, mom``; ``mom = sum c·(end of bucket - s)``): the
    upper and lower bounds (scaled by n·N) of ``sum |F - G|`` over the bucket and over the empty buckets after
    it, and ``lead`` = n·I(u) (the exact part before the block's first bucket, through ``min``)."""
    part = [cells.c[k] for k in keys]
    window: dict[str, Any] = {"partition_by": part, "order_by": cells.c.k}
    w = sa.select(
        *part,
        cells.c.k,
        cells.c.c,
        cells.c.mom,
        sa.func.sum(cells.c.c).over(**window, rows=(None, 0)).label("cum"),
        sa.func.sum(cells.c.c).over(**window, rows=(None, None)).label("size"),
        sa.func.lead(cells.c.k, 1, sa.literal(bkt.count, sa.BigInteger)).over(**window).label("nk"),
    ).subquery("w")
    t, x = bkt.table.alias("t"), bkt.table.alias("x")
    n, big_n = _double(w.c.size), float(ref.rows)
    after = _double(w.c.cum) * big_n  # S_a·N
    before = _double(w.c.cum - w.c.c) * big_n  # S_b·N
    width = _double(t.c.u1 - t.c.u)
    own = big_n * (width * _double(w.c.cum - w.c.c) + _double(w.c.mom)) - n * _double(t.c.i1 - t.c.i)
    own_hi, own_lo = _piece(own, width * _plus(n * _double(t.c.p1) - before), width * _plus(after - n * _double(t.c.c)))
    span_w = _double(x.c.u - t.c.u1)
    span = span_w * after - n * _double(x.c.i - t.c.i1)
    span_hi, span_lo = _piece(
        span, span_w * _plus(n * _double(x.c.p) - after), span_w * _plus(after - n * _double(t.c.c1))
    )
    return (
        sa.select(
            *(w.c[k] for k in keys),
            w.c.c,
            (own_hi + span_hi).label("hi"),
            (own_lo + span_lo).label("lo"),
            (n * _double(t.c.i)).label("lead"),
        )
        .select_from(w.join(t, t.c.k == w.c.k).join(x, x.c.k == w.c.nk))
        .subquery("c")
    )


def bound_test(blocks: Any, threshold: float, ref: Reference, tolerance: float, undecided: int) -> tuple[Any, Any]:
    """(verdict, level) of ``EMD <= threshold`` from the per-block bounds ``blocks`` (size, rows, hi, lo): 1 when the
    upper bound passes, 0 when the lower bound fails, ``undecided`` otherwise; the level is the upper bound."""
    scale = _double(blocks.c.size) * float(ref.rows) * float(max(ref.width - 1, 1))
    upper, lower = blocks.c.hi / scale, blocks.c.lo / scale
    margin = tolerance * (_double(blocks.c.rows) + 8.0)
    verdict = sa.case((upper <= threshold - margin, 1), (lower > threshold + margin, 0), else_=undecided)
    return verdict, upper
