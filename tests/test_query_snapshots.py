"""Every statement Veil issues — counting (``queries.*.sql``) and releasing (``release.*.sql``) — compiled
per dialect, against reviewed snapshots.

Regenerate after an intended change with ``VEIL_UPDATE_SNAPSHOTS=1 pytest tests/test_query_snapshots.py``
and review the diff like code.  A missing snapshot is written on a developer's machine (and the test still
fails, so it is looked at); with ``CI=true`` nothing is ever written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import sqlalchemy as sa

from veil import queries as q
from veil.queries import demo
from veil.queries import duckdb as qd
from veil.queries.nodes import base_total, ordered

SNAPSHOTS = Path(__file__).parent / "snapshots"
# the dialects Veil runs with (duckdb-engine's numeric_dollar binds; psycopg 3 with its casts)
DIALECTS = {
    "duckdb": sa.create_engine("duckdb:///:memory:").dialect,
    "postgresql": sa.make_url("postgresql+psycopg://").get_dialect()(),
}
HOSTILE = 'x"; DROP TABLE t; --'


def statements() -> dict[str, object]:
    lay = q.Layout(heights=(5, 3, 1), sensitive_count=2)
    sizes = q.Layout(heights=(5, 3, 1), sensitive_count=0)
    src = q.source_table(
        "raw",
        "Patients",
        {
            "Zip Code": sa.Text(),
            "age": sa.Integer(),
            HOSTILE: sa.Text(),
            "condition": sa.Text(),
            "income": sa.Integer(),
        },
    )
    grouped = q.source_table(
        None,
        q.GROUPED,
        {
            "Zip Code": sa.Text(),
            "age": sa.Integer(),
            HOSTILE: sa.Text(),
            "condition": sa.Text(),
            q.WEIGHT: sa.BigInteger(),
        },
    )
    return {
        "columns_of": q.columns_of("raw", "Patients"),
        "columns_of_default_schema": q.columns_of(None, "Patients"),
        "source_values": q.source_values(src, ["Zip Code", "age", HOSTILE, "condition", "income"]),
        "source_values_null_checked": q.source_values(src, ["Zip Code", "age", HOSTILE], ["condition"]),
        "base_coded": q.base_coded(lay, src, ["Zip Code", "age", HOSTILE], ["condition", "income"]),
        # the source grouped once (PostgreSQL, ``Backend.group_source``), then both scans read its weighted rows
        "source_grouped": q.source_grouped(src, ["Zip Code", "age", HOSTILE, "condition"]),
        "source_cells": q.source_cells(src, ["Zip Code", "age", HOSTILE], ["condition"]),
        "source_cells_grouped": q.source_cells(grouped, ["Zip Code", "age", HOSTILE], ["condition"], weight=q.WEIGHT),
        "source_rows": q.source_rows(src),
        "source_values_grouped": q.source_values(grouped, ["Zip Code", "age", HOSTILE], ["condition"], weight=q.WEIGHT),
        "base_coded_grouped": q.base_coded(lay, grouped, ["Zip Code", "age", HOSTILE], ["condition"], weight=q.WEIGHT),
        "base_coded_sizes_only_narrowed": q.base_coded(
            sizes,
            src,
            ["Zip Code", "age", HOSTILE],
            [],
            ["condition"],
            [[40_000, 300, 200, 20, 5, 1], [90, 2, 1, 1], [3, 1]],
            [],
        ),
        "dimension_ddl": sa.schema.CreateTable(q.dim_table(0, 5, sa.Text())),
        "node_bottom": q.node_counts(lay, (0, 0, 0)),
        "leaf_totals": q.leaf_totals(lay),
        "node_figure_2": q.node_counts(lay, (2, 1, 1)),
        "node_top_sizes_only": q.node_counts(sizes, (5, 3, 1)),
        "node_subset": q.node_counts(lay, (1, None, 0)),
        "node_from_materialized": q.node_counts(lay, (3, None, 1), (1, None, 1), source="veil_node_4"),
        "node_packed_for_postgresql": q.packed(q.node_counts(lay, (2, 1, 1))),
        "node_block_tests": q.node_statistics(lay, (2, 1, 1), 1, [("distinct", 3.0), ("entropy", 2.5)]),
        "node_block_tests_from_materialized": q.node_statistics(
            lay, (3, None, 1), 0, [("entropy", 2.0)], (1, None, 1), source="veil_node_4"
        ),
        # t-closeness in the warehouse (queries.distances): the lookup tables, the exact statement (one row per
        # cell, block keys packed into one integer), and the bounds from value buckets
        "distance_positions_table": sa.schema.CreateTable(q.distances.lookup_tables(1)[0]),
        "distance_inverse_table": sa.schema.CreateTable(q.distances.lookup_tables(1)[1]),
        "distance_buckets_table": sa.schema.CreateTable(q.distances.bucket_table(1)),
        "node_distance_tests": q.node_statistics(
            lay,
            (2, 1, 1),
            1,
            [("ordered", 0.2), ("equal", 0.3)],
            reference=q.distances.Reference(1, 1000, 50, 65536, 123456),
            widths=[4, 9, 2],
        ),
        "node_distance_bounds": q.node_bounds(
            lay,
            (2, None, 1),
            1,
            [0.2],
            q.distances.Reference(1, 1000, 50, 65536, 123456),
            q.distances.Buckets(1, 2, 25),
            (1, None, 1),
            source="veil_node_4",
        ),
        "materialize_from_base": q.materialize(lay, 4, (1, None, 1)),
        "materialize_from_materialized": q.materialize(lay, 5, (2, None, 1), (1, None, 1), "veil_node_4"),
        "up_table": q.up_table(lay, 0, 1),
        "node_read_from_its_own_table": q.node_counts(lay, (1, None, 1), (1, None, 1), source="veil_node_4"),
        "node_sizes_from_its_own_table": q.node_sizes(sizes, (1, None, 1), (1, None, 1), source="veil_node_4"),
        # block sizes read from veil_base without its sensitive columns (summed away), and a hub materialized there
        "node_sizes_from_the_cells": q.node_sizes(sizes, (2, 1, 1)),
        "hub_of_the_blocks": q.materialize(sizes, 6, (1, 0, 1)),
        # the batch interface (Spark's path): several nodes' sizes in one GROUPING SETS statement, from the base and
        # from a kept rollup joined to veil_up_* tables (a projected-out QI leaves NULL keys in the other sets)
        "grouped_sizes_from_the_base": q.grouped_sizes(sizes, [(1, 0, 1), (2, 1, 1), (1, None, 0)]).statement,
        "grouped_sizes_from_materialized": q.grouped_sizes(
            sizes, [(2, 1, 1), (3, None, 1), (1, 0, 1)], (1, 0, 1), source="veil_node_4"
        ).statement,
        # DuckDB at scale: the base and materialized nodes in the session's scratch database (veil.backends.scratch)
        "attach_scratch": q.Attach("veil_work_12_1", "/data/.veil-work-12-ab01.duckdb"),
        "search_path_with_scratch": q.SetSearchPath(["main", "veil_work_12_1.main"]),
        "no_progress_bar": q.SetOption("enable_progress_bar", False),
        "base_coded_into_scratch": q.base_coded(sizes, src, ["Zip Code", "age", HOSTILE], [], into="veil_work_12_1"),
        "materialize_into_scratch": q.materialize(lay, 7, (1, None, 1), into="veil_work_12_1"),
        "cells_into_scratch": q.cells_table(
            src,
            q.Layout((5, 3, 1), 0),
            (1, 0, 1),
            ["Zip Code", "age", HOSTILE],
            ["condition"],
            ["condition"],
            ["none"],
            into="veil_work_12_1",
        ),
        # a kept column with NULLs matched to its value tuple: hashable on every database (SameOrBothNull)
        "cells_with_nulls": q.cells_table(
            src,
            q.Layout((5, 3, 1), 0),
            (1, 0, 1),
            ["Zip Code", "age", HOSTILE],
            ["condition", "income"],
            [],
            ["none", "some"],
        ),
        "detach_scratch": q.Attach("veil_work_12_1"),
        # the base frequency set checked to hold every kept row; a node's counts streamed in block-key order
        "base_total": base_total(lay),
        "stream_ordered": ordered(q.node_counts(lay, (2, 1, 1)), ["g0", "g1", "g2"]),
        # DuckDB: numpy columns and DataFrames registered with the connection, read into tables
        "insert_frame": qd.insert_frame(
            q.dim_table(0, 1, sa.Text()), "veil_frame_3", ["level_0", "code_1"], {"level_1": "*", "code_0": 7}
        ),
        "table_from_frame": qd.table_from_frame(sa.table("dataframe"), "veil_frame_4"),
        # ``veil seed`` (DuckDB or PostgreSQL) and what ``veil demo`` reads back from its DuckDB warehouse
        "census_table": sa.schema.CreateTable(demo.census_table("raw", "census")),
        "demo_first_rows": demo.first_rows("published", "census"),
        "demo_release_history": demo.release_history("published", "census"),
    }


def release_statements() -> dict[str, object]:
    """The statements of ``veil release`` outside the publication (``queries/release.py`` and the DDL it uses:
    locks, fingerprint, suppressed blocks, labels, grants), in the order a release issues them.  The
    publication's own statements (rows tables, pointer, views, ledger) are in tests/test_publication_sql.py."""
    lay = q.Layout(heights=(5, 3, 1), sensitive_count=1)
    src = q.source_table(
        "raw",
        "Patients",
        {
            "Zip Code": sa.Text(),
            "age": sa.Integer(),
            "nationality": sa.Text(),
            "condition": sa.Text(),
            "id": sa.Integer(),
        },
    )
    published = ["Zip Code", "age", "nationality", "condition"]
    return {
        "try_advisory_lock": q.try_advisory_lock(-1234567890123),
        "fingerprint": q.fingerprint(src, published),  # the row hash compiled per dialect (``queries.source.RowHash``)
        "create_release_schema": q.CreateSchema("published"),
        "suppressed_table": sa.schema.CreateTable(q.suppressed_table(3)),
        "level0_labels": q.level0_labels(lay, 1),
        "role_exists": q.role_exists("analyst"),
        "grant_schema": q.Grant("analyst", "published"),
        "grant_view": q.Grant("analyst", "published", "inpatient"),
        "privileges_held": q.privileges_held("analyst", "published", ["inpatient", "inpatient_v1"]),
        "advisory_unlock": q.advisory_unlock(-1234567890123),
    }


