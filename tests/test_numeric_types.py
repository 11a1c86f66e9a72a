"""Numeric columns at their extremes give the same answers on DuckDB and PostgreSQL (issue 33).

``DECIMAL(38,0)`` at ±(10^38 - 1), ``DECIMAL(18,3)`` at ±999999999999999.999, ``REAL`` next to ``DOUBLE``, and
DuckDB's ``HUGEINT`` / ``UBIGINT`` (next to PostgreSQL ``NUMERIC`` of their width), each under a CSV hierarchy
and under intervals, through the CLI: ``search``, ``check``, ``counts`` at level 0, ``release`` and the published
rows are the same on both backends.  A hierarchy value its column cannot hold is refused on both in the same one
line, naming the column and the value.

Before: DuckDB's SQLAlchemy driver bound every ``Decimal`` as a float and read every DECIMAL back through one
(10^38 - 1 became 99999999999999997748809823456034029568, 999999999999999.999 became 1000000000000000.000), read
a REAL widened to 64 bits (``0.1`` as ``0.10000000149011612``, so ``0.1`` in a CSV missed it and ``0.7`` fell in
``[0.6, 0.7)``), and typed a ``HUGEINT`` column's dimension table ``BIGINT``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
import sqlalchemy as sa

from tests.conftest import Db, ReleaseSchemas, error_line, run_veil

pytestmark = pytest.mark.notimpl(
    ["spark"],
    raises=NotImplementedError,
    reason="typed_table writes each value through db.engine with DuckDB's and PostgreSQL's "
    "types (HUGEINT, REAL, NUMERIC): Spark Connect has no SQLAlchemy engine",
)

BIG = 10**38 - 1
HUGE = 2**127 - 1

BODY = """
[[quasi_identifiers]]
column = "x"
hierarchy = {hierarchy}

[sensitive]
columns = ["s"]

[[models]]
type = "k-anonymity"
k = 2
"""


def typed_table(db: Db, name: str, sql_type: str, values: Sequence[Any]) -> None:
    """``name (id, x <sql_type>, s)``, a row per value.  Each value is bound as text and cast by the database, so
    it arrives exactly (``Db.create_table`` binds a ``Decimal`` through SQLAlchemy: on DuckDB, as a float)."""
    insert = sa.text(f'INSERT INTO "{db.schema}"."{name}" VALUES (:i, CAST(:v AS {sql_type}), :s)')
    engine = db.engine
    with engine.begin() as c:
        c.execute(sa.text(f'CREATE SCHEMA IF NOT EXISTS "{db.schema}"'))
        c.execute(sa.text(f'CREATE TABLE "{db.schema}"."{name}" (id INTEGER, x {sql_type}, s TEXT)'))
        c.execute(insert, [{"i": i, "v": str(v), "s": "ab"[i % 2]} for i, v in enumerate(values)])
    engine.dispose()


def csv_file(db: Db, name: str, lines: Sequence[tuple[Any, ...]]) -> str:
    """An ARX hierarchy file in the test's folder; the inline table that names it."""
    (db.workdir / name).write_text("".join(";".join(map(str, line)) + "\n" for line in lines), encoding="utf-8")
    return f'{{ csv = "{name}" }}'


def config(db: Db, schemas: ReleaseSchemas, table: str, hierarchy: str) -> str:
    body = BODY.format(hierarchy=hierarchy) + schemas.section(table, '["id"]')
    return str(db.write_config(table, body, name=f"{table}.toml"))


