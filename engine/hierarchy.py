"""Generalization hierarchies (docs/models.md §1) as function chains, and the rows of their dimension tables.  No SQL.

A hierarchy of height ``h`` maps every original value (level 0) to one label per level ``1..h``.  Sources:
an ARX-format CSV (``value;level1;...;levelh``, no header), a warehouse table with one column per level
(read by ``veil.hierarchytables``, which hands this module its rows), rows in memory (a DataFrame of levels), or
a builder: numeric ``intervals`` of given widths then ``*``; prefix ``mask`` for codes; ``suppress`` (value →
``*``); ``dates`` (day → month → year → ``*``); an explicit ``taxonomy``.

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
import io
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from veil import files
from veil.errors import HierarchyError, excerpt

TOP = "*"
MAX_LISTED = 20


class ValueKind(enum.Enum):
    """What a column holds, as far as hierarchies and numeric models care."""

    INTEGER = "integer"
    FLOAT = "float"
    REAL = "real"  # float4: each value as the shortest decimal that round-trips in 32 bits (``real_value``)
    DECIMAL = "decimal"
    DATE = "date"
    TIMESTAMP = "timestamp"
    TEXT = "text"
    BOOLEAN = "boolean"

    @property
    def numeric(self) -> bool:
        return self in (ValueKind.INTEGER, ValueKind.FLOAT, ValueKind.REAL, ValueKind.DECIMAL)

    def parse(self, text: str) -> Any:
        """Parse a value written in a CSV or the config into this kind (raises ValueError)."""
        t = text.strip() if self is not ValueKind.TEXT else text
        if self is ValueKind.INTEGER:
            try:
                return int(t)  # exact, also beyond 2**53
            except ValueError:
                pass
            f = float(t)
            if not f.is_integer():
                raise ValueError(f"{text!r} is not a whole number")
            return int(f)
        if self is ValueKind.FLOAT:
            return float(t)
        if self is ValueKind.REAL:
            return real_value(float(t))
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

    def coerce(self, value: Any) -> Any:
        """A value read from a table or a DataFrame (already typed by its driver) as this kind; text is
        parsed like a CSV cell (raises ValueError).

        >>> ValueKind.INTEGER.coerce(28.0), ValueKind.TEXT.coerce(13053), ValueKind.DATE.coerce("2024-03-17")
        (28, '13053', datetime.date(2024, 3, 17))
        """
        if isinstance(value, str):
            return self.parse(value)
        if self is ValueKind.TEXT:
            return label_text(value)
        if self is ValueKind.BOOLEAN and isinstance(value, bool):
            return value
        if self.numeric and isinstance(value, (int, float, decimal.Decimal)) and not isinstance(value, bool):
            if self is ValueKind.FLOAT:
                return float(value)
            if self is ValueKind.REAL:
                return real_value(value)
            if self is ValueKind.DECIMAL:
                return decimal.Decimal(str(value))
            if isinstance(value, int) or value == int(value):
                return int(value)
            raise ValueError(f"{value!r} is not a whole number")
        if self is ValueKind.TIMESTAMP and isinstance(value, dt.date):
            return value if isinstance(value, dt.datetime) else dt.datetime(value.year, value.month, value.day)
        if self is ValueKind.DATE and isinstance(value, dt.date):
            if not isinstance(value, dt.datetime):
                return value
            if value.time() == dt.time(0):
                return value.date()
            raise ValueError(f"{value!r} has a time of day")
        raise ValueError(f"{value!r} ({type(value).__name__}) is not a {self.value}")


def label_text(value: Any) -> str:
    """A label or a value as hierarchy text: ``28.0`` → ``28``, dates in ISO format.

    >>> label_text(28.0), label_text(dt.date(2024, 3, 17)), label_text("<30")
    ('28', '2024-03-17', '<30')
    """
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return str(value)


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


@dataclass(frozen=True)
class TableSpec:
    """A warehouse table with one column per level, ``level_0 .. level_h`` unless ``columns`` names them in
    order.  Read through the run's session (``veil.hierarchytables.read_table``) into a :class:`RowsSpec`."""

    name: str
    columns: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.columns is not None and len(self.columns) < 2:
            raise HierarchyError(
                f"hierarchy table {self.name!r}: columns must name the value column and at least "
                f"one level above it, got {list(self.columns)}"
            )

    @property
    def schema(self) -> str | None:
        return self.name.rpartition(".")[0] or None

    @property
    def table(self) -> str:
        return self.name.rpartition(".")[2]

    def describe(self) -> str:
        return f"table {self.name}"


