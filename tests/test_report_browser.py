"""The report in a real browser: headless Chromium (Debian's package, driven by selenium through Debian's
chromedriver, no browser download) opens the HTML file and the test measures what a reader sees:

- in every chart, the bounding box of every visible text element (axis labels, legend entries, titles) as
  Chromium laid it out: no two overlap (side by side, at least 2 px apart), none sticks out of its chart;
- every chart has marks with an area (no empty chart, no column of zero-width bars), and a bounded number
  of them (a chart stays readable whatever the lattice's or the table's size);
- no number in scientific notation anywhere on the page; the headline is there; hovering a bar shows its
  details; the console stays clean.

Pages: the inpatient table (12 rows, a 48-node lattice), the demo census (20,000 rows of the demo generator:
2,160 lattice nodes, a numeric income, 14 occupations; node and release reports) and a synthetic 11,520-node
lattice.  A negative control proves the checks fail on overlapping labels and empty charts.  Screenshots
(full page) are saved next to each test's temporary page and their paths printed; ``VEIL_REPORT_SCREENSHOT=DIR``
also copies them to DIR.  Locally the test skips when Chromium is absent; with ``CI=true`` it fails.
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
MAX_MARKS = 600  # marks per chart: beyond this a chart is a field of dots, not a picture


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
    for arg in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        "--window-size=1280,1800",
        "--hide-scrollbars",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(DRIVER))
    try:
        yield driver
    finally:
        driver.quit()


# Every chart of the page (Veil's figures; the old hand-drawn svg.chart too, for the negative control): its
# visible texts' boxes, the pairs that overlap, texts outside the chart, and its marks with an area.
LAYOUT = """
const charts = Array.from(document.querySelectorAll("figure.chart > svg, svg.chart"));
function hidden(el) {
  for (let e = el; e && e instanceof SVGElement; e = e.parentNode) {
    const s = getComputedStyle(e);
    if (s.display === "none" || s.visibility === "hidden" || Number(s.opacity) === 0) return true;
  }
  return false;
}
const GAP = 2;
const MARK = '[role="graphics-symbol"]:not([aria-roledescription*="axis"]):not([aria-roledescription*="legend"])';
return charts.map(svg => {
  const frame = svg.getBoundingClientRect();
  const texts = Array.from(svg.querySelectorAll("text")).filter(t => t.textContent.trim() && !hidden(t))
    .map(t => { const r = t.getBoundingClientRect();
                return {text: t.textContent.trim(), x: r.left, y: r.top, w: r.width, h: r.height}; });
  const overlaps = [];
  for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
    const a = texts[i], b = texts[j];
    const dx = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
    const dy = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
    if (dy > 1 && dx > -GAP) overlaps.push([a.text, b.text]);   // on one line: closer than GAP px, or over
  }
  const outside = texts.filter(t => t.x < frame.left - 1 || t.y < frame.top - 1 || t.x + t.w > frame.right + 1
                                    || t.y + t.h > frame.bottom + 1).map(t => t.text);
  const marks = Array.from(svg.querySelectorAll(MARK + ", rect.bar")).filter(m => !hidden(m)).map(m => {
    const r = m.getBoundingClientRect(); return [r.width, r.height]; });
  const fig = svg.closest("figure");
  return {chart: fig ? fig.dataset.chart : (svg.getAttribute("aria-label") || "svg"), texts: texts.length,
          overlaps: overlaps.slice(0, 8), overlapping: overlaps.length, outside: outside.slice(0, 8),
          marks: marks.length, inked: marks.filter(([w, h]) => w >= 1 && h >= 1).length,
          width: frame.width, height: frame.height};
});
"""

PAGE = """
const text = document.body.innerText;
return {scientific: (text.match(/\\b\\d+(\\.\\d+)?e[+-]?\\d+\\b/gi) || []).slice(0, 5),
        headline: document.querySelectorAll("#headline .card").length,
        canvas: document.querySelectorAll("canvas").length,
        height: document.documentElement.scrollHeight,
        loaded: performance.timing.loadEventEnd - performance.timing.navigationStart};
"""


def layout_problems(charts: list[dict]) -> list[str]:
    """What a reader would see wrong in the charts measured by ``LAYOUT``."""
    problems = []
    for c in charts:
        if c["overlapping"]:
            problems.append(f"{c['chart']}: {c['overlapping']} overlapping labels, e.g. {c['overlaps'][:3]}")
        if c["outside"]:
            problems.append(f"{c['chart']}: labels outside the chart: {c['outside'][:3]}")
        if c["inked"] == 0:
            problems.append(f"{c['chart']}: an empty chart ({c['marks']} marks, none with an area)")
        if c["marks"] > MAX_MARKS:
            problems.append(f"{c['chart']}: {c['marks']} marks, more than a reader can tell apart")
    return problems


def screenshot(driver: object, target: Path) -> Path:
    """A full-page PNG: the window stretched to the page's height first."""
    height = driver.execute_script("return document.documentElement.scrollHeight")  # type: ignore[attr-defined]
    driver.set_window_size(1280, min(int(height) + 40, 14_000))  # type: ignore[attr-defined]
    driver.save_screenshot(str(target))  # type: ignore[attr-defined]
    driver.set_window_size(1280, 1800)  # type: ignore[attr-defined]
    if os.environ.get("VEIL_REPORT_SCREENSHOT"):
        folder = Path(os.environ["VEIL_REPORT_SCREENSHOT"])
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(target, folder / target.name)
    print(f"report screenshot: {target}")
    return target


