"""The ``veil`` command: thin.  Parses, calls one function, maps outcomes to exit codes for schedulers:
0 published / printed, 2 no node satisfies the models (nothing published), 1 any other failure.

With ``--json`` stdout holds exactly one JSON document; logs and progress go to stderr.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console
from rich.table import Table

from engine import config as cfg
from engine.errors import ConfigError, VeilError
from engine.lattice import parse_node

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Veil: publish anonymized releases of warehouse tables (k-anonymity, l-diversity, "
                       "t-closeness, ε-privacy).")
err = Console(stderr=True, highlight=False)
out = Console(highlight=False)

ConfigOpt = Annotated[Path, typer.Option("--config", "-c", help="Release config (TOML).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]


@app.callback()
def _root() -> None:
    """Veil: publish anonymized releases of warehouse tables."""


def _fail(message: str, code: int) -> None:
    err.print(f"[bold red]veil:[/] {message}", markup=True, soft_wrap=True)
    raise typer.Exit(code)


def _guard(fn: Callable[[], int | None]) -> None:
    """Run a command; VeilErrors become one line on stderr and their exit code."""
    try:
        code = fn()
    except VeilError as exc:
        _fail(str(exc).replace("[", "\\["), exc.exit_code)
    except KeyboardInterrupt:
        _fail("interrupted", 1)
    except typer.Exit:
        raise
    except Exception as exc:  # a bug in Veil: one line, the traceback only on request
        if os.environ.get("VEIL_DEBUG"):
            traceback.print_exc()
        _fail(f"internal error: {type(exc).__name__}: {exc} (set VEIL_DEBUG=1 for the traceback)", 1)
    else:
        raise typer.Exit(code or 0)


def _step(quiet: bool) -> Callable[[str], None]:
    def show(message: str) -> None:
        if not quiet and err.is_terminal:
            err.print(f"[dim]… {message}[/]")
    return show


def _node(text: str | None, heights: tuple[int, ...]) -> tuple[int, ...]:
    if text is None:
        return tuple(0 for _ in heights)
    try:
        return parse_node(text, heights)
    except ValueError as exc:
        raise ConfigError(f"--node: {exc}") from None


def _emit(document: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(document, ensure_ascii=False) + "\n")
    sys.stdout.flush()


@app.command()
def counts(config: ConfigOpt, node: Annotated[Optional[str], typer.Option(help="Levels, e.g. 1,0,2 (default: all 0).")] = None,
           as_json: JsonOpt = False) -> None:
    """The q*-blocks at one lattice node: generalized key, size and sensitive histograms."""

    def run() -> int:
        from engine.run import counts_document, open_warehouse

        conf = cfg.load(config)
        with open_warehouse(conf, sensitive=conf.sensitive, on_step=_step(as_json), rollup=False) as wh:
            level = _node(node, wh.heights)
            doc = counts_document(wh, wh.counts(level))
        if as_json:
            _emit(doc)
        else:
            table = Table(title=f"{conf.source.qualified} at node {list(level)}: {len(doc['blocks'])} blocks, "
                                f"{doc['rows']} rows")
            for a in doc["attributes"]:
                table.add_column(a)
            table.add_column("size", justify="right")
            for s in conf.sensitive:
                table.add_column(s)
            for b in doc["blocks"]:
                hist = [", ".join(f"{v}: {c}" for v, c in b["sensitive"][s].items()) for s in conf.sensitive]
                table.add_row(*b["key"], str(b["size"]), *hist)
            out.print(table)
        return 0

    _guard(run)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
