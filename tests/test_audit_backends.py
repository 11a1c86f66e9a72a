"""``veil audit`` on DuckDB and PostgreSQL: a lattice node, a published release read back from the warehouse,
and a table someone else generalized (as it stands) give the hand-computed numbers of papers/000's Figures
2 and 3 (Machanavajjhala et al. ICDE 2006)."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from veil import config as cfg
from veil.adversary.subject import run_audit
from veil.demo import inpatient_rows
from tests.conftest import INPATIENT_COLUMNS, Db, error_line, inpatient_body, run_veil

FIGURE_2_TABLE = [  # papers/000 Figure 2, as a publisher would have stored it
    ("130**", "<30", "*", "Heart Disease"),
    ("130**", "<30", "*", "Heart Disease"),
    ("130**", "<30", "*", "Viral Infection"),
    ("130**", "<30", "*", "Viral Infection"),
    ("1485*", ">=40", "*", "Cancer"),
    ("1485*", ">=40", "*", "Heart Disease"),
    ("1485*", ">=40", "*", "Viral Infection"),
    ("1485*", ">=40", "*", "Viral Infection"),
    ("130**", "3*", "*", "Cancer"),
    ("130**", "3*", "*", "Cancer"),
    ("130**", "3*", "*", "Cancer"),
    ("130**", "3*", "*", "Cancer"),
]


def attacks(doc: dict) -> dict[str, dict]:
    return {a["attack"]: a for a in doc["attacks"] if a["attribute"] == "condition"}


def test_audit_node_figure_2_and_3(inpatient: Db) -> None:
    path = inpatient.write_config("patients", inpatient_body())
    res = run_veil("audit", "--config", str(path), "--node", "2,1,1", "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert (doc["rows"], doc["blocks"], doc["smallest_block"], doc["node"]) == (12, 3, 4, [2, 1, 1])
    a = attacks(doc)
    assert (a["homogeneity"]["blocks"], a["homogeneity"]["rows"]) == (1, 4)
    assert a["homogeneity"]["worst"][0]["key"] == ["130**", "3*", "*"]
    assert a["background-knowledge"]["rows"] == 8 and a["skewness"]["rows"] == 8
    assert a["skewness"]["worst"][0]["score"] == round(7 / 12, 6)
    assert a["epsilon-privacy"]["worst"][0]["score"] is None  # ∞: cancer certain, prior 5/12

    a3 = attacks(run_audit(cfg.load(path), node="1,2,1").document())
    assert all(a3[k]["rows"] == 0 for k in ("homogeneity", "background-knowledge", "skewness", "negative-disclosure"))
    assert {tuple(w["key"]) for w in a3["skewness"]["worst"]} == {
        ("1305*", "<40", "*"),
        ("1306*", "<40", "*"),
        ("1485*", ">=40", "*"),
    }


@pytest.mark.spark_too
def test_audit_a_table_as_it_stands(db: Db) -> None:
    """An auditor's case: the table arrives generalized (Figure 2); no hierarchy needs to cover its values."""
    db.create_table(
        "figure2",
        {"zip": sa.String, "age": sa.String, "nationality": sa.String, "condition": sa.String},
        FIGURE_2_TABLE,
    )
    path = db.write_config("figure2", inpatient_body())
    doc = run_audit(cfg.load(path)).document()
    assert doc["node"] is None and (doc["rows"], doc["blocks"]) == (12, 3)
    a = attacks(doc)
    assert (a["homogeneity"]["blocks"], a["homogeneity"]["rows"]) == (1, 4)
    assert a["homogeneity"]["worst"][0]["key"] == ["130**", "3*", "*"]
    assert (a["background-knowledge"]["rows"], a["negative-disclosure"]["rows"]) == (8, 8)
    assert sorted(w["score"] for w in a["skewness"]["worst"]) == [round(1 / 6, 6), round(5 / 12, 6), round(7 / 12, 6)]


RELEASE = """
[[models]]
type = "distinct-l-diversity"
l = 2

[release]
name = "inpatient"
schema = "{out}"
catalog_schema = "{cat}"
drop_columns = ["id"]
"""


def test_audit_a_published_release(inpatient: Db) -> None:
    out = "published" if inpatient.kind == "duckdb" else f"{inpatient.schema}_pub"
    cat = "veil" if inpatient.kind == "duckdb" else f"{inpatient.schema}_cat"
    path = inpatient.write_config("patients", inpatient_body() + RELEASE.format(out=out, cat=cat))
    try:
        assert run_veil("init", "--config", str(path)).returncode == 0
        res = run_veil("release", "--config", str(path), "--json")
        assert res.returncode == 0 and json.loads(res.stdout)["node"] == [1, 2, 1], res.stderr
        # the source changes after publication: the audit reads the published rows, not the source
        inpatient.replace_rows("patients", INPATIENT_COLUMNS, [r for r in inpatient_rows() if r[0] <= 4])
        res = run_veil("audit", "--config", str(path), "--release", "1", "--json")
        assert res.returncode == 0, res.stderr
        doc = json.loads(res.stdout)
        assert doc["subject"].startswith("release 'inpatient' version 1") and (doc["rows"], doc["blocks"]) == (12, 3)
        a = attacks(doc)
        assert a["homogeneity"]["rows"] == 0 and a["background-knowledge"]["parameters"]["l"] == 2
        assert a["background-knowledge"]["rows"] == 0  # every block has 3 values: 2 eliminations
        assert max(w["score"] for w in a["skewness"]["worst"]) == round(1 / 6, 6)
        missing = run_veil("audit", "--config", str(path), "--release", "7")
        assert missing.returncode == 1 and "no published version 7" in missing.stderr
        assert error_line(missing.stderr)
    finally:
        if inpatient.kind == "postgres":
            for schema in (out, cat):
                inpatient.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def test_audit_bad_input_is_one_line(inpatient: Db) -> None:
    path = inpatient.write_config("patients", inpatient_body())
    res = run_veil("audit", "--config", str(path), "--node", "9,9,9")
    assert res.returncode == 1 and "--node" in error_line(res.stderr)
    res = run_veil("audit", "--config", str(path), "--node", "1,1,1", "--release", "1")
    assert res.returncode == 1 and "exclusive" in res.stderr
    bad = inpatient.write_config("patients", inpatient_body() + "\n[audit]\nshare = 2\n", name="bad.toml")
    res = run_veil("audit", "--config", str(bad))
    assert res.returncode == 1 and "[audit] key 'share'" in error_line(res.stderr)


def test_cells_statement_quotes_and_binds() -> None:
    from veil.queries.audit import table_cells

    hostile = 'x"; DROP TABLE t; --'
    for dialect in (
        sa.create_engine("duckdb:///:memory:").dialect,
        sa.create_engine("postgresql+psycopg://veil@localhost/veil").dialect,
    ):
        sql = str(table_cells("raw", "Patients", ["Zip Code", hostile], ["condition"]).compile(dialect=dialect))
        assert '"Zip Code"' in sql and '"x""; DROP TABLE t; --"' in sql and "GROUP BY" in sql
        assert "condition IS NOT NULL" in sql
