"""Hierarchies as a run meets them: specs that name a warehouse table are read through the run's session
into rows in memory, then built and validated like any other hierarchy (``veil.hierarchy``).

A hierarchy table holds one column per level: ``level_0`` (the original values, typed like the source
column or as text) up to ``level_h``, or the columns named in order by ``columns = [...]``.  Reading it is
one ``SELECT`` built by ``veil.queries.hierarchy``, executed by the session, so it works on every backend.
Its rows are then validated exactly like a CSV file's: every source value covered, each level a function
of the level below, one height (a NULL label is a missing level); errors name the table and the column.

:func:`resolve` replaces every table spec of a config — quasi-identifiers and the sensitive hierarchies of
models (``hierarchy`` of t-closeness / (n,t)-closeness) — by its rows, so models, which never see SQL,
build their hierarchy from memory.  Call it once per run, on the run's session, before models validate.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from veil.backends.base import Session
from veil.config import Config, QuasiIdentifier
from veil.errors import HierarchyError, VeilError
from veil.hierarchy import Hierarchy, HierarchySpec, RowsSpec, TableSpec, ValueKind, build
from veil.models import Model
from veil.queries import hierarchy as qh

_LEVEL = re.compile(r"^level_(\d+)$")
MAX_LISTED = 20


def read_table(session: Session, spec: TableSpec, attribute: str) -> RowsSpec:
    """The rows of hierarchy table ``spec`` (for column ``attribute``), in memory, ready to be built."""
    where = f"hierarchy for column {attribute!r} ({spec.describe()})"
    found = session.source_columns(spec.schema, spec.table)  # the backend's lookup (Spark: its catalog)
    if not found:
        raise HierarchyError(
            f"{where}: table {spec.name!r} does not exist ({session.backend.name} at {session.backend.display_url})"
        )
    names = [str(row[0]) for row in found]
    columns = list(spec.columns) if spec.columns is not None else _default_levels(where, names)
    missing = [c for c in columns if c not in names]
    if missing:
        raise HierarchyError(
            f"{where}: table {spec.name!r} has no column(s) {', '.join(map(repr, missing))} "
            f"(its columns: {', '.join(map(repr, names[:MAX_LISTED]))})"
        )
    rows = session.rows(qh.hierarchy_rows(spec.schema, spec.table, columns), f"reading hierarchy table {spec.name!r}")
    return RowsSpec(
        rows=tuple((row[0], tuple(row[1:])) for row in rows), origin=spec.describe(), columns=tuple(columns), unit="row"
    )


def _default_levels(where: str, names: Sequence[str]) -> list[str]:
    """``level_0 .. level_h``: consecutive from 0, at least one level above the value."""
    levels = sorted(int(m.group(1)) for m in map(_LEVEL.match, names) if m)
    if not levels or levels[0] != 0 or len(levels) < 2:
        raise HierarchyError(
            f"{where}: the table needs columns level_0 (the values) and level_1 .. level_h, or "
            f"columns = [...] naming them in order (its columns: "
            f"{', '.join(map(repr, names[:MAX_LISTED]))})"
        )
    gaps = [j for j in range(levels[-1] + 1) if j not in levels]
    if gaps:
        raise HierarchyError(
            f"{where}: the table has level_{levels[-1]} but no level_{gaps[0]}; levels are "
            "level_0 .. level_h without gaps (or name them with columns = [...])"
        )
    return [f"level_{j}" for j in levels]


class _Reader:
    """Reads each table once per run, however many hierarchies name it."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.read: dict[tuple[TableSpec, str], RowsSpec] = {}

    def __call__(self, spec: HierarchySpec, attribute: str) -> HierarchySpec:
        if not isinstance(spec, TableSpec):
            return spec
        key = (spec, attribute)
        if key not in self.read:
            self.read[key] = read_table(self.session, spec, attribute)
        return self.read[key]


def resolve(session: Session, config: Config) -> Config:
    """``config`` with every table-backed hierarchy (quasi-identifiers and models) read into memory."""
    reader = _Reader(session)
    qis = tuple(QuasiIdentifier(qi.column, reader(qi.hierarchy, qi.column)) for qi in config.quasi_identifiers)
    models = tuple(resolve_model(model, reader) for model in config.models)
    if not reader.read:
        return config
    return replace(config, quasi_identifiers=qis, models=models)


def resolve_model(model: Model, reader: Any) -> Model:
    """A model whose ``hierarchy`` names a table, with the table's rows instead (errors name the model)."""
    spec = getattr(model, "hierarchy", None)
    if not isinstance(spec, TableSpec):
        return model
    try:
        return replace(model, hierarchy=reader(spec, model.attribute))  # type: ignore[type-var]
    except VeilError as exc:
        raise HierarchyError(f"{getattr(model, 'where', model.type)}: parameter 'hierarchy': {exc}") from None


def build_all(
    session: Session,
    quasi_identifiers: Sequence[QuasiIdentifier],
    values: Mapping[str, Sequence[Any]],
    kinds: Mapping[str, ValueKind],
) -> tuple[Hierarchy, ...]:
    """Every quasi-identifier's hierarchy built over its distinct source ``values`` (tables read first)."""
    reader = _Reader(session)
    return tuple(
        build(reader(qi.hierarchy, qi.column), qi.column, values[qi.column], kinds[qi.column])
        for qi in quasi_identifiers
    )
