"""``veil schedule``: run a release on a cron schedule, for hosts without an orchestrator.

Cron expressions are parsed and stepped by cronsim (the maintained library behind Healthchecks.io): five
fields ``minute hour day-of-month month day-of-week``, each ``*``, a number, a name (``JAN``-``DEC``,
``SUN``-``SAT``; any case), a range, a step or a comma list; day-of-week 0 and 7 are both Sunday; when both
day fields are restricted a day matches if EITHER does (a field starting with ``*`` is unrestricted); and
Debian cron's daylight-saving rules (a time skipped by a DST change runs when the clock jumps, a repeated
time runs once).  The macros ``@hourly``, ``@daily``, ``@midnight``, ``@weekly``, ``@monthly``,
``@yearly`` and ``@annually`` are expanded here.

Veil keeps its own loop (:func:`run_schedule`): short sleeps that re-read the clock, fire times missed while
a run overran (or the host slept) skipped and logged, never caught up.

>>> cron = parse_cron("0 2 * * MON-FRI")
>>> cron.next_after(datetime(2025, 1, 3, 2, 0))   # a Friday, 02:00 -> Monday 02:00
datetime.datetime(2025, 1, 6, 2, 0)
>>> cron.describe()
'At 02:00 on Monday through Friday'
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, tzinfo

from cronsim import CronSim, CronSimError

from veil import log as veil_log

MAX_SLEEP = 60.0  # seconds; the clock is re-read after every chunk (suspends, clock changes)

EXIT_MEANINGS = {0: "published or nothing to do", 1: "failed", 2: "no node satisfies the models"}

MACROS = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}
FIELDS = "(minute hour day-of-month month day-of-week) or a macro such as @daily"


@dataclass(frozen=True)
class Cron:
    """A checked cron expression; build it with :func:`parse_cron`.  ``expression`` has the five fields."""

    text: str = field(compare=False)
    expression: str

    def __str__(self) -> str:
        return self.text

    def next_after(self, moment: datetime) -> datetime:
        """The first fire time strictly after ``moment``'s minute, in ``moment``'s timezone.

        Naive datetimes are wall-clock times and get naive answers; aware ones get aware answers that are
        always later in real time.  ``ValueError`` if no time within 50 years matches.

        >>> parse_cron("0 0 29 2 *").next_after(datetime(2025, 3, 1))
        datetime.datetime(2028, 2, 29, 0, 0)
        >>> parse_cron("*/15 * * * *").next_after(datetime(2025, 12, 31, 23, 59, 30))
        datetime.datetime(2026, 1, 1, 0, 0)
        """
        start = moment.replace(second=0, microsecond=0)
        try:
            for candidate in CronSim(self.expression, start):
                if _seconds_between(moment, candidate) > 0:
                    return candidate
        except CronSimError as exc:  # pragma: no cover - the expression was checked by parse_cron
            raise ValueError(f"cron expression {self.text!r}: {exc}") from None
        raise ValueError(
            f"cron expression {self.text!r} never matches (searched 50 years after {moment:%Y-%m-%d %H:%M})"
        )

    def describe(self) -> str:
        """In words, e.g. ``At 02:00`` (cronsim's explanation)."""
        return CronSim(self.expression, datetime(2000, 1, 1)).explain()


def parse_cron(text: str) -> Cron:
    """Check a 5-field cron expression or macro; ``ValueError`` (one line, naming the field) if bad.

    >>> parse_cron("@daily").expression
    '0 0 * * *'
    >>> parse_cron("0 24 * * *")
    Traceback (most recent call last):
    ...
    ValueError: cron expression '0 24 * * *': bad hour
    """
    stripped = text.strip()
    if stripped.startswith("@"):
        expression = MACROS.get(stripped.lower())
        if expression is None:
            raise ValueError(f"unknown cron macro {stripped!r}; expected one of {', '.join(MACROS)}")
    else:
        expression = " ".join(stripped.split())
        count = len(stripped.split())
        if count != 5:
            raise ValueError(f"cron expression {text!r} has {count} fields; expected 5 {FIELDS}")
    try:
        sim = CronSim(expression, datetime(2000, 1, 1))
    except CronSimError as exc:
        fields = expression.split()
        if _valid([*fields[:3], "*", fields[4]]) and _valid([*fields[:2], "*", *fields[3:]]):
            # each field is fine on its own: the days exist, just not in those months
            raise ValueError(
                f"cron expression {stripped!r} never matches: no month of the month field has that day of the month"
            ) from None
        raise ValueError(f"cron expression {stripped!r}: {str(exc).lower()}") from None
    try:
        next(sim)
    except StopIteration:
        raise ValueError(f"cron expression {stripped!r} never matches") from None
    return Cron(text=stripped, expression=expression)


def run_schedule(
    cron: Cron,
    job: Callable[[], int],
    *,
    now: Callable[[], datetime] = datetime.now,
    sleep: Callable[[float], None] = time.sleep,
    max_runs: int | None = None,
    at_start: bool = False,
    log: Callable[[str], None] | None = None,
) -> int:
    """Run ``job`` at every fire time of ``cron``, forever or ``max_runs`` times; return the last exit code.
    With ``at_start`` the first run is at once (it counts towards ``max_runs``), then the fire times follow.

    ``job`` returns 0 (published or nothing to do), 2 (no node satisfies the models) or 1 (failure); an
    exception it raises is logged and counts as 1, and the loop goes on.  ``KeyboardInterrupt`` (and
    ``SystemExit``) propagate and stop the loop.  ``now`` gives the time in the schedule's zone (naive:
    local wall time).  Sleeps are at most 60 s with ``now()`` re-read after each.  Fire times missed while
    a run overran (or the host slept) are skipped, not caught up, and logged.  ``log`` (default: Veil's
    log, INFO) gets a "next run" line before each wait, one line per run and one per skip.

    >>> from datetime import timedelta
    >>> clock = [datetime(2025, 1, 1, 1, 59)]
    >>> def tick(seconds: float) -> None: clock[0] += timedelta(seconds=seconds)
    >>> run_schedule(parse_cron("0 2 * * *"), lambda: 2, now=lambda: clock[0], sleep=tick, max_runs=1,
    ...              log=print)
    next run at 2025-01-01 02:00
    run of 2025-01-01 02:00: exit 2 (no node satisfies the models)
    2
    """
    emit = log if log is not None else _log_info
    last_code, runs = 0, 0
    if at_start and (max_runs is None or max_runs > 0):
        started = now()
        last_code, detail = _run_job(job)
        runs += 1
        emit(f"run at start ({_when(started, seconds=True)}): exit {last_code} ({detail})")
    fire = cron.next_after(now())
    while max_runs is None or runs < max_runs:
        emit(f"next run at {_when(fire)}")
        while (remaining := _seconds_between(now(), fire)) > 0:
            sleep(min(remaining, MAX_SLEEP))
        started = now()
        last_code, detail = _run_job(job)
        runs += 1
        late = f", started late at {_when(started, seconds=True)}" if _seconds_between(fire, started) >= 60 else ""
        emit(f"run of {_when(fire)}: exit {last_code} ({detail}){late}")
        finished = now()
        fire = first_missed = cron.next_after(fire)
        missed = 0
        while _seconds_between(fire, finished) > 0:  # overran (or slept through) fire times: skip them
            fire, missed = cron.next_after(fire), missed + 1
        if missed:
            emit(f"skipped {missed} missed fire time(s) from {_when(first_missed)} (run overran or host was suspended)")
    return last_code


def zone(name: str | None) -> tzinfo | None:
    """The schedule's time zone: an IANA name (``Europe/Paris``, ``UTC``), or ``None`` for local time.

    >>> zone("UTC").key, zone(None)
    ('UTC', None)
    """
    if name is None:
        return None
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name!r}; expected an IANA name such as Europe/Paris or UTC") from None


