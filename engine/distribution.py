"""The whole table's distribution ``P`` of one sensitive attribute as two lookup tables, so the warehouse can
compute every block's Earth Mover's Distance to ``P`` in SQL (``queries.distances``; docs/models.md §3) and
ship a few numbers per node instead of its histograms.  Pure numpy.

With ``N`` rows, ``m`` positions (the domain's sorted values) and ``R_i`` the rows at position ``i``:

- ``positions`` (``m + 1`` rows): per position ``pos`` its count ``r = R_pos``, the cumulative count
  ``c = C_pos = R_0 + … + R_pos`` and the integral ``i = I(pos) = C_0 + … + C_{pos-1}`` (so
  ``N·sum_{x<pos} G(x) = I(pos)`` with ``G = C/N``); the extra row ``pos = m`` carries ``I(m)``.
- ``inverse`` (``B + 1`` rows, ``B = buckets``): per bucket ``beta`` the first position ``lo`` with
  ``G(lo) >= beta/B``, its integral ``ilo = I(lo)``, and ``cnt``, the positions with ``G`` in
  ``[beta/B, (beta+1)/B)`` (0 for ``beta = B``: ``G >= 1`` is exact).

A block's run at cumulative share ``x`` must split where ``G`` first reaches ``x``.  Bucket
``beta = floor(x·B)`` gives ``lo``; the true split lies at most ``cnt`` positions later, each of which
the split at ``lo`` miscounts by ``2·(x - G) < 2/B``: the SQL statistic carries that bound with it.

Example (hand-computed): rows 2, 1, 1 at three positions (N = 4): C = 2, 3, 4, I = 0, 2, 5, 9 and G = ½, ¾, 1.
With B = 4, buckets 0, 1 and 2 (G >= 0, ¼, ½) start at position 0, bucket 3 (G >= ¾) at 1, bucket 4 (G >= 1)
at 2; G(0) = ½ lies in bucket 2's range [½, ¾) and G(1) = ¾ in bucket 3's, so ``cnt`` = 0, 0, 1, 1, 0.

>>> d = Distribution.of(np.array([2, 1, 1]), buckets=4)
>>> d.positions["c"].tolist(), d.positions["i"].tolist()
([2, 3, 4, 0], [0, 2, 5, 9])
>>> d.inverse["lo"].tolist(), d.inverse["cnt"].tolist(), d.inverse["ilo"].tolist()
([0, 0, 0, 1, 2], [0, 0, 1, 1, 0], [0, 0, 0, 2, 5])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BUCKETS = 1 << 16  # inverse lookup buckets: a split misplaced by a bucket costs < 2/B per run, bounded exactly


@dataclass(frozen=True, eq=False)
class Distribution:
    """``P`` as lookup tables (see the module): columns by name, and the constants a statement binds."""

    rows: int  # N
    width: int  # m, the positions
    buckets: int  # B
    positions: dict[str, np.ndarray]  # pos, r, c, i (m + 1 rows)
    inverse: dict[str, np.ndarray]  # beta, lo, ilo, cnt (B + 1 rows)

    @property
    def integral(self) -> int:
        """``I(m)``: the integral over the whole domain."""
        return int(self.positions["i"][-1])

    @classmethod
    def of(cls, total: np.ndarray, buckets: int = BUCKETS) -> Distribution:
        """From the rows at each position of the domain (its sorted values)."""
        total = np.asarray(total, dtype=np.int64)
        m, n = len(total), int(total.sum())
        cum = np.cumsum(total)
        integral = np.concatenate(([0], np.cumsum(cum)))
        positions = {
            "pos": np.arange(m + 1, dtype=np.int64),
            "r": np.append(total, 0),
            "c": np.append(cum, 0),
            "i": integral,
        }
        beta = np.arange(buckets + 1, dtype=np.int64)
        # first position with C·B >= beta·N (exact in integers); the domain's end when none is
        lo = np.minimum(np.searchsorted(cum * buckets, beta * n, side="left"), max(m - 1, 0))
        cnt = np.append(lo[1:] - lo[:-1], 0)
        inverse = {"beta": beta, "lo": lo, "ilo": integral[lo], "cnt": cnt}
        return cls(n, m, buckets, positions, inverse)

    def bucket_table(self, count: int) -> tuple[int, dict[str, np.ndarray]]:
        """``count`` equal-width buckets of positions (the last may be shorter): their width and the table
        ``queries.distances.Buckets`` describes — per bucket ``k = 0..K`` (``K`` the buckets actually needed)
        its first position ``u``, ``I(u)``, ``C_u`` (``N`` past the end), ``C_{u-1}`` (0 before the start),
        and the same of bucket ``k + 1``.

        >>> width, t = Distribution.of(np.array([2, 1, 1]), buckets=4).bucket_table(2)
        >>> width, t["u"].tolist(), t["i"].tolist(), t["c"].tolist(), t["p"].tolist(), t["u1"].tolist()
        (2, [0, 2, 3], [0, 5, 9], [2, 4, 4], [0, 3, 4], [2, 3, 3])
        """
        m = self.width
        width = max(-(-m // max(count, 1)), 1)
        k = np.arange(-(-m // width) + 1, dtype=np.int64)
        u = np.minimum(k * width, m)
        cum = self.positions["c"][:m]
        c = np.where(u < m, cum[np.minimum(u, m - 1)] if m else 0, self.rows)
        p = np.where(u > 0, cum[np.maximum(u - 1, 0)] if m else 0, 0)
        cols = {"k": k, "u": u, "i": self.positions["i"][u], "c": c, "p": p}
        nxt = np.append(k[1:], k[-1])
        cols.update({f"{name}1": cols[name][nxt] for name in ("u", "i", "c", "p")})
        return width, cols