@dataclass(frozen=True)
class RowsSpec:
    """A hierarchy's rows in memory: ``(value, (label_1, ..., label_h))`` each, as read from a table
    (``origin`` "table dims.zip_levels") or a DataFrame of levels.  ``columns`` names the value and level
    columns, ``unit`` what a row is called in errors.  Values may be typed (they are coerced into the source
    column's kind) or text (parsed like a CSV cell); ``None`` is a missing cell."""

    rows: tuple[tuple[Any, tuple[Any, ...]], ...]
    origin: str
    columns: tuple[str, ...] = ()
    unit: str = "row"

    def describe(self) -> str:
        return self.origin


HierarchySpec = CsvSpec | IntervalsSpec | MaskSpec | SuppressSpec | DatesSpec | TaxonomySpec | TableSpec | RowsSpec


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


def validate_chain(
    attribute: str, source: str, leaves: Sequence[Any], labels: Sequence[Sequence[str]], columns: Sequence[str] = ()
) -> None:
    """Each level must be a function of the level below; leaves unique; every level as long as the leaves.
    ``columns`` (value and level columns of a table or DataFrame) are named in the error when given."""
    where = f"hierarchy for column {attribute!r} ({source})"
    if not leaves:
        raise HierarchyError(f"{where} has no values")
    if len(set(leaves)) != len(leaves):
        seen: set[Any] = set()
        dupes = []
        for v in leaves:
            if v in seen:
                dupes.append(v)
            seen.add(v)
        raise HierarchyError(
            f"{where} lists value(s) more than once with different generalizations: "
            + ", ".join(excerpt(v) for v in dupes[:MAX_LISTED])
        )
    for column in labels:
        if len(column) != len(leaves):
            raise HierarchyError(f"{where}: a level has {len(column)} labels for {len(leaves)} values")
    for j in range(len(labels) - 1):
        parent: dict[str, str] = {}
        for child, up in zip(labels[j], labels[j + 1]):
            known = parent.setdefault(child, up)
            if known != up:
                named = f" (column {columns[j + 1]!r})" if len(columns) > j + 2 else ""
                raise HierarchyError(
                    f"{where} is not a function chain: level {j + 1} value {excerpt(child)}{named} maps to two "
                    f"level-{j + 2} values {excerpt(known)} and {excerpt(up)}"
                )


# --- builders --------------------------------------------------------------------------------------------


def build(spec: HierarchySpec, attribute: str, values: Iterable[Any], kind: ValueKind) -> Hierarchy:
    """Build and validate the hierarchy of ``attribute`` for the distinct source ``values`` (typed).

    CSV, table, in-memory and taxonomy hierarchies keep every value they list (typed as ``kind``) and must
    cover ``values``; builders generalize exactly ``values``."""
    distinct = sorted(set(values), key=sort_key)
    hierarchy = construct(spec, attribute, distinct, kind)
    hierarchy.require_covers(distinct)
    return hierarchy


