"""The catalog's statements (``veil.queries.catalog``: a run's row, a release's versions, the revision) and the
DDL the release issues through the generic builders (``veil.queries.ddl.create_table`` ...), compiled per
dialect against reviewed snapshots: ``tests/snapshots/catalog.<dialect>.sql`` — DuckDB and PostgreSQL, and Spark
(``catalog.spark.sql``: the statements as the Spark session sends them, an ``INSERT``/``UPDATE`` of a table whose
rows change rewritten as one append to its log, ``veil.queries.spark.logged``; compiled, no cluster needed).

Regenerate after an intended change with ``VEIL_UPDATE_SNAPSHOTS=1 pytest tests/test_catalog_sql.py`` and review
the diff like code; a missing snapshot is written outside CI and the test still fails; with ``CI=true`` nothing
is ever written (``tests.test_query_snapshots.check_snapshot``)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from tests.test_query_snapshots import DIALECTS, HOSTILE, check_snapshot
from veil import catalog
from veil import queries as q
from veil.queries import catalog as qc
from veil.queries import members as mq
from veil.queries import appendonly
from veil.queries import spark as sq
from veil.queries.ddl import create_table, drop_temporary, private, relation, replaced

SNAPSHOTS = Path(__file__).parent / "snapshots"
WHEN = dt.datetime(2026, 1, 2, 2, 0, 1)
RUN = "6f1c2a7e-0000-4000-8000-000000000001"


def statements() -> dict[str, Any]:
    """The catalog's reads and writes, in the order a release, a rollback and ``veil releases`` issue them."""
    t = catalog.tables("veil")
    r = t.releases
    return {
        "revision": qc.revision(t.version),
        "record_revision": qc.record_revision(t.version, catalog.HEAD),
        "start_run": qc.start_run(r, RUN, "census", WHEN, "[source]\n...", "c0ffee", "duckdb"),
        "close_interrupted": qc.close_interrupted(r, "census", WHEN, "interrupted: the process ended"),
        "runs_of": qc.runs_of(r, "census"),
        "skip_run": qc.skip_run(r, RUN, WHEN, "100:12345", "release 'census' is unchanged"),
        "stored_hierarchies": qc.stored_hierarchies(t.hierarchies, ["9f86d081", "60303ae2"]),
        "forget_hierarchy_texts": qc.forget_hierarchy_texts(t.hierarchies, r),
        "published_versions": qc.published_versions(r, "census"),
        "latest_published_version": qc.published_versions(r, "census", limit=1),
        "expire_versions": qc.expire_versions(r, "census", [1, 2], WHEN),
        "publish_run": qc.publish_run(
            r,
            RUN,
            7,
            WHEN,
            {
                "config_hash": "c0ffee",
                "source_fingerprint": "100:12345",
                "node": "[1, 0]",
                "achieved": "{}",
                "metrics": "{}",
                "rows_read": 100,
                "rows_published": 98,
                "rows_suppressed": 2,
                "rows_deferred": None,
                "series": "{}",
                "output_table": "published.census_v7",
                "rows_dropped_null": 0,
            },
        ),
        "expired_versions": qc.expired_versions(r, "census"),
        "set_series": q.runs.set_series(r, RUN, '{"expired_objects_kept": []}'),
        "fail_run": qc.fail_run(r, RUN, WHEN, "interrupted: Ctrl-C; nothing was published"),
        "run_status": q.runs.status(r, RUN),
        "run_summary": q.runs.summary(r, RUN),
        "record_ledger_version": q.ledger.record_version(
            t.series_versions,
            name="census",
            version=7,
            release_id=RUN,
            node="[1, 0]",
            attributes='["zip"]',
            columns="{}",
            hierarchies="{}",
            policy="cohort",
            published_at=WHEN,
        ),
        # veil releases, veil rollback, veil audit --series
        "history": qc.history(r, "census"),
        "kept_versions": qc.kept_versions(r, "census"),
        "rows_published": qc.rows_published(r, "census", 3),
        "record_rollback": qc.record_rollback(
            r,
            RUN,
            "census",
            3,
            WHEN,
            "[source]\n...",
            "c0ffee",
            "postgresql",
            "rolled back 'census' from version 7 to version 3",
        ),
        "series_records": qc.series_records(r, "census"),
        "ledger_columns": q.ledger.of_release(t.series_versions, "census", "columns"),
        # Spark's repair of what a killed run left (veil.release.autocommit.recover)
        "adopt_run": qc.adopt_run(
            r,
            RUN,
            7,
            WHEN,
            "recorded by a later run",
            "published.census_v7",
            t.series_versions,
            t.series_state,
            "census_members_v7",
        ),
        "ledger_versions": q.ledger.of_release(t.series_versions, "census", "version", "release_id"),
        "keep_number": qc.keep_number(r, RUN, 7, "interrupted after the ledger recorded version 7"),
    }


