"""Waiting for a busy database: ``--wait S`` retries a command while another process holds what it needs
(DuckDB's file lock, a PostgreSQL release lock), until ``S`` seconds have passed.

A ``BusyError`` is raised before a command has done anything (connecting, taking the release lock), so
running the command again from the start is safe.

>>> attempts = []
>>> def body() -> str:
...     attempts.append(1)
...     if len(attempts) < 3:
...         raise BusyError("the DuckDB file w.duckdb is locked by PID 7")
...     return "done"
>>> clock = [0.0]
>>> retrying(body, wait=10, clock=lambda: clock[0], sleep=lambda s: clock.__setitem__(0, clock[0] + s))
'done'
>>> attempts.clear()
>>> retrying(body, wait=0.5, clock=lambda: clock[0], sleep=lambda s: clock.__setitem__(0, clock[0] + s))
Traceback (most recent call last):
...
veil.errors.BusyError: the DuckDB file w.duckdb is locked by PID 7 (still busy after waiting 0.5 s)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from veil import log
from veil.errors import BusyError

T = TypeVar("T")
INTERVAL = 1.0  # seconds between attempts


def retrying(
    body: Callable[[], T],
    wait: float,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    interval: float = INTERVAL,
) -> T:
    """``body()``, run again while it raises ``BusyError`` and ``wait`` seconds have not passed."""
    deadline = clock() + max(wait, 0.0)
    announced = False
    while True:
        try:
            return body()
        except BusyError as exc:
            left = deadline - clock()
            if left <= 0:
                if wait > 0 and "(still busy after waiting" not in str(exc):
                    raise BusyError(f"{exc} (still busy after waiting {wait:g} s)", **exc.details) from None
                raise
            if not announced:
                log.log.info("%s; waiting up to %g s", str(exc).split(";")[0], wait)
                announced = True
            sleep(min(interval, left))
