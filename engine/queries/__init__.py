"""The only package that builds SQL: SQLAlchemy Core statements, identifiers quoted, values bound.

It builds, never executes (``backends`` execute), so every statement can be compiled per dialect and
snapshot-tested.  Working tables (``veil_*``) are temporary: they live in the session's temp schema and
vanish with the connection (on DuckDB the big ones may live in the session's scratch database instead,
``veil.backends.scratch``).  One module per concern: ``ddl`` (constructs Core lacks), ``source`` (the source
table), ``nodes`` (the per-node counting statements), ``release`` (candidate cells, materialization, recount,
grants, locks), ``publication`` (rows tables, views, pointer, expiry), ``dimensions`` (the published hierarchies),
``ledger`` (the series ledger) and ``runs`` (a run's catalog row, read back when it stops).
``dimensions``, ``ledger`` and ``runs`` serve the release alone: they load on first use (``q.ledger``), so a
search does not import them (issue 36).
"""

from typing import TYPE_CHECKING, Any

from veil.queries import distances, publication
from veil.queries.ddl import (
    Analyze,
    Attach,
    CreateSchema,
    CreateTableAs,
    CreateView,
    DropObject,
    DropSchema,
    Grant,
    SetOption,
    SetSearchPath,
    Stall,
    backend_sessions,
    copy_from_stdin,
    count_rows,
    create_table_as,
    current_setting,
    drop_table,
    owned_schemas,
    session_settings,
    working_table,
)
from veil.queries.nodes import (
    BASE,
    GROUPED,
    UNDECIDED,
    WEIGHT,
    Grouped,
    Layout,
    base_coded,
    base_leaves,
    leaf_totals,
    dim_table,
    grouped_sizes,
    materialize,
    node_bounds,
    node_counts,
    node_keys,
    node_sizes,
    node_statistics,
    packed,
    row_bytes,
    sensitive_domain_table,
    source_cells,
    source_grouped,
    source_rows,
    source_values,
    up_table,
)
from veil.queries.publication import schema_exists
from veil.queries.release import (
    CELLS,
    SUPPRESSED,
    VALUES,
    WITHHELD,
    advisory_lock,
    advisory_unlock,
    cell_bytes,
    cell_values,
    cells_table,
    coded_cells,
    level0_labels,
    Recount,
    recount,
    recount_numbers,
    recount_statements,
    recount_values,
    release_select,
    privileges_held,
    role_exists,
    suppressed_table,
    try_advisory_lock,
    valued_cells,
    values_table,
    withheld_table,
)
from veil.queries.source import column_type, columns_of, fingerprint, fits, source_table, tables_in

if TYPE_CHECKING:
    from veil.queries import dimensions, ledger, runs


def __getattr__(name: str) -> Any:
    """``dimensions``, ``ledger`` and ``runs`` on first use (importing one sets it on the package: asked once)."""
    if name == "dimensions":
        import veil.queries.dimensions as dimensions_module

        return dimensions_module
    if name == "ledger":
        import veil.queries.ledger as ledger_module

        return ledger_module
    if name == "runs":
        import veil.queries.runs as runs_module

        return runs_module
    raise AttributeError(f"module 'veil.queries' has no attribute {name!r}")


__all__ = [
    "BASE",
    "CELLS",
    "SUPPRESSED",
    "UNDECIDED",
    "VALUES",
    "WITHHELD",
    "Attach",
    "CreateSchema",
    "CreateTableAs",
    "Analyze",
    "CreateView",
    "DropObject",
    "DropSchema",
    "Grant",
    "SetOption",
    "SetSearchPath",
    "Stall",
    "backend_sessions",
    "current_setting",
    "owned_schemas",
    "Layout",
    "advisory_lock",
    "advisory_unlock",
    "base_coded",
    "base_leaves",
    "leaf_totals",
    "cell_bytes",
    "cell_values",
    "cells_table",
    "coded_cells",
    "column_type",
    "columns_of",
    "copy_from_stdin",
    "count_rows",
    "create_table_as",
    "dim_table",
    "dimensions",
    "distances",
    "drop_table",
    "fingerprint",
    "fits",
    "ledger",
    "level0_labels",
    "materialize",
    "node_bounds",
    "node_counts",
    "node_statistics",
    "node_keys",
    "node_sizes",
    "grouped_sizes",
    "Grouped",
    "GROUPED",
    "WEIGHT",
    "source_cells",
    "source_grouped",
    "source_rows",
    "packed",
    "privileges_held",
    "publication",
    "runs",
    "Recount",
    "recount",
    "recount_numbers",
    "recount_statements",
    "recount_values",
    "release_select",
    "row_bytes",
    "role_exists",
    "schema_exists",
    "sensitive_domain_table",
    "session_settings",
    "source_table",
    "source_values",
    "suppressed_table",
    "tables_in",
    "try_advisory_lock",
    "up_table",
    "valued_cells",
    "values_table",
    "withheld_table",
    "working_table",
]
