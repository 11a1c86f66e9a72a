"""``veil doctor``: everything a release needs, checked at once and reported one line per check — ``ok``,
``warn`` (worth knowing, does not stop a release) or ``fail`` (a release would fail, or publish something a
reader cannot read).  Read-only: it writes nothing anywhere.

Checked, in order (a check that cannot run because an earlier one failed is listed as not run):

- ``config``: the file parses (hierarchies are checked against the source below);
- ``connection``: the database accepts a connection (``--wait`` waits for a DuckDB file another process holds);
- ``source``: the source table and every column the config names exist, with types Veil can read;
- ``hierarchy <column>``: each hierarchy covers every value of its column (``veil.hierarchycheck``);
- ``database`` (PostgreSQL): the role may create temporary tables (every search does); ``schema <name>``: it
  may use and create in the release's and the catalog's schemas, or create them; ``source privileges``: it may read the source table; ``grant_select_to``: the roles exist and
  the role may grant USAGE on the release's schema (else PostgreSQL grants nothing, with only a warning);
  ``role``: a warning when it is a superuser (every privilege check passes for one);
- ``catalog``: ``veil init`` created the catalog at the revision this Veil needs.

>>> d = Diagnosis((Check("config", OK, "veil.toml"), Check("catalog", FAIL, "no Veil catalog in schema 'veil'")),
...               not_run=())
>>> d.passed, d.summary()
(False, '1 of 2 checks failed: catalog')
>>> print("\\n".join(d.lines()))
ok    config: veil.toml
fail  catalog: no Veil catalog in schema 'veil'
1 of 2 checks failed: catalog
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veil import catalog, lockwait
from veil import config as cfg
from veil.backends import open_backend
from veil.backends.base import Session
from veil.config import Config
from veil.hierarchycheck import HierarchyCheck
from veil.hierarchycheck import check as coverage
from veil.errors import VeilError
from veil.queries import doctor as qd
from veil.warehouse import Warehouse, value_text

OK, WARN, FAIL = "ok", "warn", "fail"
SHOWN_VALUES = 3  # missing values a hierarchy's line names (``veil hierarchy --check`` lists all)


@dataclass(frozen=True)
class Check:
    """One check: its name, ``ok`` / ``warn`` / ``fail`` and what was found, in one line."""

    name: str
    status: str
    detail: str

    def document(self) -> dict[str, str]:
        return {"check": self.name, "status": self.status, "detail": self.detail}

    def line(self) -> str:
        return f"{self.status:<5} {self.name}: {self.detail}"


@dataclass(frozen=True)
class Diagnosis:
    """Every check made, and the names of those that could not run (an earlier check failed)."""

    checks: tuple[Check, ...]
    not_run: tuple[str, ...] = ()

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.status == FAIL]

    @property
    def passed(self) -> bool:
        return not self.failed

    def summary(self) -> str:
        warned = sum(c.status == WARN for c in self.checks)
        warnings = f" ({warned} warning{'s' * (warned != 1)})" if warned else ""
        if self.passed:
            return f"all {len(self.checks)} checks passed{warnings}"
        later = f"; not run: {', '.join(self.not_run)}" if self.not_run else ""
        return (
            f"{len(self.failed)} of {len(self.checks)} checks failed: "
            f"{', '.join(c.name for c in self.failed)}{warnings}{later}"
        )

    def lines(self) -> list[str]:
        return [c.line() for c in self.checks] + [self.summary()]

    def document(self) -> dict[str, Any]:
        """The JSON of ``veil doctor --json``: ``status`` ok or failed (with ``error``: the summary)."""
        return {
            "status": "ok" if self.passed else "failed",
            **({} if self.passed else {"error": self.summary()}),
            "passed": self.passed,
            "failed": len(self.failed),
            "warnings": sum(c.status == WARN for c in self.checks),
            "checks": [c.document() for c in self.checks],
            "not_run": list(self.not_run),
        }


AFTER_CONNECTION = ("source", "hierarchies", "grants", "catalog")


def diagnose(path: Path, wait: float = 0.0) -> Diagnosis:
    """Run every check on the config at ``path``; ``wait``: seconds to wait for a busy DuckDB file."""
    try:
        config = cfg.load(path, check_hierarchies=False)  # each hierarchy is checked below, on its own line
    except VeilError as exc:
        return Diagnosis((Check("config", FAIL, str(exc)),), ("connection", *AFTER_CONNECTION))
    checks = [Check("config", OK, _about(path, config))]
    try:
        with _connected(config, wait) as session:
            checks.append(Check("connection", OK, _connection(session)))
            return _on(session, config, checks)
    except VeilError as exc:  # connecting failed (a check that fails once connected says so itself)
        return Diagnosis((*checks, Check("connection", FAIL, str(exc))), AFTER_CONNECTION)


@contextmanager
def _connected(config: Config, wait: float) -> Iterator[Session]:
    backend = open_backend(config.source.resolved_url())

    def attempt() -> tuple[Any, Session]:
        ctx = backend.session()
        return ctx, ctx.__enter__()

    ctx, session = lockwait.retrying(attempt, wait)
    try:
        yield session
    finally:
        ctx.__exit__(None, None, None)


def _on(session: Session, config: Config, checks: list[Check]) -> Diagnosis:
    """The checks that need a connection: a source that cannot be read stops the hierarchies' checks."""
    source, columns = _source(session, config)
    checks.append(source)
    not_run: tuple[str, ...] = ()
    if columns is None:
        not_run = ("hierarchies",)
    else:
        checks += _release_columns(config, columns)
        checks += [_hierarchy(h) for h in coverage(session, config).checks]
    try:
        checks += _grants(session, config, source.status != FAIL)
    except VeilError as exc:  # the database refused to say (a catalog it does not let the role read)
        checks.append(Check("grants", FAIL, str(exc)))
    try:
        checks.append(_catalog(session, config))
    except VeilError as exc:
        checks.append(Check("catalog", FAIL, str(exc)))
    return Diagnosis(tuple(checks), not_run)


