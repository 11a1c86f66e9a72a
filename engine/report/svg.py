"""Small inline SVG charts for the report: a bar chart and grouped horizontal bars.  Strings only, every
label escaped; one ``<rect>`` per bar, so a chart stays a few hundred elements whatever the table's size.

>>> s = bars([("1", 3), ("2-3", 1)], title="block sizes")
>>> s.count("<rect class=\\"bar\\""), "block sizes" in s
(2, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import numpy as np

PALETTE = ("#4c78a8", "#e45756", "#f58518", "#54a24b", "#b279a2", "#9d755d")


def _num(x: float) -> str:
    return f"{x:.1f}"


def bars(bins: Sequence[tuple[str, float]], *, title: str, width: int = 640, height: int = 220,
         color: str = PALETTE[0], marker: tuple[int, str] | None = None, unit: str = "") -> str:
    """A vertical bar chart of ``(label, value)``; ``marker`` = (bin index, text) draws a dashed line
    before that bin (e.g. the configured k)."""
    left, bottom, top = 48, 40, 24
    inner_w, inner_h = width - left - 12, height - bottom - top
    peak = max((v for _, v in bins), default=0) or 1
    step = inner_w / max(len(bins), 1)
    parts = [f'<svg class="chart" role="img" aria-label="{escape(title)}" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">',
             f'<text x="{left}" y="16" class="title">{escape(title)}</text>',
             f'<line x1="{left}" y1="{top + inner_h}" x2="{left + inner_w}" y2="{top + inner_h}" class="axis"/>',
             f'<text x="{left - 6}" y="{top + 4}" class="tick" text-anchor="end">{escape(_short(peak))}</text>']
    for i, (label, value) in enumerate(bins):
        h = inner_h * value / peak
        x = left + i * step
        parts.append(f'<rect class="bar" x="{_num(x + 1)}" y="{_num(top + inner_h - h)}" width="{_num(max(step - 2, 1))}" '
                     f'height="{_num(h)}" fill="{color}"><title>{escape(label)}: {escape(_short(value))}{unit}</title></rect>')
        if len(bins) <= 24 or i % max(1, len(bins) // 12) == 0:
            parts.append(f'<text x="{_num(x + step / 2)}" y="{top + inner_h + 14}" class="tick" '
                         f'text-anchor="middle">{escape(label)}</text>')
    if marker is not None:
        x = left + marker[0] * step
        parts.append(f'<line x1="{_num(x)}" y1="{top}" x2="{_num(x)}" y2="{top + inner_h}" class="marker"/>'
                     f'<text x="{_num(x + 4)}" y="{top - 4}" class="marker-text">{escape(marker[1])}</text>')
    parts.append("</svg>")
    return "".join(parts)


def grouped(categories: Sequence[str], series: Sequence[tuple[str, Sequence[float]]], *, title: str,
            width: int = 640) -> str:
    """Horizontal bars: for each category one bar per series (shares in [0, 1]), with a legend."""
    row, gap, left = 12, 8, 170
    top = 30 + 15 * len(series)
    group_h = row * len(series) + gap
    height = top + group_h * len(categories) + 10
    inner_w = width - left - 50
    parts = [f'<svg class="chart" role="img" aria-label="{escape(title)}" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">',
             f'<text x="8" y="16" class="title">{escape(title)}</text>']
    for s, (name, _) in enumerate(series):
        y = 24 + 15 * s
        parts.append(f'<rect x="{left}" y="{y}" width="10" height="10" fill="{PALETTE[s % len(PALETTE)]}"/>'
                     f'<text x="{left + 14}" y="{y + 9}" class="tick">{escape(_clip(name, 80))}</text>')
    for c, category in enumerate(categories):
        y0 = top + c * group_h
        parts.append(f'<text x="{left - 6}" y="{_num(y0 + group_h / 2)}" class="tick" text-anchor="end">'
                     f'{escape(_clip(category, 26))}</text>')
        for s, (name, values) in enumerate(series):
            v = float(values[c])
            w = inner_w * v
            y = y0 + s * row
            parts.append(f'<rect class="bar" x="{left}" y="{_num(y)}" width="{_num(max(w, 0.5))}" height="{row - 2}" '
                         f'fill="{PALETTE[s % len(PALETTE)]}"><title>{escape(name)} · {escape(category)}: '
                         f'{v:.1%}</title></rect>')
            parts.append(f'<text x="{_num(left + w + 4)}" y="{_num(y + row - 3)}" class="value">{v:.0%}</text>')
    parts.append("</svg>")
    return "".join(parts)


def size_bins(sizes: np.ndarray) -> list[tuple[str, float]]:
    """Block counts in power-of-two size bins: 1, 2-3, 4-7, ... (blocks, not rows).

    >>> size_bins(np.array([1, 2, 3, 4, 4, 9]))
    [('1', 1.0), ('2-3', 2.0), ('4-7', 2.0), ('8-15', 1.0)]
    """
    if len(sizes) == 0:
        return []
    exp = np.floor(np.log2(np.maximum(sizes, 1))).astype(np.int64)
    counts = np.bincount(exp)
    out = []
    for e, n in enumerate(counts.tolist()):
        lo, hi = 2 ** e, 2 ** (e + 1) - 1
        out.append((str(lo) if lo == hi else f"{lo}-{hi}", float(n)))
    return out


def _short(v: float) -> str:
    if float(v).is_integer():
        return f"{int(v):,}"
    return f"{v:.3g}"


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"
