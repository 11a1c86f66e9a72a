"""Shared fixtures.  ``db`` runs a test on every real backend: embedded DuckDB, PostgreSQL and Spark.

PostgreSQL comes from ``VEIL_TEST_PG_URL`` (default: the local server's ``test`` database), Spark from
``VEIL_TEST_SPARK_URL`` (default ``sc://127.0.0.1:15002``, the cluster of ``deploy/spark/cluster.sh start``).
Locally a missing server (or the missing ``spark`` extra) skips that backend's half.  Each PostgreSQL and
Spark test works in a schema of its own, dropped afterwards; each DuckDB test in a file of its own.

A backend a test does not support is declared on the test, as ibis does:
``@pytest.mark.notimpl(["spark"], reason="...")`` makes that backend's run a strict xfail (it must fail; the
day it passes, the marker goes).  Spark statements cost 0.2–1 s each, so a ``db`` test runs on Spark only when
it is marked ``@pytest.mark.spark_too`` (a representative set), or when ``VEIL_TEST_SPARK=all`` (every one,
those declared ``notimpl`` as strict xfails: the declarations checked); otherwise its Spark run is deselected,
not skipped.  With
``CI=true`` and no ``spark`` extra installed (``.ci/lower-bounds``, ``.ci/upper-bounds``) the Spark half is
deselected too; where the extra is installed (``.ci/run``, after ``.ci/spark.sh``) a missing cluster fails.

With ``CI=true`` every test must run: a skip (a missing server, a missing dev dependency such as pycanon
or scipy) is reported as a failure.  Hypothesis runs with the ``veil`` profile: no deadline (the machines
that run the suite are loaded), ``VEIL_HYPOTHESIS_PROFILE=hard`` for longer hunts.
"""

from __future__ import annotations

import importlib.util
import os
import re
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, settings

from tests import prewarmed

