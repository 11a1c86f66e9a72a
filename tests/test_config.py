"""The TOML config: shape, defaults, and errors that name the key and the file."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

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
    text = (
        BASE
        + """
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
    )
    c = cfg.load(write(tmp_path, text))
    specs = [q.hierarchy for q in c.quasi_identifiers[2:]]
    assert specs == [
        SuppressSpec(),
        MaskSpec(),
        DatesSpec(("month", "year")),
        TaxonomySpec((("1", ("low", "*")), ("2", ("low", "*")))),
    ]


@pytest.mark.parametrize(
    "change, message",
    [
        (("[sensitive]", "[sensitive]\ncolour = 1"), r"\[sensitive\] has unknown key\(s\) 'colour'"),
        (("k = 4", 'k = "4"'), r"parameter 'k' must be a whole number"),
        (('table = "patients"', "table = 3"), r"\[source\] key 'table' must be a non-empty string"),
        (('table = "patients"\n', ""), r"\[source\] is missing required key 'table'"),
        (
            ('column = "age"', 'colum = "age"'),
            r"\[\[quasi_identifiers\]\] #2 has unknown key\(s\) 'colum' \(did you mean "
            r"'column'\?\) and is missing required key 'column'",
        ),
        (("{ intervals = [10, 20] }", "{ intervals = [10, 25] }"), r"not a multiple"),
        (("{ intervals = [10, 20] }", "{ intervals = [10], mask = true }"), r"exactly one of"),
        (('url = "duckdb:///warehouse.duckdb"', 'url = "postgresql://u:secret@h/db"'), r"url_env"),
        (('type = "k-anonymity"', 'type = "k-anon"'), r"unknown model type 'k-anon'"),
        (('columns = ["condition"]', 'columns = ["age"]'), r"'age' are both quasi-identifier and sensitive"),
        (("[[models]]", '[search]\nmetric = "fastest"\n[[models]]'), r"\[search\] key 'metric' must be one of"),
        (("[[models]]", "[search]\nmax_suppression = 1.5\n[[models]]"), r"'max_suppression' must be a fraction"),
        (("[[models]]", "extra = 1\n[[models]]"), r"unknown key\(s\) 'extra'"),
    ],
)
def test_errors_name_key_and_file(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    text = BASE.replace(*change)
    assert text != BASE
    with pytest.raises(ConfigError, match=message) as info:
        cfg.load(write(tmp_path, text))
    assert "veil.toml" in str(info.value)


@pytest.mark.parametrize(
    "change, message",
    [
        # a required key misspelt: the unknown key first, with the suggestion, then the missing one
        (
            ('columns = ["condition"]', 'column = ["condition"]'),
            "[sensitive] has unknown key(s) 'column' (did you mean 'columns'?) and is missing required key 'columns'",
        ),
        (
            ("[[quasi_identifiers]]", "[[quasi_identifier]]"),
            "the top level has unknown key(s) 'quasi_identifier' (did you mean 'quasi_identifiers'?)",
        ),
        (
            ('table = "patients"', 'tabel = "patients"'),
            "[source] has unknown key(s) 'tabel' (did you mean 'table'?) and is missing required key 'table'",
        ),
        (
            ("k = 4", "kk = 4"),
            "[[models]] #1 (k-anonymity): unknown parameter(s) 'kk' (did you mean 'k'?) and missing "
            "required parameter 'k'",
        ),
        # an optional key misspelt: the suggestion among the keys the table knows
        (
            ("[[models]]", '[search]\nstrategi = "optimal"\n[[models]]'),
            "[search] has unknown key(s) 'strategi' (did you mean 'strategy'?)",
        ),
        (("k = 4", "k = 4\nK = 5"), "[[models]] #1 (k-anonymity): unknown parameter(s) 'K' (did you mean 'k'?)"),
        (
            ("[[models]]", "[audit]\nshar = 0.5\n[[models]]"),
            "[audit] has unknown key(s) 'shar' (did you mean 'share'?)",
        ),
        (
            ("[[models]]", "[audit.attributes.condition]\nsimilarity_levl = 2\n[[models]]"),
            "[audit.attributes.condition] has unknown key(s) 'similarity_levl' (did you mean 'similarity_level'?)",
        ),
        (("{ intervals = [10, 20] }", "{ intervals = [10, 20], strat = 0 }"), "'strat' (did you mean 'start'?)"),
        (
            ("{ intervals = [10, 20] }", "{ intervls = [10, 20] }"),
            "(found: none; unknown key(s) 'intervls' (did you mean 'intervals'?))",
        ),
        # a misspelt optional section reads as absent: refused first, not as the error its absence causes
        (("[sensitive]", "[sensitiv]"), "the top level has unknown key(s) 'sensitiv' (did you mean 'sensitive'?)"),
        (
            ("[[models]]", '[serach]\nstrategy = "optimal"\n[[models]]'),
            "the top level has unknown key(s) 'serach' (did you mean 'search'?)",
        ),
        # nothing close: as before
        (("[[models]]", "[search]\nzzz = 1\n[[models]]"), "[search] has unknown key(s) 'zzz'"),
    ],
)
def test_unknown_keys_come_first_with_a_suggestion(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    text = BASE.replace(*change)
    assert text != BASE
    with pytest.raises(ConfigError) as info:
        cfg.load(write(tmp_path, text))
    assert message in str(info.value) and "\n" not in str(info.value)
    assert str(info.value).startswith(f"{tmp_path / 'veil.toml'}: ") or "[[models]]" in message
    if "zzz" in message:
        assert str(info.value).endswith("'zzz'")


def test_hierarchy_file_errors_name_the_file(tmp_path: Path) -> None:
    p = write(tmp_path, BASE)
    (tmp_path / "hierarchies" / "zip.csv").write_text("13053;1305*;*\n13068;1305*;x\n")
    with pytest.raises(ConfigError, match=r"zip.csv.*not a function chain.*'1305\*'"):
        cfg.load(p)


def test_release_section(tmp_path: Path) -> None:
    text = (
        BASE.replace('table = "patients"', 'table = "raw.patients"')
        + '\n[release]\nname = "inpatient"\ndrop_columns = ["ssn"]\ngrant_select_to = ["analyst"]\n'
    )
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
        "{ intervals = [10, 20] }", '{ table = "Age Levels", columns = ["age", "decade", "top"] }'
    )
    text += (
        '\n[[models]]\ntype = "t-closeness"\nt = 0.2\ndistance = "hierarchical"\n'
        'hierarchy = { table = "dims.conditions", columns = ["c", "group", "top"] }\n'
    )
    c = cfg.load(write(tmp_path, text))
    assert [q.hierarchy for q in c.quasi_identifiers] == [
        TableSpec("dims.zip_levels"),
        TableSpec("Age Levels", ("age", "decade", "top")),
    ]
    assert c.models[1].hierarchy == TableSpec("dims.conditions", ("c", "group", "top"))


@pytest.mark.parametrize(
    "hierarchy, message",
    [
        (
            '{ table = "dims.zip", columns = ["zip"] }',
            r"key 'columns' must name the value column and at least one level",
        ),
        ('{ table = "dims.zip", columns = ["a", "a"] }', r"key 'columns' lists a name twice"),
        ('{ table = "" }', r"key 'table' must not be empty"),
        ('{ table = "dims.zip", csv = "z.csv" }', r"must have exactly one of csv, table, intervals"),
        ('{ table = "dims.zip", delimiter = ";" }', r"has unknown key\(s\) 'delimiter'"),
    ],
)
def test_table_hierarchy_errors(tmp_path: Path, hierarchy: str, message: str) -> None:
    with pytest.raises(ConfigError, match=r"veil.toml: \[\[quasi_identifiers\]\] #1 \('zip'\) hierarchy.*" + message):
        cfg.load(write(tmp_path, BASE.replace('{ csv = "hierarchies/zip.csv" }', hierarchy)))


def test_model_table_hierarchy_errors(tmp_path: Path) -> None:
    text = BASE + (
        '\n[[models]]\ntype = "t-closeness"\nt = 0.2\ndistance = "hierarchical"\n'
        'hierarchy = { table = "dims.conditions", columns = ["c"] }\n'
    )
    with pytest.raises(
        ConfigError,
        match=r"\[\[models\]\] #2 \(t-closeness\): parameter 'hierarchy' must be a table "
        r"like hierarchy = \{ table = \"dims.diseases\" \}",
    ):
        cfg.load(write(tmp_path, text))


def test_hierarchy_checks_can_wait_for_the_source(tmp_path: Path) -> None:
    """``veil hierarchy --check`` loads the config without validating hierarchy files, to report them all."""
    text = BASE.replace("hierarchies/zip.csv", "hierarchies/missing.csv")
    with pytest.raises(ConfigError, match="cannot read hierarchy file"):
        cfg.load(write(tmp_path, text))
    assert cfg.load(write(tmp_path, text), check_hierarchies=False).quasi_identifiers[0].hierarchy == CsvSpec(
        tmp_path / "hierarchies" / "missing.csv"
    )


def test_assemble_builds_the_same_config_from_dicts(tmp_path: Path) -> None:
    """The Python API's path: the same dicts as the TOML tables give the same frozen dataclasses; errors
    name the caller's keys."""
    toml = cfg.load(write(tmp_path, BASE))
    built = cfg.assemble(
        file="veil.anonymize()",
        base=tmp_path,
        source=toml.source,
        quasi_identifiers=[
            ("zip", {"csv": "hierarchies/zip.csv"}, "quasi_identifiers['zip']"),
            ("age", {"intervals": (10, 20)}, "quasi_identifiers['age']"),
        ],
        sensitive=("condition",),
        models=[({"type": "k-anonymity", "k": 4}, "models[0]")],
        search=cfg.search_settings({}, "veil.anonymize()", "arguments", key=lambda k: f"argument {k!r}"),
    )
    assert built.quasi_identifiers == toml.quasi_identifiers and built.search == toml.search
    assert [replace(m, where="") for m in built.models] == [replace(m, where="") for m in toml.models]
    assert built.models[0].where == "veil.anonymize(): models[0] (k-anonymity)" and built.sensitive == toml.sensitive
    with pytest.raises(
        ConfigError,
        match=r"^veil.anonymize\(\): quasi_identifiers\['age'\] key 'intervals' must be "
        r"a non-empty list of positive widths",
    ):
        cfg.assemble(
            file="veil.anonymize()",
            base=tmp_path,
            source=toml.source,
            quasi_identifiers=[("age", {"intervals": []}, "quasi_identifiers['age']")],
            sensitive=(),
            models=[],
            search=toml.search,
        )
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
    text = (
        BASE.replace('table = "patients"', 'table = "raw.patients"')
        + f'\n[release]\nname = "x"\nschema = "{"s" * 64}"\n'
    )
    with pytest.raises(ConfigError, match="schema 's+' is longer than PostgreSQL's 63-byte identifiers"):
        cfg.load(write(tmp_path, text))


def test_config_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "veil.toml"
    path.write_bytes(BASE.replace("patients", "pätients").encode("latin-1"))
    with pytest.raises(ConfigError, match=rf"{path}: not UTF-8 text \(byte 0xe4 on line \d+\)"):
        cfg.load(path)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("{ intervals = [inf] }", r"key 'intervals' must hold finite widths, got \[inf\]"),
        ("{ intervals = [10, nan] }", r"key 'intervals' must hold finite widths, got \[10, nan\]"),
        ("{ intervals = [10], start = nan }", r"key 'start' must be a finite number, got nan"),
        ("{ intervals = [10], start = inf }", r"key 'start' must be a finite number, got inf"),
    ],
)
def test_non_finite_intervals(tmp_path: Path, spec: str, message: str) -> None:
    with pytest.raises(ConfigError, match=r"\('age'\) hierarchy " + message):
        cfg.load(write(tmp_path, BASE.replace("{ intervals = [10, 20] }", spec)))


