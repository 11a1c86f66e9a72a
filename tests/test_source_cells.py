"""The source held first (``veil.sourcecells``: where a statement costs more than a pass — ``batch``, Spark's, forced
here — and the rows fit ``local_cells``): one ``GROUP BY`` fetched whole gives what the scan of the source's values
finds and the base frequency set coded here, equal to the scan and the coding statement in the warehouse — NULLs,
dates, decimals and a published-but-uncounted column included — on every backend."""

from __future__ import annotations

import datetime as dt
import decimal
import random

import numpy as np
import pytest
import sqlalchemy as sa

import veil.baseset
import veil.queries
from veil import config as cfg
from veil.errors import SourceError
from veil.run import open_run
from veil.sourcecells import SourceCells
from tests.conftest import Db

QIS = (
    '[[quasi_identifiers]]\ncolumn = "age"\nhierarchy = { intervals = [10, 20] }\n'
    '[[quasi_identifiers]]\ncolumn = "sex"\nhierarchy = { suppress = true }\n'
    '[[quasi_identifiers]]\ncolumn = "day"\nhierarchy = { dates = ["month", "year"] }\n'
)
MODELS = '[[models]]\ntype = "entropy-l-diversity"\nl = 1.5\nattribute = "income"\n'


def visits(db: Db, seed: int, nulls: bool) -> str:
    """Rows with an integer, a text and a date QI, a decimal sensitive column and an uncounted one (``note``),
    NULLs in each when ``nulls``."""
    rnd = random.Random(seed)

    def maybe(v: object) -> object:
        return None if nulls and rnd.random() < 0.06 else v

    rows = [
        (
            maybe(rnd.randint(20, 59)),
            maybe(rnd.choice("FM")),
            maybe(dt.date(2024, rnd.randint(1, 12), rnd.randint(1, 3))),
            maybe(decimal.Decimal(rnd.choice(["10.50", "20.00", "35.25", "80.75"]))),
            maybe(rnd.choice(["a", "b"])),
        )
        for _ in range(200)
    ]
    name = f"visits_{seed}_{int(nulls)}"
    columns = {"age": sa.Integer, "sex": sa.String, "day": sa.Date, "income": sa.Numeric(8, 2), "note": sa.String}
    db.create_table(name, columns, rows)
    return name


def config(db: Db, table: str, nulls: str) -> cfg.Config:
    body = QIS + '[sensitive]\ncolumns = ["income", "note"]\n' + MODELS
    path = db.write_config(table, body, name=f"{table}_{nulls}.toml", source_extra=f'nulls = "{nulls}"\n')
    return cfg.load(path)


def _cells(local: object) -> dict[tuple[int, ...], int]:
    leaves = [np.asarray(x) for x in local.leaves]  # type: ignore[attr-defined]
    sensitive, n = np.asarray(local.sensitive), np.asarray(local.n)  # type: ignore[attr-defined]
    return {(*(int(x[c]) for x in leaves), *(int(s) for s in sensitive[c])): int(n[c]) for c in range(len(n))}


@pytest.mark.spark_too
@pytest.mark.parametrize("nulls", [False, True])
def test_the_source_held_first_equals_the_scan_and_the_coding_in_the_warehouse(
    db: Db, monkeypatch: pytest.MonkeyPatch, nulls: bool
) -> None:
    conf = config(db, visits(db, 3, nulls), "drop")
    with open_run(conf, batch=False, local_cells=1000) as (conf, sql):
        want = (sql.rows, sql.stats.rows_read, sql.stats.rows_dropped_null, sql.stats.base_cells)
        hierarchies, domains = sql.hierarchies, [d.values.tolist() for d in sql.domains]
        cells = _cells(sql.local)
        node = tuple(h.height for h in sql.hierarchies)
        statements = sql.session.statements  # prepared: the scan, the coding, the fetch of its cells
        counts = sql.counts((1, 1, 1)), sql.counts(node)
    coded: list[int] = []
    plain = veil.queries.base_coded
    monkeypatch.setattr(veil.baseset.q, "base_coded", lambda *a, **k: coded.append(1) or plain(*a, **k))
    with open_run(conf, batch=True, local_cells=1000) as (conf, held):
        assert (held.rows, held.stats.rows_read, held.stats.rows_dropped_null, held.stats.base_cells) == want
        assert [(h.leaves, h.labels) for h in held.hierarchies] == [(h.leaves, h.labels) for h in hierarchies]
        assert [d.values.tolist() for d in held.domains] == domains
        assert _cells(held.local) == cells and not coded  # coded here, no coding statement
        assert held.session.statements < statements  # the rows counted, then one GROUP BY fetched
        for a, b in zip(counts, (held.counts((1, 1, 1)), held.counts(node))):
            assert a.keys.tolist() == b.keys.tolist() and a.rows == b.rows
            ba, bb = a.blocks("income"), b.blocks("income")
            assert ba.indptr.tolist() == bb.indptr.tolist() and ba.counts.tolist() == bb.counts.tolist()
        assert held.stats.node_queries == 0
        held.end_counting()  # a node after the end: the source held first again
        assert held.counts(node).rows == counts[1].rows and not coded
    assert want[2] > 0 if nulls else want[2] == 0


