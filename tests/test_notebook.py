"""The notebook API on in-memory DuckDB: hand-checked results on the inpatient table (Machanavajjhala et al.,
ICDE 2006, Figures 1-3), the CLI's messages, and the example of docs/how-to/notebook.md run as written."""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import veil
from veil.demo import HIERARCHIES, inpatient_rows
from veil.errors import ConfigError, HierarchyError, NoSolutionError, SourceError, VeilError
from tests.conftest import INPATIENT_COLUMNS, Db, inpatient_body, run_veil

NOTEBOOK_DOC = Path(__file__).resolve().parent.parent / "docs" / "how-to" / "notebook.md"
AGE_CSV = str(HIERARCHIES / "inpatient_age.csv")
QIS = {"zip": {"mask": True}, "age": {"csv": AGE_CSV}, "nationality": {"suppress": True}}
K4 = {"type": "k-anonymity", "k": 4}
ENTROPY = {"type": "entropy-l-diversity", "l": 2.5}


@pytest.fixture
def patients() -> pd.DataFrame:
    return pd.DataFrame(inpatient_rows(), columns=["id", "zip", "age", "nationality", "condition"])


def age_levels() -> pd.DataFrame:
    """The age hierarchy of inpatient_age.csv as a DataFrame of levels."""
    ages = pd.DataFrame({"age": range(100)})
    ages["decade"] = ["<30" if a < 30 else "3*" if a < 40 else ">=40" for a in ages.age]
    ages["forty"] = ["<40" if a < 40 else ">=40" for a in ages.age]
    ages["top"] = "*"
    return ages


def test_anonymize_finds_figure_3(patients: pd.DataFrame) -> None:
    # k=4 and entropy l=2.5: Figure 2's node (2,1,1) has the all-Cancer block 130**/3* (entropy exp(0) = 1),
    # Figure 3's (1,2,1) has blocks {HD,VI,C,C} twice and {C,HD,VI,VI}: exp(entropy) = exp(1.5 ln 2) = 2.83.
    r = veil.anonymize(patients, QIS, ["condition"], [K4, ENTROPY])
    assert r.node == (1, 2, 1) and r.minimal is None and r.suppressed_rows == 0  # optimal lists no minimal nodes
    assert (r.strategy, r.lattice_size) == ("optimal", 48) and 0 < r.nodes_evaluated < 48
    assert (r.metric_name, r.metric) == ("discernibility", 48.0)  # 3 blocks of 4: 3 · 4²
    assert r.achieved["k-anonymity"] == 4.0
    assert r.achieved["entropy-l-diversity:condition"] == pytest.approx(2**1.5)
    assert r.attributes == ("zip", "age", "nationality") and r.heights == (5, 3, 1)
    assert list(r.data.columns) == ["zip", "age", "nationality", "condition"]  # id is not published
    expected_zip = [
        "1305*",
        "1306*",
        "1306*",
        "1305*",
        "1485*",
        "1485*",
        "1485*",
        "1485*",
        "1305*",
        "1305*",
        "1306*",
        "1306*",
    ]
    assert r.data["zip"].tolist() == expected_zip
    assert r.data["age"].tolist() == ["<40"] * 4 + [">=40"] * 4 + ["<40"] * 4
    assert set(r.data["nationality"]) == {"*"}
    assert r.data["condition"].tolist() == patients["condition"].tolist()


