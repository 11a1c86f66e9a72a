"""The source grouped once before its two scans (``Backend.group_source``, PostgreSQL's default): the scans read
weighted rows and learn exactly what they learn from the source — values with their rows, NULLs, the base
frequency set, every node — on DuckDB and PostgreSQL, with a source column named like the weight column."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from veil import config as cfg
from veil import queries as q
from veil.backends.base import Backend
from veil.backends.postgres import PostgresBackend
from veil.run import open_warehouse, search_warehouse
from tests.conftest import Db

# ``veil_rows`` is a quasi-identifier here: the weight column takes another name.  NULL sexes are dropped
# (``nulls = "drop"``), duplicates make groups of several rows, so each scan must sum weights, not count rows.
ROWS = [
    ("F", 30, "flu"),
    ("F", 30, "flu"),
    ("F", 31, "cold"),
    ("M", 30, "flu"),
    ("M", 32, "cold"),
    ("M", 32, "cold"),
    ("M", 32, "asthma"),
    (None, 30, "flu"),
    (None, 33, "asthma"),
    ("F", 33, "cold"),
]
BODY = (
    '[[quasi_identifiers]]\ncolumn = "sex"\nhierarchy = { suppress = true }\n'
    f'[[quasi_identifiers]]\ncolumn = "{q.WEIGHT}"\nhierarchy = {{ intervals = [2, 4] }}\n'
    '[sensitive]\ncolumns = ["dx"]\n'
    '[[models]]\ntype = "k-anonymity"\nk = 2\n[[models]]\ntype = "distinct-l-diversity"\nl = 2\n'
    "[search]\nmax_suppression = 0.2\nlocal_cells = 0\n"
)


def _run(db: Db, monkeypatch: pytest.MonkeyPatch, grouped: bool) -> dict[str, Any]:
    monkeypatch.setattr(Backend, "group_source", grouped)
    monkeypatch.setattr(PostgresBackend, "group_source", grouped)
    conf = cfg.load(db.write_config("people", BODY, source_extra='nulls = "drop"\n'))
    with open_warehouse(conf) as wh:
        found = search_warehouse(wh, conf, ["incognito", "optimal"])
        nodes = [(a, b) for a in range(2) for b in range(3)]
        return {
            "rows": wh.rows,
            "weight": wh.source_scan.weight,
            "domains": [(d.values.tolist(), d.total.tolist()) for d in wh.domains],
            "sizes": {n: wh.sizes(n).sizes.tolist() for n in nodes},
            "cells": {n: (wh.counts(n).keys.tolist(), wh.counts(n).rows) for n in nodes},
            "minimal": found.minimal,
            "optimal": None if found.optimal is None else found.optimal.node,
        }


def test_the_grouped_source_reads_what_the_source_reads(db: Db, monkeypatch: pytest.MonkeyPatch) -> None:
    db.create_table("people", {"sex": sa.String, q.WEIGHT: sa.Integer, "dx": sa.String}, ROWS)
    plain, grouped = _run(db, monkeypatch, False), _run(db, monkeypatch, True)
    assert grouped["weight"] is None  # dropped once the base is coded; a base coded again reads the source
    assert plain == grouped and plain["rows"] == 8
    assert plain["domains"] == [(["asthma", "cold", "flu"], [1, 4, 3])]


def test_an_empty_source_is_refused_alike(db: Db, monkeypatch: pytest.MonkeyPatch) -> None:
    db.create_table("people", {"sex": sa.String, q.WEIGHT: sa.Integer, "dx": sa.String}, [])
    for grouped in (False, True):
        monkeypatch.setattr(Backend, "group_source", grouped)
        monkeypatch.setattr(PostgresBackend, "group_source", grouped)
        conf = cfg.load(db.write_config("people", BODY))
        with pytest.raises(Exception, match="has no rows; there is nothing to anonymize"), open_warehouse(conf):
            pass
