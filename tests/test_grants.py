"""Grants on PostgreSQL (issue 35): the administrator's statements of ``sql/least_privilege.sql`` — run as
printed, with psql — are exactly what Veil needs, and with them ``grant_select_to`` lets the analyst read
every published view and nothing else (not the source, not the catalog, not the rows tables); a grant
PostgreSQL does not apply (it only *warns* "no privileges were granted" when Veil's role does not own the
schema) fails the release with one line naming the privilege, and nothing is published.  The how-to page
quotes the file verbatim."""

from __future__ import annotations

import re
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.conftest import IN_CI, PG_URL, Db, ReleaseSchemas, error_line, inpatient_body, run_veil

ROOT = Path(__file__).resolve().parent.parent
SQL = ROOT / "sql" / "least_privilege.sql"
PAGE = ROOT / "docs" / "how-to" / "postgresql-least-privilege.md"
postgres_only = pytest.mark.parametrize("db", ["postgres"], indirect=True)  # roles and grants: PostgreSQL only


def psql(*args: str) -> subprocess.CompletedProcess[str]:
    """Run psql as the tests' superuser (``VEIL_TEST_PG_URL`` as a libpq URL), stopping at the first error."""
    exe = shutil.which("psql")
    if exe is None:
        if IN_CI:
            pytest.fail("psql is required in CI (the administrator's SQL is run as documented)")
        pytest.skip("psql is not installed")
    url = sa.make_url(PG_URL).set(drivername="postgresql").render_as_string(hide_password=False)
    res = subprocess.run(
        [exe, url, "-X", "-q", "-v", "ON_ERROR_STOP=1", *args], capture_output=True, text=True, timeout=60
    )
    assert res.returncode == 0, res.stderr
    return res


def as_role(role: str) -> str:
    return sa.make_url(PG_URL).set(username=role).render_as_string(hide_password=False)


@pytest.fixture
def setup(inpatient: Db) -> Iterator[tuple[Path, ReleaseSchemas, str, str]]:
    """The inpatient table, a config publishing it with ``grant_select_to`` an analyst, unique publication and
    catalog schemas, Veil's role (created by each test) and the analyst's login role; the schemas and roles are
    dropped afterwards with everything the roles own or were granted."""
    tag = uuid.uuid4().hex[:8]
    veil, analyst = f"veil_lp_{tag}", f"analyst_{tag}"
    schemas = ReleaseSchemas(f"{inpatient.schema}_pub", f"{inpatient.schema}_cat")
    path = inpatient.write_config(
        "patients", inpatient_body() + schemas.section() + f'grant_select_to = ["{analyst}"]\nseries = "off"\n'
    )
    inpatient.execute(f'CREATE ROLE "{analyst}" LOGIN')
    try:
        yield path, schemas, veil, analyst
    finally:
        inpatient.execute(*(f'DROP SCHEMA IF EXISTS "{s}" CASCADE' for s in (schemas.out, schemas.cat)))
        for role in (veil, analyst):
            if inpatient.query(f"SELECT count(*) FROM pg_roles WHERE rolname = '{role}'") == [(1,)]:
                inpatient.execute(f'DROP OWNED BY "{role}"', f'DROP ROLE "{role}"')


def relations(db: Db, schema: str, kind: str) -> list[str]:
    return [
        n
        for (n,) in db.query(
            f"SELECT table_name FROM information_schema.tables WHERE table_schema = "
            f"'{schema}' AND table_type = '{kind}' ORDER BY table_name"
        )
    ]


def reads(url: str, relation: str) -> str | None:
    """``None`` when ``relation`` can be read with ``url``, else PostgreSQL's error (its first line)."""
    eng = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with eng.connect() as c:
            c.execute(sa.text(f"SELECT * FROM {relation} LIMIT 1")).all()
        return None
    except sa.exc.DBAPIError as exc:
        return str(exc.orig).splitlines()[0]
    finally:
        eng.dispose()