def test_nulls_under_the_error_policy_are_named_the_same_either_way(db: Db) -> None:
    conf = config(db, visits(db, 4, True), "error")
    messages = []
    for batch in (False, True):
        with pytest.raises(SourceError) as err, open_run(conf, batch=batch, local_cells=1000):
            pass
        messages.append(str(err.value))
    assert messages[0] == messages[1] and "has NULLs in column(s)" in messages[0] and "'note'" in messages[0]


def test_a_source_above_the_bound_is_scanned_and_coded_in_the_warehouse(
    db: Db, monkeypatch: pytest.MonkeyPatch
) -> None:
    conf = config(db, visits(db, 5, False), "drop")
    fetched: list[int] = []
    monkeypatch.setattr(veil.sourcescan.SourceScan, "cells", lambda self: fetched.append(1))
    with open_run(conf, batch=True, local_cells=199) as (conf, wh):
        assert wh.rows == 200 and wh.local is not None and wh.stats.base_cells <= 199 and not fetched


def test_source_values_that_code_alike_are_merged() -> None:
    # two distinct source values (1 and 1.0 hash alike: one leaf) and a value of no hierarchy
    from veil.hierarchy import Hierarchy

    h = Hierarchy("x", (1, 2), (("*", "*"),))
    cells = SourceCells([np.array([0, 1, 2])], [[1, 1.0, 2]], np.zeros((3, 0), dtype=bool), np.array([2, 3, 4]))
    got = cells.coded([h], [])
    assert got["q0_0"].tolist() == [0, 1] and got["n"].tolist() == [5, 4]
    lost = SourceCells([np.array([0, 1])], [[1, 3]], np.zeros((2, 0), dtype=bool), np.array([2, 3]))
    with pytest.raises(Exception, match="lost rows"):
        lost.coded([h], [])


def _expanded(distinct: list[tuple], chunks: object, d: int) -> list[tuple]:
    out = []
    for chunk in chunks(False):  # type: ignore[operator]
        for k in range(len(chunk["n"])):
            out.append(
                (tuple(int(chunk[f"g{i}"][k]) for i in range(d)), distinct[int(chunk["vid"][k])], int(chunk["n"][k]))
            )
    return sorted(out, key=str)


@pytest.mark.spark_too
@pytest.mark.parametrize("nulls", [False, True])
def test_a_carried_column_rolls_the_candidate_up_here_as_the_statement_fetches_it(db: Db, nulls: bool) -> None:
    """A published column no model reads, carried (``Warehouse.carried``: a release whose candidate comes whole,
    Spark's): the source held first is grouped by its values too — the same base, values, NULLs and rows as without
    it — and a node's cells with every published column's values (``Warehouse.valued``) are the cells the candidate's
    statement fetches (``queries.valued_cells``), NULL rows left out as the policy says; without it, none."""
    from veil.release import fetchedcells

    conf = config(db, visits(db, 6, nulls), "drop")
    columns = ["income", "note"]
    nodes = [(0, 0, 0), (1, 1, 1), (2, 0, 1)]
    with open_run(conf, batch=True, local_cells=1000) as (conf, plain):
        want = (plain.rows, plain.stats.rows_read, plain.stats.rows_dropped_null, _cells(plain.local))
        assert plain.valued(nodes[0], columns) is None and plain.valued(nodes[0], ["income"]) is not None
    with open_run(conf, batch=True, local_cells=1000, carried=("note",)) as (conf, held):
        assert (held.rows, held.stats.rows_read, held.stats.rows_dropped_null, _cells(held.local)) == want
        source, d = held.source_table([*held.attributes, *columns]), len(held.attributes)
        for node in nodes:
            stmt = veil.queries.valued_cells(source, held.layout, node, held.attributes, columns, columns)
            theirs = _expanded(*fetchedcells.fetch(held.session, stmt, d, len(columns), "fetching"), d)
            valued = held.valued(node, columns)
            assert valued is not None
            codes, factors = valued
            mine = _expanded(*fetchedcells.held({k: v for k, v in codes.items() if k != "n"}, factors, codes["n"]), d)
            assert mine == theirs and sum(n for *_k, n in mine) == held.rows
    assert want[2] > 0 if nulls else want[2] == 0


def test_carried_columns_are_summed_away_from_the_base_and_kept_by_value() -> None:
    from veil.hierarchy import Hierarchy

    h = Hierarchy("x", (1, 2), (("*", "*"),))
    # x: 1, 1, 2, 1 ; carried c: "p", "q", "p", NULL (a NULL row is not kept)
    cells = SourceCells(
        [np.array([0, 0, 1, 0]), np.array([0, 1, 0, -1])],
        [[1, 2], ["p", "q"]],
        np.zeros((4, 0), dtype=bool),
        np.array([2, 3, 4, 5]),
        carried=1,
    )
    base = cells.coded([h], [])
    assert base["q0_0"].tolist() == [0, 1] and base["n"].tolist() == [5, 4]
    data, values = cells.valued([h], [])
    assert data["q0_0"].tolist() == [0, 0, 1] and data["c0"].tolist() == [0, 1, 0] and data["n"].tolist() == [2, 3, 4]
    assert values == [["p", "q"]] and cells.kept == 9 and cells.nulls(1) == 5
