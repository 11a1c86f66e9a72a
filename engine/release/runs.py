"""A release's runs as the catalog holds them, read once under the release's lock (``qc.runs_of``): what the
run's steps ask of them — interrupted runs to close, the versions kept and numbered, the newest version and its
fingerprint, the next number, the versions still published — answered from one statement instead of one each
(on Spark each is a job of 0.2–0.5 s, docs/spark.md §9).  The lock keeps every other run of the release out
meanwhile; a step that changes the rows (``recover``'s repairs) reads them again.

>>> runs = Runs([(None, "failed", None, None, "r0"), (1, "expired", "c1", "10:7", "r1"),
...              (2, "published", "c2", "12:9", "r2"), (3, "failed", None, None, "r3"),
...              (None, "running", None, None, "r4"), (1, "rollback", "c2", None, "b5")])
>>> runs.running, runs.kept(), sorted(runs.numbered()), runs.highest(), runs.latest(), runs.published()
(1, {1: 'expired', 2: 'published'}, [1, 2, 3], 3, (2, 'c2', '12:9'), [2])
>>> runs.finished("r2", 2), runs.finished("b5", 1), runs.finished("r3", 3), runs.finished("r4", 5)
(True, True, False, False)
>>> sorted(runs.ids())
['b5', 'r0', 'r1', 'r2', 'r3', 'r4']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from veil.backends.base import Session
from veil.catalog import Status
from veil.queries import catalog as qc


@dataclass(frozen=True)
class Runs:
    """``(version, status, config_hash, source_fingerprint, id)`` of every run of one release (a ``veil
    rollback`` is a row too)."""

    rows: Sequence[tuple[int | None, str, str | None, str | None, str]]

    @classmethod
    def read(cls, session: Session, releases: Any, name: str) -> Runs:
        rows = session.rows(qc.runs_of(releases, name), f"reading the runs of {name!r}")
        return cls([(None if v is None else int(v), str(s), h, f, str(i)) for v, s, h, f, i in rows])

    @property
    def running(self) -> int:
        """Runs still ``running``: seen under the lock, they were killed mid-run."""
        return sum(1 for _v, s, _h, _f, _i in self.rows if s == Status.RUNNING)

    def kept(self) -> dict[int, str]:
        """Version → status of the versions ever published (``published`` or ``expired``)."""
        return {v: s for v, s, _h, _f, _i in self.rows if v is not None and s in qc.KEPT}

    def numbered(self) -> set[int]:
        """Every version number a run holds, whatever its status (never reused)."""
        return {v for v, _s, _h, _f, _i in self.rows if v is not None}

    def highest(self) -> int:
        """The highest version number a run holds (0 when none): the next version is one more."""
        return max(self.numbered(), default=0)

    def latest(self) -> tuple[int, str | None, str | None] | None:
        """``(version, config_hash, source_fingerprint)`` of the newest published or expired version."""
        kept = [(v, h, f) for v, s, h, f, _i in self.rows if v is not None and s in qc.KEPT]
        return max(kept, key=lambda r: r[0]) if kept else None

    def published(self) -> list[int]:
        """The versions still published, newest first."""
        return sorted((v for v, s, _h, _f, _i in self.rows if v is not None and s == Status.PUBLISHED), reverse=True)

    def ids(self) -> set[str]:
        """The ids of the release's runs and rollbacks."""
        return {i for _v, _s, _h, _f, i in self.rows}

    def finished(self, run_id: str, version: int) -> bool:
        """Whether run ``run_id`` (a release or a ``veil rollback``) finished showing ``version``: its row says
        ``published`` or ``rollback`` with that version — written after the views and the pointer moved."""
        done = (Status.PUBLISHED.value, Status.ROLLBACK.value)
        return any(i == run_id and v == version and s in done for v, s, _h, _f, i in self.rows)
