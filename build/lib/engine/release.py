"""The release job: config → hierarchies → search → materialize → verify → swap views → catalog.
The only writer of release objects.

A release is never half-published.  After a short committed "running" row in the catalog, everything
happens in one transaction that reads one snapshot of the source: the base frequency set, the search,
``CREATE TABLE <schema>.<name>_v<N> AS SELECT`` (generalized through the dimension tables, suppressed blocks
and unlisted columns dropped), an independent recount of blocks and histograms from that table with every
checker run again, the views ``<name>``, ``<name>_blocks`` and ``<name>_releases`` repointed, and the
catalog row marked published.  Any failure — or a killed process — rolls all of it back: the previous
release stays published and the catalog row says ``failed`` with the error (a run killed outright is
marked failed by the next run, which holds the lock).

Test failpoints: ``VEIL_FAILPOINT=<step>`` raises at that step (search, materialize, verify, views,
catalog); ``VEIL_FAILPOINT=corrupt`` deletes a row of the new table before verification (which must then
fail); ``VEIL_FAILPOINT=pause:<step>`` sleeps there so a test can kill the process.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import sqlalchemy as sa

from engine import catalog
from engine import queries as q
from engine.backends import open_backend
from engine.backends.base import Session
from engine.config import Config, require_release, sensitive_needed
from engine.counts import NodeCounts
from engine.errors import BusyError, ConfigError, NoSolutionError, ReleaseError, SourceError, VeilError
from engine.lattice import Lattice
from engine.privacy import Specification
from engine.run import metric_for
from engine.search import SearchResult
from engine.search import run as run_search
from engine.warehouse import Warehouse

VERSION_TABLE = "{name}_v{version}"


@dataclass(frozen=True)
class Outcome:
    """What a release run did; ``exit_code`` is the scheduler's: 0 published or unchanged, 2 no node."""

    status: str
    name: str
    release_id: str
    message: str
    version: int | None = None
    node: tuple[int, ...] | None = None
    output_table: str | None = None
    rows_published: int | None = None
    rows_suppressed: int | None = None
    achieved: dict[str, float | None] | None = None
    seconds: float = 0.0

    @property
    def exit_code(self) -> int:
        return 0 if self.status in ("published", "skipped") else 1

    def document(self) -> dict[str, Any]:
        return {"status": self.status, "name": self.name, "release_id": self.release_id, "version": self.version,
                "node": list(self.node) if self.node is not None else None, "output_table": self.output_table,
                "rows_published": self.rows_published, "rows_suppressed": self.rows_suppressed,
                "achieved": self.achieved, "message": self.message, "seconds": round(self.seconds, 3)}


def _failpoint(step: str) -> None:
    """Test hook: ``VEIL_FAILPOINT=<step>`` fails here, ``pause:<step>`` sleeps here (to be killed)."""
    point = os.environ.get("VEIL_FAILPOINT", "")
    if point == f"pause:{step}":
        time.sleep(float(os.environ.get("VEIL_FAILPOINT_SECONDS", "60")))
    if point == step:
        raise ReleaseError(f"injected failure at step {step!r} (VEIL_FAILPOINT)")


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def _lock_key(schema: str, name: str) -> int:
    digest = hashlib.sha256(f"veil:{schema}:{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


@contextmanager
def _locked(session: Session, schema: str, name: str, wait: float) -> Iterator[None]:
    """Exactly one run of a release name at a time: a PostgreSQL advisory lock (DuckDB: the file lock,
    taken when the connection opened)."""
    if not session.backend.advisory_locks:
        yield
        return
    key = _lock_key(schema, name)
    deadline = time.monotonic() + wait
    while not session.scalar(q.try_advisory_lock(key), "taking the release lock"):
        if time.monotonic() >= deadline:
            raise BusyError(f"another `veil release` of {name!r} is running (advisory lock held); "
                            "nothing was published by this run — try again later or pass --wait")
        time.sleep(0.5)
    session.commit()
    try:
        yield
    finally:
        try:
            session.rollback()
            session.scalar(q.advisory_unlock(key), "releasing the release lock")
            session.commit()
        except VeilError:
            pass


def _connect(config: Config, wait: float) -> tuple[Any, Session, Any]:
    """Open the backend and one session, waiting up to ``wait`` seconds for a busy DuckDB file."""
    backend = open_backend(config.source.resolved_url())
    deadline = time.monotonic() + wait
    while True:
        ctx = backend.session()
        try:
            return backend, ctx.__enter__(), ctx
        except BusyError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.5)