def document(*args: str, db: Db) -> dict[str, Any]:
    res = run_veil(*args, "--json", cwd=db.workdir)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def outcome(db: Db, schemas: ReleaseSchemas, table: str, hierarchy: str) -> dict[str, Any]:
    """What the CLI answers for ``table`` under ``hierarchy``: the optimal node, whether ``check`` passes it, the
    level-0 blocks (``counts``), the released node and the published rows per value of ``x``."""
    path = config(db, schemas, table, hierarchy)
    node = document("search", "--config", path, db=db)["optimal"]["node"]
    passed = document("check", "--config", path, "--node", ",".join(map(str, node)), db=db)["passed"]
    blocks = document("counts", "--config", path, "--node", "0", db=db)["blocks"]
    assert run_veil("init", "--config", path).returncode == 0
    released = document("release", "--config", path, db=db)["node"]
    published = db.query(f'SELECT CAST(x AS TEXT), count(*) FROM "{schemas.out}"."{table}" GROUP BY 1')
    return {
        "node": node,
        "passed": passed,
        "level_0": {b["key"][0]: b["size"] for b in blocks},
        "released": released,
        "published": {value: int(n) for value, n in published},
    }


def expected(level_0: dict[str, int], published: dict[str, int], node: int = 1) -> dict[str, Any]:
    return {"node": [node], "passed": True, "level_0": level_0, "released": [node], "published": published}


# Two values of each sign, one of them alone: level 0 fails k = 2, level 1 (the sign) passes with 3 rows each.
DECIMAL_38 = [-BIG, -BIG, -BIG + 1, BIG - 1, BIG - 1, BIG]
DECIMAL_18 = [
    "-999999999999999.999",
    "-999999999999999.999",
    "-999999999999999.998",
    "999999999999999.998",
    "999999999999999.998",
    "999999999999999.999",
]
DECIMALS = {  # type: values, level-0 blocks, interval width, the two intervals
    "DECIMAL(38,0)": (
        DECIMAL_38,
        {str(-BIG): 2, str(-BIG + 1): 1, str(BIG - 1): 2, str(BIG): 1},
        "5e37",
        (f"[-{10**38}, -{5 * 10**37})", f"[{5 * 10**37}, {10**38})"),
    ),
    "DECIMAL(18,3)": (
        DECIMAL_18,
        {v: DECIMAL_18.count(v) for v in DECIMAL_18},
        "1e15",
        ("[-1000000000000000, 0)", "[0, 1000000000000000)"),
    ),
}


@pytest.mark.parametrize("sql_type", list(DECIMALS))
def test_decimal_extremes_under_a_csv_hierarchy(db: Db, release_schemas: ReleaseSchemas, sql_type: str) -> None:
    values, level_0, _, _ = DECIMALS[sql_type]
    typed_table(db, "t", sql_type, values)
    hierarchy = csv_file(
        db, "h.csv", [(v, "negative" if str(v).startswith("-") else "positive", "*") for v in dict.fromkeys(values)]
    )
    assert outcome(db, release_schemas, "t", hierarchy) == expected(level_0, {"negative": 3, "positive": 3})


@pytest.mark.parametrize("sql_type", list(DECIMALS))
def test_decimal_extremes_under_intervals(db: Db, release_schemas: ReleaseSchemas, sql_type: str) -> None:
    values, level_0, width, (below, above) = DECIMALS[sql_type]
    typed_table(db, "t", sql_type, values)
    assert outcome(db, release_schemas, "t", f"{{ intervals = [{width}] }}") == expected(level_0, {below: 3, above: 3})


def test_real_and_double_under_a_csv_hierarchy(db: Db, release_schemas: ReleaseSchemas) -> None:
    """``0.1`` in the file is the REAL ``0.1`` as it is the DOUBLE ``0.1``."""
    values = [0.1, 0.1, 0.2, 0.7, 0.7, 1.5]
    hierarchy = csv_file(db, "h.csv", [(0.1, "low", "*"), (0.2, "low", "*"), (0.7, "high", "*"), (1.5, "high", "*")])
    want = expected({"0.1": 2, "0.2": 1, "0.7": 2, "1.5": 1}, {"low": 3, "high": 3})
    for sql_type in ("REAL", "DOUBLE PRECISION"):
        table = "t_" + sql_type.split()[0].lower()
        typed_table(db, table, sql_type, values)
        assert outcome(db, release_schemas, table, hierarchy) == want, sql_type


