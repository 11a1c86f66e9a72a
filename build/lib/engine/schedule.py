"""``veil schedule``: run a release on a cron schedule, for hosts without an orchestrator.  Stdlib only.

A cron expression has five fields, ``minute hour day-of-month month day-of-week``, each ``*``, a number,
a name (``JAN``-``DEC``, ``SUN``-``SAT``; any case), a range ``1-5``, a step ``*/15`` or ``10-40/5``, or a
comma list of these; day-of-week 0 and 7 are both Sunday.  Macros: ``@hourly``, ``@daily``,
``@midnight``, ``@weekly``, ``@monthly``, ``@yearly``, ``@annually``.  As in Vixie cron, when both
day fields are restricted a day matches if EITHER does; a day field that starts with ``*`` (``*``,
``*/2``) counts as unrestricted, and then a day must match both.

>>> cron = parse_cron("0 2 * * MON-FRI")
>>> cron.next_after(datetime(2025, 1, 3, 2, 0))   # a Friday, 02:00 -> Monday 02:00
datetime.datetime(2025, 1, 6, 2, 0)
"""

from __future__ import annotations

import bisect
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import MAXYEAR, date, datetime, timedelta

# The Gregorian calendar repeats every 400 years, so a spec with no match in that span never matches.
# (A nearer horizon would be wrong: "0 0 29 2 *" waits 8 years from 2096-03-01 to 2104-02-29.)
HORIZON_YEARS = 400
MAX_SLEEP = 60.0  # seconds; the clock is re-read after every chunk (suspends, clock changes)
_LAST_MINUTE = datetime.max.replace(second=0, microsecond=0)

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

MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
WEEKDAYS = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")


@dataclass(frozen=True)
class _Field:
    name: str
    low: int
    high: int
    names: dict[str, int]
    kind: str  # what a name in this field is, for error messages


_FIELDS = (
    _Field("minute", 0, 59, {}, ""),
    _Field("hour", 0, 23, {}, ""),
    _Field("day-of-month", 1, 31, {}, ""),
    _Field("month", 1, 12, {n: i for i, n in enumerate(MONTHS, 1)}, "month name (JAN-DEC)"),
    _Field("day-of-week", 0, 7, {n: i for i, n in enumerate(WEEKDAYS)}, "weekday name (SUN-SAT)"),
)