def measure(driver: object, page: Path) -> tuple[list[dict], dict, list]:
    driver.get_log("browser")  # type: ignore[attr-defined]  (drop anything left from a previous page)
    driver.get(page.as_uri())  # type: ignore[attr-defined]
    charts = driver.execute_script(LAYOUT)  # type: ignore[attr-defined]
    facts = driver.execute_script(PAGE)  # type: ignore[attr-defined]
    errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]  # type: ignore[attr-defined]
    return charts, facts, errors


def open_and_check(driver: object, page: Path, *, expect: set[str]) -> tuple[list[dict], dict]:
    charts, facts, errors = measure(driver, page)
    shot = screenshot(driver, page.with_suffix(".png"))
    print(
        f"{page.name}: loaded in {facts['loaded']} ms, {facts['height']} px; charts "
        + ", ".join(f"{c['chart']} ({c['marks']} marks, {c['texts']} labels)" for c in charts)
    )
    assert errors == [], errors
    assert layout_problems(charts) == [], (layout_problems(charts), shot)
    assert expect <= {c["chart"] for c in charts}, ({c["chart"] for c in charts}, shot)
    assert facts["scientific"] == [] and facts["headline"] >= 3 and facts["canvas"] == 0, facts
    assert shot.stat().st_size > 20_000
    return charts, facts


def hover_shows_details(driver: object, chart: str, contains: str) -> str:
    """Move the pointer over the first bar of ``chart``: the tip shows that bar's details."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    bars = driver.find_elements(
        By.CSS_SELECTOR,
        f'figure[data-chart="{chart}"] '  # type: ignore[attr-defined]
        '[aria-roledescription="bar"]',
    )
    bar = next(b for b in bars if b.size["width"] >= 2 and b.size["height"] >= 2)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", bar)  # type: ignore[attr-defined]
    ActionChains(driver).move_to_element(bar).perform()
    tip = driver.find_element(By.ID, "tip")  # type: ignore[attr-defined]
    assert tip.is_displayed() and contains in tip.text, tip.text
    return tip.text


def test_inpatient_report_renders(browser: object, tmp_path: Path) -> None:
    from veil.demo import inpatient_rows
    import duckdb

    from tests.conftest import inpatient_body

    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    con.execute(
        "CREATE SCHEMA raw; CREATE TABLE raw.patients (id INT, zip TEXT, age INT, nationality TEXT, condition TEXT)"
    )
    con.executemany("INSERT INTO raw.patients VALUES (?, ?, ?, ?, ?)", inpatient_rows())
    con.close()
    path = tmp_path / "veil.toml"
    path.write_text(
        f'[source]\nurl = "duckdb:///w.duckdb"\ntable = "raw.patients"\n'
        + inpatient_body()
        + '\n[[models]]\ntype = "entropy-l-diversity"\nl = 2.5\n[search]\nstrategy = "brute-force"\n'
        + '\n[[workload]]\ngroup_by = ["age", "nationality"]\n\n[[workload]]\ngroup_by = ["zip", "condition"]\n'
        + '\n[[workload]]\ngroup_by = ["age"]\nwhere = { nationality = ["Russian", "American"] }\n'
    )
    page = build_report(cfg.load(path), tmp_path / "inpatient.html", node="2,1,1")
    charts, _facts = open_and_check(
        browser, page, expect={"blocks", "distribution:condition", "lattice", "node", "workload", "attribute-utility"}
    )
    assert "error 0" in hover_shows_details(browser, "workload", "count by age, nationality")
    lattice = next(c for c in charts if c["chart"] == "lattice")
    assert 0 < lattice["marks"] <= 3 * 10 + 10 + 4  # 10 heights × 3 verdicts, the minimal strip, 2 lines × 2 panels
    assert "height" in hover_shows_details(browser, "lattice", "nodes")


@pytest.fixture(scope="module")
def census(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo census at 20,000 rows (the demo's generator, hierarchies and config): its config."""
    from veil.demo import HIERARCHIES
    from veil.demo.setup import CONFIG, create_warehouse

    folder = tmp_path_factory.mktemp("census")
    create_warehouse(folder / "warehouse.duckdb", 20_000)
    shutil.copytree(HIERARCHIES, folder / "hierarchies")
    (folder / "veil.toml").write_text(CONFIG.format(), encoding="utf-8")
    return folder / "veil.toml"