def init(config: Config) -> tuple[str | None, str | None]:
    """``veil init``: apply the catalog migrations (create or upgrade)."""
    backend = open_backend(config.source.resolved_url())
    with backend.session() as session:
        return catalog.upgrade(session, config.catalog_schema)


def release(config: Config, *, force: bool = False, wait: float = 0.0,
            on_step: Callable[[str], None] = lambda _m: None) -> Outcome:
    """``veil release``: publish a new version of the release, or say why not."""
    rel = require_release(config)
    started = time.perf_counter()
    backend, session, ctx = _connect(config, wait)
    try:
        tables = catalog.require(session, rel.catalog_schema)
        with _locked(session, rel.catalog_schema, rel.name, wait):
            _close_interrupted(session, tables, rel.name)
            release_id = str(uuid.uuid4())
            session.execute(tables.releases.insert().values(
                id=release_id, name=rel.name, status="running", started_at=_now(), config=config.text,
                config_hash=config.digest, backend=backend.name), "recording the release as running")
            session.commit()
            try:
                outcome = _run(config, session, tables, release_id, force, on_step)
            except VeilError as exc:
                session.rollback()
                _fail(session, tables, release_id, str(exc))
                raise
            except Exception as exc:  # a bug: still leave the catalog consistent
                session.rollback()
                _fail(session, tables, release_id, f"internal error: {type(exc).__name__}: {exc}")
                raise
    finally:
        ctx.__exit__(None, None, None)
    return Outcome(**{**outcome.__dict__, "seconds": time.perf_counter() - started})


def _fail(session: Session, tables: catalog.CatalogTables, release_id: str, error: str) -> None:
    r = tables.releases
    session.execute(sa.update(r).where(r.c.id == release_id).values(status="failed", finished_at=_now(),
                                                                   error=error[:4000]), "recording the failure")
    session.commit()


def _close_interrupted(session: Session, tables: catalog.CatalogTables, name: str) -> None:
    """Runs still 'running' while we hold the lock died mid-release (killed): mark them failed."""
    r = tables.releases
    session.execute(sa.update(r).where(r.c.name == name, r.c.status == "running").values(
        status="failed", finished_at=_now(), error="interrupted: the process ended before the release finished"),
        "closing interrupted runs")
    session.commit()


