"""Ctrl-C and SIGTERM reach a DuckDB statement that a worker thread runs.

DuckDB runs Python's signal handlers only between the tasks the calling thread executes itself: when a worker
thread holds a long task (a single-threaded scan on a loaded machine), the handler's exception makes the client
cancel the query and wait for that task to finish — the whole statement.  Python's C-level handler writes every
signal it catches to the wakeup file descriptor (``signal.set_wakeup_fd``) at once, whatever the main thread is
doing; a daemon thread reading it waits ``GRACE`` seconds and calls ``interrupt()`` on the DuckDB connections
still executing the statement they ran when the signal came (``watching``), which stops DuckDB's workers at their
next vector.  The grace leaves alone what DuckDB stopped on its own and the statements that record the failure
afterwards.  The handler's exception then ends the run as before (``Backend.interruption`` names the signal).
Installed once, from the main thread, and only where nothing else (an asyncio loop's signal handling) owns the
wakeup descriptor.

>>> class Connection:
...     def interrupt(self) -> None:
...         print("interrupted")
>>> with watching(Connection()):
...     _interrupt_all(bytes([signal.SIGINT]), grace=0)
interrupted
>>> _interrupt_all(bytes([signal.SIGINT]), grace=0)  # nothing executing: nothing to interrupt
"""

from __future__ import annotations

import itertools
import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

STOPPING = frozenset({int(signal.SIGINT), int(signal.SIGTERM)})
GRACE = 2.0  # seconds a statement has to stop on its own after a signal

_lock = threading.Lock()
_tokens = itertools.count(1)
_executing: dict[int, Any] = {}  # a statement's token → the connection running it
_installed: list[bool] = []


def install() -> bool:
    """Start watching (once per process): ``False`` off the main thread or where the wakeup descriptor is taken."""
    if _installed:
        return _installed[0]
    if threading.current_thread() is not threading.main_thread():
        return False
    read, write = os.pipe()
    os.set_blocking(write, False)
    try:
        previous = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    except ValueError:
        previous = None
    if previous != -1:  # someone else's descriptor (or none allowed): leave it as it was
        if previous is not None:
            signal.set_wakeup_fd(previous)
        os.close(read)
        os.close(write)
        _installed.append(False)
        return False
    threading.Thread(target=_watch, args=(read,), name="veil-signal-watch", daemon=True).start()
    _installed.append(True)
    return True


@contextmanager
def watching(connection: Any) -> Iterator[None]:
    """While the block (one statement) runs, a SIGINT or SIGTERM interrupts ``connection`` (anything with
    ``interrupt()``)."""
    token = next(_tokens)
    with _lock:
        _executing[token] = connection
    try:
        yield
    finally:
        with _lock:
            _executing.pop(token, None)


def _watch(fd: int) -> None:
    while True:
        data = os.read(fd, 64)
        if not data:
            return
        _interrupt_all(data)


def _interrupt_all(signals: bytes, grace: float = GRACE) -> None:
    """When ``signals`` (one byte each, as the wakeup descriptor carries them) hold a SIGINT or SIGTERM:
    interrupt the statements executing now that still execute ``grace`` seconds later."""
    if not STOPPING.intersection(signals):
        return
    with _lock:
        then = set(_executing)
    time.sleep(grace)
    with _lock:
        targets = [connection for token, connection in _executing.items() if token in then]
    for connection in targets:
        try:
            connection.interrupt()
        except Exception:  # noqa: BLE001 - a connection closing meanwhile: nothing left to stop
            pass
