"""Hierarchies read from warehouse tables, and ``veil hierarchy`` (export, --check), on DuckDB and PostgreSQL.

The inpatient table of Machanavajjhala et al. (ICDE 2006, Figure 1) with its age hierarchy as a table must
give exactly the counts it gives with the CSV file; every way a table can be wrong is one line naming the
table and the column; ``--check`` lists every missing value of every hierarchy in one run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import sqlalchemy as sa

from veil import config as cfg
from veil.demo import HIERARCHIES
from veil.errors import HierarchyError
from veil.hierarchy import read_csv_rows
from veil.run import check_document, counts_document, open_run, open_warehouse
from tests.conftest import Db, error_line, inpatient_body, run_veil

AGE_CSV = HIERARCHIES / "inpatient_age.csv"
AGE_ROWS = [(int(value), *labels) for _, value, labels in read_csv_rows(AGE_CSV)]
LEVELS = {"level_0": sa.Integer, "level_1": sa.Text, "level_2": sa.Text, "level_3": sa.Text}
CONDITIONS = [("Cancer", "other", "*"), ("Heart Disease", "heart", "*"), ("Viral Infection", "other", "*")]
T_CLOSENESS = """
[[models]]
type = "t-closeness"
t = 0.1
distance = "hierarchical"
hierarchy = {hierarchy}
"""


def with_age(db: Db, hierarchy: str) -> str:
    """The inpatient config with the age hierarchy replaced by ``hierarchy`` (TOML inline table)."""
    return inpatient_body().replace(f'{{ csv = "{AGE_CSV}" }}', hierarchy)


def age_table(db: Db, rows=AGE_ROWS, columns=LEVELS, name: str = "age_levels") -> str:
    db.create_table(name, columns, rows)
    return f"{db.schema}.{name}"


def counts_at(db: Db, body: str, nodes) -> list[dict]:
    conf = cfg.load(db.write_config("patients", body, name=f"veil_{abs(hash(body))}.toml"))
    with open_warehouse(conf, sensitive=conf.sensitive) as wh:
        return [counts_document(wh, wh.counts(n)) for n in nodes]


NODES = [(0, 0, 0), (2, 1, 1), (1, 2, 1), (5, 3, 1)]


@pytest.mark.spark_too  # the hierarchy table's columns from the backend's own lookup (Spark: its catalog)
def test_a_table_hierarchy_counts_like_its_csv(inpatient: Db) -> None:
    table = age_table(inpatient)
    from_table = counts_at(inpatient, with_age(inpatient, f'{{ table = "{table}" }}'), NODES)
    assert from_table == counts_at(inpatient, inpatient_body(), NODES)
    fig2 = {tuple(b["key"]): b["size"] for b in from_table[1]["blocks"]}
    assert fig2 == {("130**", "<30", "*"): 4, ("130**", "3*", "*"): 4, ("148**", ">=40", "*"): 4}


def test_named_columns_and_values_stored_as_text(inpatient: Db) -> None:
    # level columns under other names, in another column order, the values as text: parsed like the source
    columns = {"label_40": sa.Text, "age_text": sa.String(8), "unused": sa.Integer, "decade": sa.Text, "top": sa.Text}
    rows = [(forty, str(value), 0, decade, top) for value, decade, forty, top in AGE_ROWS]
    table = age_table(inpatient, rows, columns)
    body = with_age(inpatient, f'{{ table = "{table}", columns = ["age_text", "decade", "label_40", "top"] }}')
    assert counts_at(inpatient, body, NODES) == counts_at(inpatient, inpatient_body(), NODES)


BAD_TABLES = [
    ("missing table", None, '{ table = "S.nope" }', r"\(table S\.nope\): table 'S\.nope' does not exist"),
    (
        "missing column",
        AGE_ROWS,
        '{ table = "S.age_levels", columns = ["level_0", "level_9"] }',
        r"table 'S\.age_levels' has no column\(s\) 'level_9' \(its columns: 'level_0', 'level_1'",
    ),
    (
        "coverage",
        [r for r in AGE_ROWS if r[0] != 55],
        '{ table = "S.age_levels" }',
        r"hierarchy for column 'age' \(table S\.age_levels\) misses 1 value\(s\) that occur in the source: 55$",
    ),
    (
        "null label",
        [(v, a, None if v == 55 else b, c) for v, a, b, c in AGE_ROWS],
        '{ table = "S.age_levels" }',
        r"row 56: value 55 has no level-2 label \(NULL in column 'level_2'\)",
    ),
    (
        "not a chain",
        [(v, a, "<40" if v == 29 else b, c) if v != 29 else (v, a, ">=40", c) for v, a, b, c in AGE_ROWS],
        '{ table = "S.age_levels" }',
        r"is not a function chain: level 1 value '<30' \(column 'level_1'\) maps to two level-2 values '<40' and '>=40'",
    ),
]


@pytest.mark.parametrize("case,rows,hierarchy,message", BAD_TABLES, ids=[c[0] for c in BAD_TABLES])
def test_a_bad_table_is_one_error_naming_table_and_column(inpatient: Db, case, rows, hierarchy, message) -> None:
    if rows is not None:
        age_table(inpatient, rows)
    body = with_age(inpatient, hierarchy.replace("S.", f"{inpatient.schema}."))
    conf = cfg.load(inpatient.write_config("patients", body))
    with pytest.raises(HierarchyError, match=message.replace("S\\.", re.escape(inpatient.schema) + r"\.")):
        with open_warehouse(conf):
            pass


def test_bad_values_and_levels_through_the_cli(inpatient: Db) -> None:
    text_levels = {"level_0": sa.Text, "level_1": sa.Text, "level_2": sa.Text, "level_3": sa.Text}
    rows = [("forty" if v == 40 else str(v), a, b, c) for v, a, b, c in AGE_ROWS]
    table = age_table(inpatient, rows, text_levels)
    gap = age_table(
        inpatient,
        [(v, a, c) for v, a, b, c in AGE_ROWS],
        {"level_0": sa.Integer, "level_1": sa.Text, "level_3": sa.Text},
        name="gap_levels",
    )
    before = inpatient.objects()
    for hierarchy, message in [
        (
            f'{{ table = "{table}" }}',
            re.escape(f"hierarchy for column 'age' (table {table}) row ")
            + r"\d+: value 'forty' in column 'level_0' is not a valid integer",
        ),  # rows sorted by the database's collation
        (
            f'{{ table = "{gap}" }}',
            re.escape(f"hierarchy for column 'age' (table {gap}): the table has level_3 but no level_2"),
        ),
    ]:
        path = inpatient.write_config("patients", with_age(inpatient, hierarchy))
        res = run_veil("counts", "--config", str(path), "--node", "0,0,0", "--json")
        assert res.returncode == 1 and re.search(message, error_line(res.stderr)), res.stderr
        doc = json.loads(res.stdout)  # --json: one document whatever happens
        assert doc["status"] == "failed" and re.search(message, doc["error"])
    assert inpatient.objects() == before


def test_a_sensitive_hierarchy_table_for_hierarchical_emd(inpatient: Db, tmp_path: Path) -> None:
    # Figure 3's blocks {HD,VI,C,C} ×2 and {C,HD,VI,VI} against the table (C 5/12, HD 3/12, VI 4/12), with
    # Cancer and Viral Infection in one group: EMD 1/24, 1/24, 1/12 (mass moves inside the group, cost 1/2).
    inpatient.create_table("conditions", {"c": sa.Text, "g": sa.Text, "top": sa.Text}, CONDITIONS)
    table = f"{inpatient.schema}.conditions"
    (tmp_path / "conditions.csv").write_text("".join(";".join(r) + "\n" for r in CONDITIONS), encoding="utf-8")
    results = []
    for hierarchy in (
        f'{{ table = "{table}", columns = ["c", "g", "top"] }}',
        f'{{ csv = "{tmp_path / "conditions.csv"}" }}',
    ):
        body = inpatient_body() + T_CLOSENESS.format(hierarchy=hierarchy)
        conf = cfg.load(inpatient.write_config("patients", body))
        with open_run(conf, rollup=False) as (resolved, wh):
            from veil.privacy import Specification

            spec = Specification(resolved.models, 0.0)
            nc = wh.counts((1, 2, 1))
            results.append(check_document(wh, spec, nc, spec.evaluate(nc, wh.rows))["models"][1])
    assert results[0] == results[1]
    assert results[0]["achieved"] == pytest.approx(1 / 12) and results[0]["violating_blocks"] == 0
    # the CLI's check reads the table too
    body = inpatient_body() + T_CLOSENESS.format(hierarchy=f'{{ table = "{table}", columns = ["c", "g", "top"] }}')
    res = run_veil("check", "--config", str(inpatient.write_config("patients", body)), "--node", "1,2,1", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["models"][1]["achieved"] == pytest.approx(1 / 12)


def test_a_model_hierarchy_table_error_names_the_model(inpatient: Db) -> None:
    body = inpatient_body() + T_CLOSENESS.format(hierarchy=f'{{ table = "{inpatient.schema}.nope" }}')
    conf = cfg.load(inpatient.write_config("patients", body))
    with pytest.raises(
        HierarchyError,
        match=r"\[\[models\]\] #2 \(t-closeness\): parameter 'hierarchy': hierarchy "
        r"for column 'condition' \(table .*\.nope\): table .* does not exist",
    ):
        with open_run(conf):
            pass


RELEASE = """
[release]
name = "inpatient"
schema = "{out}"
catalog_schema = "{cat}"
drop_columns = ["id"]
"""


def test_a_release_reads_table_hierarchies(inpatient: Db) -> None:
    table = age_table(inpatient)
    inpatient.create_table("conditions", {"c": sa.Text, "g": sa.Text, "top": sa.Text}, CONDITIONS)
    out, cat = (
        ("published", "veil") if inpatient.kind == "duckdb" else (f"{inpatient.schema}_pub", f"{inpatient.schema}_cat")
    )
    body = (
        with_age(inpatient, f'{{ table = "{table}" }}')
        + T_CLOSENESS.format(
            hierarchy=f'{{ table = "{inpatient.schema}.conditions", columns = ["c", "g", "top"] }}'
        ).replace("t = 0.1", "t = 0.2")
        + RELEASE.format(out=out, cat=cat)
    )
    path = str(inpatient.write_config("patients", body))
    try:
        assert run_veil("init", "--config", path).returncode == 0
        res = run_veil("release", "--config", path, "--json")
        assert res.returncode == 0, res.stderr
        doc = json.loads(res.stdout)
        assert doc["node"] == [1, 2, 1] and doc["rows_published"] == 12
        assert doc["achieved"]["t-closeness:condition"] == pytest.approx(1 / 12)
        published = inpatient.query(f'SELECT age, count(*) FROM "{out}".inpatient GROUP BY age ORDER BY age')
        assert published == [("<40", 8), (">=40", 4)]
        recorded = inpatient.query(
            f"SELECT attribute, source, leaves FROM \"{cat}\".hierarchies WHERE attribute = 'age'"
        )
        assert recorded == [("age", f"table {table}", 100)]
    finally:
        if inpatient.kind == "postgres":
            inpatient.execute(f'DROP SCHEMA IF EXISTS "{out}" CASCADE', f'DROP SCHEMA IF EXISTS "{cat}" CASCADE')


# --- veil hierarchy ---------------------------------------------------------------------------------------------


def test_check_reports_every_missing_value_of_every_hierarchy(inpatient: Db, tmp_path: Path) -> None:
    table = age_table(inpatient, [r for r in AGE_ROWS if r[0] not in (21, 55)])
    inpatient.create_table("conditions", {"c": sa.Text, "g": sa.Text, "top": sa.Text}, CONDITIONS[:2])
    body = with_age(inpatient, f'{{ table = "{table}" }}').replace(
        "hierarchy = { suppress = true }", 'hierarchy = { taxonomy = { "American" = ["*"] } }'
    ).replace("hierarchy = { mask = true }", f'hierarchy = {{ csv = "{tmp_path / "none.csv"}" }}') + T_CLOSENESS.format(
        hierarchy=f'{{ table = "{inpatient.schema}.conditions", columns = ["c", "g", "top"] }}'
    )
    path = str(inpatient.write_config("patients", body))
    before = inpatient.objects()
    res = run_veil("hierarchy", "--config", path, "--check", "--json")
    assert res.returncode == 1, res.stderr
    doc = json.loads(res.stdout)
    assert (doc["valid"], doc["hierarchies"], doc["invalid"]) == (False, 4, 4)
    zip_, age, nationality, condition = doc["checks"]
    assert zip_["error"].startswith("cannot read hierarchy file") and zip_["source_values"] == 4
    assert (age["source"], age["height"], age["values"], age["source_values"]) == (f"table {table}", 3, 98, 12)
    assert age["missing"] == [{"value": "21", "rows": 1}, {"value": "55", "rows": 1}] and age["missing_rows"] == 2
    assert nationality["missing"] == [
        {"value": "Indian", "rows": 2},
        {"value": "Japanese", "rows": 2},
        {"value": "Russian", "rows": 2},
    ]
    assert (nationality["missing_values"], nationality["missing_rows"]) == (3, 6)
    assert condition["role"].startswith("sensitive, t-closeness") and condition["missing"] == [
        {"value": "Viral Infection", "rows": 4}
    ]
    text = run_veil("hierarchy", "--config", path, "--check")
    assert text.returncode == 1
    lines = text.stdout.splitlines()
    assert "  21 (1 row)" in lines and "  55 (1 row)" in lines and "  Russian (2 rows)" in lines
    assert lines[-1] == "4 of 4 hierarchies invalid"
    assert inpatient.objects() == before


def test_export_any_hierarchy_and_read_it_back(inpatient: Db, tmp_path: Path) -> None:
    table = age_table(inpatient)
    inpatient.create_table("conditions", {"c": sa.Text, "g": sa.Text, "top": sa.Text}, CONDITIONS)
    body = with_age(inpatient, f'{{ table = "{table}" }}') + T_CLOSENESS.format(
        hierarchy=f'{{ table = "{inpatient.schema}.conditions", columns = ["c", "g", "top"] }}'
    )
    path = str(inpatient.write_config("patients", body))
    res = run_veil("hierarchy", "--config", path, "--column", "zip")
    assert res.returncode == 0 and res.stdout.splitlines() == [
        "13053;1305*;130**;13***;1****;*",
        "13068;1306*;130**;13***;1****;*",
        "14850;1485*;148**;14***;1****;*",
        "14853;1485*;148**;14***;1****;*",
    ]
    assert run_veil("hierarchy", "--config", path, "--column", "age").stdout == AGE_CSV.read_text(encoding="utf-8")
    assert (
        run_veil("hierarchy", "--config", path, "--column", "condition").stdout
        == "Cancer;other;*\nHeart Disease;heart;*\nViral Infection;other;*\n"
    )
    files = {}
    for column in ("zip", "age", "nationality"):
        files[column] = tmp_path / f"{column}.csv"
        res = run_veil("hierarchy", "--config", path, "--column", column, "--out", str(files[column]))
        assert res.returncode == 0 and res.stdout == "" and f"wrote the hierarchy of {column!r}" in res.stderr
    assert files["nationality"].read_text() == "American;*\nIndian;*\nJapanese;*\nRussian;*\n"
    exported = (
        inpatient_body()
        .replace("{ mask = true }", f'{{ csv = "{files["zip"]}" }}')
        .replace(f'{{ csv = "{AGE_CSV}" }}', f'{{ csv = "{files["age"]}" }}')
        .replace("{ suppress = true }", f'{{ csv = "{files["nationality"]}" }}')
    )
    assert counts_at(inpatient, exported, NODES) == counts_at(inpatient, body, NODES)
    res = run_veil("hierarchy", "--config", path, "--column", "id")
    assert res.returncode == 1 and "no hierarchy for column 'id'" in res.stderr
    res = run_veil("hierarchy", "--config", path)
    assert res.returncode == 1 and "exactly one of --column C" in res.stderr


def test_the_readme_check_example(tmp_path: Path) -> None:
    """The ``veil hierarchy --check`` output of docs/reference/config.md, produced on the inpatient tables (DuckDB)."""
    from veil.demo import inpatient_rows
    from tests.conftest import INPATIENT_COLUMNS

    db = Db("duckdb", f"duckdb:///{tmp_path / 'w.duckdb'}", "raw", tmp_path)
    db.create_table("patients", INPATIENT_COLUMNS, inpatient_rows())
    db.create_table("age", LEVELS, [r for r in AGE_ROWS if r[0] != 55], schema="dims")
    db.create_table("cond", {"c": sa.Text, "g": sa.Text, "top": sa.Text}, CONDITIONS[:2], schema="dims")
    body = with_age(db, '{ table = "dims.age" }') + T_CLOSENESS.format(
        hierarchy='{ table = "dims.cond", columns = ["c", "g", "top"] }'
    ).replace("0.1", "0.5")
    page = (Path(__file__).resolve().parent.parent / "docs" / "reference" / "config.md").read_text(encoding="utf-8")
    block = page[page.index("$ veil hierarchy --config veil.toml --check\n") :]
    shown = block[block.index("\n") + 1 : block.index("\n$ ")].splitlines()
    res = run_veil("hierarchy", "--config", str(db.write_config("patients", body)), "--check")
    assert res.returncode == 1 and res.stdout.splitlines() == shown
