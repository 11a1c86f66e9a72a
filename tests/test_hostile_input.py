"""Configs and files an attacker controls (issue 33), through the real CLI on both backends: each ends in
one error line naming the file, the key and the path or the limit, quickly, and no secret of the process
reaches stderr, the ``--json`` document or the catalog's ``releases.error``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.conftest import PG_ENV, PG_URL, Db, ReleaseSchemas, error_line, run_veil

SECRET = "hunter2-veil-hostile-input"  # a fake password: it must show up nowhere
ROWS = [(1, 21, "a"), (2, 21, "b"), (3, 35, "a"), (4, 35, "b")]
TIMEOUT = 60  # generous: every case here ends in about a second


def _body(hierarchy: str = "{ suppress = true }", extra: str = "") -> str:
    return (
        f'[[quasi_identifiers]]\ncolumn = "age"\nhierarchy = {hierarchy}\n\n'
        f'[sensitive]\ncolumns = ["condition"]\n\n[[models]]\ntype = "k-anonymity"\nk = 2\n{extra}'
    )


def _table(db: Db) -> None:
    db.create_table("t", {"id": sa.Integer, "age": sa.Integer, "condition": sa.String}, ROWS)


def _config(
    db: Db, body: str, release: ReleaseSchemas | None = None, name: str = "veil.toml", release_extra: str = ""
) -> Path:
    section = release.section("hostile") + release_extra if release is not None else ""
    return db.write_config("t", body + section, name=name)


def _refused(res, *needles: str) -> str:  # noqa: ANN001 - a CompletedProcess
    """The run failed with exactly one error line holding every needle; the line, which the JSON repeats."""
    line = error_line(res.stderr)
    assert res.returncode == 1, res.stderr
    for needle in needles:
        assert needle in line, line
    if res.stdout:
        doc = json.loads(res.stdout)
        assert doc["status"] == "failed" and doc["error"] == line
    return line


def _catalog_errors(db: Db, release: ReleaseSchemas) -> list[str]:
    return [str(e) for (e,) in db.query(f'SELECT error FROM "{release.cat}".releases') if e is not None]


def _leading_secret(monkeypatch: pytest.MonkeyPatch, db: Db) -> None:
    """A URL with a password as the *first* variable of the environment the CLI runs in (what an error quoting
    the first entry of ``/proc/self/environ`` shows); on PostgreSQL the source URL itself carries it (trust
    authentication ignores it)."""
    leading = {"VEIL_TEST_SECRET_URL": f"postgresql://veil:{SECRET}@warehouse.example:5432/wh"}
    if db.kind == "postgres":
        leading[PG_ENV] = sa.make_url(PG_URL).set(password=SECRET).render_as_string(hide_password=False)
    monkeypatch.setattr(os, "environ", {**leading, **{k: v for k, v in os.environ.items() if k not in leading}})


def _nowhere(secret: str, res, *more: str) -> None:  # noqa: ANN001
    for text in (res.stdout, res.stderr, *more):
        assert secret not in text, text


def test_proc_self_environ_is_refused_and_its_secrets_stay_out(
    db: Db, release_schemas: ReleaseSchemas, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's case: the environment (the database URL with its password) read as a hierarchy of an
    integer column used to land in stderr, the JSON and ``releases.error``."""
    _table(db)
    _leading_secret(monkeypatch, db)
    benign = _config(db, _body(), release_schemas, name="benign.toml")
    assert run_veil("init", "--config", str(benign), timeout=TIMEOUT).returncode == 0
    hostile = _config(db, _body('{ csv = "/proc/self/environ", delimiter = "\\u0000" }'), release_schemas)
    res = run_veil("release", "--config", str(hostile), "--json", timeout=TIMEOUT)
    _refused(res, str(hostile), "[[quasi_identifiers]] #1 hierarchy key 'csv' = '/proc/self/environ' is under /proc")
    _nowhere(SECRET, res, *_catalog_errors(db, release_schemas))
    assert "VEIL_TEST_SECRET_URL" not in res.stderr + res.stdout