def construct(spec: HierarchySpec, attribute: str, values: Iterable[Any], kind: ValueKind) -> Hierarchy:
    """Like :func:`build` without the coverage check: a valid function chain of one height (what
    ``veil hierarchy --check`` needs to list every value it misses).

    >>> h = construct(TaxonomySpec(mapping=(("flu", ("respiratory", "*")),)), "disease", ["ulcer"], ValueKind.TEXT)
    >>> h.missing(["flu", "ulcer"])
    ['ulcer']
    """
    distinct = sorted(set(values), key=sort_key)
    builder = _BUILDERS.get(type(spec))
    if builder is None:
        raise HierarchyError(
            f"hierarchy for column {attribute!r} ({spec.describe()}) must be read from the warehouse before it is built"
        )
    leaves, labels = builder(spec, attribute, distinct, kind)
    order = sorted(range(len(leaves)), key=lambda i: sort_key(leaves[i]))
    return Hierarchy(
        attribute=attribute,
        leaves=tuple(leaves[i] for i in order),
        labels=tuple(tuple(col[i] for i in order) for col in labels),
        source=spec.describe(),
    )


Built = tuple[list[Any], list[list[str]]]


def _from_rows(
    spec: HierarchySpec,
    attribute: str,
    rows: Sequence[tuple[int, Any, Sequence[Any]]],
    kind: ValueKind,
    unit: str = "line",
    columns: Sequence[str] = (),
) -> Built:
    """Rows of (number, value, labels): type the values, require one height, drop exact duplicate rows.

    ``unit`` is what errors call a row ("line" of a file, "row" of a table); ``columns`` names the value and
    level columns, so that errors about a table or a DataFrame name the column at fault."""
    where = f"hierarchy for column {attribute!r} ({spec.describe()})"
    if not rows:
        raise HierarchyError(f"{where} is empty")
    first_line, _, first_labels = rows[0]
    height = len(first_labels)
    if height == 0:
        raise HierarchyError(f"{where} {unit} {first_line} has no generalization levels")
    chains: dict[Any, tuple[int, tuple[str, ...]]] = {}
    for line, raw, labels in rows:
        if len(labels) != height:
            raise HierarchyError(
                f"{where} {unit} {line} has {len(labels)} level(s) above the value, {unit} {first_line} has "
                f"{height}: a hierarchy has one height"
            )
        value = _typed(where, unit, line, raw, kind, columns)
        chain = _chain(where, unit, line, raw, labels, columns)
        if value in chains and chains[value][1] != chain:
            raise HierarchyError(
                f"{where} is not a function chain: value {excerpt(raw)} ({unit}s {chains[value][0]} and {line}) has "
                f"two generalizations {_labels(chains[value][1])} and {_labels(chain)}"
            )
        chains.setdefault(value, (line, chain))
    leaves = list(chains)
    labels_by_level = [[chains[v][1][j] for v in leaves] for j in range(height)]
    if columns:
        validate_chain(attribute, spec.describe(), leaves, labels_by_level, columns)
    return leaves, labels_by_level


def _typed(where: str, unit: str, line: int, raw: Any, kind: ValueKind, columns: Sequence[str]) -> Any:
    column = f" in column {columns[0]!r}" if columns else ""
    if raw is None:
        raise HierarchyError(f"{where} {unit} {line} has no value (NULL{column})")
    try:
        return kind.coerce(raw)
    except (ValueError, decimal.InvalidOperation):  # not the parser's reason: it repeats the whole value
        raise HierarchyError(
            f"{where} {unit} {line}: value {excerpt(raw)}{column} is not a valid {kind.value}"
        ) from None


def _chain(
    where: str, unit: str, line: int, raw: Any, labels: Sequence[Any], columns: Sequence[str]
) -> tuple[str, ...]:
    for j, label in enumerate(labels):
        if label is None:
            column = f" in column {columns[j + 1]!r}" if len(columns) > j + 1 else ""
            raise HierarchyError(
                f"{where} {unit} {line}: value {excerpt(raw)} has no level-{j + 1} label "
                f"(NULL{column}); a hierarchy has one height: every value needs a label at every level"
            )
    return tuple(label_text(label) for label in labels)


