"""A SIGTERM or SIGINT stops a DuckDB statement that Python's handlers cannot reach (``veil.backends.signalwatch``):
here the statement runs in a thread of its own, as a DuckDB worker holds one on a loaded machine, where Python
never runs a signal handler; without the watch it would run for minutes."""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

import duckdb

from veil.backends import signalwatch

FOREVER = "SELECT sum(hash(range)) FROM range(1000000000000)"  # hours on one core


def _run(con: Any, outcome: dict[str, Any], watched: bool) -> None:
    started = time.monotonic()
    try:
        if watched:
            with signalwatch.watching(con):
                con.execute(FOREVER).fetchall()
        else:
            con.execute(FOREVER).fetchall()
        outcome["finished"] = True
    except duckdb.Error as exc:
        outcome["error"] = str(exc)
    outcome["seconds"] = time.monotonic() - started


def _signalled(watched: bool, wait: float) -> tuple[threading.Thread, dict[str, Any], Any]:
    con = duckdb.connect()
    outcome: dict[str, Any] = {}
    previous = signal.signal(signal.SIGTERM, lambda *_: None)  # noted by Python, not fatal
    try:
        worker = threading.Thread(target=_run, args=(con, outcome, watched), daemon=True)
        worker.start()
        time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGTERM)
        worker.join(timeout=wait)
    finally:
        signal.signal(signal.SIGTERM, previous)
    return worker, outcome, con


def test_a_signal_interrupts_a_statement_python_cannot_reach() -> None:
    assert signalwatch.install()  # the main thread, and nothing else owns the wakeup descriptor
    worker, outcome, _con = _signalled(watched=True, wait=signalwatch.GRACE + 30)
    assert not worker.is_alive() and "finished" not in outcome, outcome
    assert "nterrupt" in outcome["error"] and outcome["seconds"] < signalwatch.GRACE + 20, outcome


def test_an_unwatched_statement_runs_on() -> None:
    """The control: the same statement outside ``watching`` ignores the signal (then it is stopped by hand)."""
    assert signalwatch.install()
    worker, outcome, con = _signalled(watched=False, wait=signalwatch.GRACE + 3)
    try:
        assert worker.is_alive() and not outcome, outcome
    finally:
        con.interrupt()
        worker.join(timeout=30)
    assert "error" in outcome
