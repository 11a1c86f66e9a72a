"""Every hierarchy a release used, published as a dimension table (docs/publication.md §1) — as far as the
version may show it.

A release publishes each quasi-identifier's hierarchy, and each sensitive hierarchy a model read for the
hierarchical EMD, with its levels as columns ``level_0 .. level_h``: a quasi-identifier's values exactly as the
release's generalized columns print them (text, ``level_0`` rendered by the database), a sensitive column's
``level_0`` typed like the published column.  A version at level ``k`` of a quasi-identifier shows only the
levels ``k .. h`` of the labels its published rows hold — the levels below are NULL, and a label of a
suppressed block, of rows held back or of values absent from the source is not there — so no published
object narrows a row below its released label, nor tells which source values occur (a hierarchy built from
the data, ``mask`` / ``intervals`` / ``dates``, lists exactly the source's values under each label).  A
sensitive hierarchy lists the values the version published.  A reader joins ``<name>.age =
<name>_dim_age.level_<k>`` and gets every level above it.

Content-addressed: the content hash covers the column's role, its type, the whole hierarchy, the level shown
and the labels shown.  A content already in ``<name>_dim_<c>_rows`` is not copied again; the catalog's
``publication_dimensions`` row records which content (and level) each version used, the views read it through
the pointer (they switch with the release, in its transaction, and with ``veil rollback``), and expiry deletes
a content only once no kept version uses it.  Contents published before the level was recorded are redacted by
the next release (``veil.release.legacy_dimensions``).

Worked example: the inpatient release at node [1, 2, 1] publishes zip at level 1 with labels ``1305*``,
``1306*``, ``1485*``: ``inpatient_dim_zip`` holds three rows ``(NULL, '1305*', '130**', …, '*')`` … — never
``13053``.  Version 2 with the same labels at the same node copies nothing and records the same content;
version 3 at level 2 copies a new one (``130**``, ``148**``).  With ``keep_versions = 1``, version 3's expiry
deletes the first content (no kept version uses it).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from veil import catalog
from veil import queries as q
from veil.backends.base import Session
from veil.config import Config
from veil.counts import SensitiveDomain
from veil.errors import ReleaseError
from veil.hierarchy import CsvSpec, Hierarchy, ValueKind, build
from veil.queries import catalog as qc
from veil.queries.ddl import create_index, create_table, create_view
from veil.release import legacy_dimensions
from veil.release.publication import drop_quietly

if TYPE_CHECKING:  # a rollback publishes nothing and loads no warehouse (``veil.release.transactional``)
    from veil.warehouse import Warehouse

dims = q.dimensions
QUASI, SENSITIVE = "quasi-identifier", "sensitive"


@dataclass(frozen=True)
class Dimension:
    """One hierarchy to publish.  ``source``: the run's temporary dimension table (a quasi-identifier's, whose
    ``level_0`` the database renders as the release does), or ``None``: loaded from ``hierarchy``, whose values
    are of ``kind``.  ``digest``: the whole hierarchy's (``digest``); ``level``: the level the version publishes
    (a sensitive column: 0)."""

    attribute: str
    role: str
    hierarchy: Hierarchy
    level0_type: Any
    source: sa.TableClause | None
    digest: str
    level: int = 0
    kind: ValueKind = ValueKind.TEXT

    @property
    def height(self) -> int:
        return self.hierarchy.height


def digest(role: str, level0_type: Any, h: Hierarchy) -> str:
    """The content hash: role, the type the values had, and every leaf with its labels (16 hex digits).

    >>> a = Hierarchy("age", (20, 25), (("20-29", "20-29"), ("*", "*")))
    >>> digest(QUASI, sa.Integer(), a) == digest(QUASI, sa.Integer(), Hierarchy("age", (20, 25), a.labels))
    True
    >>> digest(QUASI, sa.Integer(), a) == digest(QUASI, sa.Integer(), Hierarchy("age", (20, 26), a.labels))
    False
    """
    sha = hashlib.sha256(json.dumps([role, repr(level0_type), h.height, len(h.leaves)]).encode())
    for column in (h.leaves, *h.labels):  # column by column: each leaf's chain is at one position in all
        sha.update(json.dumps([str(x) for x in column], separators=(",", ":")).encode())
    return sha.hexdigest()[:16]


def shown_digest(d: Dimension, labels: Sequence[Any]) -> str:
    """The hash of what a version shows of ``d``: the whole hierarchy's ``digest``, the level and the labels.

    >>> a = Dimension("age", QUASI, Hierarchy("age", (20, 25), (("20-29", "20-29"), ("*", "*"))), sa.Text(), None,
    ...               "d1", level=1)
    >>> shown_digest(a, ["20-29"]) == shown_digest(a, ["20-29"]), shown_digest(a, ["20-29"]) == shown_digest(a, [])
    (True, False)
    """
    shown = sorted(str(x) for x in labels)
    return hashlib.sha256(json.dumps([d.digest, d.level, shown], separators=(",", ":")).encode()).hexdigest()[:16]


def of_run(wh: Warehouse, config: Config, node: Sequence[int]) -> list[Dimension]:
    """The hierarchies the run used, each at the level the version at ``node`` publishes: every
    quasi-identifier's, then the sensitive ones of hierarchical EMD models (one per column: the first
    model's)."""
    out = []
    for i, (qi, h) in enumerate(zip(wh.quasi_identifiers, wh.hierarchies)):
        out.append(
            Dimension(
                qi.column,
                QUASI,
                h,
                sa.Text(),
                wh.layout.dim(i),
                digest(QUASI, wh.columns[qi.column].sa_type, h),
                int(node[i]),
            )
        )
    domains = {d.name: d for d in wh.domains}
    for model in config.models:
        spec, attribute = getattr(model, "hierarchy", None), getattr(model, "attribute", None)
        if (
            spec is None
            or getattr(model, "distance", None) != "hierarchical"
            or attribute is None
            or attribute not in domains
        ):
            continue
        if any(d.attribute == attribute for d in out):
            continue
        if isinstance(spec, (str, os.PathLike)):
            spec = CsvSpec(Path(spec), getattr(model, "delimiter", ";"))
        dom = domains[attribute]
        kind = _kind(dom)
        h = build(spec, attribute, dom.values.tolist(), kind)
        sa_type = wh.columns[attribute].sa_type
        out.append(Dimension(attribute, SENSITIVE, h, sa_type, None, digest(SENSITIVE, sa_type, h), 0, kind))
    return out


