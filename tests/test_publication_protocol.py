"""The backend owns its publication (issue 37): ``Backend.publication`` names one protocol of
``veil.release.publication.PUBLICATIONS``, the release job and the history commands only call its steps, every
capability flag a backend declares is read somewhere, and the row fingerprint is a compiler hook per dialect — no
string naming the backend is branched on by callers.  No database needed."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import sqlalchemy as sa

from tests.test_query_snapshots import DIALECTS
from veil import queries as q
from veil.backends.base import Backend
from veil.errors import ConfigError, ReleaseError
from veil.queries.source import RowHash
from veil.registry import BACKENDS
from veil.release import memberstore
from veil.release.publication import PUBLICATIONS, Publication, check_grants, publication_for

ENGINE = Path(__file__).resolve().parent.parent / "engine"
# what a caller may read of a backend: its name for messages, its URL, how a driver's error reads
NOT_FLAGS = {"name", "display_url", "interruption", "busy", "url"}


def test_every_backend_names_a_registered_protocol() -> None:
    declared = PUBLICATIONS.declared()
    assert set(declared) == {"transactional", "autocommit"} == set(PUBLICATIONS.load_all())
    protocols = {scheme: cls.publication for scheme, cls in BACKENDS.load_all().items()}
    assert protocols == {
        "duckdb": "transactional",
        "postgresql": "transactional",
        "postgres": "transactional",
        "sc": "autocommit",
    }
    for name in set(protocols.values()):
        assert issubclass(PUBLICATIONS.get(name), Publication)
    assert PUBLICATIONS.get("transactional").staged_ledger and not PUBLICATIONS.get("autocommit").staged_ledger


def _backend_reads(path: Path) -> list[tuple[int, str]]:
    """Every ``<x>.backend.<attr>`` and ``backend.<attr>`` read in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute):
            owner = node.value
            named = (isinstance(owner, ast.Attribute) and owner.attr == "backend") or (
                isinstance(owner, ast.Name) and owner.id == "backend"
            )
            if named and node.attr not in NOT_FLAGS:
                found.append((node.lineno, node.attr))
    return found


PIPELINE = ["job.py", "publishing.py", "seriesstep.py", "candidate.py", "nodechoice.py", "stops.py", "history.py"]


@pytest.mark.parametrize("module", PIPELINE)
def test_the_release_pipeline_reads_no_backend_flag(module: str) -> None:
    """The release job (``release/job.py`` and the modules of its steps) and ``release/history.py`` call the
    publication's steps and read no flag (the narrowest code type of the candidate's cells is a compiler hook,
    ``queries.nodes.TinyInteger``)."""
    reads = {attr for _line, attr in _backend_reads(ENGINE / "release" / module)}
    assert reads == set()


def _flags() -> dict[str, Any]:
    return {
        n: v
        for n, v in vars(Backend).items()
        if not n.startswith("_") and isinstance(v, bool | int | float | str) and n not in NOT_FLAGS
    }


def test_every_flag_a_backend_declares_is_read() -> None:
    """A flag nobody reads is a promise nobody keeps (``temp_schema``, ``information_schema``, ``transactions``,
    ``temp_tables``, ``lock_tables``, ``fingerprint_style`` were removed)."""
    reads: dict[str, set[str]] = {}
    for path in ENGINE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                reads.setdefault(node.attr, set()).add(str(path.relative_to(ENGINE)))
    flags = _flags()
    assert "publication" in flags and "transactions" not in flags and "fingerprint_style" not in flags
    assert {f for f in flags if not reads.get(f)} == set()
    chosen = {
        str(p.relative_to(ENGINE))
        for p in ENGINE.rglob("*.py")
        if any(attr == "publication" for _line, attr in _backend_reads(p))
    }
    assert chosen == {"release/publication.py"}  # the protocol is chosen in one place


def test_the_row_fingerprint_is_compiled_per_dialect() -> None:
    src = q.source_table("raw", "people", {"zip": sa.Text(), "age": sa.Integer()})
    sql = {name: str(q.fingerprint(src, ["zip", "age"]).compile(dialect=d)) for name, d in DIALECTS.items()}
    assert "hash(raw.people.zip, raw.people.age)" in sql["duckdb"] and "hashtextextended" not in sql["duckdb"]
    assert "hashtextextended(CAST((raw.people.zip, raw.people.age) AS TEXT)" in sql["postgresql"]
    assert all("AS NUMERIC(38, 0)" in s for s in sql.values())
    with pytest.raises(
        sa.exc.CompileError,
        match=r"no row hash for dialect 'sqlite': register one with "
        r"@compiles\(RowHash, 'sqlite'\)",
    ):
        str(RowHash(src.c.zip).compile(dialect=sa.create_engine("sqlite://").dialect))


def _publication(protocol: str, **flags: Any) -> Publication:
    backend = SimpleNamespace(**{"name": "Warehouse", "publication": protocol, "grants": False, **flags})
    session: Any = SimpleNamespace(backend=backend)
    config: Any = SimpleNamespace(
        release=SimpleNamespace(schema="published", name="people", catalog_schema="veil"),
        attributes=("zip",),
        sensitive=("disease",),
        path="veil.toml",
    )
    return publication_for(session, SimpleNamespace(), config)  # type: ignore[arg-type]


def test_the_protocol_decides_what_a_backend_cannot_do() -> None:
    transactional = _publication("transactional")
    autocommit = _publication("autocommit")
    assert type(transactional).__name__ == "TransactionalPublication" and transactional.schema == "published"
    transactional.rehearse()  # the release's transaction, rolled back
    with pytest.raises(ReleaseError, match="--dry-run: Warehouse commits every statement on its own"):
        autocommit.rehearse()
    # a cohort series' members: changed in the run's transaction, or a table per version its catalog row commits
    assert transactional.member_store is memberstore.IN_PLACE and autocommit.member_store is memberstore.GENERATIONS
    check_grants(autocommit.session, [])
    with pytest.raises(ConfigError, match="grant_select_to is set, but Warehouse has no roles to grant to"):
        check_grants(autocommit.session, ["analyst"])
