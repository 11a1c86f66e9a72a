"""Spark SQL compilation and the Spark backend's failure lines — no cluster needed.

The node statements compiled for Spark are checked against ``tests/snapshots/queries.spark.sql``; the
snapshot is written only on purpose (``VEIL_UPDATE_SNAPSHOTS=1``), reviewed like code."""

from __future__ import annotations

import doctest
import os
import socket
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.conftest import run_veil
from tests.test_query_snapshots import DISTANCES, DUCKDB_ONLY, HOSTILE, statements
from veil import queries as q
from veil.backends import open_backend
from veil.errors import BackendError
from veil.queries import spark as spark_sql
from veil.queries.spark import DIALECT, CacheTable, compile_sql, kept_rows

SNAPSHOT = Path(__file__).resolve().parent.parent / "snapshots" / "queries.spark.sql"


def render() -> str:
    stmts = dict(statements())
    for name in ("node_packed_for_postgresql", "columns_of", "columns_of_default_schema", *DUCKDB_ONLY, *DISTANCES):
        stmts.pop(name)  # PostgreSQL's transport; information_schema (Spark reads its catalog instead); DuckDB's;
        #                  the distance tests (Spark's backend runs no block tests)
    raw = sa.table("veil_cells", sa.column("q0"), sa.column("s0"), sa.column("x0"))
    stmts["delete_from_working_view_keeps"] = kept_rows(sa.delete(raw).where(sa.or_(raw.c.q0.is_(None), raw.c.x0 == 1)))
    stmts["cache_working_view"] = CacheTable(q.BASE)
    stmts["sensitive_domain_ddl"] = sa.schema.CreateTable(q.sensitive_domain_table(0, sa.Numeric(10, 2)))
    parts = [f"-- {name}\n{str(compile_sql(stmt)).strip()};\n" for name, stmt in stmts.items()]
    return "\n".join(parts)


