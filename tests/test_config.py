"""The TOML config: shape, defaults, and errors that name the key and the file."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from veil import config as cfg
from veil.errors import ConfigError
from veil.hierarchy import CsvSpec, DatesSpec, IntervalsSpec, MaskSpec, SuppressSpec, TableSpec, TaxonomySpec

BASE = """
[source]
url = "duckdb:///warehouse.duckdb"
table = "patients"

[[quasi_identifiers]]
column = "zip"
hierarchy = { csv = "hierarchies/zip.csv" }

[[quasi_identifiers]]
column = "age"
hierarchy = { intervals = [10, 20] }

[sensitive]
columns = ["condition"]

[[models]]
type = "k-anonymity"
k = 4
"""


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "hierarchies").mkdir(exist_ok=True)
    (tmp_path / "hierarchies" / "zip.csv").write_text("13053;1305*;*\n13068;1306*;*\n")
    p = tmp_path / "veil.toml"
    p.write_text(text)
    return p


def test_the_issue_example_parses(tmp_path: Path) -> None:
    c = cfg.load(write(tmp_path, BASE))
    assert c.attributes == ("zip", "age") and c.sensitive == ("condition",)
    assert c.source.schema is None and c.source.table == "patients"
    assert c.source.resolved_url() == f"duckdb:///{tmp_path / 'warehouse.duckdb'}"
    assert c.quasi_identifiers[0].hierarchy == CsvSpec(tmp_path / "hierarchies" / "zip.csv")
    assert c.quasi_identifiers[1].hierarchy == IntervalsSpec(widths=(10, 20))
    assert c.search == cfg.SearchConfig("optimal", "discernibility", 0.0)
    assert c.release is None and c.models[0].describe() == "k-anonymity (k=4)"


def test_table_splits_at_the_last_dot_and_names_are_literal(tmp_path: Path) -> None:
    c = cfg.load(write(tmp_path, BASE.replace('table = "patients"', 'table = "My.Raw.Patients"')))
    assert (c.source.schema, c.source.table) == ("My.Raw", "Patients")


def test_url_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    c = cfg.load(write(tmp_path, BASE.replace('url = "duckdb:///warehouse.duckdb"', 'url_env = "WH_URL"')))
    monkeypatch.setenv("WH_URL", "postgresql://u@h/db")
    assert c.source.resolved_url() == "postgresql://u@h/db"
    monkeypatch.delenv("WH_URL")
    with pytest.raises(ConfigError, match="'WH_URL', which is not set"):
        c.source.resolved_url()


def test_absolute_and_memory_duckdb_urls_are_kept(tmp_path: Path) -> None:
    for url in ("duckdb:////abs/w.duckdb", "duckdb:///:memory:"):
        c = cfg.load(write(tmp_path, BASE.replace("duckdb:///warehouse.duckdb", url)))
        assert c.source.resolved_url() == url


def test_all_hierarchy_builders(tmp_path: Path) -> None:
    text = BASE + """
[[quasi_identifiers]]
column = "nationality"
hierarchy = { suppress = true }

[[quasi_identifiers]]
column = "code"
hierarchy = { mask = true }

[[quasi_identifiers]]
column = "admitted"
hierarchy = { dates = ["month", "year"] }

