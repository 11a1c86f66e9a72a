"""A release's history as the catalog keeps it: ``veil releases`` (every run and version), ``veil rollback``
(repoint the views to a kept version, atomically, recorded) and the series exposure of what is already
published (docs/series-ledger.md §7; ``veil audit --series`` prints it)."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from dataclasses import replace
from typing import Any

from veil import catalog
from veil import queries as q
from veil.catalog import Status
from veil.config import Config, require_release
from veil.errors import ConfigError, ReleaseError
from veil.queries import catalog as qc
from veil.release import cohort_series, ledger as ledger_mod
from veil.release import series
from veil.release.differences import Judge
from veil.release.publication import Publication, publication_for
from veil.release.process import connect, interruptible, now


def _time(value: Any) -> str | None:
    """A catalog time (naive UTC) in ISO 8601 with its offset, as every JSON document has it:
    ``2026-01-02T02:00:01+00:00``."""
    if value is None:
        return None
    return (value if value.tzinfo is not None else value.replace(tzinfo=dt.timezone.utc)).isoformat(timespec="seconds")


SERIES_NOTES = ("node", "previous_node", "node_reason", "node_floor", "node_delay", "node_budget", "joiners_cohort")
"""What a night's record says about its node and the series' plan (docs/series.md §2a, §2b), as ``veil releases``
shows it."""


def releases(config: Config) -> dict[str, Any]:
    """Every run of the release, oldest first: version, status, node, rows (of a cohort series: standing in too),
    achieved levels, times, the node's notes (``SERIES_NOTES``); and the version the views show now."""
    rel = require_release(config)
    _, session, ctx = connect(config, 0.0)
    try:
        tables = catalog.require(session, rel.catalog_schema)
        pointer = session.rows(q.publication.read_pointer(tables.publications, rel.name), "reading the pointer")
        current = int(pointer[0][0]) if pointer else None
        rows = session.rows(qc.history(tables.releases, rel.name), "reading the release history")
    finally:
        ctx.__exit__(None, None, None)
    history = []
    for version, status, node, pub, sup, deferred, achieved, started, published, error, info in rows:
        step = json.loads(info) if info else {}
        history.append(
            {
                "version": version,
                "status": status,
                "node": json.loads(node) if node else None,
                "rows_published": pub,
                "rows_suppressed": sup,
                "rows_deferred": step.get("rows_deferred", deferred),  # the catalog's own record (analysts: NULL)
                "achieved": json.loads(achieved) if achieved else None,
                "started_at": _time(started),
                "published_at": _time(published),
                "current": status == Status.PUBLISHED and version == current,
                "series": step.get("policy"),
                "standing_in": step.get("standing_in"),
                "series_notes": {k: step[k] for k in SERIES_NOTES if step.get(k) is not None},
                "message": error,
            }
        )
    return {"name": rel.name, "current": current, "releases": history}


def rollback(config: Config, to: int, wait: float = 0.0) -> dict[str, Any]:
    """Repoint the views of the release to kept version ``to`` (``Publication.roll_back``: in one transaction
    where the backend has them), recorded in the catalog (a ``rollback`` row); refused when ``to`` is not a kept
    version.  The dimension views (``<name>_dim_<column>``) follow: they read the pointer too
    (``veil.release.dimensions``)."""
    rel = require_release(config)
    _, session, ctx = connect(config, wait)
    try:
        tables = catalog.require(session, rel.catalog_schema)
        publication = publication_for(session, tables, config)
        with publication.lock(wait), interruptible():
            pointer = session.rows(q.publication.read_pointer(tables.publications, rel.name), "reading the pointer")
            if not pointer:
                raise ReleaseError(f"release {rel.name!r} has no published version to roll back")
            publication = replace(publication, schema=pointer[0][1])  # where the release was published
            _check_kept(session, tables, publication, to)
            before = int(pointer[0][0])
            when = now()
            rollback_id = str(uuid.uuid4())
            publication.roll_back(to, rollback_id, when)
            message = f"rolled back {rel.name!r} from version {before} to version {to}"
            session.execute(
                qc.record_rollback(
                    tables.releases,
                    rollback_id,
                    rel.name,
                    to,
                    when,
                    config.text,
                    config.digest,
                    session.backend.name,
                    message,
                ),
                "recording the rollback",
            )
            session.commit()
    finally:
        ctx.__exit__(None, None, None)
    return {"status": "rolled_back", "name": rel.name, "from": before, "version": to, "message": message}


