"""Generalization hierarchies (SPEC §1) as function chains, and the rows of their dimension tables.  No SQL.

A hierarchy of height ``h`` maps every original value (level 0) to one label per level ``1..h``.  Sources:
an ARX-format CSV (``value;level1;...;levelh``, no header), or a builder: numeric ``intervals`` of given
widths then ``*``; prefix ``mask`` for codes; ``suppress`` (value → ``*``); ``dates`` (day → month → year →
``*``); an explicit ``taxonomy``.

>>> h = build(MaskSpec(), "zip", ["13053", "13068"], ValueKind.TEXT)
>>> h.height, h.labels_of("13053")
(5, ('13053', '1305*', '130**', '13***', '1****', '*'))
>>> h.parents(1).tolist()   # level-1 codes -> level-2 codes: 1305* and 1306* both go to 130**
[0, 0]
"""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import enum
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from engine.errors import HierarchyError

TOP = "*"
MAX_LISTED = 20


class ValueKind(enum.Enum):
    """What a column holds, as far as hierarchies and numeric models care."""

    INTEGER = "integer"
    FLOAT = "float"
    DECIMAL = "decimal"
    DATE = "date"
    TIMESTAMP = "timestamp"
    TEXT = "text"
    BOOLEAN = "boolean"

    @property
    def numeric(self) -> bool:
        return self in (ValueKind.INTEGER, ValueKind.FLOAT, ValueKind.DECIMAL)

    def parse(self, text: str) -> Any:
        """Parse a value written in a CSV or the config into this kind (raises ValueError)."""
        t = text.strip() if self is not ValueKind.TEXT else text
        if self is ValueKind.INTEGER:
            f = float(t)
            if not f.is_integer():
                raise ValueError(f"{text!r} is not a whole number")
            return int(f)
        if self is ValueKind.FLOAT:
            return float(t)
        if self is ValueKind.DECIMAL:
            return decimal.Decimal(t)
        if self is ValueKind.DATE:
            return dt.date.fromisoformat(t)
        if self is ValueKind.TIMESTAMP:
            return dt.datetime.fromisoformat(t)
        if self is ValueKind.BOOLEAN:
            low = t.lower()
            if low in ("true", "t", "1", "yes"):
                return True
            if low in ("false", "f", "0", "no"):
                return False
            raise ValueError(f"{text!r} is not a boolean")
        return text


# --- specs (what the config says) -------------------------------------------------------------------


@dataclass(frozen=True)
class CsvSpec:
    """ARX format: ``value;level1;...;levelh`` per line, no header."""

    path: Path
    delimiter: str = ";"

    def describe(self) -> str:
        return str(self.path)


@dataclass(frozen=True)
class IntervalsSpec:
    """Numeric intervals ``[lo, lo+w)`` of each width in turn (each a multiple of the one before), then ``*``."""

    widths: tuple[float, ...]
    start: float = 0

    def describe(self) -> str:
        return f"intervals {list(self.widths)}"


@dataclass(frozen=True)
class MaskSpec:
    """Prefix masking from the right, one character per level: 13053 → 1305* → 130** → 13*** → 1**** → *."""

    def describe(self) -> str:
        return "mask"


@dataclass(frozen=True)
class SuppressSpec:
    """Value → ``*``."""

    def describe(self) -> str:
        return "suppress"


DATE_STEPS = ("month", "quarter", "year", "decade")


@dataclass(frozen=True)
class DatesSpec:
    """Day → the given coarser steps (default month, year) → ``*``."""

    steps: tuple[str, ...] = ("month", "year")

    def describe(self) -> str:
        return f"dates {list(self.steps)}"


@dataclass(frozen=True)
class TaxonomySpec:
    """An explicit mapping value → its labels at levels 1..h, written in the config."""

    mapping: tuple[tuple[str, tuple[str, ...]], ...]

    def describe(self) -> str:
        return "taxonomy"


HierarchySpec = CsvSpec | IntervalsSpec | MaskSpec | SuppressSpec | DatesSpec | TaxonomySpec