@pytest.mark.parametrize("where", ["quasi-identifier", "model", "audit"])
@pytest.mark.parametrize("path", ["/etc/shadow", "../../etc/passwd"])
def test_a_file_outside_the_config_folder_is_refused(db: Db, where: str, path: str) -> None:
    """Absolute or climbing out with ``..``, for every key that names a file."""
    _table(db)
    csv = f'{{ csv = "{path}" }}'
    if where == "quasi-identifier":
        body, key = _body(csv), "[[quasi_identifiers]] #1 hierarchy key 'csv'"
    elif where == "model":
        body = _body(
            extra=f'\n[[models]]\ntype = "t-closeness"\nt = 0.5\ndistance = "hierarchical"\nhierarchy = {csv}\n'
        )
        key = "[[models]] #2 hierarchy key 'csv'"
    else:
        body, key = (
            _body(extra=f"\n[audit.attributes.condition]\nhierarchy = {csv}\n"),
            "[audit.attributes.condition.hierarchy] key 'csv'",
        )
    config = _config(db, body)
    res = run_veil("check", "--config", str(config), "--node", "0", "--json", timeout=TIMEOUT)
    _refused(res, str(config), f"{key} = '{path}' is outside the config's folder {db.workdir}", "[files] allow")
    assert "root:" not in res.stderr + res.stdout


def test_a_symlink_in_the_config_folder_pointing_outside_is_refused(
    db: Db, tmp_path_factory: pytest.TempPathFactory, release_schemas: ReleaseSchemas
) -> None:
    """The link sits inside the folder; what it resolves to does not."""
    _table(db)
    outside = tmp_path_factory.mktemp("outside") / "secret.csv"
    outside.write_text(f"postgresql://veil:{SECRET}@db/wh;x;*\n", encoding="utf-8")
    (db.workdir / "age.csv").symlink_to(outside)
    (db.workdir / "environ.csv").symlink_to("/proc/self/environ")
    benign = _config(db, _body(), release_schemas, name="benign.toml")
    assert run_veil("init", "--config", str(benign), timeout=TIMEOUT).returncode == 0
    for link, why in (
        ("age.csv", f"is outside the config's folder {db.workdir} (it resolves to {outside})"),
        ("environ.csv", "is under /proc"),
    ):
        config = _config(db, _body(f'{{ csv = "{link}" }}'), release_schemas)
        res = run_veil("release", "--config", str(config), "--json", timeout=TIMEOUT)
        _refused(res, f"hierarchy key 'csv' = '{link}' {why}")
        _nowhere(SECRET, res, *_catalog_errors(db, release_schemas))


def test_a_fifo_as_hierarchy_file_is_refused_without_blocking(db: Db) -> None:
    """Opening a FIFO for reading waits for a writer forever: refused before it is opened."""
    _table(db)
    os.mkfifo(db.workdir / "age.csv")
    config = _config(db, _body('{ csv = "age.csv" }'))
    res = run_veil("check", "--config", str(config), "--node", "0", "--json", timeout=TIMEOUT)
    _refused(res, str(config), "hierarchy key 'csv' = 'age.csv' is a named pipe (FIFO), not a regular file")


@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_a_config_that_is_a_device_or_a_fifo_is_refused(db: Db, special: str) -> None:
    """``/dev/zero`` used to be read without bound, a FIFO to block."""
    path = special
    if special == "fifo":
        path = str(db.workdir / "veil.toml")
        os.mkfifo(path)
    res = run_veil("check", "--config", path, "--json", timeout=TIMEOUT)
    why = "is under /dev" if special == "/dev/zero" else "is a named pipe (FIFO), not a regular file"
    _refused(res, f"config file {path} {why}")


def test_a_config_larger_than_the_limit_is_refused_unread(db: Db) -> None:
    _table(db)
    config = _config(db, _body() + "# " + "x" * (1 << 20) + "\n")
    res = run_veil("check", "--config", str(config), "--json", timeout=TIMEOUT)
    _refused(res, f"config file {config} is larger than 1 MiB")


