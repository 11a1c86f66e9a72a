"""A waiting member takes over a stand-in whose row is the same (docs/series.md §2): published tonight in that
stand-in's cohort, the version's rows exactly the last version's, one stand-in fewer — on DuckDB and PostgreSQL.
A row that differs in a label or a value takes over nothing; two identical newcomers share one stand-in."""

from __future__ import annotations

from collections import Counter

import pytest

from veil import config as cfg
from veil.release import init, release
from tests.conftest import Db
from tests.test_series_db import change, cleanup, people_db, versions  # noqa: F401 (fixture)


def _rows(db: Db, out: str, version: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(map(str, r)) for r in versions(db, out)[version - 1].rows)


@pytest.mark.backend
def test_a_newcomer_with_a_stand_ins_row_takes_it_over(db: Db, cleanup) -> None:
    path, out, _ = people_db(db, "cohort")
    init(cfg.load(path))
    first = release(cfg.load(path))
    assert first.status == "published"
    # person 1 (a1, 20, flu) leaves; 101 arrives with the same row: nothing a reader sees changes (105, in
    # another block, waits alone: the source changed, so the night runs)
    change(db, add=[(101, "a1", 20, "flu"), (105, "b1", 30, "cancer")], remove=[1])
    second = release(cfg.load(path))
    assert second.status == "published"
    assert (second.series["taken_over"], second.series["standing_in"], second.series["rows_deferred"]) == (1, 0, 1)
    assert _rows(db, out, 2) == _rows(db, out, 1)
    # person 2 (a2, 25, cold) leaves; 102 arrives with another disease in 1's block: no takeover, 102 waits
    change(db, add=[(102, "a1", 20, "cold")], remove=[2])
    third = release(cfg.load(path))
    assert (third.series["taken_over"], third.series["standing_in"]) == (0, 1)
    assert _rows(db, out, 3) == _rows(db, out, 2)
    # two newcomers with 2's row: one takes the stand-in over, the other waits
    change(db, add=[(103, "a2", 25, "cold"), (104, "a2", 25, "cold")])
    fourth = release(cfg.load(path))
    assert (fourth.series["taken_over"], fourth.series["standing_in"]) == (1, 0)
    waited = third.series["rows_deferred"] + 1  # 104 joins whoever waited (102, 105 unless their block entered)
    entered = waited - fourth.series["rows_deferred"]
    assert sum(_rows(db, out, 4).values()) == sum(_rows(db, out, 3).values()) + entered
