"""The source table as a run reads it: its columns (``inspect``), its rows grouped once where the backend says
(``group``: PostgreSQL's one parallel statement), and the one scan of every quasi-identifier's and counted
sensitive column's values with their rows, the NULL policy applied (``scan``).  ``veil.sourcecheck`` then judges
what the scan found, at no query; ``veil.baseset`` codes the rows the scans read (``read``).

Builds SQL only through ``veil.queries``; executes only through a backend ``Session``.
"""

from __future__ import annotations

import decimal
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import sqlalchemy as sa

from veil import queries as q
from veil.backends.base import Session
from veil.config import SourceConfig
from veil.counts import SensitiveDomain
from veil.errors import SourceError
from veil.hierarchy import ValueKind, sort_key
from veil.queries.ddl import relation
from veil.sourcecells import SourceCells

MAX_LISTED = 20


@dataclass(frozen=True)
class Column:
    name: str
    sa_type: Any
    kind: ValueKind


@dataclass(frozen=True)
class Scanned:
    """What the scan found: every QI's and counted column's values, each with the rows the NULL policy keeps (a
    value only in rows left out is no value of the table: not in a hierarchy built from the data, not in ``P`` nor
    an ordered domain); the columns holding NULLs with their rows; the rows read and the rows kept."""

    values: dict[str, list[tuple[Any, int]]]
    with_nulls: dict[str, int]
    read: int
    kept: int


