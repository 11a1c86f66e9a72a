"""The release: the only writer of release objects (``job``), the publication every reader can trust
(``publication``: the protocol the backend chooses; ``transactional``, ``autocommit``), the series guarantee
(``alignment``, ``differences``, ``series``, ``ledger``) and the history commands (``history``).  docs/series.md,
docs/publication.md and docs/spark.md describe them.

The names below load their module on first use, so ``veil releases``, ``veil rollback`` and ``veil audit
--series`` (``history``) do not import the release job with the search and the warehouse (issue 36).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from veil.release.history import exposure, releases, rollback
    from veil.release.job import init, release
    from veil.release.outcome import Outcome

__all__ = ["Outcome", "exposure", "init", "release", "releases", "rollback"]


def __getattr__(name: str) -> Any:
    if name in ("exposure", "releases", "rollback"):
        import veil.release.history as history_module

        value = getattr(history_module, name)
    elif name == "Outcome":
        import veil.release.outcome as outcome_module

        value = outcome_module.Outcome
    elif name in ("init", "release"):
        import veil.release.job as job_module

        value = getattr(job_module, name)
    else:
        raise AttributeError(f"module 'veil.release' has no attribute {name!r}")
    globals()[name] = value  # asked once
    return value