def read_csv_rows(path: Path, delimiter: str = ";") -> list[tuple[int, str, list[str]]]:
    """Read an ARX hierarchy file into (line number, value, labels) rows; blank lines skipped.  The file
    must be a regular file of at most ``files.MAX_HIERARCHY_BYTES`` outside ``/proc``, ``/sys`` and ``/dev``
    (``veil.files``); errors quote none of its text (a CSV error names the line only)."""
    try:
        text = files.read_bounded(path, files.MAX_HIERARCHY_BYTES).decode("utf-8-sig")
    except files.Refused as exc:
        raise HierarchyError(f"cannot read hierarchy file {path}: it {exc}") from None
    except OSError as exc:
        raise HierarchyError(f"cannot read hierarchy file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise HierarchyError(
            f"hierarchy file {path} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})"
        ) from None
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        return [(i, row[0], row[1:]) for i, row in enumerate(reader, start=1) if row and any(c for c in row)]
    except csv.Error as exc:  # the csv module's messages quote no data
        raise HierarchyError(f"hierarchy file {path} is not a readable CSV (line {reader.line_num}): {exc}") from None


def _labels(labels: Sequence[Any]) -> str:
    """A row's labels as an error shows them, each an :func:`~veil.errors.excerpt`.

    >>> _labels(("<30", "*"))
    "['<30', '*']"
    """
    return "[" + ", ".join(excerpt(label) for label in labels) + "]"


def _csv(spec: CsvSpec, attribute: str, values: list[Any], kind: ValueKind) -> Built:
    return _from_rows(spec, attribute, read_csv_rows(spec.path, spec.delimiter), kind)


def _taxonomy(spec: TaxonomySpec, attribute: str, values: list[Any], kind: ValueKind) -> Built:
    rows = [(i, value, list(labels)) for i, (value, labels) in enumerate(spec.mapping, start=1)]
    return _from_rows(spec, attribute, rows, kind)


def _rows(spec: RowsSpec, attribute: str, values: list[Any], kind: ValueKind) -> Built:
    rows = [(i, value, labels) for i, (value, labels) in enumerate(spec.rows, start=1)]
    return _from_rows(spec, attribute, rows, kind, unit=spec.unit, columns=spec.columns)


def real_value(x: Any) -> float:
    """A value of a REAL (float4) column as every backend gives it: the 32-bit float nearest ``x``, written as
    the shortest decimal that round-trips in 32 bits (what PostgreSQL prints), as a Python float.  DuckDB's
    driver widens the stored bits instead (``0.1`` comes as ``0.10000000149011612``); a hierarchy file may
    write either, or more digits than 32 bits hold.  Raises ``ValueError`` beyond float4's range.

    >>> real_value(0.10000000149011612), real_value(0.1), real_value("0.7"), real_value(16777217)
    (0.1, 0.1, 0.7, 16777216.0)
    """
    wide = float(x)
    with np.errstate(over="ignore"):
        narrow = np.float32(wide)
    if math.isfinite(wide) and not math.isfinite(narrow):
        raise ValueError(f"{x!r} is out of range for a real (float4: magnitude at most {np.finfo(np.float32).max!s})")
    return float(str(narrow))


def exact_number(x: Any) -> Fraction:
    """The exact rational a number denotes: integers and decimals exactly, a float as the shortest decimal that
    round-trips (``0.1`` is 1/10, not the binary double).  Raises ``ValueError`` if not finite.

    >>> exact_number(0.1), exact_number(3), exact_number(decimal.Decimal("2.50"))
    (Fraction(1, 10), Fraction(3, 1), Fraction(5, 2))
    """
    if isinstance(x, Fraction):
        return x
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return Fraction(int(x))
    if isinstance(x, decimal.Decimal):
        if not x.is_finite():
            raise ValueError(f"not a finite number: {x!r}")
        return Fraction(x)
    f = float(x)
    if not math.isfinite(f):
        raise ValueError(f"not a finite number: {x!r}")
    return Fraction(repr(f))


