"""Ctrl-C and SIGTERM stop a Spark run without raising inside the Spark Connect client.

Python runs a signal's handler in the main thread between two bytecodes, wherever that thread is; the run's
handlers (``veil.contract``) raise there.  Inside the gRPC client that can be between a lock's acquisition and
the ``with`` that would release it: the lock stays held, the channel's event thread blocks on it, and every later
call — the ``DROP`` of the run's views on the way out included — waits forever (a SIGTERM to ``veil search`` on
Spark hung for minutes this way, ``tests/spark/test_spark_backend.py::test_sigterm_drops_the_views_too``).

So while a session is open the handlers are wrapped: a signal that lands while the main thread is inside one of
the ``client`` packages is *deferred* — the server is asked to stop what the session runs (``interrupt``, from a
thread of its own), the call then fails or returns, and the signal is delivered again every ``RETRY`` seconds
until it lands in Veil's own code, where the original handler raises as usual.  A backend that sees the failed
call first raises ``pending()``'s interruption itself (``Backend.interruption``).  Inside ``shielded()``
(dropping the views) every signal waits until the block ends.  Installed only from the main thread, for the
signals whose handler raises.

>>> import signal
>>> calls = []
>>> deferred = DeferredSignals(lambda: calls.append("interrupt"), client=("doctest_client",))
>>> deferred.inside(None)
False
>>> deferred.pending() is None
True
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from veil.errors import CTRL_C, Interruption

STOPPING = (signal.SIGINT, signal.SIGTERM)
RETRY = 0.1  # seconds between deliveries of a deferred signal
CLIENT = ("grpc", "pyspark", "google.protobuf")  # the Spark Connect client's packages


class DeferredSignals:
    """Wraps SIGINT's and SIGTERM's handlers while open (a context manager); ``interrupt`` asks the server to stop
    what the session runs."""

    def __init__(self, interrupt: Callable[[], None], client: tuple[str, ...] = CLIENT) -> None:
        self.interrupt, self.client = interrupt, client
        self.previous: dict[int, Any] = {}
        self._pending: int | None = None
        self._shield = 0
        self._open = False
        self._lock = threading.Lock()

    def __enter__(self) -> DeferredSignals:
        if threading.current_thread() is threading.main_thread():
            for signum in STOPPING:
                handler = signal.getsignal(signum)
                if handler is signal.SIG_IGN or handler is None:
                    continue
                self.previous[signum] = handler
                signal.signal(signum, self.handle)
        self._open = True
        return self

    def __exit__(self, *exc: object) -> None:
        self._open = False
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)
        self.previous.clear()

    def inside(self, frame: FrameType | None) -> bool:
        """Whether ``frame`` or a caller of it runs code of the client's packages."""
        while frame is not None:
            name = frame.f_globals.get("__name__", "")
            if any(name == package or name.startswith(package + ".") for package in self.client):
                return True
            frame = frame.f_back
        return False

    def handle(self, signum: int, frame: FrameType | None) -> None:
        """The wrapper: defer inside the client or a shielded block, else hand over to the original handler."""
        if self._shield or self.inside(frame):
            with self._lock:
                first = self._pending is None
                self._pending = signum
            if first:
                threading.Thread(target=self._stop_and_retry, name="veil-deferred-signal", daemon=True).start()
            return
        with self._lock:
            self._pending = None
        self._deliver(signum, frame)

    def _deliver(self, signum: int, frame: FrameType | None) -> None:
        handler = self.previous.get(signum, signal.getsignal(signum))
        if handler is signal.SIG_DFL:
            raise SystemExit(128 + signum)  # what the default action would have meant, unwinding instead
        if callable(handler):
            handler(signum, frame)

    def _stop_and_retry(self) -> None:
        """Ask the server to stop, then deliver the signal again until it lands outside the client."""
        try:
            self.interrupt()
        except Exception:  # noqa: BLE001 - the session ending meanwhile: nothing left to stop
            pass
        while self._open:
            with self._lock:
                signum = self._pending
            if signum is None:
                return
            if not self._shield:
                os.kill(os.getpid(), signum)
            time.sleep(RETRY)

    def pending(self) -> Interruption | None:
        """The interruption a deferred signal means, taken (no more deliveries), or ``None``."""
        with self._lock:
            signum, self._pending = self._pending, None
        if signum is None:
            return None
        return Interruption.noted(CTRL_C if signum == signal.SIGINT else "terminated (SIGTERM)")

    @contextmanager
    def shielded(self) -> Iterator[None]:
        """No signal is delivered inside the block; one that came meanwhile is delivered when it ends."""
        self._shield += 1
        try:
            yield
        finally:
            self._shield -= 1
        with self._lock:
            signum = None if self._shield else self._pending
            if signum is not None:
                self._pending = None
        if signum is not None:
            self._deliver(signum, None)
