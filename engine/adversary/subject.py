"""What an audit (or a report) looks at, loaded as a node's counts: a lattice node of the source (through the
warehouse's ``GROUP BY``), a published release (its rows recounted in SQL from the release table named in
the catalog), or a table as it stands (its values taken as already generalized: the auditor's case).

Cells arrive in batches (a server-side cursor on PostgreSQL) and are coded into integer arrays as they come,
so memory follows the number of distinct (key, sensitive) combinations, never the number of rows.
"""

from __future__ import annotations

import decimal
import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from veil import catalog
from veil.adversary.attacks import audit_counts
from veil.adversary.exposure import Audit, Label, shown
from veil.backends import open_backend
from veil.backends.base import Session
from veil.config import Config, require_release
from veil.counts import NodeCounts, SensitiveDomain
from veil.errors import ConfigError
from veil.hierarchy import sort_key
from veil.lattice import parse_node
from veil.queries import audit as qa
from veil.warehouse import Warehouse


@dataclass(frozen=True)
class ReleaseRecord:
    """A published release as the catalog records it."""

    id: str
    name: str
    version: int
    node: tuple[int, ...] | None
    output_table: str
    achieved: dict[str, float | None]
    metrics: dict[str, Any]
    rows_read: int
    rows_published: int
    rows_suppressed: int
    published_at: str
    evaluations: list[tuple[tuple[int, ...], bool, int, float | None]] = field(default_factory=list)
    heights: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Subject:
    counts: NodeCounts
    description: str
    label: Label
    release: ReleaseRecord | None = None


def node_label(counts: NodeCounts) -> Label:
    """Block ``b``'s generalized values as text, read through the hierarchies (no per-block list built)."""
    gens = counts.generalizers

    def label(b: int) -> list[str]:
        out = []
        for j, level in enumerate(counts.node):
            if level is None or gens is None:
                out.append("*" if level is None else str(int(counts.keys[b, j])))
            else:
                out.append(shown(gens[j].domain(level)[int(counts.keys[b, j])]))
        return out

    return label


def node_subject(wh: Warehouse, node: Sequence[int]) -> Subject:
    counts = wh.counts(tuple(node))
    return Subject(counts, f"node {list(node)} of {wh.table_name}", node_label(counts))


def _numeric(values: Sequence[Any]) -> bool:
    return bool(values) and all(
        isinstance(v, (int, float, decimal.Decimal)) and not isinstance(v, bool) for v in values
    )


def _coder() -> tuple[dict[Any, int], Callable[[Sequence[Any]], np.ndarray]]:
    index: dict[Any, int] = {}

    def code(column: Sequence[Any]) -> np.ndarray:
        return np.fromiter((index.setdefault(v, len(index)) for v in column), dtype=np.int64, count=len(column))

    return index, code


def table_subject(
    session: Session,
    schema: str | None,
    table: str,
    qis: Sequence[str],
    sensitive: Sequence[str],
    description: str,
    release: ReleaseRecord | None = None,
) -> Subject:
    """Recount ``schema.table`` into cells (its quasi-identifier values are the block keys, as they are)."""
    coders = [_coder() for _ in (*qis, *sensitive)]
    q_parts: list[np.ndarray] = []
    s_parts: list[np.ndarray] = []
    n_parts: list[np.ndarray] = []
    for batch in session.row_chunks(qa.table_cells(schema, table, qis, sensitive), f"recounting {description}"):
        columns = list(zip(*batch))
        codes = [code(col) for (_, code), col in zip(coders, columns[:-1])]
        q_parts.append(np.column_stack(codes[: len(qis)]) if qis else np.zeros((len(batch), 0), dtype=np.int64))
        s_parts.append(np.column_stack(codes[len(qis) :]) if sensitive else np.zeros((len(batch), 0), dtype=np.int64))
        n_parts.append(np.asarray(columns[-1], dtype=np.int64))
    q_codes = np.vstack(q_parts) if q_parts else np.zeros((0, len(qis)), dtype=np.int64)
    s_codes = np.vstack(s_parts) if s_parts else np.zeros((0, len(sensitive)), dtype=np.int64)
    n = np.concatenate(n_parts) if n_parts else np.zeros(0, dtype=np.int64)
    domains = []
    for j, name in enumerate(sensitive):
        index = coders[len(qis) + j][0]
        raw = sorted(index, key=sort_key)
        remap = np.empty(len(index), dtype=np.int64)
        remap[[index[v] for v in raw]] = np.arange(len(raw))
        s_codes[:, j] = remap[s_codes[:, j]] if len(s_codes) else s_codes[:, j]
        numeric = _numeric(raw)
        values = np.asarray(
            [float(v) if isinstance(v, decimal.Decimal) else v for v in raw], dtype=None if numeric else object
        )
        domains.append(
            SensitiveDomain(
                name,
                values,
                np.bincount(s_codes[:, j], weights=n, minlength=len(raw)).astype(np.int64),
                numeric=numeric,
            )
        )
    keys_text = [list(index) for index, _ in coders[: len(qis)]]
    counts = NodeCounts.from_cells(
        tuple(qis), (), q_codes, s_codes, n, [max(len(k), 1) for k in keys_text], tuple(domains)
    )
    return Subject(
        counts,
        description,
        lambda b: [
            "NULL" if (v := keys_text[j][int(counts.keys[b, j])]) is None else shown(v) for j in range(len(qis))
        ],
        release,
    )


