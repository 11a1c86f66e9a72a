"""The Spark backend on the real cluster: a run leaving nothing behind (views dropped, cached rows freed — after
a normal end and after SIGTERM), identifiers and literals as Spark reads them, and failures as one line.  What
Spark shares with DuckDB and PostgreSQL — the CLI's check, search and counts, missing tables and columns — runs
on the shared ``db`` fixture (``@pytest.mark.spark_too``, tests/conftest.py)."""

from __future__ import annotations

import os
import signal
import time
import uuid

import pytest
import sqlalchemy as sa

from tests.conftest import inpatient_body
from tests.spark.conftest import SPARK_ENV, SPARK_URL, Twins, cached_tables, cached_until, driver_log
from tests.spark.test_same_answers import ADULT
from tests import prewarmed
from veil import config as cfg
from veil import queries as q
from veil.backends import open_backend
from veil.errors import SourceError
from veil.queries import members as mq
from veil.queries.ddl import create_table, private, working_table
from veil.queries.spark import DIALECT, changed_rows, compile_sql
from veil.run import counts_document, open_warehouse

pytestmark = pytest.mark.spark


def _spark_sql(*statements: str) -> None:
    from pyspark.sql.connect.session import SparkSession

    spark = SparkSession.builder.remote(SPARK_URL).create()
    try:
        for s in statements:
            spark.sql(s)
    finally:
        spark.stop()


def test_a_run_leaves_nothing_behind(twins: Twins) -> None:
    """Working tables are cached session views while the run lasts; afterwards the views and their cached
    rows are gone (the driver's storage list is back to what it was).  Whether a view is cached is asked of
    the server's cache manager, not read from the storage list: the manager shares one cache among equal
    plans, so a view whose query another session (a killed run) had cached adds no entry to the list."""
    before = cached_tables()
    conf = cfg.load(twins.config_path("spark", "patients", inpatient_body(), "leave"))
    # local_cells = 0: the base coded in the warehouse (else the 12 rows are held here first, veil.sourcecells)
    with open_warehouse(conf, sensitive=conf.sensitive, local_cells=0) as wh:
        wh.counts((1, 2, 1))
        spark, name = wh.session.spark, wh.session.view_name  # type: ignore[attr-defined]
        views = {t.name for t in spark.catalog.listTables() if t.isTemporary}
        cached = {view for view in views if spark.catalog.isCached(view)}
        working = {name(v) for v in ("veil_base", "veil_dim_0", "veil_dim_1", "veil_dim_2", "veil_sdom_0")}
        base = name("veil_base")
    assert views >= working and base != "veil_base"  # the run's own names (``sq.run_dialect``)
    assert base in cached
    assert cached_until(lambda now: not now - before) - before == set()


def test_a_run_ending_keeps_another_runs_cache(twins: Twins) -> None:
    """Two runs over one source cache equal queries under equal names.  Spark's cache manager shares one cache
    among equal plans, and replacing or dropping a view uncaches what reads a view of that name, in any
    session: without plans and names of its own per run, the second run's views would free the first's
    working data (computed again from the source at every node)."""
    conf = cfg.load(twins.config_path("spark", "patients", inpatient_body(), "two-runs"))
    with open_warehouse(conf, sensitive=conf.sensitive, local_cells=0) as first:
        first.counts((1, 2, 1))
        one = first.session  # type: ignore[assignment]
        with open_warehouse(conf, sensitive=conf.sensitive, local_cells=0) as second:
            second.counts((1, 2, 1))
            two = second.session  # type: ignore[assignment]
            assert two.spark.catalog.isCached(two.view_name("veil_base"))  # type: ignore[attr-defined]
            assert one.spark.catalog.isCached(one.view_name("veil_base"))  # type: ignore[attr-defined]
        assert one.spark.catalog.isCached(one.view_name("veil_base"))  # type: ignore[attr-defined]
        first.counts((0, 1, 0))