def _run(config: Config, session: Session, tables: catalog.CatalogTables, release_id: str, force: bool,
         on_step: Callable[[str], None]) -> Outcome:
    rel = require_release(config)
    r = tables.releases
    session.begin_snapshot()
    counted = tuple(sensitive_needed(config))  # the search counts what the models read; the rest is published
    wh = Warehouse(session, config.source, config.quasi_identifiers, counted,
                   null_checked=tuple(c for c in config.sensitive if c not in counted), on_step=on_step)
    columns = wh.inspect()
    missing = [c for c in (*rel.keep_columns, *rel.drop_columns) if c not in columns]
    if missing:
        raise SourceError(f"[release] names column(s) {', '.join(map(repr, missing))} that source table "
                          f"{wh.table_name!r} does not have")
    published = [c for c in columns if c in set(wh.attributes) | set(config.sensitive) | set(rel.keep_columns)]
    for c in rel.keep_columns:
        if columns[c].sa_type is None:
            raise SourceError(f"keep_columns: column {c!r} of {wh.table_name!r} has a type Veil cannot copy")
    source = wh.source_table(published)

    on_step("fingerprinting the source")
    count, total = session.rows(q.fingerprint(source, published, session.backend.fingerprint_style),
                                "fingerprinting the source")[0]
    fingerprint = f"{int(count)}:{int(total)}"
    last = session.rows(sa.select(r.c.version, r.c.config_hash, r.c.source_fingerprint)
                        .where(r.c.name == rel.name, r.c.status == "published")
                        .order_by(r.c.version.desc()).limit(1), "reading the latest release")
    if last and not force and last[0][1] == config.digest and last[0][2] == fingerprint:
        session.rollback()
        message = (f"release {rel.name!r} is unchanged since version {last[0][0]} (same source fingerprint and "
                   "config): nothing published (use --force to publish anyway)")
        session.execute(sa.update(r).where(r.c.id == release_id).values(
            status="skipped", finished_at=_now(), source_fingerprint=fingerprint, error=message), "recording the skip")
        session.commit()
        return Outcome("skipped", rel.name, release_id, message, version=last[0][0])

    wh.prepare()
    domains = {d.name: d for d in wh.domains}
    for model in config.models:
        model.validate(domains)
    spec = Specification(config.models, config.search.max_suppression)
    on_step("searching the lattice")
    _failpoint("search")
    result = run_search(["optimal"], Lattice(wh.heights), wh.attributes, wh.counts, spec,
                        metric_for(wh, config.search.metric), wh.rows)
    if result.optimal is None:
        raise NoSolutionError(_no_solution_message(wh, spec, config))
    node = result.optimal.node
    counts = wh.counts(node)
    evaluation = spec.evaluate(counts, wh.rows)
    suppressed = evaluation.failing

    version = int(session.scalar(sa.select(sa.func.coalesce(sa.func.max(r.c.version), 0))
                                 .where(r.c.name == rel.name), "numbering the release")) + 1
    table = VERSION_TABLE.format(name=rel.name, version=version)
    on_step(f"materializing {rel.schema}.{table}")
    _failpoint("materialize")
    session.execute(q.CreateSchema(rel.schema), f"creating schema {rel.schema!r}")
    for leftover in (table, f"{table}_blocks"):
        session.execute(q.drop_table(leftover, rel.schema), "clearing a leftover table")
    if suppressed.any():
        sup = q.suppressed_table(len(wh.attributes))
        session.execute(sa.schema.CreateTable(sup), "listing suppressed blocks")
        session.bulk_load(sup, [tuple(int(c) for c in row) for row in counts.keys[suppressed]],
                          "listing suppressed blocks")
    not_null = list(config.sensitive) if config.source.nulls == "drop" else []
    select = q.release_select(source, wh.layout, node, wh.attributes, published, bool(suppressed.any()), not_null)
    session.execute(q.create_table_as(rel.schema, table, select), f"materializing {rel.schema}.{table}")
    if os.environ.get("VEIL_FAILPOINT") == "corrupt":
        target = sa.table(table, sa.column(config.sensitive[0] if config.sensitive else wh.attributes[0]),
                          schema=rel.schema)
        session.execute(sa.delete(target).where(target.c[target.c.keys()[0]].in_(
            sa.select(target.c[target.c.keys()[0]]).limit(1).scalar_subquery())), "test failpoint corrupt")

    on_step("verifying the release independently")
    _failpoint("verify")
    blocks_table = f"{table}_blocks"
    session.execute(q.create_table_as(rel.schema, blocks_table,
                                      q.recount(rel.schema, table, wh.attributes, config.sensitive)),
                    "counting the release's blocks")
    achieved = _verify(session, wh, spec, counts, suppressed, rel.schema, table)

    on_step("repointing the views")
    _failpoint("views")
    qis, sens = list(wh.attributes), list(config.sensitive)
    views = {rel.name: q.latest_view(rel.schema, table, published),
             f"{rel.name}_blocks": q.blocks_view(rel.schema, blocks_table, qis, sens),
             f"{rel.name}_releases": q.releases_view(tables.releases, rel.name)}
    for view, stmt in views.items():
        for statement in q.view_of(rel.schema, view, stmt):
            session.execute(statement, f"repointing view {rel.schema}.{view}")
    _grant(session, rel.schema, list(views), rel.grant_select_to)

    _failpoint("catalog")
    rows_published = int(counts.sizes[~suppressed].sum())
    metrics = {"metric": result.optimal.metric, "value": result.optimal.value,
               "nodes_evaluated": result.nodes_evaluated, "lattice_size": result.lattice_size}
    session.execute(sa.update(r).where(r.c.id == release_id).values(
        status="published", version=version, finished_at=_now(), published_at=_now(),
        source_fingerprint=fingerprint, node=json.dumps(list(node)), achieved=json.dumps(achieved),
        metrics=json.dumps(metrics), rows_read=wh.stats.rows_read, rows_published=rows_published,
        rows_suppressed=int(counts.sizes[suppressed].sum()), output_table=f"{rel.schema}.{table}",
        rows_dropped_null=wh.stats.rows_dropped_null), "recording the release")
    _record_details(session, tables, release_id, wh, result)
    session.commit()
    message = (f"published {rel.name!r} version {version} at node {list(node)}: {rows_published} rows in "
               f"{rel.schema}.{table} ({int(counts.sizes[suppressed].sum())} suppressed); query "
               f"{rel.schema}.{rel.name}, {rel.schema}.{rel.name}_blocks, {rel.schema}.{rel.name}_releases")
    return Outcome("published", rel.name, release_id, message, version=version, node=node,
                   output_table=f"{rel.schema}.{table}", rows_published=rows_published,
                   rows_suppressed=int(counts.sizes[suppressed].sum()), achieved=achieved)