def test_compiled_spark_sql_matches_snapshot() -> None:
    text = render()
    if os.environ.get("VEIL_UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(text, encoding="utf-8")
    assert SNAPSHOT.exists(), "no Spark snapshot: create it on purpose with VEIL_UPDATE_SNAPSHOTS=1 and review it"
    assert text == SNAPSHOT.read_text(encoding="utf-8")


def test_identifiers_are_backtick_quoted_by_the_dialect() -> None:
    text = render()
    assert '`x"; DROP TABLE t; --`' in text and "`raw`.`Patients`" in text and "`Zip Code`" in text
    assert DIALECT.identifier_preparer.format_table(sa.table("a`b", schema="s`")) == "`s```.`a``b`"
    assert '"' not in text.replace(HOSTILE, "")  # no double-quoted identifiers leak in


def test_values_are_named_parameters_never_inlined() -> None:
    t = sa.table("veil_base_raw", sa.column("q0"), sa.column("n"))
    compiled = compile_sql(sa.select(t.c.n).where(t.c.q0 == "x'; DROP TABLE t; --", t.c.n > 3))
    assert "DROP" not in str(compiled) and ":q0_1" in str(compiled) and ":n_1" in str(compiled)
    assert compiled.params == {"q0_1": "x'; DROP TABLE t; --", "n_1": 3}
    odd = compile_sql(sa.select(sa.bindparam("a b-c", 1), sa.bindparam("é:x", 2)))
    assert ":a_b_c" in str(odd) and ":__x" in str(odd) and set(odd.params) == {"a_b_c", "__x"}


def test_view_literals_are_escaped_for_spark() -> None:
    view = q.CreateView(sa.table("v", schema="published"), sa.select(sa.literal("it's a \\ test").label("x")))
    assert str(compile_sql(view)) == "CREATE OR REPLACE VIEW `published`.`v` AS SELECT 'it\\'s a \\\\ test' AS `x`"


def test_types_are_spark_types() -> None:
    types = [
        sa.Text(),
        sa.String(10),
        sa.Integer(),
        sa.BigInteger(),
        sa.SmallInteger(),
        sa.Float(),
        sa.Double(),
        sa.REAL(),
        sa.Numeric(10, 2),
        sa.Date(),
        sa.DateTime(),
        sa.Boolean(),
    ]
    assert [DIALECT.type_compiler_instance.process(t) for t in types] == [
        "STRING",
        "STRING",
        "INT",
        "BIGINT",
        "SMALLINT",
        "DOUBLE",
        "DOUBLE",
        "FLOAT",
        "DECIMAL(10, 2)",
        "DATE",
        "TIMESTAMP",
        "BOOLEAN",
    ]


def test_docstring_examples() -> None:
    result = doctest.testmod(spark_sql, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("url", ["sc://", "sc://host:port", "sc//host:15002"])
def test_bad_url_is_one_line(url: str) -> None:
    with pytest.raises(BackendError, match="not a Spark Connect URL|unsupported database|not a valid"):
        open_backend(url)


def test_url_parts() -> None:
    from veil.backends.spark import _address

    assert _address("sc://127.0.0.1:15002") == ("127.0.0.1", 15002)
    assert _address("sc://spark.example.com") == ("spark.example.com", 15002)
    assert _address("sc://h:443/;token=secret;use_ssl=true") == ("h", 443)
    assert _address("sc://[::1]:15003") == ("::1", 15003)


def test_missing_extra_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyspark.sql.connect", None)
    monkeypatch.setitem(sys.modules, "pyspark.sql.connect.session", None)
    with pytest.raises(BackendError, match=r"the Spark backend needs the spark extra \(pip install 'veil\[spark\]'\)"):
        open_backend("sc://127.0.0.1:15002")


def test_without_pyarrow_the_module_loads_and_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's test command installs no spark extra: the backend module still imports (its URL checks run)
    and a session asks for the extra in one line, whether pyarrow is installed here or not."""
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # ``import pyarrow`` raises ImportError
    monkeypatch.delitem(sys.modules, "veil.backends.spark", raising=False)
    from veil.backends.spark import _address

    assert _address("sc://127.0.0.1") == ("127.0.0.1", 15002)
    with pytest.raises(BackendError, match=r"the Spark backend needs the spark extra \(pip install 'veil\[spark\]'\)"):
        open_backend("sc://127.0.0.1:15002")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unreachable_server_is_one_line_and_fast(tmp_path: Path) -> None:
    pytest.importorskip("pyspark.sql.connect.session", reason="the spark extra is not installed")
    url = f"sc://127.0.0.1:{_free_port()}/;token=secret"
    with pytest.raises(BackendError, match=r"cannot connect to Spark at sc://127\.0\.0\.1:\d+: .*refused") as info:
        with open_backend(url).session():
            pass
    assert "secret" not in str(info.value)
    (tmp_path / "veil.toml").write_text(
        '[source]\nurl_env = "SPARK_URL"\ntable = "raw.t"\n'
        '[[quasi_identifiers]]\ncolumn = "a"\nhierarchy = { suppress = true }\n'
        '[[models]]\ntype = "k-anonymity"\nk = 2\n'
    )
    started = time.monotonic()
    res = run_veil("counts", "--config", str(tmp_path / "veil.toml"), env={"SPARK_URL": url}, timeout=120)
    assert res.returncode == 1 and time.monotonic() - started < 60
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "cannot connect to Spark" in lines[0] and "Traceback" not in res.stderr


def test_the_source_fingerprint_hashes_rows_with_xxhash64() -> None:
    """The row fingerprint's Spark SQL (``queries.source.RowHash``, compiled by ``veil.queries.spark``)."""
    src = q.source_table("raw", "Patients", {"Zip Code": sa.Text(), "age": sa.Integer()})
    sql = str(compile_sql(q.fingerprint(src, ["Zip Code", "age"])))
    assert "coalesce(sum(CAST(xxhash64(`raw`.`Patients`.`Zip Code`, `raw`.`Patients`.`age`) AS DECIMAL(38, 0)))" in sql


def test_a_stopped_run_drops_its_views_when_the_server_is_still_busy(monkeypatch: pytest.MonkeyPatch) -> None:
    """``close`` after a signal: ``interruptAll`` returns before the server has wound down, and a drop sent then may
    fail; it is tried again, so the working view's cached rows do not outlive the run (every view dropped, the
    session stopped), and a view that cannot be dropped does not keep the others or the session alive."""
    from veil.backends import spark as backend

    class Catalog:
        def __init__(self, failing: dict[str, int]) -> None:
            self.failing, self.dropped = failing, []

        def dropTempView(self, name: str) -> bool:  # noqa: N802 (pyspark's name)
            if self.failing.get(name, 0) > 0:
                self.failing[name] -= 1
                raise RuntimeError("INVALID_HANDLE.OPERATION_ABANDONED")
            self.dropped.append(name)
            return True

    class Client:
        def __init__(self, failing: dict[str, int]) -> None:
            self.catalog, self.calls = Catalog(failing), []

        def interruptAll(self) -> list[str]:  # noqa: N802
            self.calls.append("interruptAll")
            return []

        def stop(self) -> None:
            self.calls.append("stop")

    client = Client({"veil_base_r1": 1, "veil_dim_0_r1": 99})
    session = backend.SparkSQLSession(object(), client)  # type: ignore[arg-type]
    session.working = {"veil_base", "veil_dim_0", "veil_counts"}
    session.renamed.update(
        {"veil_base": "veil_base_r1", "veil_dim_0": "veil_dim_0_r1", "veil_counts": "veil_counts_r1"}
    )
    monkeypatch.setattr(backend, "DROP_PAUSE", 0.0)
    session.close()
    assert client.catalog.dropped == ["veil_base_r1", "veil_counts_r1"]  # the base on its second try
    assert client.catalog.failing["veil_dim_0_r1"] == 99 - backend.DROP_TRIES
    assert client.calls == ["interruptAll", "stop"] and session.working == set()
