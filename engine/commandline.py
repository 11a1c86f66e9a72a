"""The parts every ``veil`` command shares: the app, the options they all take (each with a help text: the docs'
CLI reference is generated from the app), ``finish`` (the shared contract, :mod:`veil.contract`), where the config
is found, and the import guard of a short command.  The commands are in :mod:`veil.commands`; the process around
them (usage errors, exit) in :mod:`veil.cli`."""

from __future__ import annotations

import atexit
import enum
import gc
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn, Optional

import typer

import veil
from veil.contract import OK, Options, Result, execute, say

CONFIG_FILE = "veil.toml"  # looked for in the working folder when --config is not given
CONFIG_ENV = "VEIL_CONFIG"  # else the config this environment variable names

app = typer.Typer(
    add_completion=False,
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Veil: publish anonymized releases of warehouse tables (k-anonymity, l-diversity, "
    "t-closeness, ε-privacy).  Every command reads the config given with --config, else "
    f"{CONFIG_FILE} in the working folder, else the file ${CONFIG_ENV} names.  Exit codes: 0 "
    "done, 2 no node satisfies the models, 1 failure.",
)


class LogFormat(str, enum.Enum):
    """``--log-format``: text lines (short on a terminal, timestamped elsewhere) or one JSON object a record."""

    text = "text"
    json = "json"


ConfigOpt = Annotated[
    Optional[Path],
    typer.Option(
        "--config",
        "-c",
        show_default=False,
        help=f"The config (TOML).  Default: {CONFIG_FILE} in the working folder, else the file ${CONFIG_ENV} names.",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print exactly one JSON document on stdout, whatever happens.")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Log errors only.")]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Log details too.")]
WaitOpt = Annotated[
    float,
    typer.Option(
        "--wait",
        metavar="SECONDS",
        min=0.0,
        help="Retry while the database is busy (a DuckDB file open in another "
        "process, a concurrent release) for up to this many seconds.",
    ),
]
LogFormatOpt = Annotated[
    LogFormat,
    typer.Option(
        "--log-format",
        envvar="VEIL_LOG_FORMAT",
        case_sensitive=False,
        help="Log records on stderr as text lines (short on a terminal, ISO-timestamped elsewhere) or as one JSON "
        "object each: time (ISO 8601 with offset), level, command, message.",
    ),
]
NodeOpt = Annotated[Optional[str], typer.Option("--node", help="Levels, e.g. 1,0,2 (default: all 0).")]


def finish(command: str, options: Options, body: Callable[[], Result]) -> NoReturn:
    """Run ``body`` under the shared contract and exit with its code."""
    raise typer.Exit(execute(command, options, body))


def _version(value: bool) -> None:
    if value:
        say(f"veil {veil.__version__}")
        raise typer.Exit(OK)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", is_eager=True, callback=_version, help="Print Veil's version and exit.")
    ] = False,
) -> None:
    """Veil: publish anonymized releases of warehouse tables."""


@contextmanager
def loading() -> Iterator[None]:
    """Import a command's modules with the cyclic garbage collector off, then exempt what they allocated from
    later collections (``gc.freeze``): SQLAlchemy and numpy leave tens of thousands of objects that live as long
    as the process, and rescanning them costs a short command (``search`` on a small table) tens of
    milliseconds."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        atexit.register(gc.unfreeze)  # collectable again when the interpreter finalizes (drivers check for leaks)
        if enabled:
            gc.enable()


def config_path(given: Path | None) -> Path:
    """The config a command reads: ``--config``, else ``veil.toml`` in the working folder, else the file
    ``$VEIL_CONFIG`` names; none of them is one line saying where it looked."""
    from veil.errors import ConfigError

    if given is not None:
        return given
    here = Path.cwd() / CONFIG_FILE
    if here.is_file():
        return here
    named = os.environ.get(CONFIG_ENV, "")
    if named and not Path(named).is_file():
        raise ConfigError(f"{CONFIG_ENV}={named}: no such file (no --config given, no {CONFIG_FILE} in {Path.cwd()})")
    if named:
        return Path(named)
    raise ConfigError(f"no config: no --config given, no {CONFIG_FILE} in {Path.cwd()}, and {CONFIG_ENV} is not set")


def load_config(config: Path | None) -> Any:
    from veil import config as cfg

    return cfg.load(config_path(config))


def node_option(text: str | None, heights: tuple[int, ...]) -> tuple[int, ...]:
    from veil.errors import ConfigError
    from veil.lattice import parse_node

    if text is None:
        return tuple(0 for _ in heights)
    try:
        return parse_node(text, heights)
    except ValueError as exc:
        raise ConfigError(f"--node: {exc}") from None


def say_lines(lines: Iterable[str]) -> None:
    """Each line of human output, in order."""
    for line in lines:
        say(line)


def write(text: str) -> None:
    """Text on stdout as it is (a CSV, its own newlines)."""
    sys.stdout.write(text)
