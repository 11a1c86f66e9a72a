"""Bad input → exit code 1, one line naming the culprit, nothing left behind in the warehouse."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from tests.conftest import INPATIENT_COLUMNS, PG_URL, Db, error_line, inpatient_body, run_veil


def _run_counts(
    db: Db, config_body: str, table: str = "patients", source_extra: str = "", node: str = "1,1,1"
) -> tuple[int, str, str]:
    before = db.objects()
    path = db.write_config(table, config_body, source_extra=source_extra)
    res = run_veil("counts", "--config", str(path), "--node", node, "--json")
    assert db.objects() == before, "the failed run left objects behind"
    return res.returncode, res.stdout, res.stderr.strip()


def _one_line(stderr: str) -> str:
    return error_line(stderr)


@pytest.mark.spark_too
def test_missing_table(inpatient: Db) -> None:
    code, out, err = _run_counts(inpatient, inpatient_body(), table="no_such_table")
    assert code == 1 and json.loads(out)["status"] == "failed"
    line = _one_line(err)
    assert "no_such_table" in line and "does not exist" in line


@pytest.mark.spark_too
def test_missing_column(inpatient: Db) -> None:
    body = inpatient_body().replace('column = "nationality"', 'column = "citizenship"')
    code, _, err = _run_counts(inpatient, body)
    line = _one_line(err)
    assert code == 1 and "'citizenship'" in line and "patients" in line


def test_hierarchy_missing_values(inpatient: Db, tmp_path) -> None:
    csv = tmp_path / "age.csv"
    csv.write_text("".join(f"{a};<40;*\n" for a in range(0, 40)) + "47;>=40;*\n", encoding="utf-8")
    body = inpatient_body().replace(
        str(__import__("veil.demo", fromlist=["HIERARCHIES"]).HIERARCHIES / "inpatient_age.csv"), str(csv)
    )
    code, _, err = _run_counts(inpatient, body)
    line = _one_line(err)
    # ages 49, 50, 55 occur in the source but not in the file
    assert code == 1 and "'age'" in line and "misses 3 value(s)" in line and "49, 50, 55" in line


def test_hierarchy_not_a_function_chain(inpatient: Db, tmp_path) -> None:
    csv = tmp_path / "age.csv"
    rows = [f"{a};{a // 10 * 10}s;{'young' if a < 40 else 'old'};*" for a in range(100)]
    rows[45] = "45;40s;young;*"  # 40s → old (40..49) and young (45): two parents
    csv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    body = inpatient_body().replace(
        str(__import__("veil.demo", fromlist=["HIERARCHIES"]).HIERARCHIES / "inpatient_age.csv"), str(csv)
    )
    code, _, err = _run_counts(inpatient, body)
    line = _one_line(err)
    assert code == 1 and "not a function chain" in line and "'40s'" in line


@pytest.mark.spark_too
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


@pytest.mark.parametrize(
    "node, message",
    [("1,1", "has 2 levels"), ("9,0,0", "exceeds the hierarchy height 5"), ("a,0,0", "not a whole number")],
)
def test_bad_node(inpatient: Db, node: str, message: str) -> None:
    code, _, err = _run_counts(inpatient, inpatient_body(), node=node)
    assert code == 1 and message in _one_line(err)


@pytest.mark.notimpl(
    ["spark"],
    reason=(
        "its setup DDL types a column INT[], PostgreSQL's array syntax (Spark's is ARRAY<INT>: "
        "tests/spark/test_spark_backend.py::test_hostile_names_and_an_unsupported_type names "
        "Spark's)"
    ),
)
def test_unsupported_column_type_is_named(db: Db) -> None:
    if db.kind == "duckdb":
        db.execute(
            "CREATE SCHEMA IF NOT EXISTS raw",
            "CREATE TABLE raw.patients (zip VARCHAR, age INTEGER, nationality VARCHAR, condition INTEGER[])",
        )
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


# --- issue 10, item 9: bad input from real warehouses ------------------------------------------------------

FLOATS = {"id": sa.Integer, "zip": sa.String, "age": sa.Double, "score": sa.Double}
NAN, INF = float("nan"), float("inf")


def _floats_body(age_hierarchy: str, models: str = '[[models]]\ntype = "k-anonymity"\nk = 2\n') -> str:
    return (
        f'[[quasi_identifiers]]\ncolumn = "zip"\nhierarchy = {{ mask = true }}\n\n'
        f'[[quasi_identifiers]]\ncolumn = "age"\nhierarchy = {age_hierarchy}\n\n'
        f'[sensitive]\ncolumns = ["score"]\n\n{models}'
    )


def _float_rows(age: list[float], score: list[float]) -> list[tuple]:
    return [(i, f"1305{i % 3}", a, s) for i, (a, s) in enumerate(zip(age, score))]


def test_config_file_not_utf8_is_one_line_naming_the_file(tmp_path) -> None:
    path = tmp_path / "latin1.toml"
    path.write_bytes('[source]\nurl = "duckdb:///w.duckdb"\ntable = "raw.café"\n'.encode("latin-1"))
    res = run_veil("check", "--config", str(path), "--node", "0", "--json")
    line = _one_line(res.stderr)
    assert res.returncode == 1 and json.loads(res.stdout)["status"] == "failed"
    assert str(path) in line and "not UTF-8" in line and "0xe9 on line 3" in line


@pytest.mark.parametrize(
    "hierarchy, key, shown",
    [
        ("{ intervals = [inf] }", "intervals", "[inf]"),
        ("{ intervals = [-inf] }", "intervals", "[-inf]"),
        ("{ intervals = [nan] }", "intervals", "[nan]"),
        ("{ intervals = [10, inf] }", "intervals", "[10, inf]"),
        ("{ intervals = [10], start = nan }", "start", "nan"),
        ("{ intervals = [10], start = -inf }", "start", "-inf"),
    ],
)
def test_non_finite_interval_widths_and_start(tmp_path, hierarchy: str, key: str, shown: str) -> None:
    path = tmp_path / "v.toml"
    path.write_text('[source]\nurl = "duckdb:///w.duckdb"\ntable = "raw.t"\n' + _floats_body(hierarchy))
    res = run_veil("check", "--config", str(path), "--node", "0,0")
    line = _one_line(res.stderr)
    assert res.returncode == 1
    assert f"('age') hierarchy key '{key}'" in line and shown in line and "finite" in line


@pytest.mark.parametrize("builder", ["{ intervals = [10, 20] }", "{ mask = true }", "{ suppress = true }"])
@pytest.mark.spark_too
def test_nan_and_inf_in_a_double_quasi_identifier(db: Db, builder: str) -> None:
    db.create_table("t", FLOATS, _float_rows([20.0, NAN, INF, -INF, 25.0, NAN], [1.0] * 6))
    code, out, err = _run_counts(db, _floats_body(builder), table="t", node="0,0")
    line = _one_line(err)
    assert code == 1 and json.loads(out)["status"] == "failed"
    assert f"'{db.schema}.t'" in line and "column 'age' in 4 rows (NaN: 2, Infinity: 1, -Infinity: 1)" in line


@pytest.mark.parametrize(
    "model",
    [
        'type = "t-closeness"\nattribute = "score"\nt = 0.5\ndistance = "ordered"',
        'type = "delta-l-diversity"\nattribute = "score"\ndelta = 1\nl = 2',
    ],
)
def test_nan_and_inf_as_sensitive_value(db: Db, model: str) -> None:
    """Refused at prepare time on both backends, for every command (search as well as counts), with no numpy
    warning on the way ((δ,l) used to divide infinities)."""
    db.create_table("t", FLOATS, _float_rows([20.0] * 6, [1.0, 2.0, INF, NAN, 3.0, -INF]))
    body = _floats_body("{ intervals = [10, 20] }", f"[[models]]\n{model}\n")
    code, _, err = _run_counts(db, body, table="t", node="0,0")
    assert code == 1 and "column 'score' in 3 rows (NaN: 1, Infinity: 1, -Infinity: 1)" in _one_line(err)
    res = run_veil("search", "--config", str(db.workdir / "veil.toml"))
    assert res.returncode == 1 and "column 'score' in 3 rows" in _one_line(res.stderr)
    assert "Warning" not in res.stderr


def test_proximity_models_refuse_non_finite_values_themselves() -> None:
    import numpy as np

    from veil.counts import SensitiveDomain
    from veil.errors import SourceError
    from veil.models.proximity import require_finite

    dom = SensitiveDomain("score", np.array([-np.inf, 1.0, np.inf]), np.array([1, 2, 3]), numeric=True)
    with pytest.raises(SourceError, match=r"'score' holds non-finite values \(-inf in 1 rows, inf in 3 rows\)"):
        require_finite(dom, "delta-l-diversity")
    require_finite(SensitiveDomain("score", np.array([1.0, 2.0]), np.array([1, 1]), numeric=True), "m")


CHARS = """
[[quasi_identifiers]]
column = "zip"
hierarchy = { mask = true }