# --- issue 33: the pre-parse scanner, config limits, the files a config names ----------------------------


@pytest.mark.parametrize(
    "text",
    [
        'a = "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[" # not a key.a.a.a\n',  # brackets in a string
        "a = 1 # " + "[" * 40 + "." * 40 + "\n",  # and in a comment
        'a = """\nx.x.x [[[[ \\""" still inside """\nb = 2\n',  # escaped quote in """
        "a = '''\n" + "[" * 40 + " '' still inside\n''''\nb = 2\n",  # literal ''' with '' and a '
        "[[t]]\n[[t.u]]\nx = [[1, 2], [3, 4]]\ny = { p = { q = { r = 1 } } }\n",  # headers are not nesting
        "x = " + "[" * 32 + "]" * 32 + "\n",  # 32 deep: the limit
        ".".join(["k"] * 32) + " = 1\n[" + ".".join(["h"] * 32) + "]\n",  # 32 parts: the limit
        "t = 1979-05-27T07:32:00.999999-07:00\nf = 3.14159\ng = -1.5e+10\n",  # numbers, not keys
        "k" * 10_000 + " = 1\n" + '"' + "q" * 9_998 + '" = 2\n',  # 10,000 characters
        'v = "' + "x" * 50_000 + '"\nw = ["' + "y" * 50_000 + '"]\n',  # long values are fine
        'a = "unterminated\nb = 1\n',  # left for tomllib
    ],
)
def test_the_scanner_passes_what_is_within_its_limits(text: str) -> None:
    from veil import tomlscan

    tomlscan.scan(text)


