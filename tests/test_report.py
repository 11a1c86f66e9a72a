"""The report: ``write_report`` (what the release job calls) and ``veil report`` on DuckDB and PostgreSQL write
one self-contained HTML file with the headline (worst exposure, prosecutor risk before and after), the lattice per
height, block sizes, distributions, levels, utility and the audit; numbers for people; the charting libraries
loaded only when a report is made.  How it looks in a browser: tests/test_report_browser.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from veil import config as cfg
from veil import search
from veil.adversary.subject import prepared_warehouse
from veil.backends import open_backend
from veil.lattice import Lattice
from veil.privacy import Specification
from veil.report import metrics_for, write_report
from veil.report.page import render
from tests.conftest import Db, inpatient_body, run_veil

ENTROPY = '\n[[models]]\ntype = "entropy-l-diversity"\nl = 2.5\n'


def embedded(html: str) -> dict:
    match = re.search(r'<script type="application/json" id="veil-data">(.*?)</script>', html, re.S)
    assert match
    return json.loads(match.group(1))


def self_contained(html: str) -> None:
    """Nothing to fetch at view time: no src/href, no @import or url(), no http(s) but SVG's namespace."""
    assert not re.search(r"\b(src|href)\s*=", html)
    assert "@import" not in html and "url(" not in html
    assert set(re.findall(r"https?://[^\s\"'<>]+", html)) <= {"http://www.w3.org/2000/svg"}


def test_write_report_for_a_node(inpatient: Db, tmp_path: Path) -> None:
    path = inpatient.write_config("patients", inpatient_body() + ENTROPY)
    conf = cfg.load(path)
    with open_backend(conf.source.resolved_url()).session() as session:
        wh = prepared_warehouse(session, conf)
        metrics = metrics_for(wh)
        spec = Specification(conf.models, conf.search.max_suppression)
        result = search.run(
            ("optimal",), Lattice(wh.heights), wh.attributes, wh.counts, spec, metrics["discernibility"], wh.rows
        )
        assert result.optimal is not None and result.optimal.node == (1, 2, 1)
        out = write_report(Path("reports"), conf, wh, result, result.optimal.node, name="inpatient")
    assert out == path.parent / "reports" / "inpatient.html" and out.exists()
    html = out.read_text(encoding="utf-8")
    self_contained(html)
    charts = re.findall(r'<figure class="chart" data-chart="([^"]+)"><svg', html)
    assert charts == ["blocks", "distribution:condition", "attribute-utility", "lattice", "node"], charts
    doc = embedded(html)
    assert doc["lattice"]["heights"] == [5, 3, 1] and doc["lattice"]["chosen"] == [1, 2, 1]
    assert doc["lattice"]["size"] == 48 and [1, 2, 1] in doc["lattice"]["minimal"]
    evaluated = {tuple(n): p for n, p in doc["lattice"]["evaluated"]}
    assert evaluated[(1, 2, 1)] == 1 and len(evaluated) == result.nodes_evaluated
    attacks = {a["attack"]: a for a in doc["audit"]["attacks"]}
    assert attacks["homogeneity"]["rows"] == 0 and attacks["skewness"]["extra"]["max_emd"] == pytest.approx(1 / 6)
    assert "2.828" in html  # Figure 3: entropy 2.8-diverse, as achieved against l = 2.5
    assert "discernibility" in html and ">48<" in html
    # the headline: the audit's worst attack by rows, and the prosecutor risk of the source and of the node
    head = doc["headline"]
    worst = max((a for a in doc["audit"]["attacks"] if a["skipped"] is None), key=lambda a: a["rows"])
    assert head["worst"] == {
        "attack": worst["attack"],
        "attribute": "condition",
        "rows": worst["rows"],
        "blocks": worst["blocks"],
    }
    assert head["risk_before"]["highest"] == 1.0 and head["risk_before"]["records_at_risk"] == 12
    assert head["risk_after"] == {
        "rows": 12,
        "blocks": 3,
        "highest": 0.25,
        "average": 0.25,
        "records_at_risk": 12,
        "threshold": 0.2,
    }
    assert head["models_holding"] == head["models"] == 2
    # a candidate node: every figure from the source as it stands, at that node (the risk before at the bottom)
    where = doc["provenance"]
    at = {"from": "source", "table": conf.source.qualified, "node": [1, 2, 1], "as_of": "generated"}
    assert set(where) >= {"lattice", "audit", "workload", "utility_per_attribute", "reidentification.after"}
    assert all(v == at for k, v in where.items() if "before" not in k), where
    assert where["reidentification.before"] == {**at, "node": "original values"}