@postgres_only
def test_the_documented_sql_lets_the_analyst_read_every_view_and_nothing_else(db: Db, setup) -> None:
    path, schemas, veil, analyst = setup
    out, cat = schemas.out, schemas.cat
    psql(
        "-v",
        f"veil_role={veil}",
        "-v",
        f"source_schema={db.schema}",
        "-v",
        "source_table=patients",
        "-v",
        f"catalog_schema={cat}",
        "-v",
        f"publish_schema={out}",
        "-f",
        str(SQL),
    )
    database = sa.make_url(PG_URL).database
    assert db.query(f"SELECT has_database_privilege('{veil}', '{database}', 'CREATE')") == [(False,)]
    env = {"VEIL_TEST_PG_URL": as_role(veil)}
    # a second version (--force), into the schema the first one filled
    for args in (["init"], ["release"], ["release", "--force"]):
        res = run_veil(*args, "--config", str(path), env=env)
        assert res.returncode == 0, res.stderr

    views = relations(db, out, "VIEW")
    assert {
        "inpatient",
        "inpatient_blocks",
        "inpatient_releases",
        "inpatient_v1",
        "inpatient_v2",
        "inpatient_v2_blocks",
        "inpatient_dim_zip",
        "inpatient_v2_dim_age",
    } <= set(views), views
    analyst_url = as_role(analyst)
    assert {v: reads(analyst_url, f'"{out}"."{v}"') for v in views} == {v: None for v in views}
    assert len(db.query(f'SELECT * FROM "{out}".inpatient')) == 12
    refused = [
        f'"{db.schema}".patients',
        *(f'"{out}"."{t}"' for t in relations(db, out, "BASE TABLE")),
        *(f'"{cat}"."{t}"' for t in relations(db, cat, "BASE TABLE")),
    ]
    assert f'"{out}"."inpatient_rows"' in refused and f'"{cat}"."releases"' in refused, refused
    for relation in refused:
        error = reads(analyst_url, relation)
        assert error is not None and "permission denied" in error, (relation, error)


@postgres_only
def test_a_grant_postgresql_does_not_apply_fails_the_release_naming_the_privilege(db: Db, setup) -> None:
    """The setup the README documented before: the administrator creates both schemas and gives Veil's role
    USAGE and CREATE on them.  Veil's GRANT USAGE on the publication schema is then only a warning."""
    path, schemas, veil, analyst = setup
    out, cat = schemas.out, schemas.cat
    db.execute(
        f'CREATE ROLE "{veil}" LOGIN',
        f'GRANT USAGE ON SCHEMA "{db.schema}" TO "{veil}"',
        f'GRANT SELECT ON "{db.schema}".patients TO "{veil}"',
        f'CREATE SCHEMA "{out}"',
        f'CREATE SCHEMA "{cat}"',
        f'GRANT USAGE, CREATE ON SCHEMA "{out}" TO "{veil}"',
        f'GRANT USAGE, CREATE ON SCHEMA "{cat}" TO "{veil}"',
    )
    env = {"VEIL_TEST_PG_URL": as_role(veil)}
    assert run_veil("init", "--config", str(path), env=env).returncode == 0
    res = run_veil("release", "--config", str(path), env=env)
    line = error_line(res.stderr)
    assert res.returncode == 1, res.stderr
    assert f"PostgreSQL did not grant role '{analyst}' USAGE on schema '{out}'" in line, line
    assert f"'{veil}' neither owns schema '{out}'" in line and "postgresql-least-privilege" in line, line
    assert relations(db, out, "VIEW") == [] and relations(db, out, "BASE TABLE") == []  # nothing published
    status = db.query(f'SELECT status, error FROM "{cat}".releases')
    assert [s for s, _ in status] == ["failed"] and "USAGE on schema" in status[0][1]

    db.execute(f'GRANT USAGE ON SCHEMA "{out}" TO "{analyst}"')  # the other way out the line names
    res = run_veil("release", "--config", str(path), env=env)
    assert res.returncode == 0, res.stderr
    assert reads(as_role(analyst), f'"{out}".inpatient') is None


def test_the_how_to_page_quotes_the_administrators_sql_verbatim() -> None:
    blocks = re.findall(r"```sql\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    assert blocks and blocks[0] == SQL.read_text(encoding="utf-8")