def release_record(session: Session, config: Config, version: int) -> ReleaseRecord:
    """The catalog's record of published version ``version`` of the config's release."""
    rel = require_release(config)
    tables = catalog.require(session, rel.catalog_schema)
    found = session.rows(qa.published_release(tables.releases, rel.name, version), "reading the release")
    if not found:
        raise ConfigError(
            f"--release {version}: release {rel.name!r} has no published version {version} in the "
            f"catalog (schema {rel.catalog_schema!r})"
        )
    (rid, ver, node, output, achieved, metrics, read, published, suppressed, _dropped, at, _config) = found[0]
    evaluated = []
    for n, passed, supp, metric in session.rows(qa.evaluated_nodes(tables.release_nodes, rid), "reading nodes"):
        levels = json.loads(n)
        if None not in levels:
            evaluated.append(
                (tuple(int(x) for x in levels), bool(passed), int(supp or 0), None if metric is None else float(metric))
            )
    heights_by = dict(session.rows(qa.hierarchy_heights(tables.hierarchies, rid), "reading hierarchies"))
    heights = (
        tuple(int(heights_by[a]) for a in config.attributes)
        if all(a in heights_by for a in config.attributes)
        else None
    )
    return ReleaseRecord(
        str(rid),
        rel.name,
        int(ver),
        tuple(json.loads(node)) if node else None,
        str(output),
        json.loads(achieved) if achieved else {},
        json.loads(metrics) if metrics else {},
        int(read or 0),
        int(published or 0),
        int(suppressed or 0),
        str(at),
        evaluated,
        heights,
    )


def _split(qualified: str) -> tuple[str | None, str]:
    schema, dot, table = qualified.rpartition(".")
    return (schema if dot else None), table


def prepared_warehouse(
    session: Session, config: Config, on_step: Callable[[str], None] = lambda _m: None, rollup: bool = False
) -> Warehouse:
    """The source's warehouse with every sensitive column counted (the audit looks at all of them)."""
    wh = Warehouse(session, config.source, config.quasi_identifiers, config.sensitive, rollup=rollup, on_step=on_step)
    wh.prepare()
    return wh


def node_of(text: str, heights: Sequence[int]) -> tuple[int, ...]:
    """``--node 1,0,2`` parsed against the lattice's heights; a bad node is one ConfigError line."""
    try:
        return parse_node(text, heights)
    except ValueError as exc:
        raise ConfigError(f"--node: {exc}") from None


@contextmanager
def open_subject(
    config: Config,
    *,
    node: str | None = None,
    release: int | None = None,
    on_step: Callable[[str], None] = lambda _m: None,
) -> Iterator[tuple[Subject, Warehouse | None]]:
    """The subject of an audit: ``node`` ("1,0,2") of the lattice, published version ``release``, or (neither)
    the source table as it stands; with the prepared warehouse for a node (``None`` otherwise)."""
    if node is not None and release is not None:
        raise ConfigError("--node and --release are exclusive: audit a lattice node or a published version")
    backend = open_backend(config.source.resolved_url())
    with backend.session() as session:
        if node is not None:
            wh = prepared_warehouse(session, config, on_step)
            yield node_subject(wh, node_of(node, wh.heights)), wh
            return
        if release is not None:
            record = release_record(session, config, release)
            schema, table = _split(record.output_table)
            on_step(f"recounting {record.output_table}")
            yield (
                table_subject(
                    session,
                    schema,
                    table,
                    config.attributes,
                    config.sensitive,
                    f"release {record.name!r} version {record.version} ({record.output_table})",
                    record,
                ),
                None,
            )
            return
        on_step(f"recounting {config.source.qualified}")
        yield (
            table_subject(
                session,
                config.source.schema,
                config.source.table,
                config.attributes,
                config.sensitive,
                f"table {config.source.qualified} as it stands",
            ),
            None,
        )


def run_audit(
    config: Config,
    *,
    node: str | None = None,
    release: int | None = None,
    on_step: Callable[[str], None] = lambda _m: None,
) -> Audit:
    """``veil audit``: every attack on the subject ``open_subject`` loads, with the config's ``[audit]``."""
    settings = config.audit
    with open_subject(config, node=node, release=release, on_step=on_step) as (subject, _wh):
        return audit_counts(subject.counts, settings, config.models, subject.description, subject.label)
