"""``engine.schedule``: cron parsing, next fire times, and the run loop on a fake clock (no real sleeping).

Every expected time is computed by hand from a calendar (2025-01-01 is a Wednesday).
"""

from __future__ import annotations

import doctest
import re
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

import pytest

from engine import schedule
from engine.schedule import Cron, parse_cron, run_schedule

D = datetime


# -- parsing ---------------------------------------------------------------------------------------------


def test_star_means_every_value() -> None:
    cron = parse_cron("* * * * *")
    assert cron.minutes == tuple(range(60))
    assert cron.hours == tuple(range(24))
    assert cron.days == tuple(range(1, 32))
    assert cron.months == tuple(range(1, 13))
    assert cron.weekdays == tuple(range(7))
    assert cron.any_day_of_month and cron.any_day_of_week


@pytest.mark.parametrize(
    ("field", "attribute", "expected"),
    [
        ("7", "minutes", (7,)),
        ("1,5,30", "minutes", (1, 5, 30)),
        ("5,1,5", "minutes", (1, 5)),  # sorted, deduplicated
        ("1-5", "minutes", (1, 2, 3, 4, 5)),
        ("*/15", "minutes", (0, 15, 30, 45)),
        ("10-40/5", "minutes", (10, 15, 20, 25, 30, 35, 40)),
        ("5-10/20", "minutes", (5,)),  # a step longer than the range
        ("0-4,50-59/3", "minutes", (0, 1, 2, 3, 4, 50, 53, 56, 59)),
        ("00", "minutes", (0,)),
        ("*/7", "hours", (0, 7, 14, 21)),
        ("1-31/10", "days", (1, 11, 21, 31)),
    ],
)
def test_numbers_lists_ranges_steps(field: str, attribute: str, expected: tuple[int, ...]) -> None:
    fields = {"minutes": f"{field} * * * *", "hours": f"0 {field} * * *", "days": f"0 0 {field} * *"}
    assert getattr(parse_cron(fields[attribute]), attribute) == expected


@pytest.mark.parametrize(
    ("field", "expected"),
    [("jan", (1,)), ("Jan,MAR,dec", (1, 3, 12)), ("FEB-apr", (2, 3, 4)), ("jun-DEC/3", (6, 9, 12)), ("2,OCT", (2, 10))],
)
def test_month_names_any_case(field: str, expected: tuple[int, ...]) -> None:
    assert parse_cron(f"0 0 1 {field} *").months == expected


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("sun", (0,)),
        ("Mon-FRI", (1, 2, 3, 4, 5)),
        ("sat,SUN", (0, 6)),
        ("7", (0,)),  # 7 is Sunday too
        ("0,7", (0,)),
        ("5-7", (0, 5, 6)),
        ("FRI-7", (0, 5, 6)),
        ("*/2", (0, 2, 4, 6)),
        ("1-7/2", (0, 1, 3, 5)),
    ],
)
def test_weekday_names_and_seven(field: str, expected: tuple[int, ...]) -> None:
    assert parse_cron(f"0 0 * * {field}").weekdays == expected


def test_whitespace_and_text() -> None:
    cron = parse_cron("  0   2\t* *  *  ")
    assert (cron.minutes, cron.hours, cron.text, str(cron)) == ((0,), (2,), "0   2\t* *  *", "0   2\t* *  *")
    assert repr(cron) == "Cron(text='0   2\\t* *  *')"


@pytest.mark.parametrize(
    ("macro", "expanded"),
    [
        ("@hourly", "0 * * * *"),
        ("@daily", "0 0 * * *"),
        ("@midnight", "0 0 * * *"),
        ("@weekly", "0 0 * * 0"),
        ("@monthly", "0 0 1 * *"),
        ("@yearly", "0 0 1 1 *"),
        ("@annually", "0 0 1 1 *"),
        ("@DAILY", "0 0 * * *"),
        (" @Weekly ", "0 0 * * 0"),
    ],
)
def test_macros(macro: str, expanded: str) -> None:
    cron = parse_cron(macro)
    assert cron == parse_cron(expanded)  # the text is not compared
    assert cron.text == macro.strip()