def test_sigterm_drops_the_views_too(twins: Twins) -> None:
    """A scheduler's SIGTERM mid-search unwinds the run: its cached working data is freed (the driver's
    storage list may show it for a moment after the process ended: ``cached_until``)."""
    before = cached_tables()
    # every node a statement (nothing held in memory): the search outlasts the poll below, whose 0.5 s steps
    # would otherwise miss a base that is cached, searched and dropped within a second
    body = ADULT.replace("[search]\n", "[search]\nlocal_cells = 0\n", 1)
    assert "local_cells = 0" in body
    path = twins.config_path("spark", "adult", body, "sigterm")
    # --verbose: each statement and each view dropped (or not found) is in the log the failure message shows
    args = ["search", "--config", str(path), "--strategy", "brute-force", "--json", "--verbose"]
    proc = prewarmed.Popen(args, env={**os.environ})
    try:
        deadline = time.monotonic() + 300
        while not any(name.startswith("In-memory table veil_base_") for _, name in cached_tables() - before):
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the run never cached its base frequency set"
            time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0
    left = cached_until(lambda now: not now - before) - before
    log = proc.stderr.read().splitlines() if proc.stderr else []
    # the storage list is the driver's status store, fed by its listener bus: a bus that fell behind under load
    # drops events (its log says so), and a dropped block removal would leave a freed base listed; the driver's
    # log is read only when the assertion fails
    assert left == set(), (
        f"{left} cached after the run ended, its last log lines: {log[-40:]}; "
        f"driver: {driver_log('Dropping event', 'Dropped ')[-5:]}"
    )


def test_hostile_names_and_an_unsupported_type(twins: Twins) -> None:
    """Column names Spark needs backticks for (a space, a backtick, a quote, a keyword) work; a column of a
    type Veil cannot generalize is named in one line."""
    prep = DIALECT.identifier_preparer
    view = prep.format_table(sa.table("hostile", schema=twins.schema))
    source = prep.format_table(sa.table("patients", schema=twins.schema))
    _spark_sql(
        f"CREATE VIEW {view} AS SELECT zip AS {prep.quote('Zip Code')}, age AS {prep.quote('a`ge')}, "
        f"nationality AS {prep.quote('select')}, condition AS {prep.quote(chr(34) + '; DROP')}, "
        f"array(age) AS {prep.quote('ages')} FROM {source}"
    )
    body = inpatient_body().replace('"zip"', '"Zip Code"').replace('"age"', '"a`ge"')
    body = body.replace('"nationality"', '"select"').replace('["condition"]', '["\\"; DROP"]')
    hostile = cfg.load(twins.config_path("spark", "hostile", body, "hostile"))
    plain = cfg.load(twins.config_path("spark", "patients", inpatient_body(), "plain"))
    docs = []
    for conf in (hostile, plain):
        with open_warehouse(conf, sensitive=conf.sensitive) as wh:
            doc = counts_document(wh, wh.counts((1, 2, 1)))
            docs.append([(b["key"], b["size"], list(b["sensitive"].values())) for b in doc["blocks"]])
    assert docs[0] == docs[1] and len(docs[0]) == 3
    bad = cfg.load(twins.config_path("spark", "hostile", body.replace('"select"', '"ages"'), "bad"))
    with pytest.raises(
        SourceError,
        match=r"column 'ages' of source table .*hostile.* has type array<int>, "
        "which Veil cannot generalize or count",
    ):
        with open_warehouse(bad):
            pass


def test_view_literals_round_trip(twins: Twins) -> None:
    """A view's literal (views cannot hold parameters) reads back exactly, quotes and backslashes included."""
    tricky = "it's a \\ test \\' '' \\n"
    view = sa.table("literal_view", schema=twins.schema)
    os.environ.setdefault(SPARK_ENV, SPARK_URL)
    with open_backend(SPARK_URL).session() as session:
        session.execute(q.CreateView(view, sa.select(sa.literal(tricky).label("x"))), "creating a view")
        assert session.rows(sa.select(sa.column("x")).select_from(view)) == [(tricky,)]
        session.execute(q.DropObject("VIEW", view), "dropping a view")