# --- the hierarchy itself -----------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Hierarchy:
    """A validated function chain.  ``leaves`` are the level-0 values, sorted; ``labels[j-1][i]`` is the
    level-``j`` label of leaf ``i``.  Codes at each level number the distinct values in order of their first
    leaf, so codes are stable and intervals stay in numeric order."""

    attribute: str
    leaves: tuple[Any, ...]
    labels: tuple[tuple[str, ...], ...]
    source: str = ""
    _check: bool = field(default=True, repr=False)

    def __post_init__(self) -> None:
        if self._check:
            validate_chain(self.attribute, self.source, self.leaves, self.labels)

    @property
    def height(self) -> int:
        return len(self.labels)

    @cached_property
    def _levels(self) -> list[tuple[np.ndarray, list[Any]]]:
        """Per level: (code of each leaf, the distinct values in code order)."""
        out: list[tuple[np.ndarray, list[Any]]] = [(np.arange(len(self.leaves), dtype=np.int64), list(self.leaves))]
        for column in self.labels:
            seen: dict[str, int] = {}
            codes = np.fromiter((seen.setdefault(v, len(seen)) for v in column), dtype=np.int64, count=len(column))
            out.append((codes, list(seen)))
        return out

    def codes(self, level: int) -> np.ndarray:
        """Code at ``level`` of every leaf (same order as ``leaves``)."""
        return self._levels[level][0]

    def domain(self, level: int) -> list[Any]:
        """Distinct values at ``level`` in code order (level 0: the typed leaves)."""
        return self._levels[level][1]

    def cardinality(self, level: int) -> int:
        return len(self._levels[level][1])

    def parents(self, level: int) -> np.ndarray:
        """Array mapping each code at ``level`` to its code at ``level + 1``."""
        return self.ancestors(level, level + 1)

    def ancestors(self, level: int, target: int) -> np.ndarray:
        """Array mapping each code at ``level`` to its code at ``target >= level``."""
        out = np.empty(self.cardinality(level), dtype=np.int64)
        out[self.codes(level)] = self.codes(target)
        return out

    def leaf_counts(self, level: int) -> np.ndarray:
        """Number of leaves under each code at ``level`` (for KL-divergence)."""
        return np.bincount(self.codes(level), minlength=self.cardinality(level))

    def labels_of(self, leaf: Any) -> tuple[Any, ...]:
        i = self.leaves.index(leaf)
        return (self.leaves[i],) + tuple(col[i] for col in self.labels)

    def missing(self, values: Iterable[Any]) -> list[Any]:
        """Source values this hierarchy does not cover."""
        known = set(self.leaves)
        return [v for v in values if v not in known]

    def require_covers(self, values: Iterable[Any]) -> None:
        """Raise naming the count and up to 20 of the source values not covered."""
        missing = self.missing(values)
        if missing:
            shown = ", ".join(repr(v) for v in sorted(missing, key=sort_key)[:MAX_LISTED])
            more = f" (first {MAX_LISTED} shown)" if len(missing) > MAX_LISTED else ""
            raise HierarchyError(
                f"hierarchy for column {self.attribute!r} ({self.source}) misses {len(missing)} value(s) "
                f"that occur in the source{more}: {shown}"
            )


def sort_key(v: Any) -> tuple[int, Any]:
    if isinstance(v, bool):
        return (0, int(v))
    if isinstance(v, (int, float, decimal.Decimal)):
        return (0, float(v))
    if isinstance(v, (dt.date, dt.datetime)):
        return (1, v.isoformat())
    return (2, str(v))


def validate_chain(attribute: str, source: str, leaves: Sequence[Any], labels: Sequence[Sequence[str]]) -> None:
    """Each level must be a function of the level below; leaves unique; every level as long as the leaves."""
    where = f"hierarchy for column {attribute!r} ({source})"
    if not leaves:
        raise HierarchyError(f"{where} has no values")
    if len(set(leaves)) != len(leaves):
        seen: set[Any] = set()
        dupes = [v for v in leaves if v in seen or seen.add(v)]
        raise HierarchyError(f"{where} lists value(s) more than once with different generalizations: "
                             + ", ".join(repr(v) for v in dupes[:MAX_LISTED]))
    for column in labels:
        if len(column) != len(leaves):
            raise HierarchyError(f"{where}: a level has {len(column)} labels for {len(leaves)} values")
    for j in range(len(labels) - 1):
        parent: dict[str, str] = {}
        for child, up in zip(labels[j], labels[j + 1]):
            known = parent.setdefault(child, up)
            if known != up:
                raise HierarchyError(
                    f"{where} is not a function chain: level {j + 1} value {child!r} maps to two level-{j + 2} "
                    f"values {known!r} and {up!r}"
                )