def _check_kept(session: Any, tables: catalog.CatalogTables, publication: Publication, to: int) -> None:
    """Refuse ``--to`` unless it names a kept version whose rows can be shown again."""
    name, r = publication.name, tables.releases
    found = dict(session.rows(qc.kept_versions(r, name), "reading the versions"))
    if found.get(to) != Status.PUBLISHED:
        kept = sorted(v for v, s in found.items() if s == Status.PUBLISHED)
        why = "has expired: its rows were deleted" if found.get(to) == Status.EXPIRED else "was never published"
        raise ConfigError(f"--to {to}: version {to} of {name!r} {why}; kept versions: {kept}")
    shown = publication.has_rows(to)
    published = session.scalar(qc.rows_published(r, name, to), "reading the version")
    if not shown and published:
        schema = publication.schema
        raise ConfigError(
            f"--to {to}: version {to} of {name!r} was published by an earlier Veil (table "
            f"{schema}.{name}_v{to}); only versions in {schema}.{name}_rows can be shown again"
        )


def exposure(config: Config) -> dict[str, Any]:
    """What the published history already exposes: for every pair of versions the ledger recorded, the
    differences that fail the config's models (counts only: blocks, rows).  Reference distributions are each
    version's own table (docs/series-ledger.md §7)."""
    rel = require_release(config)
    _, session, ctx = connect(config, 0.0)
    try:
        tables = catalog.require(session, rel.catalog_schema)
        ledger = ledger_mod.load(session, tables, rel.name)
        numeric = _numeric(session, tables, rel.name)
        cohort = cohort_series.audit(session, tables, config, rel.name, _series_records(session, tables, rel.name))
    finally:
        ctx.__exit__(None, None, None)
    sensitive = ledger.latest.layout.sensitive if ledger.latest is not None else tuple(config.sensitive)
    judge = Judge(config.models, sensitive, numeric)
    with interruptible():
        found = series.exposure(ledger.dictionary, judge, ledger.versions)
    pairs: dict[tuple[int, int], dict[str, Any]] = {}
    for e in found:
        p = pairs.setdefault(
            (e.earlier, e.later),
            {
                "versions": [e.earlier, e.later],
                "compared_at": list(e.compared_at),
                "blocks": 0,
                "rows_exposed": 0,
                "details": [],
            },
        )
        p["blocks"] += e.blocks
        p["rows_exposed"] += e.rows
        p["details"].append({"view": e.projection, "side": e.side, "blocks": e.blocks, "rows": e.rows})
    n = len(ledger.versions)
    return {
        "name": rel.name,
        "cohort": cohort,
        "versions": [v.number for v in ledger.versions],
        "policies": {str(k): v for k, v in ledger.policies.items()},
        "pairs_checked": n * (n - 1) // 2,
        "exposed_pairs": len(pairs),
        "rows_exposed": sum(p["rows_exposed"] for p in pairs.values()),
        "pairs": list(pairs.values()),
    }


def _series_records(session: Any, tables: catalog.CatalogTables, name: str) -> list[dict[str, Any]]:
    """Each published (or expired) version's ``series`` record, with its version, node and rows published, oldest
    first."""
    rows = session.rows(qc.series_records(tables.releases, name), "reading the series")
    return [
        {
            **(json.loads(info) if info else {}),
            "version": int(v),
            "node": json.loads(node) if node else None,
            "rows_published": published,
        }
        for v, node, info, published in rows
    ]


def _numeric(session: Any, tables: catalog.CatalogTables, name: str) -> dict[str, bool]:
    rows = session.rows(q.ledger.of_release(tables.series_versions, name, "columns"), "reading the ledger's columns")
    out: dict[str, bool] = {}
    for (text,) in rows:
        for c in json.loads(text).get("numeric", []):
            out[c] = True
    return out
