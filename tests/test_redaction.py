"""What an error may show (issue 33): credentials masked wherever a message leaves the process
(``veil.errors.redact``), values read from files quoted only as a short excerpt (``veil.errors.excerpt``)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from veil import contract
from veil.errors import ConfigError, HierarchyError, excerpt, redact
from veil.hierarchy import CsvSpec, TaxonomySpec, ValueKind, build, read_csv_rows, validate_chain

SECRET = "hunter2"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("postgresql+psycopg://veil:hunter2@db:5432/wh", "postgresql+psycopg://veil:***@db:5432/wh"),
        ("postgresql://veil:hun@ter2@db/wh", "postgresql://veil:***@db/wh"),  # an unencoded @ in it
        ("redis://:hunter2@cache:6379/0", "redis://:***@cache:6379/0"),  # no user
        ("'mysql://u:hunter2@h/d' and 'https://a:hunter2@b/c'", "'mysql://u:***@h/d' and 'https://a:***@b/c'"),
        (
            "A=1\x00URL=postgresql://u:hunter2@h/d\x00PGPASSWORD=hunter2\x00B=2",
            "A=1\x00URL=postgresql://u:***@h/d\x00PGPASSWORD=***\x00B=2",
        ),  # /proc/self/environ
        ("host=db user=veil password=hunter2 dbname=wh", "host=db user=veil password=*** dbname=wh"),
        ("PGPASSWORD='hunter2 2'; export X", "PGPASSWORD='***'; export X"),
        ('{"password": "hunter2", "user": "veil"}', '{"password": "***", "user": "veil"}'),
        ("passwd: hunter2", "passwd: ***"),
        ("API_TOKEN = hunter2", "API_TOKEN = ***"),
        ("client_secret=hunter2&grant=x", "client_secret=***&grant=x"),
    ],
)
def test_redact_masks_credentials(text: str, expected: str) -> None:
    assert redact(text) == expected
    assert SECRET not in redact(text)
    assert redact(redact(text)) == redact(text)


@pytest.mark.parametrize(
    "text",
    [
        "postgresql://veil@db:5432/wh",  # no password
        "password authentication failed for user 'veil'",
        "fe_sendauth: no password supplied",
        "[[models]] #1 (epsilon-privacy): unknown parameter(s) 'token'",
        "hierarchy for column 'age' (/srv/h/age.csv) line 3: value 'forty' is not a valid integer",
        "cannot connect to PostgreSQL at db:5432 (connection refused)",
    ],
)
def test_redact_leaves_other_text_alone(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    "value, shown",
    [
        ("forty", "'forty'"),
        ("", "''"),
        (28.5, "28.5"),
        (55, "55"),
        ("respiratory!", "'respiratory!'"),
        ("PATH=/usr/local/bin:/usr/bin", "'PATH=/us…' (28 characters)"),
        ("a\nb\x00c" * 10, "'a\\nb\\x00ca\\nb…' (50 characters)"),  # one line, whatever it holds
    ],
)
def test_excerpt(value: object, shown: str) -> None:
    assert excerpt(value) == shown


def test_excerpt_shows_a_dozen_characters_at_most() -> None:
    for n in range(0, 200):
        value = "x" * n
        assert excerpt(value).count("x") <= 12


def test_a_value_of_a_csv_is_quoted_as_an_excerpt(tmp_path: Path) -> None:
    """The CSV's value is a line of something else (a URL with its password): the error keeps 8 characters."""
    line = f"postgresql://veil:{SECRET}@db/wh"
    path = tmp_path / "age.csv"
    path.write_text(f"{line};x;*\n", encoding="utf-8")
    with pytest.raises(HierarchyError) as info:
        build(CsvSpec(path), "age", [1], ValueKind.INTEGER)
    message = str(info.value)
    assert f"line 1: value 'postgres…' ({len(line)} characters) is not a valid integer" in message
    assert SECRET not in message and "veil:" not in message


def test_labels_of_a_broken_function_chain_are_excerpts() -> None:
    long_a, long_b = "a" * 40 + SECRET, "b" * 40 + SECRET
    spec = TaxonomySpec(mapping=(("1", (long_a, "*")), ("1", (long_b, "*"))))
    with pytest.raises(HierarchyError) as info:
        build(spec, "x", ["1"], ValueKind.TEXT)
    assert "has two generalizations ['aaaaaaaa…' (47 characters), '*'] and ['bbbbbbbb…' (47 characters), '*']" in str(
        info.value
    )
    with pytest.raises(HierarchyError) as info:
        validate_chain("x", "test", ["1", "2"], [["g", "g"], [long_a, long_b]])
    assert SECRET not in str(info.value) and "'aaaaaaaa…' (47 characters)" in str(info.value)


def test_a_file_that_is_not_utf8_or_not_a_csv_is_named_without_its_content(tmp_path: Path) -> None:
    binary = tmp_path / "b.csv"
    binary.write_bytes(f"{SECRET};x\n".encode() + b"\xff\xfe;*\n")
    with pytest.raises(HierarchyError, match=r"b\.csv is not UTF-8 text \(byte 0xff at offset 10\)$") as info:
        read_csv_rows(binary)
    assert SECRET not in str(info.value)
    broken = tmp_path / "q.csv"
    broken.write_text("1;x;*\n" + f"2;{SECRET * 20_000};*\n", encoding="utf-8")
    with pytest.raises(HierarchyError, match=r"q\.csv is not a readable CSV \(line 2\): field larger than") as info:
        read_csv_rows(broken)
    assert SECRET not in str(info.value)


def test_the_cli_masks_credentials_in_its_error_line_and_json() -> None:
    """``veil.contract.fail``: one place for stderr and the ``--json`` document."""
    out, err = io.StringIO(), io.StringIO()

    def body() -> contract.Result:
        raise ConfigError(f"cannot use postgresql://veil:{SECRET}@db/wh; password={SECRET}")

    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = contract.execute("check", contract.Options(json=True), body)
    assert code == 1
    assert json.loads(out.getvalue())["error"] == "cannot use postgresql://veil:***@db/wh; password=***"
    assert SECRET not in out.getvalue() + err.getvalue() and "password=***" in err.getvalue()
