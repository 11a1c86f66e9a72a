"""How a run that stopped ends (``veil.release.job``): a row still ``running`` is marked failed and the error raised
again; a run whose commit happened keeps its outcome, with a warning (exit 0) — the version stays published
whatever failed after it (docs/publication.md)."""

from __future__ import annotations

import json

from veil import catalog, log
from veil import queries as q
from veil.backends.base import Session
from veil.catalog import Status
from veil.config import ReleaseConfig
from veil.errors import CTRL_C, VeilError, redact
from veil.queries import catalog as qc
from veil.release.outcome import Outcome, Written
from veil.release.process import now


def stopped(
    session: Session, tables: catalog.CatalogTables, rel: ReleaseConfig, release_id: str, exc: BaseException
) -> Outcome:
    """A run that raised ``exc``: what the database committed decides.  A row still ``running`` (nothing was
    committed) is marked failed and the error raised again; a row ``published`` or ``skipped`` was committed
    before a step after the commit failed or was interrupted (the clean-up of expired views, the report; a
    connection lost during COMMIT itself): the run's outcome stands, with a warning (exit 0)."""
    # a driver's interrupt that reached here unwrapped (DuckDB's "Query interrupted" on a fetch)
    interrupted = (
        session.backend.interruption(exc) if isinstance(exc, Exception) and not isinstance(exc, VeilError) else None
    )
    reason = _reason(interrupted or exc)
    status = _fail(
        session,
        tables,
        release_id,
        f"{reason}; nothing was published" if isinstance(interrupted or exc, KeyboardInterrupt) else reason,
    )
    if status not in (Status.PUBLISHED, Status.SKIPPED):
        if interrupted is not None:
            raise interrupted from None
        raise exc
    return _committed(session, tables, rel, release_id, reason)


def _reason(exc: BaseException) -> str:
    """Why a run stopped, in one line: its error, ``interrupted: <what>`` (never empty: a bare Ctrl-C's
    ``KeyboardInterrupt`` has no message), or a bug's ``internal error``."""
    if isinstance(exc, KeyboardInterrupt):
        return f"interrupted: {str(exc) or CTRL_C}"
    if isinstance(exc, VeilError):
        return str(exc)
    return f"internal error: {type(exc).__name__}: {exc}"


def _fail(session: Session, tables: catalog.CatalogTables, release_id: str, error: str) -> str | None:
    """Mark the run failed, unless its row is no longer ``running``: a version whose commit happened stays
    published whatever failed after it (even a commit whose answer was lost, on a new connection).  Returns
    the row's status as the database has it, ``None`` when the database cannot be reached (the next run marks
    a row left running failed)."""
    r = tables.releases
    try:
        session.rollback()
        session.execute(qc.fail_run(r, release_id, now(), redact(error)[:4000]), "recording the failure")
        session.commit()
        return str(session.scalar(q.runs.status(r, release_id), "reading the run's status"))
    except VeilError:
        return None  # the connection is gone: the next run marks the row failed


def close_interrupted(session: Session, tables: catalog.CatalogTables, name: str) -> None:
    """Runs still 'running' while we hold the lock died mid-release (killed): mark them failed."""
    session.execute(
        qc.close_interrupted(
            tables.releases, name, now(), "interrupted: the process ended before the release finished"
        ),
        "closing interrupted runs",
    )
    session.commit()


def _committed(
    session: Session, tables: catalog.CatalogTables, rel: ReleaseConfig, release_id: str, reason: str
) -> Outcome:
    """The outcome of a run whose commit happened (its row ``published`` or ``skipped``) but a step after it
    failed: what the catalog row recorded, and a warning — logged, and kept in the row's ``series`` document
    (``cleanup``) where the database can still be written."""
    row = dict(zip(q.runs.SUMMARY, session.rows(q.runs.summary(tables.releases, release_id), "reading the run")[0]))
    info = json.loads(row["series"]) if row["series"] else {}
    version = row["version"]
    if row["status"] == Status.PUBLISHED:
        warning = (
            f"release {rel.name!r} version {version} is published, but the steps after its commit did not "
            f"finish ({reason}): the next `veil release` drops the views of expired versions"
            + (f"; write its report with `veil report --release {version} --out FILE`" if rel.report else "")
        )
    else:
        warning = (
            f"release {rel.name!r} is unchanged, but the clean-up after its skip did not finish ({reason}): "
            "the next `veil release` drops the views of expired versions"
        )
    info["cleanup"] = warning
    try:
        session.rollback()
        session.execute(q.runs.set_series(tables.releases, release_id, json.dumps(info)), "recording the warning")
        session.commit()
    except VeilError:
        pass  # the warning is still logged and printed
    log.log.warning(redact(warning))
    if row["status"] != Status.PUBLISHED:
        return Outcome(
            Status.SKIPPED,
            rel.name,
            release_id,
            f"{row['error']}; warning: {warning}",
            version=version,
            warning=warning,
        )
    written = Written(
        rel.name,
        rel.schema,
        rel.series,
        version,
        tuple(json.loads(row["node"])),
        row["rows_published"],
        row["rows_suppressed"],
        json.loads(row["achieved"] or "null"),
        row["rows_deferred"],
        info,
        [],
    )
    return written.outcome(Status.PUBLISHED, release_id, f"{written.published()}; warning: {warning}", warning)