[[quasi_identifiers]]
column = "grade"
hierarchy = { taxonomy = { "1" = ["low", "*"], "2" = ["low", "*"] } }
"""
    c = cfg.load(write(tmp_path, text))
    specs = [q.hierarchy for q in c.quasi_identifiers[2:]]
    assert specs == [SuppressSpec(), MaskSpec(), DatesSpec(("month", "year")),
                     TaxonomySpec((("1", ("low", "*")), ("2", ("low", "*"))))]


@pytest.mark.parametrize("change, message", [
    (("[sensitive]", "[sensitive]\ncolour = 1"), r"\[sensitive\] has unknown key\(s\) 'colour'"),
    (('k = 4', 'k = "4"'), r"parameter 'k' must be a whole number"),
    (('table = "patients"', 'table = 3'), r"\[source\] key 'table' must be a non-empty string"),
    (('table = "patients"\n', ''), r"\[source\] is missing required key 'table'"),
    (('column = "age"', 'colum = "age"'), r"\[\[quasi_identifiers\]\] #2 is missing required key 'column'"),
    (('{ intervals = [10, 20] }', '{ intervals = [10, 25] }'), r"not a multiple"),
    (('{ intervals = [10, 20] }', '{ intervals = [10], mask = true }'), r"exactly one of"),
    (('url = "duckdb:///warehouse.duckdb"', 'url = "postgresql://u:secret@h/db"'), r"url_env"),
    (('type = "k-anonymity"', 'type = "k-anon"'), r"unknown model type 'k-anon'"),
    (('columns = ["condition"]', 'columns = ["age"]'), r"'age' are both quasi-identifier and sensitive"),
    (('[[models]]', '[search]\nmetric = "fastest"\n[[models]]'), r"\[search\] key 'metric' must be one of"),
    (('[[models]]', '[search]\nmax_suppression = 1.5\n[[models]]'), r"'max_suppression' must be a fraction"),
    (('[[models]]', 'extra = 1\n[[models]]'), r"unknown key\(s\) 'extra'"),
])
def test_errors_name_key_and_file(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    text = BASE.replace(*change)
    assert text != BASE
    with pytest.raises(ConfigError, match=message) as info:
        cfg.load(write(tmp_path, text))
    assert "veil.toml" in str(info.value)


def test_hierarchy_file_errors_name_the_file(tmp_path: Path) -> None:
    p = write(tmp_path, BASE)
    (tmp_path / "hierarchies" / "zip.csv").write_text("13053;1305*;*\n13068;1305*;x\n")
    with pytest.raises(ConfigError, match=r"zip.csv.*not a function chain.*'1305\*'"):
        cfg.load(p)


def test_release_section(tmp_path: Path) -> None:
    text = (BASE.replace('table = "patients"', 'table = "raw.patients"')
            + '\n[release]\nname = "inpatient"\ndrop_columns = ["ssn"]\ngrant_select_to = ["analyst"]\n')
    c = cfg.load(write(tmp_path, text))
    assert c.release == cfg.ReleaseConfig(name="inpatient", drop_columns=("ssn",), grant_select_to=("analyst",))
    unqualified = BASE + '\n[release]\nname = "inpatient"\n'  # its schema is only known on the connection
    with pytest.raises(ConfigError, match=r"\[source\] table 'patients' names no schema; with a \[release\] table"):
        cfg.load(write(tmp_path, unqualified))
    assert cfg.load(write(tmp_path, BASE)).source.schema is None  # without a release, reading it is fine
    bad = BASE.replace('table = "patients"', 'table = "published.patients"') + '\n[release]\nname = "x"\n'
    with pytest.raises(ConfigError, match="never writes into the source's schema"):
        cfg.load(write(tmp_path, bad))


def test_invalid_toml(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not valid TOML"):
        cfg.load(write(tmp_path, "[source\n"))
    with pytest.raises(ConfigError, match="cannot read config file"):
        cfg.load(tmp_path / "missing.toml")


def test_table_hierarchies(tmp_path: Path) -> None:
    text = BASE.replace('{ csv = "hierarchies/zip.csv" }', '{ table = "dims.zip_levels" }').replace(
        '{ intervals = [10, 20] }', '{ table = "Age Levels", columns = ["age", "decade", "top"] }')
    text += ('\n[[models]]\ntype = "t-closeness"\nt = 0.2\ndistance = "hierarchical"\n'
             'hierarchy = { table = "dims.conditions", columns = ["c", "group", "top"] }\n')
    c = cfg.load(write(tmp_path, text))
    assert [q.hierarchy for q in c.quasi_identifiers] == [
        TableSpec("dims.zip_levels"), TableSpec("Age Levels", ("age", "decade", "top"))]
    assert c.models[1].hierarchy == TableSpec("dims.conditions", ("c", "group", "top"))


@pytest.mark.parametrize("hierarchy, message", [
    ('{ table = "dims.zip", columns = ["zip"] }', r"key 'columns' must name the value column and at least one level"),
    ('{ table = "dims.zip", columns = ["a", "a"] }', r"key 'columns' lists a name twice"),
    ('{ table = "" }', r"key 'table' must not be empty"),
    ('{ table = "dims.zip", csv = "z.csv" }', r"must have exactly one of csv, table, intervals"),
    ('{ table = "dims.zip", delimiter = ";" }', r"has unknown key\(s\) 'delimiter'"),
])
def test_table_hierarchy_errors(tmp_path: Path, hierarchy: str, message: str) -> None:
    with pytest.raises(ConfigError, match=r"veil.toml: \[\[quasi_identifiers\]\] #1 \('zip'\) hierarchy.*" + message):
        cfg.load(write(tmp_path, BASE.replace('{ csv = "hierarchies/zip.csv" }', hierarchy)))


def test_model_table_hierarchy_errors(tmp_path: Path) -> None:
    text = BASE + ('\n[[models]]\ntype = "t-closeness"\nt = 0.2\ndistance = "hierarchical"\n'
                   'hierarchy = { table = "dims.conditions", columns = ["c"] }\n')
    with pytest.raises(ConfigError, match=r"\[\[models\]\] #2 \(t-closeness\): parameter 'hierarchy' must be a table "
                                          r"like hierarchy = \{ table = \"dims.diseases\" \}"):
        cfg.load(write(tmp_path, text))


def test_hierarchy_checks_can_wait_for_the_source(tmp_path: Path) -> None:
    """``veil hierarchy --check`` loads the config without validating hierarchy files, to report them all."""
    text = BASE.replace("hierarchies/zip.csv", "hierarchies/missing.csv")
    with pytest.raises(ConfigError, match="cannot read hierarchy file"):
        cfg.load(write(tmp_path, text))
    assert cfg.load(write(tmp_path, text), check_hierarchies=False).quasi_identifiers[0].hierarchy == CsvSpec(
        tmp_path / "hierarchies" / "missing.csv")


def test_assemble_builds_the_same_config_from_dicts(tmp_path: Path) -> None:
    """The Python API's path: the same dicts as the TOML tables give the same frozen dataclasses; errors
    name the caller's keys."""
    toml = cfg.load(write(tmp_path, BASE))
    built = cfg.assemble(
        file="veil.anonymize()", base=tmp_path, source=toml.source,
        quasi_identifiers=[("zip", {"csv": "hierarchies/zip.csv"}, "quasi_identifiers['zip']"),
                           ("age", {"intervals": (10, 20)}, "quasi_identifiers['age']")],
        sensitive=("condition",), models=[({"type": "k-anonymity", "k": 4}, "models[0]")],
        search=cfg.search_settings({}, "veil.anonymize()", "arguments", key=lambda k: f"argument {k!r}"))
    assert built.quasi_identifiers == toml.quasi_identifiers and built.search == toml.search
    assert [replace(m, where="") for m in built.models] == [replace(m, where="") for m in toml.models]
    assert built.models[0].where == "veil.anonymize(): models[0] (k-anonymity)" and built.sensitive == toml.sensitive
    with pytest.raises(ConfigError, match=r"^veil.anonymize\(\): quasi_identifiers\['age'\] key 'intervals' must be "
                                          r"a non-empty list of positive widths"):
        cfg.assemble(file="veil.anonymize()", base=tmp_path, source=toml.source,
                     quasi_identifiers=[("age", {"intervals": []}, "quasi_identifiers['age']")], sensitive=(),
                     models=[], search=toml.search)
    with pytest.raises(ConfigError, match=r"^veil.anonymize\(\): argument 'max_suppression' must be a fraction"):
        cfg.search_settings({"max_suppression": 2}, "veil.anonymize()", "arguments", key=lambda k: f"argument {k!r}")