def test_scalar_and_rows_types(twins: Twins) -> None:
    """Values come back as DuckDB's driver gives them: ints, strings, Decimals, dates, naive timestamps."""
    import datetime as dt
    import decimal

    t = sa.table("people", sa.column("income"), sa.column("visit"), sa.column("age"), schema=twins.schema)
    with open_backend(SPARK_URL).session() as session:
        row = session.rows(
            sa.select(
                sa.func.min(t.c.income),
                sa.func.min(t.c.visit),
                sa.func.count(),
                sa.cast(sa.func.min(t.c.visit), sa.DateTime),
            )
        )[0]
        assert isinstance(row[0], decimal.Decimal) and isinstance(row[1], dt.date) and isinstance(row[2], int)
        assert row[3] == dt.datetime.combine(row[1], dt.time()) and row[3].tzinfo is None
        assert session.scalar(sa.select(sa.func.count()).select_from(t)) == 300
        cols = session.columns(sa.select(t.c.age, sa.literal(None, sa.Integer).label("nothing")).limit(3))
        assert cols["age"].dtype.kind == "i" and cols["nothing"].tolist() == [None, None, None]


def test_source_columns_from_the_catalog(twins: Twins) -> None:
    with open_backend(SPARK_URL).session() as session:
        found = session.source_columns(twins.schema, "people")
        assert found == [
            ("age", "int", None, None),
            ("sex", "string", None, None),
            ("region", "int", None, None),
            ("score", "int", None, None),
            ("visit", "date", None, None),
            ("income", "decimal(10,2)", None, None),
        ]
        assert session.source_columns(twins.schema, "nope") == []
        assert session.source_columns("no_such_schema_x", "people") == []


def test_a_relation_is_looked_up_by_name(twins: Twins) -> None:
    with open_backend(SPARK_URL).session() as session:
        assert session.has_relation(twins.schema, "people")
        assert not session.has_relation(twins.schema, "nope")
        assert not session.has_relation("no_such_schema_x", "people")
        assert session.has_relation(twins.schema, "people") == ("people" in session.relations(twins.schema))


def test_a_session_packs_small_files_into_few_tasks(twins: Twins) -> None:
    """The catalog's tables are a file per append: a session counts opening one as ``OPEN_COST`` bytes, not
    Spark's 4 MB, so reading many of them takes a few tasks, not a task for every 32 files (docs/spark.md §9)."""
    from veil.backends.spark import OPEN_COST

    with open_backend(SPARK_URL).session() as session:
        assert session.spark.conf.get("spark.sql.files.openCostInBytes") == str(OPEN_COST) == "1024"


def test_the_grouped_source_alone_runs_interpreted() -> None:
    """A session runs its statements compiled, the grouped source of a run held here interpreted (compiled once per
    session, it is the session's first aggregation), and compiled again after it, also when it fails."""
    key = "spark.sql.codegen.wholeStage"
    with open_backend(SPARK_URL).session() as session:
        assert session.spark.conf.get(key) == "true"
        with session.held_here():
            assert session.spark.conf.get(key) == "false"
        assert session.spark.conf.get(key) == "true"
        with pytest.raises(RuntimeError), session.held_here():
            raise RuntimeError("the grouped source failed")
        assert session.spark.conf.get(key) == "true"


def test_a_recount_numbered_here_equals_the_databases_numbering(twins: Twins) -> None:
    """``Session.numbered`` on Spark fetches the recount's cells as values in one statement and numbers each column
    as Arrow encodes it; decoded, its cells are the ones the database numbering gives (one statement a column),
    NULLs (number 0), other versions and columns the recount does not read (summed over) included."""
    from veil.backends.base import Session

    blocks = sa.Table(
        "recount_blocks",
        sa.MetaData(),
        *(sa.Column(c) for c in ("veil_version", "sex", "visit", "income", "region", "n")),
        schema=twins.schema,
    )
    people = f"{DIALECT.identifier_preparer.quote(twins.schema)}.people"
    _spark_sql(
        f"CREATE OR REPLACE VIEW {DIALECT.identifier_preparer.format_table(blocks)} AS "
        f"SELECT 7 AS veil_version, sex, visit, income, region, 1 AS n FROM {people} "
        "UNION ALL SELECT 7, NULL, NULL, NULL, 0, 2 UNION ALL SELECT 8, 'X', NULL, NULL, 0, 5"
    )
    statements = q.recount_statements(blocks, 7, ["sex", "visit"], ["income"])

    def decoded(numbers, chunks) -> dict[tuple[object, ...], int]:  # type: ignore[no-untyped-def]
        cells: dict[tuple[object, ...], int] = {}
        for chunk in chunks:
            for i, n in enumerate(chunk["n"].tolist()):
                key = tuple(numbers[j][int(chunk[f"c{j}"][i]) - 1][0] if chunk[f"c{j}"][i] else None for j in range(3))
                cells[key] = cells.get(key, 0) + n
        return cells

    with open_backend(SPARK_URL).session() as session:
        before = session.statements
        here = decoded(*session.numbered(statements, 7, "recounting"))
        assert session.statements - before == 1
        there = decoded(*Session.numbered(session, statements, 7, "recounting"))
    assert here == there and sum(here.values()) == 302 and here[(None, None, None)] == 2
    assert all(key[0] != "X" for key in here)  # version 8's row left out