[sensitive]
columns = ["code"]

[[models]]
type = "distinct-l-diversity"
attribute = "code"
l = 2
"""


@pytest.mark.notimpl(
    ["spark"],
    reason=("its setup DDL declares VARCHAR without a length, which Spark SQL refuses (DATATYPE_MISSING_SIZE)"),
)
def test_char_n_quasi_identifier_keeps_every_row(db: Db, release_schemas) -> None:
    """PostgreSQL's char(5) pads '130' to '130  '; Veil reads it as text ('130'), so no row is lost and labels
    carry no padding.  DuckDB has no padded char: VARCHAR there gives the same answers."""
    zips = ["1305", "13068", "130", "1305", "13068", "130"]
    codes = ["a", "bb", "a", "bb", "a", "bb"]
    if db.kind == "postgres":
        db.execute(f'CREATE TABLE "{db.schema}".c (id INTEGER, zip CHAR(5), code CHAR(3))')
    else:
        db.execute("CREATE SCHEMA IF NOT EXISTS raw", "CREATE TABLE raw.c (id INTEGER, zip VARCHAR, code VARCHAR)")
    table = sa.table("c", sa.column("id"), sa.column("zip"), sa.column("code"), schema=db.schema)
    db.execute(table.insert().values([{"id": i, "zip": z, "code": c} for i, (z, c) in enumerate(zip(zips, codes))]))
    code, out, err = _run_counts(db, CHARS, table="c", node="0")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["rows"] == 6
    assert {b["key"][0]: (b["size"], b["sensitive"]["code"]) for b in doc["blocks"]} == {
        "130": (2, {"a": 1, "bb": 1}),
        "1305": (2, {"a": 1, "bb": 1}),
        "13068": (2, {"a": 1, "bb": 1}),
    }
    path = db.write_config("c", CHARS + release_schemas.section("chars"))
    assert run_veil("init", "--config", str(path)).returncode == 0
    res = run_veil("release", "--config", str(path), "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert (doc["node"], doc["rows_published"], doc["rows_suppressed"]) == ([0], 6, 0)
    published = db.query(f'SELECT zip, code FROM "{release_schemas.out}".chars ORDER BY zip, code')
    assert published == [("130", "a"), ("130", "bb"), ("1305", "a"), ("1305", "bb"), ("13068", "a"), ("13068", "bb")]


def test_bigint_above_2_to_the_53_in_a_csv_hierarchy(db: Db, tmp_path) -> None:
    """2**53 and 2**53 + 1 are one float: parsed through float they would collide.  Exact integers keep them
    apart (their blocks stay separate at level 1)."""
    big = 2**53
    db.create_table(
        "b",
        {"id": sa.Integer, "acct": sa.BigInteger, "code": sa.String},
        [(1, big, "x"), (2, big, "y"), (3, big + 1, "x"), (4, big + 1, "y"), (5, big + 1, "z")],
    )
    csv = tmp_path / "acct.csv"
    csv.write_text(f"{big};even;*\n{big + 1};odd;*\n", encoding="utf-8")
    body = (
        f'[[quasi_identifiers]]\ncolumn = "acct"\nhierarchy = {{ csv = "{csv}" }}\n\n'
        '[sensitive]\ncolumns = ["code"]\n\n[[models]]\ntype = "k-anonymity"\nk = 2\n'
    )
    code, out, err = _run_counts(db, body, table="b", node="1")
    assert code == 0, err
    assert {b["key"][0]: b["size"] for b in json.loads(out)["blocks"]} == {"even": 2, "odd": 3}
    code, out, err = _run_counts(db, body, table="b", node="0")
    assert code == 0, err
    assert {b["key"][0]: b["size"] for b in json.loads(out)["blocks"]} == {str(big): 2, str(big + 1): 3}


def test_missing_duckdb_file_is_refused_and_not_created(tmp_path) -> None:
    """DuckDB only: a URL to a file that is not there would create an empty database.  `veil seed` may
    create it."""
    path = tmp_path / "v.toml"
    path.write_text(
        '[source]\nurl = "duckdb:///typo.duckdb"\ntable = "raw.census"\n' + _floats_body("{ suppress = true }")
    )
    for command in (["check", "--node", "0,0"], ["search"], ["init"]):
        res = run_veil(command[0], "--config", str(path), *command[1:])
        line = _one_line(res.stderr)
        assert res.returncode == 1 and f"the DuckDB file {tmp_path / 'typo.duckdb'} does not exist" in line
    assert not (tmp_path / "typo.duckdb").exists()
    res = run_veil("seed", "--config", str(path), "--rows", "50")
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "typo.duckdb").exists()


def test_empty_source_table(db: Db) -> None:
    db.create_table("t", FLOATS, [])
    code, _, err = _run_counts(db, _floats_body("{ suppress = true }"), table="t", node="0,0")
    assert code == 1 and _one_line(err) == f"source table '{db.schema}.t' has no rows; there is nothing to anonymize"


def test_all_rows_dropped_for_nulls(db: Db) -> None:
    db.create_table("t", FLOATS, [(1, None, 20.0, 1.0), (2, "13053", None, 2.0), (3, None, None, 3.0)])
    code, _, err = _run_counts(
        db, _floats_body("{ suppress = true }"), table="t", node="0,0", source_extra='nulls = "drop"\n'
    )
    line = _one_line(err)
    assert code == 1 and line.startswith(
        f"all 3 rows of source table '{db.schema}.t' have NULLs in column(s) 'zip' (2 rows), 'age' (2 rows)"
    )
    assert "hierarch" not in line


def test_unique_or_float_quasi_identifier_warns(db: Db) -> None:
    db.create_table(
        "t",
        {"id": sa.Integer, "zip": sa.String, "age": sa.Integer, "score": sa.Double},
        [(i, "13053", 20 + i % 2, i // 2 + 0.5) for i in range(120)],
    )
    body = (
        '[[quasi_identifiers]]\ncolumn = "id"\nhierarchy = { suppress = true }\n\n'
        '[[quasi_identifiers]]\ncolumn = "age"\nhierarchy = { suppress = true }\n\n'
        '[[quasi_identifiers]]\ncolumn = "score"\nhierarchy = { intervals = [10] }\n\n'
        '[[models]]\ntype = "k-anonymity"\nk = 2\n'
    )
    code, _, err = _run_counts(db, body, table="t", node="1,1,1")
    assert code == 0, err
    warnings = [line for line in err.splitlines() if " WARNING " in line]
    assert len(warnings) == 2, err
    assert (
        "quasi-identifier 'id' is unique per row (120 distinct values in 120 rows): it looks like a direct "
        "identifier" in warnings[0]
    )
    assert "quasi-identifier 'score' is a floating-point column" in warnings[1]
    assert "look like a direct identifier" in warnings[1]
    db.create_table(
        "small",
        {"id": sa.Integer, "zip": sa.String, "age": sa.Integer, "score": sa.Double},
        [(i, "13053", 20 + i, i + 0.5) for i in range(12)],
    )  # 12 patients, 12 ages: normal
    code, _, err = _run_counts(db, body, table="small", node="1,1,1")
    assert code == 0 and " WARNING " not in err, err


NULLS_UNREAD = """
[[quasi_identifiers]]
column = "age"
hierarchy = { intervals = [10] }

