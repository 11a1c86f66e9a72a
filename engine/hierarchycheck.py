"""What ``veil hierarchy`` does: check every hierarchy of a config against the source at once, and print one
hierarchy in ARX's CSV format.

The check does not stop at the first problem: for each hierarchy — every quasi-identifier's and every
sensitive hierarchy a model names (hierarchical EMD) — it reports either the structural error (file
unreadable, table missing, not a function chain, ragged, a value not of the column's type) or **every**
source value the hierarchy misses with its row count.  It reads each column's distinct values with one
``GROUP BY`` and leaves nothing behind.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veil.backends import open_backend
from veil.backends.base import Session
from veil.config import Config
from veil.errors import ConfigError, SourceError, VeilError
from veil.hierarchytables import read_table
from veil.hierarchy import CsvSpec, Hierarchy, HierarchySpec, TableSpec, build, construct, sort_key, to_arx_csv
from veil.queries import hierarchy as qh
from veil.warehouse import Column, Warehouse, value_text


@dataclass(frozen=True)
class Target:
    """A hierarchy the config names: its column, what it is for, and its spec."""

    column: str
    role: str
    spec: HierarchySpec


@dataclass(frozen=True)
class HierarchyCheck:
    """One hierarchy against the source: its error, or every value it misses as ``(value, rows)``."""

    target: Target
    source_values: int = 0
    height: int | None = None
    values: int | None = None
    missing: tuple[tuple[Any, int], ...] = ()
    error: str | None = None

    @property
    def valid(self) -> bool:
        return self.error is None and not self.missing

    @property
    def missing_rows(self) -> int:
        return sum(n for _, n in self.missing)

    def document(self) -> dict[str, Any]:
        return {
            "column": self.target.column,
            "role": self.target.role,
            "source": self.target.spec.describe(),
            "valid": self.valid,
            "height": self.height,
            "values": self.values,
            "source_values": self.source_values,
            "missing_values": len(self.missing),
            "missing_rows": self.missing_rows,
            "missing": [{"value": value_text(v), "rows": n} for v, n in self.missing],
            "error": self.error,
        }

    def lines(self) -> list[str]:
        """The text report: a headline, then one line per missing value."""
        head = f"{self.target.column} ({self.target.spec.describe()}, {self.target.role})"
        if self.error is not None:
            return [f"{head}: invalid — {self.error}"]
        if not self.missing:
            return [
                f"{head}: valid — height {self.height}, {self.values} values, covers all {self.source_values} "
                "source values"
            ]
        return [
            f"{head}: invalid — misses {len(self.missing)} of {self.source_values} source values "
            f"({_rows(self.missing_rows)}):"
        ] + [f"  {value_text(v)} ({_rows(n)})" for v, n in self.missing]


@dataclass(frozen=True)
class Coverage:
    """Every hierarchy of a config checked against the source."""

    checks: tuple[HierarchyCheck, ...]

    @property
    def valid(self) -> bool:
        return all(c.valid for c in self.checks)

    def document(self) -> dict[str, Any]:
        """The JSON of ``veil hierarchy --check``."""
        return {
            "valid": self.valid,
            "hierarchies": len(self.checks),
            "invalid": sum(not c.valid for c in self.checks),
            "checks": [c.document() for c in self.checks],
        }

    def lines(self) -> list[str]:
        out = [line for c in self.checks for line in c.lines()]
        bad = sum(not c.valid for c in self.checks)
        out.append(
            f"{bad} of {len(self.checks)} hierarchies invalid" if bad else f"all {len(self.checks)} hierarchies valid"
        )
        return out


def _rows(n: int) -> str:
    return f"{n} row" if n == 1 else f"{n} rows"


def targets(config: Config) -> list[Target]:
    """Every hierarchy the config names: quasi-identifiers first, then the models' sensitive hierarchies."""
    found = [Target(qi.column, "quasi-identifier", qi.hierarchy) for qi in config.quasi_identifiers]
    for model in config.models:
        spec = getattr(model, "hierarchy", None)
        if spec is None or model.attribute is None:
            continue
        if isinstance(spec, (str, os.PathLike)):
            spec = CsvSpec(Path(spec), getattr(model, "delimiter", ";"))
        found.append(Target(model.attribute, f"sensitive, {model.describe()}", spec))
    return found


class _Source:
    """The source's columns and each column's distinct values (one ``GROUP BY`` per column, cached)."""

    def __init__(self, session: Session, config: Config) -> None:
        self.session = session
        self.wh = Warehouse(session, config.source, (), ())
        self.columns: dict[str, Column] = self.wh.inspect()
        self.counts: dict[str, list[tuple[Any, int]]] = {}

    def column(self, name: str) -> Column:
        column = self.columns.get(name)
        if column is None:
            known = ", ".join(repr(c) for c in list(self.columns)[:20])
            raise SourceError(
                f"column {name!r} does not exist in source table {self.wh.table_name!r} (its columns: {known})"
            )
        if column.kind is None:
            raise SourceError(
                f"column {name!r} of source table {self.wh.table_name!r} has a type Veil cannot generalize"
            )
        return column

    def values(self, name: str) -> list[tuple[Any, int]]:
        """Distinct non-NULL values of ``name`` with their row counts, sorted."""
        if name not in self.counts:
            rows = self.session.rows(
                qh.value_counts(self.wh.source_table([name]), name), f"reading the values of column {name!r}"
            )
            self.counts[name] = sorted(((v, int(n)) for v, n in rows if v is not None), key=lambda p: sort_key(p[0]))
        return self.counts[name]

    def spec(self, target: Target) -> HierarchySpec:
        return (
            read_table(self.session, target.spec, target.column) if isinstance(target.spec, TableSpec) else target.spec
        )


def check(session: Session, config: Config) -> Coverage:
    """Check every hierarchy of ``config`` against the source on ``session``; never stops at the first."""
    source = _Source(session, config)
    return Coverage(tuple(_check_one(source, t) for t in targets(config)))


def _check_one(source: _Source, target: Target) -> HierarchyCheck:
    counted: list[tuple[Any, int]] = []
    try:
        column = source.column(target.column)
        counted = source.values(target.column)
        h = construct(source.spec(target), target.column, [v for v, _ in counted], column.kind)
    except VeilError as exc:
        return HierarchyCheck(target, source_values=len(counted), error=str(exc))
    known = set(h.leaves)
    missing = tuple((v, n) for v, n in counted if v not in known)
    return HierarchyCheck(target, source_values=len(counted), height=h.height, values=len(h.leaves), missing=missing)


def check_hierarchies(config: Config) -> Coverage:
    """``veil hierarchy --check``: :func:`check` on one connection of the config's backend."""
    with open_backend(config.source.resolved_url()).session() as session:
        return check(session, config)


def export(session: Session, config: Config, column: str) -> Hierarchy:
    """The hierarchy of ``column`` as a run builds it (validated against the source's values)."""
    found = [t for t in targets(config) if t.column == column]
    if not found:
        named = ", ".join(repr(t.column) for t in targets(config))
        raise ConfigError(f"{config.path}: no hierarchy for column {column!r} (hierarchies: {named})")
    source = _Source(session, config)
    target = found[0]
    kind = source.column(column).kind
    return build(source.spec(target), column, [v for v, _ in source.values(column)], kind)


def export_hierarchy(config: Config, column: str, delimiter: str = ";") -> tuple[Hierarchy, str]:
    """``veil hierarchy --column C``: the hierarchy and its ARX CSV text."""
    with open_backend(config.source.resolved_url()).session() as session:
        h = export(session, config, column)
    return h, to_arx_csv(h, delimiter)
