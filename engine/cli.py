"""The ``veil`` command: thin.  Each command parses its options, runs one body under the shared contract
(:mod:`veil.contract`: exit codes 0/1/2, one JSON document with ``--json``, one error line, Ctrl-C, logging,
``--wait``) and renders its result.  This module is the process around them: the entry point, usage errors as one
line, the exit; the commands are in :mod:`veil.commands`, their shared options in :mod:`veil.commandline`.

Adding a command: in the module of its kind under ``veil/commands/``, declare its options with the shared ``*Opt``
annotations (every option with a help text: the docs' CLI reference is generated from the app), write a
``body()`` returning a :class:`~veil.contract.Result` (a document with ``status``, an exit code, a human
rendering), and end with ``finish("<name>", Options(as_json, quiet, verbose, wait, log_format), body)``.  A command
reading a config resolves it with :func:`~veil.commandline.config_path` (``--config``, else ``veil.toml`` here, else
``$VEIL_CONFIG``).  Import heavy modules inside ``body`` so ``veil --help`` stays fast (it imports no numpy,
SQLAlchemy or driver); a short command imports them under ``with loading():`` (no garbage collection over what
they allocate).
"""

from __future__ import annotations

import copy
import logging
import os
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

import typer

from veil import log
from veil.commandline import app
from veil.commands import inspection, releasing, auditing, tools  # noqa: F401 (each registers its commands, in this order)
from veil.contract import FAILED, OK, emit


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: bare ``veil`` prints the help; usage errors (unknown command or option, missing value, bad
    flag) are one line on stderr and exit 1 — never click's exit 2, which means "no node satisfies the models"
    here — whichever click typer runs on (click itself, or the copy typer 0.2x vendors as ``typer._click``)."""
    args = list(sys.argv[1:] if argv is None else argv) or ["--help"]
    if argv is None:  # the ``veil`` program itself: freed cells go back to the system (veil.allocator)
        from veil.allocator import pin_mmap_threshold

        pin_mmap_threshold()
    try:
        code = _app_for(args)(args=args, prog_name="veil", standalone_mode=False)
    except Exception as exc:  # what click raises while parsing: a command's own errors never get here (execute)
        kind = _click_kind(exc)
        if kind is None:
            raise
        code = _usage_error(exc, args) if kind == "usage" else _interrupted(args)
    code = code if isinstance(code, int) else OK
    if code == INTERRUPTED:  # typer ≥ 0.2x turns Ctrl-C while parsing into exit 130
        code = _interrupted(args)
    if argv is None:  # the ``veil`` program itself, not a caller in this interpreter
        _end_process(code)
    sys.exit(code)


INTERRUPTED = 130


def _app_for(args: Sequence[str]) -> typer.Typer:
    """The app that runs ``args``: when they start with a command's name, ``app`` holding that command alone, so
    typer turns one command's signature into click options instead of all of them (about 18 ms of every
    command's start, issue 36); the command's options, help, errors and exit codes are the same.  ``--help``,
    ``--version``, no command or a mistyped one run on ``app`` itself (every command listed, "Did you mean")."""
    if not args or args[0].startswith("-"):
        return app
    chosen = [
        c
        for c in getattr(app, "registered_commands", ())  # (a test may stand a plain function in)
        if (c.name or typer.main.get_command_name(getattr(c.callback, "__name__", ""))) == args[0]
    ]
    if len(chosen) != 1:
        return app
    one = copy.copy(app)
    one.registered_commands = chosen
    return one


def _click_kind(exc: BaseException) -> str | None:
    """``"usage"`` for click's usage errors (``ClickException`` and its subclasses), ``"abort"`` for its
    ``Abort``, else ``None`` — matched by class name, so that click's classes and those of the copy of click a
    typer release vendors (``typer._click``, not click's classes; ``typer.Abort``) are caught alike."""
    names = {c.__name__ for c in type(exc).__mro__}
    return "usage" if "ClickException" in names else "abort" if "Abort" in names else None


def _log_format(args: Sequence[str]) -> str:
    """The ``--log-format`` of a command line click could not parse (else ``$VEIL_LOG_FORMAT``, else text)."""
    chosen = os.environ.get("VEIL_LOG_FORMAT", "text")
    for i, arg in enumerate(args):
        if arg == "--log-format" and i + 1 < len(args):
            chosen = args[i + 1]
        elif arg.startswith("--log-format="):
            chosen = arg.split("=", 1)[1]
    return "json" if chosen.lower() == "json" else "text"


def _interrupted(args: Sequence[str]) -> int:
    """Ctrl-C before a command ran (while click parsed): one line, and the JSON document with ``--json``."""
    log.setup(fmt=_log_format(args))
    log.log.error("interrupted")
    if "--json" in args:
        emit({"status": "failed", "error": "interrupted"})
    return FAILED


def _end_process(code: int) -> NoReturn:
    """End the ``veil`` process once its output is written, without the interpreter's teardown.

    The command is done when ``main`` gets its exit code: every backend session is a context that has closed
    its connection and ended its transaction, and the output and the log are flushed here.  Tearing the
    interpreter down would only collect, one by one, the objects SQLAlchemy, numpy and the driver allocated:
    about a tenth of a second, a tenth of a search on a small table (issue 11)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed or broken pipe: nothing more can be written anyway
            pass
    logging.shutdown()
    os._exit(code)


def _usage_error(exc: Exception, args: Sequence[str]) -> int:
    ctx = getattr(exc, "ctx", None)
    where = ctx.command_path if ctx is not None else "veil"
    from veil.errors import redact

    message = _once(" ".join(exc.format_message().split())).rstrip(".")  # type: ignore[attr-defined]
    line = redact(f"usage: {message} (see `{where} --help`)")
    log.setup(fmt=_log_format(args))
    log.log.error(line)
    if "--json" in args:
        emit({"status": "failed", "error": line})
    return FAILED


def _once(message: str) -> str:
    """Each sentence of a usage error once: typer 0.2x and click 8.2+ both add "Did you mean ...?".

    >>> _once("No such command 'doctr'. Did you mean 'doctor'? Did you mean 'doctor'?")
    "No such command 'doctr'. Did you mean 'doctor'?"
    """
    sentences: list[str] = []
    for sentence in re.split(r"(?<=[.?!])\s+", message):
        if sentence not in sentences:
            sentences.append(sentence)
    return " ".join(sentences)


if __name__ == "__main__":
    main()
