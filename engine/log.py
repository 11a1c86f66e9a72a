"""Veil's log lines: the standard ``logging`` module, one format for every command, always on stderr.

On a terminal a line is the message alone (``… searching the lattice``; errors ``veil: <message>``).
Elsewhere (cron, a container, a CI log) every record is one physical line, never wrapped, with an ISO 8601
timestamp, the level and the command:

    2025-01-02T02:00:00.125+01:00 INFO veil release: searching the lattice

With ``--log-format json`` (or ``VEIL_LOG_FORMAT=json``) every record is one JSON object on its own line,
on a terminal too, for a log collector:

    {"time": "2025-01-02T02:00:00.125+01:00", "level": "INFO", "command": "release", "message": "searching the lattice"}

Levels: ``--quiet`` shows errors only, the default adds progress steps (INFO), ``--verbose`` adds details
(DEBUG).  Modules log through ``logging.getLogger("veil.<module>")`` (or :func:`step`); only the CLI
calls :func:`setup`.

>>> import io
>>> stream = io.StringIO()
>>> setup("release", verbosity=0, stream=stream, terminal=False)
>>> step("searching the lattice\\nof 48 nodes")
>>> line = stream.getvalue()
>>> line.count("\\n"), line.split(" ", 1)[1]
(1, 'INFO veil release: searching the lattice of 48 nodes\\n')
>>> stream = io.StringIO()
>>> setup("release", verbosity=0, stream=stream, terminal=True, fmt="json")
>>> step("searching the lattice")
>>> record = json.loads(stream.getvalue())
>>> sorted(record), record["level"], record["command"], record["message"]
(['command', 'level', 'message', 'time'], 'INFO', 'release', 'searching the lattice')
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

LOGGER = "veil"
QUIET, NORMAL, VERBOSE = -1, 0, 1
FORMATS = ("text", "json")  # ``--log-format``: text lines (short on a terminal) or one JSON object a record
_LEVELS = {QUIET: logging.ERROR, NORMAL: logging.INFO, VERBOSE: logging.DEBUG}

log = logging.getLogger(LOGGER)
_format = {"current": "text"}  # the format ``setup`` chose: no progress bar among JSON records


def _moment(record: logging.LogRecord) -> str:
    """The record's time in ISO 8601 with milliseconds and the local offset (``2025-01-02T02:00:00.125+01:00``)."""
    return dt.datetime.fromtimestamp(record.created).astimezone().isoformat(timespec="milliseconds")


def _message(record: logging.LogRecord) -> str:
    """The record's message on one line (a Python warning: its first line, without the source line)."""
    text = record.getMessage()
    if record.name == "py.warnings":  # "<file>:<line>: <Category>: <text>" and the source line
        text = text.splitlines()[0]
    return " ".join(text.split())


class LineFormatter(logging.Formatter):
    """``<ISO time> <LEVEL> veil <command>: <message>`` on one line (newlines in a message become spaces)."""

    def __init__(self, command: str) -> None:
        super().__init__()
        self.command = command

    def format(self, record: logging.LogRecord) -> str:
        where = f"veil {self.command}" if self.command else "veil"
        return f"{_moment(record)} {record.levelname} {where}: {_message(record)}"


class JsonFormatter(logging.Formatter):
    """One JSON object a record: ``time`` (ISO 8601 with offset), ``level``, ``command`` (``null`` before a
    command is known, e.g. a usage error) and ``message`` (one line)."""

    def __init__(self, command: str) -> None:
        super().__init__()
        self.command = command

    def format(self, record: logging.LogRecord) -> str:
        return json.dumps(
            {
                "time": _moment(record),
                "level": record.levelname,
                "command": self.command or None,
                "message": _message(record),
            },
            ensure_ascii=False,
        )


class TerminalFormatter(logging.Formatter):
    """Short lines for a person watching: ``… step``, ``veil: warning: …``, ``veil: error``."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage().splitlines()[0] if record.name == "py.warnings" else record.getMessage()
        if record.levelno >= logging.ERROR:
            return f"veil: {message}"
        if record.levelno >= logging.WARNING:
            return f"veil: warning: {message}"
        return f"… {message}"


class _Handler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time (pytest and the CLI's tests swap it)."""

    def __init__(self, stream: TextIO | None) -> None:
        super().__init__(stream)
        self._fixed = stream

    @property
    def stream(self) -> TextIO:
        return self._fixed if self._fixed is not None else sys.stderr

    @stream.setter
    def stream(self, value: TextIO | None) -> None:
        self._fixed = value


def setup(
    command: str = "",
    verbosity: int = NORMAL,
    stream: TextIO | None = None,
    terminal: bool | None = None,
    fmt: str = "text",
) -> None:
    """Route the ``veil`` loggers to ``stream`` (default: stderr) at the level ``verbosity`` asks for.

    ``fmt`` ``"json"``: one JSON object a record.  ``"text"``: ``terminal`` (default: whether the stream is a
    TTY) picks the short or the timestamped format."""
    target = stream if stream is not None else sys.stderr
    if terminal is None:
        terminal = is_terminal(target)
    handler = _Handler(stream)
    formatter: logging.Formatter = TerminalFormatter() if terminal else LineFormatter(command)
    handler.setFormatter(JsonFormatter(command) if fmt == "json" else formatter)
    _format["current"] = fmt
    warnings = logging.getLogger("py.warnings")  # Python warnings (numpy's, a library's) become log lines too
    for logger in (log, warnings):
        for old in list(logger.handlers):
            logger.removeHandler(old)
        logger.addHandler(handler)
        logger.propagate = False
    log.setLevel(_LEVELS.get(verbosity, logging.INFO))
    warnings.setLevel(logging.WARNING if verbosity > QUIET else logging.ERROR)
    logging.captureWarnings(True)


def is_terminal(stream: TextIO | None = None) -> bool:
    target = stream if stream is not None else sys.stderr
    try:
        return target.isatty()
    except (AttributeError, ValueError):
        return False


def step(message: str) -> None:
    """A progress step (INFO): what the command is doing now."""
    log.info(message)


def showing_progress() -> bool:
    """Progress bars only for a person at a terminal who did not ask for ``--quiet`` or JSON records."""
    return is_terminal() and log.isEnabledFor(logging.INFO) and _format["current"] != "json"


@contextmanager
def progress(label: str, total: int) -> Iterator[Callable[[int], None]]:
    """A transient progress bar on a terminal (``update(done)``); a no-op elsewhere."""
    if not showing_progress():
        yield lambda _done: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TextColumn("nodes"), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda done: bar.update(task, completed=done)
