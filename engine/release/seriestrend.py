"""A cohort series' utility over its versions (docs/series.md §6), for ``veil audit --series``: per version the rows
it published, how many of them stood in for people who had left (*stale*) and how many people waited unpublished
(*withheld*) — the catalog's own record of each version (``veil.releases.series``), which analysts cannot read —
and their shares: standing in over the rows published, waiting over the people there (published − standing in +
waiting), as ``bench/bench_series.py`` measures them.

>>> t = trend([{"version": 1, "series": 1, "rows_published": 100, "standing_in": 0, "rows_deferred": 0},
...            {"version": 2, "series": 1, "rows_published": 100, "standing_in": 4, "rows_deferred": 2},
...            {"version": 3, "series": 1, "rows_published": 98, "standing_in": 2, "rows_deferred": 0}], series=1)
>>> [(p.version, round(p.stale, 3), round(p.withheld, 3)) for p in t]
[(1, 0.0, 0.0), (2, 0.04, 0.02), (3, 0.02, 0.0)]
>>> summary(t)["stale"]
{'now': 0.020408, 'most': 0.04, 'at': 2}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Point:
    """One version: rows published, standing in, waiting."""

    version: int
    published: int
    standing_in: int
    waiting: int

    @property
    def stale(self) -> float:
        return self.standing_in / self.published if self.published else 0.0

    @property
    def withheld(self) -> float:
        people = self.published - self.standing_in + self.waiting
        return self.waiting / people if people else 0.0


def trend(history: Sequence[Mapping[str, Any]], series: int) -> list[Point]:
    """The versions of ``series`` in ``history`` (each published version's ``series`` record, with its version and
    rows published), oldest first."""
    return [
        Point(int(h["version"]), int(h.get("rows_published") or 0), int(h.get("standing_in") or 0),
              int(h.get("rows_deferred") or 0))
        for h in history
        if h.get("series") == series
    ]  # fmt: skip


def summary(points: Sequence[Point]) -> dict[str, Any]:
    """Each share now (the latest version), at its most, and the version where it was; and every version's
    ``[version, rows published, standing in, waiting]``."""
    if not points:
        return {"versions": 0}

    def of(share: str) -> dict[str, Any]:
        most = max(points, key=lambda p: (getattr(p, share), -p.version))
        return {"now": round(getattr(points[-1], share), 6), "most": round(getattr(most, share), 6), "at": most.version}

    return {
        "versions": len(points),
        "stale": of("stale"),
        "withheld": of("withheld"),
        "points": [[p.version, p.published, p.standing_in, p.waiting] for p in points],
    }
