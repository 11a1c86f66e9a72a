"""``veil.schedule``: cron parsing (cronsim), next fire times, the run loop on a fake clock (no real sleeping),
and ``veil schedule`` itself: preflight, errors, a real scheduled release.

Every expected time is computed by hand from a calendar (2025-01-01 is a Wednesday).
"""

from __future__ import annotations

import doctest
import re
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from pathlib import Path

import pytest

from veil import schedule
from veil.schedule import Cron, parse_cron, run_schedule
from tests.conftest import LOG_LINE, Db, ReleaseSchemas, error_line, inpatient_body, run_veil

D = datetime


# -- parsing (cronsim does the parsing; Veil checks the shape and words the errors) -----------------------


def test_expressions_and_macros() -> None:
    assert parse_cron("  0   2\t* *  *  ").expression == "0 2 * * *"
    assert str(parse_cron("  0   2\t* *  *  ")) == "0   2\t* *  *"
    for macro, expanded in [
        ("@hourly", "0 * * * *"),
        ("@daily", "0 0 * * *"),
        ("@midnight", "0 0 * * *"),
        ("@weekly", "0 0 * * 0"),
        ("@monthly", "0 0 1 * *"),
        ("@yearly", "0 0 1 1 *"),
        ("@annually", "0 0 1 1 *"),
        ("@DAILY", "0 0 * * *"),
        (" @Weekly ", "0 0 * * 0"),
    ]:
        assert parse_cron(macro).expression == expanded and parse_cron(macro).text == macro.strip()


def test_describe_in_words() -> None:
    assert parse_cron("0 2 * * *").describe() == "At 02:00 every day"
    assert parse_cron("*/15 * * * *").describe() == "Every 15th minute of every hour"


