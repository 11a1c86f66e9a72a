"""The one reader of the config's tables: every section — ``[source]``, hierarchies, ``[[models]]`` parameters,
``[search]``, ``[release]``, ``[files]``, ``[audit]``, ``[[workload]]``, the Python API's arguments — is read
through a :class:`Table`, so each key is read once, typed once, and every error has one shape: it starts with
the file, names the section (``[[models]] #2``), the key and the value.  ``finish()`` refuses the keys nobody
read, suggesting the closest known one.  Defaults live on the settings' dataclasses alone (``defaults``).

It imports nothing heavier than ``difflib``: parsing a config stays light (tests/test_startup.py).

>>> t = Table({"k": 4, "mode": "absolut"}, "[[models]] #1", "veil.toml")
>>> t.integer("k", minimum=1)
4
>>> t.text("mode", "absolute", choices=("absolute", "relative"))
Traceback (most recent call last):
veil.errors.ConfigError: veil.toml: [[models]] #1 key 'mode' must be one of 'absolute', 'relative', got 'absolut'
>>> Table({"shar": 0.5}, "[audit]", "veil.toml").finish()
Traceback (most recent call last):
veil.errors.ConfigError: veil.toml: [audit] has unknown key(s) 'shar'
>>> p = Table({"k": 4}, "veil.toml: [[models]] #1 (k-anonymity)", wording=PARAMETERS)
>>> p.integer("l", minimum=1)
Traceback (most recent call last):
veil.errors.ConfigError: veil.toml: [[models]] #1 (k-anonymity): missing required parameter 'l'
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from veil.errors import ConfigError

REQUIRED: Any = ...  # the default of a key that must be present


@dataclasses.dataclass(frozen=True)
class Wording:
    """How a table's errors name its keys: TOML keys (``[search] key 'metric' must …``, ``[release] is missing
    required key 'name'``) or a model's parameters (``…(t-closeness): parameter 't' must …``)."""

    noun: str  # "key" | "parameter"
    after: str  # between the table's name and the rest: " " | ": "
    unknown: str  # "has unknown key(s)" | "unknown parameter(s)"
    missing: str  # "is missing required key" | "missing required parameter"


KEYS = Wording("key", " ", "has unknown key(s)", "is missing required key")
PARAMETERS = Wording("parameter", ": ", "unknown parameter(s)", "missing required parameter")


