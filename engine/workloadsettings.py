"""The ``[[workload]]`` tables of the config: the queries analysts run, which ``[search] metric = "workload"``
answers from each node's release (``veil.workload``, docs/workload.md).  It sits beside ``veil.config`` and loads
no numpy, so that parsing a config stays light.

``config.py`` calls ``parse_workload`` once, through the config's one reader (``veil.settings.Table``): a bad table
fails at load time, naming the file, the table, the key and the value; the metric reads the queries parsed then
(``Config.workload``, ``workload_of``).

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
from veil.settings import Table

AGGREGATES = ("count", "sum", "avg")
KEYS = ("group_by", "aggregate", "where", "weight")
MAX_VALUES = 10_000  # values one where-list may name
_AGGREGATE = re.compile(r"^\s*(sum|avg)\s*\(\s*(.+?)\s*\)\s*$")


@dataclass(frozen=True)
class Query:
    """One ``[[workload]]`` table: ``SELECT group_by…, aggregate FROM T WHERE col IN (values) … GROUP BY
    group_by…`` over the original columns, with its ``weight`` in the workload's error."""

    index: int  # 1-based position among the [[workload]] tables
    group_by: tuple[str, ...]
    aggregate: str  # count | sum | avg
    column: str | None  # the summed or averaged column (None for count)
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
        return {
            "query": self.index,
            "group_by": list(self.group_by),
            "aggregate": self.aggregate if self.column is None else f"{self.aggregate}({self.column})",
            "where": {c: list(v) for c, v in self.where},
            "weight": self.weight,
        }


def _value_ok(v: Any) -> bool:
    return isinstance(v, (str, int, float, bool)) and not (isinstance(v, float) and not math.isfinite(v))


def _one(raw: Any, index: int, file: Path | str) -> Query:
    t = Table(raw, f"[[workload]] #{index}", file)
    t.only(KEYS)  # every key refused first: the checks below read the keys together
    group_by = t.raw("group_by")
    if isinstance(group_by, tuple):
        group_by = list(group_by)
    if not isinstance(group_by, list) or not all(isinstance(c, str) and c for c in group_by):
        raise t.error("group_by", f"must be a list of column names, got {group_by!r}")
    if len(set(group_by)) != len(group_by):
        raise t.error("group_by", f"lists a column twice: {group_by!r}")
    kind, column = _aggregate(t)
    where = _where(t)
    weight = t.raw("weight", 1.0)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight) or weight <= 0:
        raise t.error("weight", f"must be a positive number, got {weight!r}")
    t.finish()
    return Query(index, tuple(group_by), kind, column, where, float(weight))


def _aggregate(t: Table) -> tuple[str, str | None]:
    """``aggregate``: ``count`` (the default), ``sum(column)`` or ``avg(column)`` as (kind, column)."""
    aggregate = t.raw("aggregate", "count")
    shapes = 'must be "count", "sum(column)" or "avg(column)", got'
    if not isinstance(aggregate, str):
        raise t.error("aggregate", f"{shapes} {type(aggregate).__name__} {aggregate!r}")
    if aggregate.strip() == "count":
        return "count", None
    m = _AGGREGATE.match(aggregate)
    if m is None:
        raise t.error("aggregate", f"{shapes} {aggregate!r}")
    return m.group(1), m.group(2).strip('"')


def _where(t: Table) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    """``where = { column = [values] }``: each column's values, once each, in order."""
    where_raw = t.raw("where", {})
    if not isinstance(where_raw, Mapping):
        raise t.error("where", f"must be a table {{ column = [values] }}, got {where_raw!r}")
    where = []
    for col, values in where_raw.items():
        if not col:
            raise t.error("where", "names an empty column")
        if isinstance(values, tuple):
            values = list(values)
        if not isinstance(values, list) or not values or len(values) > MAX_VALUES:
            raise t.error(f"where.{col}", f"must be a non-empty list of at most {MAX_VALUES:,} values, got {values!r}")
        bad = [v for v in values if not _value_ok(v)]
        if bad:
            raise t.error(f"where.{col}", f"must list strings, numbers or booleans, got {bad[0]!r}")
        where.append((col, tuple(dict.fromkeys(values))))
    return tuple(where)


def parse_workload(raw: Any, file: Path | str, config: Any = None) -> tuple[Query, ...]:
    """The ``[[workload]]`` tables as ``Query`` objects; with ``config``, also checks that ``[search] metric =
    "workload"`` has queries to answer."""
    if isinstance(raw, tuple):
        raw = list(raw)
    if not isinstance(raw, list):
        raise ConfigError(f"{file}: [[workload]] must be an array of tables, got {type(raw).__name__}")
    queries = tuple(_one(t, i, file) for i, t in enumerate(raw, start=1))
    if config is not None and not queries and getattr(config.search, "metric", None) == "workload":
        raise ConfigError(
            f"{file}: [search] key 'metric' is \"workload\" but the config lists no [[workload]] "
            "query; add at least one [[workload]] table (docs/workload.md)"
        )
    return queries


def workload_of(config: Any) -> tuple[Query, ...]:
    """The config's ``[[workload]]`` queries, as ``parse_workload`` read them when the config was parsed
    (``Config.workload``; none for a config without them)."""
    return tuple(getattr(config, "workload", ()))


def require_columns(queries: Sequence[Query], known: Sequence[str], file: Path | str, table: str) -> None:
    """Every column a query reads exists in the source table (errors name the query and the column)."""
    have = set(known)
    for q in queries:
        for c in q.columns:
            if c not in have:
                raise ConfigError(
                    f"{file}: {q.where_name} reads column {c!r}, which source table {table!r} "
                    f"does not have (its columns: {', '.join(map(repr, list(known)[:20]))})"
                )