def _label(model: Any) -> str:
    return f"{model.type}:{model.attribute}" if model.attribute else model.type


def _no_solution_message(wh: Warehouse, spec: Specification, config: Config) -> str:
    """Name the models that fail even at the most general node, with the best level reached there."""
    top = wh.counts(tuple(wh.heights))
    evaluation = spec.evaluate(top, wh.rows)
    parts = []
    for model, verdict in zip(spec.models, evaluation.verdicts):
        if not verdict.passed.all():
            level = "undefined" if verdict.achieved is None else f"{verdict.achieved:.6g}"
            parts.append(f"{model.describe()} fails even at the most general node {list(wh.heights)} "
                         f"(best level reached: {level})")
    budget = f" within a suppression budget of {config.search.max_suppression:g}" if config.search.max_suppression else ""
    if not parts:
        parts.append("every model holds at the most general node on its own, but no node satisfies them together")
    return f"no lattice node satisfies the models{budget}: " + "; ".join(parts) + "; nothing was published"


def _verify(session: Session, wh: Warehouse, spec: Specification, counts: NodeCounts, suppressed: np.ndarray,
            schema: str, table: str) -> dict[str, float | None]:
    """Recount the release from its own table and re-run every checker; the counts must equal the
    search's (released blocks) and every released block must pass every model."""
    qis, sens = list(wh.attributes), list(wh.sensitive)
    rows = session.rows(q.recount(schema, table, qis, sens), "recounting the release")  # driver objects
    names = [*qis, *sens, "n"]
    data = {c: [r[k] for r in rows] for k, c in enumerate(names)}
    node = counts.node
    n = len(rows)
    qi_codes = np.zeros((n, len(qis)), dtype=np.int64)
    for i, (name, level) in enumerate(zip(qis, node)):
        h = wh.hierarchies[i]
        if level == 0:
            mapping = {text: code for code, text in session.rows(q.level0_labels(wh.layout, i), "reading labels")}
        else:
            mapping = {label: code for code, label in enumerate(h.domain(level))}
        try:
            qi_codes[:, i] = [mapping[v] for v in data[name]]
        except KeyError as exc:
            raise ReleaseError(f"verification failed: column {name!r} of the release holds {exc.args[0]!r}, "
                               f"not a level-{level} value of its hierarchy") from None
    s_codes = np.zeros((n, len(sens)), dtype=np.int64)
    for j, dom in enumerate(wh.domains):
        index = {v: k for k, v in enumerate(wh.raw_values[dom.name])}
        try:
            s_codes[:, j] = [index[v] for v in data[dom.name]]
        except KeyError as exc:
            raise ReleaseError(f"verification failed: sensitive column {dom.name!r} holds {exc.args[0]!r}, "
                               "not a value of the source") from None
    cards = [h.cardinality(level) for h, level in zip(wh.hierarchies, node)]
    recounted = NodeCounts.from_cells(counts.attributes, node, qi_codes, s_codes, np.asarray(data["n"], dtype=np.int64),
                                      cards, wh.domains, wh.hierarchies)
    expected = counts.restrict(~suppressed)
    if not _same(recounted, expected):
        raise ReleaseError("verification failed: the blocks and histograms counted from the materialized table "
                           "differ from the search's counts at the chosen node")
    # every checker again, on the recount (suppressed blocks kept only as context for natural supersets)
    full = _with_suppressed(recounted, counts, suppressed)
    kept = np.concatenate([np.ones(recounted.n_blocks, dtype=bool), np.zeros(int(suppressed.sum()), dtype=bool)])
    achieved: dict[str, float | None] = {}
    for model in spec.models:
        verdict = model.check(full)
        if not verdict.passed[kept].all():
            raise ReleaseError(f"verification failed: {model.describe()} does not hold on "
                               f"{int((~verdict.passed[kept]).sum())} released block(s)")
        only_released = model.check(recounted)
        achieved[_label(model)] = only_released.achieved
    if int(counts.sizes[suppressed].sum()) > spec.budget(wh.rows) + 1e-9:
        raise ReleaseError("verification failed: more rows suppressed than the budget allows")
    return achieved