def clock(tz: tzinfo | None) -> Callable[[], datetime]:
    """``now`` for :func:`run_schedule`: aware in ``tz``, or naive local wall time (follows the host's DST)."""
    return (lambda: datetime.now(tz)) if tz is not None else datetime.now


# -- helpers -------------------------------------------------------------------------------------------


def _valid(fields: list[str]) -> bool:
    try:
        CronSim(" ".join(fields), datetime(2000, 1, 1))
    except CronSimError:
        return False
    return True


def _when(moment: datetime, seconds: bool = False) -> str:
    text = f"{moment:%Y-%m-%d %H:%M:%S}" if seconds else f"{moment:%Y-%m-%d %H:%M}"
    return f"{text} {moment:%Z}".rstrip() if moment.tzinfo is not None else text


def _seconds_between(earlier: datetime, later: datetime) -> float:
    """``later - earlier`` in seconds: real time if both are aware (fold-aware), wall time if naive."""
    if earlier.tzinfo is not None and later.tzinfo is not None:
        return later.timestamp() - earlier.timestamp()
    return (later - earlier).total_seconds()


def _run_job(job: Callable[[], int]) -> tuple[int, str]:
    """Run ``job``: its exit code and what it means; an exception counts as exit code 1."""
    try:
        code = job()
    except Exception as exc:  # noqa: BLE001 - a failed run must not stop the schedule
        return 1, f"failed: {type(exc).__name__}: {' '.join(str(exc).split())}"
    return code, EXIT_MEANINGS.get(code, "unexpected exit code")


def _log_info(line: str) -> None:
    veil_log.log.info(line)