def test_verbose_logs_each_statements_time(twins: Twins, caplog: pytest.LogCaptureFixture) -> None:
    """``--verbose`` (DEBUG) names every statement sent, what it was for and its seconds — the unit a Spark release
    pays for (docs/spark.md §9) — and logs nothing at the default level."""
    import logging
    import re

    t = sa.table("people", sa.column("age"), schema=twins.schema)
    with open_backend(SPARK_URL).session() as session:
        with caplog.at_level(logging.INFO, logger="veil"):
            session.scalar(sa.select(sa.func.count()).select_from(t), "counting the people")
        assert not caplog.records
        with caplog.at_level(logging.DEBUG, logger="veil"):
            first = session.statements
            session.scalar(sa.select(sa.func.count()).select_from(t), "counting the people")
            session.rows(sa.select(sa.func.max(t.c.age)), "reading the oldest")
    lines = [r.getMessage() for r in caplog.records if r.name == "veil.backends.spark"]
    assert [re.sub(r"\d+\.\d\d s$", "S", line) for line in lines] == [
        f"spark statement {first + 1}, counting the people: S",
        f"spark statement {first + 2}, reading the oldest: S",
    ]


def test_together_sends_its_pieces_at_once_and_raises_the_first_failure(
    twins: Twins, caplog: pytest.LogCaptureFixture
) -> None:
    """``Session.together`` on Spark: the pieces run at the same time (two statements that each wait for the other
    at a barrier finish; one after another the first would wait alone and break it), every one is counted once
    under its own number, the results come back in order; a failure is raised once every piece has ended, the
    first in order."""
    import logging
    import re
    import threading

    t = sa.table("people", sa.column("age"), schema=twins.schema)
    barrier = threading.Barrier(2, timeout=15)

    def meet(what: str) -> int:
        barrier.wait()
        return int(session.scalar(sa.select(sa.func.count()).select_from(t), what))

    with open_backend(SPARK_URL).session() as session:
        first = session.statements
        with caplog.at_level(logging.DEBUG, logger="veil"):
            got = session.together([lambda: meet("one"), lambda: meet("two"), lambda: 7])
        assert got[2] == 7 and got[0] == got[1] > 0
        assert session.statements == first + 2
        lines = [r.getMessage() for r in caplog.records if r.name == "veil.backends.spark"]
        numbers = sorted(int(re.findall(r"statement (\d+),", line)[0]) for line in lines)
        assert numbers == [first + 1, first + 2]
        finished: list[str] = []

        def fails(what: str) -> None:
            time.sleep(0.2)
            raise SourceError(what)

        def ends() -> None:
            time.sleep(1.0)
            finished.append("slow")

        with pytest.raises(SourceError, match="^the first$"):
            session.together([ends, lambda: fails("the first"), lambda: fails("the second")])
        assert finished == ["slow"]


def test_a_signal_while_pieces_run_together_stops_them(twins: Twins) -> None:
    """Ctrl-C while ``together``'s pieces run: the main thread waits in Veil's code, where the handler raises, and
    the session's operations are stopped before the interruption goes on — the run unwinds at once instead of
    waiting for statements of minutes (each sum here takes about 110 s unstopped on the local cluster)."""
    import threading

    slow = sa.text("SELECT sum(hash(id)) FROM range(0, 40000000000)")
    with open_backend(SPARK_URL).session() as session:
        timer = threading.Timer(3.0, os.kill, (os.getpid(), signal.SIGINT))
        began = time.monotonic()
        timer.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                session.together([lambda: session.rows(slow, "a slow sum"), lambda: session.rows(slow, "another")])
        finally:
            timer.cancel()
        assert time.monotonic() - began < 30
        assert session.scalar(sa.text("SELECT 1"), "the session after") == 1  # still usable