PG_URL = os.environ.get("VEIL_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
PG_ENV = "VEIL_TEST_PG_URL"
SPARK_ENV = "VEIL_TEST_SPARK_URL"
SPARK_URL = os.environ.get(SPARK_ENV, "sc://127.0.0.1:15002")
SPARK_ALL = os.environ.get("VEIL_TEST_SPARK", "").lower() == "all"  # every db test on Spark, notimpl ones xfail
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
# With CI=true Spark is required where the spark extra is installed (.ci/spark.sh installs it in the main run);
# the runs of .ci/lower-bounds and .ci/upper-bounds, without it, leave the Spark half out
SPARK_WANTED = not IN_CI or importlib.util.find_spec("pyspark") is not None

os.environ.setdefault(PG_ENV, PG_URL)
os.environ.setdefault(SPARK_ENV, SPARK_URL)
# The CLI runs in subprocesses, as a scheduler runs it (hundreds of them).  Where the environment forbids writing
# bytecode (``PYTHONDONTWRITEBYTECODE``: this repository's machines set it), each compiled Veil's modules from
# source again; they are cached outside the checkout instead, for the subprocesses and the xdist workers alike.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
    os.environ.setdefault(
        "PYTHONPYCACHEPREFIX", os.path.join(tempfile.gettempdir(), f"veil-tests-pycache-{os.getuid()}")
    )

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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A backend a test declares ``notimpl`` becomes a strict xfail there (ibis's pattern); a ``db`` test runs on
    Spark only when marked ``spark_too`` (or with ``VEIL_TEST_SPARK=all``), else that run is deselected.
    Run in parallel (pytest-xdist, ``--dist loadgroup``), the Spark tests stay on one worker, in order: they
    share one local cluster, and their timeouts assume it is not shared with another test."""
    kept, dropped = [], []
    for item in items:
        backend = _backend(item)
        declared = [m for m in item.iter_markers(name="notimpl") if backend in m.args[0]]
        chosen = item.get_closest_marker("spark_too") is not None
        if backend == "spark" and chosen and declared:
            raise pytest.UsageError(f"{item.nodeid}: marked spark_too and notimpl on spark")
        if backend == "spark" and not (SPARK_WANTED and (chosen or SPARK_ALL)):
            dropped.append(item)
            continue
        for marker in declared:
            item.add_marker(
                pytest.mark.xfail(
                    reason=f"not implemented on {backend}: {marker.kwargs['reason']}",
                    raises=marker.kwargs.get("raises"),
                    strict=True,
                )
            )
        if item.get_closest_marker("spark") is not None:
            item.add_marker(pytest.mark.xdist_group("spark"))
        kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def _backend(item: pytest.Item) -> str | None:
    """The backend a ``db`` test runs on in this item (its ``db`` parameter), or ``None``."""
    callspec = getattr(item, "callspec", None)
    return callspec.params.get("db") if callspec is not None else None


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


_SPARK_PROBLEM: list[str | None] = []


def spark_problem() -> str | None:
    """Why Spark cannot be tested here (the ``spark`` extra missing, no Connect server listening), or ``None``."""
    if not _SPARK_PROBLEM:
        _SPARK_PROBLEM.append(_find_spark_problem())
    return _SPARK_PROBLEM[0]


def _find_spark_problem() -> str | None:
    try:
        import pyspark.sql.connect.session  # noqa: F401
    except ImportError as exc:
        return f"the spark extra is not installed (pip install -e '.[spark]'): {exc}"
    from veil.backends.spark import _address

    host, port = _address(SPARK_URL)
    try:
        socket.create_connection((host, port), timeout=3).close()
    except OSError as exc:
        return f"no Spark Connect server at {SPARK_URL} ({exc}); start one with deploy/spark/cluster.sh start"
    return None


def require_spark() -> None:
    """Skip locally without a cluster; with ``CI=true`` (where ``.ci/spark.sh`` starts one) fail instead."""
    problem = spark_problem()
    if problem:
        if IN_CI:
            pytest.fail(f"Spark is required in CI but unavailable: {problem}")
        pytest.skip(f"Spark unavailable: {problem}")


@dataclass
class Db:
    """A backend under test: where the source lives and how to write a config pointing at it."""

    kind: str
    url: str  # SQLAlchemy URL of the database
    schema: str  # the source schema of this test
    workdir: Path

    @property
    def engine(self) -> sa.Engine:
        return sa.create_engine(self.url, poolclass=sa.pool.NullPool)

    def quote(self, name: str) -> str:
        """``name`` quoted as an identifier of this backend's SQL."""
        return f'"{name}"'

    def drop_schemas(self, *schemas: str) -> None:
        self.execute(*(f"DROP SCHEMA IF EXISTS {self.quote(s)} CASCADE" for s in schemas))

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

    def create_table(
        self, name: str, columns: dict[str, Any], rows: Sequence[Sequence[Any]], schema: str | None = None
    ) -> sa.Table:
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

    def replace_rows(self, name: str, columns: dict[str, Any], rows: Sequence[Sequence[Any]]) -> None:
        """Make ``rows`` the rows of the test's table ``name`` (a source changing between two runs): deleted and
        inserted in one transaction here; Spark's tables, which have no ``DELETE``, are overwritten."""
        table = sa.Table(name, sa.MetaData(), *(sa.Column(c, t) for c, t in columns.items()), schema=self.schema)
        eng = self.engine
        with eng.begin() as c:
            c.execute(table.delete())
            if rows:
                c.execute(table.insert(), [dict(zip(columns, r)) for r in rows])
        eng.dispose()

    def source_section(self, table: str) -> str:
        """The ``[source]`` TOML for a table of this test's schema."""
        if self.kind == "duckdb":
            return f'[source]\nurl = "{self.url}"\ntable = "{self.schema}.{table}"\n'
        return (
            f'[source]\nurl_env = "{SPARK_ENV if self.kind == "spark" else PG_ENV}"\ntable = "{self.schema}.{table}"\n'
        )

    def write_config(self, table: str, body: str, name: str = "veil.toml", source_extra: str = "") -> Path:
        path = self.workdir / name
        path.write_text(self.source_section(table) + source_extra + "\n" + body, encoding="utf-8")
        return path

    def objects(self) -> set[tuple[str, str]]:
        """Every (schema, table) in the database outside the system schemas, for leftover checks."""
        rows = self.query(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_schema NOT IN ('information_schema', 'pg_catalog')"
        )
        # other tests (other processes, sharing the server) work in veil_test_* schemas of their own: not ours
        return {
            (s, t)
            for s, t in rows
            if not str(s).startswith(("pg_temp", "pg_toast"))
            and (not str(s).startswith("veil_test_") or str(s).startswith(self.schema))
        }


def _insert_arrow(session: Any, table: sa.Table, rows: Sequence[Sequence[Any]], overwrite: bool = False) -> None:
    """Write ``rows`` into Spark table ``table`` as Arrow, typed from its SQLAlchemy columns (replacing its rows when
    ``overwrite``)."""
    import pyarrow as pa

    from veil.backends.spark import _arrow_type

    data = pa.table(
        {c.name: pa.array([r[i] for r in rows], type=_arrow_type(c.type)) for i, c in enumerate(table.columns)}
    )
    target = session.dialect.identifier_preparer.format_table(table)
    session.spark.createDataFrame(data).write.insertInto(target, overwrite=overwrite)


class SparkDb(Db):
    """Spark through Spark Connect: no SQLAlchemy engine (no DBAPI driver); statements go through Veil's own Spark
    session (``veil.backends.spark``), compiled for Spark SQL, and a test's SQL text is read with double-quoted
    identifiers (``spark.sql.ansi.doubleQuotedIdentifiers``) as DuckDB and PostgreSQL read it; tables are created
    from their SQLAlchemy types and loaded as Arrow.  A config's ``[release]`` without a ``series`` key gets
    ``series = "refuse"``: the default, "cohort", costs a Spark release its members' statements (docs/spark.md §7),
    and has Spark runs of its own (``tests/test_series_failures.py``, ``tests/test_series_attacks.py``)."""

    @property
    def engine(self) -> sa.Engine:
        raise NotImplementedError(
            "Spark Connect has no SQLAlchemy engine (no DBAPI driver): use db.execute / db.query / db.create_table"
        )

    def quote(self, name: str) -> str:
        from veil.queries.spark import DIALECT

        return str(DIALECT.identifier_preparer.quote_identifier(name))

    @contextmanager
    def _session(self) -> Iterator[Any]:
        from veil.backends import open_backend

        with open_backend(self.url).session() as session:
            session.spark.conf.set("spark.sql.ansi.enabled", "true")
            session.spark.conf.set("spark.sql.ansi.doubleQuotedIdentifiers", "true")
            yield session

    def execute(self, *statements: Any) -> None:
        with self._session() as session:
            for s in statements:
                session.execute(sa.text(s) if isinstance(s, str) else s, "setting up a test")

    def query(self, statement: Any) -> list[tuple[Any, ...]]:
        with self._session() as session:
            return session.rows(sa.text(statement) if isinstance(statement, str) else statement, "a test's query")

    def create_table(
        self, name: str, columns: dict[str, Any], rows: Sequence[Sequence[Any]], schema: str | None = None
    ) -> sa.Table:
        table = sa.Table(
            name, sa.MetaData(), *(sa.Column(c, t) for c, t in columns.items()), schema=schema or self.schema
        )
        with self._session() as session:
            session.execute(sa.schema.CreateSchema(table.schema, if_not_exists=True), "creating a test schema")
            session.execute(sa.schema.CreateTable(table), "creating a test table")
            if rows:
                _insert_arrow(session, table, rows)
        return table

    def replace_rows(self, name: str, columns: dict[str, Any], rows: Sequence[Sequence[Any]]) -> None:
        table = sa.Table(name, sa.MetaData(), *(sa.Column(c, t) for c, t in columns.items()), schema=self.schema)
        with self._session() as session:
            _insert_arrow(session, table, rows, overwrite=True)

    def write_config(self, table: str, body: str, name: str = "veil.toml", source_extra: str = "") -> Path:
        if "[release]" in body and not re.search(r"^series\s*=", body, re.MULTILINE):
            body = body.replace("[release]\n", '[release]\nseries = "refuse"\n', 1)
        return super().write_config(table, body, name, source_extra)

    def own_schemas(self) -> list[str]:
        """This test's schemas: ``<schema>`` and those named after it (``<schema>_pub``, ``<schema>_cat``, ...)."""
        # SHOW SCHEMAS lists names only: listDatabases also reads each schema's metadata, and fails when another
        # worker's test drops its schema meanwhile (SCHEMA_NOT_FOUND)
        with self._session() as session:
            names = [str(r[0]) for r in session.spark.sql("SHOW SCHEMAS").collect()]
        return [name for name in names if name.startswith(self.schema)]

    def objects(self) -> set[tuple[str, str]]:
        """Every (schema, table or view) in this test's schemas."""
        with self._session() as session:
            return {
                (name, t.name)
                for name in self.own_schemas()
                for t in session.spark.catalog.listTables(self.quote(name))
                if not t.isTemporary
            }


@pytest.fixture(params=["duckdb", "postgres", pytest.param("spark", marks=pytest.mark.spark)])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Db]:
    if request.param == "duckdb":
        yield Db("duckdb", f"duckdb:///{tmp_path / 'warehouse.duckdb'}", "raw", tmp_path)
        return
    if request.param == "postgres":
        require_pg()
        d = Db("postgres", PG_URL, f"veil_test_{uuid.uuid4().hex[:10]}", tmp_path)
    else:
        require_spark()
        d = SparkDb("spark", SPARK_URL, f"veil_test_{uuid.uuid4().hex[:10]}", tmp_path)
    d.execute(f"CREATE SCHEMA {d.quote(d.schema)}")
    try:
        yield d
    finally:  # on Spark also what a test published in schemas named after its own (nothing drops them otherwise)
        d.drop_schemas(*(d.own_schemas() if isinstance(d, SparkDb) else [d.schema]))


@dataclass(frozen=True)
class ReleaseSchemas:
    """Where a release test publishes (``out``) and keeps its catalog (``cat``)."""

    out: str
    cat: str

    def section(self, name: str = "inpatient", drop: str = '["id"]') -> str:
        return (
            f'\n[release]\nname = "{name}"\nschema = "{self.out}"\ncatalog_schema = "{self.cat}"\n'
            f"drop_columns = {drop}\n"
        )


@pytest.fixture
def release_schemas(db: Db) -> Iterator[ReleaseSchemas]:
    """Output and catalog schemas of a release test: fixed on DuckDB (a file per test), unique on
    PostgreSQL and Spark and dropped afterwards."""
    if db.kind == "duckdb":
        yield ReleaseSchemas("published", "veil")
    else:
        schemas = ReleaseSchemas(f"{db.schema}_pub", f"{db.schema}_cat")
        try:
            yield schemas
        finally:
            db.drop_schemas(schemas.out, schemas.cat)


def run_veil(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run the ``veil`` CLI in a process of its own (as a scheduler would), forked from a prewarmed
    interpreter (``tests/prewarmed.py``)."""
    return prewarmed.run(list(args), cwd=cwd, env={**os.environ, **(env or {})}, timeout=timeout)


@contextmanager
def paused_at(config: Path, step: str, *extra: str, wait: float = 600) -> Iterator[Any]:
    """``veil release --config <config> <extra>`` paused at failpoint ``step`` (``VEIL_FAILPOINT=pause:<step>``):
    the process, once it is there; on leaving, killed if still running (the caller sends what it tests)."""
    mark = config.with_name(f"paused-{step}-{uuid.uuid4().hex[:6]}")
    env = {
        **os.environ,
        "VEIL_FAILPOINT": f"pause:{step}",
        "VEIL_FAILPOINT_SECONDS": str(wait),
        "VEIL_FAILPOINT_FILE": str(mark),
    }
    proc = prewarmed.Popen(["release", "--config", str(config), *extra], env=env)
    try:
        deadline = time.monotonic() + wait
        while not mark.exists():
            assert proc.poll() is None, proc.communicate()[1][-3000:]
            assert time.monotonic() < deadline, f"the release never reached step {step!r}"
            time.sleep(0.2)
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(60)


# One log line of a command whose stderr is not a terminal (veil.log): ISO time, level, command, message.
LOG_LINE = re.compile(
    r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d (DEBUG|INFO|WARNING|ERROR) veil( [a-z]+)?: \S.*$"
)


def error_line(stderr: str) -> str:
    """The one error of a failed command: every stderr line is a well-formed log line (no traceback, no
    wrapped fragment) and exactly one is an ERROR; its message is returned."""
    lines = stderr.splitlines()
    assert lines and all(LOG_LINE.match(line) for line in lines), stderr
    errors = [line for line in lines if LOG_LINE.match(line).group(1) == "ERROR"]  # type: ignore[union-attr]
    assert len(errors) == 1, stderr
    return errors[0].split(": ", 1)[1]


INPATIENT_COLUMNS = {
    "id": sa.Integer,
    "zip": sa.String,
    "age": sa.Integer,
    "nationality": sa.String,
    "condition": sa.String,
}

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