def test_the_strategy_is_one_search_and_optimal_by_default(patients: pd.DataFrame) -> None:
    """Issue 35: the API ran optimal *and* incognito on every call (Adult: 124 s where the CLI's optimal took
    5.2 s).  Now one strategy, optimal by default; incognito and brute force list the minimal nodes too, and
    reach the same optimum."""
    default = veil.anonymize(patients, QIS, ["condition"], [K4, ENTROPY])
    found = {
        s: veil.anonymize(patients, QIS, ["condition"], [K4, ENTROPY], strategy=s)
        for s in ("optimal", "incognito", "brute-force")
    }
    assert {s: (r.node, r.minimal) for s, r in found.items()} == {
        "optimal": ((1, 2, 1), None),
        "incognito": ((1, 2, 1), ((1, 2, 1),)),
        "brute-force": ((1, 2, 1), ((1, 2, 1),)),
    }
    assert default.nodes_evaluated == found["optimal"].nodes_evaluated < found["incognito"].nodes_evaluated
    assert found["brute-force"].nodes_evaluated == 48
    pd.testing.assert_frame_equal(found["incognito"].data, default.data)
    with pytest.raises(
        ConfigError,
        match=re.escape(
            "veil.anonymize(): argument 'strategy' must be one of optimal, incognito, brute-force, got 'fast'"
        ),
    ):
        veil.anonymize(patients, QIS, ["condition"], [K4], strategy="fast")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_shows_on_a_terminal_only(patients: pd.DataFrame, monkeypatch: pytest.MonkeyPatch) -> None:
    """The steps and the search's nodes on a terminal (rich, like the CLI's bar); nothing when stderr is not a
    terminal (a script's log) or with ``progress=False``; ``progress=True`` draws it anyway (an IDE's console
    that is no terminal); a bad ``progress`` is one line."""
    cases = {
        "terminal": (_Terminal(), None),
        "log": (io.StringIO(), None),
        "off": (_Terminal(), False),
        "forced": (io.StringIO(), True),
    }
    shown = {}
    for case, (stream, progress) in cases.items():
        monkeypatch.setattr(sys, "stderr", stream)
        veil.anonymize(patients, QIS, ["condition"], [K4], progress=progress)
        shown[case] = stream.getvalue()
    steps = (
        "loading the DataFrame (12 rows)",
        "searching the lattice (optimal)",
        "lattice of 48",
        "generalizing the rows",
    )
    for case in ("terminal", "forced"):
        assert all(step in shown[case] for step in steps), (case, shown[case])
    assert shown["log"] == shown["off"] == ""
    monkeypatch.setattr(sys, "stderr", _Terminal())
    assert veil.check(patients, QIS, "condition", [K4], node="2,1,1").passed
    assert "loading the DataFrame (12 rows)" in sys.stderr.getvalue()
    with pytest.raises(
        ConfigError, match=r"^veil\.audit\(\): argument 'progress' must be True, False or None, got 'yes'$"
    ):
        veil.audit(patients, QIS, ["condition"], [K4], progress="yes")


def test_without_pandas_each_function_names_the_notebook_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # ``import pandas`` raises ImportError
    for name in ("anonymize", "check", "audit"):
        with pytest.raises(VeilError) as info:
            getattr(veil, name)(object(), QIS, ["condition"], [K4])
        assert str(info.value) == f"veil.{name}() needs pandas, which is not installed: pip install 'veil[notebook]'"


def test_suppression_keeps_order_index_and_kept_columns(patients: pd.DataFrame) -> None:
    # zip alone, k=3, 34% suppression, metric height: level 0 has blocks 13053 (4 rows), 13068 (4), 14853 (2),
    # 14850 (2); suppressing the two small blocks (4 of 12 rows = 33%) fits, and height 0 is the best value.
    patients.index = patients["id"] * 10
    r = veil.anonymize(
        patients,
        {"zip": {"mask": True}},
        models=[{"type": "k-anonymity", "k": 3}],
        max_suppression=0.34,
        metric="height",
        keep_columns=["id"],
    )
    assert r.node == (0,) and r.suppressed_rows == 4 and r.metric == 0.0 and r.achieved == {"k-anonymity": 4.0}
    assert r.data.index.tolist() == [10, 20, 30, 40, 90, 100, 110, 120]
    assert r.data["id"].tolist() == [1, 2, 3, 4, 9, 10, 11, 12]
    assert r.data["zip"].tolist() == ["13053", "13068", "13068", "13053", "13053", "13053", "13068", "13068"]
    assert list(r.data.columns) == ["id", "zip"]


def test_a_dataframe_of_levels_is_a_hierarchy(patients: pd.DataFrame) -> None:
    by_csv = veil.anonymize(patients, QIS, "condition", [K4, ENTROPY])
    by_frame = veil.anonymize(patients, {**QIS, "age": age_levels()}, "condition", [K4, ENTROPY])
    assert by_frame.node == by_csv.node and by_frame.achieved == by_csv.achieved
    pd.testing.assert_frame_equal(by_frame.data, by_csv.data)


