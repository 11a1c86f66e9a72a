"""The release: the only writer of release objects (``job``), the publication every reader can trust
(``publication``), the series guarantee (``alignment``, ``differences``, ``series``, ``ledger``) and the
history commands (``history``).  docs/series.md and docs/publication.md describe them."""

from veil.release.history import exposure, releases, rollback
from veil.release.job import Outcome, init, release

__all__ = ["Outcome", "exposure", "init", "release", "releases", "rollback"]