@pytest.mark.parametrize("which", ["node", "release"])
def test_census_report_reads_at_scale(browser: object, census: Path, tmp_path: Path, which: str) -> None:
    conf = cfg.load(census)
    from veil.release.history import releases

    if which == "release":
        from veil.release import init, release

        init(conf)
        assert release(conf).exit_code == 0
    version, history = (1, releases(conf)["releases"]) if which == "release" else (None, [])
    page = build_report(conf, tmp_path / f"census-{which}.html", release=version, history=history)
    expect = {"blocks", "distribution:occupation", "distribution:income", "lattice", "node"}
    charts, facts = open_and_check(browser, page, expect=expect | ({"series"} if which == "release" else set()))
    assert facts["loaded"] < 3_000, facts
    lattice = next(c for c in charts if c["chart"] == "lattice")
    assert lattice["marks"] <= 3 * 18 + 18 + 4  # 2,160 nodes drawn as 18 heights
    html = page.read_text(encoding="utf-8")
    assert "2,160 nodes" in html and "e+0" not in html
    assert "%" in hover_shows_details(browser, "distribution:income", "income")


def test_a_lattice_of_eleven_thousand_nodes_reads(browser: object, tmp_path: Path) -> None:
    from veil.counts import NodeCounts, SensitiveDomain
    from veil.adversary.attacks import audit_counts
    from veil.auditsettings import AuditSettings

    heights = (4, 3, 3, 2, 2, 3, 3)  # 5·4·4·3·3·4·4 = 11,520 nodes, every one evaluated
    nodes = list(itertools.product(*(range(h + 1) for h in heights)))
    rng = np.random.default_rng(7)
    dom = SensitiveDomain("disease", np.array([f"d{i}" for i in range(30)], dtype=object), np.full(30, 100))
    blocks = 2_000
    cells = rng.integers(0, 30, size=(6_000, 1))
    block = np.concatenate([np.arange(blocks), rng.integers(0, blocks, 4_000)])
    nc = NodeCounts.from_cells(
        tuple("abcdefg"),
        (2, 1, 1, 1, 1, 1, 1),
        np.column_stack([block] + [np.zeros(6_000, dtype=np.int64)] * 6),
        cells,
        rng.integers(1, 5, 6_000),
        (blocks, 1, 1, 1, 1, 1, 1),
        (dom,),
    )
    audit = audit_counts(nc, AuditSettings(), (), "synthetic", lambda b: [str(b)])
    evaluated = [(n, bool(sum(n) >= 9), 0, None) for n in nodes]
    data = content.ReportData(
        "synthetic 7-QI lattice",
        "synthetic",
        nc.rows,
        nc.n_blocks,
        nc.sizes,
        nc.attributes,
        heights,
        (2, 1, 1, 1, 1, 1, 2),
        (1, 1, 2, 1, 1, 2, 1),
        evaluated,
        [],
        [],
        content.distributions(nc, audit),
        audit,
        4,
    )
    page = tmp_path / "lattice-11520.html"
    page.write_text(render(data), encoding="utf-8")
    assert page.stat().st_size < 600_000
    charts, facts = open_and_check(browser, page, expect={"lattice", "blocks", "distribution:disease"})
    assert facts["loaded"] < 3_000, facts
    assert next(c for c in charts if c["chart"] == "lattice")["marks"] <= 3 * 21 + 21 + 4


def test_the_checks_fail_on_overlapping_labels_and_empty_charts(browser: object, tmp_path: Path) -> None:
    """Negative control: the measurements above do see what the old hand-drawn report showed at census size
    (labels drawn over each other, a chart whose bars have no width)."""
    page = tmp_path / "bad.html"
    page.write_text(
        "<!doctype html><html><body>"
        '<figure class="chart" data-chart="crowded"><svg width="300" height="100"><rect class="bar" x="0" y="0" '
        'width="50" height="50"/><text x="10" y="40">100,000</text><text x="30" y="42">200,000</text></svg></figure>'
        '<figure class="chart" data-chart="empty"><svg width="300" height="100"><rect class="bar" x="0" y="0" '
        'width="0.2" height="10"/><text x="10" y="40">0%</text></svg></figure>'
        '<figure class="chart" data-chart="clipped"><svg width="100" height="60"><rect class="bar" x="0" y="0" '
        'width="50" height="50"/><text x="80" y="40">a long label cut off</text></svg></figure></body></html>',
        encoding="utf-8",
    )
    charts, _facts, _errors = measure(browser, page)
    problems = layout_problems(charts)
    assert any(p.startswith("crowded: 1 overlapping labels") for p in problems), problems
    assert any(p.startswith("empty: an empty chart") for p in problems), problems
    assert any(p.startswith("clipped: labels outside the chart") for p in problems), problems