def test_check_at_figure_2(patients: pd.DataFrame) -> None:
    c = veil.check(patients, QIS, "condition", [K4, ENTROPY], node={"zip": 2, "age": 1, "nationality": 1})
    assert c.node == (2, 1, 1) and not c.passed and c.rows == 12 and c.blocks == 3 and c.data is None
    # 130**/<30 is {HD, HD, VI, VI}: exp(entropy) = 2 < 2.5; 130**/3* all Cancer: 1; 148** passes with 2.83
    assert [(m["type"], m["passed"], m["achieved"], m["violating_blocks"]) for m in c.models] == [
        ("k-anonymity", True, 4.0, 0),
        ("entropy-l-diversity", False, 1.0, 2),
    ]
    ok = veil.check(patients, QIS, "condition", [K4], node="2,1,1")
    assert ok.passed and ok.data["age"].tolist()[:4] == ["<30"] * 4 and ok.data["zip"].iloc[4] == "148**"
    bottom = veil.check(patients, QIS, "condition", [K4])
    assert bottom.node == (0, 0, 0) and bottom.blocks == 12 and not bottom.passed


def duckdb_patients(tmp_path: Path) -> Db:
    """The inpatient table in a DuckDB file, for the CLI side of a comparison (the API runs in memory)."""
    db = Db("duckdb", f"duckdb:///{tmp_path / 'warehouse.duckdb'}", "raw", tmp_path)
    db.create_table("patients", INPATIENT_COLUMNS, inpatient_rows())
    return db


def test_check_gives_the_cli_document(patients: pd.DataFrame, tmp_path: Path) -> None:
    import json

    inpatient = duckdb_patients(tmp_path)
    path = inpatient.write_config(
        "patients", inpatient_body() + '\n[[models]]\ntype = "entropy-l-diversity"\nl = 2.5\n'
    )
    res = run_veil("check", "--config", str(path), "--node", "1,2,1", "--json")
    doc = json.loads(res.stdout)
    c = veil.check(patients, QIS, "condition", [K4, ENTROPY], node=(1, 2, 1))
    assert (c.passed, c.rows, c.blocks, c.suppressed_rows, list(c.models)) == (
        doc["passed"],
        doc["rows"],
        doc["blocks"],
        doc["suppressed_rows"],
        doc["models"],
    )


def test_errors_carry_the_cli_message_with_dict_keys(patients: pd.DataFrame, tmp_path: Path) -> None:
    inpatient = duckdb_patients(tmp_path)
    body = inpatient_body().replace("hierarchy = { mask = true }", "hierarchy = { mask = true, width = 3 }")
    res = run_veil("counts", "--config", str(inpatient.write_config("patients", body)), "--node", "0,0,0")
    assert res.returncode == 1 and "[[quasi_identifiers]] #1 ('zip') hierarchy has unknown key(s) 'width'" in res.stderr
    with pytest.raises(
        ConfigError, match=re.escape("veil.anonymize(): quasi_identifiers['zip'] has unknown key(s) 'width'")
    ):
        veil.anonymize(patients, {**QIS, "zip": {"mask": True, "width": 3}}, "condition", [K4])
    with pytest.raises(
        ConfigError,
        match=re.escape(
            "veil.anonymize(): quasi_identifiers['age']: hierarchy for column "
            "'age' (intervals [10, 25]): width 25 is not a multiple"
        ),
    ):
        veil.anonymize(patients, {**QIS, "age": {"intervals": [10, 25]}}, "condition", [K4])
    with pytest.raises(
        ConfigError,
        match=re.escape("veil.anonymize(): models[1] (entropy-l-diversity): parameter 'l' must be >= 1, got 0.5"),
    ):
        veil.anonymize(patients, QIS, "condition", [K4, {**ENTROPY, "l": 0.5}])
    with pytest.raises(ConfigError, match=re.escape("veil.anonymize(): argument 'metric' must be one of")):
        veil.anonymize(patients, QIS, "condition", [K4], metric="entropy")
    with pytest.raises(ConfigError, match=re.escape("veil.check(): argument 'node': ")):
        veil.check(patients, QIS, "condition", [K4], node=(9, 0, 0))


