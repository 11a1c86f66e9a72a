"""The Spark cluster under test and the same tables in Spark and in DuckDB ("twins").

The cluster is the one ``deploy/spark/cluster.sh start`` runs (``VEIL_TEST_SPARK_URL``, default
``sc://127.0.0.1:15002``).  Locally a missing cluster or a missing ``spark`` extra skips the tests marked
``spark``; with ``CI=true`` they fail.  The tables — the inpatient table, a seeded random table (with and
without NULLs) and 600 rows of UCI Adult bundled in ``tests/spark/data`` — are loaded once per test run into
a Spark schema of their own (dropped afterwards) and into a DuckDB file.
"""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import json
import os
import random
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from tests.conftest import SPARK_ENV, SPARK_URL, require_spark

SPARK_UI = os.environ.get("VEIL_TEST_SPARK_UI", "http://127.0.0.1:4040")  # the Connect server's driver UI
DATA = Path(__file__).parent / "data"

__all__ = [
    "SPARK_ENV",
    "SPARK_URL",
    "Twins",
    "cached_tables",
    "cached_until",
    "driver_log",
]  # Spark found as tests/conftest.py finds it


def cached_tables() -> set[tuple[int, str]]:
    """(id, name) of the data cached on the cluster's executors, from the driver's monitoring API."""
    with urllib.request.urlopen(f"{SPARK_UI}/api/v1/applications", timeout=10) as r:
        app = json.load(r)[0]["id"]
    with urllib.request.urlopen(f"{SPARK_UI}/api/v1/applications/{app}/storage/rdd", timeout=10) as r:
        return {(int(x["id"]), str(x["name"])) for x in json.load(r)}


def cached_until(done: Callable[[set[tuple[int, str]]], bool], timeout: float = 60.0) -> set[tuple[int, str]]:
    """``cached_tables()`` once ``done`` holds for it, or as it is at ``timeout``: the driver's storage list is
    fed by its asynchronous listener bus, which lags behind the cluster on a loaded machine."""
    deadline = time.monotonic() + timeout
    while True:
        now = cached_tables()
        if done(now) or time.monotonic() > deadline:
            return now
        time.sleep(0.25)


def driver_log(*patterns: str) -> list[str]:
    """The lines of the Connect server's log (``cluster.sh``'s, under ``VEIL_SPARK_DIR``) that contain any of
    ``patterns``: a failure's evidence from the driver's side (listener events it dropped, say)."""
    state = Path(os.environ.get("VEIL_SPARK_DIR", Path(__file__).parents[2] / "deploy" / "spark" / "run"))
    log = state / "logs" / "connect.log"
    if not log.exists():
        return [f"(no driver log at {log})"]
    with log.open(encoding="utf-8", errors="replace") as fh:
        return [line.rstrip() for line in fh if any(p in line for p in patterns)]


# --- the tables --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TestTable:
    name: str
    columns: dict[str, Any]  # name → SQLAlchemy type (Spark and DuckDB types follow from it)
    rows: list[tuple[Any, ...]]


def inpatient() -> TestTable:
    from veil.demo import inpatient_rows

    return TestTable(
        "patients",
        {"id": sa.Integer(), "zip": sa.Text(), "age": sa.Integer(), "nationality": sa.Text(), "condition": sa.Text()},
        inpatient_rows(),
    )


def people(name: str = "people", nulls: bool = False, n: int = 300, seed: int = 12) -> TestTable:
    """A seeded random table: ages, sexes, regions, scores, visit dates and decimal incomes."""
    rnd = random.Random(seed)
    rows = []
    for _ in range(n):
        region = rnd.randrange(4) if not (nulls and rnd.random() < 0.06) else None
        score = rnd.randrange(5) if not (nulls and rnd.random() < 0.04) else None
        rows.append(
            (
                rnd.randint(18, 70),
                rnd.choice(["F", "M"]),
                region,
                score,
                dt.date(2024, 1, 1) + dt.timedelta(days=rnd.randrange(540)),
                decimal.Decimal(rnd.randrange(100_000, 9_000_000)) / 100,
            )
        )
    return TestTable(
        name,
        {
            "age": sa.Integer(),
            "sex": sa.Text(),
            "region": sa.Integer(),
            "score": sa.Integer(),
            "visit": sa.Date(),
            "income": sa.Numeric(10, 2),
        },
        rows,
    )


