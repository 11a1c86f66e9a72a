"""What ``veil risk`` measures, loaded through the warehouse and the backends: a lattice node of the source
(its block sizes, ``Warehouse.sizes``), a published release (its rows recounted, ``veil.adversary.subject``), and
for journalist risk the population table's class sizes at the same node (``queries.population``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from veil.config import Config
from veil.errors import ConfigError, SourceError
from veil.queries import population as qp
from veil.reidentification.classes import ClassSizes
from veil.reidentification.summary import RiskSummary, summarize
from veil.warehouse import Warehouse


def split(qualified: str) -> tuple[str | None, str]:
    schema, dot, table = qualified.rpartition(".")
    return (schema if dot else None), table


def _codes(keys: np.ndarray) -> list[tuple[int, ...]]:
    return [tuple(int(v) for v in row) for row in keys]


def population_at(wh: Warehouse, node: Sequence[int], table: str) -> tuple[dict[tuple[int, ...], int], int, int]:
    """The population table's rows per class at ``node`` (keyed by the node's codes), its rows, and its rows
    with a value no hierarchy lists (left out)."""
    schema, name = split(table)
    pop = qp.population_table(schema, name, {c: wh.columns[c].sa_type for c in wh.attributes})
    what = f"counting population table {table!r} at node {list(node)}"
    try:
        data = wh.session.columns(qp.population_classes(pop, wh.attributes, wh.heights, node), what)
        total, unmatched = wh.session.rows(qp.population_unmatched(pop, wh.attributes, wh.heights), what)[0]
    except Exception as exc:  # a missing table or column: one line naming it
        raise SourceError(f"population table {table!r}: {str(exc).splitlines()[0]}") from None
    keys = np.column_stack([data[f"g{i}"] for i in range(len(node))]) if len(data["n"]) else np.zeros((0, len(node)))
    return dict(zip(_codes(keys), (int(n) for n in data["n"]))), int(total), int(unmatched or 0)


def pairs(
    sample: dict[tuple[int, ...], int],
    population: dict[tuple[int, ...], int],
    describe: Callable[[tuple[int, ...]], str],
) -> tuple[np.ndarray, np.ndarray]:
    """(f_j, F_j) for every sample class; a class the population lacks, or holds fewer of, is an error."""
    f = np.fromiter(sample.values(), dtype=np.int64, count=len(sample))
    big = np.asarray([population.get(k, 0) for k in sample], dtype=np.int64)
    short = np.flatnonzero(big < f)
    if len(short):
        key = list(sample)[int(short[0])]
        raise SourceError(
            f"the population table holds {int(big[short[0]])} record(s) of class {describe(key)} where "
            f"the sample holds {int(f[short[0]])}: the population must contain the sample "
            f"({len(short)} class(es) short)"
        )
    return f, big


def node_risk(
    wh: Warehouse,
    node: Sequence[int],
    *,
    threshold: float,
    population_table: str | None = None,
    sampling_fraction: float | None = None,
    population: float | None = None,
) -> RiskSummary:
    """The figures of the source generalized at ``node``."""
    subject = f"node {list(node)} of {wh.table_name}"
    if population_table is None:
        classes = ClassSizes.of_histogram(wh.sizes(tuple(node)))
        return summarize(
            classes, subject=subject, threshold=threshold, sampling_fraction=sampling_fraction, population=population
        )
    counts = wh.counts(tuple(node))
    sample = dict(zip(_codes(counts.keys), (int(s) for s in counts.sizes)))
    pop, total, unmatched = population_at(wh, node, population_table)
    f, big = pairs(sample, pop, lambda key: str(list(key)))
    return summarize(
        ClassSizes.of(f),
        subject=subject,
        threshold=threshold,
        sample_sizes=f,
        population_sizes=big,
        population_rows=total,
        population_name=population_table,
        unmatched=unmatched,
    )


def release_risk(
    session: Any,
    config: Config,
    version: int,
    *,
    threshold: float,
    wh: Callable[[], Warehouse] | None = None,
    population_table: str | None = None,
    sampling_fraction: float | None = None,
    population: float | None = None,
) -> RiskSummary:
    """The figures of published version ``version``: its rows recounted (its quasi-identifier values are the
    classes).  A population table is counted at the version's node through ``wh()`` (the source's warehouse) and
    matched on the labels the hierarchies give that node's codes."""
    from veil.adversary.subject import release_record, table_subject

    record = release_record(session, config, version)
    schema, table = split(record.output_table)
    described = f"release {record.name!r} version {record.version} ({record.output_table})"
    loaded = table_subject(session, schema, table, config.attributes, (), described, record)
    counted = loaded.counts
    labels = [tuple(loaded.label(b)) for b in range(counted.n_blocks)]
    if population_table is None:
        return summarize(
            ClassSizes.of(counted.sizes),
            subject=described,
            threshold=threshold,
            sampling_fraction=sampling_fraction,
            population=population,
        )
    if wh is None or record.node is None:
        raise ConfigError(f"--population with --release {version}: the version's node is not recorded")
    warehouse = wh()
    pop, total, unmatched = population_at(warehouse, record.node, population_table)
    by_label = {_labels_of(warehouse, record.node, key): n for key, n in pop.items()}
    sample = dict(zip(labels, (int(s) for s in counted.sizes)))
    f, big = pairs(sample, by_label, lambda key: str(list(key)))  # type: ignore[arg-type]
    return summarize(
        ClassSizes.of(f),
        subject=described,
        threshold=threshold,
        sample_sizes=f,
        population_sizes=big,
        population_rows=total,
        population_name=population_table,
        unmatched=unmatched,
    )


