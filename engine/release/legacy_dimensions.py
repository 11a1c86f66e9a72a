"""Dimension contents published before Veil recorded the level each version shows (catalog revision 0006),
redacted in place by the next release (docs/publication.md §1).

Such a content holds every leaf of the hierarchy with all its labels — for a hierarchy built from the data,
exactly the source's values under each label.  In the release's transaction, each legacy content of a kept
version keeps only the chains whose label at some sharing version's own level was published by that version,
shows the levels from the coarsest of those levels up (the levels below NULL), and stays under its content
hash, so the version views that name it (``<name>_v<N>_dim_<c>``) are not redefined.  A version's level is its
node's, read from the catalog's ``node`` and the config it was released with; when the config cannot be read,
the lowest level that holds every label it published (still only labels it published, and what lies above
them).

Worked example: versions 1 (node [1, …]) and 2 (node [2, …]) share a legacy zip content: rows
``('13053', '1305*', '130**', …)`` and ``('14850', '1485*', '148**', …)``, version 1 published ``1305*`` only,
version 2 ``130**`` only.  Afterwards the content is one row ``(NULL, NULL, '130**', …)``: the coarsest level 2,
the chain of ``1305*``; ``14850`` and ``148**`` are gone.
"""

from __future__ import annotations

import json
import tomllib
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from veil import catalog
from veil import queries as q
from veil.backends.base import Session

dims = q.dimensions
QUASI = "quasi-identifier"


def redact(
    session: Session,
    tables: catalog.CatalogTables,
    schema: str,
    name: str,
    block_rows: sa.Table,
    objects: Mapping[str, str],
) -> None:
    """Redact every legacy content of release ``name``'s kept versions (nothing to do once all are recorded)."""
    found = session.rows(
        dims.legacy(tables.publication_dimensions, tables.releases, name),
        "listing dimensions published before levels were recorded",
    )
    groups: dict[tuple[str, str], list[tuple[Any, ...]]] = defaultdict(list)
    for attribute, digest, role, version, node, dim_table, config in found:
        groups[(attribute, digest)].append((role, int(version), node, dim_table, config))
    for (attribute, digest), members in groups.items():
        versions = [m[1] for m in members]
        level, table_name = 0, members[0][3]
        if table_name in objects:
            level = _redact_one(session, schema, table_name, attribute, digest, members, block_rows)
        session.execute(
            dims.mark_level(tables.publication_dimensions, name, attribute, versions, level),
            f"recording the redacted hierarchy of {attribute!r}",
        )


def _redact_one(
    session: Session,
    schema: str,
    table_name: str,
    attribute: str,
    digest: str,
    members: Sequence[tuple[Any, ...]],
    block_rows: sa.Table,
) -> int:
    """Rewrite one legacy content under its hash; returns the level it now shows from."""
    what = f"redacting the hierarchy of {attribute!r} in {schema}.{table_name}"
    have = [c for (c,) in session.rows(q.publication.column_names(schema, table_name), what)]
    height = len(have) - 2
    table = dims.rows_table(schema, table_name, height, sa.Text())
    shown: list[tuple[int, list[Any]]] = []
    for role, version, node, _t, config in members:
        labels = [v for (v,) in session.rows(dims.published_labels(block_rows, attribute, [version]), what)]
        if not labels:
            continue
        own = 0 if role != QUASI else _level(node, config, attribute)
        shown.append((own if own is not None else _lowest(session, table, digest, height, labels, what), labels))
    session.execute(dims.delete_content(table, digest + "~"), what)
    level = max((lv for lv, _l in shown), default=height)
    if shown:
        session.execute(dims.redacted_copy(table, digest, level, height, shown, digest + "~"), what)
    session.execute(dims.delete_content(table, digest), what)
    session.execute(dims.retag(table, digest + "~", digest), what)
    return level


def _level(node: Any, config: Any, attribute: str) -> int | None:
    """The version's level of ``attribute``: its node's entry at the column's place in its config.

    >>> _level("[1, 2]", '[[quasi_identifiers]]\\ncolumn = "zip"\\n[[quasi_identifiers]]\\ncolumn = "age"', "age")
    2
    >>> _level("[1, 2]", "not toml [", "age") is None
    True
    """
    try:
        columns = [str(t["column"]) for t in tomllib.loads(str(config))["quasi_identifiers"]]
        levels = json.loads(str(node))
        return int(levels[columns.index(attribute)])
    except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError, IndexError, json.JSONDecodeError):
        return None


def _lowest(session: Session, table: sa.Table, digest: str, height: int, labels: Sequence[Any], what: str) -> int:
    """The lowest level of content ``digest`` that holds every label in ``labels`` (the top when none does)."""
    wanted = {str(v) for v in labels}
    for level in range(height + 1):
        present = {str(v) for (v,) in session.rows(dims.labels_at(table, digest, level, labels), what)}
        if wanted <= present:
            return level
    return height