class SourceScan:
    """The source table (``source``) of one run: the columns it reads — ``quasi_identifiers`` and ``sensitive``
    (counted), ``null_checked`` (published, NULLs checked), of which ``carried`` are grouped by value where the rows
    are grouped and fetched whole (``cells``: a release's candidate rolled up from them) — and what they are
    (``columns``, once inspected)."""

    def __init__(
        self,
        session: Session,
        source: SourceConfig,
        quasi_identifiers: Sequence[str],
        sensitive: Sequence[str],
        null_checked: Sequence[str],
        carried: Sequence[str] = (),
    ) -> None:
        self.session, self.source = session, source
        self.quasi_identifiers, self.sensitive = list(quasi_identifiers), list(sensitive)
        self.null_checked = list(null_checked)
        self.carried = [c for c in carried if c in self.null_checked]
        self.columns: dict[str, Column] = {}
        self.weight: str | None = None  # the scans read the source grouped, rows in this column (``group``)
        self.counted: int | None = None  # the source's rows, once counted (a release's fingerprint counts them)

    @property
    def name(self) -> str:
        return self.source.qualified

    def inspect(self) -> dict[str, Column]:
        """Columns of the source (``information_schema`` or the backend's catalog); errors name the table or
        column."""
        rows = self.session.source_columns(self.source.schema, self.source.table)
        if not rows:
            where = f" in schema {self.source.schema!r}" if self.source.schema else ""
            raise SourceError(
                f"source table {self.name!r} does not exist{where} "
                f"({self.session.backend.name} at {self.session.backend.display_url})"
            )
        columns: dict[str, Column] = {}
        for name, data_type, precision, scale in rows:
            try:
                sa_type, kind = q.column_type(str(data_type), precision, scale)
            except KeyError:
                sa_type, kind = None, None  # unsupported types are only an error if Veil must read them
            columns[name] = Column(name, sa_type, kind)  # type: ignore[arg-type]
        for name in self.quasi_identifiers + self.sensitive + self.null_checked:
            if name not in columns:
                known = ", ".join(repr(c) for c in list(columns)[:MAX_LISTED])
                raise SourceError(
                    f"column {name!r} does not exist in source table {self.name!r} (its columns: {known})"
                )
            if columns[name].kind is None:
                typ = next(r[1] for r in rows if r[0] == name)
                raise SourceError(
                    f"column {name!r} of source table {self.name!r} has type {typ}, "
                    "which Veil cannot generalize or count"
                )
        self.columns = columns
        return columns

    def table(self, names: Sequence[str] | None = None) -> sa.Table:
        """The source table with ``names`` (default: every column), typed as inspected."""
        names = list(self.columns) if names is None else list(names)
        return q.source_table(self.source.schema, self.source.table, self._types(names))

    def _types(self, names: Sequence[str]) -> dict[str, Any]:
        return {
            n: self.columns[n].sa_type if self.columns[n].sa_type is not None else sa.types.NullType() for n in names
        }

    def group(self) -> None:
        """The source grouped by the columns Veil reads (``source_grouped``: on PostgreSQL the one parallel
        statement over the source; a temporary table, written by the leader from the workers' partial groups),
        which the two scans then read in its stead (``read``), its rows in a column no source column is named."""
        columns = list(dict.fromkeys(self.quasi_identifiers + self.sensitive + self.null_checked))
        weight = q.WEIGHT
        while weight in self.columns:
            weight += "_"
        what = f"grouping source table {self.name!r}"
        grouped = q.source_grouped(self.table(columns), columns, weight)
        self.session.execute(q.working_table(relation(q.GROUPED), grouped), what)
        self.session.analyze(relation(q.GROUPED), what)  # else PostgreSQL joins it to the dimensions by nested loops
        self.weight = weight

    def ungroup(self) -> None:
        """Drop the grouped rows (read by the two scans only): a base coded again (after ``end_counting``) reads
        the source."""
        if self.weight is not None:
            self.session.execute(q.drop_table(q.GROUPED), f"dropping the grouped rows of {self.name!r}")
            self.weight = None

    def read(self, names: Sequence[str]) -> sa.Table:
        """What the scans read: the source, or its grouped rows (``group``)."""
        if self.weight is None:
            return self.table(names)
        return q.source_table(None, q.GROUPED, {**self._types(names), self.weight: sa.BigInteger()})

    def scan(self) -> Scanned:
        """One scan of the source (``source_values``): every QI's and counted column's values with their rows, the
        rows, and the NULLs the policy looks at (``[source] nulls``: an error, or the rows left out)."""
        columns = self.quasi_identifiers + self.sensitive
        table = self.read(columns + self.null_checked)
        rows = self.session.rows(
            q.source_values(table, columns, self.null_checked, weight=self.weight),
            f"scanning source table {self.name!r}",
        )
        m = len(columns)
        values: dict[str, list[tuple[Any, int]]] = {c: [] for c in columns}
        nulls: dict[str, int] = dict.fromkeys(columns, 0)
        total, complete, checked = 0, 0, [0] * len(self.null_checked)
        for row in rows:
            grouped = [k for k in range(m) if not row[m + k]]
            if not grouped:  # the whole table
                total, complete = int(row[2 * m]), int(row[-1] or 0)
                checked = [int(x or 0) for x in row[2 * m + 1 : -1]]
            elif row[grouped[0]] is None:
                nulls[columns[grouped[0]]] = int(row[2 * m])
            elif row[-1]:  # a value with its kept rows: rows the NULL policy leaves out are not in T (SPEC §1)
                values[columns[grouped[0]]].append((row[grouped[0]], int(row[-1])))
        nulls.update(zip(self.null_checked, checked))
        return self._found(values, nulls, total, complete)

    def rows(self) -> int:
        """The source's rows: ``counted``, else counted now (``source_rows``: one light statement)."""
        if self.counted is None:
            table = self.read(self.quasi_identifiers[:1])
            what = f"counting the rows of {self.name!r}"
            self.counted = int(self.session.scalar(q.source_rows(table, self.weight), what))
        return self.counted

    def cells(self) -> SourceCells:
        """The source's rows grouped by the counted and carried columns and the other null-checked ones' NULL
        flags, fetched whole (``source_cells``): what ``scan`` and the base's coding read, in one statement
        (``veil.sourcecells``)."""
        columns = self.quasi_identifiers + self.sensitive + self.carried
        flagged = self._flagged
        table = self.read(columns + flagged)
        data = self.session.factors(
            q.source_cells(table, columns, flagged, self.weight), f"grouping source table {self.name!r}"
        )
        codes, counts = data["n"]
        flags = [np.asarray(data[f"x{j}"][1], dtype=bool)[data[f"x{j}"][0]] for j in range(len(flagged))]
        return SourceCells(  # codes as int32 (at most ``local_cells`` distinct values): half the bytes held
            [np.asarray(data[f"v{k}"][0], dtype=np.int32) for k in range(len(columns))],
            [data[f"v{k}"][1] for k in range(len(columns))],
            np.column_stack(flags) if flags else np.zeros((len(codes), 0), dtype=bool),
            np.asarray(counts, dtype=np.int64)[codes] if len(codes) else np.zeros(0, dtype=np.int64),
            len(self.carried),
        )

    @property
    def _flagged(self) -> list[str]:
        """The null-checked columns ``cells`` groups by whether they are NULL (the carried ones: by value)."""
        return [c for c in self.null_checked if c not in self.carried]

    def found_in(self, cells: SourceCells) -> Scanned:
        """What ``scan`` would find, from the source's ``cells`` (no statement)."""
        columns = self.quasi_identifiers + self.sensitive
        values = {c: cells.kept_values(k) for k, c in enumerate(columns)}
        nulls = {c: cells.nulls(k) for k, c in enumerate(columns + self.carried)}
        nulls.update({c: cells.flagged(j) for j, c in enumerate(self._flagged)})
        return self._found(values, nulls, cells.rows, cells.kept)

    def _found(self, values: dict[str, list[tuple[Any, int]]], nulls: dict[str, int], total: int, kept: int) -> Scanned:
        """What the scan found, the NULL policy applied (``[source] nulls = "error"``: no NULL at all)."""
        with_nulls = {k: v for k, v in nulls.items() if v}
        if with_nulls and self.source.nulls == "error":
            listing = ", ".join(f"{k!r} ({v} rows)" for k, v in with_nulls.items())
            raise SourceError(
                f"source table {self.name!r} has NULLs in column(s) {listing}; "
                'set [source] nulls = "drop" to leave those rows out of the release'
            )
        return Scanned(values, with_nulls, total, kept)

    def domain(self, name: str, values: Sequence[tuple[Any, int]]) -> tuple[SensitiveDomain, list[Any]]:
        """Sensitive column ``name``'s domain from its scanned values, and the values as the driver gave them."""
        kind = self.columns[name].kind
        pairs = sorted(((v, int(n)) for v, n in values), key=lambda p: sort_key(p[0]))
        raw = [v for v, _ in pairs]
        return SensitiveDomain(
            name, _domain_array(raw, kind), np.asarray([n for _, n in pairs], dtype=np.int64), numeric=kind.numeric
        ), raw


def _domain_array(values: list[Any], kind: ValueKind) -> np.ndarray:
    if kind.numeric:
        return np.asarray([float(v) if isinstance(v, decimal.Decimal) else v for v in values])
    return np.asarray(values, dtype=object)