@pytest.mark.parametrize("name, fits", [("n" * 44, True), ("n" * 45, False), ("é" * 22, True), ("é" * 23, False)])
def test_release_name_fits_postgresql_identifiers(tmp_path: Path, name: str, fits: bool) -> None:
    """The longest object is ``<name>_v2147483647_blocks`` (19 bytes after the name): 63 - 19 = 44 bytes,
    counted in UTF-8 (é is 2 bytes)."""
    text = BASE.replace('table = "patients"', 'table = "raw.patients"') + f'\n[release]\nname = "{name}"\n'
    if fits:
        assert cfg.load(write(tmp_path, text)).release.name == name
    else:
        with pytest.raises(ConfigError, match=f"name '{name}' is too long: .* use a name of at most 44 bytes"):
            cfg.load(write(tmp_path, text))


def test_release_schema_longer_than_63_bytes(tmp_path: Path) -> None:
    text = BASE.replace('table = "patients"', 'table = "raw.patients"') + f'\n[release]\nname = "x"\nschema = "{"s" * 64}"\n'
    with pytest.raises(ConfigError, match="schema 's+' is longer than PostgreSQL's 63-byte identifiers"):
        cfg.load(write(tmp_path, text))


def test_config_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "veil.toml"
    path.write_bytes(BASE.replace("patients", "pätients").encode("latin-1"))
    with pytest.raises(ConfigError, match=rf"{path}: not UTF-8 text \(byte 0xe4 on line \d+\)"):
        cfg.load(path)


@pytest.mark.parametrize("spec, message", [
    ("{ intervals = [inf] }", r"key 'intervals' must hold finite widths, got \[inf\]"),
    ("{ intervals = [10, nan] }", r"key 'intervals' must hold finite widths, got \[10, nan\]"),
    ("{ intervals = [10], start = nan }", r"key 'start' must be a finite number, got nan"),
    ("{ intervals = [10], start = inf }", r"key 'start' must be a finite number, got inf"),
])
def test_non_finite_intervals(tmp_path: Path, spec: str, message: str) -> None:
    with pytest.raises(ConfigError, match=r"\('age'\) hierarchy " + message):
        cfg.load(write(tmp_path, BASE.replace("{ intervals = [10, 20] }", spec)))