def _labels_of(wh: Warehouse, node: Sequence[int], key: tuple[int, ...]) -> tuple[str, ...]:
    from veil.adversary.exposure import shown  # the text the recount of a release gives each value

    return tuple(shown(h.domain(level)[code]) for h, level, code in zip(wh.hierarchies, node, key))


def prepared_warehouse(session: Any, config: Config, on_step: Callable[[str], None]) -> Warehouse:
    """The source's warehouse as ``veil.run.prepare_run`` prepares it, counting no sensitive column (risk reads
    class sizes only; sensitive columns are NULL-checked as every command does)."""
    from veil.hierarchytables import resolve

    config = resolve(session, config)  # table-backed hierarchies read through the session
    wh = Warehouse(
        session,
        config.source,
        config.quasi_identifiers,
        (),
        null_checked=tuple(config.sensitive),
        rollup=False,
        local_cells=config.search.local_cells,
        on_step=on_step,
    )
    wh.prepare()
    return wh


def run_risk(
    config: Config,
    *,
    node: str | None = None,
    release: int | None = None,
    threshold: float,
    population_table: str | None = None,
    sampling_fraction: float | None = None,
    population: float | None = None,
    on_step: Callable[[str], None] = lambda _m: None,
) -> RiskSummary:
    """``veil risk``: the figures of ``node`` ("1,0,2"; default the bottom, the source as it stands) or of
    published version ``release``, on one connection of the config's backend."""
    from veil.backends import open_backend
    from veil.lattice import parse_node

    if node is not None and release is not None:
        raise ConfigError("veil risk: --node and --release are mutually exclusive")
    if sum(x is not None for x in (population_table, sampling_fraction, population)) > 1:
        raise ConfigError("veil risk: give at most one of --population-table, --sampling-fraction, --population")
    with open_backend(config.source.resolved_url()).session() as session:
        prepared: list[Warehouse] = []

        def warehouse() -> Warehouse:
            if not prepared:
                prepared.append(prepared_warehouse(session, config, on_step))
            return prepared[0]

        if release is not None:
            on_step(f"recounting release version {release}")
            return release_risk(
                session,
                config,
                release,
                threshold=threshold,
                wh=warehouse,
                population_table=population_table,
                sampling_fraction=sampling_fraction,
                population=population,
            )
        wh = warehouse()
        try:
            level = parse_node(node, wh.heights) if node is not None else tuple(0 for _ in wh.heights)
        except ValueError as exc:
            raise ConfigError(f"--node: {exc}") from None
        return node_risk(
            wh,
            level,
            threshold=threshold,
            population_table=population_table,
            sampling_fraction=sampling_fraction,
            population=population,
        )
