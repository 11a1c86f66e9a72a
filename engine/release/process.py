"""What every writing command of a release shares: one connection (waiting for a busy DuckDB file), interrupts
that end a run cleanly, UTC timestamps and test failpoints (one run of a release name at a time:
``Publication.lock``, ``veil.release.publication``)."""

from __future__ import annotations

import datetime as dt
import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from veil import lockwait
from veil.backends import open_backend
from veil.backends.base import Session
from veil.config import Config
from veil.errors import Interruption, ReleaseError
from veil.queries import Stall


class Interrupted(Interruption):
    """SIGTERM (a scheduler stopping the job) ends a run like Ctrl-C."""


def now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def failpoint(step: str, session: Session | None = None) -> None:
    """Test hook: ``VEIL_FAILPOINT=<step>`` fails here, ``pause:<step>`` sleeps here (to be killed or
    interrupted), ``stall:<step>`` runs one statement of about ``VEIL_FAILPOINT_SECONDS`` in the database
    (``queries.Stall``; where ``session`` is given) so that a signal lands while the driver works.  The file
    ``VEIL_FAILPOINT_FILE`` names, if any, is created when the pause or the statement begins."""
    point = os.environ.get("VEIL_FAILPOINT", "")
    seconds = float(os.environ.get("VEIL_FAILPOINT_SECONDS", "60"))
    if point in (f"pause:{step}", f"stall:{step}"):
        if os.environ.get("VEIL_FAILPOINT_FILE"):
            with open(os.environ["VEIL_FAILPOINT_FILE"], "w", encoding="utf-8") as mark:
                mark.write(step)
        if point.startswith("stall:") and session is not None:
            session.execute(Stall(seconds), f"test failpoint {point}")
        else:
            time.sleep(seconds)
    if point == step:
        raise ReleaseError(f"injected failure at step {step!r} (VEIL_FAILPOINT)")


def connect(config: Config, wait: float) -> tuple[Any, Session, Any]:
    """Open the backend and one session, waiting up to ``wait`` seconds for a busy DuckDB file."""
    backend = open_backend(config.source.resolved_url())

    def attempt() -> tuple[Any, Session, Any]:
        ctx = backend.session()
        return backend, ctx.__enter__(), ctx

    return lockwait.retrying(attempt, wait)


@contextmanager
def interruptible() -> Iterator[None]:
    """While a run writes, SIGTERM raises ``Interrupted`` (like Ctrl-C's KeyboardInterrupt), so the run can
    mark its catalog row failed before the process ends."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise Interrupted.noted("terminated (SIGTERM)")

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
