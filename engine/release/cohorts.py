"""The series step's decisions (docs/series.md §2): which waiting people enter the release tonight, and which
stand-ins leave it.  Pure: histograms in, a plan out; no SQL.

A release's rows belong to *cohorts*: the people of one block who entered the release together (the first
version: each block its own cohort).  A cohort's rows change in two ways only, and each is a *batch* a reader
can isolate, knowing who joined and who left:

- **a cohort forms** — the block's waiting people (joiners, people of suppressed blocks) enter together, when
  they are at least ``batch`` rows (after a series' first version, at least ``series_cohort`` where that is more)
  and their rows pass every model as a block;
- **stand-ins leave** — rows of people who left stay published (*stand-ins*) until they leave together: all
  of the cohort's stand-ins at once, when they are at least ``batch`` rows, the cohort keeps at least
  ``batch`` live rows, and both the leaving rows and the rows that stay pass every model as blocks; a cohort
  whose people all left leaves whole (a reader knew its rows already).

Each of those that depends on more than sizes — a model's verdict — is taken only when the night's coin for it
comes up (``veil.release.secret``): a batch that passes may still wait, so its waiting tells a reader nothing
a value could explain.  So every batch a reader can isolate, in every version, holds at least ``batch`` rows and
passes the models; a person's rows never move between cohorts, so no two batches intersect on anyone.

>>> from veil.models import DistinctLDiversity, KAnonymity
>>> from veil.release.differences import Judge
>>> judge = Judge((KAnonymity(k=2), DistinctLDiversity(attribute="d", l=2)), ("d",), {"d": False})
>>> hist = lambda *vs: ([{"d": v} for v in vs], np.ones(len(vs), dtype=np.int64))
>>> table = {"d": {"flu": 3, "cold": 3}}
>>> class Heads:
...     def flip(self, kind, key): return True
>>> plan = decide({"a*": hist("flu", "cold"), "b*": hist("flu", "flu")}, [Cohort(1, hist("flu", "cold"),
...               hist("flu", "cold"))], Checks(judge, table, table, 2), Heads())
>>> plan.form, plan.remove      # b*'s two flu cases wait (not 2-diverse); cohort 1's stand-ins leave
(['a*'], [1])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from veil.release.differences import Judge

Histogram = tuple[list[Mapping[str, str | None]], np.ndarray]  # value tuples (texts) and their rows
REASONS = ("too few", "models", "coin")  # why a batch waits (the catalog's record, never an analyst's)


class Flipper(Protocol):
    def flip(self, kind: str, key: str) -> bool: ...


@dataclass(frozen=True)
class Cohort:
    """One cohort's published rows: of people still in the source (``live``) and stand-ins (``gone``)."""

    id: int
    live: Histogram
    gone: Histogram


@dataclass(frozen=True)
class Checks:
    """How a batch is judged: the release's models (``judge``) against the table it enters (``joining``: the
    source's distribution tonight) or leaves (``leaving``: the last version's), the smallest batch, and the fewest
    rows a cohort forms with (``cohort``, ``[release] series_cohort``; at most ``batch`` changes nothing)."""

    judge: Judge
    joining: Mapping[str, Mapping[str, int]]
    leaving: Mapping[str, Mapping[str, int]]
    batch: int
    cohort: int = 0

    def passes(self, hist: Histogram, table: Mapping[str, Mapping[str, int]]) -> bool:
        values, counts = hist
        keep = counts > 0
        if not keep.any():
            return True
        values = [v for v, k in zip(values, keep.tolist()) if k]
        ref = self.judge.reference(table)
        columns = list(self.judge.sensitive)
        entry = (self.judge.codes(columns, values, ref), counts[keep], self.judge.applicable(columns), ref)
        return not bool(self.judge.failing([entry])[0])


@dataclass(frozen=True)
class Sized:
    """Cohorts whose decision their sizes make, counted by the database without their values (so a night reads
    the values of only the cohorts whose stand-ins may leave): ``whole``, the cohorts whose people all left — each
    leaves whole — and ``too_few``, the stand-in rows of cohorts with fewer than ``batch`` stand-ins or live rows,
    which wait.  None of them is among ``decide``'s ``cohorts``."""

    whole: tuple[int, ...] = ()
    too_few: int = 0