@dataclass(frozen=True)
class Cron:
    """A parsed cron expression; build it with :func:`parse_cron`.

    Each field is the sorted tuple of values it allows (weekdays 0-6, 0 = Sunday).  ``any_day_of_month``
    and ``any_day_of_week`` record whether that field started with ``*`` (the Vixie rule).

    >>> parse_cron("*/20 9-10 * * *").minutes, parse_cron("@weekly").weekdays
    ((0, 20, 40), (0,))
    """

    text: str = field(compare=False)
    minutes: tuple[int, ...] = field(repr=False)
    hours: tuple[int, ...] = field(repr=False)
    days: tuple[int, ...] = field(repr=False)
    months: tuple[int, ...] = field(repr=False)
    weekdays: tuple[int, ...] = field(repr=False)
    any_day_of_month: bool = field(repr=False)
    any_day_of_week: bool = field(repr=False)

    def __str__(self) -> str:
        return self.text

    def matches_day(self, day: date) -> bool:
        """Whether ``day`` matches the month, day-of-month and day-of-week fields.

        >>> cron = parse_cron("0 0 13 * FRI")        # the 13th OR any Friday
        >>> [cron.matches_day(date(2025, 1, d)) for d in (13, 17, 14)]   # Mon 13th, Fri 17th, Tue 14th
        [True, True, False]
        """
        if day.month not in self.months:
            return False
        by_month_day = day.day in self.days
        by_week_day = day.isoweekday() % 7 in self.weekdays
        if self.any_day_of_month or self.any_day_of_week:
            return by_month_day and by_week_day
        return by_month_day or by_week_day

    def matches(self, moment: datetime) -> bool:
        """Whether the minute of ``moment`` (its wall time) is a fire time.

        >>> hourly = parse_cron("@hourly")
        >>> hourly.matches(datetime(2025, 1, 1, 7, 0, 59)), hourly.matches(datetime(2025, 1, 1, 7, 1))
        (True, False)
        """
        return moment.minute in self.minutes and moment.hour in self.hours and self.matches_day(moment.date())

    def next_after(self, moment: datetime) -> datetime:
        """The first fire time strictly after ``moment``'s minute, in ``moment``'s timezone.

        Naive datetimes are wall-clock times and get naive answers.  Aware ones get an answer with the same
        ``tzinfo``, found on the wall clock and always later in real time: a wall time skipped by a DST
        change is the instant zoneinfo maps it to (fold=0), a repeated one its first occurrence still ahead.
        Raises ``ValueError`` if no time within 400 years matches (e.g. ``0 0 30 2 *``).

        >>> parse_cron("0 0 29 2 *").next_after(datetime(2025, 3, 1))
        datetime.datetime(2028, 2, 29, 0, 0)
        >>> parse_cron("*/15 * * * *").next_after(datetime(2025, 12, 31, 23, 59, 30))
        datetime.datetime(2026, 1, 1, 0, 0)
        """
        wall = moment.replace(tzinfo=None, second=0, microsecond=0, fold=0)
        while True:
            wall = self._next_wall(wall)
            if moment.tzinfo is None:
                return wall
            for fold in (0, 1):  # a wall time repeated by a DST change: its first occurrence that is later
                candidate = wall.replace(tzinfo=moment.tzinfo, fold=fold)
                if _seconds_between(moment, candidate) > 0:
                    return candidate

    def _next_wall(self, start: datetime) -> datetime:
        """The first matching naive minute strictly after the naive whole minute ``start``."""
        last_year = min(start.year + HORIZON_YEARS, MAXYEAR)
        t: datetime | None = start + timedelta(minutes=1) if start < _LAST_MINUTE else None
        while t is not None and t.year <= last_year:
            if t.month not in self.months:
                t = _next_month(t)
            elif not self.matches_day(t.date()):
                t = _next_day(t)
            elif (hour := _first_at_least(self.hours, t.hour)) is None:
                t = _next_day(t)
            elif hour != t.hour:
                t = t.replace(hour=hour, minute=0)
            elif (minute := _first_at_least(self.minutes, t.minute)) is None:
                t = _next_day(t) if t.hour == 23 else t.replace(hour=t.hour + 1, minute=0)
            else:
                return t.replace(minute=minute)
        raise ValueError(
            f"cron {self.text!r} never matches (searched {HORIZON_YEARS} years after {start:%Y-%m-%d %H:%M})"
        )


def parse_cron(text: str) -> Cron:
    """Parse a 5-field cron expression or macro; ``ValueError`` (one line, naming field and value) if bad.

    >>> parse_cron("0 2 * * *").hours
    (2,)
    >>> parse_cron("0 24 * * *")
    Traceback (most recent call last):
    ...
    ValueError: cron field 'hour' value 24 is outside 0-23
    """
    stripped = text.strip()
    if stripped.startswith("@"):
        expanded = MACROS.get(stripped.lower())
        if expanded is None:
            raise ValueError(f"unknown cron macro {stripped!r}; expected one of {', '.join(MACROS)}")
        return _parse_fields(stripped, expanded.split())
    parts = stripped.split()
    if len(parts) != len(_FIELDS):
        raise ValueError(
            f"cron expression {text!r} has {len(parts)} fields; expected 5 "
            "(minute hour day-of-month month day-of-week) or a macro such as @daily"
        )
    return _parse_fields(stripped, parts)


