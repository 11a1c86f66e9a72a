"""The contract every ``veil`` command keeps, in one place, so a new command gets it by calling :func:`finish`.

- Exit codes for schedulers: **0** done (published, printed, nothing to do), **2** no lattice node satisfies
  the models (nothing published), **1** anything else — a usage error included.
- With ``--json`` stdout holds exactly one JSON document whatever happens, and it carries ``status``:
  the command's own (``ok``, ``published``, ``skipped`` …), ``no_solution`` (with ``models``: each failing
  model's best level) or ``failed`` (with ``error``).  Without ``--json`` the command's human output goes
  to stdout.
- Timestamps in a JSON document are ISO 8601 with an offset (``2026-01-02T02:00:01+00:00``; the catalog's
  naive times are UTC): :func:`timestamp`.
- Log records on stderr as text lines or, with ``--log-format json``, one JSON object each (:mod:`veil.log`).
- Errors are one line on stderr (through :mod:`veil.log`), never a traceback (``VEIL_DEBUG=1`` shows
  Veil's own traceback for an internal error), credentials masked (:func:`veil.errors.redact`).
- Ctrl-C or SIGTERM: one line ``interrupted``, exit 1; the run's transaction is rolled back, so nothing
  is half-written (once a release committed, its version stays published: exit 0 and a warning line).
- ``--wait S``: retried while the database is busy (:mod:`veil.lockwait`).

>>> import io, contextlib
>>> out = io.StringIO()
>>> with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
...     code = execute("check", Options(json=True), lambda: Result({"status": "ok", "passed": True}))
>>> code, out.getvalue()
(0, '{"status": "ok", "passed": true}\\n')
"""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import veil
from veil import lockwait, log
from veil.errors import VeilError, redact

OK, FAILED, NO_SOLUTION = 0, 1, 2


@dataclass(frozen=True)
class Options:
    """The options every command shares (``--json``, ``--quiet``, ``--verbose``, ``--wait``, ``--log-format``)."""

    json: bool = False
    quiet: bool = False
    verbose: bool = False
    wait: float = 0.0
    log_format: str = "text"

    @property
    def verbosity(self) -> int:
        return log.QUIET if self.quiet else log.VERBOSE if self.verbose else log.NORMAL


@dataclass(frozen=True)
class Result:
    """What a command did: its JSON document (with ``status``), exit code and human rendering."""

    document: dict[str, Any]
    exit_code: int = OK
    show: Callable[[], None] | None = field(default=None, compare=False)


class Interrupted(BaseException):
    """SIGTERM, turned into the same outcome as Ctrl-C (a BaseException, like KeyboardInterrupt, so no
    ``except Exception`` on the way swallows it)."""


def execute(command: str, options: Options, body: Callable[[], Result]) -> int:
    """Run ``body`` under the contract: set up logging, wait while busy, print the outcome; the exit code."""
    log.setup(command, options.verbosity, fmt=options.log_format)
    log.log.debug("veil %s on Python %s, pid %d", veil.__version__, sys.version.split()[0], os.getpid())
    signals: list[int] = []
    try:
        with _signals_interrupt(signals):
            result = lockwait.retrying(body, options.wait)
    except (KeyboardInterrupt, Interrupted):
        return fail(options, "interrupted", FAILED)
    except VeilError as exc:
        if signals:  # a driver turned the interrupt into its own error ("query cancelled")
            return fail(options, "interrupted", FAILED)
        return fail(options, str(exc), exc.exit_code, exc.status, exc.details)
    except Exception as exc:  # a bug in Veil: one line, the traceback only on request
        if os.environ.get("VEIL_DEBUG"):
            traceback.print_exc()
        message = f"internal error: {type(exc).__name__}: {exc} (set VEIL_DEBUG=1 for the traceback)"
        return fail(options, message, FAILED)
    if options.json:
        emit(result.document)
    elif result.show is not None:
        result.show()
    return result.exit_code


def fail(
    options: Options, message: str, code: int, status: str = "failed", details: dict[str, Any] | None = None
) -> int:
    """One error line on stderr and, with ``--json``, the failure document on stdout (a password in it masked).

    >>> import io, contextlib
    >>> out = io.StringIO()
    >>> with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
    ...     _ = fail(Options(json=True), "cannot connect to postgresql://veil:hunter2@db/wh", FAILED)
    >>> out.getvalue()
    '{"status": "failed", "error": "cannot connect to postgresql://veil:***@db/wh"}\\n'
    """
    line = redact(" ".join(message.split()))
    log.log.error(line)
    if options.json:
        emit({"status": status, "error": line, **(details or {})})
    return code


def emit(document: dict[str, Any]) -> None:
    """The one JSON document of a ``--json`` run (infinite or undefined numbers become ``null``, a datetime
    ISO 8601 with its offset: :func:`timestamp`)."""
    sys.stdout.write(json.dumps(_finite(document), ensure_ascii=False, default=_json_value) + "\n")
    sys.stdout.flush()


def timestamp(moment: dt.datetime | None) -> str | None:
    """A moment for a JSON document: ISO 8601 to the second with its offset; a naive one (the catalog stores
    UTC without a zone) is UTC.

    >>> timestamp(dt.datetime(2026, 1, 2, 2, 0, 1, 250000))
    '2026-01-02T02:00:01+00:00'
    >>> timestamp(dt.datetime(2026, 1, 2, 3, 0, 1, tzinfo=dt.timezone(dt.timedelta(hours=1))))
    '2026-01-02T03:00:01+01:00'
    """
    if moment is None:
        return None
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.timezone.utc)
    return aware.isoformat(timespec="seconds")


def _json_value(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return timestamp(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def say(text: str) -> None:
    """A line of human output on stdout, never wrapped."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def console() -> Any:
    """A rich console on stdout for tables: the terminal's width, or unwrapped lines when piped."""
    from rich.console import Console

    terminal = log.is_terminal(sys.stdout)
    return Console(highlight=False, soft_wrap=not terminal, width=None if terminal else 1000)


@contextmanager
def _signals_interrupt(received: list[int]) -> Iterator[None]:
    """Ctrl-C (SIGINT) and SIGTERM (``docker stop``, a scheduler's timeout) interrupt the command; each
    signal is recorded in ``received``."""

    def on_sigint(signum: int, frame: object) -> None:
        received.append(signum)
        raise KeyboardInterrupt

    def on_sigterm(signum: int, frame: object) -> None:
        received.append(signum)
        raise Interrupted

    try:
        previous = {
            signal.SIGINT: signal.signal(signal.SIGINT, on_sigint),
            signal.SIGTERM: signal.signal(signal.SIGTERM, on_sigterm),
        }
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value