def test_a_members_change_never_joins_by_a_nested_loop() -> None:
    """Each step's copy of a cohort series' members (``sq.changed_rows`` of its pair of changes) reads its subqueries
    as joins on the member's id or labels.  Planned with no broadcast, as Spark plans a working table whose size it
    over-estimates (the 10M census's takeovers), none is a nested loop over every member: a correlated subquery of
    one row's value without an aggregate was one (136–206 s a night, docs/spark.md §7).  The working tables are views
    of a few rows here; with broadcasts off Spark plans them as it planned the census's."""
    m = private(mq.members_table(f"veil_plan_{uuid.uuid4().hex[:8]}", "m", ["zip"], {"dx": sa.Text()}))
    pairs = {
        "left": [mq.forget(m), mq.leave(m, 7)],
        "taken over": [mq.taken_over(m), mq.take_over(m, 7)],
        "formed": [mq.depart(m), mq.form(m, ["zip"], 7)],
    }
    views = {
        mq.NOW: "(7L), (8L) AS t(veil_id)",
        mq.TAKING: "(1L, 2L, 3L), (4L, 5L, 6L) AS t(veil_waiting, veil_standing, veil_cohort)",
        mq.FORMING: "(3L, 'a'), (4L, 'b') AS t(veil_cohort, g0)",
        mq.LEAVING: "(3L), (5L) AS t(veil_cohort)",
    }
    with open_backend(SPARK_URL).session() as session:
        spark = session.spark
        spark.sql(f"CREATE DATABASE {m.schema}")
        try:
            spark.sql(str(compile_sql(create_table(m))))
            for name, rows in views.items():
                spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW {name} AS SELECT * FROM VALUES {rows}")
            spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
            for what, stmts in pairs.items():
                copy = compile_sql(changed_rows(*stmts))
                plan = spark.sql(f"EXPLAIN {copy}", args=dict(copy.params)).collect()[0][0]
                assert "Join" in plan and "NestedLoopJoin" not in plan, (what, plan)
        finally:
            spark.sql(f"DROP DATABASE IF EXISTS {m.schema} CASCADE")


def test_a_checkpoint_stays_in_the_runs_session_when_another_session_is_active() -> None:
    """A working table read from a private table is a checkpoint of its rows (``SparkSQLSession._checkpointed``).
    pyspark hands the checkpointed frame to the thread's active session, not to the one that made it: with a session
    of the process's own opened first (a notebook's; the tests' ``twins``), the run's view was asked of that session
    and failed (``DATAFRAME_NOT_FOUND``), as this test did before the run made its own session the active one."""
    from pyspark.sql.connect.session import SparkSession

    other = SparkSession.builder.remote(SPARK_URL).create()
    schema = f"veil_ckpt_{uuid.uuid4().hex[:8]}"
    t = private(sa.Table("m", sa.MetaData(), sa.Column("x", sa.BigInteger), schema=schema))
    try:
        with open_backend(SPARK_URL).session() as session:
            spark = session.spark
            assert SparkSession.getActiveSession() is not spark  # the process's first session is the active one
            spark.sql(f"CREATE DATABASE {t.schema}")
            try:
                spark.sql(str(compile_sql(create_table(t))))
                spark.sql(f"INSERT INTO {t.schema}.{t.name} VALUES (1), (2), (3)")
                session.execute(working_table(sa.table("veil_kept"), sa.select(t.c.x).where(t.c.x > 1)), "keeping")
                kept = session.rows(sa.select(sa.column("x")).select_from(sa.table("veil_kept")).order_by("x"))
                assert kept == [(2,), (3,)]
                assert SparkSession.getActiveSession() is not spark  # and it stays so after the checkpoint
            finally:
                spark.sql(f"DROP DATABASE IF EXISTS {t.schema} CASCADE")
    finally:
        other.stop()
