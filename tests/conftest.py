"""Shared fixtures.  ``db`` runs a test on both real backends: embedded DuckDB and PostgreSQL.

PostgreSQL comes from ``VEIL_TEST_PG_URL`` (default: the local server's ``test`` database).  Locally a
missing server skips the PostgreSQL half.  Each PostgreSQL test works in a schema of its own, dropped
afterwards; each DuckDB test in a file of its own.

With ``CI=true`` every test must run: a skip (a missing server, a missing dev dependency such as pycanon
or scipy) is reported as a failure.  Hypothesis runs with the ``veil`` profile: no deadline (the machines
that run the suite are loaded), ``VEIL_HYPOTHESIS_PROFILE=hard`` for longer hunts.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, settings

PG_URL = os.environ.get("VEIL_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
PG_ENV = "VEIL_TEST_PG_URL"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

os.environ.setdefault(PG_ENV, PG_URL)

settings.register_profile("veil", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True)
settings.register_profile("hard", parent=settings.get_profile("veil"))
settings.load_profile(os.environ.get("VEIL_HYPOTHESIS_PROFILE", "veil"))


def _skip_reason(longrepr: Any) -> str:
    return str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if IN_CI and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped with CI=true, where every test must run: {_skip_reason(report.longrepr)}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if IN_CI and report.skipped:
        report.outcome = "failed"
        report.longrepr = f"skipped with CI=true, where every test must run: {_skip_reason(report.longrepr)}"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run in parallel (pytest-xdist, ``--dist loadgroup``), the Spark tests stay on one worker, in order: they
    share one local cluster and its session, and their timeouts assume it is not shared with another test."""
    for item in items:
        if item.get_closest_marker("spark") is not None:
            item.add_marker(pytest.mark.xdist_group("spark"))


def _pg_available() -> str | None:
    try:
        engine = sa.create_engine(PG_URL, poolclass=sa.pool.NullPool, connect_args={"connect_timeout": 3})
        with engine.connect() as c:
            c.execute(sa.text("SELECT 1"))
        engine.dispose()
        return None
    except Exception as exc:  # noqa: BLE001 - any failure means "not available"
        return str(exc).splitlines()[0]


_PG_PROBLEM: str | None | bool = False


def pg_problem() -> str | None:
    global _PG_PROBLEM
    if _PG_PROBLEM is False:
        _PG_PROBLEM = _pg_available()
    return _PG_PROBLEM  # type: ignore[return-value]


def require_pg() -> None:
    problem = pg_problem()
    if problem:
        if IN_CI:
            pytest.fail(f"PostgreSQL is required in CI but unavailable at {PG_URL}: {problem}")
        pytest.skip(f"PostgreSQL unavailable at {PG_URL}: {problem}")


@dataclass
class Db:
    """A backend under test: where the source lives and how to write a config pointing at it."""

    kind: str
    url: str              # SQLAlchemy URL of the database
    schema: str           # the source schema of this test
    workdir: Path

    @property
    def engine(self) -> sa.Engine:
        return sa.create_engine(self.url, poolclass=sa.pool.NullPool)

    def execute(self, *statements: Any) -> None:
        eng = self.engine
        with eng.begin() as c:
            for s in statements:
                c.execute(sa.text(s) if isinstance(s, str) else s)
        eng.dispose()

    def query(self, statement: Any) -> list[tuple[Any, ...]]:
        eng = self.engine
        with eng.connect() as c:
            rows = [tuple(r) for r in c.execute(sa.text(statement) if isinstance(statement, str) else statement)]
        eng.dispose()
        return rows

    def create_table(self, name: str, columns: dict[str, Any], rows: Sequence[Sequence[Any]],
                     schema: str | None = None) -> sa.Table:
        """Create ``schema.name`` (default: the test's schema) with SQLAlchemy types and insert ``rows``."""
        md = sa.MetaData()
        table = sa.Table(name, md, *(sa.Column(c, t) for c, t in columns.items()), schema=schema or self.schema)
        eng = self.engine
        with eng.begin() as c:
            c.execute(sa.schema.CreateSchema(schema or self.schema, if_not_exists=True))
            c.execute(sa.schema.CreateTable(table))
            if rows:
                c.execute(table.insert(), [dict(zip(columns, r)) for r in rows])
        eng.dispose()
        return table

    def source_section(self, table: str) -> str:
        """The ``[source]`` TOML for a table of this test's schema."""
        if self.kind == "duckdb":
            return f'[source]\nurl = "{self.url}"\ntable = "{self.schema}.{table}"\n'
        return f'[source]\nurl_env = "{PG_ENV}"\ntable = "{self.schema}.{table}"\n'

    def write_config(self, table: str, body: str, name: str = "veil.toml", source_extra: str = "") -> Path:
        path = self.workdir / name
        path.write_text(self.source_section(table) + source_extra + "\n" + body, encoding="utf-8")
        return path

    def objects(self) -> set[tuple[str, str]]:
        """Every (schema, table) in the database outside the system schemas, for leftover checks."""
        rows = self.query("SELECT table_schema, table_name FROM information_schema.tables "
                          "WHERE table_schema NOT IN ('information_schema', 'pg_catalog')")
        # other tests (other processes, sharing the server) work in veil_test_* schemas of their own: not ours
        return {(s, t) for s, t in rows if not str(s).startswith(("pg_temp", "pg_toast"))
                and (not str(s).startswith("veil_test_") or str(s).startswith(self.schema))}


