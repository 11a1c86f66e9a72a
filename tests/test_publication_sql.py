"""The release's and publication's statements compiled per dialect, against reviewed snapshots
(``tests/snapshots/publication.<dialect>.sql``).  Regenerate after an intended change with
``VEIL_UPDATE_SNAPSHOTS=1 pytest tests/test_publication_sql.py``; a run never creates them otherwise."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import sqlalchemy as sa

from veil import catalog
from veil import queries as q
from veil.queries import dimensions as qd
from veil.queries import publication as pub
from veil.queries import spark as sq
from veil.queries.ddl import create_index, create_table, create_view, drop_table, drop_view
from tests.test_query_snapshots import DIALECTS, HOSTILE, check_snapshot

SNAPSHOTS = Path(__file__).parent / "snapshots"


def statements() -> dict[str, object]:
    lay = q.Layout(heights=(5, 3), sensitive_count=1)
    src = q.source_table(
        "raw", "Patients", {"Zip Code": sa.Text(), "age": sa.Integer(), "condition": sa.Text(), HOSTILE: sa.Text()}
    )
    t = catalog.tables("veil")
    rows = pub.rows_table(
        "published", "census", {"Zip Code": sa.Text(), "age": sa.Text(), "condition": sa.Text(), HOSTILE: sa.Text()}
    )
    blocks = pub.block_rows_table("published", "census", ["Zip Code", "age"], {"condition": sa.Text()})
    qis, cols = ["Zip Code", "age"], ["Zip Code", "age", "condition", HOSTILE]
    dim = qd.rows_table("published", qd.names("census", "Zip Code")["rows"], 5, sa.Text())
    return {
        "values_table": q.values_table(src, qis, ["condition", HOSTILE], ["condition"]),
        "values_table_without_columns": q.values_table(src, qis, [], []),
        "cell_values": q.cell_values(2),
        "cells_table": q.cells_table(src, lay, (1, 0), qis, ["condition", HOSTILE], ["condition"], ["none", "some"]),
        "cells_table_null_everywhere": q.cells_table(
            src, lay, (1, 0), qis, ["condition", HOSTILE], [], ["all", "none"]
        ),
        "cells_table_without_columns": q.cells_table(src, lay, (1, 0), qis, [], [], []),
        "cells_table_narrow": q.cells_table(
            src, lay, (1, 0), qis, ["condition"], [], ["none"], None, [40, 300], 70_000
        ),
        "coded_cells": q.coded_cells(2),
        "valued_cells": q.valued_cells(src, lay, (1, 0), qis, ["condition", HOSTILE], ["condition"]),
        "valued_cells_without_columns": q.valued_cells(src, lay, (1, 0), qis, [], []),
        "release_rows": q.release_select(src, lay, (1, 0), qis, cols, True, ["condition"], (), 7),
        "release_rows_with_held_back": q.release_select(
            src, lay, (1, 0), qis, cols, True, [], ["condition", HOSTILE], 7
        ),
        "release_rows_held_back_qis_only": q.release_select(src, lay, (1, 0), qis, qis, False, [], [], 7),
        "rows_ddl": create_table(rows),
        "insert_rows": pub.insert_rows(rows, cols, q.release_select(src, lay, (1, 0), qis, cols, False, [], (), 7)),
        "insert_blocks": pub.insert_blocks(blocks, rows, 7, qis, ["condition"]),
        "insert_blocks_numbered": pub.insert_blocks(blocks, rows, 7, qis, ["condition"], numbered=True),
        "analyze": q.Analyze(sa.table(q.CELLS)),
        "block_keys": pub.block_keys(rows, 7, HOSTILE, 3),
        "recount": q.recount(blocks, 7, qis, ["condition"]),
        "recount_numbers": q.recount_numbers(blocks, 7, "Zip Code", 0),
        "recount_values": q.recount_values(blocks, 7, qis, ["condition"]),
        "view_current": create_view(
            "published", "census", pub.rows_view(rows, cols, pub.current(t.publications, "census"))
        ),
        "view_blocks": create_view(
            "published",
            "census_blocks",
            pub.blocks_view(blocks, qis, ["condition"], pub.current(t.publications, "census")),
        ),
        "view_releases": create_view(
            "published", "census_releases", pub.releases_view(t.releases, t.publications, "census")
        ),
        "view_version": create_view("published", "census_v7", pub.version_rows_view(rows, cols, 7)),
        "move_pointer": pub.set_pointer(t.publications, "census", 7, sa.func.now()),
        "expire": pub.delete_versions(rows, [1, 2]),
        "close_ledger_cells": q.ledger.close_cells(t.series_cells, "census", 7, catalog.OPEN),
        "ledger_block_ids_ddl": create_table(q.ledger.block_ids_table(2)),
        "ledger_value_ids_ddl": create_table(q.ledger.value_ids_table()),
        "copy_ledger_cells": q.ledger.copy_cells(t.series_cells, "census", 7, catalog.OPEN, 2, False),
        "copy_ledger_cells_merged": q.ledger.copy_cells(t.series_cells, "census", 7, catalog.OPEN, 2, True),
        "ledger_block_labels": q.ledger.block_labels_table(lay, (1, 0)),
        "ledger_value_labels": q.ledger.value_labels_table(2),
        "copy_published_blocks": q.ledger.copy_published(
            t.series_cells, "census", 7, catalog.OPEN, blocks, qis, ["condition"], ["none"], False
        ),
        "copy_published_blocks_merged": q.ledger.copy_published(
            t.series_cells, "census", 7, catalog.OPEN, blocks, qis, ["condition"], ["some"], True
        ),
        "ledger_rows_per_value": q.ledger.rows_per_value(2),
        "ledger_version_rows": q.ledger.version_rows(t.series_cells, "census", 7),
        "ledger_cell_shards_ddl": create_table(q.ledger.cell_shards_table(2)),
        "ledger_block_shards_ddl": create_table(q.ledger.block_shards_table()),
        "ledger_new_cells_ddl": create_table(q.ledger.new_cells_table()),
        "ledger_sharded_candidate": q.ledger.sharded_cells(2),
        "ledger_sharded_ledger": q.ledger.sharded_ledger(t.series_cells, "census", ("block_id", "value_id", "count")),
        "ledger_shard_of_candidate": q.ledger.shard_cells(2, 3),
        "ledger_shard_of_ledger": q.ledger.ledger_shard_cells(3, ("block_id", "value_id", "count")),
        "ledger_write_new_cells": q.ledger.write_new_cells(t.series_cells, "census", 7, catalog.OPEN),
        "dim_rows_ddl": create_table(dim),
        "dim_copy": qd.insert_released(dim, lay.dim(0), 5, 2, "3f2a", qd.published_labels(blocks, "Zip Code", [7])),
        "dim_copy_leaves": qd.insert_released(
            dim, lay.dim(0), 5, 0, "3f2a", qd.published_labels(blocks, "Zip Code", [7])
        ),
        "dim_legacy": qd.legacy(t.publication_dimensions, t.releases, "census"),
        "dim_redact": qd.redacted_copy(dim, "3f2a", 2, 5, [(1, ["1305*"]), (2, ["130**"])], "3f2a~"),
        "dim_labels_at": qd.labels_at(dim, "3f2a", 1, ["1305*"]),
        "dim_retag": qd.retag(dim, "3f2a~", "3f2a"),
        "dim_mark_level": qd.mark_level(t.publication_dimensions, "census", "Zip Code", [6, 7], 2),
        "dim_lookup": qd.has_digest(dim, "3f2a"),
        "view_dim_current": create_view(
            "published",
            qd.names("census", "Zip Code")["view"],
            qd.current_view(dim, t.publication_dimensions, t.publications, "census", "Zip Code"),
        ),
        "view_dim_version": create_view(
            "published", qd.names("census", "Zip Code", 7)["version_view"], qd.version_view(dim, 5, "3f2a")
        ),
        "record_dims": qd.record(
            t.publication_dimensions,
            [
                {
                    "name": "census",
                    "version": 7,
                    "attribute": "Zip Code",
                    "role": "quasi-identifier",
                    "digest": "3f2a",
                    "height": 5,
                    "dim_table": dim.name,
                    "level": 2,
                }
            ],
        ),
        "dim_expire": qd.delete_unused(dim, t.publication_dimensions, t.releases, "census", "Zip Code"),
        # built in veil.release before issue 37, now by the builders (veil.queries.publication, .dimensions, .ddl)
        "rows_version_index": create_index(pub.version_index(rows)),
        "view_version_blocks": create_view(
            "published", "census_v7_blocks", pub.version_blocks_view(blocks, qis, ["condition"], 7)
        ),
        "blocks_of_version": pub.blocks_of_version("published", "census", 7),
        "legacy_copy_rows": pub.legacy_copy("published", "census_rows", "census_v7", 7),
        "drop_expired_view": drop_view("census_v1_blocks", "published"),
        "drop_expired_table": drop_table("census_v1", "published"),
        "dim_rows_index": create_index(qd.digest_index(dim)),
        "dim_expire_by_name": qd.delete_unused(
            qd.content_table("published", dim.name), t.publication_dimensions, t.releases, "census", "Zip Code"
        ),
    }


def spark_statements() -> dict[str, object]:
    """Spark's publication (``veil.release.autocommit``): version N's views switched one by one, each
    carrying its version and run; what a view carries read back; an expired version's views and tables dropped."""
    t = catalog.tables("veil")
    props = {"veil.version": "7", "veil.release_id": "6f1c2a7e-0000-4000-8000-000000000001"}
    switched = pub.switched_views(
        "published",
        "census",
        7,
        props,
        ["Zip Code", "age", "condition", HOSTILE],
        ["Zip Code", "age"],
        ["condition"],
        t.releases,
        t.publications,
    )
    return {
        **{f"switch_{view}": statement for view, statement in switched},
        "show_properties": pub.show_properties("published", "census"),
        "drop_version_view": drop_view("census_v1_blocks", "published"),
        "drop_version_table": drop_table("census_block_rows_v1", "published"),
        "valued_cells": statements()["valued_cells"],  # a release's candidate, fetched whole (``fetchedcells``)
    }


