"""Reading one ``[[models]]`` table of the config: typed parameters, errors naming model and parameter."""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from veil.errors import ConfigError

_MISSING = object()


def unknown_keys(found: Iterable[Any], known: Iterable[Any]) -> str:
    """The unknown keys ``found`` for an error, each with the closest of the ``known`` keys when one is close
    (``difflib``, case ignored) — shared by every reader of config keys (``config._Table``, ``Params``,
    ``auditsettings._Reader``).

    >>> unknown_keys(["column", "zz"], ["columns", "type"])
    "'column' (did you mean 'columns'?), 'zz'"
    """
    names = {str(k).lower(): str(k) for k in known}
    parts = []
    for key in sorted(found, key=str):
        close = difflib.get_close_matches(str(key).lower(), list(names), n=1)
        parts.append(f"{key!r} (did you mean {names[close[0]]!r}?)" if close else repr(key))
    return ", ".join(parts)


def near(found: Iterable[Any], key: str) -> list[Any]:
    """The keys of ``found`` close to ``key`` (its likely misspellings), for a missing required key.

    >>> near(["column", "type"], "columns")
    ['column']
    """
    return [k for k in found if difflib.get_close_matches(str(k).lower(), [key.lower()], n=1)]


@dataclass
class Params:
    """Typed access to a model's table; ``finish()`` rejects keys nobody read.

    >>> p = Params({"type": "k-anonymity", "k": 4}, "veil.toml: [[models]] #1 (k-anonymity)", ("disease",), Path("."))
    >>> p.integer("k", minimum=1)
    4
    >>> p.finish()
    """

    table: Mapping[str, Any]
    where: str
    sensitive: Sequence[str]
    base_dir: Path
    _read: set[str] = field(default_factory=lambda: {"type"})

    def error(self, name: str, message: str) -> ConfigError:
        return ConfigError(f"{self.where}: parameter {name!r} {message}")

    def _get(self, name: str, default: Any) -> Any:
        self._read.add(name)
        if name in self.table:
            return self.table[name]
        if default is _MISSING:
            typos = near(set(self.table) - self._read, name)
            unknown = f"unknown parameter(s) {unknown_keys(typos, [name])} and " if typos else ""
            raise ConfigError(f"{self.where}: {unknown}missing required parameter {name!r}")
        return default

    def has(self, name: str) -> bool:
        return name in self.table

    def integer(self, name: str, default: Any = _MISSING, minimum: int | None = None) -> int:
        v = self._get(name, default)
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.error(name, f"must be a whole number, got {v!r}")
        if minimum is not None and v < minimum:
            raise self.error(name, f"must be >= {minimum}, got {v!r}")
        return v

    def number(self, name: str, default: Any = _MISSING, minimum: float | None = None,
               maximum: float | None = None, above: float | None = None) -> float:
        v = self._get(name, default)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise self.error(name, f"must be a finite number, got {v!r}")
        if minimum is not None and v < minimum:
            raise self.error(name, f"must be >= {minimum:g}, got {v!r}")
        if maximum is not None and v > maximum:
            raise self.error(name, f"must be <= {maximum:g}, got {v!r}")
        if above is not None and v <= above:
            raise self.error(name, f"must be > {above:g}, got {v!r}")
        return float(v)

    def text(self, name: str, default: Any = _MISSING, choices: Sequence[str] | None = None) -> str:
        v = self._get(name, default)
        if not isinstance(v, str):
            raise self.error(name, f"must be a string, got {v!r}")
        if choices is not None and v not in choices:
            raise self.error(name, f"must be one of {', '.join(repr(c) for c in choices)}, got {v!r}")
        return v

    def strings(self, name: str, default: Any = _MISSING) -> tuple[str, ...]:
        v = self._get(name, default)
        if not isinstance(v, (list, tuple)) or not all(isinstance(x, (str, int, float)) for x in v):
            raise self.error(name, f"must be a list of values, got {v!r}")
        return tuple(str(x) for x in v)

    def raw(self, name: str, default: Any = _MISSING) -> Any:
        return self._get(name, default)

    def attribute(self) -> str:
        """The sensitive column judged: ``attribute``, or the only sensitive column."""
        if "attribute" in self.table:
            v = self.text("attribute")
            if v not in self.sensitive:
                raise self.error("attribute", f"names {v!r}, which is not a sensitive column "
                                              f"(sensitive columns: {', '.join(map(repr, self.sensitive)) or 'none'})")
            return v
        self._read.add("attribute")
        if len(self.sensitive) == 1:
            return self.sensitive[0]
        if not self.sensitive:
            raise ConfigError(f"{self.where}: needs a sensitive column, but [sensitive] columns is empty")
        raise ConfigError(f"{self.where}: missing parameter 'attribute' (several sensitive columns: "
                          f"{', '.join(map(repr, self.sensitive))})")

    def path(self, value: str) -> Path:
        p = Path(value)
        return p if p.is_absolute() else self.base_dir / p

    def finish(self) -> None:
        unknown = set(self.table) - self._read
        if unknown:
            raise ConfigError(f"{self.where}: unknown parameter(s) {unknown_keys(unknown, self._read)}")
