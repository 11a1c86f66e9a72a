"""Every statement the warehouse issues, compiled per dialect, against reviewed snapshots.

Regenerate after an intended change with ``VEIL_UPDATE_SNAPSHOTS=1 pytest tests/test_query_snapshots.py``
and review the diff like code."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import sqlalchemy as sa

from engine import queries as q

SNAPSHOTS = Path(__file__).parent / "snapshots"
# the dialects Veil runs with (duckdb-engine's numeric_dollar binds; psycopg 3 with its casts)
DIALECTS = {"duckdb": sa.create_engine("duckdb:///:memory:").dialect,
            "postgresql": sa.create_engine("postgresql+psycopg://veil@localhost/veil").dialect}
HOSTILE = 'x"; DROP TABLE t; --'


def statements() -> dict[str, object]:
    lay = q.Layout(heights=(5, 3, 1), sensitive_count=2)
    sizes = q.Layout(heights=(5, 3, 1), sensitive_count=0)
    src = q.source_table("raw", "Patients", {"Zip Code": sa.Text(), "age": sa.Integer(), HOSTILE: sa.Text(),
                                              "condition": sa.Text(), "income": sa.Integer()})
    return {
        "columns_of": q.columns_of("raw", "Patients"),
        "columns_of_default_schema": q.columns_of(None, "Patients"),
        "base_raw": q.base_raw(src, ["Zip Code", "age", HOSTILE], ["condition", "income"], drop_nulls=False),
        "base_raw_sizes_only": q.base_raw(src, ["Zip Code", "age", HOSTILE], [], drop_nulls=False),
        "raw_values": q.raw_values("q0"),
        "base_coded": q.base_coded(lay),
        "dimension_ddl": sa.schema.CreateTable(q.dim_table(0, 5, sa.Text())),
        "node_bottom": q.node_counts(lay, (0, 0, 0)),
        "node_figure_2": q.node_counts(lay, (2, 1, 1)),
        "node_top_sizes_only": q.node_counts(sizes, (5, 3, 1)),
        "node_subset": q.node_counts(lay, (1, None, 0)),
        "node_from_materialized": q.node_counts(lay, (3, None, 1), (1, None, 1), source="veil_node_4"),
        "node_packed_for_postgresql": q.packed(q.node_counts(lay, (2, 1, 1))),
        "materialize_from_base": q.materialize(lay, 4, (1, None, 1)),
        "materialize_from_materialized": q.materialize(lay, 5, (2, None, 1), (1, None, 1), "veil_node_4"),
    }


def render() -> dict[str, str]:
    out = {}
    for dialect_name, dialect in DIALECTS.items():
        parts = []
        for name, stmt in statements().items():
            sql = str(stmt.compile(dialect=dialect)).strip()  # type: ignore[attr-defined]
            parts.append(f"-- {name}\n{sql};\n")
        out[dialect_name] = "\n".join(parts)
    return out


@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_compiled_sql_matches_snapshot(dialect: str) -> None:
    text = render()[dialect]
    path = SNAPSHOTS / f"queries.{dialect}.sql"
    if os.environ.get("VEIL_UPDATE_SNAPSHOTS") or not path.exists():
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


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