FIELDS_HINT = "(minute hour day-of-month month day-of-week) or a macro such as @daily"
MACRO_LIST = "@hourly, @daily, @midnight, @weekly, @monthly, @yearly, @annually"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("60 * * * *", "cron expression '60 * * * *': bad minute"),
        ("0 24 * * *", "cron expression '0 24 * * *': bad hour"),
        ("0 0 0 * *", "cron expression '0 0 0 * *': bad day-of-month"),
        ("0 0 32 * *", "cron expression '0 0 32 * *': bad day-of-month"),
        ("0 0 * 13 *", "cron expression '0 0 * 13 *': bad month"),
        ("0 0 * MON *", "cron expression '0 0 * MON *': bad month"),
        ("0 0 * * 8", "cron expression '0 0 * * 8': bad day-of-week"),
        ("0 0 * * MONDAY", "cron expression '0 0 * * MONDAY': bad day-of-week"),
        ("0 0 * * FRI-MON", "cron expression '0 0 * * FRI-MON': bad day-of-week"),
        ("x * * * *", "cron expression 'x * * * *': bad minute"),
        ("5-1 * * * *", "cron expression '5-1 * * * *': bad minute"),
        ("*/0 * * * *", "cron expression '*/0 * * * *': bad minute"),
        ("1,,2 * * * *", "cron expression '1,,2 * * * *': bad minute"),
        ("\u0663 * * * *", "cron expression '\u0663 * * * *': bad minute"),  # an Arabic-Indic 3
        (
            "0 0 30 2 *",
            "cron expression '0 0 30 2 *' never matches: no month of the month field has that day of the month",
        ),
        (
            "0 0 31 APR */2",
            "cron expression '0 0 31 APR */2' never matches: no month of the month field has that day of the month",
        ),
        ("0 2 * *", f"cron expression '0 2 * *' has 4 fields; expected 5 {FIELDS_HINT}"),
        ("0 2 * * * *", f"cron expression '0 2 * * * *' has 6 fields; expected 5 {FIELDS_HINT}"),  # no seconds
        ("", f"cron expression '' has 0 fields; expected 5 {FIELDS_HINT}"),
        ("@reboot", f"unknown cron macro '@reboot'; expected one of {MACRO_LIST}"),
        ("@daily 5", f"unknown cron macro '@daily 5'; expected one of {MACRO_LIST}"),
    ],
)
def test_parse_errors_name_the_field(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        parse_cron(text)


# -- next_after -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "moment", "expected"),
    [
        # seconds dropped; strictly after
        ("* * * * *", D(2025, 1, 1, 10, 0, 30, 500), D(2025, 1, 1, 10, 1)),
        ("* * * * *", D(2025, 1, 1, 10, 0), D(2025, 1, 1, 10, 1)),
        ("0 2 * * *", D(2025, 1, 1, 1, 59, 59), D(2025, 1, 1, 2, 0)),
        ("0 2 * * *", D(2025, 1, 1, 2, 0), D(2025, 1, 2, 2, 0)),
        ("0 2 * * *", D(2025, 1, 1, 2, 0, 59), D(2025, 1, 2, 2, 0)),
        # minute and hour boundaries
        ("*/15 * * * *", D(2025, 1, 1, 10, 14), D(2025, 1, 1, 10, 15)),
        ("*/15 * * * *", D(2025, 1, 1, 10, 45), D(2025, 1, 1, 11, 0)),
        ("10-40/5 * * * *", D(2025, 1, 1, 10, 41), D(2025, 1, 1, 11, 10)),
        ("0 9,17 * * *", D(2025, 1, 1, 9, 0), D(2025, 1, 1, 17, 0)),
        ("0 9,17 * * *", D(2025, 1, 1, 17, 0), D(2025, 1, 2, 9, 0)),
        ("59 23 * * *", D(2025, 1, 1, 23, 59), D(2025, 1, 2, 23, 59)),
        # day, month, year boundaries
        ("0 0 * * *", D(2025, 1, 31, 23, 59), D(2025, 2, 1, 0, 0)),
        ("30 * * * *", D(2025, 12, 31, 23, 45), D(2026, 1, 1, 0, 30)),
        ("0 0 31 * *", D(2025, 1, 31, 0, 0), D(2025, 3, 31, 0, 0)),  # February has no 31st
        ("0 0 31 * *", D(2025, 3, 31, 0, 0), D(2025, 5, 31, 0, 0)),  # nor April
        ("0 12 1 JAN,JUL *", D(2025, 7, 1, 12, 0), D(2026, 1, 1, 12, 0)),
        ("15 3 * DEC *", D(2025, 1, 10, 0, 0), D(2025, 12, 1, 3, 15)),
        # leap days: 2100 is not a leap year
        ("0 0 29 2 *", D(2025, 3, 1), D(2028, 2, 29, 0, 0)),
        ("0 0 29 2 *", D(2024, 2, 28, 23, 59), D(2024, 2, 29, 0, 0)),
        ("0 0 29 2 *", D(2096, 3, 1), D(2104, 2, 29, 0, 0)),
        ("0 0 * 2 *", D(2025, 2, 28, 0, 0), D(2026, 2, 1, 0, 0)),
        # weekdays (2025-01-03 is a Friday, 2025-01-05 a Sunday)
        ("0 9 * * MON-FRI", D(2025, 1, 3, 9, 0), D(2025, 1, 6, 9, 0)),
        ("0 0 * * 7", D(2025, 1, 1), D(2025, 1, 5, 0, 0)),
        ("0 0 * * 0", D(2025, 1, 1), D(2025, 1, 5, 0, 0)),
        ("0 0 * * sat", D(2025, 1, 1), D(2025, 1, 4, 0, 0)),
    ],
)
def test_next_after(spec: str, moment: datetime, expected: datetime) -> None:
    assert parse_cron(spec).next_after(moment) == expected


@pytest.mark.parametrize(
    ("spec", "moment", "expected"),
    [
        # both restricted: the 13th OR a Friday
        ("0 0 13 * FRI", D(2025, 1, 1), D(2025, 1, 3)),
        ("0 0 13 * FRI", D(2025, 1, 10), D(2025, 1, 13)),  # Mon 13th
        ("0 0 13 * FRI", D(2025, 1, 13), D(2025, 1, 17)),
        ("0 0 30 2 MON", D(2025, 1, 1), D(2025, 2, 3)),  # 30 Feb never, but Mondays in February do
        # one is '*': only the other counts
        ("0 0 13 * *", D(2025, 1, 1), D(2025, 1, 13)),
        ("0 0 * * FRI", D(2025, 1, 3), D(2025, 1, 10)),
        # odd days OR Fridays (from Fri 3rd: Sat 4th is even, Sun 5th odd) ...
        ("0 0 1-31/2 * FRI", D(2025, 1, 3), D(2025, 1, 5)),
        # ... but '*/2' starts with '*', so Vixie treats it as unrestricted: odd days AND Fridays
        ("0 0 */2 * FRI", D(2025, 1, 3), D(2025, 1, 17)),
    ],
)
def test_day_of_month_or_day_of_week(spec: str, moment: datetime, expected: datetime) -> None:
    assert parse_cron(spec).next_after(moment) == expected