def test_bad_data_and_no_solution(patients: pd.DataFrame) -> None:
    with pytest.raises(SourceError, match=r"column 'zipcode' does not exist in the DataFrame \(its columns: 'id'"):
        veil.anonymize(patients, {"zipcode": {"mask": True}}, models=[K4])
    short = age_levels()[lambda f: f.age != 55]
    with pytest.raises(
        HierarchyError,
        match=r"hierarchy for column 'age' \(DataFrame\) misses 1 value\(s\) that "
        r"occur in the source: 55$",
    ):
        veil.anonymize(patients, {**QIS, "age": short}, "condition", [K4])
    holes = age_levels()
    holes.loc[3, "forty"] = None
    with pytest.raises(ConfigError, match=r"row 4: value 3 has no level-2 label \(NULL in column 'forty'\)"):
        veil.anonymize(patients, {**QIS, "age": holes}, "condition", [K4])
    with pytest.raises(NoSolutionError, match=r"k-anonymity \(k=13\) fails even at the most general node") as info:
        veil.anonymize(patients, QIS, "condition", [{"type": "k-anonymity", "k": 13}])
    assert info.value.exit_code == 2
    with pytest.raises(ConfigError, match=r"argument 'df' must be a pandas DataFrame, got list"):
        veil.anonymize([], QIS, models=[K4])


def test_sensitive_hierarchy_as_a_dataframe(patients: pd.DataFrame) -> None:
    # Heart Disease alone, Cancer and Viral Infection in one group; Figure 3's (1,2,1) blocks have hierarchical
    # EMD 1/24, 1/24 and 1/12 to the whole table (C 5/12, HD 3/12, VI 4/12): block 3 is (1/4, 1/4, 1/2), its
    # extra mass ±1/6 on C/VI moves inside their group at cost 1/2 · 1/6.
    groups = pd.DataFrame(
        {"c": ["Cancer", "Heart Disease", "Viral Infection"], "g": ["other", "heart", "other"], "top": "*"}
    )
    model = {"type": "t-closeness", "t": 0.1, "distance": "hierarchical", "hierarchy": groups}
    c = veil.check(patients, QIS, "condition", [model], node=(1, 2, 1))
    assert c.passed and c.models[0]["achieved"] == pytest.approx(1 / 12)


def test_audit_at_figure_2_and_figure_3(patients: pd.DataFrame) -> None:
    """``veil.audit``: the attacks of ``veil audit --node`` on the DataFrame (hand-computed on the inpatient
    table). Figure 2 (2,1,1): the block 130**/3* is all Cancer — homogeneity exposes 1 block, 4 rows (Bob).
    Figure 3 (1,2,1): no homogeneous block; the table is C 5/12, VI 4/12, HD 3/12 and the worst block
    {C,HD,VI,VI} is at EMD (equal ground distance: half the L1 distance)
    (|1/4 - 5/12| + |2/4 - 4/12| + |1/4 - 3/12|) / 2 = (2/12 + 2/12 + 0) / 2 = 1/6."""
    fig2 = veil.audit(patients, QIS, ["condition"], [K4, ENTROPY], node=(2, 1, 1))
    homogeneity = fig2.find("homogeneity", "condition")
    assert (homogeneity.blocks, homogeneity.rows) == (1, 4)
    assert fig2.document()["subject"] == "node [2, 1, 1] of the DataFrame" and fig2.rows == 12 and fig2.blocks == 3
    fig3 = veil.audit(patients, QIS, ["condition"], [K4, ENTROPY], node="1,2,1", settings={"l": 2})
    assert fig3.find("homogeneity", "condition").rows == 0
    assert fig3.find("skewness", "condition").document()["extra"]["max_emd"] == pytest.approx(1 / 6)
    with pytest.raises(ConfigError, match=r"\[audit\] .*'share'"):
        veil.audit(patients, QIS, ["condition"], [K4], settings={"share": 2})


def test_import_veil_stays_light() -> None:
    code = "import sys, veil; print(sorted(m for m in ('pandas', 'duckdb', 'sqlalchemy', 'numpy') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    with pytest.raises(AttributeError, match="no attribute 'anonymise'"):
        veil.anonymise  # noqa: B018