def _kind(domain: SensitiveDomain) -> ValueKind:
    """How the models type a sensitive hierarchy's values (``veil.models.closeness``)."""
    if not domain.numeric:
        return ValueKind.TEXT
    ints = all(isinstance(v, int) and not isinstance(v, bool) for v in domain.values.tolist())
    return ValueKind.INTEGER if ints else ValueKind.FLOAT


def publish(
    session: Session,
    tables: catalog.CatalogTables,
    schema: str,
    name: str,
    version: int,
    found: list[Dimension],
    block_rows: sa.Table,
) -> list[str]:
    """In the release's transaction, once version ``version``'s blocks are in ``block_rows``: redact contents
    published before levels were recorded, create what is missing, copy what the version shows of each
    hierarchy unless that content is there, create the version's views and record its dimensions; returns the
    views (to grant)."""
    objects = {n: t for n, t in session.rows(q.publication.objects_in(schema), f"listing schema {schema!r}")}
    legacy_dimensions.redact(session, tables, schema, name, block_rows, objects)
    _unique(name, found, version)
    views, records = [], []
    for d in found:
        names = dims.names(name, d.attribute, version)
        table = _prepare(session, tables, schema, name, d, names, objects)
        labels = [
            v
            for (v,) in session.rows(
                dims.published_labels(block_rows, d.attribute, [version]),
                f"listing the published values of {d.attribute!r}",
            )
        ]
        shown = shown_digest(d, labels)
        # rows(), not scalar(): DuckDB refuses a bulk load while a result is not fetched to its end
        if not session.rows(dims.has_digest(table, shown), f"looking up the hierarchy of {d.attribute!r}")[0][0]:
            _copy(session, table, d, shown, labels, dims.published_labels(block_rows, d.attribute, [version]))
        session.execute(
            create_view(schema, names["version_view"], dims.version_view(table, d.height, shown)),
            f"creating view {schema}.{names['version_view']}",
        )
        views += [names["view"], names["version_view"]]
        records.append(
            {
                "name": name,
                "version": version,
                "attribute": d.attribute,
                "role": d.role,
                "digest": shown,
                "height": d.height,
                "dim_table": names["rows"],
                "level": d.level,
            }
        )
    if records:
        session.execute(dims.record(tables.publication_dimensions, records), "recording the dimension tables")
    return views