@pytest.fixture(params=["duckdb", "postgres"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Db]:
    if request.param == "duckdb":
        yield Db("duckdb", f"duckdb:///{tmp_path / 'warehouse.duckdb'}", "raw", tmp_path)
    else:
        require_pg()
        schema = f"veil_test_{uuid.uuid4().hex[:10]}"
        d = Db("postgres", PG_URL, schema, tmp_path)
        d.execute(f'CREATE SCHEMA "{schema}"')
        try:
            yield d
        finally:
            d.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@dataclass(frozen=True)
class ReleaseSchemas:
    """Where a release test publishes (``out``) and keeps its catalog (``cat``)."""

    out: str
    cat: str

    def section(self, name: str = "inpatient", drop: str = '["id"]') -> str:
        return (f'\n[release]\nname = "{name}"\nschema = "{self.out}"\ncatalog_schema = "{self.cat}"\n'
                f"drop_columns = {drop}\n")


@pytest.fixture
def release_schemas(db: Db) -> Iterator[ReleaseSchemas]:
    """Output and catalog schemas of a release test: fixed on DuckDB (a file per test), unique on
    PostgreSQL and dropped afterwards."""
    if db.kind == "duckdb":
        yield ReleaseSchemas("published", "veil")
    else:
        schemas = ReleaseSchemas(f"{db.schema}_pub", f"{db.schema}_cat")
        try:
            yield schemas
        finally:
            db.execute(*(f'DROP SCHEMA IF EXISTS "{s}" CASCADE' for s in (schemas.out, schemas.cat)))


def run_veil(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
             timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run the ``veil`` CLI in a subprocess (as a scheduler would)."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "veil.cli", *args], capture_output=True, text=True,
                          cwd=cwd, env=full_env, timeout=timeout)


# One log line of a command whose stderr is not a terminal (veil.log): ISO time, level, command, message.
LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d (DEBUG|INFO|WARNING|ERROR) veil( [a-z]+)?: \S.*$")


def error_line(stderr: str) -> str:
    """The one error of a failed command: every stderr line is a well-formed log line (no traceback, no
    wrapped fragment) and exactly one is an ERROR; its message is returned."""
    lines = stderr.splitlines()
    assert lines and all(LOG_LINE.match(line) for line in lines), stderr
    errors = [line for line in lines if LOG_LINE.match(line).group(1) == "ERROR"]  # type: ignore[union-attr]
    assert len(errors) == 1, stderr
    return errors[0].split(": ", 1)[1]


INPATIENT_COLUMNS = {"id": sa.Integer, "zip": sa.String, "age": sa.Integer, "nationality": sa.String,
                     "condition": sa.String}

INPATIENT_BODY = """
[[quasi_identifiers]]
column = "zip"
hierarchy = {{ mask = true }}

[[quasi_identifiers]]
column = "age"
hierarchy = {{ csv = "{age_csv}" }}

[[quasi_identifiers]]
column = "nationality"
hierarchy = {{ suppress = true }}

[sensitive]
columns = ["condition"]

[[models]]
type = "k-anonymity"
k = 4
"""


def inpatient_body() -> str:
    from veil.demo import HIERARCHIES

    return INPATIENT_BODY.format(age_csv=HIERARCHIES / "inpatient_age.csv")


@pytest.fixture
def inpatient(db: Db) -> Db:
    """The 12-row inpatient table of Machanavajjhala et al. (ICDE 2006), Figure 1 as ``<schema>.patients``."""
    from veil.demo import inpatient_rows

    db.create_table("patients", INPATIENT_COLUMNS, inpatient_rows())
    return db
