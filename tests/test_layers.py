"""The layers stay apart: checkers and the search never import SQLAlchemy or the SQL modules; only
``queries`` builds SQL; only ``backends`` call the driver or execute a statement; nothing imports upward; no
import cycles; no function over 60 lines; no module over 800.  The last five rules are ``.ci/architecture.py``'s
analysis (the command prints the same lists), each also shown to fail on a bad snippet."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "engine"


def _architecture() -> ModuleType:
    spec = importlib.util.spec_from_file_location("architecture", ROOT / ".ci" / "architecture.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["architecture"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


arch = _architecture()

PURE = {"errors", "lattice", "counts", "distribution", "hierarchy", "metrics", "privacy", "search", "schedule"}
FORBIDDEN_IN_PURE = {
    "sqlalchemy",
    "duckdb",
    "psycopg",
    "veil.queries",
    "veil.backends",
    "veil.warehouse",
    "veil.release",
    "veil.run",
    "veil.cli",
    "veil.catalog",
    "veil.config",
}
# entry points and the CLI's parts: nothing below them imports them
UPPER = {"veil.release", "veil.cli", "veil.commandline", "veil.commands", "veil.run", "veil.demo", "veil.notebook"}


def imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def module_name(path: Path) -> str:
    rel = path.relative_to(ENGINE).with_suffix("")
    return ".".join(("veil", *rel.parts)).removesuffix(".__init__")  # engine/ is installed as ``veil``


def matches(name: str, prefixes: set[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_checkers_search_and_metrics_import_no_sql() -> None:
    offenders = {}
    for path in ENGINE.rglob("*.py"):
        name = module_name(path)
        short = name.split(".")[1] if name.count(".") >= 1 else name
        if short in PURE or name.startswith("veil.models"):
            bad = {i for i in imports(path) if matches(i, FORBIDDEN_IN_PURE)}
            if bad:
                offenders[name] = bad
    assert offenders == {}


def test_only_backends_touch_drivers_and_nothing_imports_upward() -> None:
    offenders = {}
    for path in ENGINE.rglob("*.py"):
        name = module_name(path)
        found = imports(path)
        drivers = {i for i in found if matches(i, {"duckdb", "psycopg"})}
        if drivers and not name.startswith("veil.backends") and not name.startswith("veil.demo"):
            offenders[name] = drivers
        if not matches(name, UPPER):
            upward = {i for i in found if matches(i, UPPER)}
            if upward:
                offenders[name] = upward
    assert offenders == {}


def test_the_layer_check_can_fail(tmp_path: Path) -> None:
    bad = tmp_path / "x.py"
    bad.write_text("import sqlalchemy\nfrom veil.release import release\n")
    assert matches("sqlalchemy", FORBIDDEN_IN_PURE) and imports(bad) == {"sqlalchemy", "veil.release"}


@pytest.fixture(scope="module")
def report() -> object:
    return arch.analyze()


def test_no_import_cycles(report) -> None:
    """Every import counts: run on load, under ``if TYPE_CHECKING:`` or inside a function."""
    assert report.cycles == [], arch.render(report).split("\n\n")[0]


def test_no_function_over_60_lines(report) -> None:
    assert report.long_functions == []


def test_only_queries_builds_sql(report) -> None:
    assert report.statements == [], "\n".join(arch._findings(report.statements))


def test_only_backends_execute(report) -> None:
    assert report.executions == [], "\n".join(arch._findings(report.executions))


def test_no_module_over_800_lines(report) -> None:
    assert report.long_modules == []


def _package(tmp_path: Path, files: dict[str, str]) -> object:
    for name, text in files.items():
        path = tmp_path / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return arch.analyze(tmp_path / "pkg", "veil", base=tmp_path)


def test_the_cycle_rule_can_fail(tmp_path: Path) -> None:
    found = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from veil import b\n",
            "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from veil.a import x\n",
            "c.py": "def f():\n    from veil import d\n",
            "d.py": "import veil.c\n",
            "e.py": "from . import a\n",
        },
    )
    assert [[(i.source, i.target, i.kind) for i in c] for c in found.cycles] == [
        [("veil.a", "veil.b", "module"), ("veil.b", "veil.a", "typing")],
        [("veil.c", "veil.d", "deferred"), ("veil.d", "veil.c", "module")],
    ]
    assert found.broken and arch.main([str(tmp_path / "pkg")]) == 1


def test_the_length_rule_can_fail(tmp_path: Path) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(60))
    found = _package(
        tmp_path,
        {
            "__init__.py": "",
            "m.py": f"class C:\n    def long(self):\n{body.replace('    ', '        ')}\ndef short():\n{body[:-12]}",
        },
    )
    assert [(f.qualname, f.lines) for f in found.long_functions] == [("C.long", 61)]


def test_the_module_length_rule_can_fail(tmp_path: Path) -> None:
    line = "x = 1\n"
    found = _package(tmp_path, {"__init__.py": "", "big.py": line * 801, "fits.py": line * 800})
    assert [(f.path, f.what) for f in found.long_modules] == [("pkg/big.py", "801 lines")]
    assert found.broken and arch.main([str(tmp_path / "pkg")]) == 1


def test_the_statement_rule_can_fail(tmp_path: Path) -> None:
    found = _package(
        tmp_path,
        {
            "__init__.py": "",
            "queries/__init__.py": "import sqlalchemy as sa\nq = sa.select(sa.column('x'))\n",
            "job.py": "import sqlalchemy as sa\nfrom sqlalchemy.schema import CreateTable\nfrom sqlalchemy import text\n"
            "t = sa.Table('t', sa.MetaData())\nCreateTable(t)\ntext('SELECT 1')\nsa.Text()\n"
            "def run(s):\n    s.execute(f'DROP TABLE {t}')\n    s.execute(built)\n",
        },
    )
    assert [(f.path, f.line, f.what) for f in found.statements] == [
        ("pkg/job.py", 4, "sa.MetaData(…)"),
        ("pkg/job.py", 4, "sa.Table(…)"),
        ("pkg/job.py", 5, "CreateTable(…)"),
        ("pkg/job.py", 6, "text(…)"),
        ("pkg/job.py", 9, ".execute(<SQL string>)"),
    ]


def test_the_execution_rule_can_fail(tmp_path: Path) -> None:
    # handing a statement to a backend's Session is how every layer runs one; a connection, cursor or engine
    # executing it outside ``backends`` is what the rule catches
    run = (
        "def run(session, conn, cur, self, q):\n    session.execute(q.x())\n"
        "    return conn.execute(q.y()), cur.executemany(q.z(), []), self.session.rows(q), self.engine.scalar(q)\n"
    )
    found = _package(tmp_path, {"__init__.py": "", "backends/__init__.py": run, "job.py": run})
    assert [(f.path, f.line, f.what) for f in found.executions] == [
        ("pkg/job.py", 3, "conn.execute(…)"),
        ("pkg/job.py", 3, "cur.executemany(…)"),
        ("pkg/job.py", 3, "self.engine.scalar(…)"),
    ]