def _unique(name: str, found: Sequence[Dimension], version: int) -> None:
    """Two columns whose objects would share a name (``a`` and ``a_rows``): refused, never merged."""
    seen: dict[str, str] = {}
    for d in found:
        for obj in dims.names(name, d.attribute, version).values():
            if seen.setdefault(obj, d.attribute) != d.attribute:
                raise ReleaseError(
                    f"the dimension tables of columns {seen[obj]!r} and {d.attribute!r} of release "
                    f"{name!r} would both be named {obj!r}; rename one of the columns"
                )


def _prepare(
    session: Session,
    tables: catalog.CatalogTables,
    schema: str,
    name: str,
    d: Dimension,
    names: dict[str, str],
    objects: dict[str, str],
) -> sa.Table:
    """The rows table and the current view, created when missing; a taller hierarchy than the table's is
    refused (the view is never redefined), a shorter one leaves the levels above its top NULL."""
    if names["rows"] not in objects:
        table = dims.rows_table(schema, names["rows"], d.height, d.level0_type)
        session.execute(create_table(table), f"creating {schema}.{names['rows']}")
        session.execute(create_index(dims.digest_index(table)), f"indexing {names['rows']}")
    else:
        have = [c for (c,) in session.rows(q.publication.column_names(schema, names["rows"]), "reading columns")]
        height = len(have) - 2
        if d.height > height:
            raise ReleaseError(
                f"the hierarchy of column {d.attribute!r} now has {d.height} levels above the value, the published "
                f"dimension {schema}.{names['view']} has {height}; Veil never redefines published views on a "
                f"release: publish under a new [release] name, or drop {schema}.{names['rows']} and the views on "
                "it first"
            )
        table = dims.rows_table(schema, names["rows"], height, d.level0_type)
    if names["view"] not in objects:
        select = dims.current_view(table, tables.publication_dimensions, tables.publications, name, d.attribute)
        session.execute(create_view(schema, names["view"], select), f"creating view {schema}.{names['view']}")
    return table


def _copy(
    session: Session, table: sa.Table, d: Dimension, shown: str, labels: Sequence[Any], published: sa.Select[Any]
) -> None:
    """Copy what the version shows of ``d`` under the content hash ``shown``: a quasi-identifier's chains above
    its published labels (``published``), by the database from the run's dimension table; a sensitive
    hierarchy's leaves among the published values (``labels``), loaded."""
    what = f"publishing the hierarchy of {d.attribute!r} into {table.schema}.{table.name}"
    if d.source is not None:
        session.execute(dims.insert_released(table, d.source, d.height, d.level, shown, published), what)
        return
    h = d.hierarchy
    seen = {_normal(d.kind, v) for v in labels}
    load = dims.rows_table(str(table.schema), table.name, h.height, d.level0_type)  # levels above h stay NULL
    session.bulk_load(
        load,
        [
            (shown, leaf, *(col[k] for col in h.labels))
            for k, leaf in enumerate(h.leaves)
            if _normal(d.kind, leaf) in seen
        ],
        what,
    )


def _normal(kind: ValueKind, value: Any) -> Any:
    """A sensitive value as the hierarchy's kind types it, so that a driver's value meets the file's."""
    try:
        return kind.coerce(value)
    except ValueError:
        return value


def expire(session: Session, tables: catalog.CatalogTables, schema: str, name: str) -> None:
    """After the release's expiry, in its transaction: delete the contents no kept version uses."""
    t = tables.publication_dimensions
    used = session.rows(dims.tables_of(t, name), "listing the dimension tables")
    for attribute, table_name in used:
        session.execute(
            dims.delete_unused(dims.content_table(schema, table_name), t, tables.releases, name, attribute),
            f"deleting unused hierarchies from {schema}.{table_name}",
        )


def cleanup(session: Session, tables: catalog.CatalogTables, schema: str, name: str) -> list[str]:
    """After the commit: drop expired versions' dimension views (before the version views, whose names theirs
    contain); returns what stays, with the reason."""
    r, t = tables.releases, tables.publication_dimensions
    expired = [v for (v,) in session.rows(qc.expired_versions(r, name), "listing expired versions")]
    listed = session.rows(dims.of_release(t, name, expired), "listing expired dimensions") if expired else []
    session.commit()
    if not listed:
        return []
    found = {n: ty for n, ty in session.rows(q.publication.objects_in(schema), f"listing schema {schema!r}")}
    session.commit()
    views = sorted({dims.names(name, a, v)["version_view"] for v, a, *_ in listed}, key=lambda s: (-len(s), s))
    return [left for view in views if (left := drop_quietly(session, schema, view, found))]
