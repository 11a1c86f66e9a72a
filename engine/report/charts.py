"""The report's charts: Vega-Lite specifications built with Altair from the report's plain values
(``veil.report.content``), rendered to inline SVG offline by vl-convert (Vega's own renderer, no browser, no
network).  Every chart gets aggregated data only (size bins, value bins, nodes per height), so its size does
not grow with the table; every mark carries an ``aria-label`` that the page shows on hover.

Imported only when a report is made (``veil.report`` is loaded lazily by the CLI and the release job).

>>> svg = bars_svg([("a", 3.0), ("b", 1.0)], title="two bars")
>>> svg.startswith("<svg") and svg.count('aria-roledescription="bar"') == 2 and "xlink" not in svg
True
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import altair as alt

from veil.report.content import Distribution, HeightRow, SizeBin
from veil.report.seriesview import SeriesPoint
from veil.report.formatting import human, percent

PASS, FAIL, NONE, CHOSEN, MINIMAL, BELOW_K, TABLE = (
    "#54a24b",
    "#e45756",
    "#c7ccd6",
    "#1f4fd1",
    "#2f6b2a",
    "#e45756",
    "#4c78a8",
)
SERIES = (TABLE, "#f58518", "#b279a2", "#9d755d", "#72b7b2")
WIDE, NARROW = 860, 440  # plot widths (px): a full-width chart, one of a pair
VERDICTS = (("passes", PASS), ("fails", FAIL), ("not evaluated", NONE))  # the lattice chart's stack, bottom up
_GEOMETRY = re.compile(r'(\s(?:d|transform|x|y|x1|x2|y1|y2|width|height|points|viewBox)=")([^"]*)"')
_DECIMALS = re.compile(r"(\d\.\d{2})\d+")  # 111.99999999999999 → 111.99: a hundredth of a pixel is plenty
# the font vl-convert measures labels with (the system's, Debian's default) and the browser then draws them in
FONT = "DejaVu Sans, Verdana, sans-serif"


@lru_cache(maxsize=1)
def _vl_version() -> str:
    """The Vega-Lite version Altair writes, if vl-convert has it, else vl-convert's newest of that major."""
    import vl_convert as vlc

    wanted = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    known = list(vlc.get_vegalite_versions())
    if wanted in known:
        return wanted
    same = [v for v in known if v.split(".")[0] == wanted.split(".")[0]]
    return (same or known)[-1]


def to_svg(chart: alt.TopLevelMixin) -> str:
    """One chart as an inline ``<svg>``: no XML prolog, no xlink namespace, nothing to fetch."""
    import vl_convert as vlc

    spec = _styled(chart).to_dict()
    svg = vlc.vegalite_to_svg(spec, vl_version=_vl_version())
    svg = svg.replace(' xmlns:xlink="http://www.w3.org/1999/xlink"', "")
    svg = _GEOMETRY.sub(lambda m: m.group(1) + _DECIMALS.sub(r"\1", m.group(2)) + '"', svg)
    return re.sub(r"^<\?xml[^>]*>\s*", "", svg)