def test_real_and_double_under_intervals(db: Db, release_schemas: ReleaseSchemas) -> None:
    """The REAL ``0.7`` (stored 0.699999988...) is in ``[0.7, 0.8)``, like the DOUBLE ``0.7``."""
    values = [0.3, 0.3, 0.35, 0.7, 0.7, 0.75]
    want = expected({"0.3": 2, "0.35": 1, "0.7": 2, "0.75": 1}, {"[0.3, 0.4)": 3, "[0.7, 0.8)": 3})
    for sql_type in ("REAL", "DOUBLE PRECISION"):
        table = "t_" + sql_type.split()[0].lower()
        typed_table(db, table, sql_type, values)
        assert outcome(db, release_schemas, table, "{ intervals = [0.1] }") == want, sql_type


def test_a_real_written_with_its_32_bit_digits(db: Db, release_schemas: ReleaseSchemas) -> None:
    """A file may write a REAL as its widened 32-bit value (``0.10000000149011612``, as DuckDB's driver reads
    it): the same value, exported back as ``0.1`` on both backends."""
    typed_table(db, "t", "REAL", [0.1, 0.1, 0.2, 0.7, 0.7, 1.5])
    hierarchy = csv_file(
        db,
        "h.csv",
        [
            ("0.10000000149011612", "low", "*"),
            ("0.20000000298023224", "low", "*"),
            ("0.699999988079071", "high", "*"),
            ("1.5", "high", "*"),
        ],
    )
    path = config(db, release_schemas, "t", hierarchy)
    assert document("search", "--config", path, db=db)["optimal"]["node"] == [1]
    res = run_veil("hierarchy", "--config", path, "--column", "x", cwd=db.workdir)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "0.1;low;*\n0.2;low;*\n0.7;high;*\n1.5;high;*\n"


def _wide(db: Db, duckdb_type: str, digits: int) -> str:
    """DuckDB's own integer type; on PostgreSQL, the NUMERIC that holds the same values."""
    return duckdb_type if db.kind == "duckdb" else f"NUMERIC({digits},0)"


SENSITIVE = """
[[quasi_identifiers]]
column = "age"
hierarchy = { intervals = [5] }

[sensitive]
columns = ["s"]

[[models]]
type = "k-anonymity"
k = 2

[[models]]
type = "entropy-l-diversity"
attribute = "s"
l = 2

[[models]]
type = "t-closeness"
attribute = "s"
t = 0.5
distance = "ordered"
"""


def test_decimal_38_extremes_as_sensitive_values(db: Db, release_schemas: ReleaseSchemas) -> None:
    """10^38 - 1 and 10^38 - 2 are two sensitive values (one float), each counted and published as itself."""
    values = [BIG, BIG - 1, -BIG, 7]
    engine = db.engine
    with engine.begin() as c:
        c.execute(sa.text(f'CREATE SCHEMA IF NOT EXISTS "{db.schema}"'))
        c.execute(sa.text(f'CREATE TABLE "{db.schema}".t (id INTEGER, age INTEGER, s DECIMAL(38,0))'))
        c.execute(
            sa.text(f'INSERT INTO "{db.schema}".t VALUES (:i, :age, CAST(:s AS DECIMAL(38,0)))'),
            [{"i": i, "age": 20 + i % 3, "s": str(values[i % 4])} for i in range(24)],
        )
    engine.dispose()
    path = str(db.write_config("t", SENSITIVE + release_schemas.section("t", '["id"]')))
    assert document("search", "--config", path, db=db)["optimal"]["node"] == [0]
    assert run_veil("init", "--config", path).returncode == 0
    release = document("release", "--config", path, db=db)
    assert (release["node"], release["achieved"]["entropy-l-diversity:s"]) == ([0], 4.0)
    published = db.query(f'SELECT CAST(s AS TEXT), count(*) FROM "{release_schemas.out}".t GROUP BY 1')
    assert {value: int(n) for value, n in published} == {str(v): 6 for v in values}


