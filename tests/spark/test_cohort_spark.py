"""A cohort series on Spark publishes what DuckDB's publishes (docs/spark.md §7): the same nights of the reader's
world of tests/test_series_attacks.py, with the same secret (so the same coins), give the same versions row for
row and the same series records — the members' ``UPDATE``s and ``DELETE``s applied as copies swapped in
(``queries.spark.rewritten``), the takeovers' pairs kept as rows while the members change under them, the node
moved up on night 7 by copying the members relabeled."""

from __future__ import annotations

import uuid
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import Db, SparkDb
from tests.spark.conftest import SPARK_URL
from tests.test_series_attacks import run_nights, setup, versions
from veil.release import cohort_series

SERIES = ("cohorts_formed", "cohorts_left", "standing_in", "taken_over", "node")


@pytest.mark.spark
def test_a_cohort_series_publishes_on_spark_what_duckdb_publishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cohort_series, "new_secret", lambda: "5e" * 32)
    (tmp_path / "duckdb").mkdir()
    (tmp_path / "spark").mkdir()
    duck = Db("duckdb", f"duckdb:///{tmp_path / 'duckdb' / 'warehouse.duckdb'}", "raw", tmp_path / "duckdb")
    spark = SparkDb("spark", SPARK_URL, f"veil_test_{uuid.uuid4().hex[:10]}", tmp_path / "spark")
    spark.execute(f"CREATE SCHEMA {spark.quote(spark.schema)}")
    try:
        seen = {}
        for db in (duck, spark):
            world, path, out, _cat = setup(db, extra="keep_versions = 30\nseries_delay = 4")
            outcomes = run_nights(world, path, 8)
            assert all(o.status == "published" for o in outcomes)
            records = [
                (o.version, o.rows_published, o.rows_deferred, *(o.series.get(k) for k in SERIES)) for o in outcomes
            ]
            kept = {v: (node, Counter(rows)) for v, (node, rows) in versions(db, out).items()}
            seen[db.kind] = (records, kept)
        assert seen["spark"] == seen["duckdb"]
        records = seen["duckdb"][0]
        assert sum(r[3] for r in records[1:]) >= 2 and sum(r[4] for r in records[1:]) >= 1  # cohorts came and went
        assert sum(r[6] for r in records[1:]) >= 1  # stand-ins taken over
        assert [r[7] for r in records].count("series, moved up") == 1
    finally:
        spark.drop_schemas(*spark.own_schemas())