SETS = {"queries": statements, "release": release_statements}
# t-closeness in the warehouse: issued only by backends with block tests (DuckDB, PostgreSQL; not Spark)
DISTANCES = {
    "distance_positions_table",
    "distance_inverse_table",
    "distance_buckets_table",
    "node_distance_tests",
    "node_distance_bounds",
}
# DuckDB's scratch database (veil.backends.scratch): issued on DuckDB only
DUCKDB_ONLY = {
    "attach_scratch",
    "search_path_with_scratch",
    "base_coded_into_scratch",
    "materialize_into_scratch",
    "cells_into_scratch",
    "detach_scratch",
    "insert_frame",
    "table_from_frame",
    "demo_first_rows",
    "demo_release_history",
}


def render(which: str = "queries") -> dict[str, str]:
    out = {}
    for dialect_name, dialect in DIALECTS.items():
        parts = []
        for name, stmt in SETS[which]().items():
            if name in DUCKDB_ONLY and dialect_name != "duckdb":
                continue
            sql = str(stmt.compile(dialect=dialect)).strip()  # type: ignore[attr-defined]
            parts.append(f"-- {name}\n{sql};\n")
        out[dialect_name] = "\n".join(parts)
    return out


def check_snapshot(path: Path, text: str) -> None:
    """``text`` must equal the reviewed snapshot at ``path``.  Snapshots are written only on request
    (``VEIL_UPDATE_SNAPSHOTS=1``) or, outside CI, when missing — and a missing one still fails."""
    in_ci = os.environ.get("CI", "").lower() in ("1", "true", "yes")
    if not in_ci and (os.environ.get("VEIL_UPDATE_SNAPSHOTS") or not path.exists()):
        existed = path.exists()
        path.write_text(text, encoding="utf-8")
        if not existed:
            pytest.fail(f"{path.name} did not exist: written now, review it and run again")
    assert path.exists(), f"snapshot {path} is missing (never written with CI=true)"
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("which", list(SETS))
@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_compiled_sql_matches_snapshot(dialect: str, which: str) -> None:
    check_snapshot(SNAPSHOTS / f"{which}.{dialect}.sql", render(which)[dialect])