WORKLOAD = (
    '\n[[workload]]\ngroup_by = ["age", "nationality"]\n\n[[workload]]\ngroup_by = ["zip", "condition"]\n'
    'weight = 2\n\n[[workload]]\ngroup_by = ["age"]\nwhere = { nationality = ["Russian", "American"] }\n'
)


@pytest.mark.parametrize("metric", ["workload", "discernibility"])
def test_report_shows_the_workload_and_utility_per_attribute(inpatient: Db, tmp_path: Path, metric: str) -> None:
    """With ``[[workload]]``: each query's error at the reported node, at the workload-optimal node (a workload
    search) and at the discernibility-optimal node, as ``veil.workload`` computes them; ARX's utility per attribute
    as ``veil.utility`` does; both drawn.  Without: no workload metric is built and no workload section shown."""
    from veil.utility import attribute_utility, leaf_totals
    from veil.workload import metric_for_config

    path = inpatient.write_config(
        "patients", inpatient_body() + ENTROPY + f'\n[search]\nmetric = "{metric}"\n' + WORKLOAD
    )
    res = run_veil("report", "--config", str(path), "--node", "2,2,1", "--out", str(tmp_path / "w.html"))
    assert res.returncode == 0, res.stderr
    html = (tmp_path / "w.html").read_text(encoding="utf-8")
    self_contained(html)
    doc = embedded(html)
    conf = cfg.load(path)
    with open_backend(conf.source.resolved_url()).session() as session:
        wh = prepared_warehouse(session, conf)
        metrics = metrics_for(wh, conf)
        assert list(metrics) == list(cfg.METRICS)
        spec = Specification(conf.models, conf.search.max_suppression)
        optimal = {
            m: search.run(
                ("brute-force",), Lattice(wh.heights), wh.attributes, wh.counts, spec, metrics[m], wh.rows
            ).optimal
            for m in ("workload", "discernibility")
        }
        wanted = [("this node", (2, 2, 1))] + (
            [("workload-optimal", optimal["workload"].node)] if metric == "workload" else []
        )
        wanted.append(("discernibility-optimal", optimal["discernibility"].node))
        merged: dict[tuple[int, ...], list[str]] = {}
        for label, n in wanted:
            merged.setdefault(tuple(n), []).append(label)
        workload = metric_for_config(wh, conf)
        assert workload is not None
        expected = []
        for n, labels in merged.items():
            counts = wh.counts(n)
            gone = spec.evaluate(counts, wh.rows).failing
            expected.append(
                {
                    "label": " = ".join(labels),
                    "node": list(n),
                    "error": workload.loss(counts, gone, wh.rows),
                    "per_query": workload.errors(counts, gone),
                }
            )
        counts = wh.counts((2, 2, 1))
        utility = attribute_utility(
            counts, spec.evaluate(counts, wh.rows).failing, wh.hierarchies, leaf_totals(wh.counts((0, 0, 0)))
        )
        plain = metrics_for(
            wh, replace(conf, workload=(), data={k: v for k, v in conf.data.items() if k != "workload"})
        )
        assert "workload" not in plain and list(plain) == [m for m in cfg.METRICS if m != "workload"]
        assert "workload" not in metrics_for(wh)
    assert optimal["discernibility"].node == (1, 2, 1)
    assert [q["query"] for q in doc["workload"]["queries"]] == [
        "count by age, nationality",
        "count by zip, condition",
        "count by age where nationality in ['Russian', 'American']",
    ]
    assert [q["weight"] for q in doc["workload"]["queries"]] == [1.0, 2.0, 1.0]
    got = doc["workload"]["nodes"]
    assert [(n["label"], n["node"]) for n in got] == [(e["label"], e["node"]) for e in expected]
    for g, e in zip(got, expected):
        assert g["error"] == pytest.approx(e["error"]) and g["per_query"] == pytest.approx(e["per_query"])
    assert 0 < got[0]["error"] <= 1 and got[0]["node"] == [2, 2, 1]
    assert doc["utility_per_attribute"] == utility
    assert [a["level"] for a in utility] == [2, 2, 1] and utility[2]["generalization_intensity"] == 0.0
    charts = re.findall(r'<figure class="chart" data-chart="([^"]+)"><svg', html)
    assert "workload" in charts and "attribute-utility" in charts
    assert "count by zip, condition" in html and "non-uniform entropy" in html
    # the same table and models without [[workload]]: no workload section, utility per attribute still there
    plain_path = inpatient.write_config("patients", inpatient_body() + ENTROPY, name="plain.toml")
    assert (
        run_veil("report", "--config", str(plain_path), "--node", "2,2,1", "--out", str(tmp_path / "p.html")).returncode
        == 0
    )
    plain_html = (tmp_path / "p.html").read_text(encoding="utf-8")
    assert embedded(plain_html)["workload"] is None and embedded(plain_html)["utility_per_attribute"] == utility
    assert 'data-chart="workload"' not in plain_html and "Workload error" not in plain_html


