"""The report as one self-contained HTML page: inline CSS, inline SVG charts (``veil.report.charts``), one
small inline script that shows a mark's details on hover, and the report's facts as an embedded JSON
document.  Nothing is fetched at view time.

>>> _json_for_script({"x": "</script>"})
'{"x": "\\\\u003c/script\\\\u003e"}'
>>> _risk_cell(0.25, 4)
'25% <span class="muted">(1 in 4)</span>'
"""

from __future__ import annotations

import json
import math
from html import escape
from collections.abc import Sequence
from importlib import resources
from typing import Any

from veil.report import charts
from veil.report.content import Distribution, Evaluation, Headline, ReportData
from veil.report.formatting import human, percent, plain_text
from veil.report.seriesview import SeriesPoint
from veil.adversary.prosecutor import Prosecutor

MINIMAL_LISTED = 12  # minimal nodes listed in the table under the lattice


def _asset(name: str) -> str:
    return (resources.files("veil.report") / name).read_text(encoding="utf-8")


def _json_for_script(doc: Any) -> str:
    """JSON safe inside ``<script type="application/json">``: no ``<``, ``>`` or ``&`` left for the HTML parser."""
    text = json.dumps(doc, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _figure(name: str, svg: str, caption: str = "") -> str:
    cap = f"<figcaption>{caption}</figcaption>" if caption else ""
    return f'<figure class="chart" data-chart="{escape(name)}">{svg}{cap}</figure>'


def _node(node: Any) -> str:
    return "[" + ",".join(map(str, node)) + "]"


def _risk_cell(risk: float, size: int | None = None) -> str:
    tail = f' <span class="muted">(1 in {human(size)})</span>' if size else ""
    return f"{escape(percent(risk))}{tail}"


def _risk_rows(before: Prosecutor | None, after: Prosecutor, target: str) -> str:
    def cells(fn: Any) -> str:
        first = fn(before) if before is not None else '<span class="muted">not known</span>'
        return f'<td class="num">{first}</td><td class="num">{fn(after)}</td>'

    def highest(p: Prosecutor) -> str:
        return _risk_cell(p.highest, round(1 / p.highest) if p.highest else None)

    def average(p: Prosecutor) -> str:
        return _risk_cell(p.average)

    def at_risk(p: Prosecutor) -> str:
        share = p.at_risk / p.rows if p.rows else 0.0
        return f'{human(p.at_risk)} <span class="muted">({escape(percent(share))})</span>'

    return (
        '<table class="risk"><tr><th>prosecutor risk</th><th class="num">source (original values)</th>'
        f'<th class="num">{escape(target)}</th></tr>'
        f"<tr><td>highest (1 / smallest block)</td>{cells(highest)}</tr>"
        f"<tr><td>average over records</td>{cells(average)}</tr>"
        f"<tr><td>records above {escape(percent(after.threshold))}</td>{cells(at_risk)}</tr></table>"
    )


def _worst_card(h: Headline, rows: int) -> str:
    if h.worst is None:
        return (
            '<div class="card"><h3>Worst exposure</h3><p class="big">no attack evaluated</p>'
            '<p class="muted">no sensitive attribute was counted</p></div>'
        )
    if h.worst.rows == 0:
        return (
            f'<div class="card good"><h3>Worst exposure</h3><p class="big">none</p><p>none of the '
            f"{h.attacks} attacks of the audit exposes a row</p></div>"
        )
    w = h.worst
    share = percent(w.rows / rows) if rows else "0%"
    return (
        f'<div class="card bad" id="worst"><h3>Worst exposure</h3><p class="big">{escape(w.attack)} on '
        f"<b>{escape(w.attribute)}</b></p><p>exposes <b>{human(w.rows)}</b> of {human(rows)} rows "
        f'({escape(share)}) in {human(w.blocks)} blocks</p><p class="muted">{h.exposing} of {h.attacks} '
        f"attacks expose rows (the attack audit below lists them)</p></div>"
    )


def _headline(data: ReportData, h: Headline) -> str:
    models = (
        f'<div class="card {"good" if h.holding == h.models else "bad"}"><h3>Configured models</h3>'
        f'<p class="big">{h.holding} of {h.models} hold</p>'
        + "".join(f"<p>{'✓' if lv.passed else '✗'} {escape(lv.model)}</p>" for lv in data.levels)
        + "</div>"
        if h.models
        else ""
    )
    passes = h.holding == h.models
    target = "published" if data.release or passes else "at this node"
    suppressed = data.suppressed_rows if data.suppressed_rows is not None else data.rows - h.after.rows
    facts = [
        ("rows read", human(h.after.rows + suppressed)),
        (f"rows {target}", human(h.after.rows)),
        ("suppressed rows", human(suppressed)),
        ("blocks", human(h.after.blocks)),
        ("smallest block", human(round(1 / h.after.highest)) if h.after.highest else "—"),
    ]
    if data.chosen is not None:
        facts.append(("node", _node(data.chosen)))
    if data.heights is not None:
        facts.append(
            (
                "lattice",
                f"{human(math.prod(x + 1 for x in data.heights))} nodes, {human(len(data.evaluations))} evaluated",
            )
        )
    name = (
        "Published table"
        if data.release
        else "This node, published"
        if passes
        else "This node (a model fails: not publishable)"
    )
    table = (
        f'<div class="card"><h3>{escape(name)}</h3><dl>'
        + "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in facts)
        + "</dl></div>"
    )
    risk = (
        f'<div class="card wide"><h3>Re-identification risk, before and after</h3>'
        f"{_risk_rows(h.before, h.after, target)}"
        '<p class="muted">An attacker who knows their target is in the table picks one row of the target\'s '
        "block: right with probability 1 / block size (prosecutor model).</p></div>"
    )
    return f'<div class="cards">{_worst_card(h, data.audit.rows)}{risk}{models}{table}</div>'


def _levels(data: ReportData) -> str:
    if not data.levels:
        return '<p class="muted">No model was configured.</p>'
    rows = "".join(
        f'<tr><td>{escape(lv.model)}</td><td class="num">{escape(human(lv.achieved))}</td>'
        f'<td class="num">{"" if lv.violating_blocks is None else human(lv.violating_blocks)}</td>'
        f'<td><span class="badge {"pass" if lv.passed else "fail"}">{"holds" if lv.passed else "fails"}'
        "</span></td></tr>"
        for lv in data.levels
    )
    return (
        '<table><tr><th>configured model</th><th class="num">achieved level</th>'
        f'<th class="num">violating blocks</th><th></th></tr>{rows}</table>'
    )


def _utility(data: ReportData) -> str:
    if not data.utility:
        return '<p class="muted">No utility metric was computed.</p>'
    rows = "".join(
        f'<tr><td>{escape(n)}</td><td class="num">{escape(human(v))}</td><td class="muted">'
        f"{'higher' if n.startswith('precision') else 'lower'} is better</td></tr>"
        for n, v in data.utility
    )
    return f'<table><tr><th>metric</th><th class="num">value</th><th></th></tr>{rows}</table>'


def _from_source(data: ReportData) -> str:
    """A published version's workload errors and utility per attribute are its node's on the source as it stands
    (``veil.report.release_utility``), not a recount of the release table: the caption says so."""
    if not data.release:
        return ""
    return (
        " For a published version: at this version's node, answered from the source as it stands now, with the "
        "blocks that fail the models there suppressed — not recounted from the release table, which may differ "
        "(rows added or changed since, and a series' stand-ins and waiting rows)."
    )


def _workload(data: ReportData) -> str:
    """The ``[[workload]]`` queries' errors at the chosen node and the optimal ones (docs/workload.md)."""
    view = data.workload
    if view is None:
        return ""
    heads = "".join(f'<th class="num">{escape(label)}<br>{escape(_node(n))}</th>' for label, n, _e, _p in view.nodes)
    rows = "".join(
        f'<tr><td>#{i} {escape(q)}</td><td class="num">{escape(human(w))}</td>'
        + "".join(f'<td class="num">{escape(human(per[i - 1], 3))}</td>' for _l, _n, _e, per in view.nodes)
        + "</tr>"
        for i, (q, w) in enumerate(view.queries, start=1)
    )
    total = "".join(f'<td class="num"><b>{escape(human(e, 3))}</b></td>' for _l, _n, e, _p in view.nodes)
    return (
        '<h3>Workload error</h3><p class="muted">Each query of the config\'s <code>[[workload]]</code> answered '
        "from the node's release (a generalized value spread uniformly over the original values it covers, "
        "suppressed rows over the whole domain) against its answer on the source: error 0 is exact, 1 shares "
        "nothing. The workload error is the queries' weighted mean."
        + _from_source(data)
        + "</p>"
        + _figure("workload", charts.workload_svg(view.queries, view.nodes))
        + f'<table><tr><th>query</th><th class="num">weight</th>{heads}</tr>{rows}'
        f"<tr><td><b>workload error</b></td><td></td>{total}</tr></table>"
    )


def _attribute_utility(data: ReportData) -> str:
    """ARX's utility per quasi-identifier at the chosen node (``veil.utility``)."""
    if not data.attribute_utility:
        return ""
    cells = "".join(
        f'<tr><td>{escape(str(a["attribute"]))}</td><td class="num">{a["level"]}</td>'
        + "".join(
            f'<td class="num">{escape(human(a[key], 3)) if a[key] is not None else "—"}</td>'
            for key, _label in charts.QUALITY
        )
        + "</tr>"
        for a in data.attribute_utility
    )
    return (
        '<h3>Utility per attribute</h3><p class="muted">ARX\'s per-attribute quality at this node, each in '
        "[0, 1], higher is better (1: the original values): generalization intensity (Sweeney's precision), "
        "granularity (Iyengar's loss) and non-uniform entropy (de Waal &amp; Willenborg); suppressed rows count "
        "as fully generalized. — marks a measure that is undefined for an attribute of one value."
        + _from_source(data)
        + "</p>"
        + _figure("attribute-utility", charts.attribute_utility_svg(data.attribute_utility))
        + '<table class="narrow"><tr><th>attribute</th><th class="num">level</th>'
        + "".join(f'<th class="num">{escape(label)}</th>' for _key, label in charts.QUALITY)
        + f"</tr>{cells}</table>"
    )


def _reidentification(data: ReportData) -> str:
    """``veil risk``'s figures of the source as it stands and of the published blocks (docs/reidentification.md)."""
    docs = data.reidentification or []
    if not docs:
        return ""

    def pct(v: float | None) -> str:
        return "—" if v is None else f"{100 * v:.3g}%"

    rows = [
        ("prosecutor: highest", lambda d: d["prosecutor"]["highest"]),
        ("prosecutor: average", lambda d: d["prosecutor"]["average"]),
        ("prosecutor: records at risk (> 20%)", lambda d: d["prosecutor"]["records_at_risk"]),
        ("journalist: average (the sample as its population)", lambda d: d["journalist"]["average"]),
        ("marketer", lambda d: d["marketer"]["average"]),
        ("sample uniques", lambda d: d["sample_uniques"]),
        (
            "population uniques (Dankar et al.)",
            lambda d: (
                None
                if d["population_uniqueness"] is None
                else d["population_uniqueness"]["population_uniques"]["dankar"]
            ),
        ),
    ]
    heads = "".join(f'<th class="num">{escape(d["subject"])}</th>' for d in docs)
    cells = "".join(
        f"<tr><td>{escape(name)}</td>" + "".join(f'<td class="num">{pct(get(d))}</td>' for d in docs) + "</tr>"
        for name, get in rows
    )
    return (
        '<p class="muted">Re-identification risk as ARX reports it (<code>veil risk</code>, '
        "docs/reidentification.md): a record in a class of f records is re-identified with probability 1/f; "
        "population uniques are estimated when a <code>population-uniqueness</code> model gives the sampling "
        f'fraction.</p><table class="narrow"><tr><th>figure</th>{heads}</tr>{cells}</table>'
    )


def _blocks(data: ReportData) -> str:
    bins = data.size_bins()
    if not bins:
        return '<p class="muted">The table has no rows.</p>'
    k = (
        f" Red: blocks smaller than k = {human(data.min_k)}, which fail the models (suppressed if the node is "
        "published)."
        if data.min_k is not None
        else ""
    )
    return _figure(
        "blocks",
        charts.blocks_svg(bins, data.min_k),
        f"Each bar counts the blocks (rows sharing one combination of generalized quasi-identifier values) "
        f"whose size falls in the bin, and the rows they hold.{k}",
    )


def _distributions(data: ReportData) -> str:
    if not data.distributions:
        return '<p class="muted">No sensitive attribute was counted.</p>'
    return (
        '<div class="grid">'
        + "".join(
            _figure(
                f"distribution:{d.attribute}",
                charts.distribution_svg(d),
                _binned_caption(d) if d.edges is not None else "",
            )
            for d in data.distributions
        )
        + "</div>"
    )


def _binned_caption(d: Distribution) -> str:
    text = f"{escape(d.attribute)} binned: each bar is a range of values, its height the share of the rows in it."
    if d.open_top:
        text += f" The last bar holds every value from {escape(d.categories[-1].removesuffix(' and more'))} up."
    return text


def _audit(data: ReportData, worst: Any) -> str:
    rows = []
    for e in data.audit.exposures:
        if e.skipped:
            rows.append(
                f'<tr><td>{escape(e.attribute)}</td><td>{escape(e.attack)}</td><td class="num"></td>'
                f'<td class="num"></td><td><span class="badge skip">skipped</span> {escape(e.skipped)}</td></tr>'
            )
            continue
        w = e.worst[0] if e.worst else None
        detail = (
            f"{escape(' | '.join(w.key))} (n={human(w.size)}, score {escape(human(w.score))}): "
            f"{escape(plain_text(w.detail))}"
            if w
            else ""
        )
        badge = '<span class="badge fail">exposed</span> ' if e.rows else '<span class="badge pass">none</span> '
        share = (
            f' <span class="muted">({escape(percent(e.rows / data.audit.rows))})</span>'
            if e.rows and data.audit.rows
            else ""
        )
        mark = ' class="worst"' if e is worst and e.rows else ""
        rows.append(
            f'<tr{mark}><td>{escape(e.attribute)}</td><td>{escape(e.attack)}<div class="def">'
            f'{escape(plain_text(e.definition))}</div></td><td class="num">{human(e.blocks)}</td>'
            f'<td class="num">{human(e.rows)}{share}</td><td>{badge}{detail}</td></tr>'
        )
    return (
        '<table><tr><th>attribute</th><th>attack (definition)</th><th class="num">blocks</th>'
        f'<th class="num">rows</th><th>worst block</th></tr>{"".join(rows)}</table>'
    )


def _minimal_table(data: ReportData) -> str:
    minimal = data.minimal_nodes()
    if not minimal:
        return '<p class="muted">No evaluated node passes: no minimal node.</p>'
    seen: dict[tuple[int, ...], Evaluation] = {tuple(e[0]): e for e in data.evaluations}
    rows = []
    for n in minimal[:MINIMAL_LISTED]:
        e = seen.get(n)
        flag = (
            ' <span class="badge chosen">chosen</span>' if data.chosen is not None and n == tuple(data.chosen) else ""
        )
        rows.append(
            f'<tr><td>{escape(_node(n))}{flag}</td><td class="num">{sum(n)}</td>'
            f'<td class="num">{human(e[2]) if e else ""}</td>'
            f'<td class="num">{escape(human(e[3])) if e and e[3] is not None else ""}</td></tr>'
        )
    more = (
        f'<p class="muted">… and {human(len(minimal) - MINIMAL_LISTED)} more minimal nodes (all in the '
        "embedded JSON document, <code>lattice.minimal</code>).</p>"
        if len(minimal) > MINIMAL_LISTED
        else ""
    )
    which = "Minimal passing nodes" if data.minimal is not None else "Minimal nodes among the evaluated passing nodes"
    return (
        f'<h3>{which} ({human(len(minimal))}), lowest first</h3><table class="narrow"><tr>'
        '<th>node</th><th class="num">height</th><th class="num">suppressed rows</th>'
        f'<th class="num">search metric</th></tr>{"".join(rows)}</table>{more}'
    )


def _lattice(data: ReportData) -> str:
    if data.heights is None:
        return '<p class="muted">The catalog holds no hierarchy heights for this release: no lattice to draw.</p>'
    names = ", ".join(f"{escape(a)} (0–{h})" for a, h in zip(data.attributes, data.heights))
    chosen = f" Blue line: the chosen node {escape(_node(data.chosen))}." if data.chosen is not None else ""
    optimal = (
        f" Orange line: the optimal node {escape(_node(data.optimal))}."
        if data.optimal is not None and data.chosen is not None and list(data.optimal) != list(data.chosen)
        else ""
    )
    parts = [
        f'<p class="muted">A node generalizes each quasi-identifier to one level of its hierarchy — {names}; '
        "its height is the sum of its levels (0: the original table). Each bar counts the nodes of one height by "
        "the search's verdict; the strip below counts the minimal passing nodes (no passing node below them"
        + ("" if data.minimal is not None else "; this search did not list them: minimal among the nodes it evaluated")
        + ")."
        f"{chosen}{optimal} Hover a bar for its details.</p>",
        _figure("lattice", charts.lattice_svg(data.per_height(), data.chosen, data.optimal)),
    ]
    if data.chosen is not None:
        parts.append(
            _figure(
                "node",
                charts.levels_svg(data.attributes, data.heights, data.chosen),
                f"The chosen node {escape(_node(data.chosen))}: how far each quasi-identifier is generalized.",
            )
        )
    parts.append(_minimal_table(data))
    return "".join(parts)


def _series(points: Sequence[SeriesPoint]) -> str:
    """A cohort series' versions up to this one: what each night held back, and where the node moved up."""
    last, moves = points[-1], [p.version for p in points if p.moved]
    moved = (
        f" The node moved up at version{'s' if len(moves) > 1 else ''} {', '.join(map(str, moves))} (dashed)."
        if moves
        else ""
    )
    return (
        f'<p class="muted">Every version of the release under the cohort series policy up to version {last.version}, '
        "as the catalog recorded each night (its own record, which analysts cannot read): the newcomers still waiting to enter in a batch (deferred) and the rows still shown for "
        "people who left (standing in), each as a share of the people in the source that night (Veil's docs: "
        "A series of releases). "
        f"Version {last.version}: {escape(percent(last.deferred_share))} deferred, "
        f"{escape(percent(last.standing_share))} standing in.{moved} Hover a point for its figures.</p>"
        + _figure("series", charts.series_svg(points))
    )


def _document(data: ReportData, h: Headline) -> dict[str, Any]:
    worst = h.worst
    return {
        "title": data.title,
        "subject": data.subject,
        "generated": data.generated,
        "lattice": data.lattice(),
        "headline": {
            "worst": None
            if worst is None
            else {"attack": worst.attack, "attribute": worst.attribute, "rows": worst.rows, "blocks": worst.blocks},
            "attacks_exposing": h.exposing,
            "attacks": h.attacks,
            "risk_before": None if h.before is None else h.before.document(),
            "risk_after": h.after.document(),
            "models_holding": h.holding,
            "models": h.models,
        },
        "audit": data.audit.document(),
        "workload": None if data.workload is None else data.workload.document(),
        "utility_per_attribute": data.attribute_utility,
        "reidentification": data.reidentification,
        "provenance": data.provenance,
        "series": None if data.series is None else [p.document() for p in data.series],
    }


def render(data: ReportData) -> str:
    """The whole page."""
    h = data.headline()
    sections = [
        ("headline", "At a glance", _headline(data, h)),
        ("levels", "Achieved against configured levels", _levels(data)),
        ("blocks", "Block sizes", _blocks(data)),
        ("distributions", "Sensitive attributes", _distributions(data)),
        ("audit", "Attack audit", _audit(data, h.worst)),
        ("reidentification", "Re-identification risk", _reidentification(data)),
        ("utility", "Utility", _utility(data) + _workload(data) + _attribute_utility(data)),
        ("lattice", "Generalization lattice", _lattice(data)),
    ]
    if data.series:
        sections.insert(-1, ("series", "The series", _series(data.series)))
    body = (
        f'<header><h1>{escape(data.title)}</h1><p class="sub">{escape(data.subject)} · generated '
        f"{escape(data.generated)} by Veil</p></header>"
        + "".join(f'<section id="{sid}"><h2>{escape(title)}</h2>{html}</section>' for sid, title, html in sections)
    )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(data.title)}</title><style>{_asset('report.css')}</style></head><body>{body}"
        '<div id="tip" role="tooltip"></div>'
        f'<script type="application/json" id="veil-data">{_json_for_script(_document(data, h))}</script>'
        f"<script>{_asset('report.js')}</script></body></html>\n"
    )