@pytest.mark.parametrize(
    "text, line, limit",
    [
        (".".join(["k"] * 33) + " = 1\n", 1, "a dotted key of more than 32 parts"),
        ("a = 1\n[" + ".".join(["h"] * 33) + "]\n", 2, "a dotted key of more than 32 parts"),
        ("x = { " + " . ".join(['"q"'] * 33) + " = 1 }\n", 1, "a dotted key of more than 32 parts"),  # spaced, quoted
        ('s = """\n\n\n"""\n' + "a." * 40 + "a = 1\n", 5, "a dotted key of more than 32 parts"),  # lines counted
        ("x = " + "[" * 33 + "]" * 33 + "\n", 1, "arrays and inline tables nested more than 32 deep"),
        ("x = [\n" + "{ a = [\n" * 20 + "]}\n" * 20 + "]\n", 17, "arrays and inline tables nested more than 32 deep"),
        ("k" * 10_001 + " = 1\n", 1, "a key longer than 10000 characters"),
        ('"' + "q" * 9_999 + '" = 1\n', 1, "a key longer than 10000 characters"),
        ("[" + "h" * 10_001 + "]\n", 1, "a key longer than 10000 characters"),
        ('a = "x"\nb = "unterminated\n' + "c." * 40 + "c = 1\n", 3, "a dotted key of more than 32 parts"),
    ],
)
def test_the_scanner_refuses_beyond_its_limits(text: str, line: int, limit: str) -> None:
    from veil import tomlscan

    with pytest.raises(tomlscan.Exceeded, match=rf"^line {line}: {limit} \(the limit\)$"):
        tomlscan.scan(text)