@pytest.mark.parametrize(
    ("macro", "moment", "expected"),
    [
        ("@hourly", D(2025, 1, 1, 10, 0), D(2025, 1, 1, 11, 0)),
        ("@daily", D(2025, 1, 1, 0, 0), D(2025, 1, 2, 0, 0)),
        ("@midnight", D(2025, 1, 1, 12, 0), D(2025, 1, 2, 0, 0)),
        ("@weekly", D(2025, 1, 1), D(2025, 1, 5)),  # Wed -> Sun
        ("@monthly", D(2025, 1, 15), D(2025, 2, 1)),
        ("@yearly", D(2025, 1, 1), D(2026, 1, 1)),
        ("@annually", D(2025, 6, 1), D(2026, 1, 1)),
    ],
)
def test_macros_next_after(macro: str, moment: datetime, expected: datetime) -> None:
    assert parse_cron(macro).next_after(moment) == expected


def test_rare_fire_times_are_found_quickly() -> None:
    started = time.perf_counter()
    moment = D(2025, 1, 1)
    for _ in range(5):  # five Feb 29ths, 2100 is not a leap year
        moment = parse_cron("0 0 29 2 *").next_after(moment)
    assert moment == D(2044, 2, 29)
    assert time.perf_counter() - started < 2.0


ORACLES: dict[str, Callable[[datetime], bool]] = {
    # independent, hand-written predicates for what each expression means
    "*/7 3-5 * * *": lambda t: t.minute % 7 == 0 and 3 <= t.hour <= 5,
    "0 0 13 * FRI": lambda t: (t.hour, t.minute) == (0, 0) and (t.day == 13 or t.isoweekday() == 5),
    "45 23 28-31 * *": lambda t: (t.hour, t.minute) == (23, 45) and t.day >= 28,
    # '*/2' starts with '*': both day fields must match (odd days AND Monday-Friday)
    "0 */5 */2 * 1-5": lambda t: t.minute == 0 and t.hour % 5 == 0 and t.day % 2 == 1 and t.isoweekday() <= 5,
}


@pytest.mark.parametrize("spec", list(ORACLES))
def test_every_result_matches_and_nothing_between_is_skipped(spec: str) -> None:
    """Compare ``next_after`` with brute force minute by minute over a few weeks."""
    cron, matches = parse_cron(spec), ORACLES[spec]
    moment, end = D(2025, 1, 28), D(2025, 2, 16)
    expected = [t for t in _minutes(moment, end) if matches(t) and t > moment]
    found: list[datetime] = []
    while (moment := cron.next_after(moment)) <= end:
        found.append(moment)
    assert found == expected and found


