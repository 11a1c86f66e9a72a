"""Intervals with a decimal width are exact on both backends: width 0.1 puts 0.3 in ``[0.3, 0.4)`` (in
binary floats ``floor(0.3 / 0.1)`` is 2: ``[0.2, 0.30000000000000004)``), width 0.05 puts NUMERIC 0.30 in
``[0.3, 0.35)`` and 0.70 in ``[0.7, 0.75)``; the labels print the decimal bounds, in the counts and in the
published rows."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
import sqlalchemy as sa

from veil import config as cfg
from veil.run import open_warehouse
from tests.conftest import Db, ReleaseSchemas, run_veil

ROWS = [  # id, x (DOUBLE), d (NUMERIC(6,2)), s
    (1, 0.1, Decimal("1.10"), "a"),
    (2, 0.15, Decimal("1.14"), "b"),
    (3, 0.2, Decimal("0.30"), "a"),
    (4, 0.25, Decimal("0.34"), "b"),
    (5, 0.3, Decimal("0.30"), "a"),
    (6, 0.3, Decimal("0.30"), "b"),
    (7, 0.35, Decimal("0.31"), "a"),
    (8, 0.31, Decimal("0.33"), "b"),
    (9, 0.7, Decimal("0.70"), "a"),
    (10, 0.75, Decimal("0.74"), "b"),
]

BODY = """
[[quasi_identifiers]]
column = "x"
hierarchy = { intervals = [0.1, 0.2] }

[[quasi_identifiers]]
column = "d"
hierarchy = { intervals = [0.05] }

[sensitive]
columns = ["s"]

[[models]]
type = "k-anonymity"
k = 2
"""

# Node [1, 1]: every block has 2 rows or more; below it 0.2/0.30 (node [1, 0]) and 0.1 (node [0, 1]) are alone.
BLOCKS = {
    ("[0.1, 0.2)", "[1.1, 1.15)"): 2,
    ("[0.2, 0.3)", "[0.3, 0.35)"): 2,
    ("[0.3, 0.4)", "[0.3, 0.35)"): 4,
    ("[0.7, 0.8)", "[0.7, 0.75)"): 2,
}


def _table(db: Db) -> None:
    db.create_table("readings", {"id": sa.Integer, "x": sa.Double, "d": sa.Numeric(6, 2), "s": sa.Text}, ROWS)


@pytest.mark.spark_too
def test_decimal_width_counts_and_labels(db: Db) -> None:
    _table(db)
    conf = cfg.load(db.write_config("readings", BODY))
    with open_warehouse(conf) as wh:
        x, d = wh.hierarchies
        assert x.labels_of(0.3) == (0.3, "[0.3, 0.4)", "[0.2, 0.4)", "*")
        assert x.labels_of(0.2)[1] == "[0.2, 0.3)"
        assert d.labels_of(Decimal("0.30"))[1] == "[0.3, 0.35)" and d.labels_of(Decimal("0.70"))[1] == "[0.7, 0.75)"
        counts = wh.counts((1, 1))
        got = {tuple(label): int(n) for label, n in zip(counts.labels(), counts.sizes)}
        assert got == BLOCKS


def test_decimal_width_in_the_published_rows(db: Db, release_schemas: ReleaseSchemas) -> None:
    _table(db)
    path = str(db.write_config("readings", BODY + release_schemas.section("readings")))
    assert run_veil("init", "--config", path).returncode == 0
    res = run_veil("release", "--config", path, "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["node"] == [1, 1]
    published = db.query(f'SELECT x, d, count(*) FROM "{release_schemas.out}".readings GROUP BY x, d ORDER BY x, d')
    assert {(x, d): n for x, d, n in published} == BLOCKS