def test_every_toml_in_the_repository_passes_the_scanner() -> None:
    from veil import tomlscan

    root = Path(__file__).resolve().parent.parent
    found = [p for p in root.rglob("*.toml") if ".venv" not in p.parts and ".git" not in p.parts]
    assert found
    for path in found:
        tomlscan.scan(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "bomb",
    [
        "a" + ".a" * 99_999 + " = 1\n",
        "[" + "a." * 20_000 + "a]\n",
        "x = " + "[" * 100_000 + "]" * 100_000 + "\n",
        "x = " + "{a=" * 50_000 + "1" + "}" * 50_000 + "\n",
    ],
)
def test_bombs_end_in_one_line_naming_the_file_and_the_limit(tmp_path: Path, bomb: str) -> None:
    with pytest.raises(ConfigError, match=r"veil\.toml: line \d+: .* \(the limit\); the config is not parsed$"):
        cfg.load(write(tmp_path, BASE + bomb))


def test_the_parser_is_guarded_beyond_the_scanner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Last resort, should a bomb pass the scanner: RecursionError and Python's digit limit are one line."""
    from veil import tomlscan

    monkeypatch.setattr(tomlscan, "MAX_DEPTH", 10**9)
    with pytest.raises(ConfigError, match=r"veil\.toml: too deeply nested or too large to parse \(RecursionError\)"):
        cfg.load(write(tmp_path, BASE + "x = " + "[" * 5000 + "]" * 5000 + "\n"))
    with pytest.raises(ConfigError, match=r"veil\.toml: not valid TOML: Exceeds the limit"):
        cfg.load(write(tmp_path, BASE.replace("k = 4", "k = " + "4" * 5000)))


def test_config_files_are_bounded_and_regular(tmp_path: Path) -> None:
    big = write(tmp_path, BASE + "# " + "x" * (1 << 20) + "\n")
    with pytest.raises(ConfigError, match=rf"^config file {big} is larger than 1 MiB \(\d+ bytes\)$"):
        cfg.load(big)
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match=rf"^config file {fifo} is a named pipe \(FIFO\), not a regular file$"):
        cfg.load(fifo)
    with pytest.raises(ConfigError, match=r"^config file /dev/zero is under /dev, where Veil never reads or writes$"):
        cfg.load("/dev/zero")
    with pytest.raises(ConfigError, match=rf"^config file {tmp_path} is a folder, not a regular file$"):
        cfg.load(tmp_path)
    crlf = tmp_path / "crlf.toml"
    write(tmp_path, BASE)
    crlf.write_bytes(BASE.replace("\n", "\r\n").encode())
    assert cfg.load(crlf).text == BASE  # as a text-mode read gives it


