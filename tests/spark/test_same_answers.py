"""Same answers on Spark as on DuckDB: on the inpatient table, a random table (with and without NULLs; dates
and decimals) and 600 rows of Adult, the blocks and histograms at a set of nodes, ``check``'s verdicts and every search
strategy's result (minimal nodes, optimum, and every node it evaluated with its verdict and score) are
equal — Spark computing them over Spark Connect on the two-worker cluster, DuckDB in a local file."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import pytest

from tests.conftest import inpatient_body
from tests.spark.conftest import DATA, Twins
from veil import config as cfg
from veil.privacy import Specification
from veil.run import check_document, counts_document, open_warehouse, search_warehouse
from veil.warehouse import Warehouse

pytestmark = pytest.mark.spark

PEOPLE = """
[search]
max_suppression = 0.05
[[quasi_identifiers]]
column = "age"
hierarchy = { intervals = [10, 20, 40] }
[[quasi_identifiers]]
column = "sex"
hierarchy = { suppress = true }
[[quasi_identifiers]]
column = "region"
hierarchy = { taxonomy = { "0" = ["a", "*"], "1" = ["a", "*"], "2" = ["b", "*"], "3" = ["b", "*"] } }
[sensitive]
columns = ["score", "income"]
[[models]]
type = "k-anonymity"
k = 4
[[models]]
type = "distinct-l-diversity"
attribute = "score"
l = 3
[[models]]
type = "t-closeness"
attribute = "income"
t = 0.4
distance = "ordered"
"""

ADULT = f"""
[files]
allow = ["{DATA}"]
[search]
max_suppression = 0.02
metric = "kl-divergence"
[[quasi_identifiers]]
column = "age"
hierarchy = {{ csv = "{DATA / "adult_age.csv"}" }}
[[quasi_identifiers]]
column = "sex"
hierarchy = {{ suppress = true }}
[[quasi_identifiers]]
column = "marital-status"
hierarchy = {{ csv = "{DATA / "adult_marital_status.csv"}" }}
[sensitive]
columns = ["occupation", "salary-class"]
[[models]]
type = "k-anonymity"
k = 5
[[models]]
type = "entropy-l-diversity"
attribute = "occupation"
l = 2
[[models]]
type = "recursive-cl-diversity"
attribute = "salary-class"
c = 4
l = 2
"""

DATES = """
[[quasi_identifiers]]
column = "visit"
hierarchy = { dates = ["month", "quarter", "year"] }
[[quasi_identifiers]]
column = "sex"
hierarchy = { suppress = true }
[sensitive]
columns = ["income"]
[[models]]
type = "k-anonymity"
k = 6
[[models]]
type = "em-anonymity"
attribute = "income"
epsilon = 2000
m = 2
"""

INPATIENT = inpatient_body() + '\n[[models]]\ntype = "distinct-l-diversity"\nl = 2\n'


@dataclass(frozen=True)
class Case:
    table: str
    body: str
    nodes: tuple[tuple[int | None, ...], ...]  # counted and checked (None: the QI projected out)
    source_extra: str = ""


CASES = {
    "inpatient": Case("patients", INPATIENT, ((0, 0, 0), (1, 2, 1), (2, 1, 1), (5, 3, 1), (1, None, 0))),
    "people": Case("people", PEOPLE, ((0, 0, 0), (1, 1, 1), (3, 0, 2), (2, 1, 0), (None, 1, 1))),
    "people_nulls": Case("people_nulls", PEOPLE, ((0, 0, 0), (1, 1, 1), (2, None, 1)), 'nulls = "drop"\n'),
    "people_dates": Case("people", DATES, ((0, 0), (1, 1), (3, 0), (None, 1))),
    "adult": Case("adult", ADULT, ((0, 0, 0), (2, 1, 1), (4, 0, 2), (1, 1, 1), (3, None, 0))),
}


SEARCHED = ["inpatient", "people", "people_dates", "adult"]  # people_nulls: the random table again, fewer rows


@dataclass
class Pair:
    config: cfg.Config
    duckdb: Warehouse
    spark: Warehouse


@pytest.fixture(scope="module", params=list(CASES))
def pair(request: pytest.FixtureRequest, twins: Twins) -> Iterator[tuple[Case, Pair]]:
    """One prepared warehouse per backend for a case, shared by the tests of this module."""
    case = CASES[request.param]
    configs = {
        b: cfg.load(twins.config_path(b, case.table, case.body, request.param, case.source_extra))
        for b in ("duckdb", "spark")
    }
    with ExitStack() as stack:
        whs = {b: stack.enter_context(open_warehouse(c, sensitive=c.sensitive)) for b, c in configs.items()}
        yield case, Pair(configs["spark"], whs["duckdb"], whs["spark"])


def test_prepared_alike(pair: tuple[Case, Pair]) -> None:
    _, p = pair
    assert p.spark.rows == p.duckdb.rows > 0
    assert p.spark.stats.rows_dropped_null == p.duckdb.stats.rows_dropped_null
    assert p.spark.heights == p.duckdb.heights
    assert [h.leaves for h in p.spark.hierarchies] == [h.leaves for h in p.duckdb.hierarchies]
    assert p.spark.raw_values == p.duckdb.raw_values


def test_counts_equal(pair: tuple[Case, Pair]) -> None:
    case, p = pair
    for node in case.nodes:
        spark = counts_document(p.spark, p.spark.counts(node))
        assert spark == counts_document(p.duckdb, p.duckdb.counts(node)), node
        assert sum(b["size"] for b in spark["blocks"]) == p.spark.rows


def test_check_equal(pair: tuple[Case, Pair]) -> None:
    case, p = pair
    spec = Specification(p.config.models, p.config.search.max_suppression)
    for node in case.nodes:
        if None in node:
            continue
        docs = []
        for wh in (p.spark, p.duckdb):
            nc = wh.counts(node)
            docs.append(check_document(wh, spec, nc, spec.evaluate(nc, wh.rows)))
        assert docs[0] == docs[1], node


@pytest.mark.parametrize("pair", SEARCHED, indirect=True)
@pytest.mark.parametrize("strategy", ["brute-force", "incognito", "optimal"])
def test_search_equal(pair: tuple[Case, Pair], strategy: str) -> None:
    _, p = pair
    spark, duck = (_result(search_warehouse(wh, p.config, [strategy])) for wh in (p.spark, p.duckdb))
    assert spark == duck
    assert spark["nodes_evaluated"] > 0


def _result(result: Any) -> dict[str, Any]:
    doc = result.document()
    doc.pop("seconds")
    for work in doc["by_strategy"]:  # each strategy's time differs by backend; what it evaluated must not
        work.pop("seconds")
    doc["evaluations"] = result.evaluations
    return doc