def _minutes(start: datetime, end: datetime) -> list[datetime]:
    return [start + timedelta(minutes=i) for i in range(int((end - start).total_seconds() // 60) + 1)]


def test_naive_datetimes_are_wall_clock_and_dst_agnostic() -> None:
    # US DST starts 2025-03-09 (02:00-03:00 does not exist in New York) and ends 2025-11-02 (01:00-02:00
    # happens twice).  Naive times know none of that: plain wall-clock arithmetic.
    assert parse_cron("30 2 * * *").next_after(D(2025, 3, 9, 1, 59)) == D(2025, 3, 9, 2, 30)
    assert parse_cron("30 1 * * *").next_after(D(2025, 11, 2, 1, 30)) == D(2025, 11, 3, 1, 30)
    hours = [D(2025, 3, 30)]  # EU DST change day: still 24 hourly fire times
    for _ in range(24):
        hours.append(parse_cron("@hourly").next_after(hours[-1]))
    assert hours[-1] == D(2025, 3, 31) and len(set(hours)) == 25
    assert all(h.tzinfo is None for h in hours)


def test_aware_datetimes_keep_their_timezone() -> None:
    tz = timezone(timedelta(hours=2))
    result = parse_cron("0 2 * * *").next_after(D(2025, 1, 1, 1, 59, tzinfo=tz))
    assert result == D(2025, 1, 1, 2, 0, tzinfo=tz) and result.tzinfo is tz
    utc_result = parse_cron("0 2 * * *").next_after(D(2025, 1, 1, 1, 59, tzinfo=tz).astimezone(timezone.utc))
    assert utc_result == D(2025, 1, 1, 2, 0, tzinfo=timezone.utc)  # from 2024-12-31 23:59 UTC, in UTC


def test_aware_zoneinfo_across_dst_changes() -> None:
    ny = schedule.zone("America/New_York")  # the tzdata dependency provides it where the host has none
    utc = timezone.utc
    # fall back: 01:10 EST (the second 01:10) -> 01:11 EST, not the earlier 01:11 EDT
    second = D(2025, 11, 2, 1, 10, tzinfo=ny, fold=1)
    nxt = parse_cron("* * * * *").next_after(second)
    assert nxt.astimezone(utc) == D(2025, 11, 2, 6, 11, tzinfo=utc)
    # a daily 01:30 job that ran at the first 01:30 does not run again at the second
    first = D(2025, 11, 2, 1, 30, tzinfo=ny)
    assert parse_cron("30 1 * * *").next_after(first).astimezone(utc) == D(2025, 11, 3, 6, 30, tzinfo=utc)
    # spring forward: 02:30 does not exist; as in Debian cron it fires when the clock jumps (03:00 EDT)
    before = D(2025, 3, 9, 1, 59, tzinfo=ny)
    assert parse_cron("30 2 * * *").next_after(before).astimezone(utc) == D(2025, 3, 9, 7, 0, tzinfo=utc)
    # an hourly job runs every real hour through the repeated hour
    moment, hours = D(2025, 11, 2, 0, 0, tzinfo=ny), []
    for _ in range(4):
        moment = parse_cron("@hourly").next_after(moment)
        hours.append(moment.astimezone(utc).hour)
    assert hours == [5, 6, 7, 8]


# -- run_schedule ---------------------------------------------------------------------------------------


class FakeClock:
    """``now`` and ``sleep`` for ``run_schedule``: sleeping just moves the clock."""

    def __init__(self, start: datetime) -> None:
        self.time = start
        self.sleeps: list[float] = []

    def now(self) -> datetime:
        return self.time

    def sleep(self, seconds: float) -> None:
        assert seconds > 0
        self.sleeps.append(seconds)
        self.time += timedelta(seconds=seconds)


Outcome = int | BaseException


def _job(clock: FakeClock, codes: list[Outcome], minutes: float = 0) -> tuple[Callable[[], int], list[datetime]]:
    """A job returning (or raising) ``codes`` in turn, taking ``minutes`` each; and the times it started."""
    started: list[datetime] = []

    def job() -> int:
        started.append(clock.time)
        clock.time += timedelta(minutes=minutes)
        outcome = codes[len(started) - 1]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    return job, started


def _runs(lines: list[str]) -> list[str]:
    return [line for line in lines if not line.startswith("next run at ")]


def test_runs_at_fire_times_and_sleeps_in_short_chunks() -> None:
    clock = FakeClock(D(2025, 1, 1, 1, 0))
    job, started = _job(clock, [0, 0, 0])
    lines: list[str] = []
    code = run_schedule(parse_cron("0 2 * * *"), job, now=clock.now, sleep=clock.sleep, max_runs=3, log=lines.append)
    assert code == 0
    assert started == [D(2025, 1, 1, 2), D(2025, 1, 2, 2), D(2025, 1, 3, 2)]
    assert lines == [
        "next run at 2025-01-01 02:00",
        "run of 2025-01-01 02:00: exit 0 (published or nothing to do)",
        "next run at 2025-01-02 02:00",
        "run of 2025-01-02 02:00: exit 0 (published or nothing to do)",
        "next run at 2025-01-03 02:00",
        "run of 2025-01-03 02:00: exit 0 (published or nothing to do)",
    ]
    assert max(clock.sleeps) == 60 and sum(clock.sleeps) == 3600 + 2 * 86400
    assert len(clock.sleeps) == 60 + 2 * 1440


def test_starts_on_the_minute_from_a_fractional_time() -> None:
    clock = FakeClock(D(2025, 1, 1, 1, 59, 30, 500_000))
    job, started = _job(clock, [2])
    lines: list[str] = []
    code = run_schedule(parse_cron("0 2 * * *"), job, now=clock.now, sleep=clock.sleep, max_runs=1, log=lines.append)
    assert (code, started, clock.sleeps) == (2, [D(2025, 1, 1, 2)], [29.5])
    assert _runs(lines) == ["run of 2025-01-01 02:00: exit 2 (no node satisfies the models)"]


def test_exit_codes_exceptions_and_last_code() -> None:
    clock = FakeClock(D(2025, 1, 1, 0, 0))
    job, started = _job(clock, [0, 2, 1, RuntimeError("warehouse\ngone"), 7, ValueError("bad")])
    lines: list[str] = []
    code = run_schedule(parse_cron("@hourly"), job, now=clock.now, sleep=clock.sleep, max_runs=6, log=lines.append)
    assert code == 1  # the last run raised
    assert started == [D(2025, 1, 1, h) for h in range(1, 7)]  # the loop went on after failures
    assert _runs(lines) == [
        "run of 2025-01-01 01:00: exit 0 (published or nothing to do)",
        "run of 2025-01-01 02:00: exit 2 (no node satisfies the models)",
        "run of 2025-01-01 03:00: exit 1 (failed)",
        "run of 2025-01-01 04:00: exit 1 (failed: RuntimeError: warehouse gone)",
        "run of 2025-01-01 05:00: exit 7 (unexpected exit code)",
        "run of 2025-01-01 06:00: exit 1 (failed: ValueError: bad)",
    ]


def test_last_code_after_an_exception_then_success() -> None:
    clock = FakeClock(D(2025, 1, 1, 0, 0))
    job, started = _job(clock, [RuntimeError("boom"), 0])
    lines: list[str] = []
    assert run_schedule(parse_cron("@hourly"), job, now=clock.now, sleep=clock.sleep, max_runs=2, log=lines.append) == 0
    assert len(started) == 2 and _runs(lines)[0] == "run of 2025-01-01 01:00: exit 1 (failed: RuntimeError: boom)"


def test_a_run_at_start_then_the_fire_times() -> None:
    clock = FakeClock(D(2025, 1, 1, 1, 30, 15))
    job, started = _job(clock, [2, 0, 0], minutes=1)
    lines: list[str] = []
    code = run_schedule(
        parse_cron("0 2 * * *"), job, now=clock.now, sleep=clock.sleep, max_runs=3, at_start=True, log=lines.append
    )
    assert code == 0 and started == [D(2025, 1, 1, 1, 30, 15), D(2025, 1, 1, 2), D(2025, 1, 2, 2)]
    assert lines[:3] == [
        "run at start (2025-01-01 01:30:15): exit 2 (no node satisfies the models)",
        "next run at 2025-01-01 02:00",
        "run of 2025-01-01 02:00: exit 0 (published or nothing to do)",
    ]
    job, started = _job(clock, [0])
    assert run_schedule(parse_cron("@daily"), job, now=clock.now, sleep=clock.sleep, max_runs=0, at_start=True) == 0
    assert started == []  # no runs at all: not even the one at start


def test_no_runs() -> None:
    clock = FakeClock(D(2025, 1, 1))
    job, started = _job(clock, [])
    assert run_schedule(parse_cron("@daily"), job, now=clock.now, sleep=clock.sleep, max_runs=0) == 0
    assert started == [] and clock.sleeps == []


def test_keyboard_interrupt_stops_the_loop() -> None:
    clock = FakeClock(D(2025, 1, 1, 0, 0))
    job, started = _job(clock, [0, KeyboardInterrupt(), 0])
    lines: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        run_schedule(parse_cron("@hourly"), job, now=clock.now, sleep=clock.sleep, log=lines.append)
    assert len(started) == 2 and len(_runs(lines)) == 1

    def interrupted_sleep(seconds: float) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_schedule(parse_cron("@hourly"), lambda: 0, now=clock.now, sleep=interrupted_sleep)


def test_overrun_skips_missed_fire_times() -> None:
    clock = FakeClock(D(2025, 1, 1, 0, 0))
    job, started = _job(clock, [0, 0], minutes=25)  # 00:10 -> 00:35 misses 00:20 and 00:30
    lines: list[str] = []
    run_schedule(parse_cron("*/10 * * * *"), job, now=clock.now, sleep=clock.sleep, max_runs=2, log=lines.append)
    assert started == [D(2025, 1, 1, 0, 10), D(2025, 1, 1, 0, 40)]  # no back-to-back catch-up at 00:35
    assert lines == [
        "next run at 2025-01-01 00:10",
        "run of 2025-01-01 00:10: exit 0 (published or nothing to do)",
        "skipped 2 missed fire time(s) from 2025-01-01 00:20 (run overran or host was suspended)",
        "next run at 2025-01-01 00:40",
        "run of 2025-01-01 00:40: exit 0 (published or nothing to do)",
        "skipped 2 missed fire time(s) from 2025-01-01 00:50 (run overran or host was suspended)",
    ]


def test_run_ending_exactly_at_the_next_fire_time_is_not_a_miss() -> None:
    clock = FakeClock(D(2025, 1, 1, 0, 0))
    job, started = _job(clock, [0, 0, 0], minutes=10)
    lines: list[str] = []
    run_schedule(parse_cron("*/10 * * * *"), job, now=clock.now, sleep=clock.sleep, max_runs=3, log=lines.append)
    assert started == [D(2025, 1, 1, 0, 10), D(2025, 1, 1, 0, 20), D(2025, 1, 1, 0, 30)]
    assert not any(line.startswith("skipped") for line in lines)


def test_suspend_runs_once_late_then_skips() -> None:
    clock = FakeClock(D(2025, 1, 1, 0, 30))
    suspended = [False]

    def sleep(seconds: float) -> None:
        if not suspended[0]:  # the host sleeps through 01:00, 02:00 and 03:00
            suspended[0] = True
            clock.time = D(2025, 1, 1, 3, 30)
        else:
            clock.sleep(seconds)

    job, started = _job(clock, [0, 0])
    lines: list[str] = []
    run_schedule(parse_cron("0 * * * *"), job, now=clock.now, sleep=sleep, max_runs=2, log=lines.append)
    assert started == [D(2025, 1, 1, 3, 30), D(2025, 1, 1, 4, 0)]
    assert _runs(lines) == [
        "run of 2025-01-01 01:00: exit 0 (published or nothing to do), started late at 2025-01-01 03:30:00",
        "skipped 2 missed fire time(s) from 2025-01-01 02:00 (run overran or host was suspended)",
        "run of 2025-01-01 04:00: exit 0 (published or nothing to do)",
    ]


def test_clock_set_back_waits_for_the_wall_clock() -> None:
    clock = FakeClock(D(2025, 1, 1, 1, 0))
    set_back = [False]

    def sleep(seconds: float) -> None:
        clock.sleep(seconds)
        if not set_back[0]:
            set_back[0] = True
            clock.time -= timedelta(hours=5)

    job, started = _job(clock, [0])
    run_schedule(parse_cron("0 2 * * *"), job, now=clock.now, sleep=sleep, max_runs=1, log=lambda line: None)
    assert started == [D(2025, 1, 1, 2, 0)]
    assert max(clock.sleeps) <= 60


def test_aware_clock_names_the_zone() -> None:
    paris = schedule.zone("Europe/Paris")
    clock = FakeClock(D(2025, 1, 1, 23, 0, tzinfo=paris))
    job, started = _job(clock, [0])
    lines: list[str] = []
    run_schedule(parse_cron("@daily"), job, now=clock.now, sleep=clock.sleep, max_runs=1, log=lines.append)
    assert started == [D(2025, 1, 2, 0, 0, tzinfo=paris)] and started[0].utcoffset() == timedelta(hours=1)
    assert lines[0] == "next run at 2025-01-02 00:00 CET"


def test_zone_names() -> None:
    assert schedule.zone(None) is None and schedule.clock(None)().tzinfo is None
    assert schedule.clock(schedule.zone("UTC"))().utcoffset() == timedelta(0)
    with pytest.raises(ValueError, match="unknown time zone 'Mars/Olympus'; expected an IANA name"):
        schedule.zone("Mars/Olympus")


def test_default_log_is_veils_log() -> None:
    import io

    from veil import log

    stream = io.StringIO()
    log.setup("schedule", stream=stream, terminal=False)
    clock = FakeClock(D(2025, 1, 1, 0, 0))
    run_schedule(parse_cron("@hourly"), lambda: 0, now=clock.now, sleep=clock.sleep, max_runs=1)
    lines = stream.getvalue().splitlines()
    assert [line.split(" ", 1)[1] for line in lines] == [
        "INFO veil schedule: next run at 2025-01-01 01:00",
        "INFO veil schedule: run of 2025-01-01 01:00: exit 0 (published or nothing to do)",
    ]


def test_docstring_examples() -> None:
    failed, attempted = doctest.testmod(schedule, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert attempted >= 8 and failed == 0


def test_cron_is_frozen_and_hashable() -> None:
    cron = parse_cron("@daily")
    with pytest.raises(AttributeError):
        cron.expression = "0 1 * * *"  # type: ignore[misc]
    assert {cron, parse_cron("0 0 * * *")} == {cron}
    assert isinstance(cron, Cron)


# -- veil schedule (the command) ---------------------------------------------------------------------------


def test_preflight_fails_at_once_with_one_line(inpatient: Db, release_schemas: ReleaseSchemas) -> None:
    path = inpatient.write_config("patients", inpatient_body() + release_schemas.section())
    started = time.monotonic()
    res = run_veil("schedule", "--config", str(path), "--cron", "0 2 * * *", timeout=60)
    assert res.returncode == 1 and "no Veil catalog" in error_line(res.stderr) and "veil init" in res.stderr
    assert run_veil("init", "--config", str(path)).returncode == 0
    missing = inpatient.write_config("no_such_table", inpatient_body() + release_schemas.section(), name="m.toml")
    res = run_veil("schedule", "--config", str(missing), "--cron", "0 2 * * *", timeout=60)
    assert res.returncode == 1 and "no_such_table' does not exist" in error_line(res.stderr)
    no_release = inpatient.write_config("patients", inpatient_body(), name="n.toml")
    res = run_veil("schedule", "--config", str(no_release), "--cron", "0 2 * * *", timeout=60)
    assert res.returncode == 1 and "needs a [release] table" in error_line(res.stderr)
    assert time.monotonic() - started < 60  # failed at once, not at 2 a.m.


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--cron", "0 2 * *"], "--cron: cron expression '0 2 * *' has 4 fields"),
        (["--cron", "0 25 * * *"], "--cron: cron expression '0 25 * * *': bad hour"),
        (["--cron", "@daily", "--tz", "Mars/Olympus"], "--tz: unknown time zone 'Mars/Olympus'"),
    ],
)
def test_bad_cron_or_zone_is_one_line(tmp_path: Path, flags: list[str], message: str) -> None:
    path = tmp_path / "veil.toml"
    path.write_text(
        '[source]\nurl = "duckdb:///w.duckdb"\ntable = "raw.patients"\n'
        + inpatient_body()
        + '\n[release]\nname = "inpatient"\n',
        encoding="utf-8",
    )
    res = run_veil("schedule", "--config", str(path), *flags, timeout=60)
    assert res.returncode == 1 and message in error_line(res.stderr)


def test_schedule_runs_a_release_and_says_what_it_does(inpatient: Db, release_schemas: ReleaseSchemas) -> None:
    """End to end: preflight, one release at start (``--now``: no waiting for a whole minute; the waits are
    tested on a fake clock above) in a fresh process, its log lines in the same format, the run's exit code."""
    path = inpatient.write_config("patients", inpatient_body() + release_schemas.section())
    assert run_veil("init", "--config", str(path)).returncode == 0
    res = run_veil(
        "schedule", "--config", str(path), "--cron", "0 2 * * *", "--tz", "UTC", "--max-runs", "1", "--now", timeout=240
    )
    assert res.returncode == 0, res.stderr
    lines = res.stderr.splitlines()
    assert all(LOG_LINE.match(line) for line in lines), res.stderr
    messages = [line.split(": ", 1)[1] for line in lines]
    assert messages[0].startswith("preflight passed: ") and "source table" in messages[0]
    assert messages[1] == "schedule 0 2 * * * (At 02:00 every day), UTC"
    assert any(" veil release: " in line and "materializing" in line for line in lines)  # the child's log
    assert re.fullmatch(r"run at start \(\S+ \S+ UTC\): exit 0 \(published or nothing to do\)", messages[-1])
    assert not any(m.startswith("next run at") for m in messages)  # --max-runs 1: the run at start was the one
    assert "published 'inpatient' version 1" in res.stdout
    assert [r[0] for r in inpatient.query(f'SELECT version FROM "{release_schemas.out}".inpatient_releases')] == [1]
