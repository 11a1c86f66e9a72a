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

from veil.queries.catalog import Status
from veil.queries.publication import MAX_IDENTIFIER, VERSION, current
from veil.queries.release import label_of

DIGEST = "veil_dim"


def fit(identifier: str) -> str:
    """``identifier`` when it fits PostgreSQL's 63 bytes; else its first bytes (whole UTF-8 characters) and
    ``_`` + 8 hex digits of its SHA-256: two long names never collide silently, as truncation would make them."""
    raw = identifier.encode()
    if len(raw) <= MAX_IDENTIFIER:
        return identifier
    head = raw[: MAX_IDENTIFIER - 9].decode(errors="ignore")
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
    return sa.Table(
        table,
        md,
        sa.Column(DIGEST, sa.Text, nullable=False),
        sa.Column("level_0", level0_type),
        *(sa.Column(f"level_{j}", sa.Text) for j in range(1, height + 1)),
        schema=schema,
    )


def digest_index(table: sa.Table) -> sa.Index:
    return sa.Index(fit(f"{table.name}_digest"), table.c[DIGEST])


def levels(table: sa.Table) -> list[Any]:
    return [c for c in table.c if c.name != DIGEST]


def used_digest(dims: sa.Table, publications: sa.Table, name: str, column: str) -> Any:
    """The content hash of ``column``'s hierarchy in the current version, read when the statement runs."""
    d = dims
    return (
        sa.select(d.c.digest)
        .where(d.c.name == name, d.c.attribute == column, d.c.version == current(publications, name))
        .scalar_subquery()
    )


def current_view(table: sa.Table, dims: sa.Table, publications: sa.Table, name: str, column: str) -> sa.Select[Any]:
    """``<name>_dim_<c>``: the levels of the hierarchy the current version used."""
    return sa.select(*levels(table)).where(table.c[DIGEST] == used_digest(dims, publications, name, column))


def version_view(table: sa.Table, height: int, digest: str) -> sa.Select[Any]:
    """``<name>_v<N>_dim_<c>``: the levels of the hierarchy version N used."""
    return sa.select(*levels(table)[: height + 1]).where(table.c[DIGEST] == sa.literal(digest))


def has_digest(table: sa.Table, digest: str) -> sa.Select[Any]:
    return sa.select(sa.func.count()).select_from(table).where(table.c[DIGEST] == sa.literal(digest))


def published_labels(block_rows: sa.Table, column: str, versions: Sequence[int]) -> sa.Select[Any]:
    """The distinct values ``column`` shows in the published rows of ``versions`` (read from the blocks table,
    which the database counted from those rows): the only labels a dimension may describe."""
    c = block_rows.c[column]
    return sa.select(c).where(block_rows.c[VERSION].in_(list(versions)), c.is_not(None)).distinct()


def insert_released(
    table: sa.Table, dimension: sa.TableClause, height: int, level: int, digest: str, labels: sa.Select[Any]
) -> sa.Insert:
    """Copy from a run's temporary dimension table (``veil_dim_<i>``) what a version at ``level`` may show: the
    levels ``level .. height`` of the labels in ``labels`` (the version's published values of the column), each
    chain once; the levels below stay NULL.  The label is rendered as the release renders it (``label_of``).

    >>> t = rows_table("p", "r_dim_zip_rows", 2, sa.Text())
    >>> d = sa.table("veil_dim_0", *(sa.column(c) for c in ("level_0", "level_1", "level_2")))
    >>> b = sa.table("r_block_rows", sa.column("veil_version"), sa.column("zip"))
    >>> s = str(insert_released(t, d, 2, 1, "ab", published_labels(b, "zip", [3])))
    >>> "veil_dim_0.level_0" in s, "DISTINCT" in s
    (False, True)
    """
    d = dimension
    shown = label_of(d, level)
    below = [sa.cast(sa.null(), table.c[f"level_{j}"].type) for j in range(level)]
    above = [d.c[f"level_{j}"] for j in range(level + 1, height + 1)]
    select = sa.select(sa.literal(digest, sa.Text), *below, shown, *above).distinct().where(shown.in_(labels))
    return table.insert().from_select([DIGEST, *(f"level_{j}" for j in range(height + 1))], select)