def adult() -> TestTable:
    with (DATA / "adult_small.csv").open(newline="") as fh:
        reader = csv.reader(fh, delimiter=";")
        header = next(reader)
        rows = [tuple(int(v) if c == "age" else v for c, v in zip(header, r)) for r in reader]
    return TestTable("adult", {c: (sa.Integer() if c == "age" else sa.Text()) for c in header}, rows)


def tables() -> list[TestTable]:
    return [inpatient(), people(), people("people_nulls", nulls=True, seed=13), adult()]


def _load_spark(spark: Any, schema: str, table: TestTable) -> None:
    import pyarrow as pa

    from veil.backends.spark import _arrow_type
    from veil.queries.spark import DIALECT

    data = pa.table(
        {c: pa.array([r[i] for r in table.rows], type=_arrow_type(t)) for i, (c, t) in enumerate(table.columns.items())}
    )
    target = DIALECT.identifier_preparer.format_table(sa.table(table.name, schema=schema))
    spark.createDataFrame(data).write.saveAsTable(target)


def _load_duckdb(url: str, table: TestTable) -> None:
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    t = sa.Table(table.name, sa.MetaData(), *(sa.Column(c, ty) for c, ty in table.columns.items()), schema="raw")
    with engine.begin() as c:
        c.execute(sa.schema.CreateSchema("raw", if_not_exists=True))
        c.execute(sa.schema.CreateTable(t))
        c.execute(t.insert(), [dict(zip(table.columns, r)) for r in table.rows])
    engine.dispose()


@dataclass(frozen=True)
class Twins:
    """The same tables in a Spark schema and in schema ``raw`` of a DuckDB file."""

    schema: str
    duckdb_url: str
    workdir: Path

    def config_path(self, backend: str, table: str, body: str, name: str, source_extra: str = "") -> Path:
        if backend == "spark":
            source = f'[source]\nurl_env = "{SPARK_ENV}"\ntable = "{self.schema}.{table}"\n'
        else:
            source = f'[source]\nurl = "{self.duckdb_url}"\ntable = "raw.{table}"\n'
        path = self.workdir / f"{name}.{backend}.toml"
        path.write_text(source + source_extra + "\n" + body, encoding="utf-8")
        return path


@pytest.fixture(scope="package")  # dropped when tests/spark ends, before the server's idle-session timeout
def twins(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Twins]:
    require_spark()
    from pyspark.sql.connect.session import SparkSession

    from veil.queries.spark import DIALECT

    workdir = tmp_path_factory.mktemp("spark")
    duckdb_url = f"duckdb:///{workdir / 'twin.duckdb'}"
    schema = f"veil_test_{uuid.uuid4().hex[:10]}"
    quoted = DIALECT.identifier_preparer.quote(schema)
    spark = SparkSession.builder.remote(SPARK_URL).create()
    try:
        spark.sql(f"CREATE SCHEMA {quoted}")
        for table in tables():
            _load_spark(spark, schema, table)
            _load_duckdb(duckdb_url, table)
        yield Twins(schema, duckdb_url, workdir)
    finally:
        try:
            spark.sql(f"DROP SCHEMA IF EXISTS {quoted} CASCADE")
        except Exception:  # the server closed an idle session: drop through a new one
            spark = SparkSession.builder.remote(SPARK_URL).create()
            spark.sql(f"DROP SCHEMA IF EXISTS {quoted} CASCADE")
        spark.stop()
