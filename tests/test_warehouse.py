"""Per-node counts pushed into DuckDB and PostgreSQL equal hand-computed ones (Machanavajjhala et al., ICDE 2006, Figures 1-3)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
import sqlalchemy as sa

from veil import config as cfg
from veil import queries as q
from veil.errors import BackendError
from veil.run import counts_document, open_warehouse
from tests.conftest import Db, inpatient_body, run_veil


def blocks_of(doc: dict) -> dict[tuple[str, ...], dict[str, int]]:
    return {tuple(b["key"]): b["sensitive"]["condition"] for b in doc["blocks"]}


@pytest.mark.spark_too
def test_figure_2_node_gives_three_blocks_of_four(inpatient: Db) -> None:
    # Figure 2: zip 130**/148** (mask level 2), age <30 / 3* / >=40 (level 1), nationality * (level 1).
    conf = cfg.load(inpatient.write_config("patients", inpatient_body()))
    with open_warehouse(conf, local_cells=0, sensitive=conf.sensitive) as wh:
        doc = counts_document(wh, wh.counts((2, 1, 1)))
    assert doc["rows"] == 12 and doc["node"] == [2, 1, 1]
    assert [b["size"] for b in doc["blocks"]] == [4, 4, 4]
    assert blocks_of(doc) == {
        ("130**", "<30", "*"): {"Heart Disease": 2, "Viral Infection": 2},
        ("130**", "3*", "*"): {"Cancer": 4},
        ("148**", ">=40", "*"): {"Cancer": 1, "Heart Disease": 1, "Viral Infection": 2},
    }


@pytest.mark.spark_too
def test_figure_3_node_and_other_nodes(inpatient: Db) -> None:
    conf = cfg.load(inpatient.write_config("patients", inpatient_body()))
    with open_warehouse(conf, local_cells=0, sensitive=conf.sensitive) as wh:
        fig3 = counts_document(wh, wh.counts((1, 2, 1)))
        bottom = counts_document(wh, wh.counts((0, 0, 0)))
        top = counts_document(wh, wh.counts((5, 3, 1)))
        zip_only = counts_document(wh, wh.counts((3, 3, 0)))
    # Figure 3: 1305*/1306*/1485* with age <40/>=40: rows {1,4,9,10}, {2,3,11,12}, {5..8}.
    assert blocks_of(fig3) == {
        ("1305*", "<40", "*"): {"Heart Disease": 1, "Viral Infection": 1, "Cancer": 2},
        ("1306*", "<40", "*"): {"Heart Disease": 1, "Viral Infection": 1, "Cancer": 2},
        ("1485*", ">=40", "*"): {"Cancer": 1, "Heart Disease": 1, "Viral Infection": 2},
    }
    # Bottom: every row is its own block (no two rows share zip, age and nationality).
    assert len(bottom["blocks"]) == 12 and all(b["size"] == 1 for b in bottom["blocks"])
    assert bottom["blocks"][0]["key"] == ["13053", "23", "American"]  # sorted by code: zip, then age
    # Top: one block with the whole table's distribution.
    assert blocks_of(top) == {("*", "*", "*"): {"Cancer": 5, "Heart Disease": 3, "Viral Infection": 4}}
    # zip at 13*** / 14***, age *, nationality as is.
    sizes = {tuple(b["key"]): b["size"] for b in zip_only["blocks"]}
    assert sizes == {
        ("13***", "*", "American"): 4,
        ("13***", "*", "Indian"): 1,
        ("13***", "*", "Japanese"): 2,
        ("13***", "*", "Russian"): 1,
        ("14***", "*", "American"): 2,
        ("14***", "*", "Indian"): 1,
        ("14***", "*", "Russian"): 1,
    }


@pytest.mark.spark_too  # Spark: a node rolled up from a kept node still reads once that one is dropped
def test_rollup_from_finer_nodes_equals_base_counts(inpatient: Db) -> None:
    conf = cfg.load(inpatient.write_config("patients", inpatient_body()))
    nodes = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (2, 1, 1), (1, 2, 1), (3, 2, 1), (5, 3, 1), (2, 0, 1)]
    with open_warehouse(
        conf, local_cells=0, sensitive=conf.sensitive, rollup=True, rollup_min_cells=0, rollup_ratio=1.0
    ) as wh:
        rolled = [counts_document(wh, wh.counts(n)) for n in nodes]
        assert wh.stats.rolled_up > 0  # later nodes were aggregated from finer materialized ones
    with open_warehouse(conf, local_cells=0, sensitive=conf.sensitive, rollup=False) as wh:
        direct = [counts_document(wh, wh.counts(n)) for n in nodes]
        assert wh.stats.rolled_up == 0
    assert rolled == direct


def test_after_end_search_nodes_count_the_same_from_rebuilt_tables(inpatient: Db) -> None:
    """``end_search`` drops the kept rollups (the cells' and the blocks'); later size and count queries of other
    nodes materialize what they need again and answer as a warehouse without rollups does."""
    conf = cfg.load(inpatient.write_config("patients", inpatient_body()))
    first = [(0, 0, 0), (1, 0, 0), (1, 1, 0)]
    later = [(2, 1, 1), (1, 2, 1), (3, 2, 1), (2, 0, 1)]
    with open_warehouse(
        conf, local_cells=0, sensitive=conf.sensitive, rollup=True, rollup_min_cells=0, rollup_ratio=1.0
    ) as wh:
        for n in first:
            wh.sizes(n)
            wh.counts(n)
        assert len(wh.rollups) == 2 and all(r.kept for r in wh.rollups)
        wh.end_search()
        assert not any(r.kept for r in wh.rollups)
        after = [(wh.sizes(n).n_blocks, counts_document(wh, wh.counts(n))) for n in later]
        assert all(r.kept for r in wh.rollups)  # kept again by the later queries
    with open_warehouse(conf, local_cells=0, sensitive=conf.sensitive, rollup=False) as wh:
        direct = [(wh.sizes(n).n_blocks, counts_document(wh, wh.counts(n))) for n in later]
    assert after == direct


def test_after_end_counting_the_base_is_gone_and_a_later_node_codes_it_again(inpatient: Db) -> None:
    """``end_counting`` (a release holding its node's counts) drops the rollups and ``veil_base`` itself; a node
    counted later (the release's report) codes the base again from the source and answers as before."""
    conf = cfg.load(inpatient.write_config("patients", inpatient_body()))
    with open_warehouse(
        conf, local_cells=0, sensitive=conf.sensitive, rollup=True, rollup_min_cells=0, rollup_ratio=1.0
    ) as wh:
        before = counts_document(wh, wh.counts((1, 1, 0)))
        wh.sizes((2, 1, 1))
        wh.end_counting()
        assert wh.rollups == ()
        with pytest.raises(BackendError):
            wh.session.rows(sa.select(sa.func.count()).select_from(sa.table(q.BASE)), "reading the dropped base")
        wh.node_counter.cache.clear()  # the node's counts must come from the warehouse again, not from Python
        assert counts_document(wh, wh.counts((1, 1, 0))) == before
        assert len(wh.rollups) >= 1


def test_cli_counts_json_is_one_document(inpatient: Db) -> None:
    path = inpatient.write_config("patients", inpatient_body())
    res = run_veil("counts", "--config", str(path), "--node", "2,1,1", "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert (
        set(doc)
        == {
            "status",
            "attributes",
            "node",
            "rows",
            "blocks",
            "order",
            "limit",
            "block_count",
            "blocks_not_shown",
            "rows_not_shown",
        }
        and doc["status"] == "ok"
    )
    assert (doc["block_count"], doc["blocks_not_shown"], doc["limit"]) == (3, 0, 50)  # `veil counts --limit`
    assert doc["attributes"] == ["zip", "age", "nationality"]
    assert [b["size"] for b in doc["blocks"]] == [4, 4, 4]


def _synthetic(rng: random.Random, n: int) -> list[tuple]:
    rows = []
    for i in range(n):
        age = int(17 + 70 * rng.random() ** 2)
        rows.append(
            (
                i,
                age,
                rng.choice(["F", "M", "M"]),
                f"{rng.randint(0, 40):05d}",
                rng.choice(["a", "b", "b", "c", "d"]),
                rng.choice([1, 2, 2, 3]),
            )
        )
    return rows


SYNTH_BODY = """
[[quasi_identifiers]]
column = "age"
hierarchy = { intervals = [5, 10, 20] }

[[quasi_identifiers]]
column = "sex"
hierarchy = { suppress = true }

[[quasi_identifiers]]
column = "zip"
hierarchy = { mask = true }

[sensitive]
columns = ["disease", "grade"]

[[models]]
type = "k-anonymity"
k = 2
"""

SYNTH_COLUMNS = {
    "id": sa.Integer,
    "age": sa.Integer,
    "sex": sa.String,
    "zip": sa.String,
    "disease": sa.String,
    "grade": sa.Integer,
}


def _expected(rows: list[tuple], node: tuple[int, int, int]) -> dict[tuple, Counter]:
    """An independent oracle: generalize each row in Python and count."""

    def age(v: int, lv: int) -> str:
        if lv == 0:
            return str(v)
        if lv == 4:
            return "*"
        w = (5, 10, 20)[lv - 1]
        lo = v // w * w
        return f"[{lo}, {lo + w})"

    def zip_(z: str, lv: int) -> str:
        return z if lv == 0 else ("*" if lv == 5 else z[: 5 - lv] + "*" * lv)

    out: dict[tuple, Counter] = {}
    for _, a, s, z, d, g in rows:
        key = (age(a, node[0]), s if node[1] == 0 else "*", zip_(z, node[2]))
        out.setdefault(key, Counter())[(d, g)] += 1
    return out


def test_synthetic_counts_match_an_independent_oracle_on_both_backends(db: Db) -> None:
    rows = _synthetic(random.Random(7), 600)
    db.create_table("people", SYNTH_COLUMNS, rows)
    conf = cfg.load(db.write_config("people", SYNTH_BODY))
    nodes = [(0, 0, 0), (1, 0, 2), (2, 1, 3), (3, 0, 1), (4, 1, 5), (2, 0, 0)]
    with open_warehouse(conf, local_cells=0, sensitive=conf.sensitive) as wh:
        assert wh.heights == (4, 1, 5)
        for node in nodes:
            nc = wh.counts(node)
            labels = nc.labels()
            expected = _expected(rows, node)
            assert len(labels) == len(expected)
            dis, grade = nc.domain("disease"), nc.domain("grade")
            got: dict[tuple, Counter] = {}
            for b, key in enumerate(labels):
                mask = nc.cell_block == b
                c = Counter()
                for (di, gi), n in zip(nc.cell_values[mask].tolist(), nc.cell_count[mask].tolist()):
                    c[(dis.values[di], int(grade.values[gi]))] += n
                got[tuple(key)] = c
            assert got == expected, node
            # the per-attribute matrices are the marginals of the joint
            assert nc.blocks("disease").counts.sum() == 600
            assert (nc.blocks("grade").sizes == nc.sizes).all()


def test_sizes_only_mode_groups_by_quasi_identifiers_only(db: Db) -> None:
    rows = _synthetic(random.Random(3), 200)
    db.create_table("people", SYNTH_COLUMNS, rows)
    conf = cfg.load(db.write_config("people", SYNTH_BODY))
    with open_warehouse(conf, local_cells=0) as wh:  # k-anonymity only needs sizes: no sensitive column counted
        assert wh.sensitive == ()
        nc = wh.counts((2, 1, 3))
        expected = _expected(rows, (2, 1, 3))
        assert sorted(nc.sizes.tolist()) == sorted(sum(c.values()) for c in expected.values())


@pytest.mark.spark_too
def test_quoted_and_hostile_identifiers_are_names(db: Db) -> None:
    hostile = 'x"; DROP TABLE t; --'
    db.create_table("t", {"a": sa.Integer}, [(1,)])  # the table the hostile name tries to drop
    db.create_table(
        "Patients",
        {"Zip Code": sa.String, "Age": sa.Integer, hostile: sa.String},
        [("13053", 28, "flu"), ("13068", 29, "flu"), ("13053", 41, "cold"), ("13068", 45, "flu")],
    )
    body = f"""
[[quasi_identifiers]]
column = "Zip Code"
hierarchy = {{ mask = true }}

[[quasi_identifiers]]
column = "Age"
hierarchy = {{ intervals = [10, 20] }}

[sensitive]
columns = [{json.dumps(hostile)}]

[[models]]
type = "k-anonymity"
k = 2
"""
    conf = cfg.load(db.write_config("Patients", body))
    with open_warehouse(conf, local_cells=0, sensitive=conf.sensitive) as wh:
        doc = counts_document(wh, wh.counts((2, 2)))
    assert {tuple(b["key"]): b["sensitive"][hostile] for b in doc["blocks"]} == {
        ("130**", "[20, 40)"): {"flu": 2},
        ("130**", "[40, 60)"): {"cold": 1, "flu": 1},
    }
    assert db.query(sa.select(sa.func.count()).select_from(sa.table("t", schema=db.schema))) == [(1,)]


@pytest.mark.spark_too
def test_integer_columns_arrive_whole_in_numpy(db: Db) -> None:
    """Session.columns (DuckDB: fetchnumpy; PostgreSQL: packed int8 blobs, several chunks here) loses nothing."""
    from veil import queries as q
    from veil.backends import open_backend

    db.create_table("nums", {"a": sa.Integer, "b": sa.BigInteger}, [(i, i * 3_000_000_000) for i in range(1, 101)])
    t = sa.table("nums", sa.column("a"), sa.column("b"), schema=db.schema)
    select = sa.select(t.c.a, t.c.b, sa.func.count().label("n")).group_by(t.c.a, t.c.b)
    backend = open_backend(db.url)
    with backend.session() as session:
        data = session.columns(select)
        if db.kind == "postgres":  # force several chunks of 7 rows
            result = session.execute(q.packed(select, chunk=7)).all()
            assert len(result) == 15
            a = np.concatenate([np.frombuffer(r[0], ">i8") for r in result])
            assert sorted(a.tolist()) == list(range(1, 101))
    order = np.argsort(data["a"])
    assert data["a"][order].tolist() == list(range(1, 101))
    assert data["b"][order].tolist() == [i * 3_000_000_000 for i in range(1, 101)]
    assert data["n"].tolist() == [1] * 100 and data["a"].dtype == np.int64


@pytest.mark.notimpl(
    ["spark"],
    raises=AssertionError,
    reason=(
        "no scratch database or work schema: Spark's working tables are cached session views "
        "(Session.scratch answers None), so stats.scratch stays False"
    ),
)
def test_working_tables_in_a_scratch_database_count_as_temporary_ones(inpatient: Db) -> None:
    """When the base's bytes exceed ``scratch_threshold`` (DuckDB's memory limit by default), DuckDB creates the
    base frequency set and the materialized nodes in a scratch database file attached next to the warehouse and
    finds them by name (``veil.backends.scratch``); PostgreSQL (above 16 MiB by default) creates them UNLOGGED
    in the run's own work schema (``veil.backends.postgres``: the base only).  Sizes, threshold tests and counts equal those of
    temporary tables, and the file or schema is gone with the session."""
    conf = cfg.load(inpatient.write_config("patients", inpatient_body()))
    nodes = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (2, 1, 1), (3, 2, 1), (1, None, 0)]
    with open_warehouse(conf, local_cells=0, sensitive=conf.sensitive, rollup=False) as wh:
        expected = [(wh.sizes(n).blocks.tolist(), counts_document(wh, wh.counts(n))) for n in nodes]
        assert not wh.stats.scratch
    folder = inpatient.workdir
    with open_warehouse(
        conf, local_cells=0, sensitive=conf.sensitive, rollup_min_cells=0, rollup_ratio=1.0, scratch_threshold=0
    ) as wh:
        got = [(wh.sizes(n).blocks.tolist(), counts_document(wh, wh.counts(n))) for n in nodes]
        assert wh.stats.scratch and wh.stats.materialized > 0
        if inpatient.kind == "duckdb":
            files = list(folder.glob(".veil-work-*.duckdb"))
            assert len(files) == 1
            placed = wh.session.rows(
                sa.select(sa.column("database_name"), sa.column("table_name")).select_from(sa.func.duckdb_tables()),
                "listing tables",
            )
            scratch = {t for d, t in placed if d.startswith("veil_work_")}
            assert "veil_base" in scratch and any(t.startswith("veil_node_") for t in scratch), placed
            assert not {t for d, t in placed if d == "temp"} & scratch  # not temporary tables as well
        else:
            placed = wh.session.rows(
                sa.text(
                    "SELECT n.nspname, c.relname, c.relpersistence FROM pg_class c "
                    "JOIN pg_namespace n ON n.oid = c.relnamespace "
                    "WHERE c.relname LIKE 'veil\\_%' AND c.relkind = 'r'"
                ),
                "listing tables",
            )
            work = {t: p for s, t, p in placed if s.startswith("veil_work_")}
            assert work == {"veil_base": "u"}, placed  # the nodes, read again and again, stay temporary
            temporary = {t for s, t, p in placed if s.startswith("pg_temp") and p == "t"}
            assert "veil_base" not in temporary and any(t.startswith("veil_node_") for t in temporary), placed
            schema = next(s for s, _, _ in placed if s.startswith("veil_work_"))
    assert got == expected
    assert list(folder.glob(".veil-work-*")) == []
    if inpatient.kind == "postgres":
        with inpatient.engine.connect() as c:
            assert not c.execute(sa.text("SELECT 1 FROM pg_namespace WHERE nspname = :s"), {"s": schema}).all()


@pytest.mark.notimpl(
    ["spark"],
    raises=NotImplementedError,
    reason=(
        "sweeps DuckDB's scratch files and PostgreSQL's work schemas (db.engine); a killed Spark "
        "run's views go with its session "
        "(tests/spark/test_spark_backend.py::test_sigterm_drops_the_views_too)"
    ),
)
def test_a_killed_runs_working_tables_are_dropped_by_the_next_run(inpatient: Db) -> None:
    """A run killed before its session ended leaves its working tables: DuckDB's scratch file, PostgreSQL's work
    schema (``veil_work_<pid>_<start>``).  The next run that needs working tables drops those of sessions that
    are gone, and keeps those of a session still running."""
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    dead = int(gone.stdout)
    conf = cfg.load(inpatient.write_config("patients", inpatient_body()))
    if inpatient.kind == "duckdb":
        left = inpatient.workdir / f".veil-work-{dead}-0badc0de.duckdb"
        left.write_bytes(b"")
        with open_warehouse(conf, local_cells=0, sensitive=conf.sensitive, scratch_threshold=0) as wh:
            assert wh.stats.scratch
        assert not left.exists()
    else:
        postgres_sweep(inpatient, conf, dead)


def postgres_sweep(inpatient: Db, conf: cfg.Config, dead: int) -> None:
    with inpatient.engine.connect() as other:
        pid, started = other.execute(q.backend_sessions(own=True)).one()
        live, killed = f"veil_work_{pid}_{started}", f"veil_work_{dead}_{started}"
        for schema in (live, killed):
            inpatient.execute(f'CREATE SCHEMA "{schema}"')
            inpatient.execute(f'CREATE UNLOGGED TABLE "{schema}".veil_base (n bigint)')
        try:
            with open_warehouse(conf, local_cells=0, sensitive=conf.sensitive, scratch_threshold=0) as wh:
                assert wh.stats.scratch
            names = {r[0] for r in other.execute(q.owned_schemas("veil_work_")).all()}
            assert live in names and killed not in names
        finally:
            inpatient.execute(f'DROP SCHEMA IF EXISTS "{live}" CASCADE')
            inpatient.execute(f'DROP SCHEMA IF EXISTS "{killed}" CASCADE')


@pytest.mark.parametrize("db", ["postgres"], indirect=True)  # roles: PostgreSQL only
def test_a_role_that_may_not_create_schemas_keeps_temporary_tables(db: Db, monkeypatch) -> None:
    """Without CREATE on the database there is no work schema: the base stays a temporary table (TEMPORARY is
    all Veil needs), and the counts are the same."""
    import uuid

    from veil.demo import inpatient_rows
    from tests.conftest import INPATIENT_COLUMNS, PG_ENV, PG_URL

    db.create_table("patients", INPATIENT_COLUMNS, inpatient_rows())
    conf = cfg.load(db.write_config("patients", inpatient_body()))
    nodes = [(0, 0, 0), (1, 1, 0), (3, 2, 1)]
    with open_warehouse(conf, local_cells=0, sensitive=conf.sensitive) as wh:
        expected = [counts_document(wh, wh.counts(n)) for n in nodes]
    role = f"veil_nocreate_{uuid.uuid4().hex[:8]}"
    database = sa.make_url(PG_URL).database
    db.execute(
        f'CREATE ROLE "{role}" LOGIN',
        f'GRANT TEMPORARY ON DATABASE "{database}" TO "{role}"',
        f'GRANT USAGE ON SCHEMA "{db.schema}" TO "{role}"',
        f'GRANT SELECT ON ALL TABLES IN SCHEMA "{db.schema}" TO "{role}"',
    )
    try:
        monkeypatch.setenv(PG_ENV, sa.make_url(PG_URL).set(username=role).render_as_string(hide_password=False))
        with open_warehouse(conf, local_cells=0, sensitive=conf.sensitive, scratch_threshold=0) as wh:
            got = [counts_document(wh, wh.counts(n)) for n in nodes]
            assert not wh.stats.scratch
        assert got == expected
    finally:
        db.execute(
            f'REVOKE ALL ON DATABASE "{database}" FROM "{role}"', f'DROP OWNED BY "{role}"', f'DROP ROLE "{role}"'
        )