@pytest.mark.parametrize(
    "path, message",
    [
        ("/etc/passwd", r"is outside the config's folder .*; Veil reads and writes only there, unless \[files\] allow"),
        ("../outside.csv", r"is outside the config's folder"),
        ("/proc/self/environ", r"is under /proc, where Veil never reads or writes"),
        ("/sys/kernel/notes", r"is under /sys"),
        ("/dev/stdin", r"is under /dev"),
        ("hierarchies", r"is a folder, not a regular file"),
    ],
)
def test_hierarchy_files_must_be_regular_files_inside_the_folder(tmp_path: Path, path: str, message: str) -> None:
    text = BASE.replace('"hierarchies/zip.csv"', f'"{path}"')
    with pytest.raises(
        ConfigError,
        match=r"veil\.toml: \[\[quasi_identifiers\]\] #1 hierarchy key 'csv' = "
        rf"'{re.escape(path)}' " + message,
    ):
        cfg.load(write(tmp_path, text), check_hierarchies=False)  # checked even when the contents wait


def test_files_allow_and_the_bundled_hierarchies(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    from veil.demo import HIERARCHIES

    shared = tmp_path_factory.mktemp("shared")
    (shared / "zip.csv").write_text("13053;1305*;*\n13068;1306*;*\n")
    outside = BASE.replace('"hierarchies/zip.csv"', f'"{shared / "zip.csv"}"')
    with pytest.raises(ConfigError, match="is outside the config's folder"):
        cfg.load(write(tmp_path, outside))
    for allow in (str(shared), os.path.relpath(shared, tmp_path)):  # absolute, or relative to the config
        c = cfg.load(write(tmp_path, f'[files]\nallow = ["{allow}"]\n' + outside))
        assert c.quasi_identifiers[0].hierarchy == CsvSpec(shared / "zip.csv") and c.files == (shared / "zip.csv",)
    bundled = BASE.replace('"hierarchies/zip.csv"', f'"{HIERARCHIES / "inpatient_age.csv"}"')
    assert cfg.load(write(tmp_path, bundled)).files == (HIERARCHIES / "inpatient_age.csv",)
    with pytest.raises(ConfigError, match=r"veil\.toml: \[files\] key 'allow' must be a list of strings"):
        cfg.load(write(tmp_path, '[files]\nallow = "/srv"\n' + BASE))
    with pytest.raises(ConfigError, match=r"veil\.toml: \[files\] has unknown key\(s\) 'deny'"):
        cfg.load(write(tmp_path, "[files]\ndeny = []\n" + BASE))


@pytest.mark.parametrize(
    "report, message",
    [
        ("reports", None),
        ("a/b/c", None),
        ("../reports", "is outside the config's folder"),
        ("/tmp", "is outside the config's folder"),
        ("/dev/shm", "is under /dev"),
        ("", "must not be empty"),
        ("veil.toml", "is not a folder"),
    ],
)
def test_the_report_folder_stays_inside(tmp_path: Path, report: str, message: str | None) -> None:
    text = (
        BASE.replace('table = "patients"', 'table = "raw.patients"') + f'\n[release]\nname = "x"\nreport = "{report}"\n'
    )
    if message is None:
        assert cfg.load(write(tmp_path, text)).release.report == report
    else:
        with pytest.raises(ConfigError, match=r"veil\.toml: \[release\] key 'report' .*" + message):
            cfg.load(write(tmp_path, text))


@pytest.mark.parametrize(
    "schema", ["information_schema", "pg_catalog", "pg_toast", "pg_temp_3", "PG_Mine", "system", "temp", "TEMP"]
)
@pytest.mark.parametrize("key", ["schema", "catalog_schema"])
def test_reserved_schemas(tmp_path: Path, key: str, schema: str) -> None:
    text = (
        BASE.replace('table = "patients"', 'table = "raw.patients"') + f'\n[release]\nname = "x"\n{key} = "{schema}"\n'
    )
    with pytest.raises(ConfigError, match=rf"\[release\] key '{key}' names '{schema}', a schema the database reserves"):
        cfg.load(write(tmp_path, text))
    fine = text.replace(f'"{schema}"', '"main"' if key == "schema" else '"veil_catalog"')
    assert cfg.load(write(tmp_path, fine)).release is not None


@pytest.mark.parametrize(
    "budget, fine", [(0, True), (0.999, True), (1, False), (1.0, False), (-0.1, False), ("nan", False)]
)
def test_the_suppression_budget_is_below_one(tmp_path: Path, budget: object, fine: bool) -> None:
    text = BASE.replace("[[models]]", f"[search]\nmax_suppression = {budget}\n[[models]]")
    if fine:
        assert cfg.load(write(tmp_path, text)).search.max_suppression == float(budget)  # type: ignore[arg-type]
        return
    with pytest.raises(ConfigError, match=r"\[search\] key 'max_suppression' must be a fraction in \[0, 1\)"):
        cfg.load(write(tmp_path, text))
    with pytest.raises(ConfigError, match=r"argument 'max_suppression' must be a fraction in \[0, 1\)"):
        cfg.search_settings(
            {"max_suppression": float(budget)},
            "veil.anonymize()",
            "arguments",  # type: ignore[arg-type]
            key=lambda k: f"argument {k!r}",
        )


def test_hierarchy_files_are_read_bounded_and_never_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Again when read (the Python API, a model's hierarchy read by the run): a FIFO is refused before it is
    opened, ``/proc`` always, and the read itself stops past the limit (``/proc`` files say they hold 0 bytes)."""
    import threading

    from veil import files
    from veil.errors import HierarchyError
    from veil.hierarchy import read_csv_rows

    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    outcome: list[str] = []
    reader = threading.Thread(target=lambda: outcome.append(_error_of(read_csv_rows, fifo)), daemon=True)
    reader.start()
    reader.join(timeout=30)
    assert outcome == [f"cannot read hierarchy file {fifo}: it is a named pipe (FIFO), not a regular file"]
    with pytest.raises(HierarchyError, match=r"^cannot read hierarchy file /proc/self/environ: it is under /proc"):
        read_csv_rows(Path("/proc/self/environ"), "\0")
    data = tmp_path / "d.csv"
    data.write_text("1;a;*\n" * 100)
    with pytest.raises(files.Refused, match=r"^is larger than 10 bytes \(600 bytes\)$"):
        files.read_bounded(data, 10)
    monkeypatch.setattr(files, "check_regular", lambda path, limit: os.stat(path))  # as if it said 0 bytes
    with pytest.raises(files.Refused, match=r"^holds more than 10 bytes$"):
        files.read_bounded(data, 10)
    assert len(files.read_bounded(data, 600)) == 600


def _error_of(function: Any, *args: Any) -> str:
    try:
        function(*args)
    except Exception as exc:  # noqa: BLE001 - the message is the result
        return str(exc)
    return "no error"


def test_the_python_api_refuses_proc_and_fifos_too(tmp_path: Path) -> None:
    """A notebook's own paths are not confined to a folder (the caller runs Python anyway), but what a file
    is still counts."""
    import pandas as pd

    import veil
    from veil.errors import HierarchyError

    df = pd.DataFrame({"age": [21, 21, 35, 35], "condition": ["a", "b", "a", "b"]})
    for path, why in (("/proc/self/environ", "is under /proc"), ("/dev/zero", "is under /dev")):
        with pytest.raises((ConfigError, HierarchyError), match=rf"cannot read hierarchy file {path}: it {why}"):
            veil.anonymize(
                df, {"age": {"csv": path, "delimiter": "\0"}}, "condition", [{"type": "k-anonymity", "k": 2}]
            )


# --- one reader (issue 37): every section through veil.settings.Table, each parsed once, defaults written once ---

FULL = (
    BASE.replace('table = "patients"', 'table = "raw.patients"')
    + """
[search]
metric = "workload"

[release]
name = "r"

[audit]
share = 0.8

[audit.attributes.condition]
similarity_level = 2

[[workload]]
group_by = ["age"]
"""
)


def test_every_section_is_read_once_by_the_one_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each table of the file is opened by ``veil.settings.Table`` (model parameters by its ``Params``) exactly
    once: ``[audit]`` and ``[[workload]]`` are parsed with the config and kept on it, never parsed again."""
    from veil import auditsettings, settings, workloadsettings
    from veil.models.params import Params

    opened: list[str] = []
    init = settings.Table.__init__

    def counting(self: settings.Table, data: Any, where: str, *args: Any, **kwargs: Any) -> None:
        opened.append(re.sub(r"^.*?: (?=\[)", "", where))
        init(self, data, where, *args, **kwargs)

    monkeypatch.setattr(settings.Table, "__init__", counting)
    c = cfg.load(write(tmp_path, FULL))
    assert sorted(opened) == sorted(
        [
            "the top level",
            "[source]",
            "[[quasi_identifiers]] #1",
            "[[quasi_identifiers]] #1 ('zip') hierarchy",
            "[[quasi_identifiers]] #2",
            "[[quasi_identifiers]] #2 ('age') hierarchy",
            "[sensitive]",
            "[[models]] #1 (k-anonymity)",
            "[search]",
            "[release]",
            "[audit]",
            "[audit.attributes.condition]",
            "[[workload]] #1",
        ]
    )
    opened.clear()
    assert c.audit.share == 0.8 and c.audit.attribute("condition").similarity_level == 2
    assert workloadsettings.workload_of(c) == c.workload and c.workload[0].group_by == ("age",)
    assert opened == []  # the audit and the workload metric read what the parse kept
    assert issubclass(Params, settings.Table) and not hasattr(auditsettings, "_Reader")
    assert not hasattr(auditsettings, "settings_of") and not hasattr(cfg, "_Table")


def test_defaults_are_the_dataclasses(tmp_path: Path) -> None:
    """``[release]``, ``[search]`` and ``[audit]`` defaults are written once, on their dataclasses."""
    from veil.auditsettings import AttributeSettings, AuditSettings, parse_audit

    text = BASE.replace('table = "patients"', 'table = "raw.patients"') + '\n[release]\nname = "r"\n'
    c = cfg.load(write(tmp_path, text))
    assert c.release == cfg.ReleaseConfig("r") and c.search == cfg.SearchConfig() and c.audit == AuditSettings()
    assert c.catalog_schema == cfg.ReleaseConfig("r").catalog_schema
    assert cfg.search_settings({}, "v.toml") == cfg.SearchConfig()
    parsed = parse_audit({"attributes": {"condition": {}}}, Path("v.toml"), ("condition",))
    assert parsed.attribute("condition") == AttributeSettings() and replace(parsed, attributes={}) == AuditSettings()


@pytest.mark.parametrize(
    "change, message",
    [
        # a value that is not a table is quoted like any other wrong type: the type and the value
        (
            ("[[models]]", "[audit]\nattributes = { condition = 5 }\n[[models]]"),
            "[audit.attributes.condition] must be a table, got int 5 (was: got 5)",
        ),
        # a choice that is not even a string: the choices, not just "a string"
        (
            ('type = "k-anonymity"\nk = 4', 'type = "em-anonymity"\nepsilon = 1\nm = 2\nmode = 5'),
            "[[models]] #1 (em-anonymity): parameter 'mode' must be one of 'absolute', 'relative', got 5 "
            "(was: must be a string, got 5)",
        ),
        # the audit's numbers as the models' are: finite, and an open-ended range as its bound
        (
            ("[[models]]", "[audit]\nshare = inf\n[[models]]"),
            "[audit] key 'share' must be a finite number, got inf (was: must be a number, got inf)",
        ),
        (
            ("[[models]]", "[audit.attributes.condition]\nproximity_epsilon = -1\n[[models]]"),
            "[audit.attributes.condition] key 'proximity_epsilon' must be >= 0, got -1 (was: must be in [0, inf], got -1)",
        ),
        # unchanged: the audit's ranges keep naming the interval, its whole numbers the whole rule
        (("[[models]]", "[audit]\nshare = 0\n[[models]]"), "[audit] key 'share' must be in (0, 1], got 0"),
        (("[[models]]", "[audit]\nt = 1.5\n[[models]]"), "[audit] key 't' must be in [0, 1], got 1.5"),
        (("[[models]]", "[audit]\nworst = 0\n[[models]]"), "[audit] key 'worst' must be a whole number >= 1, got 0"),
        (
            ("[[models]]", '[audit.attributes.condition]\ndistance = "far"\n[[models]]'),
            "[audit.attributes.condition] key 'distance' must be one of 'equal', 'ordered', 'hierarchical', got 'far'",
        ),
        (
            ("[[models]]", '[[workload]]\ngroup_by = ["age"]\nweight = 0\n[[models]]'),
            "[[workload]] #1 key 'weight' must be a positive number, got 0",
        ),
        (
            ("[[models]]", '[[workload]]\ngroupby = ["age"]\n[[models]]'),
            "[[workload]] #1 has unknown key(s) 'groupby' (did you mean 'group_by'?)",
        ),
    ],
)
def test_one_reader_one_error_shape(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    """Errors of every section from the one reader; the five that changed when the readers merged say what they
    said before (``was:``) — each now gives the type and value, the choices, or the bound it broke."""
    text = BASE.replace(*change)
    assert text != BASE
    with pytest.raises(ConfigError) as info:
        cfg.load(write(tmp_path, text))
    assert str(info.value) == f"{tmp_path / 'veil.toml'}: {message.split(' (was: ')[0]}"


def test_a_table_that_is_not_one_is_quoted(tmp_path: Path) -> None:
    """A column name where a ``[[quasi_identifiers]]`` table belongs: the error shows it (was: ``got str``)."""
    text = (
        'quasi_identifiers = ["zip"]\n'
        + BASE.split("[[quasi_identifiers]]")[0]
        + "[sensitive]"
        + BASE.split("[sensitive]")[1]
    )
    with pytest.raises(ConfigError) as info:
        cfg.load(write(tmp_path, text))
    assert str(info.value) == f"{tmp_path / 'veil.toml'}: [[quasi_identifiers]] #1 must be a table, got str 'zip'"


@pytest.mark.parametrize(
    "keys, message",
    [
        (
            'series = "refuse"\nseries_block = 500',
            r"\[release\] key 'series_block' applies to series = \"cohort\" only",
        ),
        ("series_block = 1", r"'series_block' must be at least 2 rows, got 1"),
        ("series_block = 500\nseries_block_share = 0", r"'series_block_share' must be a fraction in \(0, 1\], got 0"),
        ("series_block = 500\nseries_block_share = 1.5", r"'series_block_share' must be a fraction in \(0, 1\]"),
        ("series_block_share = 0.9", r"'series_block_share' needs series_block"),
        ('series_block = "many"', r"'series_block' must be"),
        ('series = "off"\nseries_delay = 30', r"\[release\] key 'series_delay' applies to series = \"cohort\" only"),
        ("series_delay = -1", r"'series_delay' must be 0 \(no bound\) or a number of nights, got -1"),
        ("series_delay = 1.5", r"'series_delay' must be"),
        ('series = "refuse"\nseries_standing = 0.02', r"key 'series_standing' applies to series = \"cohort\" only"),
        ("series_standing = 1", r"'series_standing' must be 0 \(no floor\) or a fraction in \(0, 1\), got 1.0"),
        ("series_standing = -0.01", r"'series_standing' must be 0 \(no floor\) or a fraction in \(0, 1\)"),
        ('series_standing = "low"', r"'series_standing' must be"),
        ('series = "off"\nseries_cohort = 50', r"key 'series_cohort' applies to series = \"cohort\" only"),
        ("series_cohort = 1", r"'series_cohort' must be at least 2 rows, got 1"),
        ("series_cohort = 2.5", r"'series_cohort' must be"),
        ('series = "off"\nseries_budget = 0.05', r"key 'series_budget' applies to series = \"cohort\" only"),
        ("series_budget = 1", r"'series_budget' must be 0 \(no plan\) or a fraction in \(0, 1\), got 1.0"),
        ('series_budget = "half"', r"'series_budget' must be"),
    ],
)
def test_series_block_errors_name_the_key(tmp_path: Path, keys: str, message: str) -> None:
    text = BASE.replace('table = "patients"', 'table = "raw.patients"') + f'\n[release]\nname = "x"\n{keys}\n'
    with pytest.raises(ConfigError, match=message) as info:
        cfg.load(write(tmp_path, text))
    assert str(tmp_path) in str(info.value) and "\n" not in str(info.value)


def test_series_block_reads_rows_and_share(tmp_path: Path) -> None:
    text = BASE.replace('table = "patients"', 'table = "raw.patients"')
    c = cfg.load(write(tmp_path, text + '\n[release]\nname = "x"\nseries_block = 667\n'))
    assert c.release is not None and (c.release.series_block, c.release.series_block_share) == (667, 0.95)
    c = cfg.load(write(tmp_path, text + '\n[release]\nname = "x"\nseries_block = 222\nseries_block_share = 1\n'))
    assert c.release is not None and (c.release.series_block, c.release.series_block_share) == (222, 1.0)
    assert c.release.series_delay == 90  # the joiners' delay bound, on by default (docs/series.md §2a)
    c = cfg.load(write(tmp_path, text + '\n[release]\nname = "x"\nseries_delay = 0\n'))
    assert c.release is not None and c.release.series_delay == 0
    assert c.release.series_standing == 0.01  # the first version's blocks capped by default (docs/series.md §9.5)
    assert c.release.series_budget == 0.06  # later versions planned for 6% held at most (docs/series.md §2b)
    c = cfg.load(write(tmp_path, text + '\n[release]\nname = "x"\nseries_standing = 0\n'))
    assert c.release is not None and c.release.series_standing == 0
    assert c.release.series_cohort is None  # joiners' cohorts of `batch` rows by default (docs/series.md §9.5)
    c = cfg.load(write(tmp_path, text + '\n[release]\nname = "x"\nseries_cohort = 50\n'))
    assert c.release is not None and c.release.series_cohort == 50
