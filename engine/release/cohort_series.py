"""The cohort series of a release (``[release] series = "cohort"``, docs/series.md): what a version publishes,
decided from bounded per-person state, not from every earlier version.

A series begins at a version — the release's first, or one run with ``--new-series`` — at the node the search
chooses, and keeps that node, those quasi-identifiers and hierarchies, those published columns and models
(its *shape*) for every later version.  Its state is a catalog row (``series_state``: the node, the shape's
digest, the secret of its coins, the next cohort id) and the members table it names (``veil.queries.members``),
kept as the backend's publication protocol can (``veil.release.memberstore``: in place, or a generation per
version).  Each
night: tonight's rows are counted (``veil_now``); published people who left become stand-ins; people who left
while waiting are forgotten; newcomers wait; ``veil.release.cohorts`` decides which blocks' waiting rows form a
cohort and which cohorts' stand-ins leave; the members table takes the decisions; the version is every member
published or standing in.  Its cost is tonight's rows and the members', never the number of versions, and
Python reads the values of only the cohorts whose stand-ins may leave (``_histograms``), not of every cohort formed.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import sqlalchemy as sa

from veil import catalog
from veil import queries as q
from veil.backends.base import Session
from veil.config import Config, sensitive_needed
from veil.errors import ConfigError, ReleaseError
from veil.files import MAX_HIERARCHY_BYTES, read_bounded
from veil.hierarchy import CsvSpec, RowsSpec
from veil.models.base import Needs
from veil.release import blockgaps, cohorts, memberstore, seriestrend
from veil.release.cohorts import Checks, Cohort, Histogram, Sized
from veil.release.differences import Judge
from veil.release.ledger import canonical
from veil.release.memberstore import MemberStore
from veil.release.process import failpoint
from veil.release.runs import Runs
from veil.release.secret import Coins, new_secret
from veil.queries import members as mq
from veil.queries.ddl import create_table, relation

if TYPE_CHECKING:  # annotations only: `veil releases` reads this module without the warehouse
    from veil.warehouse import Warehouse

SEP = "\x1f"  # between a block's labels in its key


@dataclass(frozen=True)
class State:
    """The current series of a release, as ``series_state`` holds it."""

    series: int
    started: int
    node: tuple[int, ...]
    shape: str
    members: str
    batch: int
    next_cohort: int
    secret: str


@dataclass
class Night:
    """What the series step did tonight: the version's rows, how to verify them, and the catalog's record."""

    rows: sa.Select[Any]
    check: Callable[[sa.Table], dict[str, float | None]]
    published: int
    waiting: int
    standing: int
    info: dict[str, Any] = field(default_factory=dict)


def shape(config: Config, wh: Warehouse, published: Sequence[str], identity: Sequence[str]) -> str:
    """What a series keeps for all its versions, hashed: quasi-identifiers and their hierarchies (as the config
    defines them: a builder's parameters, a file's or a table's rows — not the values a builder met in the data),
    the published columns, the models and how people are told apart (docs/series.md §5)."""
    text = json.dumps(
        {
            "qis": [
                [qi.column, _defined(qi.hierarchy), h.height] for qi, h in zip(config.quasi_identifiers, wh.hierarchies)
            ],
            "published": list(published),
            "models": [m.describe() for m in config.models],
            "identity": list(identity),
        },
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _defined(spec: Any) -> Any:
    """A hierarchy as its config defines it: rows read from a table or DataFrame, a file's bytes, else the
    builder's own description."""
    if isinstance(spec, RowsSpec):
        return [[str(v), [str(x) for x in labels]] for v, labels in spec.rows]
    if isinstance(spec, CsvSpec):
        return [spec.describe(), hashlib.sha256(read_bounded(spec.path, MAX_HIERARCHY_BYTES)).hexdigest()]
    return spec.describe()


def require_monotone(config: Config) -> None:
    """A cohort series publishes blocks that are unions of cohorts, each passing the models: that the union
    passes is what monotone models promise (docs/models.md), and no natural superset is read."""
    for m in config.models:
        if not m.properties.monotone or m.properties.needs is Needs.SUPERSETS:
            raise ConfigError(
                f'{config.path}: [release] series = "cohort" needs monotone models whose verdict on a '
                f"block reads the block alone; {m.describe()} is not (docs/series.md §5): use series = "
                '"refuse" or "off"'
            )


def load(session: Session, tables: catalog.CatalogTables, name: str, runs: Runs) -> State | None:
    """The series of release ``name`` as its last committed version left it (``memberstore.current``; ``runs``:
    the release's runs)."""
    found = {r[4]: r for r in session.rows(mq.state_of(tables.series_state, name), "reading the series")}
    chosen = memberstore.current(name, found, runs.kept())
    if chosen is None:
        return None
    s, started, node, shp, members, batch, nxt, secret = found[chosen]
    return State(int(s), int(started), tuple(json.loads(node)), shp, members, int(batch), int(nxt), secret)


def members_of(wh: Warehouse, schema: str, table: str, published: Sequence[str]) -> sa.Table:
    return mq.members_table(
        schema, table, list(wh.attributes), {c: wh.columns[c].sa_type for c in published if c not in wh.attributes}
    )


def cohort_of(s: Series) -> int:
    """The fewest joiners a cohort forms with after a series' first version (``[release] series_cohort``; 0:
    ``batch`` decides alone)."""
    rel = s.config.release
    return (rel.series_cohort or 0) if rel is not None else 0


def batch_of(config: Config) -> int:
    """The smallest batch a reader may isolate: the models' smallest block, at least 2 (``[release] batch``)."""
    assert config.release is not None
    if config.release.batch is not None:
        return config.release.batch
    return max(2, max((m.properties.min_block_size for m in config.models), default=1))


@dataclass
class Series:
    """Where tonight's step runs: the release, its catalog and members table, what it publishes and how it
    tells people apart."""

    session: Session
    tables: catalog.CatalogTables
    name: str
    config: Config
    wh: Warehouse
    published: tuple[str, ...]
    identity: tuple[str, ...]
    store: MemberStore  # where the members are kept between nights (the publication protocol's)
    counted: list[str] = field(init=False)  # the sensitive columns the models read
    carried: int | None = None  # a new series: the people the last one published who were still there

    def __post_init__(self) -> None:
        self.counted = list(sensitive_needed(self.config))

    @property
    def schema(self) -> str:
        return self.tables.series_state.schema or ""

    def members(self, state: State) -> sa.Table:
        return self.store.table(members_of(self.wh, self.schema, state.members, self.published))

    def tonight(self, previous: State | None, version: int, runs: Runs, fresh: bool) -> str:
        """The members table version ``version`` works on (``MemberStore.tonight``); ``previous``'s is kept."""
        kept = previous.members if previous is not None else None
        return self.store.tonight(self.session, self.schema, self.name, kept, version, runs, fresh)

    def record(self, state: State) -> None:
        """The series' ``series_state`` row as tonight's step leaves it (``MemberStore.record``)."""
        values = {
            "name": self.name,
            "series": state.series,
            "started_version": state.started,
            "node": json.dumps([int(x) for x in state.node]),
            "attributes": json.dumps(list(self.wh.attributes)),
            "columns": json.dumps(list(self.published)),
            "shape": state.shape,
            "members": state.members,
            "batch": state.batch,
            "next_cohort": state.next_cohort,
            "secret": state.secret,
        }
        self.store.record(self.session, self.tables.series_state, values)


def start(s: Series, node: Sequence[int], version: int, previous: State | None, table: str) -> State:
    """A new series at ``node`` from version ``version``: a fresh members table ``table`` (the previous series'
    dropped where it has the same name), a fresh secret, the shape it keeps; its ``series_state`` row is written
    at the night's end (``night``)."""
    schema = s.schema
    state = State(
        previous.series + 1 if previous else 1,
        version,
        tuple(int(x) for x in node),
        shape(s.config, s.wh, s.published, s.identity),
        table,
        batch_of(s.config),
        1,
        new_secret(),
    )
    if previous is not None:  # how many people the last series published who were still there (docs/series.md §5)
        old = s.members(previous)
        live = s.session.rows(mq.cells(old, [], [mq.LIVE]), f"counting {schema}.{previous.members}")
        s.carried = int(live[0][-1]) if live else 0
    s.session.execute(q.drop_table(table, schema), f"dropping {schema}.{table}")
    s.session.execute(create_table(s.members(state)), f"creating {schema}.{table}")
    return state


def night(s: Series, state: State, version: int, first: bool, erase: bool = False, cohort: int = 0) -> Night:
    """Tonight's step (docs/series.md §2) on the members table ``state`` names (in the release's transaction, or the
    run's own generation: ``veil.release.memberstore``), its ``series_state`` row written last; returns what the
    version publishes.
    ``cohort``: the fewest rows a joiners' cohort forms with tonight (``veil.release.delaybound.keep_bound``'s;
    0 in a series' first version)."""
    members = s.members(state)
    qis = list(s.wh.attributes)
    not_null = list(s.config.sensitive) if s.config.source.nulls == "drop" else []
    what = "counting tonight's rows"
    s.session.execute(
        mq.now_rows(s.wh.source_table(), s.wh.layout, state.node, qis, list(s.published), list(s.identity), not_null),
        what,
    )
    what = "bringing the series' members up to date"
    s.session.change([mq.forget(members), *([] if first else [mq.leave(members, version)])], what)
    s.session.execute(mq.arrive(members, list(s.published), version), what)
    s.session.execute(q.drop_table(mq.NOW), what)
    erased = _erase(s, members) if erase else 0
    taken = 0 if first else _take_over(s, members, version)
    batch = 1 if first else state.batch
    found = _histograms(s, members, None if erase else batch)
    checks = Checks(
        Judge(s.config.models, s.counted, _numeric(s)),
        found.joining,
        found.leaving,
        batch,
        cohort,
    )
    withdrawn = _withdraw(s, members, found, checks) if erase else 0
    found = _histograms(s, members, None) if withdrawn else found
    plan = cohorts.decide(
        found.pending,
        found.cohorts,
        checks,
        _Heads() if first else Coins.of(state.secret, s.name, version),
        found.sized,
    )
    next_cohort = _apply(s, members, plan, state.next_cohort, version)
    failpoint("series")  # the members changed, the series' row not yet written
    s.record(replace(state, next_cohort=next_cohort))
    night = _night(s, members, plan, found, version, erased, state)
    night.info["taken_over"] = taken
    if erase:
        night.info["withdrawn"] = withdrawn
    return night


class _Heads:
    """A series' first version publishes every block that passes, like any release: no coin."""

    def flip(self, kind: str, key: str) -> bool:
        return True


@dataclass
class _Found:
    """The members' histograms: waiting rows per block, each cohort's live and standing rows, the tables."""

    pending: dict[str, Histogram]
    cohorts: list[Cohort]
    joining: dict[str, dict[str, int]]
    leaving: dict[str, dict[str, int]]
    rows: dict[int, int]
    sized: Sized


def _histograms(s: Series, members: sa.Table, batch: int | None) -> _Found:
    """The members' histograms, the table scanned once into ``veil_histograms``: the waiting rows per block and,
    value by value, only the cohorts whose stand-ins may leave tonight (at least ``batch`` of them and of live
    rows); the others by their sizes (``cohorts.by_size``), so that what a night reads does not grow with the
    cohorts the series has formed (1M census, 1% churn, 40 nights: 223 of 8,528).  ``batch`` ``None``: every
    cohort (an erasure withdraws cohorts by their live rows' values)."""
    counted, qis, d = s.counted, list(s.wh.attributes), len(s.wh.attributes)
    what = "reading the series' members"
    s.session.execute(mq.kept_histograms(members, qis, counted), what)
    found = s.session.rows(mq.undecided(qis, counted, batch), what)
    sized = Sized() if batch is None else _sized(s.session.rows(mq.by_size(batch), what))
    totals = s.session.rows(mq.totals(counted), what)
    s.session.execute(q.drop_table(mq.HISTOGRAMS), what)
    pending: dict[str, Counter[tuple[str | None, ...]]] = defaultdict(Counter)
    live: dict[int, Counter[tuple[str | None, ...]]] = defaultdict(Counter)
    gone: dict[int, Counter[tuple[str | None, ...]]] = defaultdict(Counter)
    for state, cohort, *rest in found:
        labels, values, n = rest[:d], tuple(canonical(v) for v in rest[d:-1]), int(rest[-1])
        if state == mq.PENDING:
            pending[SEP.join(str(x) for x in labels)][values] += n
        else:
            (live if state == mq.LIVE else gone)[int(cohort)][values] += n
    joining: dict[str, Counter[str | None]] = {c: Counter() for c in counted}
    leaving: dict[str, Counter[str | None]] = {c: Counter() for c in counted}
    rows: Counter[int] = Counter()
    for state, *rest in totals:
        values, n = tuple(canonical(v) for v in rest[:-1]), int(rest[-1])
        rows[int(state)] += n
        for table in (joining,) if state == mq.PENDING else (joining, leaving) if state == mq.LIVE else (leaving,):
            for c, v in zip(counted, values):
                table[c][v] += n
    ids = sorted(set(live) | set(gone))
    return _Found(
        {k: _hist(counted, h) for k, h in pending.items()},
        [Cohort(i, _hist(counted, live.get(i, Counter())), _hist(counted, gone.get(i, Counter()))) for i in ids],
        _totals(joining),
        _totals(leaving),
        dict(rows),
        sized,
    )


def _sized(rows: Sequence[tuple[Any, ...]]) -> Sized:
    """``queries.members.by_size``'s rows: the cohorts leaving whole, and (cohort NULL) the rows too few to leave."""
    whole = tuple(sorted(int(c) for c, _n in rows if c is not None))
    return Sized(whole, sum(int(n) for c, n in rows if c is None))


def _hist(counted: Sequence[str], counter: Mapping[tuple[str | None, ...], int]) -> Histogram:
    items = sorted(counter.items(), key=lambda kv: repr(kv[0]))
    return ([dict(zip(counted, v)) for v, _n in items], np.asarray([n for _v, n in items], dtype=np.int64))


def _totals(table: Mapping[str, Counter[str | None]]) -> dict[str, dict[str, int]]:
    return {c: {str(v): n for v, n in counts.items() if v is not None} for c, counts in table.items()}


def _numeric(s: Series) -> dict[str, bool]:
    return {c: bool(s.wh.columns[c].kind is not None and s.wh.columns[c].kind.numeric) for c in s.counted}


def _erase(s: Series, members: sa.Table) -> int:
    """``--erase-departed``: every stand-in leaves tonight; returns how many (docs/series.md §4)."""
    standing = sum(int(r[-1]) for r in s.session.rows(mq.cells(members, [], [mq.GONE]), "counting stand-ins"))
    s.session.execute(mq.erase(members), "erasing the departed")
    return standing


def _take_over(s: Series, members: sa.Table, version: int) -> int:
    """Waiting members whose row equals a stand-in's take it over (``queries.members.takeovers``): published
    tonight in that cohort, the version's rows unchanged (docs/series.md §2); returns how many."""
    what = "handing stand-ins' rows to waiting members with the same row"
    s.session.execute(mq.takeovers(members), what)
    taken = int(s.session.rows(mq.taking_count(), what)[0][0])
    if taken:
        s.session.change([mq.taken_over(members), mq.take_over(members, version)], what)
    s.session.execute(q.drop_table(mq.TAKING), what)
    return taken


def _withdraw(s: Series, members: sa.Table, found: _Found, checks: Checks) -> int:
    """After an erasure: cohorts whose rows left now hold fewer than ``batch`` rows or fail the models leave the
    release whole, their people waiting again; returns how many rows (each exposed to intersection between its old
    cohort and the next: docs/series.md §2)."""
    gone = [
        c
        for c in found.cohorts
        if 0 < cohorts.rows(c.live)
        and (cohorts.rows(c.live) < checks.batch or not checks.passes(c.live, checks.leaving))
    ]
    if not gone:
        return 0
    what = "withdrawing cohorts an erasure left too small"
    leaving = mq.leaving_table()
    s.session.execute(create_table(leaving), what)
    s.session.bulk_load(leaving, [(c.id,) for c in gone], what)
    s.session.execute(mq.withdraw(members), what)
    s.session.execute(q.drop_table(mq.LEAVING), what)
    return sum(cohorts.rows(c.live) for c in gone)


def _apply(s: Series, members: sa.Table, plan: cohorts.Plan, next_cohort: int, version: int) -> int:
    """The plan, applied to the members table; returns the next free cohort id."""
    qis = list(s.wh.attributes)
    what = "applying the series step"
    changes: list[sa.Update | sa.Delete] = []
    if plan.remove:
        leaving = mq.leaving_table()
        s.session.execute(create_table(leaving), what)
        s.session.bulk_load(leaving, [(c,) for c in plan.remove], what)
        changes.append(mq.depart(members))
    if plan.form:
        forming = mq.forming_table(qis)
        s.session.execute(create_table(forming), what)
        s.session.bulk_load(forming, [(next_cohort + i, *key.split(SEP)) for i, key in enumerate(plan.form)], what)
        changes.append(mq.form(members, qis, version))
    s.session.change(changes, what)  # stand-ins of leaving cohorts gone, waiting rows of the new cohorts published
    if plan.form:
        s.session.execute(q.drop_table(mq.FORMING), what)
    if plan.remove:
        s.session.execute(q.drop_table(mq.LEAVING), what)
    return next_cohort + len(plan.form)


def _night(
    s: Series, members: sa.Table, plan: cohorts.Plan, found: _Found, version: int, erased: int, state: State
) -> Night:
    """The version as the members table now holds it, and the catalog's record of the night."""
    totals = Counter[int]()
    for row in s.session.rows(
        mq.cells(members, ["veil_state"], [mq.PENDING, mq.LIVE, mq.GONE]), "counting the series' members"
    ):
        totals[int(row[0])] += int(row[-1])
    info = {
        "policy": "cohort",
        "series": state.series,
        "series_started": state.started,
        "batch": state.batch,
        "cohorts_formed": len(plan.form),
        "cohorts_left": len(plan.remove),
        "rows_deferred": totals[mq.PENDING],
        "standing_in": totals[mq.GONE],
        "waiting": dict(plan.joining),
        "standing": dict(plan.leaving),
        "erased": erased,
        **({"previous_published": s.carried} if s.carried is not None else {}),
    }
    published = totals[mq.LIVE] + totals[mq.GONE]

    def check(block_rows: sa.Table) -> dict[str, float | None]:
        return verify(s, members, block_rows, version)

    return Night(
        mq.shown(members, list(s.published), version), check, published, totals[mq.PENDING], totals[mq.GONE], info
    )


def verify(s: Series, members: sa.Table, block_rows: sa.Table, version: int) -> dict[str, float | None]:
    """Version ``version``, recounted by the database from its published rows (``block_rows``), must hold exactly
    the members published or standing in, and every published block must pass every model (judged against the
    published table's distribution); returns each model's achieved level."""
    columns = [*s.wh.attributes, *s.counted]
    d = len(s.wh.attributes)

    def read(stmt: sa.Select[Any]) -> Counter[tuple[Any, ...]]:
        return Counter(
            {tuple(canonical(v) for v in r[:-1]): int(r[-1]) for r in s.session.rows(stmt, "recounting the release")}
        )

    recount = read(mq.published_cells(block_rows, columns, version))
    if recount != read(mq.cells(members, columns, [mq.LIVE, mq.GONE])):
        raise ReleaseError(
            "verification failed: the rows counted from the published version differ from the "
            "series' members published or standing in"
        )
    if not recount:
        return {_label(m): None for m in s.config.models}
    blocks: dict[tuple[Any, ...], Counter[tuple[Any, ...]]] = defaultdict(Counter)
    table: dict[str, Counter[str | None]] = {c: Counter() for c in s.counted}
    for key, n in recount.items():
        blocks[key[:d]][key[d:]] += n
        for c, v in zip(s.counted, key[d:]):
            table[c][v] += n
    judge = Judge(s.config.models, s.counted, _numeric(s))
    ref = judge.reference(_totals(table))
    entries = []
    for hist in blocks.values():
        values, counts = _hist(s.counted, hist)
        entries.append((judge.codes(s.counted, values, ref), counts, judge.applicable(s.counted), ref))
    full = Judge.as_blocks(entries)
    achieved: dict[str, float | None] = {}
    for model in s.config.models:
        v = model.check(full)
        if not v.passed.all():
            raise ReleaseError(
                f"verification failed: {model.describe()} does not hold on {int((~v.passed).sum())} released block(s)"
            )
        achieved[_label(model)] = v.achieved
    return achieved


def _label(model: Any) -> str:
    return f"{model.type}:{model.attribute}" if model.attribute else model.type


def audit(
    session: Session, tables: catalog.CatalogTables, config: Config, name: str, history: Sequence[Mapping[str, Any]]
) -> dict[str, Any] | None:
    """``veil audit --series`` for a cohort series (docs/series.md §6): the current series' state, whether every
    cohort's published rows hold at least ``batch`` rows and pass the models (they must), every series start after
    the first and every erasure (``history``: each published version's ``series`` record)."""
    state = load(session, tables, name, Runs.read(session, tables.releases, name))
    if state is None:
        return None
    qis, counted = list(config.attributes), list(sensitive_needed(config))
    schema = tables.series_state.schema or ""
    members = relation(state.members, schema, "veil_state", "veil_cohort", "veil_joined", *qis, *counted)
    published: dict[int, Counter[tuple[str | None, ...]]] = defaultdict(Counter)
    states: Counter[int] = Counter()
    blocks: dict[tuple[Any, ...], Counter[int]] = defaultdict(Counter)
    for st, cohort, *rest in session.rows(mq.histograms(members, qis, counted), "reading the series' members"):
        states[int(st)] += int(rest[-1])
        blocks[tuple(rest[: len(qis)])][int(st)] += int(rest[-1])
        if st != mq.PENDING:
            published[int(cohort)][tuple(canonical(v) for v in rest[len(qis) : -1])] += int(rest[-1])
    small = sum(1 for h in published.values() if 0 < sum(h.values()) < state.batch)
    numeric = {c: all(_number(v[j]) for h in published.values() for v in h) for j, c in enumerate(counted)}
    checks = Checks(Judge(config.models, counted, numeric), {}, _table(counted, published), state.batch)
    failing = sum(1 for h in published.values() if not checks.passes(_hist(counted, h), checks.leaving))
    starts = [
        {
            "version": h["version"],
            "series": h["series"],
            "node": h["node"],
            "previous_published": h["previous_published"],
        }
        for h in history
        if "previous_published" in h
    ]
    return {
        "series": state.series,
        "started_version": state.started,
        "node": list(state.node),
        "batch": state.batch,
        "cohorts": len(published),
        "rows_published": states[mq.LIVE] + states[mq.GONE],
        "standing_in": states[mq.GONE],
        "waiting": states[mq.PENDING],
        "cohorts_below_batch": small,
        "cohorts_failing_models": failing,
        "gaps": _gaps(blocks, state.batch).document(),
        "over_time": seriestrend.summary(seriestrend.trend(history, state.series)),
        "longest_wait": _longest_wait(session, members, history),
        "starts": starts,
        "moves": moves(history),
        "erased": sum(int(h.get("erased", 0)) for h in history),
        "withdrawn": sum(int(h.get("withdrawn", 0)) for h in history),
    }


def _gaps(blocks: Mapping[tuple[Any, ...], Counter[int]], batch: int) -> blockgaps.Gaps:
    """Each block's rows shown, standing in and waiting, from its members' states."""
    sizes = {b: (n[mq.LIVE] + n[mq.GONE], n[mq.GONE], n[mq.PENDING]) for b, n in blocks.items()}
    return blockgaps.gaps(sizes, batch)


def _longest_wait(session: Session, members: Any, history: Sequence[Mapping[str, Any]]) -> int | None:
    """Versions since the longest-waiting member arrived (``veil_joined``), at the latest published version; ``None``
    when nobody waits."""
    joined = session.scalar(mq.oldest_waiting(members), "reading the series' members")
    if joined is None or not history:
        return None
    return max(int(h["version"]) for h in history) - int(joined)


def moves(history: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The versions where a series moved its node up (the joiners' delay bound, docs/series.md §2a): coarser
    for every row, so nothing to intersect, but the audit lists them.

    >>> h = [{"version": v, "policy": "cohort", "series": 1, "node": n} for v, n in [(1, [0, 0]), (2, [1, 0])]]
    >>> moves(h)
    [{'version': 2, 'series': 1, 'node': [1, 0], 'previous_node': [0, 0]}]
    """
    out = []
    for before, after in zip(history, history[1:]):
        same = after.get("policy") == "cohort" and after.get("series") == before.get("series")
        if same and after.get("node") != before.get("node"):
            if "previous_published" not in after:
                out.append(
                    {"version": after["version"], "series": after["series"], "node": after["node"],
                     "previous_node": before["node"]}
                )  # fmt: skip
    return out


def _number(text: str | None) -> bool:
    try:
        float(text) if text is not None else None
        return True
    except ValueError:
        return False


def _table(
    counted: Sequence[str], published: Mapping[int, Counter[tuple[str | None, ...]]]
) -> dict[str, dict[str, int]]:
    table: dict[str, Counter[str | None]] = {c: Counter() for c in counted}
    for h in published.values():
        for values, n in h.items():
            for c, v in zip(counted, values):
                table[c][v] += n
    return _totals(table)
