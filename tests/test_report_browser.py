"""The report in a real browser: headless Chromium (Debian's package, driven by selenium through Debian's
chromedriver, no browser download) opens the HTML file, the test takes a screenshot and checks that every
picture rendered (SVG bars with a size, a lattice canvas with pixels drawn) and that the console stayed
clean.  A 6-QI lattice of 2,880 nodes must render in well under a few seconds.

Locally the test skips when Chromium is absent; with ``CI=true`` it fails.  ``VEIL_REPORT_SCREENSHOT=1``
also copies the screenshot to ``bench/results/report-screenshot.png``.
"""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from veil import config as cfg
from veil.report import build_report, content
from veil.report.page import render
from tests.conftest import IN_CI

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as exc:
        problem: str | None = f"selenium is not installed ({exc}); pip install -e '.[dev]'"
    else:
        problem = None if CHROMIUM and DRIVER else "chromium and chromedriver are not installed (.ci/chromium.sh)"
    if problem:
        if IN_CI:
            pytest.fail(f"the browser test must run in CI: {problem}")
        pytest.skip(problem)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tmp_path_factory.mktemp("chromium-profile")
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--window-size=1280,1800"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(DRIVER))
    try:
        yield driver
    finally:
        driver.quit()


PICTURES = """
const svgs = Array.from(document.querySelectorAll("svg.chart"));
const bars = svgs.map(s => Array.from(s.querySelectorAll("rect.bar")).filter(r => r.getBBox().width > 0
                                                                        && r.getBBox().height > 0).length);
const canvas = document.getElementById("lattice-canvas");
let inked = 0;
if (canvas) {
  const px = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
  for (let i = 0; i < px.length; i += 4) { if (px[i] < 240 || px[i + 1] < 240 || px[i + 2] < 240) inked++; }
}
return {svgs: svgs.length, bars: bars, canvas: canvas ? [canvas.width, canvas.height] : null, inked: inked,
        drawn: canvas ? Number(canvas.getAttribute("data-drawn")) : 0,
        loaded: performance.timing.loadEventEnd - performance.timing.navigationStart};
"""


def open_and_check(driver: object, page: Path, screenshot: Path, lattice: int) -> dict:
    driver.get_log("browser")  # type: ignore[attr-defined]  (drop anything left from a previous page)
    driver.get(page.as_uri())  # type: ignore[attr-defined]
    result = driver.execute_script(PICTURES)  # type: ignore[attr-defined]
    errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]  # type: ignore[attr-defined]
    driver.save_screenshot(str(screenshot))  # type: ignore[attr-defined]
    print(f"report screenshot: {screenshot} (loaded in {result['loaded']} ms)")
    assert errors == [], errors
    assert result["svgs"] >= 2 and all(n > 0 for n in result["bars"]), result
    assert result["canvas"] and result["drawn"] == lattice and result["inked"] > 200, result
    assert screenshot.stat().st_size > 10_000
    return result


def test_inpatient_report_renders(browser: object, tmp_path: Path) -> None:
    from veil.demo import inpatient_rows
    import duckdb

    from tests.conftest import inpatient_body

    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    con.execute("CREATE SCHEMA raw; CREATE TABLE raw.patients (id INT, zip TEXT, age INT, nationality TEXT, "
                "condition TEXT)")
    con.executemany("INSERT INTO raw.patients VALUES (?, ?, ?, ?, ?)", inpatient_rows())
    con.close()
    path = tmp_path / "veil.toml"
    path.write_text(f'[source]\nurl = "duckdb:///w.duckdb"\ntable = "raw.patients"\n' + inpatient_body()
                    + '\n[[models]]\ntype = "entropy-l-diversity"\nl = 2.5\n[search]\nstrategy = "brute-force"\n')
    page = build_report(cfg.load(path), tmp_path / "report.html", node="2,1,1")
    shot = tmp_path / "report.png"
    open_and_check(browser, page, shot, lattice=48)
    if os.environ.get("VEIL_REPORT_SCREENSHOT"):
        target = ROOT / "bench" / "results" / "report-screenshot.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, target)
        print(f"copied to {target}")


def test_a_six_qi_lattice_of_thousands_of_nodes_opens_fast(browser: object, tmp_path: Path) -> None:
    from veil.risk.attacks import audit_counts
    from veil.risk.settings import AuditSettings
    from veil.counts import NodeCounts, SensitiveDomain

    heights = (4, 3, 3, 2, 2, 3)                               # 5·4·4·3·3·4 = 2,880 nodes, every one evaluated
    nodes = list(itertools.product(*(range(h + 1) for h in heights)))
    rng = np.random.default_rng(7)
    dom = SensitiveDomain("disease", np.array([f"d{i}" for i in range(30)], dtype=object), np.full(30, 100))
    blocks = 2_000
    cells = rng.integers(0, 30, size=(6_000, 1))
    block = np.concatenate([np.arange(blocks), rng.integers(0, blocks, 4_000)])[:, None]
    counts = rng.integers(1, 5, 6_000)
    nc = NodeCounts.from_cells(("a", "b", "c", "d", "e", "f"), (2, 1, 1, 1, 1, 1),
                               np.column_stack([block[:, 0]] + [np.zeros(6_000, dtype=np.int64)] * 5), cells, counts,
                               (blocks, 1, 1, 1, 1, 1), (dom,))
    audit = audit_counts(nc, AuditSettings(), (), "synthetic", lambda b: [str(b)])
    evaluated = [(n, bool(sum(n) >= 8), 0, None) for n in nodes]
    data = content.ReportData("synthetic 6-QI lattice", "synthetic", nc.rows, nc.n_blocks, nc.sizes, nc.attributes,
                              heights, (2, 1, 1, 1, 1, 1), (1, 1, 2, 1, 1, 2), evaluated, [], [],
                              content.distributions(nc, audit), audit, 4)
    page = tmp_path / "big.html"
    page.write_text(render(data), encoding="utf-8")
    assert page.stat().st_size < 400_000
    result = open_and_check(browser, page, tmp_path / "big.png", lattice=len(nodes))
    assert result["loaded"] < 3_000, result