def render(dialect: sa.Dialect) -> str:
    return "\n".join(
        f"-- {name}\n{str(stmt.compile(dialect=dialect)).strip()};\n"  # type: ignore[attr-defined]
        for name, stmt in statements().items()
    )


@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_publication_statements_match_their_snapshot(dialect: str) -> None:
    text = render(DIALECTS[dialect])
    path = SNAPSHOTS / f"publication.{dialect}.sql"
    if os.environ.get("VEIL_UPDATE_SNAPSHOTS"):
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no snapshot {path.name}: run with VEIL_UPDATE_SNAPSHOTS=1 and review it"
    assert text == path.read_text(encoding="utf-8")


def test_spark_publication_statements_match_their_snapshot() -> None:
    text = "\n".join(f"-- {name}\n{str(sq.compile_sql(stmt)).strip()};\n" for name, stmt in spark_statements().items())
    check_snapshot(SNAPSHOTS / "publication.spark.sql", text)


def test_views_read_the_pointer_and_never_name_a_version_table() -> None:
    sql = render(DIALECTS["postgresql"])
    current = sql.split("-- view_current\n", 1)[1].split(";\n", 1)[0]
    assert "veil.publications.current_version" in current and "census_v" not in current
    assert '"x""; DROP TABLE t; --"' in sql


def test_dimension_views_read_the_pointer_and_never_name_a_content() -> None:
    sql = render(DIALECTS["postgresql"])
    current = sql.split("-- view_dim_current\n", 1)[1].split(";\n", 1)[0]
    assert "veil.publications.current_version" in current and "3f2a" not in current
    assert 'published."census_dim_Zip Code_rows"' in current
