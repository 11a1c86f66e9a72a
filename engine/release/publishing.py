"""Publishing a decided version: its rows written, its blocks and dimension tables, an independent verification,
the views repointed, the catalog row and its details recorded, expired versions dropped — each step the
publication's (``veil.release.publication``), in its order; committed last (a dry run: rolled back)."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

import numpy as np
import sqlalchemy as sa

from veil import catalog
from veil import queries as q
from veil.backends.base import Session
from veil.catalog import Status
from veil.counts import NodeCounts
from veil.hierarchy import Hierarchy
from veil.lattice import Lattice
from veil.queries import catalog as qc
from veil.queries.ddl import create_table
from veil.release.outcome import VERSION_VIEW, WOULD_PUBLISH, Outcome, Written
from veil.release.process import failpoint
from veil.release.publication import check_grants, grant
from veil.release.state import Content, Run
from veil.release.verify import verify
from veil.run import metric_for
from veil.search import SearchResult
from veil.warehouse import Warehouse


def publish(
    run: Run,
    content: Content,
    counts: NodeCounts,
    suppressed: np.ndarray,
    info: dict[str, Any],
    result: SearchResult | None,
) -> Outcome:
    """The version written, verified, pointed to and recorded; committed (a dry run: rolled back)."""
    rel, session, pub = run.rel, run.session, run.publication
    version, node = content.number, content.node
    _materialize(run, content, counts, suppressed)
    rows_suppressed = int(counts.sizes[suppressed].sum())
    metrics, evaluations = _evaluated(run, result, counts, suppressed, node, rows_suppressed)
    views, achieved = _verified(run, content, rows_suppressed, evaluations)
    when = content.when
    run.on_step("repointing the views")
    failpoint("views")
    pub.point(version, when)
    failpoint("catalog")
    rows_published = content.rows_published
    _record(run, metrics, version, node, achieved, rows_published, rows_suppressed, info, when)
    expired = pub.expire(rel.keep_versions, version, when, run.runs.published())
    written = Written(
        rel.name,
        rel.schema,
        rel.series,
        version,
        node,
        rows_published,
        rows_suppressed,
        achieved,
        info.get("rows_deferred", 0),
        info,
        expired,
    )
    grant(session, rel.schema, [*pub.views(), *views], rel.grant_select_to)
    if run.dry_run:  # ``--dry-run``: decided, written and verified in the transaction, which ends here
        run.session.rollback()
        return written.outcome(WOULD_PUBLISH, run.release_id, written.rehearsed())
    session.commit()  # from here on the version is published, whatever happens (``stops.stopped``)
    expire_views(run, info)
    return written.outcome(Status.PUBLISHED, run.release_id, written.published())


def _materialize(run: Run, content: Content, counts: NodeCounts, suppressed: np.ndarray) -> None:
    """The version's rows inserted into ``<name>_rows``: ``content.rows``, else the source at the node less
    suppressed blocks and the rows held back (``VEIL_FAILPOINT=corrupt``: one of them deleted again)."""
    config, rel, session, wh = run.config, run.rel, run.session, run.wh
    version, node = content.number, content.node
    run.on_step(f"materializing version {version} into {rel.schema}.{rel.name}_rows")
    failpoint("materialize", session)
    check_grants(session, rel.grant_select_to)  # before anything is written (an autocommit one stays written)
    types = {c: sa.Text() if c in wh.attributes else wh.columns[c].sa_type for c in run.published}  # QIs: labels
    pub = run.publication
    pub.prepare(types, run.release_id)
    if content.rows is not None:
        pub.insert(version, content.rows)
    else:
        withheld = _stage(session, wh, counts, suppressed, content)
        not_null = list(config.sensitive) if config.source.nulls == "drop" else []
        pub.insert(
            version,
            q.release_select(
                run.source,
                wh.layout,
                node,
                wh.attributes,
                run.published,
                bool(suppressed.any()),
                not_null,
                withheld,
                version,
            ),
        )
    if os.environ.get("VEIL_FAILPOINT") == "corrupt":
        session.execute(
            q.publication.delete_one_row(
                pub.rows, version, config.sensitive[0] if config.sensitive else wh.attributes[0]
            ),
            "test failpoint corrupt",
        )


def _verified(
    run: Run, content: Content, rows_suppressed: int, evaluations: list[tuple[Any, bool, int, float | None]]
) -> tuple[list[str], dict[str, float | None]]:
    """The version's blocks and dimension tables created, its rows verified independently (``verify``, or the
    content's own check), then its ledger record if still due and the run's evaluated nodes and hierarchies, at once
    (none reads another; each only under the run's id until its catalog row says published); returns the views
    created and the levels achieved."""
    pub, wh, version, session = run.publication, run.wh, content.number, run.session
    run.on_step("verifying the release independently")
    failpoint("verify")
    views = pub.insert_blocks(version)
    views += pub.dimensions(version, wh, run.config, content.node)
    achieved = (
        content.check(pub.block_rows)
        if content.check is not None
        else verify(session, wh, run.spec, pub.block_rows, version, content.shown, content.hidden, rows_suppressed)
    )
    record = content.record
    session.together(
        [
            *([lambda: record(pub.block_rows)] if record is not None else []),
            lambda: _record_nodes(session, run.tables, run.release_id, evaluations),
            lambda: _record_hierarchies(session, run.tables, run.release_id, wh),
        ]
    )
    return views, achieved


def _stage(
    session: Session, wh: Warehouse, counts: NodeCounts, suppressed: np.ndarray, content: Content
) -> list[str] | None:
    """Temporary tables the rows' INSERT reads: suppressed blocks' codes and the rows held back; returns the
    held-back rows' value columns (``None`` when nothing is held back; empty when only QIs are published)."""
    if suppressed.any():
        sup = q.suppressed_table(len(wh.attributes))
        session.execute(create_table(sup), "listing suppressed blocks")
        session.bulk_load(
            sup, [tuple(int(c) for c in row) for row in counts.keys[suppressed]], "listing suppressed blocks"
        )
    if not content.held:
        return None
    columns = list(content.columns)
    table = q.withheld_table(len(wh.attributes), [wh.columns[c].sa_type for c in columns])
    session.execute(create_table(table), "listing the rows held back")
    session.bulk_load(table, content.held, "listing the rows held back")
    return columns


def _record(
    run: Run,
    metrics: dict[str, Any],
    version: int,
    node: tuple[int, ...],
    achieved: dict[str, float | None],
    rows_published: int,
    rows_suppressed: int,
    info: dict[str, Any],
    when: Any,
) -> None:
    """The catalog row of a published version (its evaluated nodes and hierarchies went with the verification)."""
    wh, rel = run.wh, run.rel
    published = qc.publish_run(
        run.tables.releases,
        run.release_id,
        version,
        when,
        dict(
            config_hash=run.config.digest,  # with the rows of hierarchies read from tables in this snapshot
            source_fingerprint=run.fingerprint,
            node=json.dumps(list(node)),
            achieved=json.dumps(achieved),
            metrics=json.dumps(metrics),
            rows_read=wh.stats.rows_read,
            rows_published=rows_published,
            rows_suppressed=rows_suppressed,
            rows_deferred=None,  # analysts read it (``<name>_releases``): info has it
            series=json.dumps(info),
            output_table=f"{rel.schema}.{VERSION_VIEW.format(name=rel.name, version=version)}",
            rows_dropped_null=wh.stats.rows_dropped_null,
        ),
    )
    run.session.execute(published, "recording the release")


def _evaluated(
    run: Run,
    result: SearchResult | None,
    counts: NodeCounts,
    suppressed: np.ndarray,
    node: tuple[int, ...],
    rows_suppressed: int,
) -> tuple[dict[str, Any], list[tuple[Any, bool, int, float | None]]]:
    """The run's metrics and evaluated nodes: the search's, else (a node kept, not searched) the node's alone."""
    if result is not None and result.optimal is not None:
        metrics = {
            "metric": result.optimal.metric,
            "value": result.optimal.value,
            "nodes_evaluated": result.nodes_evaluated,
            "lattice_size": result.lattice_size,
        }
        return metrics, result.evaluations
    wh = run.wh
    metric = metric_for(wh, run.config.search.metric, run.config)
    value = metric.score(counts, suppressed, wh.rows)
    metrics = {"metric": metric.name, "value": value, "nodes_evaluated": 1, "lattice_size": Lattice(wh.heights).size}
    return metrics, [(node, True, rows_suppressed, value)]


def expire_views(run: Run, info: dict[str, Any]) -> None:
    """After a run's commit (a version published, or a run skipped): drop the views of expired versions — their
    dimension views first — each in a short transaction that gives up rather than wait (docs/publication.md §3).
    What stays is noted in the run's catalog row; every later run, a skipped one too, tries again
    (``Publication.cleanup``; the autocommit publication dropped them in the run and repairs at the next one).
    Test failpoints at each step boundary after the commit: ``committed``, ``cleanup-views`` (the dimension views
    dropped), ``cleaned`` (and ``report``)."""
    if run.dry_run:  # a dry run's skip: nothing committed, nothing dropped
        return
    failpoint("committed")
    left = run.publication.cleanup()
    if left:
        _note_left(run, info, left)


def _note_left(run: Run, info: dict[str, Any], left: list[str]) -> None:
    """Expired versions' views that could not be dropped now (a reader or a dependent view): recorded, retried."""
    info["expired_objects_kept"] = left
    run.session.execute(
        q.runs.set_series(run.tables.releases, run.release_id, json.dumps(info)), "recording the views kept"
    )
    run.session.commit()


def _record_nodes(
    session: Session,
    tables: catalog.CatalogTables,
    release_id: str,
    evaluations: list[tuple[Any, bool, int, float | None]],
) -> None:
    rows = [
        (release_id, json.dumps([lv for lv in node]), bool(passed), int(supp), None if score is None else float(score))
        for node, passed, supp, score in evaluations
    ]
    session.bulk_load(tables.release_nodes, rows, "recording the evaluated nodes")


def _record_hierarchies(session: Session, tables: catalog.CatalogTables, release_id: str, wh: Warehouse) -> None:
    texts = {h.attribute: _arx_text(h) for h in wh.hierarchies}
    digests = {a: hashlib.sha256(t.encode()).hexdigest() for a, t in texts.items()}
    stored_digests = qc.stored_hierarchies(tables.hierarchies, list(digests.values()))
    stored = {d for (d,) in session.rows(stored_digests, "reading the hierarchies stored")}
    hrows, new = [], set()
    for qi, h in zip(wh.quasi_identifiers, wh.hierarchies):
        digest = digests[h.attribute]
        text = None if digest in stored or digest in new else texts[h.attribute]  # each text once (0008)
        new.add(digest)
        hrows.append((release_id, h.attribute, h.height, qi.hierarchy.describe(), len(h.leaves), text, digest))
    session.bulk_load(tables.hierarchies, hrows, "recording the hierarchies")


def _arx_text(h: Hierarchy) -> str:
    """A hierarchy as ARX text: a line per leaf, its labels from level 1 up, ``;``-separated."""
    return "\n".join(";".join([str(leaf), *(col[k] for col in h.labels)]) for k, leaf in enumerate(h.leaves))