def test_snapshots_are_never_written_in_ci(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("VEIL_UPDATE_SNAPSHOTS", "1")
    missing = tmp_path / "new.sql"
    with pytest.raises(AssertionError, match="is missing"):
        check_snapshot(missing, "SELECT 1;\n")
    assert not missing.exists()
    stale = tmp_path / "stale.sql"
    stale.write_text("SELECT 2;\n", encoding="utf-8")
    with pytest.raises(AssertionError):
        check_snapshot(stale, "SELECT 1;\n")
    assert stale.read_text(encoding="utf-8") == "SELECT 2;\n"


def test_node_query_reads_the_nodes_columns_without_joins() -> None:
    lay = q.Layout(heights=(5, 3, 1), sensitive_count=1)
    sql = str(q.node_counts(lay, (2, None, 1)).compile(dialect=DIALECTS["duckdb"]))
    assert "b.q0_2 AS g0" in sql and "b.q2_1 AS g2" in sql and "q1_" not in sql and "JOIN" not in sql


def test_values_are_bound_never_inlined() -> None:
    compiled = q.columns_of("raw'; DROP SCHEMA raw; --", "Patients").compile(dialect=DIALECTS["postgresql"])
    assert "DROP SCHEMA" not in str(compiled) and "raw'; DROP SCHEMA raw; --" in compiled.params.values()


def test_hostile_identifier_is_quoted() -> None:
    sql = render()["postgresql"]
    assert '"x""; DROP TABLE t; --"' in sql  # doubled quote inside a quoted identifier
    assert '"Zip Code"' in sql and 'raw."Patients"' in sql
