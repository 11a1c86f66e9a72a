"""Several changes of one table as one copy (``queries.spark.changed_rows``): the SELECT it builds from ``UPDATE`` s and
``DELETE`` s — each after the first reading what the ones before left, correlated subqueries included, as a cohort
night's changes of its members are (``cohort_series.night``, ``_take_over``, ``_apply``) — returns exactly the rows
the statements leave when run one after another.  Checked with hypothesis on DuckDB and PostgreSQL, where both can
run; Spark runs the SELECT as the copy it swaps in (``queries.spark.rewritten``; its compiled text in
``tests/snapshots/catalog_spark.sql``)."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veil.queries.spark import changed_rows
from tests.conftest import Db

KINDS = ("set_state", "set_from_aux", "delete_state", "delete_in_aux", "delete_unmatched")


def tables(schema: str) -> tuple[sa.Table, sa.Table]:
    md = sa.MetaData()
    t = sa.Table(
        "changes_t",
        md,
        sa.Column("id", sa.BigInteger),
        sa.Column("st", sa.SmallInteger),
        sa.Column("v", sa.Integer),
        schema=schema,
    )
    aux = sa.Table("changes_aux", md, sa.Column("id", sa.BigInteger), sa.Column("v", sa.Integer), schema=schema)
    return t, aux


def statement(t: sa.Table, aux: sa.Table, kind: str, a: int, b: int) -> sa.Update | sa.Delete:
    """One change of ``t`` of the shapes a night's are: by state, from a correlated table, by membership."""
    matched = sa.exists().where(aux.c.id == t.c.id)
    if kind == "set_state":  # leave: live rows no longer there stand in
        return sa.update(t).where(t.c.st == a, ~matched).values(st=b, v=a + b)
    if kind == "set_from_aux":  # take over / form: a value read from a table correlated by key
        value = sa.select(aux.c.v).where(aux.c.id == t.c.id).scalar_subquery()
        return sa.update(t).where(t.c.st == a, matched).values(st=b, v=value)
    if kind == "delete_state":
        return sa.delete(t).where(t.c.st == a)
    if kind == "delete_in_aux":  # taken over / depart: rows named by another table
        return sa.delete(t).where(t.c.st == a, t.c.id.in_(sa.select(aux.c.id).where(aux.c.v >= b)))
    return sa.delete(t).where(t.c.st == a, ~matched)  # forget


rows_of = st.lists(st.tuples(st.integers(0, 3), st.one_of(st.none(), st.integers(0, 5))), max_size=12)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=rows_of,
    aux=st.lists(st.tuples(st.integers(0, 14), st.integers(0, 5)), max_size=8, unique_by=lambda r: r[0]),
    steps=st.lists(st.tuples(st.sampled_from(KINDS), st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=3),
)
def test_one_copy_leaves_the_rows_the_statements_leave_one_after_another(
    db: Db, rows: list[tuple[int, int | None]], aux: list[tuple[int, int]], steps: list[tuple[str, int, int]]
) -> None:
    t, a = tables(db.schema)
    stmts = [statement(t, a, *step) for step in steps]
    eng = db.engine
    try:
        with eng.begin() as c:
            c.execute(sa.schema.CreateSchema(db.schema, if_not_exists=True))
            for table in (t, a):
                c.execute(sa.schema.DropTable(table, if_exists=True))
                c.execute(sa.schema.CreateTable(table))
            if rows:
                c.execute(t.insert(), [{"id": i, "st": s, "v": v} for i, (s, v) in enumerate(rows)])
            if aux:
                c.execute(a.insert(), [{"id": i, "v": v} for i, v in aux])
            copied = sorted(_rows(c.execute(changed_rows(*stmts))))
            for stmt in stmts:
                c.execute(stmt)
            ran = sorted(_rows(c.execute(sa.select(t))))
            c.execute(sa.schema.DropTable(t))
            c.execute(sa.schema.DropTable(a))
    finally:
        eng.dispose()
    assert copied == ran


def _rows(result: Any) -> list[tuple[Any, ...]]:
    return [tuple(-1 if x is None else int(x) for x in r) for r in result]


def test_statements_of_two_tables_are_refused() -> None:
    t, a = tables("s")
    with pytest.raises(ValueError, match="one table"):
        changed_rows(sa.delete(t).where(t.c.st == 1), sa.delete(a).where(a.c.v == 1))