def _styled(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    return (
        chart.configure(font=FONT, background="white", padding=6)
        .configure_view(stroke=None)
        .configure_axis(
            labelFontSize=11,
            titleFontSize=11,
            titleFontWeight="normal",
            labelLimit=260,
            labelOverlap=True,
            labelSeparation=4,
            titleColor="#5b6475",
            labelColor="#1d2330",
            gridColor="#eef1f5",
            domainColor="#98a1b3",
        )
        .configure_legend(
            orient="top",
            labelFontSize=11,
            titleFontSize=11,
            labelLimit=520,
            symbolType="square",
            columns=1,
            titleFontWeight="normal",
        )
        .configure_header(labelFontSize=11, titleFontSize=11, labelLimit=NARROW)
        .configure_title(fontSize=13, anchor="start", subtitleFontSize=11, subtitleColor="#5b6475", offset=8)
    )


def _data(rows: Sequence[dict[str, Any]]) -> alt.Data:
    return alt.Data(values=list(rows))


def bars_svg(items: Sequence[tuple[str, float]], *, title: str) -> str:
    """A plain horizontal bar chart of ``(label, value)`` (the smallest chart the report can draw)."""
    rows = [{"label": k, "value": v, "detail": f"{k}: {human(v)}"} for k, v in items]
    chart = (
        alt.Chart(_data(rows), title=title)
        .mark_bar(color=TABLE)
        .encode(
            y=alt.Y("label:N", sort=[k for k, _ in items], title=None),
            x=alt.X("value:Q", title=None, axis=alt.Axis(format=",~r")),
            description="detail:N",
        )
        .properties(width=NARROW)
    )
    return to_svg(chart)


def blocks_svg(bins: Sequence[SizeBin], k: int | None) -> str:
    """Blocks by size, and the rows they hold, side by side; bins below k in red."""
    below = f"fewer than k = {human(k)} rows" if k is not None else ""
    rows = [
        {
            "bin": b.label,
            "blocks": b.blocks,
            "rows": b.rows,
            "group": below if b.below_k else ("k or more rows" if k is not None else "blocks"),
            "detail": f"blocks of {b.label} rows: {human(b.blocks)} blocks holding {human(b.rows)} rows",
        }
        for b in bins
    ]
    order = [b.label for b in bins]
    colour = (
        alt.Color("group:N", title=None, scale=alt.Scale(domain=[below, "k or more rows"], range=[BELOW_K, TABLE]))
        if k is not None
        else alt.value(TABLE)
    )
    base = (
        alt.Chart(_data(rows))
        .mark_bar()
        .encode(y=alt.Y("bin:N", sort=order, title="rows per block"), color=colour, description="detail:N")
    )
    blocks = base.encode(x=alt.X("blocks:Q", title="blocks", axis=alt.Axis(format=",~r", tickMinStep=1)))
    held = base.encode(x=alt.X("rows:Q", title="rows in those blocks", axis=alt.Axis(format=",~r", tickMinStep=1)))
    chart = alt.hconcat(
        blocks.properties(width=NARROW - 60, title="blocks by size"),
        held.properties(width=NARROW - 60, title="rows by the size of their block"),
        spacing=40,
    )
    return to_svg(chart)


def _axis_format(edges: Sequence[float]) -> str:
    """d3 format for a numeric axis: SI suffixes (20k, 1.5M) for large values, plain digits otherwise."""
    top = max(abs(edges[0]), abs(edges[-1]))
    return "~s" if top >= 10_000 else ",~r"


def _series_rows(d: Distribution) -> list[dict[str, Any]]:
    rows = []
    for s, (name, shares) in enumerate(d.series):
        for c, (category, share) in enumerate(zip(d.categories, shares)):
            row = {
                "series": name,
                "s": s,
                "category": category,
                "c": c,
                "share": share,
                "detail": f"{name} · {d.attribute} {category}: {percent(share)}",
            }
            if d.edges is not None:
                row.update(lo=d.edges[c], hi=d.edges[c + 1], zero=0)
            rows.append(row)
    return rows


def distribution_svg(d: Distribution) -> str:
    """One sensitive attribute: the whole table against the worst blocks.  A binned numeric attribute as one
    histogram per series (shared value axis); values as grouped horizontal bars (one row per value)."""
    names = [name for name, _ in d.series]
    colour = alt.Color(
        "series:N", title=None, sort=names, scale=alt.Scale(domain=names, range=list(SERIES[: len(names)])), legend=None
    )
    if d.edges is not None:
        base = (
            alt.Chart(_data(_series_rows(d)))
            .mark_bar(stroke="white", strokeWidth=0.5)
            .encode(
                x=alt.X(
                    "lo:Q",
                    title=d.attribute,
                    scale=alt.Scale(domain=[d.edges[0], d.edges[-1]], nice=False),
                    axis=alt.Axis(format=_axis_format(d.edges), labelFlush=True),
                ),
                x2="hi:Q",
                y=alt.Y("share:Q", title="share", axis=alt.Axis(format=".0%", tickCount=3)),
                y2="zero:Q",
                color=colour,
                description="detail:N",
            )
            .properties(width=NARROW - 40, height=70)
        )
        chart = base.facet(
            row=alt.Row(
                "series:N",
                sort=names,
                title=None,
                header=alt.Header(labelAngle=0, labelOrient="top", labelAnchor="start", labelPadding=2),
            ),
            spacing=10,
        )
        return to_svg(chart.properties(title=f"{d.attribute}: whole table vs the worst blocks"))
    legend = alt.Legend(title=None, orient="top", direction="vertical")
    title = f"{d.attribute}: whole table vs the worst blocks"
    chart = (
        alt.Chart(_data(_series_rows(d)), title=title)
        .mark_bar()
        .encode(
            y=alt.Y("category:N", sort=d.categories, title=None, axis=alt.Axis(labelLimit=200)),
            yOffset=alt.YOffset("series:N", sort=names),
            x=alt.X("share:Q", title="share of the rows", axis=alt.Axis(format=".0%", tickCount=5)),
            color=colour.legend(legend),
            description="detail:N",
        )
        .properties(width=NARROW - 140, height=alt.Step(max(6, 28 // len(names))))
    )
    return to_svg(chart)


def lattice_svg(rows: Sequence[HeightRow], chosen: Sequence[int] | None, optimal: Sequence[int] | None) -> str:
    """Nodes per height stacked by verdict, the minimal passing nodes per height below them, and the chosen
    (blue) and optimal (orange) nodes' heights as lines: readable at 12 nodes and at 100,000."""
    heights = [str(r.height) for r in rows]
    most = max((len(r.minimal) for r in rows), default=0) or 1
    data = _lattice_rows(rows)
    x = alt.X(
        "height:O",
        sort=heights,
        scale=alt.Scale(domain=heights),
        axis=alt.Axis(labelAngle=0, labelOverlap=True, title="height (sum of the generalization levels)"),
    )
    stack = _verdict_bars(data, x)
    minimal = _minimal_bars(data, x, most)
    marks = _height_rules(chosen, optimal)
    top = alt.layer(stack, *[m.encode(x=x) for m in marks]) if marks else stack
    low = alt.layer(minimal, *[m.encode(x=x.axis(None)) for m in marks]) if marks else minimal
    chart = alt.vconcat(top.properties(width=WIDE, height=200), low.properties(width=WIDE, height=45), spacing=4)
    return to_svg(chart.resolve_scale(x="shared"))


def _lattice_rows(rows: Sequence[HeightRow]) -> list[dict[str, Any]]:
    """The lattice chart's data: per height and verdict its nodes, with the height's minimal nodes (their count,
    and the first four in the tooltip's ``detail``)."""
    data = []
    for r in rows:
        minimal = ", ".join("[" + ",".join(map(str, n)) + "]" for n in r.minimal[:4])
        more = f" … ({human(len(r.minimal) - 4)} more)" if len(r.minimal) > 4 else ""
        note = f"; minimal: {minimal}{more}" if r.minimal else ""
        for name, count in zip((s for s, _ in VERDICTS), (r.passing, r.failing, r.not_evaluated)):
            data.append(
                {
                    "height": str(r.height),
                    "status": name,
                    "nodes": count,
                    "minimal": len(r.minimal),
                    "detail": f"height {r.height}: {human(r.nodes)} nodes, {human(r.passing)} pass, "
                    f"{human(r.failing)} fail, {human(r.not_evaluated)} not evaluated{note}",
                }
            )
    return data


def _verdict_bars(data: list[dict[str, Any]], x: alt.X) -> alt.Chart:
    """Nodes per height, stacked by verdict (passes, fails, not evaluated)."""
    return (
        alt.Chart(_data(data))
        .mark_bar()
        .encode(
            x=x,
            y=alt.Y("nodes:Q", title="nodes", axis=alt.Axis(format=",~r", tickMinStep=1)),
            color=alt.Color(
                "status:N",
                title=None,
                sort=[s for s, _ in VERDICTS],
                scale=alt.Scale(domain=[s for s, _ in VERDICTS], range=[c for _, c in VERDICTS]),
            ),
            order=alt.Order("order:Q"),
            description="detail:N",
        )
        .transform_calculate(order="indexof(['passes','fails','not evaluated'], datum.status)")
    )


def _minimal_bars(data: list[dict[str, Any]], x: alt.X, most: int) -> alt.Chart:
    """The minimal passing nodes per height, on a scale up to ``most`` (the x axis drawn by the bars above)."""
    return (
        alt.Chart(_data([d for d in data if d["status"] == "passes"]))
        .mark_bar(color=MINIMAL)
        .encode(
            x=x.axis(labelAngle=0, labelOverlap=True, title=None, labels=False, ticks=False),
            y=alt.Y(
                "minimal:Q",
                title="minimal",
                scale=alt.Scale(domain=[0, most], nice=False),
                axis=alt.Axis(format=",~r", values=[0, most]),
            ),
            description="detail:N",
        )
    )


def _height_rules(chosen: Sequence[int] | None, optimal: Sequence[int] | None) -> list[alt.Chart]:
    """A line at the chosen node's height (solid blue) and, when it differs, the optimal one's (dashed orange:
    both show where the two share a height)."""
    marks = []
    for node, colour, name, dash in ((chosen, CHOSEN, "chosen", [1, 0]), (optimal, "#f58518", "optimal", [5, 4])):
        if node is None or (name == "optimal" and chosen is not None and list(node) == list(chosen)):
            continue
        text = f"{name} node [{','.join(map(str, node))}] at height {sum(node)}"
        marks.append(
            alt.Chart(_data([{"height": str(sum(node)), "detail": text}]))
            .mark_rule(color=colour, strokeWidth=2.5, strokeDash=dash)
            .encode(description="detail:N")
        )
    return marks


def levels_svg(attributes: Sequence[str], heights: Sequence[int], node: Sequence[int]) -> str:
    """Where a node sits: each quasi-identifier's level against its hierarchy's height."""
    rows = [
        {
            "attribute": a,
            "level": lv,
            "height": h,
            "label": f"{lv} of {h}",
            "detail": f"{a}: generalized to level {lv} of {h}"
            + (" (original values)" if lv == 0 else " (fully suppressed)" if lv == h else ""),
        }
        for a, h, lv in zip(attributes, heights, node)
    ]
    y = alt.Y("attribute:N", sort=list(attributes), title=None)
    top = max(max(heights, default=1), 1)
    scale = alt.Scale(domain=[0, top + 0.8])
    full = (
        alt.Chart(_data(rows))
        .mark_bar(color="#e6e9ef")
        .encode(y=y, x=alt.X("height:Q", scale=scale, title=None), description="detail:N")
    )
    level = (
        alt.Chart(_data(rows))
        .mark_bar(color=CHOSEN)
        .encode(
            y=y,
            x=alt.X(
                "level:Q",
                scale=scale,
                title="generalization level (0 = original values)",
                axis=alt.Axis(tickMinStep=1, format="d"),
            ),
            description="detail:N",
        )
    )
    text = (
        alt.Chart(_data(rows))
        .mark_text(align="left", dx=4, fontSize=11, color="#1d2330")
        .encode(y=y, x=alt.X("height:Q", scale=scale), text="label:N")
    )
    return to_svg(alt.layer(full, level, text).properties(width=NARROW - 80, height=alt.Step(20)))


def workload_svg(
    queries: Sequence[tuple[str, float]], nodes: Sequence[tuple[str, Sequence[int], float, Sequence[float]]]
) -> str:
    """Each ``[[workload]]`` query's error (0 to 1, lower is better) at a few nodes: grouped horizontal bars, one
    row per query, one bar per node (the chosen node in blue)."""
    names = [f"{label} [{','.join(map(str, n))}]: {human(e, 3)}" for label, n, e, _ in nodes]
    order = [f"#{i} {q}" for i, (q, _w) in enumerate(queries, start=1)]
    rows = [
        {
            "query": order[q],
            "node": names[s],
            "error": float(per[q]),
            "detail": f"{order[q]} at the {label} node [{','.join(map(str, n))}]: error {human(float(per[q]), 3)}",
        }
        for s, (label, n, _e, per) in enumerate(nodes)
        for q in range(len(queries))
    ]
    palette = [CHOSEN, "#f58518", "#72b7b2", "#b279a2"]
    colour = alt.Color(
        "node:N",
        sort=names,
        scale=alt.Scale(domain=names, range=palette[: len(names)]),
        legend=alt.Legend(title="node: workload error", orient="top", direction="vertical"),
    )
    chart = (
        alt.Chart(_data(rows), title="workload error per query (lower is better)")
        .mark_bar()
        .encode(
            y=alt.Y("query:N", sort=order, title=None, axis=alt.Axis(labelLimit=320)),
            yOffset=alt.YOffset("node:N", sort=names),
            x=alt.X(
                "error:Q", title="error", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format=".1~f", tickCount=5)
            ),
            color=colour,
            description="detail:N",
        )
        .properties(width=NARROW, height=alt.Step(max(6, 30 // len(names))))
    )
    return to_svg(chart)


QUALITY = (
    ("generalization_intensity", "generalization intensity"),
    ("granularity", "granularity"),
    ("non_uniform_entropy", "non-uniform entropy"),
)


def attribute_utility_svg(attributes: Sequence[dict[str, Any]]) -> str:
    """ARX's utility per quasi-identifier (``veil.utility``: three measures in [0, 1], higher is better): grouped
    horizontal bars, one row per attribute; a measure ARX leaves undefined (one value) is not drawn."""
    labels = [label for _key, label in QUALITY]
    order = [f"{a['attribute']} (level {a['level']})" for a in attributes]
    rows = [
        {
            "attribute": order[i],
            "measure": label,
            "quality": float(a[key]),
            "detail": f"{a['attribute']} at level {a['level']}: {label} {human(float(a[key]), 3)}",
        }
        for i, a in enumerate(attributes)
        for key, label in QUALITY
        if a.get(key) is not None
    ]
    colour = alt.Color(
        "measure:N",
        sort=labels,
        scale=alt.Scale(domain=labels, range=[TABLE, "#f58518", "#54a24b"]),
        legend=alt.Legend(title=None, orient="top", direction="horizontal", columns=3),
    )
    chart = (
        alt.Chart(_data(rows), title="utility per attribute (ARX; 1 = original values)")
        .mark_bar()
        .encode(
            y=alt.Y("attribute:N", sort=order, title=None),
            yOffset=alt.YOffset("measure:N", sort=labels),
            x=alt.X(
                "quality:Q",
                title="quality (higher is better)",
                scale=alt.Scale(domain=[0, 1]),
                axis=alt.Axis(format=".1~f", tickCount=5),
            ),
            color=colour,
            description="detail:N",
        )
        .properties(width=NARROW, height=alt.Step(8))
    )
    return to_svg(chart)


def series_svg(points: Sequence[SeriesPoint]) -> str:
    """A cohort series over its versions: the shares of the table deferred and standing in each night, and a
    dashed rule where the node moved up (``seriesview``)."""
    deferred, standing = "deferred (waiting to be published)", "standing in for people who left"
    rows = [
        {
            "version": p.version,
            "measure": measure,
            "share": share,
            "detail": f"version {p.version}: {percent(share)} of {human(p.table)} rows {what} ({human(held)} rows), "
            f"node {list(p.node)}",
        }
        for p in points
        for measure, what, share, held in (
            (deferred, "deferred", p.deferred_share, p.deferred),
            (standing, standing, p.standing_share, p.standing_in),
        )
    ]
    x = alt.X("version:Q", title="version", axis=alt.Axis(format="d", tickMinStep=1))
    colour = alt.Color("measure:N", title=None, scale=alt.Scale(domain=[deferred, standing], range=SERIES[:2]))
    lines = (
        alt.Chart(_data(rows))
        .mark_line(point=alt.OverlayMarkDef(size=24 if len(points) <= 100 else 6), strokeWidth=2)
        .encode(
            x=x,
            y=alt.Y("share:Q", title="share of the table's rows", axis=alt.Axis(format="%")),
            color=colour,
            description="detail:N",
        )
    )
    moves = [
        {"version": p.version, "detail": f"version {p.version}: the node moved up to {list(p.node)}"}
        for p in points
        if p.moved
    ]
    layers: list[alt.Chart] = [lines]
    if moves:
        layers.append(
            alt.Chart(_data(moves))
            .mark_rule(color=CHOSEN, strokeDash=[4, 3], strokeWidth=1.5)
            .encode(x=alt.X("version:Q"), description="detail:N")
        )
    return to_svg(alt.layer(*layers).properties(width=WIDE - 120, height=200))