# two queries of age: with a third of the rows suppressible their optimum keeps zip whole, discernibility's does not
AGES = '\n[[workload]]\ngroup_by = ["age"]\n\n[[workload]]\ngroup_by = ["age", "nationality"]\nweight = 2\n'


def test_release_report_shows_the_workload_at_the_versions_node(inpatient: Db, tmp_path: Path) -> None:
    """``veil report --release N`` with ``[[workload]]``: each query's error at the version's node (the catalog's),
    at the workload-optimal and at the discernibility-optimal node, answered from the source as it stands (the
    blocks failing the models suppressed) and said so; ARX's utility per attribute there too."""
    from veil.release import init, release
    from veil.report import build_report
    from veil.utility import attribute_utility, leaf_totals
    from veil.workload import metric_for_config

    out = "published" if inpatient.kind == "duckdb" else f"{inpatient.schema}_pub"
    cat = "veil" if inpatient.kind == "duckdb" else f"{inpatient.schema}_cat"
    body = f'\n[release]\nname = "inpatient"\nschema = "{out}"\ncatalog_schema = "{cat}"\ndrop_columns = ["id"]\n'
    path = inpatient.write_config(
        "patients",
        inpatient_body() + ENTROPY + '\n[search]\nmetric = "workload"\nmax_suppression = 0.34\n' + AGES + body,
    )
    conf = cfg.load(path)
    try:
        init(conf)
        outcome = release(conf)
        assert outcome.exit_code == 0 and outcome.version == 1 and outcome.node is not None
        html = build_report(conf, tmp_path / "v1.html", release=1).read_text(encoding="utf-8")
    finally:
        if inpatient.kind == "postgres":
            for schema in (out, cat):
                inpatient.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    self_contained(html)
    doc = embedded(html)
    node = tuple(outcome.node)
    assert doc["lattice"]["chosen"] == list(node) and doc["subject"].startswith("release 'inpatient' version 1")
    with open_backend(conf.source.resolved_url()).session() as session:
        wh = prepared_warehouse(session, conf)
        spec = Specification(conf.models, conf.search.max_suppression)
        workload = metric_for_config(wh, conf)
        assert workload is not None
        discernible = search.run(
            ("brute-force",),
            Lattice(wh.heights),
            wh.attributes,
            wh.counts,
            spec,
            metrics_for(wh)["discernibility"],
            wh.rows,
        ).optimal
        best = search.run(("brute-force",), Lattice(wh.heights), wh.attributes, wh.counts, spec, workload, wh.rows)
        assert discernible is not None and best.optimal is not None
        errors = {}
        for n in {node, best.optimal.node, discernible.node}:
            counts = wh.counts(n)
            gone = spec.evaluate(counts, wh.rows).failing
            errors[n] = (workload.loss(counts, gone, wh.rows), workload.errors(counts, gone))
        counts = wh.counts(node)
        utility = attribute_utility(
            counts, spec.evaluate(counts, wh.rows).failing, wh.hierarchies, leaf_totals(wh.counts((0, 0, 0)))
        )
    # the release searched the workload: its node is the workload optimum, shown once under both labels
    assert node == best.optimal.node == (0, 2, 1) and discernible.node == (1, 2, 1)
    assert outcome.rows_suppressed > 0  # a failing block suppressed there: the errors count it as the release did
    got = doc["workload"]["nodes"]
    assert [(g["label"], tuple(g["node"])) for g in got] == [
        ("this node = workload-optimal", node),
        ("discernibility-optimal", (1, 2, 1)),
    ]
    for g in got:
        error, per = errors[tuple(g["node"])]
        assert g["error"] == pytest.approx(error) and g["per_query"] == pytest.approx(per)
    assert 0 < got[0]["error"] < got[1]["error"] <= 1
    assert [q["query"] for q in doc["workload"]["queries"]] == ["count by age", "count by age, nationality"]
    assert doc["utility_per_attribute"] == utility and [a["level"] for a in utility] == [0, 2, 1]
    charts = re.findall(r'<figure class="chart" data-chart="([^"]+)"><svg', html)
    assert "workload" in charts and "attribute-utility" in charts and "Workload error" in html
    assert html.count("at this version's node, answered from the source as it stands now") == 2
    # the JSON says where each figure comes from: the version's rows, the catalog, or the source as it stands
    source, where = conf.source.qualified, doc["provenance"]
    version = {"release": "inpatient", "version": 1, "table": outcome.output_table}
    assert (
        where["workload"]
        == where["utility_per_attribute"]
        == {
            "from": "source",
            "table": source,
            "node": list(node),
            "as_of": "generated",
            "suppressed": "blocks failing the models at that node",
        }
    )
    assert (
        where["audit"]
        == where["headline.risk_after"]
        == {
            "from": "release",
            **version,
            "node": list(node),
            "as_of": "generated",
        }
    )
    assert where["lattice"]["from"] == where["headline.models_holding"]["from"] == "catalog"
    assert {k: where["lattice"][k] for k in version} == version and where["lattice"]["as_of"] != "generated"
    assert where["headline.risk_before"] == {
        "from": "source",
        "table": source,
        "node": "original values",
        "as_of": "generated",
    }


