"""Numbers as the report prints them, for people: thousands separators, no scientific notation, shares as
percentages; and "nice" bin edges for numeric distributions.  Pure Python and numpy.

>>> human(100719234.0), human(5.973467), human(0.0000512), human(None)
('100,719,234', '5.973', '0.0000512', '∞ / undefined')
>>> percent(0.0004), percent(0.125), percent(1.0)
('< 0.1%', '12.5%', '100%')
>>> plain_text("p_out = 5e-05 and 1.00719e+08")
'p_out = 0.00005 and 100,719,000'
>>> nice_edges(12_500.0, 97_800.0).tolist()
[10000.0, 20000.0, 30000.0, 40000.0, 50000.0, 60000.0, 70000.0, 80000.0, 90000.0, 100000.0]
"""

from __future__ import annotations

import math
import re

import numpy as np

UNDEFINED = "∞ / undefined"
_SCIENTIFIC = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?e[-+]?\d+\b", re.IGNORECASE)


def human(x: float | int | None, digits: int = 3) -> str:
    """``x`` for people: whole numbers with thousands separators, large ones rounded to a whole number, others
    with ``digits`` decimals (small ones with ``digits`` significant digits), never in scientific notation."""
    if x is None or not math.isfinite(float(x)):
        return UNDEFINED
    v = float(x)
    if v.is_integer() or abs(v) >= 1000:
        return f"{round(v):,}"
    if abs(v) >= 1:
        return _trim(f"{v:,.{digits}f}")
    return np.format_float_positional(v, precision=digits, unique=True, fractional=False, trim="-")


def _trim(text: str) -> str:
    return text.rstrip("0").rstrip(".") if "." in text else text


def percent(share: float) -> str:
    """A share in [0, 1] as a percentage: one decimal, "< 0.1%" rather than a misleading "0%"."""
    p = 100 * float(share)
    if p == 0:
        return "0%"
    if p < 0.1:
        return "< 0.1%"
    if p > 99.9 and p < 100:
        return "> 99.9%"
    return _trim(f"{p:.1f}") + "%"


def plain_text(text: str) -> str:
    """Rewrite the numbers in scientific notation inside ``text`` (an attack's detail) for people."""
    return _SCIENTIFIC.sub(lambda m: human(float(m.group(0))), text)


def nice_step(span: float, target: int) -> float:
    """A step of 1, 2, 2.5 or 5 times a power of ten giving about ``target`` bins over ``span``.

    >>> nice_step(87_000, 10), nice_step(1.0, 12)
    (10000.0, 0.1)
    """
    raw = span / max(target, 1)
    if raw <= 0 or not math.isfinite(raw):
        return 1.0
    power = 10.0 ** math.floor(math.log10(raw))
    for m in (1.0, 2.0, 2.5, 5.0, 10.0):
        if raw <= m * power * (1 + 1e-9):
            return float(f"{m * power:.12g}")
    return 10 * power


def nice_edges(lo: float, hi: float, target: int = 10) -> np.ndarray:
    """Bin edges on multiples of a nice step covering ``[lo, hi]`` (the last bin includes ``hi``)."""
    if not hi > lo:
        return np.array([lo, lo + 1.0])
    step = nice_step(hi - lo, target)
    start = math.floor(lo / step) * step
    count = max(1, math.ceil((hi - start) / step - 1e-9))
    return np.round(start + step * np.arange(count + 1), 12)
