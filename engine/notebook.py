"""Veil from a notebook: ``veil.anonymize(df, ...)``, ``veil.check(df, ...)`` and ``veil.audit(df, ...)`` on a
pandas DataFrame.

One code path with the CLI.  The arguments become the same frozen ``Config`` a TOML file does
(``veil.config.assemble``: hierarchies and models are the same dicts, and a hierarchy may also be a
DataFrame whose columns are the levels, value first); the DataFrame becomes a table of an in-memory DuckDB;
the run is the CLI's (``veil.run.prepare_run``: hierarchies, base frequency set, model validation; the same
search and checkers); and the generalized rows are the release's own ``SELECT``
(``veil.queries.release_select``) read back, in the DataFrame's row order and with its index.

Bad input raises Veil's errors (``ConfigError``, ``SourceError``, ``HierarchyError``; ``NoSolutionError``
when no node satisfies the models) with the CLI's one-line messages, naming the argument and the dict key
(``veil.anonymize(): quasi_identifiers['age'] key 'csv' ...``) where the CLI names a TOML line.

``veil.anonymize`` searches with one strategy (``strategy=``, default ``"optimal"``, as ``veil release`` does;
``"incognito"`` and ``"brute-force"`` also list every minimal node, at the cost of many more nodes).  Long work
shows its progress (each step, then the lattice nodes evaluated) with rich, as the CLI does on a terminal: on
by default when stderr is a terminal or the call runs in a Jupyter notebook (with ipywidgets, which rich
needs there), off elsewhere (a script's log, a CI job) and with ``progress=False``.

pandas and DuckDB are imported when a function runs, never by ``import veil``; without pandas a function
raises one line naming the ``notebook`` extra.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from veil import config as cfg
from veil.backends import open_backend
from veil.backends.base import Session
from veil.counts import NodeCounts
from veil.errors import ConfigError, SourceError, VeilError
from veil.hierarchy import RowsSpec
from veil.lattice import Lattice, parse_node
from veil.privacy import Specification
from veil.queries.ddl import relation
from veil.run import check_document, generalized_select, metric_for, no_solution, prepare_run, search_lattice
from veil.search import SearchResult
from veil.warehouse import Warehouse

if TYPE_CHECKING:
    from veil.reidentification.summary import RiskSummary
    from veil.adversary.exposure import Audit
    from veil.backends.duckdb import DuckDBSession

TABLE = "dataframe"  # the DataFrame's table in the in-memory DuckDB
POPULATION = "population"  # ``veil.risk``'s population DataFrame, beside it
ROW = "__veil_row__"  # its row positions, to give the result the DataFrame's order and index
MEMORY = "duckdb:///:memory:"
# what each strategy runs: the release needs the optimum, which incognito alone does not give (it then runs on
# the same evaluator's counts and verdicts, as ``veil search --strategy incognito,optimal`` does)
SEARCHES = {"optimal": ("optimal",), "incognito": ("incognito", "optimal"), "brute-force": ("brute-force",)}
EXTRA = "pip install 'veil[notebook]'"

Node = tuple[int, ...]


@dataclass(frozen=True)
class Anonymized:
    """What ``veil.anonymize`` found and published: ``data`` is the generalized DataFrame (suppressed rows
    removed, the input's index kept), ``node`` the optimal lattice node, ``achieved`` each model's level on
    the released rows (keyed like ``veil release``'s catalog: ``type`` or ``type:attribute``), ``minimal``
    every minimal passing node (``None`` when ``strategy`` is ``"optimal"``, which does not list them),
    ``metric`` the optimal node's value of ``metric_name``, ``nodes_evaluated`` the nodes the search
    evaluated of the lattice's ``lattice_size``."""

    data: Any = field(repr=False)
    node: Node
    achieved: dict[str, float | None]
    suppressed_rows: int
    minimal: tuple[Node, ...] | None
    metric: float
    metric_name: str
    attributes: tuple[str, ...]
    heights: tuple[int, ...]
    nodes_evaluated: int
    strategy: str = "optimal"
    lattice_size: int = 0
    workload_error: float | None = None  # the optimal node's workload error (with ``workload=``)
    workload_errors: tuple[float, ...] | None = None  # each query's error there, in the order given


@dataclass(frozen=True)
class Checked:
    """``veil.check`` at one node: the document of ``veil check --json`` as attributes, and the generalized
    DataFrame (``data``; ``None`` when the node fails)."""

    data: Any = field(repr=False)
    node: Node
    passed: bool
    rows: int
    blocks: int
    suppressed_rows: int
    models: tuple[dict[str, Any], ...]
    attributes: tuple[str, ...]


def anonymize(
    df: Any,
    quasi_identifiers: Mapping[str, Any],
    sensitive: Sequence[str] | str = (),
    models: Sequence[Mapping[str, Any]] = (),
    *,
    strategy: str = "optimal",
    max_suppression: float = 0.0,
    metric: str = "discernibility",
    keep_columns: Sequence[str] = (),
    nulls: str = "error",
    base_dir: str | Path | None = None,
    progress: bool | None = None,
    workload: Sequence[Mapping[str, Any]] = (),
) -> Anonymized:
    """Generalize ``df`` at the optimal lattice node satisfying every model (``veil search`` + the release's
    materialization, in memory).  ``strategy``: ``"optimal"`` (the release's), or ``"incognito"`` /
    ``"brute-force"``, which also list every minimal node (``minimal``).  Published columns:
    quasi-identifiers, sensitive columns and ``keep_columns``, in the DataFrame's order; relative hierarchy
    paths resolve against ``base_dir`` (default: the working directory).  ``progress``: show the steps and the
    search's nodes (default: on a terminal or in a notebook).  ``workload``: the analysts' queries, each a dict
    like a ``[[workload]]`` table (``group_by``, ``aggregate``, ``where``, ``weight``; docs/workload.md), which
    ``metric="workload"`` minimizes the error of; with a workload the result also carries the optimal node's
    ``workload_error`` (and ``workload_errors`` per query) whatever the metric."""
    origin = "veil.anonymize()"
    config, published = _config(
        origin,
        df,
        quasi_identifiers,
        sensitive,
        models,
        keep_columns,
        nulls,
        base_dir,
        {"strategy": strategy, "metric": metric, "max_suppression": max_suppression},
    )
    config, read = _workload(origin, df, config, workload)
    loaded = [c for c in df.columns if c in set(published) | set(read)]  # a workload's other columns: read only
    with _progress(origin, progress) as steps, _session(df, loaded, steps) as session:
        config, wh = _prepare(session, config, rollup=True, on_step=steps.step)
        spec = Specification(config.models, config.search.max_suppression)
        result = _search(wh, config, spec, steps)
        if result.optimal is None:
            raise no_solution(wh, spec)  # the error `veil release` and `veil search` give
        steps.step("generalizing the rows")
        counts = wh.counts(result.optimal.node)
        suppressed = spec.evaluate(counts, wh.rows).failing
        data = _generalized(session, wh, config, counts, suppressed, published, df)
        errors = _workload_errors(wh, config, counts, suppressed) if read else None
    return _anonymized(data, result, wh, config, spec, counts, suppressed, errors)


def _workload_errors(
    wh: Warehouse, config: cfg.Config, counts: NodeCounts, suppressed: Any
) -> tuple[float, tuple[float, ...]]:
    """The workload's error at the node (``counts`` less ``suppressed`` blocks), and each query's."""
    scorer = metric_for(wh, "workload", config)
    return (float(scorer.loss(counts, suppressed, wh.rows)), tuple(float(e) for e in scorer.errors(counts, suppressed)))  # type: ignore[attr-defined]


def _anonymized(
    data: Any,
    result: SearchResult,
    wh: Warehouse,
    config: cfg.Config,
    spec: Specification,
    counts: NodeCounts,
    suppressed: Any,
    errors: tuple[float, tuple[float, ...]] | None,
) -> Anonymized:
    """``anonymize``'s result: the generalized ``data`` with the search's optimum and what it achieved."""
    assert result.optimal is not None
    released = counts.restrict(~suppressed)
    return Anonymized(
        data=data,
        node=tuple(result.optimal.node),
        achieved={_label(m): m.check(released).achieved for m in spec.models},
        suppressed_rows=int(counts.sizes[suppressed].sum()),
        minimal=None if result.minimal is None else tuple(tuple(n) for n in result.minimal),
        metric=result.optimal.value,
        metric_name=result.optimal.metric,
        attributes=wh.attributes,
        heights=wh.heights,
        nodes_evaluated=result.nodes_evaluated,
        strategy=config.search.strategy,
        lattice_size=result.lattice_size,
        workload_error=None if errors is None else errors[0],
        workload_errors=None if errors is None else errors[1],
    )


def check(
    df: Any,
    quasi_identifiers: Mapping[str, Any],
    sensitive: Sequence[str] | str = (),
    models: Sequence[Mapping[str, Any]] = (),
    *,
    node: Sequence[int] | Mapping[str, int] | str | None = None,
    max_suppression: float = 0.0,
    keep_columns: Sequence[str] = (),
    nulls: str = "error",
    base_dir: str | Path | None = None,
    progress: bool | None = None,
) -> Checked:
    """Every model at one ``node`` (levels in quasi-identifier order, a dict by column, or ``"1,0,2"``;
    default: the table as it stands), like ``veil check``; ``progress`` as for ``anonymize``."""
    origin = "veil.check()"
    config, published = _config(
        origin,
        df,
        quasi_identifiers,
        sensitive,
        models,
        keep_columns,
        nulls,
        base_dir,
        {"max_suppression": max_suppression},
    )
    with _progress(origin, progress) as steps, _session(df, published, steps) as session:
        config, wh = _prepare(session, config, rollup=False, on_step=steps.step)
        level = _node(origin, node, wh)
        spec = Specification(config.models, config.search.max_suppression)
        counts = wh.counts(level)
        evaluation = spec.evaluate(counts, wh.rows)
        doc = check_document(wh, spec, counts, evaluation)
        data = (
            _generalized(session, wh, config, counts, evaluation.failing, published, df) if evaluation.passed else None
        )
    return Checked(
        data=data,
        node=level,
        passed=doc["passed"],
        rows=doc["rows"],
        blocks=doc["blocks"],
        suppressed_rows=doc["suppressed_rows"],
        models=tuple(doc["models"]),
        attributes=wh.attributes,
    )


def audit(
    df: Any,
    quasi_identifiers: Mapping[str, Any],
    sensitive: Sequence[str] | str = (),
    models: Sequence[Mapping[str, Any]] = (),
    *,
    node: Sequence[int] | Mapping[str, int] | str | None = None,
    settings: Mapping[str, Any] | None = None,
    nulls: str = "error",
    base_dir: str | Path | None = None,
    progress: bool | None = None,
) -> Audit:
    """The attacks of ``veil audit --node`` on ``df`` generalized at ``node`` (default: the table as it stands,
    node 0), every sensitive column counted; ``settings`` is the ``[audit]`` table as a dict (thresholds and
    ``attributes``), the models say what the adversary is assumed to know (README "Audit and report").
    Returns the audit: ``document()`` is ``veil audit --json``'s, ``find(attack, attribute)`` one exposure;
    ``progress`` as for ``anonymize``."""
    from veil.adversary.attacks import audit_counts
    from veil.auditsettings import parse_audit
    from veil.adversary.subject import node_label

    origin = "veil.audit()"
    config, published = _config(origin, df, quasi_identifiers, sensitive, models, (), nulls, base_dir, {})
    if settings is not None and not isinstance(settings, Mapping):
        raise ConfigError(f"{origin}: argument 'settings' must be a dict like the [audit] table, got {settings!r}")
    parsed = parse_audit(dict(settings or {}), Path(origin), config.sensitive)
    with _progress(origin, progress) as steps, _session(df, published, steps) as session:
        config, wh = prepare_run(session, config, sensitive=config.sensitive, rollup=False, on_step=steps.step)
        level = _node(origin, node, wh)
        counts = wh.counts(level)
        return audit_counts(counts, parsed, config.models, f"node {list(level)} of the DataFrame", node_label(counts))


def risk(
    df: Any,
    quasi_identifiers: Mapping[str, Any],
    *,
    node: Sequence[int] | Mapping[str, int] | str | None = None,
    population: Any = None,
    sampling_fraction: float | None = None,
    threshold: float = 0.2,
    nulls: str = "error",
    base_dir: str | Path | None = None,
    progress: bool | None = None,
) -> RiskSummary:
    """Re-identification risk of ``df`` generalized at ``node`` (default: as it stands), like ``veil risk``
    (docs/reidentification.md): prosecutor, journalist and marketer risk, sample uniques, and population
    uniqueness (Pitman, Zayatz, SNB, Dankar et al.'s rule) when the population is known — ``population`` a
    DataFrame of the whole population with the same quasi-identifier columns (journalist and marketer risk
    against its class sizes), or its size as an int, or ``sampling_fraction`` (the share of the population in
    ``df``).  Returns the summary: ``document()`` is ``veil risk --json``'s."""
    from veil.queries.population import population_table
    from veil.reidentification.subject import node_risk

    origin = "veil.risk()"
    config, published = _config(
        origin, df, quasi_identifiers, (), [{"type": "k-anonymity", "k": 1}], (), nulls, base_dir, {}
    )
    frame = population is not None and not isinstance(population, int)
    if frame and not isinstance(population, _pandas(origin).DataFrame):
        raise ConfigError(
            f"{origin}: argument 'population' must be a DataFrame or the population's size (int), "
            f"got {type(population).__name__}"
        )
    if population is not None and sampling_fraction is not None:
        raise ConfigError(f"{origin}: give 'population' or 'sampling_fraction', not both")
    with _progress(origin, progress) as steps, _session(df, published, steps) as session:
        if frame:
            steps.step(f"loading the population ({len(population):,} rows)")
            missing = [c for c in quasi_identifiers if c not in population.columns]
            if missing:
                raise SourceError(f"column {missing[0]!r} does not exist in the population DataFrame")
            session.load_frame(
                population_table(None, POPULATION, {}),
                population[list(quasi_identifiers)].copy(),
                "loading the population",
            )
        config, wh = prepare_run(session, config, sensitive=(), rollup=False, on_step=steps.step)
        return node_risk(
            wh,
            _node(origin, node, wh),
            threshold=threshold,
            population_table=POPULATION if frame else None,
            sampling_fraction=sampling_fraction,
            population=float(population) if population is not None and not frame else None,
        )


# --- arguments → Config ------------------------------------------------------------------------------------


def _config(
    origin: str,
    df: Any,
    quasi_identifiers: Any,
    sensitive: Any,
    models: Any,
    keep_columns: Any,
    nulls: Any,
    base_dir: Any,
    search: dict[str, Any],
) -> tuple[cfg.Config, list[str]]:
    """The run's Config (built like a TOML file's) and the published columns (the DataFrame's order)."""
    pd = _pandas(origin)
    if not isinstance(df, pd.DataFrame):
        raise ConfigError(f"{origin}: argument 'df' must be a pandas DataFrame, got {type(df).__name__}")
    bad = [c for c in df.columns if not isinstance(c, str) or not c]
    if bad or ROW in df.columns:
        raise ConfigError(
            f"{origin}: the DataFrame's column names must be non-empty strings other than {ROW!r}, "
            f"got {(bad or [ROW])[0]!r}"
        )
    if not isinstance(quasi_identifiers, Mapping) or not quasi_identifiers:
        raise ConfigError(
            f"{origin}: argument 'quasi_identifiers' must be a non-empty dict of column → hierarchy, "
            f"got {quasi_identifiers!r}"
        )
    sens = _columns(origin, "sensitive", sensitive)
    keep = _columns(origin, "keep_columns", keep_columns)
    if isinstance(models, Mapping) or not isinstance(models, Sequence) or not models:
        raise ConfigError(f"{origin}: argument 'models' must be a non-empty list of model dicts, got {models!r}")
    if nulls not in cfg.NULL_POLICIES:
        raise ConfigError(f"{origin}: argument 'nulls' must be one of {', '.join(cfg.NULL_POLICIES)}, got {nulls!r}")
    named = [*quasi_identifiers, *sens, *keep]
    missing = [c for c in named if c not in df.columns]
    if missing:
        raise SourceError(
            f"column {missing[0]!r} does not exist in the DataFrame (its columns: "
            f"{', '.join(repr(c) for c in list(df.columns)[:20])})"
        )
    clash = sorted(set(keep) & (set(quasi_identifiers) | set(sens)))
    if clash:
        raise ConfigError(
            f"{origin}: argument 'keep_columns' names column(s) {', '.join(map(repr, clash))} that are "
            "quasi-identifiers or sensitive (those are always published)"
        )
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    qis = [(column, _levels(h), f"quasi_identifiers[{column!r}]") for column, h in quasi_identifiers.items()]
    raw_models = [(_model_levels(m), f"models[{i}]") for i, m in enumerate(models)]
    config = cfg.assemble(
        file=origin,
        base=base,
        source=cfg.SourceConfig(table=TABLE, url=MEMORY, nulls=nulls, base_dir=base),
        quasi_identifiers=qis,
        sensitive=sens,
        models=raw_models,
        search=cfg.search_settings(search, origin, "arguments", key=lambda k: f"argument {k!r}"),
    )
    return config, [c for c in df.columns if c in set(named)]


def _workload(origin: str, df: Any, config: cfg.Config, workload: Any) -> tuple[cfg.Config, list[str]]:
    """The config with ``workload``'s queries as its ``[[workload]]`` tables (validated as the TOML's are), and
    the columns they read."""
    from veil.workloadsettings import parse_workload

    if isinstance(workload, (Mapping, str)) or not isinstance(workload, Sequence):
        raise ConfigError(
            f"{origin}: argument 'workload' must be a list of query dicts like the [[workload]] "
            f"tables (docs/workload.md), got {workload!r}"
        )
    if not workload and config.search.metric == "workload":
        raise ConfigError(
            f"{origin}: argument 'metric' is \"workload\" but argument 'workload' lists no query; "
            'pass the analysts\' queries, e.g. workload=[{"group_by": ["age", "sex"]}]'
        )
    queries = parse_workload(list(workload), origin, config)
    read = list(dict.fromkeys(c for q in queries for c in q.columns))
    missing = [c for c in read if c not in df.columns]
    if missing:
        raise SourceError(
            f"argument 'workload' reads column {missing[0]!r}, which does not exist in the DataFrame "
            f"(its columns: {', '.join(repr(c) for c in list(df.columns)[:20])})"
        )
    if not queries:
        return config, []
    return replace(config, data={**config.data, "workload": [dict(q) for q in workload]}, workload=queries), read


def _columns(origin: str, argument: str, value: Any) -> tuple[str, ...]:
    names = (value,) if isinstance(value, str) else value
    if (
        not isinstance(names, Sequence)
        or not all(isinstance(c, str) and c for c in names)
        or len(set(names)) != len(names)
    ):
        raise ConfigError(f"{origin}: argument {argument!r} must be a list of distinct column names, got {value!r}")
    return tuple(names)


def _levels(value: Any) -> Any:
    """A DataFrame of levels (value column first, then level 1..h) as in-memory rows; anything else as is."""
    pd = _pandas("veil")
    if not isinstance(value, pd.DataFrame):
        return value
    cells = value.astype(object).where(value.notna(), None)
    rows = tuple((row[0], tuple(row[1:])) for row in cells.itertuples(index=False, name=None))
    return RowsSpec(rows=rows, origin="DataFrame", columns=tuple(str(c) for c in value.columns), unit="row")


def _model_levels(model: Any) -> Any:
    if isinstance(model, Mapping) and "hierarchy" in model:
        return {**model, "hierarchy": _levels(model["hierarchy"])}
    return model


def _node(origin: str, node: Any, wh: Warehouse) -> Node:
    if node is None:
        return tuple(0 for _ in wh.heights)
    try:
        if isinstance(node, Mapping):
            unknown = sorted(set(node) - set(wh.attributes))
            if unknown:
                raise ValueError(f"{unknown[0]!r} is not a quasi-identifier ({', '.join(wh.attributes)})")
            node = [node.get(a, 0) for a in wh.attributes]
        text = node if isinstance(node, str) else ",".join(str(int(lv)) for lv in node)
        return parse_node(text, wh.heights)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{origin}: argument 'node': {exc}") from None


# --- the run ----------------------------------------------------------------------------------------------


@contextmanager
def _session(df: Any, published: Sequence[str], steps: _Steps) -> Iterator[DuckDBSession]:
    """An in-memory DuckDB session holding the DataFrame as table ``dataframe`` (only the columns Veil reads or
    publishes, categoricals decoded, plus each row's position)."""
    from veil.backends.duckdb import DuckDBSession  # the module open_backend(MEMORY) loads

    steps.step(f"loading the DataFrame ({len(df):,} rows)")
    frame = df[list(published)].copy()
    for column in frame.columns:
        if str(frame[column].dtype) == "category":
            frame[column] = frame[column].astype(frame[column].cat.categories.dtype)
    frame[ROW] = range(len(frame))
    with open_backend(MEMORY).session() as session:
        assert isinstance(session, DuckDBSession)  # MEMORY is a DuckDB URL
        session.load_frame(relation(TABLE), frame, "loading the DataFrame")
        yield session


def _prepare(
    session: Session, config: cfg.Config, rollup: bool, on_step: Callable[[str], None]
) -> tuple[cfg.Config, Warehouse]:
    """``prepare_run`` as ``veil release`` calls it: sensitive columns no model reads are still NULL-checked."""
    counted = cfg.sensitive_needed(config)
    return prepare_run(
        session,
        config,
        rollup=rollup,
        on_step=on_step,
        null_checked=tuple(c for c in config.sensitive if c not in counted),
    )


def _search(wh: Warehouse, config: cfg.Config, spec: Specification, steps: _Steps) -> SearchResult:
    """``run.search_warehouse`` with the strategy's searches (``SEARCHES``) and the call's progress."""
    steps.step(f"searching the lattice ({config.search.strategy})", Lattice(wh.heights).size)
    return search_lattice(wh, config, SEARCHES[config.search.strategy], spec, steps.advance)


def _generalized(
    session: Session,
    wh: Warehouse,
    config: cfg.Config,
    counts: NodeCounts,
    suppressed: Any,
    published: Sequence[str],
    df: Any,
) -> Any:
    """The release's generalizing ``SELECT`` at ``counts.node`` (suppressed blocks dropped), read back as a
    DataFrame in the input's row order, with its index."""
    pd = _pandas("veil")
    not_null = list(config.sensitive) if config.source.nulls == "drop" else []
    select = generalized_select(wh, counts, suppressed, [*published, ROW], not_null)
    frame = pd.DataFrame(session.columns(select, "reading the generalized rows")).sort_values(ROW, kind="stable")
    frame.index = df.index[frame[ROW].to_numpy()]
    return frame.drop(columns=ROW)[list(published)]


def _label(model: Any) -> str:
    return f"{model.type}:{model.attribute}" if model.attribute else model.type


def _pandas(origin: str) -> Any:
    try:
        import pandas
    except ImportError:
        raise VeilError(f"{origin} needs pandas, which is not installed: {EXTRA}") from None
    return pandas


# --- progress ---------------------------------------------------------------------------------------------


class _Steps:
    """The progress of one call: ``step(text, total)`` names what runs now (with ``total``: a bar of the
    lattice's nodes, moved by ``advance(done)``, the nodes evaluated — Incognito's subset nodes too, so the
    count may pass the lattice's size); a no-op without ``bar``."""

    def __init__(self, bar: Any = None) -> None:
        self.bar, self.total = bar, 0
        self.task = bar.add_task("starting", total=None, nodes="") if bar is not None else None

    def step(self, text: str, total: int | None = None) -> None:
        if self.bar is not None:
            self.total = total or 0
            self.bar.update(self.task, description=text, total=total, completed=0, nodes=self._nodes(0), refresh=True)

    def advance(self, done: int) -> None:
        if self.bar is not None:
            self.bar.update(self.task, completed=min(done, self.total), nodes=self._nodes(done))

    def _nodes(self, done: int) -> str:
        return f"{done:,} evaluated, lattice of {self.total:,}" if self.total else ""


def _showing(origin: str, progress: bool | None) -> bool:
    """``progress`` as given; by default on when stderr is a terminal, or in a Jupyter notebook when
    ipywidgets is there (rich draws live output there with it, and only warns without it)."""
    if progress is not None:
        if not isinstance(progress, bool):
            raise ConfigError(f"{origin}: argument 'progress' must be True, False or None, got {progress!r}")
        return progress
    from veil import log

    if log.is_terminal():
        return True
    from rich.console import Console

    if not Console(file=sys.stderr).is_jupyter:
        return False
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        return False
    return True


@contextmanager
def _progress(origin: str, progress: bool | None) -> Iterator[_Steps]:
    """A transient rich display of the call's steps and the search's nodes on stderr (``_showing``)."""
    if not _showing(origin, progress):
        yield _Steps()
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[nodes]}"),
        TimeElapsedColumn(),
    )
    # progress=True: drawn even where stderr does not look like a terminal (an IDE's console)
    console = Console(file=sys.stderr, force_terminal=True if progress else None)
    with Progress(*columns, console=console, transient=True) as bar:
        yield _Steps(bar)