def test_veil_report_node_and_release(inpatient: Db, tmp_path: Path) -> None:
    out = "published" if inpatient.kind == "duckdb" else f"{inpatient.schema}_pub"
    cat = "veil" if inpatient.kind == "duckdb" else f"{inpatient.schema}_cat"
    release = f'\n[release]\nname = "inpatient"\nschema = "{out}"\ncatalog_schema = "{cat}"\ndrop_columns = ["id"]\n'
    path = inpatient.write_config("patients", inpatient_body() + ENTROPY + release)
    try:
        res = run_veil("report", "--config", str(path), "--node", "2,1,1", "--out", str(tmp_path / "node.html"))
        assert res.returncode == 0, res.stderr
        doc = embedded((tmp_path / "node.html").read_text())
        assert doc["lattice"]["chosen"] == [2, 1, 1] and doc["lattice"]["optimal"] == [1, 2, 1]
        assert {a["attack"]: a["rows"] for a in doc["audit"]["attacks"]}["homogeneity"] == 4  # Figure 2: Bob
        assert doc["headline"]["worst"]["rows"] == 8 and doc["headline"]["models_holding"] == 1  # l fails here
        assert run_veil("init", "--config", str(path)).returncode == 0
        assert run_veil("release", "--config", str(path)).returncode == 0
        res = run_veil("report", "--config", str(path), "--release", "1", "--out", str(tmp_path / "v1.html"))
        assert res.returncode == 0, res.stderr
        html = (tmp_path / "v1.html").read_text()
        self_contained(html)
        doc = embedded(html)
        assert doc["lattice"]["chosen"] == [1, 2, 1] and doc["lattice"]["heights"] == [5, 3, 1]
        assert any(n == [1, 2, 1] and p == 1 for n, p in doc["lattice"]["evaluated"])
        assert doc["subject"].startswith("release 'inpatient' version 1")
        assert doc["headline"]["risk_before"]["highest"] == 1.0 and doc["headline"]["risk_after"]["highest"] == 0.25
        # no [[workload]]: no workload section; the utility per attribute at the version's node, from the source
        assert doc["workload"] is None and 'data-chart="workload"' not in html and "Workload error" not in html
        assert [a["level"] for a in doc["utility_per_attribute"]] == [1, 2, 1]
        assert 'data-chart="attribute-utility"' in html
        # the cohort series so far, from the catalog's record of each night: one version, nothing held back
        assert doc["series"] == [
            {
                "version": 1,
                "rows_published": 12,
                "rows_deferred": 0,
                "standing_in": 0,
                "node": [1, 2, 1],
                "moved_up": False,
            }
        ]
        assert 'data-chart="series"' in html and doc["provenance"]["series"]["from"] == "catalog"
        node_doc = embedded((tmp_path / "node.html").read_text())
        assert node_doc["series"] is None and "series" not in node_doc["provenance"]
        missing = run_veil("report", "--config", str(path), "--release", "2", "--out", str(tmp_path / "x.html"))
        assert missing.returncode == 1 and "no published version 2" in missing.stderr
        assert not (tmp_path / "x.html").exists()
    finally:
        if inpatient.kind == "postgres":
            for schema in (out, cat):
                inpatient.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def test_release_writes_its_report_when_configured(inpatient: Db, tmp_path: Path) -> None:
    """``[release] report = "reports"``: each published version gets ``reports/<name>_v<N>.html`` (relative to
    the config), named in the JSON outcome; an unchanged source writes nothing new (skipped)."""
    out = "published" if inpatient.kind == "duckdb" else f"{inpatient.schema}_pub"
    cat = "veil" if inpatient.kind == "duckdb" else f"{inpatient.schema}_cat"
    release = (
        f'\n[release]\nname = "inpatient"\nschema = "{out}"\ncatalog_schema = "{cat}"\n'
        'drop_columns = ["id"]\nreport = "reports"\n'
    )
    path = inpatient.write_config("patients", inpatient_body() + ENTROPY + release)
    try:
        assert run_veil("init", "--config", str(path)).returncode == 0
        res = run_veil("release", "--config", str(path), "--json")
        assert res.returncode == 0, res.stderr
        doc = json.loads(res.stdout)
        report = path.parent / "reports" / "inpatient_v1.html"
        assert doc["status"] == "published" and doc["report"] == str(report) and report.exists()
        data = embedded(report.read_text(encoding="utf-8"))
        assert data["lattice"]["chosen"] == [1, 2, 1] and data["lattice"]["heights"] == [5, 3, 1]
        again = json.loads(run_veil("release", "--config", str(path), "--json").stdout)
        assert again["status"] == "skipped" and sorted(p.name for p in report.parent.iterdir()) == ["inpatient_v1.html"]
        forced = json.loads(run_veil("release", "--config", str(path), "--json", "--force").stdout)
        assert forced["version"] == 2 and forced["report"].endswith("inpatient_v2.html")
        kept = embedded((report.parent / "inpatient_v2.html").read_text(encoding="utf-8"))
        assert kept["lattice"]["chosen"] == [1, 2, 1]  # the previous node was kept: one evaluation shown
        assert kept["subject"].startswith("release 'inpatient' version 2")  # what was published, recounted
        # an outlier kept out of version 3: the report, like the release, says nothing of its labels or value
        inpatient.execute(f"INSERT INTO \"{inpatient.schema}\".patients VALUES (13, '99999', 28, 'Martian', 'Scurvy')")
        path.write_text(path.read_text().replace("[release]", "[search]\nmax_suppression = 0.1\n\n[release]"))
        third = json.loads(run_veil("release", "--config", str(path), "--json").stdout)
        held = third["rows_suppressed"] + third.get("rows_deferred", 0)  # suppressed, or held back by a series policy
        assert third["version"] == 3 and held == 1, json.dumps(third)
        html = (report.parent / "inpatient_v3.html").read_text(encoding="utf-8")
        assert "Scurvy" not in html and "9999" not in html and "Martian" not in html
        assert embedded(html)["subject"].startswith("release 'inpatient' version 3")
    finally:
        if inpatient.kind == "postgres":
            for schema in (out, cat):
                inpatient.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def test_page_escapes_hostile_names() -> None:
    from veil.adversary.attacks import audit_counts
    from veil.auditsettings import AuditSettings
    from veil.counts import NodeCounts, SensitiveDomain
    from veil.report import content

    hostile = "</script><script>alert(1)</script>"
    dom = SensitiveDomain(hostile, np.array([hostile, "b"], dtype=object), np.array([1, 1]))
    nc = NodeCounts.from_cells((hostile,), (0,), [[0], [0]], [[0], [1]], np.array([1, 1]), (1,), (dom,))
    audit = audit_counts(nc, AuditSettings(), (), hostile, lambda b: [hostile])
    data = content.ReportData(
        hostile,
        hostile,
        2,
        1,
        nc.sizes,
        (hostile,),
        (1,),
        (0,),
        None,
        [((0,), True, 0, None)],
        [],
        [],
        content.distributions(nc, audit),
        audit,
    )
    html = render(data)
    assert "<script>alert(1)" not in html and html.count("<script") == 2
    assert embedded(html)["title"] == hostile
    self_contained(html)


