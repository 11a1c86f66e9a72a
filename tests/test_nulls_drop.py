"""``[source] nulls = "drop"``: the rows left out are not in ``T`` for any purpose (../shared/SPEC.md §1) — not in
t-closeness's whole-table distribution ``P``, not in an ordered domain, not in the suppression budget — on
DuckDB and PostgreSQL alike."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from veil import config as cfg
from veil.run import open_warehouse, search_warehouse
from tests.conftest import Db

# Four kept rows, two per sex, scores 0 and 1 in each block; two rows with no sex score 2.  Kept: P = (1/2, 1/2)
# over the domain {0, 1} (m = 2), and each block's distribution equals P: EMD 0, so the bottom node passes
# t = 0.1.  Counting the dropped rows would make P = (1/3, 1/3, 1/3) over {0, 1, 2} (m = 3), and every block
# (1/2, 1/2, 0) would lie (|1/2 - 1/3| + |1 - 2/3|) / 2 = 0.25 away: no node would pass.
ROWS = [("F", 0), ("F", 1), ("M", 0), ("M", 1), (None, 2), (None, 2)]
BODY = (
    '[[quasi_identifiers]]\ncolumn = "sex"\nhierarchy = { suppress = true }\n'
    '[sensitive]\ncolumns = ["score"]\n'
    '[[models]]\ntype = "t-closeness"\nt = 0.1\ndistance = "ordered"\n'
)


def _search(db: Db, body: str) -> tuple[list[tuple[int, ...]], tuple[int, ...] | None, tuple[float, ...]]:
    db.create_table("people", {"sex": sa.String, "score": sa.Integer}, ROWS)
    conf = cfg.load(db.write_config("people", body, source_extra='nulls = "drop"\n'))
    with open_warehouse(conf) as wh:
        result = search_warehouse(wh, conf, ["incognito", "optimal"])
        assert wh.rows == 4
        p = tuple(float(x) for d in wh.domains for x in d.total / d.total.sum())
    return result.minimal, (None if result.optimal is None else result.optimal.node), p


@pytest.mark.spark_too
def test_dropped_rows_are_not_in_the_whole_table_distribution(db: Db) -> None:
    minimal, optimal, p = _search(db, BODY)
    assert p == (0.5, 0.5)  # the domain is {0, 1}: score 2 occurs only in dropped rows
    assert minimal == [(0,)] and optimal == (0,)


def test_dropped_rows_are_not_in_the_suppression_budget(db: Db) -> None:
    # k = 3: at the bottom both sex blocks (2 rows each) fail, 4 rows to suppress.  The budget is 0.5 of the
    # kept rows (2), so the bottom fails and the top (one block of 4) is the optimum; counted over all 6 rows
    # the budget would be 3 rows — still short of 4, so this one guards the budget's |T| from the other side:
    # 0.7 of 4 kept is 2.8 rows (fails), of 6 would be 4.2 (passes).
    body = (
        BODY.replace('type = "t-closeness"\nt = 0.1\ndistance = "ordered"', 'type = "k-anonymity"\nk = 3')
        + "[search]\nmax_suppression = 0.7\n"
    )
    minimal, optimal, _ = _search(db, body)
    assert minimal == [(1,)] and optimal == (1,)
