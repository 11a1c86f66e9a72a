"""Every hierarchy a release used, published as a dimension table (docs/publication.md §1).

A release publishes each quasi-identifier's hierarchy, and each sensitive hierarchy a model read for the
hierarchical EMD, with its levels as columns ``level_0 .. level_h``: a quasi-identifier's values exactly as the
release's generalized columns print them (text, ``level_0`` rendered by the database), a sensitive column's
``level_0`` typed like the published column.  So a reader joins ``<name>.age = <name>_dim_age.level_<k>`` at the
version's level ``k`` (or ``level_0`` of a sensitive column) and gets every level above it.

Content-addressed: the content hash covers the column's role, its type and every leaf with its labels.  A
content already in ``<name>_dim_<c>_rows`` is not copied again; the catalog's ``publication_dimensions`` row
records which content each version used, the views read it through the pointer (they switch with the release,
in its transaction, and with ``veil rollback``), and expiry deletes a content only once no kept version uses it.

Worked example: version 1 with ``age.csv`` (hash ``a1``) and ``zip.csv`` (``z1``) copies both; version 2 with
the same files copies nothing and records ``a1``, ``z1`` again; version 3 with a new ``age.csv`` copies ``a2``.
With ``keep_versions = 1``, version 3's expiry deletes ``a1`` (no kept version uses it) and keeps ``z1``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from veil import catalog
from veil import queries as q
from veil.backends.base import Session
from veil.config import Config
from veil.counts import SensitiveDomain
from veil.errors import ReleaseError
from veil.hierarchy import CsvSpec, Hierarchy, ValueKind, build
from veil.release.publication import drop_quietly
from veil.warehouse import Warehouse

dims = q.dimensions
QUASI, SENSITIVE = "quasi-identifier", "sensitive"


@dataclass(frozen=True)
class Dimension:
    """One hierarchy to publish.  ``source``: the run's temporary dimension table (a quasi-identifier's, whose
    ``level_0`` the database renders as the release does), or ``None``: loaded from ``hierarchy``."""

    attribute: str
    role: str
    hierarchy: Hierarchy
    level0_type: Any
    source: sa.TableClause | None
    digest: str

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


def of_run(wh: Warehouse, config: Config) -> list[Dimension]:
    """The hierarchies the run used: every quasi-identifier's, then the sensitive ones of hierarchical EMD
    models (one per column: the first model's)."""
    out = []
    for i, (qi, h) in enumerate(zip(wh.quasi_identifiers, wh.hierarchies)):
        out.append(Dimension(qi.column, QUASI, h, sa.Text(), wh.layout.dim(i),
                             digest(QUASI, wh.columns[qi.column].sa_type, h)))
    domains = {d.name: d for d in wh.domains}
    for model in config.models:
        spec, attribute = getattr(model, "hierarchy", None), getattr(model, "attribute", None)
        if spec is None or getattr(model, "distance", None) != "hierarchical" or attribute not in domains:
            continue
        if any(d.attribute == attribute for d in out):
            continue
        if isinstance(spec, (str, os.PathLike)):
            spec = CsvSpec(Path(spec), getattr(model, "delimiter", ";"))
        dom = domains[attribute]
        h = build(spec, attribute, dom.values.tolist(), _kind(dom))
        sa_type = wh.columns[attribute].sa_type
        out.append(Dimension(attribute, SENSITIVE, h, sa_type, None, digest(SENSITIVE, sa_type, h)))
    return out


def _kind(domain: SensitiveDomain) -> ValueKind:
    """How the models type a sensitive hierarchy's values (``veil.models.closeness``)."""
    if not domain.numeric:
        return ValueKind.TEXT
    ints = all(isinstance(v, int) and not isinstance(v, bool) for v in domain.values.tolist())
    return ValueKind.INTEGER if ints else ValueKind.FLOAT


def publish(session: Session, tables: catalog.CatalogTables, schema: str, name: str, version: int,
            found: list[Dimension]) -> list[str]:
    """In the release's transaction: create what is missing, copy contents not yet published, create version
    ``version``'s views and record the version's dimensions; returns the views (to grant)."""
    objects = {n: t for n, t in session.rows(q.publication.objects_in(schema), f"listing schema {schema!r}")}
    _unique(name, found, version)
    views, records = [], []
    for d in found:
        names = dims.names(name, d.attribute, version)
        table = _prepare(session, tables, schema, name, d, names, objects)
        # rows(), not scalar(): DuckDB refuses a bulk load while a result is not fetched to its end
        if not session.rows(dims.has_digest(table, d.digest), f"looking up the hierarchy of {d.attribute!r}")[0][0]:
            _copy(session, table, d)
        session.execute(q.CreateView(sa.table(names["version_view"], schema=schema),
                                     dims.version_view(table, d.height, d.digest)),
                        f"creating view {schema}.{names['version_view']}")
        views += [names["view"], names["version_view"]]
        records.append({"name": name, "version": version, "attribute": d.attribute, "role": d.role,
                        "digest": d.digest, "height": d.height, "dim_table": names["rows"]})
    if records:
        session.execute(dims.record(tables.publication_dimensions, records), "recording the dimension tables")
    return views


def _unique(name: str, found: Sequence[Dimension], version: int) -> None:
    """Two columns whose objects would share a name (``a`` and ``a_rows``): refused, never merged."""
    seen: dict[str, str] = {}
    for d in found:
        for obj in dims.names(name, d.attribute, version).values():
            if seen.setdefault(obj, d.attribute) != d.attribute:
                raise ReleaseError(f"the dimension tables of columns {seen[obj]!r} and {d.attribute!r} of release "
                                   f"{name!r} would both be named {obj!r}; rename one of the columns")


def _prepare(session: Session, tables: catalog.CatalogTables, schema: str, name: str, d: Dimension,
             names: dict[str, str], objects: dict[str, str]) -> sa.Table:
    """The rows table and the current view, created when missing; a taller hierarchy than the table's is
    refused (the view is never redefined), a shorter one leaves the levels above its top NULL."""
    if names["rows"] not in objects:
        table = dims.rows_table(schema, names["rows"], d.height, d.level0_type)
        session.execute(sa.schema.CreateTable(table), f"creating {schema}.{names['rows']}")
        session.execute(sa.schema.CreateIndex(dims.digest_index(table)), f"indexing {names['rows']}")
    else:
        have = [c for (c,) in session.rows(q.publication.column_names(schema, names["rows"]), "reading columns")]
        height = len(have) - 2
        if d.height > height:
            raise ReleaseError(
                f"the hierarchy of column {d.attribute!r} now has {d.height} levels above the value, the published "
                f"dimension {schema}.{names['view']} has {height}; Veil never redefines published views on a "
                f"release: publish under a new [release] name, or drop {schema}.{names['rows']} and the views on "
                "it first")
        table = dims.rows_table(schema, names["rows"], height, d.level0_type)
    if names["view"] not in objects:
        select = dims.current_view(table, tables.publication_dimensions, tables.publications, name, d.attribute)
        session.execute(q.CreateView(sa.table(names["view"], schema=schema), select),
                        f"creating view {schema}.{names['view']}")
    return table


def _copy(session: Session, table: sa.Table, d: Dimension) -> None:
    what = f"publishing the hierarchy of {d.attribute!r} into {table.schema}.{table.name}"
    if d.source is not None:
        session.execute(dims.insert_from_dimension(table, d.source, d.height, d.digest), what)
        return
    h = d.hierarchy
    load = dims.rows_table(str(table.schema), table.name, h.height, d.level0_type)  # levels above h stay NULL
    session.bulk_load(load, [(d.digest, leaf, *(col[k] for col in h.labels)) for k, leaf in enumerate(h.leaves)],
                      what)


def expire(session: Session, tables: catalog.CatalogTables, schema: str, name: str) -> None:
    """After the release's expiry, in its transaction: delete the contents no kept version uses."""
    t = tables.publication_dimensions
    used = session.rows(dims.tables_of(t, name), "listing the dimension tables")
    for attribute, table_name in used:
        table = sa.table(table_name, sa.column(dims.DIGEST), schema=schema)
        session.execute(dims.delete_unused(table, t, tables.releases, name, attribute),
                        f"deleting unused hierarchies from {schema}.{table_name}")


def cleanup(session: Session, tables: catalog.CatalogTables, schema: str, name: str) -> list[str]:
    """After the commit: drop expired versions' dimension views (before the version views, whose names theirs
    contain); returns what stays, with the reason."""
    r, t = tables.releases, tables.publication_dimensions
    expired = [v for (v,) in session.rows(dims.expired_versions(r, name), "listing expired versions")]
    listed = session.rows(dims.of_release(t, name, expired), "listing expired dimensions") if expired else []
    session.commit()
    if not listed:
        return []
    found = {n: ty for n, ty in session.rows(q.publication.objects_in(schema), f"listing schema {schema!r}")}
    session.commit()
    views = sorted({dims.names(name, a, v)["version_view"] for v, a, *_ in listed}, key=lambda s: (-len(s), s))
    return [left for view in views if (left := drop_quietly(session, schema, view, found))]