def test_a_series_section_shows_each_nights_held_rows_and_the_moves() -> None:
    """``seriesview.points`` from ``veil releases``' record: shares of the people in the source that night
    (published less standing in, plus deferred), by hand; a failed run, another policy and later versions are left
    out; the page's section says the last night's figures and where the node moved, the chart marks each point."""
    from veil.report import charts, content
    from veil.report.seriesview import points

    def run(v: int | None, status: str, pub: int | None, dfr: int, stand: int | None, moved: bool = False) -> dict:
        notes = {"node": "series, moved up"} if moved else {"node": "series"}
        node = [1, 1] if moved or (v or 0) > 3 else [0, 1]
        return {"version": v, "status": status, "series": "cohort", "rows_published": pub, "rows_deferred": dfr,
                "standing_in": stand, "node": node, "series_notes": notes}  # fmt: skip

    history = [
        run(1, "expired", 200, 0, 0),
        run(2, "published", 198, 4, 3),  # 198 − 3 + 4 = 199 people: 4/199 deferred, 3/199 standing in
        run(None, "failed", None, 0, None),
        run(3, "published", 203, 12, 10),  # 205 people
        run(4, "published", 205, 5, 6, moved=True),  # 204 people
        {**run(5, "published", 210, 0, 0), "series": "refuse", "standing_in": None},
        run(6, "published", 210, 0, 0),
    ]
    got = points(history, upto=5)
    assert [p.version for p in got] == [1, 2, 3, 4]
    assert [p.table for p in got] == [200, 199, 205, 204]
    assert got[1].deferred_share == pytest.approx(4 / 199) and got[1].standing_share == pytest.approx(3 / 199)
    assert [p.moved for p in got] == [False, False, False, True] and got[3].node == (1, 1)
    svg = charts.series_svg(got)
    assert "version 2: 2% of 199 rows deferred (4 rows)" in svg, svg[:2000]
    assert "version 4: the node moved up to [1, 1]" in svg
    base = content.ReportData("t", "s", 1, 1, np.array([1]), ("q",), None, None, None, [], [], [], [], _empty_audit())
    html = render(replace(base, series=got))
    assert 'data-chart="series"' in html and "Version 4: 2.5% deferred, 2.9% standing in." in html
    assert "moved up at version 4 (dashed)" in html
    assert embedded(html)["series"][3] == {
        "version": 4, "rows_published": 205, "rows_deferred": 5, "standing_in": 6, "node": [1, 1], "moved_up": True
    }  # fmt: skip
    assert 'data-chart="series"' not in render(base) and embedded(render(base))["series"] is None


