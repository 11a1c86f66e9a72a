"""A cohort series over its versions, for a published version's report: what each night held back — rows of
newcomers still waiting (*deferred*) and rows standing in for people who left — as shares of the table that night,
and the nights the node moved up (docs/series.md §2, §2a, §2b).  Pure: the catalog's record of every run, as
``veil releases`` reads it (``veil.release.history.releases``), in; points out.

The table that night is the people in the source: those published (less the rows standing in) and those waiting.

>>> h = [{"version": 1, "status": "published", "series": "cohort", "rows_published": 100, "rows_deferred": 0,
...       "standing_in": 0, "node": [0, 1], "series_notes": {}},
...      {"version": 2, "status": "expired", "series": "cohort", "rows_published": 104, "rows_deferred": 6,
...       "standing_in": 10, "node": [1, 1], "series_notes": {"node": "series, moved up"}},
...      {"version": 2, "status": "rollback", "series": None, "rows_published": None}]
>>> [(p.version, p.table, p.deferred_share, p.standing_share, p.moved) for p in points(h, upto=2)]
[(1, 100, 0.0, 0.0, False), (2, 100, 0.06, 0.1, True)]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

SHOWN = ("published", "expired")  # a version that was published (an expired one's rows are gone, its record kept)


@dataclass(frozen=True)
class SeriesPoint:
    """One published version of a cohort series, as its night's record says."""

    version: int
    published: int
    deferred: int
    standing_in: int
    node: tuple[int, ...]
    moved: bool  # the series moved up to ``node`` that night

    @property
    def table(self) -> int:
        """The people in the source that night: published and still there, or waiting."""
        return self.published - self.standing_in + self.deferred

    @property
    def deferred_share(self) -> float:
        return self.deferred / self.table if self.table else 0.0

    @property
    def standing_share(self) -> float:
        return self.standing_in / self.table if self.table else 0.0

    def document(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "rows_published": self.published,
            "rows_deferred": self.deferred,
            "standing_in": self.standing_in,
            "node": list(self.node),
            "moved_up": self.moved,
        }


def points(history: Sequence[Mapping[str, Any]], upto: int) -> list[SeriesPoint]:
    """The cohort series' published versions up to version ``upto``, oldest first (empty under another policy)."""
    found = [
        SeriesPoint(
            int(r["version"]),
            int(r["rows_published"]),
            int(r.get("rows_deferred") or 0),
            int(r["standing_in"]),
            tuple(int(x) for x in r.get("node") or ()),
            (r.get("series_notes") or {}).get("node") == "series, moved up",
        )
        for r in history
        if r.get("status") in SHOWN
        and r.get("series") == "cohort"
        and r.get("version") is not None
        and int(r["version"]) <= upto
        and r.get("standing_in") is not None
        and r.get("rows_published") is not None
    ]
    return sorted(found, key=lambda p: p.version)
