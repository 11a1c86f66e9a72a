"""What a release run reports: its ``Outcome`` (the JSON of ``veil release --json`` and the scheduler's exit
code) and, for a version written in the release's transaction, ``Written`` — the one place its outcome and
message are built, whether the run committed it, rehearsed it (``--dry-run``) or finds it committed after a
later step failed.

>>> w = Written("census", "published", "cohort", 3, (1, 0), 90, 10, {}, 2, {}, [1])
>>> w.output_table
'published.census_v3'
>>> w.outcome(Status.PUBLISHED, "r-1", w.published()).document()["rows_deferred"]
2
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from veil.catalog import Status

VERSION_VIEW = "{name}_v{version}"
WOULD_PUBLISH = "would_publish"  # a dry run's outcome (never a catalog status: nothing is written)


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
    statements: int = 0  # the statements the run sent (on Spark each is a job: the count is the release's cost)
    rows_deferred: int | None = None
    series: dict[str, Any] | None = None
    report: str | None = None
    warning: str | None = None  # the version is published (or the run skipped), but a step after the commit failed
    dry_run: bool = False  # ``--dry-run``: decided and verified, then rolled back (status ``would_publish``)

    @property
    def exit_code(self) -> int:
        return 0 if self.status in (Status.PUBLISHED, Status.SKIPPED, WOULD_PUBLISH) else 1

    def document(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "name": self.name,
            "release_id": None if self.dry_run else self.release_id,
            "version": self.version,
            "node": list(self.node) if self.node is not None else None,
            "output_table": self.output_table,
            "rows_published": self.rows_published,
            "rows_suppressed": self.rows_suppressed,
            "rows_deferred": self.rows_deferred,
            "achieved": self.achieved,
            "series": self.series,
            "report": self.report,
            "message": self.message,
            "seconds": round(self.seconds, 3),
            "statements": self.statements,
            **({"warning": self.warning} if self.warning else {}),
            **({"dry_run": True} if self.dry_run else {}),
        }


@dataclass(frozen=True)
class Written:
    """A version written in the release's transaction: release ``name`` in ``schema`` with series policy
    ``series``, what it holds (``deferred``: rows the series holds back), its series document and the versions its
    writing expired."""

    name: str
    schema: str
    series: str
    version: int
    node: tuple[int, ...]
    rows_published: int
    rows_suppressed: int
    achieved: dict[str, float | None] | None
    deferred: int | None
    info: dict[str, Any]
    expired: list[int]

    @property
    def output_table(self) -> str:
        return f"{self.schema}.{VERSION_VIEW.format(name=self.name, version=self.version)}"

    def held(self) -> str:
        """What the version holds back or shows for people no longer there: suppressed rows, rows the series
        defers, and — in a cohort series — its rows standing in for people who left (docs/series.md §2), which the
        publisher watches night after night (docs/series.md §9.5: at 1% churn they grow).

        >>> w = Written("r", "p", "cohort", 2, (0,), 10, 1, None, 3, {"standing_in": 4}, [])
        >>> w.held()
        "1 suppressed, 3 deferred and 4 standing in by the series policy 'cohort'"
        >>> Written("r", "p", "off", 2, (0,), 10, 1, None, 0, {}, []).held()
        "1 suppressed, 0 deferred by the series policy 'off'"
        """
        standing = self.info.get("standing_in") if isinstance(self.info, dict) else None
        shown = f" and {standing} standing in" if standing is not None else ""
        return (
            f"{self.rows_suppressed} suppressed, {self.deferred} deferred{shown} by the series policy {self.series!r}"
        )

    def published(self) -> str:
        """The message of a published version."""
        return (
            f"published {self.name!r} version {self.version} at node {list(self.node)}: {self.rows_published} rows "
            f"in {self.output_table} ({self.held()}); query {self.schema}.{self.name}, {self.schema}.{self.name}_blocks, "
            f"{self.schema}.{self.name}_releases" + (f"; expired version(s) {self.expired}" if self.expired else "")
        )

    def rehearsed(self) -> str:
        """The message of a dry run that reached the point where a release commits, and rolled back."""
        expiring = f"; version(s) {self.expired} would expire" if self.expired else ""
        return (
            f"dry run: would publish {self.name!r} version {self.version} at node {list(self.node)}: "
            f"{self.rows_published} rows ({self.held()}){expiring}; verified, then rolled back: nothing was written"
        )

    def outcome(self, status: str, release_id: str, message: str, warning: str | None = None) -> Outcome:
        """The run's outcome with this version: ``status`` ``published``, or ``would_publish`` for a dry run."""
        return Outcome(
            status,
            self.name,
            release_id,
            message,
            version=self.version,
            node=self.node,
            output_table=self.output_table,
            rows_published=self.rows_published,
            rows_suppressed=self.rows_suppressed,
            achieved=self.achieved,
            rows_deferred=self.deferred,
            series=self.info,
            warning=warning,
            dry_run=status == WOULD_PUBLISH,
        )