WIDE = {  # DuckDB type: PostgreSQL's NUMERIC digits, values (the first three "low"), interval width, the intervals
    "HUGEINT": (
        39,
        [-HUGE, -HUGE, -HUGE + 1, HUGE - 1, HUGE - 1, HUGE],
        "1e38",
        (f"[-{2 * 10**38}, -{10**38})", f"[{10**38}, {2 * 10**38})"),
    ),
    "UBIGINT": (
        20,
        [0, 0, 1, 2**64 - 2, 2**64 - 2, 2**64 - 1],
        "1e19",
        (f"[0, {10**19})", f"[{10**19}, {2 * 10**19})"),
    ),
}


@pytest.mark.parametrize("duckdb_type", list(WIDE))
def test_wide_integers(db: Db, release_schemas: ReleaseSchemas, duckdb_type: str) -> None:
    """A DuckDB ``HUGEINT`` or ``UBIGINT`` column at its extremes (a ``BIGINT`` dimension table held neither)
    answers as PostgreSQL's ``NUMERIC`` of the same values, under a CSV and under intervals."""
    digits, values, width, (below, above) = WIDE[duckdb_type]
    sql_type = duckdb_type if db.kind == "duckdb" else f"NUMERIC({digits},0)"
    level_0 = {str(v): values.count(v) for v in values}
    typed_table(db, "t", sql_type, values)
    hierarchy = csv_file(db, "h.csv", [(v, "low" if v in values[:3] else "high", "*") for v in dict.fromkeys(values)])
    assert outcome(db, release_schemas, "t", hierarchy) == expected(level_0, {"low": 3, "high": 3})
    typed_table(db, "t2", sql_type, values)
    assert outcome(db, release_schemas, "t2", f"{{ intervals = [{width}] }}") == expected(level_0, {below: 3, above: 3})


REFUSED = {  # type, source values, hierarchy lines, what the one error line says (after "hierarchy for column 'x' (h.csv)")
    "decimal beyond its precision": (
        "DECIMAL(38,0)",
        [BIG, BIG],
        [(BIG, "a", "*"), (BIG + 1, "a", "*")],
        [f" lists value {BIG + 1}, which column 'x' (NUMERIC(38, 0)) cannot hold"],
    ),
    "decimal beyond its scale": (  # both backends rounded it onto 0.100: "lost rows (4 of 2)"
        "DECIMAL(18,3)",
        ["0.100", "0.100"],
        [("0.1", "a", "*"), ("0.1004", "a", "*")],
        [" lists value 0.1004, which column 'x' (NUMERIC(18, 3)) cannot hold"],
    ),
    "integer beyond its type": (
        "SMALLINT",
        [1, 1],
        [(1, "a", "*"), (100000, "a", "*")],
        [" lists value 100000, which column 'x' (SMALLINT) cannot hold"],
    ),
    "real beyond float4": (
        "REAL",
        [0.1, 0.1],
        [(0.1, "a", "*"), ("1e39", "a", "*")],
        [" line 2: value '1e39' ", " real"],
    ),
    "one real written twice": (  # the same float4 with two chains; both backends: "lost rows (4 of 2)"
        "REAL",
        [0.1, 0.1],
        [("0.1", "a", "*"), ("0.10000000149011612", "b", "*")],
        [" is not a function chain: value ", "(lines 1 and 2)"],
    ),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_value_the_column_cannot_hold_is_one_error(db: Db, release_schemas: ReleaseSchemas, case: str) -> None:
    sql_type, values, lines, says = REFUSED[case]
    typed_table(db, "t", sql_type, values)
    path = config(db, release_schemas, "t", csv_file(db, "h.csv", lines))
    assert run_veil("init", "--config", path).returncode == 0
    for command in ("search", "check", "release"):
        args = ("--node", "0") if command == "check" else ()
        res = run_veil(command, "--config", path, *args, cwd=db.workdir)
        assert res.returncode == 1, (command, res.stdout, res.stderr)
        line = error_line(res.stderr).replace(f"{db.workdir}/", "")
        assert line.startswith("hierarchy for column 'x' (h.csv)"), (command, line)
        assert all(part in line for part in says), (command, line)
        if len(says) == 1:  # Veil's own words: the whole line
            assert line == "hierarchy for column 'x' (h.csv)" + says[0], (command, line)
