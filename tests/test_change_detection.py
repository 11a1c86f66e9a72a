"""Change detection: a release is "unchanged" only if the source, the config's settings, every file the
config references and Veil's release semantics are all unchanged (on DuckDB and PostgreSQL)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from veil import config as cfg
from veil.demo import HIERARCHIES
from veil.models import params
from tests.conftest import Db, ReleaseSchemas, run_veil

# a changed hierarchy is a new series under the default cohort policy (docs/series.md §5); these tests are about
# noticing the change, so the series step stays out of the way
OFF = 'series = "off"\n'

CONDITIONS = "Heart Disease;circulatory;*\nViral Infection;infectious;*\nCancer;neoplasm;*\n"

BODY = """
[[quasi_identifiers]]
column = "zip"
hierarchy = { mask = true }

[[quasi_identifiers]]
column = "age"
hierarchy = { csv = "age.csv" }

[[quasi_identifiers]]
column = "nationality"
hierarchy = { suppress = true }

[sensitive]
columns = ["condition"]

[[models]]
type = "k-anonymity"
k = 4

[[models]]
type = "t-closeness"
t = 1.0
distance = "hierarchical"
hierarchy = { csv = "conditions.csv" }
"""


def _release(path: Path, *extra: str) -> dict:
    res = run_veil("release", "--config", str(path), "--json", *extra)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_every_referenced_file_changes_the_version(inpatient: Db, release_schemas: ReleaseSchemas) -> None:
    work = inpatient.workdir
    shutil.copyfile(HIERARCHIES / "inpatient_age.csv", work / "age.csv")
    (work / "conditions.csv").write_text(CONDITIONS, encoding="utf-8")
    path = inpatient.write_config("patients", BODY + release_schemas.section() + OFF)
    assert run_veil("init", "--config", str(path)).returncode == 0
    assert _release(path)["version"] == 1
    assert _release(path)["status"] == "skipped"

    # a comment or layout change is not a change
    path.write_text("# nightly\n" + path.read_text(encoding="utf-8").replace("k = 4", "k   =   4"), encoding="utf-8")
    assert _release(path)["status"] == "skipped"

    # the quasi-identifier's hierarchy file
    age = work / "age.csv"
    age.write_text(age.read_text(encoding="utf-8").replace("<30", "under 30"), encoding="utf-8")
    doc = _release(path)
    assert (doc["status"], doc["version"]) == ("published", 2)
    assert _release(path)["status"] == "skipped"

    # the t-closeness hierarchy file (same values, other grouping)
    (work / "conditions.csv").write_text(CONDITIONS.replace("neoplasm", "circulatory"), encoding="utf-8")
    doc = _release(path)
    assert (doc["status"], doc["version"]) == ("published", 3)
    assert _release(path)["status"] == "skipped"


def test_release_semantics_are_part_of_the_hash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _config(tmp_path)
    before = cfg.load(path).digest
    assert cfg.load(path).digest == before
    monkeypatch.setattr(cfg, "RELEASE_SEMANTICS", cfg.RELEASE_SEMANTICS + 1)
    assert cfg.load(path).digest != before


def test_files_are_hashed_by_content(tmp_path: Path) -> None:
    path = _config(tmp_path)
    conf = cfg.load(path)
    assert conf.files == (tmp_path / "age.csv", tmp_path / "conditions.csv")
    before = conf.digest
    (tmp_path / "conditions.csv").write_text(CONDITIONS + "\n", encoding="utf-8")
    assert cfg.load(path).digest != before
    (tmp_path / "conditions.csv").write_text(CONDITIONS, encoding="utf-8")
    assert cfg.load(path).digest == before
    (tmp_path / "age.csv").write_bytes((tmp_path / "age.csv").read_bytes() + b"\n")
    assert cfg.load(path).digest != before


def test_every_path_a_model_resolves_is_a_referenced_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new model parameter naming a file must be listed in ``config.FILE_KEYS`` (else its edits would
    go unnoticed): every path the models resolve through ``Params.path`` must be in ``Config.files``."""
    resolved: list[Path] = []
    original = params.Params.path

    def recording(self: params.Params, value: str) -> Path:
        out = original(self, value)
        resolved.append(out)
        return out

    monkeypatch.setattr(params.Params, "path", recording)
    path = _config(tmp_path, BODY.replace('type = "t-closeness"', 'type = "nt-closeness"\nn = 2'))
    conf = cfg.load(path)
    assert resolved and set(resolved) <= set(conf.files)


def _config(tmp_path: Path, body: str = BODY) -> Path:
    shutil.copyfile(HIERARCHIES / "inpatient_age.csv", tmp_path / "age.csv")
    (tmp_path / "conditions.csv").write_text(CONDITIONS, encoding="utf-8")
    path = tmp_path / "veil.toml"
    path.write_text('[source]\nurl = "duckdb:///w.duckdb"\ntable = "raw.patients"\n' + body, encoding="utf-8")
    return path


def test_a_changed_hierarchy_table_changes_the_version(inpatient: Db, release_schemas: ReleaseSchemas) -> None:
    """A hierarchy read from a warehouse table is part of what defines a release: its rows (read in the
    release's snapshot) are in the config hash the catalog records, so editing the table publishes anew."""
    from veil.hierarchy import read_csv_rows

    rows = [(int(v), *labels) for _, v, labels in read_csv_rows(HIERARCHIES / "inpatient_age.csv")]
    import sqlalchemy as sa

    levels = {"level_0": sa.Integer, "level_1": sa.Text, "level_2": sa.Text, "level_3": sa.Text}
    inpatient.create_table("age_levels", levels, rows)
    body = BODY.replace('{ csv = "age.csv" }', f'{{ table = "{inpatient.schema}.age_levels" }}')
    (inpatient.workdir / "conditions.csv").write_text(CONDITIONS, encoding="utf-8")
    path = inpatient.write_config("patients", body + release_schemas.section() + OFF)
    assert run_veil("init", "--config", str(path)).returncode == 0
    assert _release(path)["version"] == 1
    assert _release(path)["status"] == "skipped"
    edited = [(r[0], "under 30" if r[1] == "<30" else r[1], *r[2:]) for r in rows]
    assert edited != rows
    inpatient.replace_rows("age_levels", levels, edited)
    doc = _release(path)
    assert (doc["status"], doc["version"]) == ("published", 2)
    assert _release(path)["status"] == "skipped"
