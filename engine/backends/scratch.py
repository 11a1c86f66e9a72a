"""DuckDB's scratch database: where a run's big working tables go when they may outgrow DuckDB's memory.

DuckDB keeps ``TEMPORARY`` tables in memory, uncompressed, and spills them only block by block; a
``CREATE TEMPORARY TABLE ... AS SELECT ... GROUP BY`` whose result has tens of millions of groups fails at the
memory limit ("failed to pin block"), although the same aggregate run as a query spills and finishes.  On the
100M-row census of ``bench/bench_scale.py`` (512 MB limit) coding the base frequency set with ``income``
(90M cells) failed that way, and so did materializing a node of the entropy search.  The tables of an attached
database *file* are compressed and read back from disk under the limit: the same statements finish there.

So a run whose base frequency set may not fit DuckDB's memory (``rows`` × the base's bytes per row above the
memory limit) attaches a scratch database next to the warehouse file (or in DuckDB's ``temp_directory`` when
the URL sets one), creates the base and the materialized nodes there, and finds them by name through DuckDB's
``search_path``; the session detaches and deletes the file when it ends, and a later run deletes files a killed
run left.  A transaction writes to one attached database only: working tables are written while a run reads
(a release's search), never in a transaction that writes the warehouse.  Smaller runs keep ``TEMPORARY``
tables, which are faster while they fit (10M census: a k-anonymity search 6.3 s against 8.2 s).

>>> parse_bytes("488.2 MiB"), parse_bytes("1GB"), parse_bytes("0 bytes")
(511914803, 1000000000, 0)
"""

from __future__ import annotations

import itertools
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

PREFIX = ".veil-work-"  # scratch files: .veil-work-<pid>-<token>.duckdb (and DuckDB's .wal beside it)
_UNITS = {
    "bytes": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}
_ids = itertools.count(1)


def parse_bytes(text: str) -> int:
    """A DuckDB size setting (``488.2 MiB``, ``4GB``, ``134217728B``) in bytes."""
    found = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]*)\s*", text)
    if not found or found[2].lower() not in _UNITS | {"": 1}:
        raise ValueError(f"not a DuckDB size: {text!r}")
    return int(float(found[1]) * _UNITS.get(found[2].lower(), 1))


def folder(database: str | None, temp_directory: str | None) -> Path | None:
    """Where scratch files go: ``temp_directory`` when the URL sets one, else the warehouse file's folder;
    ``None`` for an in-memory database (its working tables stay in memory)."""
    if not database or database.startswith((":memory:", "md:", "motherduck:")):
        return None
    return Path(temp_directory) if temp_directory else Path(database).resolve().parent


@dataclass(frozen=True)
class Scratch:
    """One session's scratch database: the alias it is attached as and its file."""

    alias: str
    path: Path

    @classmethod
    def new(cls, where: Path) -> Scratch:
        """A fresh name in ``where`` (created if missing), after deleting scratch files of processes gone."""
        where.mkdir(parents=True, exist_ok=True)
        sweep(where)
        pid = os.getpid()
        return cls(f"veil_work_{pid}_{next(_ids)}", where / f"{PREFIX}{pid}-{secrets.token_hex(4)}.duckdb")

    def remove(self) -> None:
        for f in (self.path, self.path.with_name(self.path.name + ".wal")):
            f.unlink(missing_ok=True)


def sweep(where: Path) -> list[Path]:
    """Delete the scratch files in ``where`` whose process has ended (a killed run's); returns them."""
    gone = []
    for f in where.glob(f"{PREFIX}*"):
        found = re.match(re.escape(PREFIX) + r"(\d+)-", f.name)
        if found and not _alive(int(found[1])):
            f.unlink(missing_ok=True)
            gone.append(f)
    return gone


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
