"""The layers stay apart: checkers and the search never import SQLAlchemy or the SQL modules; only
``queries`` builds SQL; only ``backends`` call the driver; nothing imports upward."""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parent.parent / "engine"

PURE = {"errors", "lattice", "counts", "distribution", "hierarchy", "metrics", "privacy", "search", "schedule"}
FORBIDDEN_IN_PURE = {"sqlalchemy", "duckdb", "psycopg", "veil.queries", "veil.backends", "veil.warehouse",
                     "veil.release", "veil.run", "veil.cli", "veil.catalog", "veil.config"}
UPPER = {"veil.release", "veil.cli", "veil.run", "veil.demo", "veil.api"}  # entry points: nothing imports them


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
