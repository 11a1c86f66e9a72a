"""The report as one self-contained HTML page: inline CSS, inline SVG charts, one inline script that draws
the lattice on a canvas from an embedded JSON document.  Nothing is fetched at view time.

>>> _json_for_script({"x": "</script>"})
'{"x": "\\\\u003c/script\\\\u003e"}'
"""

from __future__ import annotations

import json
import math
from html import escape
from importlib import resources
from typing import Any

from veil.risk.exposure import number
from veil.report import svg
from veil.report.content import ReportData


def _asset(name: str) -> str:
    return (resources.files("veil.report") / name).read_text(encoding="utf-8")


def _json_for_script(doc: Any) -> str:
    """JSON safe inside ``<script type="application/json">``: no ``<``, ``>`` or ``&`` left for the HTML parser."""
    text = json.dumps(doc, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _fmt(x: float | None) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "∞ / undefined"
    return f"{x:,.6g}"


def _chips(data: ReportData) -> str:
    items = [("rows", f"{data.rows:,}"), ("blocks", f"{data.blocks:,}"),
             ("smallest block", f"{int(data.sizes.min()) if len(data.sizes) else 0:,}")]
    if data.chosen is not None:
        items.append(("node", "[" + ",".join(map(str, data.chosen)) + "]"))
    if data.heights is not None:
        items.append(("lattice", f"{math.prod(h + 1 for h in data.heights):,} nodes, {len(data.evaluations):,} evaluated"))
    exposed = sum(e.rows for e in data.audit.exposures if e.attack == "homogeneity")
    items.append(("rows open to homogeneity", f"{exposed:,}"))
    return '<div class="chips">' + "".join(f'<span class="chip">{escape(k)}: <b>{escape(v)}</b></span>'
                                            for k, v in items) + "</div>"


def _lattice(data: ReportData) -> str:
    if data.heights is None:
        return '<p class="muted">The catalog holds no hierarchy heights for this release: no lattice to draw.</p>'
    names = ", ".join(f"{escape(a)} (0–{h})" for a, h in zip(data.attributes, data.heights))
    return (f'<p class="muted">Rows are generalization heights (bottom: the original values), nodes within a row in '
            f'lexicographic order of levels: {names}.</p>'
            '<div class="legend"><span><i style="background:#54a24b"></i>passes</span>'
            '<span><i style="background:#e45756"></i>fails</span><span><i style="background:#c7ccd6"></i>not '
            'evaluated (pruned)</span><span><i style="border:2px solid #1f4fd1"></i>chosen</span>'
            '<span><i style="border:2px solid #f58518"></i>optimal</span></div>'
            '<div id="lattice-wrap"><canvas id="lattice-canvas" width="1120" height="300" '
            'aria-label="generalization lattice"></canvas><div id="tip"></div></div>')


def _blocks(data: ReportData) -> str:
    bins = svg.size_bins(data.sizes)
    marker = None
    if data.min_k is not None and bins:
        index = max(0, min(len(bins), int(math.floor(math.log2(data.min_k)))))
        marker = (index, f"k = {data.min_k}")
    return svg.bars(bins, title="blocks by size (rows per block, power-of-two bins)", marker=marker, unit=" blocks")


def _levels(data: ReportData) -> str:
    rows = "".join(f"<tr><td>{escape(lv.model)}</td><td class=\"num\">{escape(_fmt(lv.achieved))}</td>"
                   f"<td class=\"num\">{'' if lv.violating_blocks is None else lv.violating_blocks}</td>"
                   f"<td><span class=\"badge {'pass' if lv.passed else 'fail'}\">{'holds' if lv.passed else 'fails'}"
                   "</span></td></tr>" for lv in data.levels)
    return ("<table><tr><th>configured model</th><th>achieved level</th><th>violating blocks</th><th></th></tr>"
            f"{rows}</table>")


def _utility(data: ReportData) -> str:
    rows = "".join(f"<tr><td>{escape(n)}</td><td class=\"num\">{escape(_fmt(v))}</td></tr>" for n, v in data.utility)
    return f"<table><tr><th>metric</th><th>value</th></tr>{rows}</table>"


def _distributions(data: ReportData) -> str:
    if not data.distributions:
        return '<p class="muted">No sensitive attribute was counted.</p>'
    return '<div class="grid">' + "".join(
        svg.grouped(d.categories, d.series, title=f"{d.attribute}: whole table vs the worst blocks (EMD)")
        for d in data.distributions) + "</div>"


def _audit(data: ReportData) -> str:
    rows = []
    for e in data.audit.exposures:
        if e.skipped:
            rows.append(f"<tr><td>{escape(e.attribute)}</td><td>{escape(e.attack)}</td><td class=\"num\"></td>"
                        f"<td class=\"num\"></td><td><span class=\"badge skip\">skipped</span> {escape(e.skipped)}</td></tr>")
            continue
        w = e.worst[0] if e.worst else None
        worst = (f"{escape(' | '.join(w.key))} (n={w.size}, score {escape(_fmt(number(w.score)))}): {escape(w.detail)}"
                 if w else "")
        badge = '<span class="badge fail">exposed</span> ' if e.rows else '<span class="badge pass">none</span> '
        rows.append(f"<tr><td>{escape(e.attribute)}</td><td>{escape(e.attack)}<div class=\"def\">"
                    f"{escape(e.definition)}</div></td><td class=\"num\">{e.blocks:,}</td><td class=\"num\">{e.rows:,}"
                    f"</td><td>{badge}{worst}</td></tr>")
    return ("<table><tr><th>attribute</th><th>attack (definition)</th><th>blocks</th><th>rows</th>"
            f"<th>worst block</th></tr>{''.join(rows)}</table>")


def render(data: ReportData) -> str:
    """The whole page."""
    doc = {"title": data.title, "subject": data.subject, "generated": data.generated, "lattice": data.lattice(),
           "audit": data.audit.document()}
    body = "".join([
        f"<header><h1>{escape(data.title)}</h1><p class=\"sub\">{escape(data.subject)} · generated "
        f"{escape(data.generated)} by Veil</p></header>", _chips(data),
        '<section id="lattice"><h2>Generalization lattice</h2>', _lattice(data), "</section>",
        '<section id="blocks"><h2>Block sizes</h2>', _blocks(data), "</section>",
        '<section id="levels"><h2>Achieved against configured levels</h2>', _levels(data), "</section>",
        '<section id="utility"><h2>Utility</h2>', _utility(data), "</section>",
        '<section id="distributions"><h2>Sensitive attributes</h2>', _distributions(data), "</section>",
        '<section id="audit"><h2>Attack audit</h2>', _audit(data), "</section>"])
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{escape(data.title)}</title><style>{_asset('report.css')}</style></head><body>{body}"
            f"<script type=\"application/json\" id=\"veil-data\">{_json_for_script(doc)}</script>"
            f"<script>{_asset('report.js')}</script></body></html>\n")
