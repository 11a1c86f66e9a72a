"""The ``[[workload]]`` tables of the config: the queries analysts run, which ``[search] metric = "workload"``
answers from each node's release (``veil.workload``, docs/workload.md).  It sits beside ``veil.config`` and loads
no numpy, so that parsing a config stays light.

``config.py`` calls ``parse_workload`` once (a bad table fails at load time, naming the file, the table, the key
and the value); the metric reads the queries again from the config's data with ``workload_of``.

>>> qs = parse_workload([{"group_by": ["age", "sex"], "aggregate": "sum(hours)",
...                       "where": {"education": ["Bachelors", "Masters"]}, "weight": 2}], Path("veil.toml"))
>>> qs[0].aggregate, qs[0].column, qs[0].where, qs[0].weight, qs[0].columns
('sum', 'hours', (('education', ('Bachelors', 'Masters')),), 2.0, ('age', 'sex', 'education', 'hours'))
>>> parse_workload([{"group_by": ["age"], "aggregate": "median(age)"}], Path("veil.toml"))
Traceback (most recent call last):
...
veil.errors.ConfigError: veil.toml: [[workload]] #1 key 'aggregate' must be "count", "sum(column)" or "avg(column)", got 'median(age)'
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veil.errors import ConfigError
from veil.models.params import unknown_keys

AGGREGATES = ("count", "sum", "avg")
KEYS = ("group_by", "aggregate", "where", "weight")
MAX_VALUES = 10_000  # values one where-list may name
_AGGREGATE = re.compile(r"^\s*(sum|avg)\s*\(\s*(.+?)\s*\)\s*$")


@dataclass(frozen=True)
class Query:
    """One ``[[workload]]`` table: ``SELECT group_by…, aggregate FROM T WHERE col IN (values) … GROUP BY
    group_by…`` over the original columns, with its ``weight`` in the workload's error."""

    index: int                       # 1-based position among the [[workload]] tables
    group_by: tuple[str, ...]
    aggregate: str                   # count | sum | avg
    column: str | None               # the summed or averaged column (None for count)
    where: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    weight: float = 1.0

    @property
    def where_name(self) -> str:
        return f"[[workload]] #{self.index}"

    @property
    def columns(self) -> tuple[str, ...]:
        """Every column the query reads, once each: the group-by columns, the filtered ones, the aggregated one."""
        cols = list(self.group_by) + [c for c, _ in self.where] + ([self.column] if self.column else [])
        return tuple(dict.fromkeys(cols))

    def describe(self) -> str:
        agg = self.aggregate if self.column is None else f"{self.aggregate}({self.column})"
        by = f" by {', '.join(self.group_by)}" if self.group_by else ""
        where = "".join(f" where {c} in {list(v)!r}" for c, v in self.where)
        return f"{agg}{by}{where}"

    def document(self) -> dict[str, Any]:
        return {"query": self.index, "group_by": list(self.group_by),
                "aggregate": self.aggregate if self.column is None else f"{self.aggregate}({self.column})",
                "where": {c: list(v) for c, v in self.where}, "weight": self.weight}


def _error(file: Path | str, where: str, key: str, message: str) -> ConfigError:
    return ConfigError(f"{file}: {where} key {key!r} {message}")


def _value_ok(v: Any) -> bool:
    return isinstance(v, (str, int, float, bool)) and not (isinstance(v, float) and not math.isfinite(v))


def _one(raw: Any, index: int, file: Path | str) -> Query:
    where_name = f"[[workload]] #{index}"
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{file}: {where_name} must be a table, got {type(raw).__name__}")
    unknown = sorted(set(raw) - set(KEYS))
    if unknown:
        raise ConfigError(f"{file}: {where_name} has unknown key(s) {unknown_keys(unknown, KEYS)}")
    if "group_by" not in raw:
        raise ConfigError(f"{file}: {where_name} is missing required key 'group_by'")
    group_by = raw["group_by"]
    if isinstance(group_by, tuple):
        group_by = list(group_by)
    if not isinstance(group_by, list) or not all(isinstance(c, str) and c for c in group_by):
        raise _error(file, where_name, "group_by", f"must be a list of column names, got {group_by!r}")
    if len(set(group_by)) != len(group_by):
        raise _error(file, where_name, "group_by", f"lists a column twice: {group_by!r}")
    aggregate = raw.get("aggregate", "count")
    if not isinstance(aggregate, str):
        raise _error(file, where_name, "aggregate", f"must be \"count\", \"sum(column)\" or \"avg(column)\", "
                                                    f"got {type(aggregate).__name__} {aggregate!r}")
    column = None
    if aggregate.strip() == "count":
        kind = "count"
    else:
        m = _AGGREGATE.match(aggregate)
        if m is None:
            raise _error(file, where_name, "aggregate",
                         f"must be \"count\", \"sum(column)\" or \"avg(column)\", got {aggregate!r}")
        kind, column = m.group(1), m.group(2).strip('"')
    where_raw = raw.get("where", {})
    if not isinstance(where_raw, Mapping):
        raise _error(file, where_name, "where", f"must be a table {{ column = [values] }}, got {where_raw!r}")
    where = []
    for col, values in where_raw.items():
        if not col:
            raise _error(file, where_name, "where", "names an empty column")
        if isinstance(values, tuple):
            values = list(values)
        if not isinstance(values, list) or not values or len(values) > MAX_VALUES:
            raise _error(file, where_name, f"where.{col}",
                         f"must be a non-empty list of at most {MAX_VALUES:,} values, got {values!r}")
        bad = [v for v in values if not _value_ok(v)]
        if bad:
            raise _error(file, where_name, f"where.{col}",
                         f"must list strings, numbers or booleans, got {bad[0]!r}")
        where.append((col, tuple(dict.fromkeys(values))))
    weight = raw.get("weight", 1.0)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight) or weight <= 0:
        raise _error(file, where_name, "weight", f"must be a positive number, got {weight!r}")
    return Query(index, tuple(group_by), kind, column, tuple(where), float(weight))


def parse_workload(raw: Any, file: Path | str, config: Any = None) -> tuple[Query, ...]:
    """The ``[[workload]]`` tables as ``Query`` objects; with ``config``, also checks that ``[search] metric =
    "workload"`` has queries to answer."""
    if isinstance(raw, tuple):
        raw = list(raw)
    if not isinstance(raw, list):
        raise ConfigError(f"{file}: [[workload]] must be an array of tables, got {type(raw).__name__}")
    queries = tuple(_one(t, i, file) for i, t in enumerate(raw, start=1))
    if config is not None and not queries and getattr(config.search, "metric", None) == "workload":
        raise ConfigError(f"{file}: [search] key 'metric' is \"workload\" but the config lists no [[workload]] "
                          "query; add at least one [[workload]] table (docs/workload.md)")
    return queries


def workload_of(config: Any) -> tuple[Query, ...]:
    """The config's ``[[workload]]`` queries (read again from its data; none for a config without them)."""
    data = getattr(config, "data", None) or {}
    return parse_workload(data.get("workload", []), getattr(config, "path", "config"))


def require_columns(queries: Sequence[Query], known: Sequence[str], file: Path | str, table: str) -> None:
    """Every column a query reads exists in the source table (errors name the query and the column)."""
    have = set(known)
    for q in queries:
        for c in q.columns:
            if c not in have:
                raise ConfigError(f"{file}: {q.where_name} reads column {c!r}, which source table {table!r} "
                                  f"does not have (its columns: {', '.join(map(repr, list(known)[:20]))})")
