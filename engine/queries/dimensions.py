"""The published dimension tables' statements (docs/publication.md §1): every hierarchy a release used, so that
readers can join the release's generalized values to every level.

Per release ``name`` and column ``c``, following the publication's scheme (one rows table, views that read the
pointer and are never redefined): the table ``<name>_dim_<c>_rows`` holds every kept hierarchy *content*
once, tagged ``veil_dim`` with its content hash (an unchanged hierarchy is never copied again); the view
``<name>_dim_<c>`` shows the content the current version used (through the catalog's
``publication_dimensions`` row of the version the pointer names: it switches with the release's views, in the
same transaction, and with ``veil rollback``); ``<name>_v<N>_dim_<c>`` pins version N's.

>>> t = rows_table("published", "census_dim_age_rows", 2, sa.Text())
>>> print(version_view(t, 2, "3f2a").compile(compile_kwargs={"literal_binds": True}))
SELECT published.census_dim_age_rows.level_0, published.census_dim_age_rows.level_1, published.census_dim_age_rows.level_2 
FROM published.census_dim_age_rows 
WHERE published.census_dim_age_rows.veil_dim = '3f2a'
>>> fit("x" * 70) == "x" * 54 + "_" + hashlib.sha256(b"x" * 70).hexdigest()[:8]
True
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from veil.queries.publication import MAX_IDENTIFIER, current

DIGEST = "veil_dim"


def fit(identifier: str) -> str:
    """``identifier`` when it fits PostgreSQL's 63 bytes; else its first bytes (whole UTF-8 characters) and
    ``_`` + 8 hex digits of its SHA-256: two long names never collide silently, as truncation would make them."""
    raw = identifier.encode()
    if len(raw) <= MAX_IDENTIFIER:
        return identifier
    head = raw[:MAX_IDENTIFIER - 9].decode(errors="ignore")
    return f"{head}_{hashlib.sha256(raw).hexdigest()[:8]}"


def names(name: str, column: str, version: int | None = None) -> dict[str, str]:
    """The objects of the dimension of ``column`` in release ``name`` (and of one version), each fitted."""
    out = {"view": fit(f"{name}_dim_{column}"), "rows": fit(f"{name}_dim_{column}_rows")}
    if version is not None:
        out["version_view"] = fit(f"{name}_v{version}_dim_{column}")
    return out


def rows_table(schema: str, table: str, height: int, level0_type: Any) -> sa.Table:
    """``<name>_dim_<c>_rows``: ``veil_dim`` (content hash), ``level_0`` typed like the published column,
    ``level_1 .. level_h`` text."""
    md = sa.MetaData()
    return sa.Table(table, md, sa.Column(DIGEST, sa.Text, nullable=False), sa.Column("level_0", level0_type),
                    *(sa.Column(f"level_{j}", sa.Text) for j in range(1, height + 1)), schema=schema)


def digest_index(table: sa.Table) -> sa.Index:
    return sa.Index(fit(f"{table.name}_digest"), table.c[DIGEST])


def levels(table: sa.Table) -> list[Any]:
    return [c for c in table.c if c.name != DIGEST]


def used_digest(dims: sa.Table, publications: sa.Table, name: str, column: str) -> Any:
    """The content hash of ``column``'s hierarchy in the current version, read when the statement runs."""
    d = dims
    return (sa.select(d.c.digest).where(d.c.name == name, d.c.attribute == column,
                                        d.c.version == current(publications, name)).scalar_subquery())


def current_view(table: sa.Table, dims: sa.Table, publications: sa.Table, name: str, column: str) -> sa.Select[Any]:
    """``<name>_dim_<c>``: the levels of the hierarchy the current version used."""
    return sa.select(*levels(table)).where(table.c[DIGEST] == used_digest(dims, publications, name, column))


def version_view(table: sa.Table, height: int, digest: str) -> sa.Select[Any]:
    """``<name>_v<N>_dim_<c>``: the levels of the hierarchy version N used."""
    return sa.select(*levels(table)[:height + 1]).where(table.c[DIGEST] == sa.literal(digest))


def has_digest(table: sa.Table, digest: str) -> sa.Select[Any]:
    return sa.select(sa.func.count()).select_from(table).where(table.c[DIGEST] == sa.literal(digest))


def insert_from_dimension(table: sa.Table, dimension: sa.TableClause, height: int, digest: str) -> sa.Insert:
    """Copy a run's temporary dimension table (``veil_dim_<i>``) into the rows table, ``level_0`` rendered as
    text by the database exactly as the release's generalized columns render it (``CAST(level_0 AS TEXT)``)."""
    d = dimension
    select = sa.select(sa.literal(digest, sa.Text), sa.cast(d.c.level_0, sa.Text),
                       *(d.c[f"level_{j}"] for j in range(1, height + 1)))
    return table.insert().from_select([DIGEST, *(f"level_{j}" for j in range(height + 1))], select)


def delete_unused(table: sa.Table, dims: sa.Table, releases: sa.Table, name: str, column: str) -> sa.Delete:
    """Delete the contents no kept (``published``) version of ``name`` uses for ``column`` (after expiry)."""
    d, r = dims, releases
    kept = (sa.select(d.c.digest).select_from(d.join(r, sa.and_(r.c.name == d.c.name, r.c.version == d.c.version)))
            .where(d.c.name == name, d.c.attribute == column, r.c.status == "published"))
    return sa.delete(table).where(table.c[DIGEST].not_in(kept))


def record(dims: sa.Table, rows: Sequence[dict[str, Any]]) -> sa.Insert:
    """The catalog rows of one version's dimensions (``publication_dimensions``)."""
    return dims.insert().values(list(rows))


def of_release(dims: sa.Table, name: str, versions: Sequence[int] | None = None) -> sa.Select[Any]:
    """Version, column, content hash, height and rows table of the dimensions of release ``name``."""
    d = dims
    where = [d.c.name == name] + ([d.c.version.in_(list(versions))] if versions is not None else [])
    return (sa.select(d.c.version, d.c.attribute, d.c.digest, d.c.height, d.c.dim_table)
            .where(*where).order_by(d.c.version, d.c.attribute))


def tables_of(dims: sa.Table, name: str) -> sa.Select[Any]:
    """Each column of release ``name`` that has a dimension, with its rows table."""
    return sa.select(dims.c.attribute, dims.c.dim_table).where(dims.c.name == name).distinct()


def expired_versions(releases: sa.Table, name: str) -> sa.Select[Any]:
    r = releases
    return sa.select(r.c.version).where(r.c.name == name, r.c.status == "expired")