@pytest.mark.parametrize("kind", ["key", "header"])
@pytest.mark.parametrize("parts", [20_000, 100_000])
def test_dotted_key_bombs_are_refused_before_parsing(db: Db, parts: int, kind: str) -> None:
    """``tomllib`` needed 15.5 s and 1.6 GB for 20,000 parts (100,000: 16.7 GB)."""
    _table(db)
    key = ".".join(["a"] * parts)
    config = _config(db, _body() + (f"\n{key} = 1\n" if kind == "key" else f"\n[{key}]\n"))
    line_no = config.read_text().splitlines().index(f"{key} = 1" if kind == "key" else f"[{key}]") + 1
    res = run_veil("check", "--config", str(config), "--json", timeout=30)
    _refused(res, f"{config}: line {line_no}: a dotted key of more than 32 parts (the limit)")


@pytest.mark.parametrize(
    "bomb",
    [
        "x = " + "[" * 5000 + "]" * 5000,
        "x = " + "{a = " * 5000 + "1" + "}" * 5000,
        "x = [" + "{a = [" * 2500 + "]}" * 2500 + "]",
    ],
)
def test_nesting_bombs_are_refused_before_parsing(db: Db, bomb: str) -> None:
    """They used to end as ``internal error: RecursionError``."""
    _table(db)
    config = _config(db, _body() + "\n" + bomb + "\n")
    line_no = len(config.read_text().splitlines())
    res = run_veil("check", "--config", str(config), "--json", timeout=30)
    line = _refused(res, f"{config}: line {line_no}: arrays and inline tables nested more than 32 deep (the limit)")
    assert "internal error" not in line


@pytest.mark.parametrize("report", ["../reports", "../../../../../tmp/veil-hostile-reports", "/proc/self"])
def test_a_report_folder_outside_the_config_folder_is_refused(
    db: Db, release_schemas: ReleaseSchemas, report: str
) -> None:
    _table(db)
    config = _config(db, _body(), release_schemas, release_extra=f'report = "{report}"\n')
    for command in ("init", "release"):
        res = run_veil(command, "--config", str(config), "--json", timeout=TIMEOUT)
        why = "is under /proc" if report.startswith("/proc") else f"is outside the config's folder {db.workdir}"
        _refused(res, str(config), f"[release] key 'report' = '{report}' {why}")
    assert not (db.workdir.parent / "reports").exists()


@pytest.mark.parametrize(
    "key, schema",
    [
        ("schema", "information_schema"),
        ("schema", "pg_catalog"),
        ("catalog_schema", "pg_catalog"),
        ("catalog_schema", "information_schema"),
        ("schema", "pg_toast"),
        ("schema", "pg_mine"),
        ("schema", "system"),
        ("catalog_schema", "temp"),
        ("schema", "Information_Schema"),
    ],
)
def test_reserved_schemas_are_refused(db: Db, release_schemas: ReleaseSchemas, key: str, schema: str) -> None:
    """On PostgreSQL ``schema = "information_schema"`` used to publish into it and ``pg_catalog`` to fail
    late; DuckDB's system and temp catalogs shadow schemas of their names."""
    _table(db)
    config = _config(db, _body(), release_schemas)
    config.write_text(
        config.read_text().replace(
            f'{key} = "{getattr(release_schemas, "out" if key == "schema" else "cat")}"', f'{key} = "{schema}"'
        )
    )
    for command in ("init", "release"):
        res = run_veil(command, "--config", str(config), "--json", timeout=TIMEOUT)
        _refused(res, str(config), f"[release] key '{key}' names '{schema}', a schema the database reserves")


def test_max_suppression_of_one_is_refused(db: Db, release_schemas: ReleaseSchemas) -> None:
    """A budget of 1.0 let an unsatisfiable model publish 0 rows with exit 0."""
    _table(db)
    config = _config(db, _body().replace("k = 2", "k = 100") + "\n[search]\nmax_suppression = 1.0\n", release_schemas)
    for command in ("init", "release"):
        res = run_veil(command, "--config", str(config), "--json", timeout=TIMEOUT)
        _refused(
            res,
            str(config),
            "[search] key 'max_suppression' must be a fraction in [0, 1), got 1.0; "
            "1.0 would allow a release with every row suppressed",
        )


