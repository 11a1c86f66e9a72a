"""``veil risk`` on DuckDB and PostgreSQL (the inpatient table of Machanavajjhala et al., ICDE 2006, by hand), and
on UCI Adult before and after a release (docs/reidentification.md §7); ``veil.notebook.risk`` on DataFrames."""

from __future__ import annotations

import json
import shutil

import pytest

from veil.errors import ConfigError
from tests.conftest import Db, INPATIENT_COLUMNS, error_line, inpatient_body, run_veil


def risk(path, **options) -> dict:
    """``veil risk --json``'s document, in this process (the command's own body)."""
    from veil import config as cfg
    from veil.reidentification.subject import run_risk

    return {"status": "ok", **run_risk(cfg.load(path), threshold=0.2, **options).document()}


def test_risk_before_and_after_a_release(inpatient: Db, release_schemas) -> None:
    """Node 0: twelve unique patients (every figure 1).  Figure 3's node [1, 2, 1]: three blocks of four, so
    prosecutor risk 1/4 everywhere; against a population holding every patient twice (blocks of eight): journalist
    highest 1/8, average max(3/24, (3 · 4/8)/12) = 1/8, marketer 1/8; the release at that node measures the same."""
    from veil.demo import inpatient_rows

    rows = inpatient_rows()
    inpatient.create_table("everyone", INPATIENT_COLUMNS, [*rows, *((r[0] + 100, *r[1:]) for r in rows)])
    path = inpatient.write_config("patients", inpatient_body() + release_schemas.section())
    before = risk(path)
    assert (before["records"], before["classes"]) == (12, 12)
    assert before["prosecutor"] == {
        "threshold": 0.2,
        "highest": 1.0,
        "lowest": 1.0,
        "average": 1.0,
        "records_at_risk": 1.0,
    }
    assert before["sample_uniques"] == 1.0 and before["population_uniqueness"] is None
    node = risk(path, node="1,2,1", population_table=f"{inpatient.schema}.everyone")
    assert node["prosecutor"]["average"] == 0.25 and node["prosecutor"]["highest"] == 0.25
    assert node["journalist"]["highest"] == 0.125 and node["journalist"]["average"] == pytest.approx(0.125)
    assert node["marketer"]["average"] == pytest.approx(0.125) and node["population"]["rows"] == 24
    assert node["population_uniqueness"]["population_uniques"]["dankar"] == 0.0  # no sample unique

    assert run_veil("init", "--config", str(path)).returncode == 0
    res = run_veil("release", "--config", str(path))
    assert res.returncode == 0, res.stderr
    after = risk(path, release=1, population_table=f"{inpatient.schema}.everyone")
    for key in ("records", "classes", "prosecutor", "journalist", "marketer", "sample_uniques"):
        assert after[key] == node[key], key
    text = run_veil("risk", "--config", str(path), "--release", "1", "--sampling-fraction", "0.5")
    assert "prosecutor: highest 25%, average 25%" in text.stdout and "population uniques (population 24" in text.stdout

    bad = run_veil(
        "risk", "--config", str(path), "--node", "1,2,1", "--population-table", f"{inpatient.schema}.nope", "--json"
    )
    assert bad.returncode == 1 and "population table" in error_line(bad.stderr)
    assert json.loads(bad.stdout)["status"] == "failed"
    with pytest.raises(ConfigError, match="mutually exclusive"):
        risk(path, node="0,0,0", release=1)


def _adult_folder():
    from tests.test_metrics_kl import _shared_adult

    folder = _shared_adult()
    assert folder is not None
    return folder


def _adult_here() -> bool:
    from tests.test_metrics_kl import _shared_adult

    return _shared_adult() is not None


# Full Adult is shared data beside the repository (tests/test_metrics_kl.py's convention): the test exists where
# it is, as the KL-divergence test against ARX does.
def _adult_before_and_after_a_release(tmp_path) -> None:
    """Adult's 30,162 records on five quasi-identifiers: risky as they stand (16% sample uniques), and the release
    that average-risk 5% and population uniqueness 1% (π = 0.1) choose keeps the published table under both."""
    duckdb = pytest.importorskip("duckdb")
    folder = _adult_folder()
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    con.execute("CREATE SCHEMA raw")
    con.execute(
        "CREATE TABLE raw.adult AS SELECT * FROM read_csv(?, delim=';', header=true, types={'age': 'INTEGER'})",
        [str(folder / "adult.csv")],
    )
    con.close()
    qis = ("age", "sex", "race", "marital-status", "education")
    text = (
        f'[source]\nurl = "duckdb:///{tmp_path / "w.duckdb"}"\ntable = "raw.adult"\n\n[files]\nallow = ["{folder}"]\n'
    )
    for q in qis:
        shutil.copy(folder / f"adult_hierarchy_{q}.csv", tmp_path / f"{q}.csv")
        text += f'\n[[quasi_identifiers]]\ncolumn = "{q}"\nhierarchy = {{ csv = "{q}.csv" }}\n'
    text += (
        '\n[[models]]\ntype = "average-risk"\nthreshold = 0.05\n\n[[models]]\ntype = "population-uniqueness"\n'
        "threshold = 0.01\nsampling_fraction = 0.1\n\n[search]\nmax_suppression = 0.02\n\n"
        '[release]\nname = "adult"\nseries = "off"\n'
    )
    path = tmp_path / "veil.toml"
    path.write_text(text)
    before = risk(path, sampling_fraction=0.1)
    assert before["records"] == 30162 and before["prosecutor"]["highest"] == 1.0
    assert before["prosecutor"]["average"] > 0.05 and before["sample_uniques"] > 0.1
    assert before["population_uniqueness"]["population_uniques"]["dankar"] > 0.01
    assert run_veil("init", "--config", str(path)).returncode == 0
    res = run_veil("release", "--config", str(path), "--json")
    assert res.returncode == 0, res.stderr
    after = risk(path, release=1, sampling_fraction=0.1)
    assert after["prosecutor"]["average"] <= 0.05
    u = after["population_uniqueness"]
    assert u["population"] == pytest.approx(after["records"] / 0.1)
    assert 0 <= u["population_uniques"]["dankar"] <= 0.01


if _adult_here():
    test_adult_before_and_after_a_release = _adult_before_and_after_a_release


def test_api_risk_matches_the_hand_computation() -> None:
    pd = pytest.importorskip("pandas")
    from veil.notebook import risk as api_risk
    from veil.demo import HIERARCHIES, inpatient_rows

    df = pd.DataFrame(inpatient_rows(), columns=list(INPATIENT_COLUMNS))
    qis = {
        "zip": {"mask": True},
        "age": {"csv": str(HIERARCHIES / "inpatient_age.csv")},
        "nationality": {"suppress": True},
    }
    r = api_risk(df, qis, node=(1, 2, 1), population=pd.concat([df, df]), progress=False)
    assert r.prosecutor.average == 0.25 and r.journalist.highest == 0.125 and r.marketer == pytest.approx(0.125)
    r = api_risk(df, qis, sampling_fraction=0.5, progress=False)
    assert r.sample_uniques == 1.0 and r.uniqueness is not None and r.uniqueness.population == 24