def test_day_fields_restricted_flags_follow_vixie() -> None:
    assert not parse_cron("0 0 1 * MON").any_day_of_month
    assert not parse_cron("0 0 1 * MON").any_day_of_week
    assert parse_cron("0 0 */2 * MON").any_day_of_month  # starts with '*': unrestricted, as in Vixie cron
    assert not parse_cron("0 0 1-31/2 * MON").any_day_of_month
    assert parse_cron("0 0 1 * *").any_day_of_week


FIELDS_HINT = "(minute hour day-of-month month day-of-week) or a macro such as @daily"
MACRO_LIST = "@hourly, @daily, @midnight, @weekly, @monthly, @yearly, @annually"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("60 * * * *", "cron field 'minute' value 60 is outside 0-59"),
        ("0 24 * * *", "cron field 'hour' value 24 is outside 0-23"),
        ("0 0 0 * *", "cron field 'day-of-month' value 0 is outside 1-31"),
        ("0 0 32 * *", "cron field 'day-of-month' value 32 is outside 1-31"),
        ("0 0 * 0 *", "cron field 'month' value 0 is outside 1-12"),
        ("0 0 * 13 *", "cron field 'month' value 13 is outside 1-12"),
        ("0 0 * * 8", "cron field 'day-of-week' value 8 is outside 0-7"),
        ("0 10-24 * * *", "cron field 'hour' value 24 is outside 0-23"),
        ("0 0 * FOO *", "cron field 'month' value 'FOO' is not a number or a month name (JAN-DEC)"),
        ("0 0 * MON *", "cron field 'month' value 'MON' is not a number or a month name (JAN-DEC)"),
        ("0 0 * JANUARY *", "cron field 'month' value 'JANUARY' is not a number or a month name (JAN-DEC)"),
        ("0 0 * * JAN", "cron field 'day-of-week' value 'JAN' is not a number or a weekday name (SUN-SAT)"),
        ("0 0 * * MONDAY", "cron field 'day-of-week' value 'MONDAY' is not a number or a weekday name (SUN-SAT)"),
        ("x * * * *", "cron field 'minute' value 'x' is not a number"),
        ("0 JAN * * *", "cron field 'hour' value 'JAN' is not a number"),
        ("-1 * * * *", "cron field 'minute' value '-1' is not a number"),
        ("5- * * * *", "cron field 'minute' value '5-' is not a number"),
        ("1.5 * * * *", "cron field 'minute' value '1.5' is not a number"),
        ("\u0663 * * * *", "cron field 'minute' value '\u0663' is not a number"),  # an Arabic-Indic 3
        ("1-2-3 * * * *", "cron field 'minute' value '2-3' is not a number"),
        ("5-1 * * * *", "cron field 'minute' range '5-1' runs backwards (5 > 1)"),
        ("0 0 * * FRI-MON", "cron field 'day-of-week' range 'FRI-MON' runs backwards (5 > 1)"),
        ("*/0 * * * *", "cron field 'minute' step '0' in '*/0' is not a positive integer"),
        ("*/ * * * *", "cron field 'minute' step '' in '*/' is not a positive integer"),
        ("0 */x * * *", "cron field 'hour' step 'x' in '*/x' is not a positive integer"),
        ("*/5/2 * * * *", "cron field 'minute' step '5/2' in '*/5/2' is not a positive integer"),
        ("5/15 * * * *", "cron field 'minute' value '5/15': a step needs '*' or a range, e.g. '5-59/15'"),
        ("1,,2 * * * *", "cron field 'minute' has an empty list item in '1,,2'"),
        ("0 0 1, * *", "cron field 'day-of-month' has an empty list item in '1,'"),
        ("0 2 * *", f"cron expression '0 2 * *' has 4 fields; expected 5 {FIELDS_HINT}"),
        ("0 2 * * * *", f"cron expression '0 2 * * * *' has 6 fields; expected 5 {FIELDS_HINT}"),
        ("", f"cron expression '' has 0 fields; expected 5 {FIELDS_HINT}"),
        ("@reboot", f"unknown cron macro '@reboot'; expected one of {MACRO_LIST}"),
        ("@daily 5", f"unknown cron macro '@daily 5'; expected one of {MACRO_LIST}"),
        ("@", f"unknown cron macro '@'; expected one of {MACRO_LIST}"),
    ],
)
def test_parse_errors_name_field_and_value(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        parse_cron(text)
    assert "\n" not in message


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


@pytest.mark.parametrize("spec", ["0 0 30 2 *", "0 0 31 2,4,6,9,11 *", "0 0 31 APR */2"])
def test_impossible_spec_never_matches_quickly(spec: str) -> None:
    started = time.perf_counter()
    message = f"cron {spec!r} never matches (searched 400 years after 2025-01-01 00:00)"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        parse_cron(spec).next_after(D(2025, 1, 1))
    assert time.perf_counter() - started < 0.5


def test_next_after_is_efficient() -> None:
    started = time.perf_counter()
    moment = D(2025, 1, 1)
    for _ in range(200):  # 200 rare fire times: ~1600 years of Feb 29ths
        moment = parse_cron("0 0 29 2 *").next_after(moment)
    assert moment.year > 2800
    assert time.perf_counter() - started < 0.5


def test_every_result_matches_and_nothing_between_is_skipped() -> None:
    """Compare ``next_after`` with brute force minute by minute over a few days."""
    for spec in ("*/7 3-5 * * *", "0 0 13 * FRI", "45 23 28-31 * *", "0 */5 */2 * 1-5"):
        cron = parse_cron(spec)
        moment, end = D(2025, 1, 28), D(2025, 2, 16)
        expected = [t for t in _minutes(moment, end) if cron.matches(t) and t > moment]
        found: list[datetime] = []
        while (moment := cron.next_after(moment)) <= end:
            found.append(moment)
        assert found == expected and found, spec


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
    zoneinfo = pytest.importorskip("zoneinfo")
    try:
        ny = zoneinfo.ZoneInfo("America/New_York")
    except zoneinfo.ZoneInfoNotFoundError:
        pytest.skip("no tz database")
    utc = timezone.utc
    # fall back: 01:10 EST (the second 01:10) -> 01:11 EST, not the earlier 01:11 EDT
    second = D(2025, 11, 2, 1, 10, tzinfo=ny, fold=1)
    nxt = parse_cron("* * * * *").next_after(second)
    assert nxt.astimezone(utc) == D(2025, 11, 2, 6, 11, tzinfo=utc)
    # a daily 01:30 job that ran at the first 01:30 does not run again at the second
    first = D(2025, 11, 2, 1, 30, tzinfo=ny)
    assert parse_cron("30 1 * * *").next_after(first).astimezone(utc) == D(2025, 11, 3, 6, 30, tzinfo=utc)
    # spring forward: 02:30 does not exist; it fires at the instant zoneinfo gives it (03:30 EDT)
    before = D(2025, 3, 9, 1, 59, tzinfo=ny)
    assert parse_cron("30 2 * * *").next_after(before).astimezone(utc) == D(2025, 3, 9, 7, 30, tzinfo=utc)


def test_matches() -> None:
    cron = parse_cron("30 2 13 * FRI")
    assert cron.matches(D(2025, 1, 13, 2, 30, 59))
    assert cron.matches(D(2025, 1, 17, 2, 30))
    assert not cron.matches(D(2025, 1, 14, 2, 30))
    assert not cron.matches(D(2025, 1, 13, 2, 31))


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


def test_runs_at_fire_times_and_sleeps_in_short_chunks() -> None:
    clock = FakeClock(D(2025, 1, 1, 1, 0))
    job, started = _job(clock, [0, 0, 0])
    lines: list[str] = []
    code = run_schedule(parse_cron("0 2 * * *"), job, now=clock.now, sleep=clock.sleep, max_runs=3, log=lines.append)
    assert code == 0
    assert started == [D(2025, 1, 1, 2), D(2025, 1, 2, 2), D(2025, 1, 3, 2)]
    assert lines == [
        "2025-01-01 02:00 exit 0 (published or nothing to do)",
        "2025-01-02 02:00 exit 0 (published or nothing to do)",
        "2025-01-03 02:00 exit 0 (published or nothing to do)",
    ]
    assert max(clock.sleeps) == 60 and sum(clock.sleeps) == 3600 + 2 * 86400
    assert len(clock.sleeps) == 60 + 2 * 1440


def test_starts_on_the_minute_from_a_fractional_time() -> None:
    clock = FakeClock(D(2025, 1, 1, 1, 59, 30, 500_000))
    job, started = _job(clock, [2])
    lines: list[str] = []
    code = run_schedule(parse_cron("0 2 * * *"), job, now=clock.now, sleep=clock.sleep, max_runs=1, log=lines.append)
    assert (code, started, clock.sleeps) == (2, [D(2025, 1, 1, 2)], [29.5])
    assert lines == ["2025-01-01 02:00 exit 2 (no node satisfies the models)"]


def test_exit_codes_exceptions_and_last_code() -> None:
    clock = FakeClock(D(2025, 1, 1, 0, 0))
    job, started = _job(clock, [0, 2, 1, RuntimeError("warehouse\ngone"), 7, ValueError("bad")])
    lines: list[str] = []
    code = run_schedule(parse_cron("@hourly"), job, now=clock.now, sleep=clock.sleep, max_runs=6, log=lines.append)
    assert code == 1  # the last run raised
    assert started == [D(2025, 1, 1, h) for h in range(1, 7)]  # the loop went on after failures
    assert lines == [
        "2025-01-01 01:00 exit 0 (published or nothing to do)",
        "2025-01-01 02:00 exit 2 (no node satisfies the models)",
        "2025-01-01 03:00 exit 1 (failed)",
        "2025-01-01 04:00 exit 1 (failed: RuntimeError: warehouse gone)",
        "2025-01-01 05:00 exit 7 (unexpected exit code)",
        "2025-01-01 06:00 exit 1 (failed: ValueError: bad)",
    ]


def test_last_code_after_an_exception_then_success() -> None:
    clock = FakeClock(D(2025, 1, 1, 0, 0))
    job, started = _job(clock, [RuntimeError("boom"), 0])
    lines: list[str] = []
    assert run_schedule(parse_cron("@hourly"), job, now=clock.now, sleep=clock.sleep, max_runs=2, log=lines.append) == 0
    assert len(started) == 2 and lines[0] == "2025-01-01 01:00 exit 1 (failed: RuntimeError: boom)"


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
    assert len(started) == 2 and len(lines) == 1

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
        "2025-01-01 00:10 exit 0 (published or nothing to do)",
        "skipped 2 missed fire time(s) from 2025-01-01 00:20 (run overran or host was suspended); "
        "next run 2025-01-01 00:40",
        "2025-01-01 00:40 exit 0 (published or nothing to do)",
        "skipped 2 missed fire time(s) from 2025-01-01 00:50 (run overran or host was suspended); "
        "next run 2025-01-01 01:10",
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
    assert lines == [
        "2025-01-01 01:00 exit 0 (published or nothing to do), started late at 2025-01-01 03:30:00",
        "skipped 2 missed fire time(s) from 2025-01-01 02:00 (run overran or host was suspended); "
        "next run 2025-01-01 04:00",
        "2025-01-01 04:00 exit 0 (published or nothing to do)",
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


def test_aware_clock() -> None:
    tz = timezone(timedelta(hours=-5))
    clock = FakeClock(D(2025, 1, 1, 23, 0, tzinfo=tz))
    job, started = _job(clock, [0])
    run_schedule(parse_cron("@daily"), job, now=clock.now, sleep=clock.sleep, max_runs=1, log=lambda line: None)
    assert started == [D(2025, 1, 2, 0, 0, tzinfo=tz)] and started[0].utcoffset() == timedelta(hours=-5)


def test_default_log_goes_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    clock = FakeClock(D(2025, 1, 1, 0, 0))
    run_schedule(parse_cron("@hourly"), lambda: 0, now=clock.now, sleep=clock.sleep, max_runs=1)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "veil schedule: 2025-01-01 01:00 exit 0 (published or nothing to do)\n"


def test_docstring_examples() -> None:
    failed, attempted = doctest.testmod(schedule)
    assert attempted >= 10 and failed == 0


def test_cron_is_frozen_and_hashable() -> None:
    cron = parse_cron("@daily")
    with pytest.raises(AttributeError):
        cron.hours = (1,)  # type: ignore[misc]
    assert {cron, parse_cron("0 0 * * *")} == {cron}
    assert isinstance(cron, Cron)