def run_schedule(
    cron: Cron,
    job: Callable[[], int],
    *,
    now: Callable[[], datetime] = datetime.now,
    sleep: Callable[[float], None] = time.sleep,
    max_runs: int | None = None,
    log: Callable[[str], None] | None = None,
) -> int:
    """Run ``job`` at every fire time of ``cron``, forever or ``max_runs`` times; return the last exit code.

    ``job`` returns 0 (published or nothing to do), 2 (no node satisfies the models) or 1 (failure); an
    exception it raises is logged and counts as 1, and the loop goes on.  ``KeyboardInterrupt`` (and
    ``SystemExit``) propagate and stop the loop.  ``now`` defaults to naive local wall time, so fire times
    follow the wall clock through DST changes.  Sleeps are at most 60 s with ``now()`` re-read after each.
    Fire times missed while a run overran (or the host slept) are skipped, not caught up, and logged.
    ``log`` (default: a line on stderr) gets one line per run and one per skip.  Returns 0 if nothing ran.

    >>> clock = [datetime(2025, 1, 1, 1, 59)]
    >>> def tick(seconds: float) -> None: clock[0] += timedelta(seconds=seconds)
    >>> run_schedule(parse_cron("0 2 * * *"), lambda: 2, now=lambda: clock[0], sleep=tick, max_runs=1,
    ...              log=print)
    2025-01-01 02:00 exit 2 (no node satisfies the models)
    2
    """
    emit = log if log is not None else _log_to_stderr
    last_code, runs = 0, 0
    fire = cron.next_after(now())
    while max_runs is None or runs < max_runs:
        while (remaining := _seconds_between(now(), fire)) > 0:
            sleep(min(remaining, MAX_SLEEP))
        started = now()
        last_code, detail = _run_job(job)
        runs += 1
        late = f", started late at {started:%Y-%m-%d %H:%M:%S}" if _seconds_between(fire, started) >= 60 else ""
        emit(f"{fire:%Y-%m-%d %H:%M} exit {last_code} ({detail}){late}")
        finished = now()
        fire = first_missed = cron.next_after(fire)
        missed = 0
        while _seconds_between(fire, finished) > 0:  # overran (or slept through) fire times: skip them
            fire, missed = cron.next_after(fire), missed + 1
        if missed:
            emit(
                f"skipped {missed} missed fire time(s) from {first_missed:%Y-%m-%d %H:%M} "
                f"(run overran or host was suspended); next run {fire:%Y-%m-%d %H:%M}"
            )
    return last_code


# -- helpers -------------------------------------------------------------------------------------------


def _parse_fields(text: str, parts: list[str]) -> Cron:
    values = [_parse_field(spec, part) for spec, part in zip(_FIELDS, parts)]
    return Cron(
        text=text,
        minutes=values[0],
        hours=values[1],
        days=values[2],
        months=values[3],
        weekdays=tuple(sorted({v % 7 for v in values[4]})),  # 7 is Sunday too
        any_day_of_month=parts[2].startswith("*"),
        any_day_of_week=parts[4].startswith("*"),
    )


def _parse_field(spec: _Field, text: str) -> tuple[int, ...]:
    """``1,5``, ``1-5``, ``*/15``, ``10-40/5`` ... -> the sorted values, within ``spec.low..spec.high``."""
    where = f"cron field {spec.name!r}"
    values: set[int] = set()
    for item in text.split(","):
        if not item:
            raise ValueError(f"{where} has an empty list item in {text!r}")
        base, slash, step_text = item.partition("/")
        step = 1
        if slash:
            if not (step_text.isascii() and step_text.isdigit() and int(step_text) > 0):
                raise ValueError(f"{where} step {step_text!r} in {item!r} is not a positive integer")
            step = int(step_text)
        if base == "*":
            low, high = spec.low, spec.high
        elif "-" in base:
            low_text, _, high_text = base.partition("-")
            low, high = _value(spec, low_text or base), _value(spec, high_text or base)
            if low > high:
                raise ValueError(f"{where} range {base!r} runs backwards ({low} > {high})")
        elif slash:
            hint = f"{base}-{spec.high}/{step}"
            raise ValueError(f"{where} value {item!r}: a step needs '*' or a range, e.g. {hint!r}")
        else:
            low = high = _value(spec, base)
        values.update(range(low, high + 1, step))
    return tuple(sorted(values))


def _value(spec: _Field, text: str) -> int:
    if text.isascii() and text.isdigit():
        number = int(text)
        if not spec.low <= number <= spec.high:
            raise ValueError(f"cron field {spec.name!r} value {number} is outside {spec.low}-{spec.high}")
        return number
    if text.upper() in spec.names:
        return spec.names[text.upper()]
    expected = f"a number or a {spec.kind}" if spec.kind else "a number"
    raise ValueError(f"cron field {spec.name!r} value {text!r} is not {expected}")


def _first_at_least(values: tuple[int, ...], floor: int) -> int | None:
    index = bisect.bisect_left(values, floor)
    return values[index] if index < len(values) else None


def _next_day(t: datetime) -> datetime | None:
    """Midnight after ``t``; None past the last representable day."""
    return None if t.date() == date.max else datetime.combine(t.date() + timedelta(days=1), datetime.min.time())


def _next_month(t: datetime) -> datetime | None:
    """The first of the month after ``t``; None past the last representable month."""
    if (t.year, t.month) == (MAXYEAR, 12):
        return None
    return datetime(t.year + t.month // 12, t.month % 12 + 1, 1)


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


def _log_to_stderr(line: str) -> None:
    print(f"veil schedule: {line}", file=sys.stderr, flush=True)