def ddl() -> dict[str, Any]:
    """The release's temporary tables, created and dropped through ``veil.queries.ddl`` (DuckDB, PostgreSQL)."""
    members = mq.members_table("veil", "census_members", ["Zip Code", HOSTILE], {"condition": sa.Text()})
    return {
        "suppressed_table": create_table(q.suppressed_table(2)),
        "withheld_table": create_table(q.withheld_table(2, [sa.Text(), sa.Integer()])),
        "ledger_changed_table": create_table(q.ledger.changed_table()),
        "ledger_new_cells_table": create_table(q.ledger.new_cells_table()),
        "drop_ledger_changed_table": drop_temporary(q.ledger.changed_table()),
        "drop_ledger_block_ids": drop_temporary(q.ledger.block_ids_table(2)),
        "count_cells": q.count_rows(relation(q.CELLS)),
        "members_table": create_table(members),
        "members_leaving_table": create_table(mq.leaving_table()),
        "members_forming_table": create_table(mq.forming_table(["Zip Code", HOSTILE])),
        "members_histograms": mq.histograms(
            relation("census_members", "veil", "veil_state", "veil_cohort", "Zip Code", HOSTILE, "condition"),
            ["Zip Code", HOSTILE],
            ["condition"],
        ),
        # the night's reads of the histograms kept once (cohort_series._histograms)
        "members_kept_histograms": mq.kept_histograms(
            relation("census_members", "veil", "veil_state", "veil_cohort", "Zip Code", HOSTILE, "condition"),
            ["Zip Code", HOSTILE],
            ["condition"],
        ),
        "members_undecided": mq.undecided(["Zip Code", HOSTILE], ["condition"], 10),
        "members_by_size": mq.by_size(10),
        "members_totals": mq.totals(["condition"]),
        # the night's changes of the members (docs/series.md §2)
        "members_leave": mq.leave(members, 7),
        "members_forget": mq.forget(members),
        "members_arrive": mq.arrive(members, ["Zip Code", HOSTILE, "condition"], 7),
        "members_form": mq.form(members, ["Zip Code", HOSTILE], 7),
        "members_depart": mq.depart(members),
        "members_withdraw": mq.withdraw(members),
        "members_erase": mq.erase(members),
        # a waiting member takes over a stand-in with the same row (docs/series.md §2)
        "members_takeovers": mq.takeovers(members),
        "members_taking_count": mq.taking_count(),
        "members_take_over": mq.take_over(members, 7),
        "members_taken_over": mq.taken_over(members),
        # the node moves up for the joiners' delay bound (docs/series.md §2a)
        "members_joined_after": mq.joined_after(members, 7),
        "members_cohort_rows": mq.cohort_rows(members),
        "members_unmapped": mq.unmapped(members, "Zip Code", q.Layout((3, 1), 0).dim(0), 1),
        # the series' row, written at the night's end (in place: replaced; on Spark: appended, docs/spark.md §7)
        "series_state_of": mq.state_of(catalog.tables("veil").series_state, "census"),
        "series_forget_state": mq.forget_state(catalog.tables("veil").series_state, "census"),
        "series_record_state": mq.record_state(
            catalog.tables("veil").series_state, {"name": "census", "members": "census_members_v4", "next_cohort": 9}
        ),
        # a version's own members where statements commit on their own (``veil.release.memberstore``)
        "members_generation": mq.generation("veil", "census_members_v3", "census_members_v4"),
        # the members relabeled for the move: written beside the table and copied back (``Session.replace``)
        **{f"members_relabeled_{i}": stmt for i, stmt in enumerate(replaced(members, *relabeling(members)))},
    }


def relabeling(members: sa.Table) -> tuple[sa.Select[Any], sa.Table]:
    """The rows of a move of the series' node (``mq.relabeled``) and the table they are written into first."""
    changes = [("Zip Code", q.Layout((3, 1), 0).dim(0), 1, 3), (HOSTILE, q.Layout((3, 1), 0).dim(1), 0, 1)]
    moving = mq.members_table("veil", "census_members_moving", ["Zip Code", HOSTILE], {"condition": sa.Text()})
    return mq.relabeled(members, changes), moving