def test_the_notebook_page_example_prints_what_the_page_shows(tmp_path: Path, monkeypatch) -> None:
    section = NOTEBOOK_DOC.read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", section, re.S)
    shown = re.search(r"```text\n(.*?)```", section, re.S)
    assert code and shown, "docs/how-to/notebook.md needs a python block and a text block of its output"
    monkeypatch.chdir(tmp_path)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code.group(1), str(NOTEBOOK_DOC), "exec"), {"__name__": "readme"})
    assert printed.getvalue() == shown.group(1)


WORKLOAD = [
    {"group_by": ["age", "nationality"]},
    {"group_by": ["zip", "condition"], "weight": 2},
    {"group_by": ["age"], "where": {"nationality": ["Russian", "American"]}},
    {"group_by": ["nationality"], "aggregate": "avg(id)"},
]  # id: read by the workload, not published
WORKLOAD_TOML = """
[[workload]]
group_by = ["age", "nationality"]

[[workload]]
group_by = ["zip", "condition"]
weight = 2

[[workload]]
group_by = ["age"]
where = { nationality = ["Russian", "American"] }

[[workload]]
group_by = ["nationality"]
aggregate = "avg(id)"
"""


def test_anonymize_minimizes_a_workload_as_veil_search_does(patients: pd.DataFrame, tmp_path: Path) -> None:
    """``workload=`` is the ``[[workload]]`` tables as dicts: ``metric="workload"`` finds ``veil search``'s node and
    error on the same table; with another metric the optimal node's workload error is still reported."""
    import json

    inpatient = duckdb_patients(tmp_path)
    path = inpatient.write_config(
        "patients",
        inpatient_body()
        + '\n[[models]]\ntype = "entropy-l-diversity"\nl = 2.5\n'
        + '\n[search]\nmetric = "workload"\n'
        + WORKLOAD_TOML,
    )
    res = run_veil("search", "--config", str(path), "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    r = veil.anonymize(patients, QIS, "condition", [K4, ENTROPY], metric="workload", workload=WORKLOAD)
    assert list(r.node) == doc["optimal"]["node"] and r.metric_name == "workload"
    assert r.metric == pytest.approx(doc["optimal"]["value"]) and r.workload_error == pytest.approx(r.metric)
    assert r.workload_errors is not None and len(r.workload_errors) == 4
    assert list(r.workload_errors) == pytest.approx(doc["workload"]["optimal"]["per_query"])
    assert list(r.data.columns) == ["zip", "age", "nationality", "condition"]  # id read, not published
    d = veil.anonymize(patients, QIS, "condition", [K4, ENTROPY], workload=WORKLOAD)
    assert (d.metric_name, d.node) == ("discernibility", (1, 2, 1)) and d.workload_error is not None
    assert d.workload_error >= r.workload_error - 1e-12
    plain = veil.anonymize(patients, QIS, "condition", [K4, ENTROPY])
    assert plain.workload_error is None and plain.workload_errors is None


def test_workload_argument_errors(patients: pd.DataFrame) -> None:
    with pytest.raises(
        ConfigError,
        match=re.escape("veil.anonymize(): argument 'metric' is \"workload\" but argument 'workload' lists no query"),
    ):
        veil.anonymize(patients, QIS, "condition", [K4], metric="workload")
    with pytest.raises(
        ConfigError,
        match=re.escape(
            "veil.anonymize(): [[workload]] #2 key 'aggregate' must be "
            '"count", "sum(column)" or "avg(column)", got \'median(age)\''
        ),
    ):
        veil.anonymize(
            patients, QIS, "condition", [K4], workload=[WORKLOAD[0], {"group_by": ["age"], "aggregate": "median(age)"}]
        )
    with pytest.raises(ConfigError, match=r"argument 'workload' must be a list of query dicts"):
        veil.anonymize(patients, QIS, "condition", [K4], workload={"group_by": ["age"]})
    with pytest.raises(SourceError, match=r"argument 'workload' reads column 'income', which does not exist"):
        veil.anonymize(patients, QIS, "condition", [K4], workload=[{"group_by": ["income"]}])