def _about(path: Path, config: Config) -> str:
    release = f"release {config.release.name!r}" if config.release else "no [release] table"
    return (
        f"{path}: {len(config.quasi_identifiers)} quasi-identifier(s), {len(config.sensitive)} sensitive "
        f"column(s), {len(config.models)} model(s), {release}"
    )


def _connection(session: Session) -> str:
    version = getattr(session.dialect, "server_version_info", None)  # DuckDB's dialect answers PostgreSQL's
    postgres = session.dialect.name == "postgresql"
    shown = f" (server {'.'.join(map(str, version))})" if version and postgres else ""
    return f"{session.backend.name} at {session.backend.display_url}{shown}"


def _source(session: Session, config: Config) -> tuple[Check, dict[str, Any] | None]:
    """The source table and the columns the models read; its columns, ``None`` when it cannot be read."""
    wh = Warehouse(session, config.source, config.quasi_identifiers, tuple(config.sensitive))
    try:
        columns = wh.inspect()
    except VeilError as exc:
        return Check("source", FAIL, str(exc)), None
    return Check(
        "source",
        OK,
        f"table {config.source.qualified} has {len(columns)} columns, among them every "
        "quasi-identifier and sensitive column",
    ), columns


def _release_columns(config: Config, columns: dict[str, Any]) -> list[Check]:
    rel = config.release
    if rel is None or not (rel.keep_columns or rel.drop_columns):
        return []
    missing = [c for c in (*rel.keep_columns, *rel.drop_columns) if c not in columns]
    if missing:
        return [
            Check(
                "release columns",
                FAIL,
                f"[release] names column(s) {', '.join(map(repr, missing))} that "
                f"source table {config.source.qualified} does not have",
            )
        ]
    return [Check("release columns", OK, "every column [release] keeps or drops exists")]


def _hierarchy(h: HierarchyCheck) -> Check:
    name, spec = f"hierarchy {h.target.column}", f"{h.target.spec.describe()} ({h.target.role})"
    if h.error is not None:
        return Check(name, FAIL, f"{spec}: {h.error}")
    if h.missing:
        listed = ", ".join(f"{value_text(v)!r} ({n} row{'s' * (n != 1)})" for v, n in h.missing[:SHOWN_VALUES])
        more = f" and {len(h.missing) - SHOWN_VALUES} more" if len(h.missing) > SHOWN_VALUES else ""
        return Check(
            name,
            FAIL,
            f"{spec}: misses {len(h.missing)} of the column's {h.source_values} values "
            f"({h.missing_rows} rows): {listed}{more}; `veil hierarchy --check` lists them all",
        )
    return Check(name, OK, f"{spec}: height {h.height}, covers all {h.source_values} values of the column")