def _same(a: NodeCounts, b: NodeCounts) -> bool:
    if a.n_blocks != b.n_blocks or not np.array_equal(a.keys, b.keys) or not np.array_equal(a.sizes, b.sizes):
        return False
    for dom in a.sensitive:
        if not np.array_equal(a.blocks(dom.name).counts, b.blocks(dom.name).counts):
            return False
    return True


def _with_suppressed(recounted: NodeCounts, counts: NodeCounts, suppressed: np.ndarray) -> NodeCounts:
    """The recount plus the suppressed blocks (from the search), released blocks first."""
    if not suppressed.any():
        return recounted
    extra = counts.restrict(suppressed)
    offset = recounted.n_blocks
    return NodeCounts(
        attributes=recounted.attributes, node=recounted.node, keys=np.vstack([recounted.keys, extra.keys]),
        cardinalities=recounted.cardinalities,
        cell_block=np.concatenate([recounted.cell_block, extra.cell_block + offset]),
        cell_values=np.vstack([recounted.cell_values, extra.cell_values]),
        cell_count=np.concatenate([recounted.cell_count, extra.cell_count]),
        sensitive=recounted.sensitive, generalizers=recounted.generalizers)


def _grant(session: Session, schema: str, views: Sequence[str], roles: Sequence[str]) -> None:
    if not roles:
        return
    if not session.backend.grants:
        raise ConfigError(f"[release] grant_select_to is set, but {session.backend.name} has no roles to grant to")
    for role in roles:
        if not session.scalar(q.role_exists(role), "looking up a role"):
            raise ConfigError(f"[release] grant_select_to names role {role!r}, which does not exist")
        session.execute(q.Grant(role, schema), f"granting schema {schema!r} to {role!r}")
        for view in views:
            session.execute(q.Grant(role, schema, view), f"granting {schema}.{view} to {role!r}")


def _record_details(session: Session, tables: catalog.CatalogTables, release_id: str, wh: Warehouse,
                    result: SearchResult) -> None:
    rows = [(release_id, json.dumps([lv for lv in node]), bool(passed), int(supp),
             None if score is None else float(score)) for node, passed, supp, score in result.evaluations]
    session.bulk_load(tables.release_nodes, rows, "recording the evaluated nodes")
    hrows = []
    for qi, h in zip(wh.quasi_identifiers, wh.hierarchies):
        lines = [";".join([str(leaf), *(col[k] for col in h.labels)]) for k, leaf in enumerate(h.leaves)]
        hrows.append((release_id, h.attribute, h.height, qi.hierarchy.describe(), len(h.leaves), "\n".join(lines)))
    session.bulk_load(tables.hierarchies, hrows, "recording the hierarchies")