def spark() -> dict[str, Any]:
    """On Spark: the catalog created table by table (``veil.catalog._create``; every table but the revision row a
    log behind a view, ``veil.queries.appendonly``), then the catalog statements as the session sends them, and a
    compaction's."""
    t = catalog.tables("veil")
    out: dict[str, Any] = {}
    for table in (t.releases, t.release_nodes, t.version):
        if appendonly.stored_as_log(table):
            log = appendonly.log_table(table)
            out[f"create_{log.name}"] = create_table(log, if_not_exists=True)
            out[f"view_{table.name}"] = appendonly.view(table, appendonly.Layout.fresh(20_000))
        else:
            out[f"create_{table.name}"] = create_table(table, if_not_exists=True)
    for name, stmt in statements().items():
        target = getattr(stmt, "table", None)
        if isinstance(target, sa.Table) and (
            isinstance(stmt, sa.Insert)
            and appendonly.stored_as_log(target)
            or isinstance(stmt, sa.Update)
            and target.name in appendonly.LOGGED
        ):
            stmt = appendonly.logged(stmt, appendonly.log_table(target), 42)
        elif isinstance(stmt, sa.Update | sa.Delete) and isinstance(target, sa.Table):
            if appendonly.stored_as_log(target):
                continue  # never sent on Spark: the catalog takes appends only
            # the members generation, the run's own: each change a copy swapped in (docs/spark.md §7)
            for i, step in enumerate(sq.rewritten(stmt)):
                out[f"{name}_{i}"] = step
            continue
        out[name] = stmt
    # a cohort series' night (docs/spark.md §7): the members generation copied, each change of it a copy swapped in,
    # the series' row appended
    night = ddl()
    out["members_generation"] = night["members_generation"]
    out["members_arrive"] = night["members_arrive"]
    for name in ("leave", "forget", "form", "depart", "withdraw", "erase", "take_over", "taken_over"):
        for i, step in enumerate(sq.rewritten(night[f"members_{name}"])):
            out[f"members_{name}_{i}"] = step
    # the changes a night makes together, one copy for each pair (``SparkSQLSession.change``)
    for pair in (("forget", "leave"), ("taken_over", "take_over"), ("depart", "form")):
        for i, step in enumerate(sq.rewritten(*(night[f"members_{name}"] for name in pair))):
            out[f"members_{'_'.join(pair)}_{i}"] = step
    # the move's relabeled members, one copy swapped in (``SparkSQLSession.replace``)
    members = private(mq.members_table("veil", "census_members", ["Zip Code", HOSTILE], {"condition": sa.Text()}))
    for i, step in enumerate(sq.replaced(members, relabeling(members)[0])):
        out[f"members_relabeled_{i}"] = step
    out["series_record_state"] = appendonly.logged(
        night["series_record_state"], appendonly.log_table(t.series_state), 42
    )
    compacted = appendonly.Layout(20_010, 19_997)
    for table in (t.releases, t.release_nodes):
        out[f"compact_{table.name}"] = appendonly.compacted(table, compacted, 20_017)
        out[f"switch_{table.name}"] = appendonly.view(table, appendonly.Layout(20_017, 20_010))
        out[f"drop_days_{table.name}"] = appendonly.DropPartitions(appendonly.log_table(table), range(19_998, 20_011))
    # a cohort series' rows whose members tables later nights dropped are left out (``appendonly.NAMING``)
    out["compact_series_state"] = appendonly.compacted(t.series_state, compacted, 20_017, ["census_members_v9"])
    return out


def render(dialect: str) -> str:
    if dialect == "spark":
        return "\n".join(f"-- {name}\n{str(sq.compile_sql(stmt)).strip()};\n" for name, stmt in spark().items())
    parts = {**statements(), **ddl()}
    return "\n".join(
        f"-- {name}\n{str(stmt.compile(dialect=DIALECTS[dialect])).strip()};\n" for name, stmt in parts.items()
    )


@pytest.mark.parametrize("dialect", [*DIALECTS, "spark"])
def test_catalog_statements_match_their_snapshot(dialect: str) -> None:
    check_snapshot(SNAPSHOTS / f"catalog.{dialect}.sql", render(dialect))


def test_statuses_are_bound_as_the_catalogs_text() -> None:
    """The enum never reaches a driver: every status is bound as its stored text (a plain ``str``)."""
    r = catalog.tables("veil").releases
    for stmt in (
        qc.published_versions(r, "x"),
        qc.expire_versions(r, "x", [1], WHEN),
        qc.fail_run(r, RUN, WHEN, "e"),
        qc.start_run(r, RUN, "x", WHEN, "", "", "duckdb"),
        qc.kept_versions(r, "x"),
        qc.forget_hierarchy_texts(catalog.tables("veil").hierarchies, r),
    ):
        params = stmt.compile(dialect=DIALECTS["postgresql"]).params
        bound = [x for v in params.values() for x in (v if isinstance(v, list | tuple) else [v])]
        statuses = [x for x in bound if isinstance(x, str) and x in catalog.STATUSES]
        assert statuses and all(type(s) is str for s in statuses), params
    assert [str(s) for s in catalog.Status] == ["running", "published", "skipped", "failed", "expired", "rollback"]
    assert catalog.STATUSES == tuple(catalog.Status) and "published" in catalog.STATUSES


def test_values_are_bound_and_identifiers_quoted() -> None:
    sql = render("postgresql")
    assert "unchanged" not in sql and "c0ffee" not in sql  # values bound, never inlined
    assert '"x""; DROP TABLE t; --"' in sql  # a hostile column of the members table, quoted by the dialect
    assert "`veil`.`releases_log`" in render("spark")