def _catalog(session: Session, config: Config) -> Check:
    schema = config.catalog_schema
    if config.release is None:
        return Check(
            "catalog", WARN, "no [release] table: search, check, counts and audit need no catalog; a release does"
        )
    found = catalog.revision(session, schema)
    if found is None:
        return Check("catalog", FAIL, f"no Veil catalog in schema {schema!r}: run `veil init`")
    if found != catalog.HEAD:
        return Check(
            "catalog",
            FAIL,
            f"the catalog in schema {schema!r} is at revision {found}, this Veil needs "
            f"{catalog.HEAD}: run `veil init` to upgrade it",
        )
    return Check("catalog", OK, f"schema {schema!r} at revision {found} (current)")


def _grants(session: Session, config: Config, source_found: bool) -> list[Check]:
    """PostgreSQL: what the role may do in the schemas a release writes, on the source, and for the readers."""
    rel = config.release
    roles = list(rel.grant_select_to) if rel else []
    if not session.backend.grants:
        if roles:
            return [
                Check(
                    "grant_select_to",
                    FAIL,
                    f"[release] grant_select_to names {roles}, but {session.backend.name} has no roles to grant to",
                )
            ]
        return []
    user, superuser, create_db, temporary, database = session.rows(qd.whoami(), "reading the role")[0]
    checks = [
        Check("database", OK, f"{user} may create temporary tables in database {database} (the search's)")
        if temporary
        else Check(
            "database",
            FAIL,
            f"{user} may not create temporary tables in database {database}, which every "
            f"search needs: an admin runs GRANT TEMPORARY ON DATABASE {database} TO {user}",
        )
    ]
    checks += (
        []
        if rel is None
        else [
            _schema(session, s, str(user), bool(create_db), str(database))
            for s in dict.fromkeys((rel.schema, rel.catalog_schema))
        ]
    )
    if source_found:
        checks.append(_reads_source(session, config, str(user)))
    if roles:
        checks.append(_readers(session, rel.schema if rel else "", roles, str(user)))
    if superuser:
        checks.append(
            Check(
                "role",
                WARN,
                f"{user} is a superuser, for whom every privilege check passes: run "
                "releases as a least-privilege role to know the grants suffice",
            )
        )
    return checks


def _schema(session: Session, schema: str, user: str, create_db: bool, database: str) -> Check:
    exists, usage, create, _grantable = session.rows(qd.schema_privileges(schema), f"reading schema {schema!r}")[0]
    name = f"schema {schema}"
    if not exists:
        if create_db:
            return Check(name, OK, f"does not exist yet; {user} may create it (CREATE on database {database})")
        return Check(
            name,
            FAIL,
            f"does not exist and {user} may not create it (no CREATE on database {database}): "
            f"an admin runs CREATE SCHEMA {schema} AUTHORIZATION {user}",
        )
    lacking = [p for p, held in (("USAGE", usage), ("CREATE", create)) if not held]
    if lacking:
        return Check(
            name,
            FAIL,
            f"{user} lacks {' and '.join(lacking)} on it: an admin runs GRANT "
            f"{', '.join(lacking)} ON SCHEMA {schema} TO {user}",
        )
    return Check(name, OK, f"{user} may use it and create in it")


def _reads_source(session: Session, config: Config, user: str) -> Check:
    src = config.source
    if session.scalar(qd.table_select(src.schema, src.table), "reading the source's privileges"):
        return Check("source privileges", OK, f"{user} may read {src.qualified}")
    return Check(
        "source privileges",
        FAIL,
        f"{user} may not SELECT from {src.qualified}: an admin runs GRANT SELECT ON {src.qualified} TO {user}",
    )


def _readers(session: Session, schema: str, roles: list[str], user: str) -> Check:
    found = {r for (r,) in session.rows(qd.roles_found(roles), "looking up roles")}
    missing = [r for r in roles if r not in found]
    if missing:
        return Check(
            "grant_select_to",
            FAIL,
            f"role(s) {', '.join(map(repr, missing))} do not exist: create them, "
            "or remove them from [release] grant_select_to",
        )
    exists, _usage, _create, grantable = session.rows(qd.schema_privileges(schema), f"reading schema {schema!r}")[0]
    if exists and not grantable:
        return Check(
            "grant_select_to",
            FAIL,
            f"{user} may not grant USAGE on schema {schema} (it neither owns it nor "
            "holds USAGE WITH GRANT OPTION), and PostgreSQL would grant nothing "
            f"with only a warning: an admin runs GRANT USAGE ON SCHEMA {schema} TO "
            f"{', '.join(roles)}, or ALTER SCHEMA {schema} OWNER TO {user}",
        )
    return Check(
        "grant_select_to",
        OK,
        f"{', '.join(roles)} exist; {user} may grant them USAGE on schema {schema} and SELECT on the views it creates",
    )