[sensitive]
columns = ["condition"]

[[models]]
type = "k-anonymity"
k = 2
"""


def test_one_null_policy_for_check_search_and_release(db: Db, release_schemas) -> None:
    """NULLs only in a sensitive column no model reads: with nulls = "drop" that row is left out by every
    command, so search picks the node release publishes (age 3 alone would otherwise force level 1)."""
    db.create_table(
        "t",
        {"id": sa.Integer, "age": sa.Integer, "condition": sa.String},
        [(1, 1, "a"), (2, 1, "b"), (3, 2, "a"), (4, 2, "b"), (5, 3, None)],
    )
    path = str(db.write_config("t", NULLS_UNREAD + release_schemas.section("nulls"), source_extra='nulls = "drop"\n'))
    check = json.loads(run_veil("check", "--config", path, "--node", "0", "--json").stdout)
    assert (check["rows"], check["passed"]) == (4, True)
    res = run_veil("search", "--config", path, "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["optimal"]["node"] == [0]
    assert run_veil("init", "--config", path).returncode == 0
    res = run_veil("release", "--config", path, "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert (doc["node"], doc["rows_published"]) == ([0], 4)
    path_error = db.write_config("t", NULLS_UNREAD, name="error.toml")  # default nulls = "error": refused alike
    for args in (["check", "--node", "0"], ["search"]):
        res = run_veil(args[0], "--config", str(path_error), *args[1:])
        assert res.returncode == 1 and "'condition' (1 rows)" in _one_line(res.stderr)


def test_release_names_longer_than_63_bytes_are_refused(db: Db, release_schemas) -> None:
    """`<name>_v1_blocks` and `<name>_v1` would collide once PostgreSQL truncates them to 63 bytes.  44 bytes
    is the longest name whose every object fits (`<name>_v2147483647_blocks`), and it publishes."""
    db.create_table(
        "t",
        {"id": sa.Integer, "age": sa.Integer, "condition": sa.String},
        [(1, 1, "a"), (2, 1, "b"), (3, 2, "a"), (4, 2, "b")],
    )
    long = "n" * 45
    path = str(db.write_config("t", NULLS_UNREAD + release_schemas.section(long)))
    res = run_veil("release", "--config", path)
    line = _one_line(res.stderr)
    assert res.returncode == 1 and f"[release] name '{long}' is too long" in line and "at most 44 bytes" in line
    fits = "n" * 44
    path = str(db.write_config("t", NULLS_UNREAD + release_schemas.section(fits)))
    assert run_veil("init", "--config", path).returncode == 0
    res = run_veil("release", "--config", path, "--json")
    assert res.returncode == 0, res.stderr
    blocks = sorted(db.query(f'SELECT * FROM "{release_schemas.out}"."{fits}_v1_blocks"'))
    assert blocks == [("1", 2, "a", 1), ("1", 2, "b", 1), ("2", 2, "a", 1), ("2", 2, "b", 1)]  # key, size, value, n
    assert sorted(db.query(f'SELECT age, condition FROM "{release_schemas.out}"."{fits}_v1"')) == [
        ("1", "a"),
        ("1", "b"),
        ("2", "a"),
        ("2", "b"),
    ]


def test_unqualified_source_table_with_a_release_is_refused(db: Db, release_schemas) -> None:
    """The source's schema of an unqualified table is only known on the connection (search_path, DuckDB's
    main): Veil asks for schema.table so that the release never lands in the source's schema."""
    db.create_table("t", {"id": sa.Integer, "age": sa.Integer, "condition": sa.String}, [(1, 1, "a")])
    path = db.write_config("t", NULLS_UNREAD + release_schemas.section("unq"))
    path.write_text(path.read_text().replace(f'table = "{db.schema}.t"', 'table = "t"'))
    for command in ("release", "init"):
        res = run_veil(command, "--config", str(path))
        line = _one_line(res.stderr)
        assert res.returncode == 1 and "[source] table 't' names no schema" in line and "schema.table" in line
    assert ("published", "unq") not in db.objects()
