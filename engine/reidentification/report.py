"""``veil risk``'s figures in words (the command's output and the HTML report's risk section)."""

from __future__ import annotations

from typing import Any


def pct(value: float | None) -> str:
    return "unavailable" if value is None else f"{100 * value:.4g}%"


def lines(doc: dict[str, Any]) -> list[str]:
    """One line per figure of a ``RiskSummary.document()``."""
    p, j = doc["prosecutor"], doc["journalist"]
    out = [
        f"re-identification risk of {doc['subject']}: {doc['records']:,} records in {doc['classes']:,} classes",
        f"  prosecutor: highest {pct(p['highest'])}, average {pct(p['average'])}, lowest {pct(p['lowest'])}; "
        f"records at risk (> {pct(p['threshold'])}): {pct(p['records_at_risk'])}",
        f"  journalist ({_against(doc)}): highest {pct(j['highest'])}, average {pct(j['average'])}, "
        f"records at risk: {pct(j['records_at_risk'])}",
        f"  marketer: {pct(doc['marketer']['average'])}",
        f"  sample uniques: {pct(doc['sample_uniques'])}",
    ]
    u = doc["population_uniqueness"]
    if u is None:
        out.append("  population uniques: not estimated (give --sampling-fraction, --population or --population-table)")
    else:
        f = u["population_uniques"]
        out.append(
            f"  population uniques (population {u['population']:,.0f}, sampling fraction "
            f"{u['sampling_fraction']:.4g}): Dankar {pct(f['dankar'])} ({u['dankar_model']}); Pitman "
            f"{pct(f['pitman'])}, Zayatz {pct(f['zayatz'])}, SNB {pct(f['snb'])}"
        )
    if doc["population"]["unmatched_rows"]:
        out.append(
            f"  ({doc['population']['unmatched_rows']:,} population row(s) hold a value no hierarchy lists: left out)"
        )
    return out


def _against(doc: dict[str, Any]) -> str:
    source = doc["population"]["source"]
    return f"against {source[len('table ') :]}" if source.startswith("table ") else "the sample as its population"