def unknown_keys(found: Iterable[Any], known: Iterable[Any]) -> str:
    """The unknown keys ``found`` for an error, each with the closest of the ``known`` keys when one is close
    (``difflib``, case ignored).

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


def defaults(cls: type) -> dict[str, Any]:
    """The defaults a settings dataclass declares, by field: the one place a default is written.

    >>> @dataclasses.dataclass
    ... class S:
    ...     name: str
    ...     share: float = 0.9
    >>> defaults(S)
    {'share': 0.9}
    """
    return {f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING}


def got(value: Any) -> str:
    """A value as a type error quotes it: its type and its repr (a bool alone: ``True`` says its type)."""
    return repr(value) if isinstance(value, bool) else f"{type(value).__name__} {value!r}"


_WORDS = {
    str: "a string",
    int: "a whole number",
    float: "a number",
    list: "a list",
    dict: "a table",
    bool: "true/false",
}


def kind_names(kinds: type | tuple[type, ...]) -> str:
    """``(int, float)`` as an error says it: ``a whole number or a number``."""
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    return " or ".join(_WORDS.get(k, k.__name__) for k in kinds)


class Table:
    """One table being read (a TOML table, or a dict given to the Python API): typed getters; ``finish()``
    rejects keys nobody read.  Errors start with ``file`` (the config file, or ``veil.anonymize()``; ``None``
    when ``where`` already names it) and name the key as ``key(name)`` says (default: ``<where> key 'name'``,
    or ``<where>: parameter 'name'`` with ``wording=PARAMETERS``)."""

    def __init__(
        self, data: Any, where: str, file: Any = None, key: Callable[[str], str] | None = None, wording: Wording = KEYS
    ) -> None:
        self.head = "" if file is None else f"{file}: "
        if not isinstance(data, Mapping):
            raise ConfigError(f"{self.head}{where} must be a table, got {got(data)}")
        self.data, self.where, self.file, self.wording = data, where, file, wording
        self.read: set[str] = set()
        self.known: set[str] = set()  # keys read only when present (``typos``): suggestions for unknown ones
        self.key = key or (lambda name: f"{where}{wording.after}{wording.noun} {name!r}")

    # -------------------------------------------------------------------------------- structure

    def error(self, key: str, message: str) -> ConfigError:
        return ConfigError(f"{self.head}{self.key(key)} {message}")

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str, default: Any = REQUIRED) -> Any:
        """The value as written (the caller checks it); ``default`` when absent, an error when required."""
        self.read.add(key)
        if key in self.data:
            return self.data[key]
        if default is REQUIRED:
            w = self.wording
            typos = near(set(self.data) - self.read, key)  # reported first: the likely cause
            unknown = f"{w.unknown} {unknown_keys(typos, [key])} and " if typos else ""
            raise ConfigError(f"{self.head}{self.where}{w.after}{unknown}{w.missing} {key!r}")
        return default

    def typos(self, known: Sequence[str]) -> None:
        """Refuse now the unknown keys that look like misspellings of ``known`` ones (the others wait for
        ``finish``), and suggest from ``known`` in ``finish`` too."""
        self.known.update(known)
        close = [k for k in self.data if k not in self.known and any(near([k], name) for name in known)]
        if close:
            raise self._unknown(close, known)

    def only(self, known: Sequence[str]) -> None:
        """Refuse now every key but ``known`` (before any is read: a table whose checks depend on each other)."""
        self.known.update(known)
        unknown = set(self.data) - set(known)
        if unknown:
            raise self._unknown(unknown, known)

    def finish(self) -> None:
        unknown = set(self.data) - self.read
        if unknown:
            raise self._unknown(unknown, self.read | self.known)

    def _unknown(self, found: Iterable[Any], known: Iterable[Any]) -> ConfigError:
        return ConfigError(
            f"{self.head}{self.where}{self.wording.after}{self.wording.unknown} {unknown_keys(found, known)}"
        )

    # -------------------------------------------------------------------------------- typed getters

    def get(self, key: str, kinds: type | tuple[type, ...], default: Any = REQUIRED, what: str = "") -> Any:
        """A value of one of ``kinds`` (Python callers' tuples pass for lists); errors say ``what`` it must be."""
        if key not in self.data:
            return self.raw(key, default)
        value = self.raw(key)
        kinds = kinds if isinstance(kinds, tuple) else (kinds,)
        if list in kinds and isinstance(value, tuple):  # Python callers write tuples for lists
            value = list(value)
        if dict in kinds and isinstance(value, Mapping):
            value = dict(value)
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            raise self.error(key, f"must be {what or kind_names(kinds)}, got {got(value)}")
        return value

    def name(self, key: str, default: Any = REQUIRED) -> Any:
        value = self.get(key, str, default, "a non-empty string")
        if isinstance(value, str) and not value:
            raise self.error(key, "must not be empty")
        return value

    def names(self, key: str, default: Any = REQUIRED) -> tuple[str, ...]:
        value = self.get(key, list, default, "a list of strings")
        if not all(isinstance(v, str) and v for v in value):
            raise self.error(key, f"must be a list of non-empty strings, got {value!r}")
        if len(set(value)) != len(value):
            raise self.error(key, f"lists a name twice: {value!r}")
        return tuple(value)

    def integer(self, key: str, default: Any = REQUIRED, minimum: int | None = None, interval: bool = False) -> Any:
        """A whole number (never a bool) ``>= minimum``; ``interval``: either error states the whole rule
        (``must be a whole number >= 1``), else the part broken."""
        if key not in self.data:
            return self.raw(key, default)
        v = self.raw(key)
        whole = isinstance(v, int) and not isinstance(v, bool)
        if interval and (not whole or (minimum is not None and v < minimum)):
            raise self.error(key, f"must be a whole number >= {minimum}, got {v!r}")
        if not whole:
            raise self.error(key, f"must be a whole number, got {v!r}")
        if minimum is not None and v < minimum:
            raise self.error(key, f"must be >= {minimum}, got {v!r}")
        return v

    def number(
        self,
        key: str,
        default: Any = REQUIRED,
        minimum: float | None = None,
        maximum: float | None = None,
        above: float | None = None,
        interval: bool = False,
    ) -> Any:
        """A finite number in range, as a float; ``interval``: a range error names the interval (``in (0, 1]``,
        ``above`` its open lower end), else the bound broken (``must be <= 1``)."""
        if key not in self.data:
            return self.raw(key, default)
        v = self.raw(key)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise self.error(key, f"must be a finite number, got {v!r}")
        broken = [
            f"{op} {bound:g}"
            for op, bound, fails in (
                (">=", minimum, minimum is not None and v < minimum),
                ("<=", maximum, maximum is not None and v > maximum),
                (">", above, above is not None and v <= above),
            )
            if fails
        ]
        low = above if above is not None else minimum
        if broken and interval and low is not None and maximum is not None:
            raise self.error(key, f"must be in {'(' if above is not None else '['}{low:g}, {maximum:g}], got {v!r}")
        if broken:
            raise self.error(key, f"must be {broken[0]}, got {v!r}")
        return float(v)

    def text(self, key: str, default: Any = REQUIRED, choices: Sequence[str] | None = None) -> Any:
        """A string, one of ``choices`` when given."""
        if key not in self.data:
            return self.raw(key, default)
        v = self.raw(key)
        if choices is not None and (not isinstance(v, str) or v not in choices):
            raise self.error(key, f"must be one of {', '.join(repr(c) for c in choices)}, got {v!r}")
        if not isinstance(v, str):
            raise self.error(key, f"must be a string, got {v!r}")
        return v

    def strings(self, key: str, default: Any = REQUIRED) -> Any:
        """A list of values (strings or numbers), as strings."""
        if key not in self.data:
            return self.raw(key, default)
        v = self.raw(key)
        if not isinstance(v, (list, tuple)) or not all(isinstance(x, (str, int, float)) for x in v):
            raise self.error(key, f"must be a list of values, got {v!r}")
        return tuple(str(x) for x in v)