def _empty_audit() -> object:
    from veil.adversary.attacks import audit_counts
    from veil.auditsettings import AuditSettings
    from veil.counts import NodeCounts, SensitiveDomain

    dom = SensitiveDomain("d", np.array(["a", "b"], dtype=object), np.array([1, 1]))
    nc = NodeCounts.from_cells(("q",), (0,), [[0], [0]], [[0], [1]], np.array([1, 1]), (1,), (dom,))
    return audit_counts(nc, AuditSettings(), (), "s", lambda b: ["x"])


def test_numbers_read_as_numbers() -> None:
    """No scientific notation, thousands separators, a numeric attribute binned, a long tail in one open bin."""
    from veil.counts import NodeCounts, SensitiveDomain
    from veil.report.content import distributions, size_bins
    from veil.report.formatting import human, plain_text
    from veil.adversary.attacks import audit_counts
    from veil.auditsettings import AuditSettings

    assert human(100719234.0) == "100,719,234" and human(8.48502e6) == "8,485,020" and human(2.8284271) == "2.828"
    assert plain_text("p_out = 5e-05; D = 1.00719e+08") == "p_out = 0.00005; D = 100,719,000"
    incomes = np.arange(2_000, 102_000, 50, dtype=np.float64)  # 2,000 distinct incomes, one very rich row
    incomes = np.append(incomes, 711_500.0)
    dom = SensitiveDomain("income", incomes, np.ones(len(incomes), dtype=np.int64), numeric=True)
    n = len(incomes)
    nc = NodeCounts.from_cells(
        ("q",), (0,), np.zeros((n, 1), dtype=np.int64), np.arange(n)[:, None], np.ones(n, dtype=np.int64), (1,), (dom,)
    )
    (d,) = distributions(nc, audit_counts(nc, AuditSettings(), (), "t", lambda b: ["*"]))
    assert d.edges is not None and 8 <= len(d.categories) <= 14 and d.open_top
    assert d.categories[0] == "0 – 10,000" and d.categories[-1].endswith("and more")
    assert sum(d.series[0][1]) == pytest.approx(1.0)
    bins = size_bins(np.array([1, 3, 9, 10, 700]), k=10)
    assert [(b.label, b.blocks, b.below_k) for b in bins] == [
        ("1", 1, True),
        ("2–3", 1, True),
        ("4–7", 0, True),
        ("8–9", 1, True),
        ("10–15", 1, False),
        ("16–31", 0, False),
        ("32–63", 0, False),
        ("64–127", 0, False),
        ("128–255", 0, False),
        ("256–511", 0, False),
        ("512–1,023", 1, False),
    ]


