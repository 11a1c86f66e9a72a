"""``veil doctor`` (issue 35): one line per check — config, connection, source table and columns, each
hierarchy's coverage, PostgreSQL's grants, the catalog — with ok, warn or fail; ``--json``; exit 0 when
nothing fails, 1 otherwise; and nothing written anywhere."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from tests.conftest import PG_URL, Db, ReleaseSchemas, error_line, inpatient_body, run_veil

postgres_only = pytest.mark.parametrize("db", ["postgres"], indirect=True)  # roles and grants: PostgreSQL only


def doctor(path: Path | str, **kwargs: Any) -> tuple[int, dict[str, Any], str]:
    res = run_veil("doctor", "--config", str(path), "--json", **kwargs)
    return res.returncode, json.loads(res.stdout), res.stderr


def statuses(doc: dict[str, Any]) -> dict[str, str]:
    return {c["check"]: c["status"] for c in doc["checks"]}


def detail(doc: dict[str, Any], check: str) -> str:
    return next(c["detail"] for c in doc["checks"] if c["check"] == check)


def test_a_ready_setup_passes(inpatient: Db, release_schemas: ReleaseSchemas) -> None:
    path = inpatient.write_config("patients", inpatient_body() + release_schemas.section())
    assert run_veil("init", "--config", str(path)).returncode == 0
    before = inpatient.objects()
    code, doc, stderr = doctor(path)
    assert code == 0 and stderr == "", stderr
    found = statuses(doc)
    assert (doc["status"], doc["passed"], doc["failed"], doc["not_run"]) == ("ok", True, 0, [])
    assert {
        "config",
        "connection",
        "source",
        "hierarchy zip",
        "hierarchy age",
        "hierarchy nationality",
        "catalog",
    } <= set(found)
    assert set(found.values()) <= {"ok", "warn"}
    if inpatient.kind == "postgres":  # the tests' role is a superuser: said, and not a failure
        assert found["role"] == "warn" and found["database"] == "ok"
        assert found[f"schema {release_schemas.out}"] == "ok"
    assert detail(doc, "hierarchy age").endswith("covers all 12 values of the column")
    assert inpatient.objects() == before  # read-only
    text = run_veil("doctor", "--config", str(path))
    lines = text.stdout.splitlines()
    assert text.returncode == 0 and lines[-1].startswith(f"all {len(found)} checks passed")
    assert lines[0].startswith("ok    config: ") and any(line.startswith("ok    catalog: ") for line in lines)


def test_each_problem_is_a_failed_line(inpatient: Db, tmp_path: Path) -> None:
    """A hierarchy that misses values, a [release] column the table lacks and no catalog: each its own line."""
    from veil.demo import HIERARCHIES

    ages = (HIERARCHIES / "inpatient_age.csv").read_text().splitlines()
    partial = tmp_path / "ages.csv"
    partial.write_text("\n".join(line for line in ages if not line.startswith(("21;", "23;", "28;", "29;"))))
    body = inpatient_body().replace(str(HIERARCHIES / "inpatient_age.csv"), str(partial))
    path = inpatient.write_config("patients", body + ReleaseSchemas("doc_pub", "doc_cat").section(drop='["idx"]'))
    code, doc, stderr = doctor(path)
    assert code == 1 and doc["status"] == "failed" and doc["passed"] is False
    found = statuses(doc)
    assert (
        found["source"],
        found["release columns"],
        found["hierarchy age"],
        found["hierarchy zip"],
        found["catalog"],
    ) == ("ok", "fail", "fail", "ok", "fail")
    assert "misses 4 of the column's 12 values (4 rows): '21' (1 row), '23' (1 row), '28' (1 row) and 1 more" in detail(
        doc, "hierarchy age"
    )
    assert "[release] names column(s) 'idx'" in detail(doc, "release columns")
    assert detail(doc, "catalog") == "no Veil catalog in schema 'doc_cat': run `veil init`"
    assert doc["error"] == error_line(stderr) and doc["error"].startswith("3 of ")
    assert "release columns, hierarchy age, catalog" in doc["error"]


def test_an_unreachable_database_fails_the_connection_line(tmp_path: Path) -> None:
    path = tmp_path / "veil.toml"
    path.write_text(
        '[source]\nurl_env = "VEIL_DEAD_URL"\ntable = "raw.x"\n'
        + inpatient_body()
        + ReleaseSchemas("pub", "cat").section()
    )
    dead = sa.make_url(PG_URL).set(port=1).render_as_string(hide_password=False)  # nothing listens on port 1
    code, doc, _ = doctor(path, env={"VEIL_DEAD_URL": dead})
    assert code == 1 and statuses(doc) == {"config": "ok", "connection": "fail"}
    assert "cannot connect to PostgreSQL" in detail(doc, "connection")
    assert doc["not_run"] == ["source", "hierarchies", "grants", "catalog"]
    broken = tmp_path / "broken.toml"
    broken.write_text("[source\n")
    code, doc, _ = doctor(broken)
    assert code == 1 and statuses(doc) == {"config": "fail"} and doc["not_run"][0] == "connection"


@pytest.fixture
def role(inpatient: Db) -> Iterator[str]:
    """A login role with no privileges at all (dropped afterwards, with what it owns or was granted)."""
    name = f"veil_doc_{uuid.uuid4().hex[:8]}"
    inpatient.execute(f'CREATE ROLE "{name}" LOGIN')
    try:
        yield name
    finally:
        inpatient.execute(f'DROP OWNED BY "{name}"', f'DROP ROLE "{name}"')


AS_ROLE = "VEIL_TEST_DOCTOR_URL"


def _as(db: Db, role: str, body: str) -> Path:
    """A config connecting as ``role`` (its URL in ``$VEIL_TEST_DOCTOR_URL``: run with ``_env(role)``)."""
    path = db.workdir / f"{role}.toml"
    path.write_text(f'[source]\nurl_env = "{AS_ROLE}"\ntable = "{db.schema}.patients"\n\n{body}', encoding="utf-8")
    return path


def _env(role: str) -> dict[str, str]:
    return {AS_ROLE: sa.make_url(PG_URL).set(username=role).render_as_string(hide_password=False)}


@postgres_only
def test_grants_a_role_lacks_are_named(inpatient: Db, role: str) -> None:
    """A role that may read the source but owns nothing: the publication schema (the admin's) lacks CREATE, the
    catalog schema cannot be created, the analyst cannot be granted USAGE (PostgreSQL would only warn)."""
    pub, cat, analyst = f"{inpatient.schema}_pub", f"{inpatient.schema}_cat", f"analyst_{role}"
    inpatient.execute(
        f'GRANT USAGE ON SCHEMA "{inpatient.schema}" TO "{role}"',
        f'GRANT SELECT ON "{inpatient.schema}".patients TO "{role}"',
        f'CREATE SCHEMA "{pub}"',
        f'GRANT USAGE ON SCHEMA "{pub}" TO "{role}"',
        f'CREATE ROLE "{analyst}"',
    )
    try:
        path = _as(
            inpatient,
            role,
            inpatient_body()
            + ReleaseSchemas(pub, cat).section()
            + f'grant_select_to = ["{analyst}", "nobody_{role}"]\n',
        )
        code, doc, _ = doctor(path, env=_env(role))
        found = statuses(doc)
        assert code == 1 and "role" not in found  # not a superuser
        assert (found["source"], found["source privileges"], found["database"]) == ("ok", "ok", "ok")
        assert found[f"schema {pub}"] == "fail" and f"GRANT CREATE ON SCHEMA {pub} TO {role}" in detail(
            doc, f"schema {pub}"
        )
        assert found[f"schema {cat}"] == "fail" and f"CREATE SCHEMA {cat} AUTHORIZATION {role}" in detail(
            doc, f"schema {cat}"
        )
        assert f"'nobody_{role}'" in detail(doc, "grant_select_to")
        path = _as(
            inpatient,
            role,
            inpatient_body() + ReleaseSchemas(pub, cat).section() + f'grant_select_to = ["{analyst}"]\n',
        )
        code, doc, _ = doctor(path, env=_env(role))
        assert statuses(doc)["grant_select_to"] == "fail"
        assert f"may not grant USAGE on schema {pub}" in detail(doc, "grant_select_to")
    finally:
        inpatient.execute(f'DROP SCHEMA IF EXISTS "{pub}" CASCADE', f'DROP ROLE IF EXISTS "{analyst}"')


@postgres_only
def test_the_documented_least_privilege_passes(inpatient: Db, role: str) -> None:
    """The grants of sql/least_privilege.sql (the role owns its two schemas, reads the source table): once
    `veil init` ran as that role, every check passes, without the superuser's warning."""
    pub, cat, analyst = f"{inpatient.schema}_pub", f"{inpatient.schema}_cat", f"analyst_{role}"
    inpatient.execute(
        f'GRANT USAGE ON SCHEMA "{inpatient.schema}" TO "{role}"',
        f'GRANT SELECT ON "{inpatient.schema}".patients TO "{role}"',
        f'CREATE SCHEMA "{cat}" AUTHORIZATION "{role}"',
        f'CREATE SCHEMA "{pub}" AUTHORIZATION "{role}"',
        f'CREATE ROLE "{analyst}"',
    )
    try:
        path = _as(
            inpatient,
            role,
            inpatient_body() + ReleaseSchemas(pub, cat).section() + f'grant_select_to = ["{analyst}"]\n',
        )
        assert run_veil("init", "--config", str(path), env=_env(role)).returncode == 0
        code, doc, stderr = doctor(path, env=_env(role))
        assert code == 0, (stderr, doc)
        assert set(statuses(doc).values()) == {"ok"} and "role" not in statuses(doc)
    finally:
        inpatient.execute(
            f'DROP SCHEMA IF EXISTS "{pub}" CASCADE',
            f'DROP SCHEMA IF EXISTS "{cat}" CASCADE',
            f'DROP ROLE IF EXISTS "{analyst}"',
        )