# --- builders --------------------------------------------------------------------------------------------


def build(spec: HierarchySpec, attribute: str, values: Iterable[Any], kind: ValueKind) -> Hierarchy:
    """Build and validate the hierarchy of ``attribute`` for the distinct source ``values`` (typed).

    CSV and taxonomy hierarchies keep every value they list (parsed into ``kind``) and must cover
    ``values``; builders generalize exactly ``values``."""
    distinct = sorted(set(values), key=sort_key)
    builder = _BUILDERS[type(spec)]
    leaves, labels = builder(spec, attribute, distinct, kind)  # type: ignore[operator]
    order = sorted(range(len(leaves)), key=lambda i: sort_key(leaves[i]))
    hierarchy = Hierarchy(
        attribute=attribute,
        leaves=tuple(leaves[i] for i in order),
        labels=tuple(tuple(col[i] for i in order) for col in labels),
        source=spec.describe(),
    )
    hierarchy.require_covers(distinct)
    return hierarchy


Built = tuple[list[Any], list[list[str]]]


def _from_rows(spec: HierarchySpec, attribute: str, rows: Sequence[tuple[int, str, Sequence[str]]],
               kind: ValueKind) -> Built:
    """Rows of (line, value, labels): parse values, require one height, drop exact duplicate rows."""
    where = f"hierarchy for column {attribute!r} ({spec.describe()})"
    if not rows:
        raise HierarchyError(f"{where} is empty")
    first_line, _, first_labels = rows[0]
    height = len(first_labels)
    if height == 0:
        raise HierarchyError(f"{where} line {first_line} has no generalization levels")
    chains: dict[Any, tuple[int, tuple[str, ...]]] = {}
    for line, raw, labels in rows:
        if len(labels) != height:
            raise HierarchyError(
                f"{where} line {line} has {len(labels)} level(s) above the value, line {first_line} has {height}: "
                "a hierarchy has one height"
            )
        try:
            value = kind.parse(raw)
        except (ValueError, decimal.InvalidOperation) as exc:
            raise HierarchyError(f"{where} line {line}: value {raw!r} is not a valid {kind.value}: {exc}") from None
        chain = tuple(labels)
        if value in chains and chains[value][1] != chain:
            raise HierarchyError(
                f"{where} is not a function chain: value {raw!r} (lines {chains[value][0]} and {line}) has two "
                f"generalizations {list(chains[value][1])} and {list(chain)}"
            )
        chains.setdefault(value, (line, chain))
    leaves = list(chains)
    labels_by_level = [[chains[v][1][j] for v in leaves] for j in range(height)]
    return leaves, labels_by_level


