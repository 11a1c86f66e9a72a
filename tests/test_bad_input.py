"""Bad input → exit code 1, one line naming the culprit, nothing left behind in the warehouse."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from tests.conftest import INPATIENT_COLUMNS, PG_URL, Db, error_line, inpatient_body, run_veil


def _run_counts(db: Db, config_body: str, table: str = "patients", source_extra: str = "",
                node: str = "1,1,1") -> tuple[int, str, str]:
    before = db.objects()
    path = db.write_config(table, config_body, source_extra=source_extra)
    res = run_veil("counts", "--config", str(path), "--node", node, "--json")
    assert db.objects() == before, "the failed run left objects behind"
    return res.returncode, res.stdout, res.stderr.strip()


def _one_line(stderr: str) -> str:
    return error_line(stderr)


def test_missing_table(inpatient: Db) -> None:
    code, out, err = _run_counts(inpatient, inpatient_body(), table="no_such_table")
    assert code == 1 and json.loads(out)["status"] == "failed"
    line = _one_line(err)
    assert "no_such_table" in line and "does not exist" in line


def test_missing_column(inpatient: Db) -> None:
    body = inpatient_body().replace('column = "nationality"', 'column = "citizenship"')
    code, _, err = _run_counts(inpatient, body)
    line = _one_line(err)
    assert code == 1 and "'citizenship'" in line and "patients" in line


def test_hierarchy_missing_values(inpatient: Db, tmp_path) -> None:
    csv = tmp_path / "age.csv"
    csv.write_text("".join(f"{a};<40;*\n" for a in range(0, 40)) + "47;>=40;*\n", encoding="utf-8")
    body = inpatient_body().replace(str(__import__("veil.demo", fromlist=["HIERARCHIES"]).HIERARCHIES /
                                        "inpatient_age.csv"), str(csv))
    code, _, err = _run_counts(inpatient, body)
    line = _one_line(err)
    # ages 49, 50, 55 occur in the source but not in the file
    assert code == 1 and "'age'" in line and "misses 3 value(s)" in line and "49, 50, 55" in line


def test_hierarchy_not_a_function_chain(inpatient: Db, tmp_path) -> None:
    csv = tmp_path / "age.csv"
    rows = [f"{a};{a // 10 * 10}s;{'young' if a < 40 else 'old'};*" for a in range(100)]
    rows[45] = "45;40s;young;*"  # 40s → old (40..49) and young (45): two parents
    csv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    body = inpatient_body().replace(str(__import__("veil.demo", fromlist=["HIERARCHIES"]).HIERARCHIES /
                                        "inpatient_age.csv"), str(csv))
    code, _, err = _run_counts(inpatient, body)
    line = _one_line(err)
    assert code == 1 and "not a function chain" in line and "'40s'" in line


def test_nulls_are_an_error_by_default_and_can_be_dropped(db: Db) -> None:
    from veil.demo import inpatient_rows

    rows = inpatient_rows() + [(13, None, 33, "American", "Cancer"), (14, "13053", 30, "Indian", None)]
    db.create_table("patients", INPATIENT_COLUMNS, rows)
    code, _, err = _run_counts(db, inpatient_body())
    line = _one_line(err)
    assert code == 1 and "NULL" in line and "'zip' (1 rows)" in line and "'condition' (1 rows)" in line
    code, out, err = _run_counts(db, inpatient_body(), source_extra='nulls = "drop"\n')
    assert code == 0, err
    assert '"rows": 12' in out


def test_unknown_config_key(inpatient: Db) -> None:
    code, _, err = _run_counts(inpatient, inpatient_body() + '\n[search]\nstrategy = "optimal"\nmetrik = "height"\n')
    line = _one_line(err)
    assert code == 1 and "'metrik'" in line and "veil.toml" in line


@pytest.mark.parametrize("node, message", [("1,1", "has 2 levels"), ("9,0,0", "exceeds the hierarchy height 5"),
                                           ("a,0,0", "not a whole number")])
def test_bad_node(inpatient: Db, node: str, message: str) -> None:
    code, _, err = _run_counts(inpatient, inpatient_body(), node=node)
    assert code == 1 and message in _one_line(err)


def test_unsupported_column_type_is_named(db: Db) -> None:
    if db.kind == "duckdb":
        db.execute('CREATE SCHEMA IF NOT EXISTS raw', 'CREATE TABLE raw.patients (zip VARCHAR, age INTEGER, '
                   'nationality VARCHAR, condition INTEGER[])')
    else:
        db.execute(f'CREATE TABLE "{db.schema}".patients (zip TEXT, age INTEGER, nationality TEXT, condition INT[])')
    code, _, err = _run_counts(db, inpatient_body())
    line = _one_line(err)
    assert code == 1 and "'condition'" in line and "cannot generalize or count" in line


def test_bad_url_env(inpatient: Db) -> None:
    path = inpatient.workdir / "bad.toml"
    path.write_text('[source]\nurl_env = "VEIL_NOT_SET_ANYWHERE"\ntable = "x"\n' + inpatient_body())
    res = run_veil("counts", "--config", str(path))
    assert res.returncode == 1 and "VEIL_NOT_SET_ANYWHERE" in _one_line(res.stderr)


def test_unreachable_postgres_is_one_line(tmp_path) -> None:
    path = tmp_path / "v.toml"
    path.write_text('[source]\nurl_env = "VEIL_DEAD_URL"\ntable = "x"\n' + inpatient_body())
    dead = sa.make_url(PG_URL).set(port=1).render_as_string(hide_password=False)  # nothing listens on port 1
    res = run_veil("counts", "--config", str(path), env={"VEIL_DEAD_URL": dead})
    line = _one_line(res.stderr)
    assert res.returncode == 1 and "cannot connect to PostgreSQL" in line
    assert "sqlalchemy" not in line.lower()


def test_leftovers_check_sees_objects(inpatient: Db) -> None:
    """The leftover check itself can fail: a created table shows up."""
    before = inpatient.objects()
    inpatient.create_table("extra", {"a": sa.Integer}, [])
    assert inpatient.objects() - before == {(inpatient.schema, "extra")}