def legacy(dims: sa.Table, releases: sa.Table, name: str) -> sa.Select[Any]:
    """The dimensions of ``name``'s kept versions recorded before Veil recorded their level (catalog revision
    0006): contents that may list every source value under each label, redacted by the next release."""
    d, r = dims, releases
    return (
        sa.select(d.c.attribute, d.c.digest, d.c.role, d.c.version, r.c.node, d.c.dim_table, r.c.config)
        .select_from(d.join(r, sa.and_(r.c.name == d.c.name, r.c.version == d.c.version)))
        .where(d.c.name == name, d.c.level.is_(None), r.c.status == Status.PUBLISHED.value)
        .order_by(d.c.attribute, d.c.digest, d.c.version)
    )


def redacted_copy(
    table: sa.Table, digest: str, level: int, height: int, shown: Sequence[tuple[int, Any]], into: str
) -> sa.Insert:
    """A legacy content ``digest`` as it may be shown at ``level``: the chains whose label at some version's own
    level (``shown``: (level, that version's published labels)) was published, levels below ``level`` NULL,
    each chain once, tagged ``into``."""
    below = [sa.cast(sa.null(), table.c[f"level_{j}"].type) for j in range(level)]
    above = [table.c[f"level_{j}"] for j in range(level, height + 1)]
    seen = sa.or_(*(table.c[f"level_{lv}"].in_(labels) for lv, labels in shown))
    select = sa.select(sa.literal(into, sa.Text), *below, *above).distinct().where(table.c[DIGEST] == digest, seen)
    return table.insert().from_select([DIGEST, *(f"level_{j}" for j in range(height + 1))], select)


def labels_at(table: sa.Table, digest: str, level: int, labels: Sequence[Any]) -> sa.Select[Any]:
    """Which of ``labels`` content ``digest`` holds at ``level``."""
    column = table.c[f"level_{level}"]
    return sa.select(column).where(table.c[DIGEST] == digest, column.in_(list(labels))).distinct()


def delete_content(table: sa.Table, digest: str) -> sa.Delete:
    return sa.delete(table).where(table.c[DIGEST] == digest)


def retag(table: sa.Table, old: str, new: str) -> sa.Update:
    return sa.update(table).where(table.c[DIGEST] == old).values({DIGEST: new})


def mark_level(dims: sa.Table, name: str, attribute: str, versions: Sequence[int], level: int) -> sa.Update:
    d = dims
    return (
        sa.update(d)
        .where(d.c.name == name, d.c.attribute == attribute, d.c.version.in_(list(versions)))
        .values(level=level)
    )


def content_table(schema: str, table_name: str) -> sa.TableClause:
    """A dimension's rows table known by name, with the column that tags each content (``DIGEST``)."""
    return sa.table(table_name, sa.column(DIGEST), schema=schema)


def delete_unused(
    table: sa.Table | sa.TableClause, dims: sa.Table, releases: sa.Table, name: str, column: str
) -> sa.Delete:
    """Delete the contents no kept (``published``) version of ``name`` uses for ``column`` (after expiry)."""
    d, r = dims, releases
    kept = (
        sa.select(d.c.digest)
        .select_from(d.join(r, sa.and_(r.c.name == d.c.name, r.c.version == d.c.version)))
        .where(d.c.name == name, d.c.attribute == column, r.c.status == Status.PUBLISHED.value)
    )
    return sa.delete(table).where(table.c[DIGEST].not_in(kept))


def record(dims: sa.Table, rows: Sequence[dict[str, Any]]) -> sa.Insert:
    """The catalog rows of one version's dimensions (``publication_dimensions``)."""
    return dims.insert().values(list(rows))


def of_release(dims: sa.Table, name: str, versions: Sequence[int] | None = None) -> sa.Select[Any]:
    """Version, column, content hash, height and rows table of the dimensions of release ``name``."""
    d = dims
    where = [d.c.name == name] + ([d.c.version.in_(list(versions))] if versions is not None else [])
    return (
        sa.select(d.c.version, d.c.attribute, d.c.digest, d.c.height, d.c.dim_table)
        .where(*where)
        .order_by(d.c.version, d.c.attribute)
    )


def tables_of(dims: sa.Table, name: str) -> sa.Select[Any]:
    """Each column of release ``name`` that has a dimension, with its rows table."""
    return sa.select(dims.c.attribute, dims.c.dim_table).where(dims.c.name == name).distinct()