def read_csv_rows(path: Path, delimiter: str = ";") -> list[tuple[int, str, list[str]]]:
    """Read an ARX hierarchy file into (line number, value, labels) rows; blank lines skipped."""
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:
            reader = csv.reader(fh, delimiter=delimiter)
            rows = [(i, row[0], row[1:]) for i, row in enumerate(reader, start=1) if row and any(c for c in row)]
    except OSError as exc:
        raise HierarchyError(f"cannot read hierarchy file {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, csv.Error) as exc:
        raise HierarchyError(f"hierarchy file {path} is not a readable CSV: {exc}") from None
    return rows


def _csv(spec: CsvSpec, attribute: str, values: list[Any], kind: ValueKind) -> Built:
    return _from_rows(spec, attribute, read_csv_rows(spec.path, spec.delimiter), kind)


def _taxonomy(spec: TaxonomySpec, attribute: str, values: list[Any], kind: ValueKind) -> Built:
    rows = [(i, value, list(labels)) for i, (value, labels) in enumerate(spec.mapping, start=1)]
    return _from_rows(spec, attribute, rows, kind)


def _number(x: float) -> str:
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return str(x)


def _intervals(spec: IntervalsSpec, attribute: str, values: list[Any], kind: ValueKind) -> Built:
    where = f"hierarchy for column {attribute!r} ({spec.describe()})"
    if not kind.numeric:
        raise HierarchyError(f"{where}: intervals need a numeric column, {attribute!r} holds {kind.value}")
    widths = list(spec.widths)
    for a, b in zip(widths, widths[1:]):
        ratio = b / a
        if not math.isclose(ratio, round(ratio)) or round(ratio) < 2:
            raise HierarchyError(f"{where}: width {_number(b)} is not a multiple (>= 2x) of width {_number(a)}, "
                                 "so the levels would not form a function chain")
    labels: list[list[str]] = []
    for w in widths:
        column = []
        for v in values:
            lo = spec.start + math.floor((float(v) - spec.start) / w) * w
            column.append(f"[{_number(lo)}, {_number(lo + w)})")
        labels.append(column)
    labels.append([TOP] * len(values))
    return list(values), labels


def _mask(spec: MaskSpec, attribute: str, values: list[Any], kind: ValueKind) -> Built:
    texts = [str(v) for v in values]
    longest = max((len(t) for t in texts), default=1)
    labels = []
    for j in range(1, longest):
        labels.append([t[: max(len(t) - j, 0)] + "*" * min(j, len(t)) for t in texts])
    labels.append([TOP] * len(texts))
    return list(values), labels


def _suppress(spec: SuppressSpec, attribute: str, values: list[Any], kind: ValueKind) -> Built:
    return list(values), [[TOP] * len(values)]


def _date_label(d: dt.date, step: str) -> str:
    if step == "month":
        return f"{d.year:04d}-{d.month:02d}"
    if step == "quarter":
        return f"{d.year:04d}-Q{(d.month - 1) // 3 + 1}"
    if step == "year":
        return f"{d.year:04d}"
    return f"{d.year // 10 * 10:04d}s"


def _dates(spec: DatesSpec, attribute: str, values: list[Any], kind: ValueKind) -> Built:
    where = f"hierarchy for column {attribute!r} ({spec.describe()})"
    ranks = []
    for step in spec.steps:
        if step not in DATE_STEPS:
            raise HierarchyError(f"{where}: unknown step {step!r}; steps are {', '.join(DATE_STEPS)}")
        ranks.append(DATE_STEPS.index(step))
    if ranks != sorted(set(ranks)):
        raise HierarchyError(f"{where}: steps must go from fine to coarse without repeats ({', '.join(DATE_STEPS)})")
    dates = []
    for v in values:
        if isinstance(v, dt.datetime):
            dates.append(v.date())
        elif isinstance(v, dt.date):
            dates.append(v)
        else:
            try:
                dates.append(dt.date.fromisoformat(str(v)[:10]))
            except ValueError:
                raise HierarchyError(f"{where}: value {v!r} is not a date") from None
    labels = [[_date_label(d, step) for d in dates] for step in spec.steps]
    labels.append([TOP] * len(values))
    return list(values), labels


_BUILDERS: Mapping[type, Callable[..., Built]] = {
    CsvSpec: _csv,
    TaxonomySpec: _taxonomy,
    IntervalsSpec: _intervals,
    MaskSpec: _mask,
    SuppressSpec: _suppress,
    DatesSpec: _dates,
}


def check_spec(spec: HierarchySpec, attribute: str) -> None:
    """Validate what can be validated before touching the warehouse (file readable, one height, chain)."""
    if isinstance(spec, (CsvSpec, TaxonomySpec)):
        leaves, labels = _BUILDERS[type(spec)](spec, attribute, [], ValueKind.TEXT)
        validate_chain(attribute, spec.describe(), leaves, labels)
    elif isinstance(spec, IntervalsSpec):
        _intervals(spec, attribute, [], ValueKind.FLOAT)
    elif isinstance(spec, DatesSpec):
        _dates(spec, attribute, [], ValueKind.DATE)