def decimal_text(x: Fraction) -> str:
    """A terminating decimal written out (``3``, ``0.3``, ``-1.25``); other rationals as their nearest float.

    >>> decimal_text(Fraction(3, 10)), decimal_text(Fraction(40)), decimal_text(Fraction(-5, 4))
    ('0.3', '40', '-1.25')
    """
    if x.denominator == 1:
        return str(x.numerator)
    den, twos, fives = x.denominator, 0, 0
    while den % 2 == 0:
        den, twos = den // 2, twos + 1
    while den % 5 == 0:
        den, fives = den // 5, fives + 1
    if den != 1:
        return repr(float(x))
    digits = max(twos, fives)
    scaled = abs(x.numerator * 10**digits // x.denominator)
    whole, frac = divmod(scaled, 10**digits)
    text = f"{whole}.{frac:0{digits}d}".rstrip("0").rstrip(".")
    return ("-" if x < 0 else "") + text


def _intervals(spec: IntervalsSpec, attribute: str, values: list[Any], kind: ValueKind) -> Built:
    """Bounds in exact decimal arithmetic: ``start + k·width`` with an integer k (width 0.1 puts 0.3 in
    ``[0.3, 0.4)``)."""
    where = f"hierarchy for column {attribute!r} ({spec.describe()})"
    if not kind.numeric:
        raise HierarchyError(f"{where}: intervals need a numeric column, {attribute!r} holds {kind.value}")
    try:
        widths = [exact_number(w) for w in spec.widths]
        start = exact_number(spec.start)
    except (ValueError, TypeError) as exc:
        raise HierarchyError(f"{where}: widths and start must be finite numbers ({exc})") from None
    if not widths or any(w <= 0 for w in widths):
        raise HierarchyError(f"{where}: widths must be positive numbers")
    for a, b in zip(widths, widths[1:]):
        ratio = b / a
        if ratio.denominator != 1 or ratio < 2:
            raise HierarchyError(
                f"{where}: width {decimal_text(b)} is not a multiple (>= 2x) of width "
                f"{decimal_text(a)}, so the levels would not form a function chain"
            )
    exact = [exact_number(v) for v in values]
    labels: list[list[str]] = []
    for w in widths:
        column = []
        for v in exact:
            lo = start + math.floor((v - start) / w) * w
            column.append(f"[{decimal_text(lo)}, {decimal_text(lo + w)})")
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
    RowsSpec: _rows,
    IntervalsSpec: _intervals,
    MaskSpec: _mask,
    SuppressSpec: _suppress,
    DatesSpec: _dates,
}


def check_spec(spec: HierarchySpec, attribute: str) -> None:
    """Validate what can be validated before touching the warehouse (file readable, one height, chain)."""
    if isinstance(spec, (CsvSpec, TaxonomySpec, RowsSpec)):
        leaves, labels = _BUILDERS[type(spec)](spec, attribute, [], ValueKind.TEXT)
        validate_chain(attribute, spec.describe(), leaves, labels)
    elif isinstance(spec, IntervalsSpec):
        _intervals(spec, attribute, [], ValueKind.FLOAT)
    elif isinstance(spec, DatesSpec):
        _dates(spec, attribute, [], ValueKind.DATE)


# --- export -------------------------------------------------------------------------------------------------


def to_arx_csv(hierarchy: Hierarchy, delimiter: str = ";") -> str:
    """The hierarchy in ARX's format: ``value;level1;...;levelh`` per leaf, no header (what ``CsvSpec`` reads
    back into the same hierarchy).

    >>> print(to_arx_csv(build(MaskSpec(), "zip", ["13053", "13068"], ValueKind.TEXT)), end="")
    13053;1305*;130**;13***;1****;*
    13068;1306*;130**;13***;1****;*
    """
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    for k, leaf in enumerate(hierarchy.leaves):
        writer.writerow([label_text(leaf), *(column[k] for column in hierarchy.labels)])
    return out.getvalue()