@dataclass
class Plan:
    """Tonight's decisions, and why the rest waits (rows per reason; the catalog's record only)."""

    form: list[str] = field(default_factory=list)
    remove: list[int] = field(default_factory=list)
    joining: dict[str, int] = field(default_factory=lambda: dict.fromkeys(REASONS, 0))
    leaving: dict[str, int] = field(default_factory=lambda: dict.fromkeys(REASONS, 0))


def rows(hist: Histogram) -> int:
    return int(hist[1].sum())


def decide(
    pending: Mapping[str, Histogram], cohorts: Sequence[Cohort], checks: Checks, coins: Flipper, sized: Sized = Sized()
) -> Plan:
    """The night's plan: the blocks whose waiting rows form a cohort (in block order, which the new cohorts' ids
    follow: whatever order the database returned the blocks in, a night run again numbers its cohorts alike and
    draws their coins alike), the cohorts whose stand-ins leave (in cohort order), from the histograms of
    ``cohorts`` and the sizes of the others (``sized``)."""
    plan = Plan()
    for block, hist in sorted(pending.items(), key=lambda item: item[0]):
        why = _join(hist, checks, coins, block)
        if why is None:
            plan.form.append(block)
        else:
            plan.joining[why] += rows(hist)
    for cohort in cohorts:
        if rows(cohort.gone) == 0:
            continue
        why = _leave(cohort, checks, coins)
        if why is None:
            plan.remove.append(cohort.id)
        else:
            plan.leaving[why] += rows(cohort.gone)
    plan.remove = sorted([*plan.remove, *sized.whole])
    plan.leaving["too few"] += sized.too_few
    return plan


def by_size(cohorts: Sequence[Cohort], batch: int) -> tuple[list[Cohort], Sized]:
    """``cohorts`` split as a night's statements split them (``queries.members.undecided`` and ``by_size``): the
    cohorts whose stand-ins may leave tonight — at least ``batch`` stand-ins and ``batch`` live rows — and the
    sizes of the others, with which ``decide`` makes the plan it makes from all of their histograms.

    >>> one = lambda n: ([{"d": "flu"}], np.asarray([n]))
    >>> cohorts = [Cohort(1, one(3), one(2)), Cohort(2, one(0), one(1)), Cohort(3, one(1), one(2)), Cohort(4, one(2), one(0))]
    >>> undecided, sized = by_size(cohorts, 2)
    >>> [c.id for c in undecided], sized.whole, sized.too_few
    ([1], (2,), 2)
    """
    undecided, whole, too_few = [], [], 0
    for c in cohorts:
        live, gone = rows(c.live), rows(c.gone)
        if gone == 0:
            continue
        if live == 0:
            whole.append(c.id)
        elif gone < batch or live < batch:
            too_few += gone
        else:
            undecided.append(c)
    return undecided, Sized(tuple(whole), too_few)


def _join(hist: Histogram, checks: Checks, coins: Flipper, block: str) -> str | None:
    """Why ``block``'s waiting rows do not form a cohort tonight, or ``None``."""
    if rows(hist) < max(checks.batch, checks.cohort):
        return "too few"
    if not checks.passes(hist, checks.joining):
        return "models"
    return None if coins.flip("join", block) else "coin"


def _leave(cohort: Cohort, checks: Checks, coins: Flipper) -> str | None:
    """Why ``cohort``'s stand-ins do not leave tonight, or ``None``.  A cohort with no live row leaves whole:
    sizes alone decide it, and a reader knew its rows."""
    live, gone = rows(cohort.live), rows(cohort.gone)
    if live == 0:
        return None
    if gone < checks.batch or live < checks.batch:
        return "too few"
    if not (checks.passes(cohort.gone, checks.leaving) and checks.passes(cohort.live, checks.leaving)):
        return "models"
    return None if coins.flip("leave", str(cohort.id)) else "coin"
