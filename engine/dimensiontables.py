"""The lookup tables a run loads into the warehouse before it codes the source: one dimension table per
quasi-identifier's hierarchy (``veil_dim_<i>``: ``level_0 .. level_h`` and ``code_0 .. code_h``) and one value
table per counted sensitive column (each value and its code), which the base's coding joins (``veil.baseset``).

Builds SQL only through ``veil.queries``; executes only through a backend ``Session``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from veil import queries as q
from veil.backends.base import Session
from veil.errors import HierarchyError
from veil.hierarchy import Hierarchy, label_text
from veil.queries.ddl import create_table


def load_dimension(session: Session, i: int, h: Hierarchy, level0_type: Any) -> None:
    """Create and bulk-load dimension table ``i``: ``level_0..level_h`` and ``code_0..code_h``.  Every value
    must fit ``level_0``'s type (the source column's): PostgreSQL and DuckDB would refuse one beyond its
    range, each in its own words, and round one with more decimals than its scale, maybe onto another."""
    misfit = next((leaf for leaf in h.leaves if not q.fits(level0_type, leaf)), None)
    if misfit is not None:
        raise HierarchyError(
            f"hierarchy for column {h.attribute!r} ({h.source}) lists value {label_text(misfit)}, "
            f"which column {h.attribute!r} ({level0_type}) cannot hold"
        )
    ddl = q.dim_table(i, h.height, level0_type)
    session.execute(create_table(ddl), f"creating the dimension table of {h.attribute!r}")
    codes = [h.codes(j).tolist() for j in range(h.height + 1)]
    rows = [(leaf, *(col[k] for col in h.labels), *(c[k] for c in codes)) for k, leaf in enumerate(h.leaves)]
    session.bulk_load(ddl, rows, f"loading the hierarchy of {h.attribute!r}")


def load_values(session: Session, j: int, name: str, sa_type: Any, values: Sequence[Any]) -> None:
    """Create and bulk-load sensitive column ``j``'s value table: each of its ``values`` (in domain order) and
    its code."""
    ddl = q.sensitive_domain_table(j, sa_type)
    session.execute(create_table(ddl), f"creating the value table of {name!r}")
    session.bulk_load(ddl, [(v, c) for c, v in enumerate(values)], f"loading the values of {name!r}")