def test_a_release_without_a_report_loads_no_charting_library(tmp_path: Path) -> None:
    """``veil release`` with no ``[release] report``: neither the report nor Altair nor vl-convert is imported."""
    script = r"""
import sys
from pathlib import Path
import duckdb
from veil import config as cfg
from veil.demo import inpatient_rows
from veil.release import init, release
from tests.conftest import inpatient_body
d = Path(sys.argv[1])
con = duckdb.connect(str(d / "w.duckdb"))
con.execute("CREATE SCHEMA raw; CREATE TABLE raw.patients (id INT, zip TEXT, age INT, nationality TEXT, condition TEXT)")
con.executemany("INSERT INTO raw.patients VALUES (?, ?, ?, ?, ?)", inpatient_rows())
con.close()
(d / "veil.toml").write_text('[source]\nurl = "duckdb:///w.duckdb"\ntable = "raw.patients"\n' + inpatient_body()
                             + '\n[release]\nname = "inpatient"\nschema = "published"\ndrop_columns = ["id"]\n')
conf = cfg.load(d / "veil.toml")
init(conf)
print(release(conf).exit_code, sorted(m for m in ("altair", "vl_convert", "veil.report") if m in sys.modules))
"""
    root = Path(__file__).resolve().parent.parent
    res = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, cwd=root, timeout=300
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().splitlines()[-1] == "0 []", res.stdout