def test_a_folder_allowed_in_files_allow_is_read_and_written(
    db: Db, release_schemas: ReleaseSchemas, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """``[files] allow``: a hierarchy outside the config's folder is read, the report written there."""
    _table(db)
    shared = tmp_path_factory.mktemp("shared")
    (shared / "age.csv").write_text("21;<30;*\n35;>=30;*\n", encoding="utf-8")
    body = _body(f'{{ csv = "{shared / "age.csv"}" }}')
    config = _config(
        db,
        f'[files]\nallow = ["{shared}"]\n\n' + body,
        release_schemas,
        release_extra=f'report = "{shared / "reports"}"\n',
    )
    assert run_veil("init", "--config", str(config), timeout=TIMEOUT).returncode == 0
    res = run_veil("release", "--config", str(config), "--json", timeout=TIMEOUT)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["status"] == "published" and doc["report"] == str(shared / "reports" / "hostile_v1.html")
    assert (shared / "reports" / "hostile_v1.html").is_file()
    assert len(db.query(f'SELECT age FROM "{release_schemas.out}".hostile')) == len(ROWS)


@pytest.mark.parametrize(
    "entry, why",
    [("/proc", "is under /proc"), ("/proc/self/..", "is under /proc"), ("no-such-folder", "is not a folder")],
)
def test_files_allow_never_opens_proc_and_names_a_folder(db: Db, entry: str, why: str) -> None:
    _table(db)
    config = _config(db, f'[files]\nallow = ["{entry}"]\n\n' + _body())
    res = run_veil("check", "--config", str(config), "--node", "0", "--json", timeout=TIMEOUT)
    _refused(res, str(config), f"[files] key 'allow' entry '{entry}' {why}")


def test_an_allowed_folder_still_never_reads_proc_through_a_symlink(
    db: Db, tmp_path_factory: pytest.TempPathFactory
) -> None:
    _table(db)
    shared = tmp_path_factory.mktemp("shared")
    (shared / "age.csv").symlink_to("/proc/self/environ")
    config = _config(db, f'[files]\nallow = ["{shared}"]\n\n' + _body(f'{{ csv = "{shared / "age.csv"}" }}'))
    res = run_veil("check", "--config", str(config), "--node", "0", "--json", timeout=TIMEOUT)
    _refused(res, f"hierarchy key 'csv' = '{shared / 'age.csv'}' is under /proc")


def test_a_value_read_from_a_file_is_quoted_as_a_short_excerpt(db: Db, release_schemas: ReleaseSchemas) -> None:
    """A hierarchy file inside the folder whose values are not hierarchy values (here a URL with a password):
    the error shows its first characters and its length, never the line — not in stderr, the JSON or the
    catalog."""
    _table(db)
    line = f"postgresql://veil:{SECRET}@db/wh"
    (db.workdir / "age.csv").write_text(f"{line};x;*\n", encoding="utf-8")
    benign = _config(db, _body(), release_schemas, name="benign.toml")
    assert run_veil("init", "--config", str(benign), timeout=TIMEOUT).returncode == 0
    config = _config(db, _body('{ csv = "age.csv" }'), release_schemas)
    res = run_veil("release", "--config", str(config), "--json", timeout=TIMEOUT)
    _refused(res, f"line 1: value 'postgres…' ({len(line)} characters) is not a valid integer")
    errors = _catalog_errors(db, release_schemas)
    assert len(errors) == 1 and "'postgres…'" in errors[0]
    _nowhere(SECRET, res, *errors)


def test_a_credential_in_an_error_is_masked_on_stderr_in_the_json_and_in_the_catalog(
    db: Db, release_schemas: ReleaseSchemas
) -> None:
    """Whatever an error quotes, a ``password=…`` or a URL's password is masked where it leaves the process
    (here a column name that the config made up: the source has no such column)."""
    _table(db)
    benign = _config(db, _body(), release_schemas, name="benign.toml")
    assert run_veil("init", "--config", str(benign), timeout=TIMEOUT).returncode == 0
    config = _config(
        db, _body().replace('columns = ["condition"]', f'columns = ["password={SECRET}"]'), release_schemas
    )
    res = run_veil("release", "--config", str(config), "--json", timeout=TIMEOUT)
    _refused(res, "password=***")
    errors = _catalog_errors(db, release_schemas)
    assert len(errors) == 1 and "password=***" in errors[0]
    _nowhere(SECRET, res, *errors)
