"""The package as others install it: the import name ``veil`` (source folder ``engine/``), a wheel with
nothing named ``engine`` and every data file, dependencies as ranges with nothing the runtime never
imports, and every module's docstring examples run as tests."""

from __future__ import annotations

import ast
import doctest
import importlib
import os
import pkgutil
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import veil

ROOT = Path(__file__).resolve().parent.parent
MODULES = sorted(
    m.name for m in pkgutil.walk_packages(veil.__path__, "veil.") if not m.name.startswith("veil.migrations")
)  # Alembic scripts: run by Alembic only


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    # NORMALIZE_WHITESPACE: SQLAlchemy ends a compiled clause's line with a space, which ruff format strips
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_doctests_cover_the_modules_that_promise_examples() -> None:
    with_examples = [m for m in MODULES if ">>> " in (importlib.import_module(m).__doc__ or "")]
    assert {"veil.config", "veil.schedule", "veil.log", "veil.lockwait", "veil.contract"} <= set(with_examples)


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def test_dependencies_are_ranges_with_lower_bounds_that_are_tested() -> None:
    deps = _pyproject()["project"]["dependencies"]
    lower = {
        _name(line): line.split("==")[1].strip()
        for line in (ROOT / "constraints-lower.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    }
    exact = (ROOT / "constraints.txt").read_text()
    for dep in deps:
        name = _name(dep)
        assert "==" not in dep, dep
        bound = re.search(r">=\s*([\w.]+)", dep)
        assert bound, f"{dep}: no lower bound"
        assert lower.get(name) == bound.group(1), f"{dep}: constraints-lower.txt must install {bound.group(1)}"
        assert re.search(rf"(?im)^{name.replace('-', '[-_]')}==", exact), f"{name} not in constraints.txt"


# modules that belong to an optional extra: they may import that extra's packages (and only they may)
EXTRA_MODULES = {
    "backends/spark.py": ("spark", {"pyspark", "pyarrow", "pandas"}),
    "notebook.py": ("notebook", {"pandas"}),
}


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_no_runtime_dependency_the_runtime_never_imports() -> None:
    imported: set[str] = set()
    for path in [*(ROOT / "engine").rglob("*.py"), *(ROOT / "migrations").rglob("*.py")]:
        rel = path.relative_to(ROOT / "engine").as_posix() if path.is_relative_to(ROOT / "engine") else ""
        if rel in EXTRA_MODULES:
            extra, allowed = EXTRA_MODULES[rel]
            assert extra in _pyproject()["project"]["optional-dependencies"], f"{rel}: no extra {extra!r}"
            assert not {"pandas", "pyarrow", "pyspark"} - allowed & _imports(path), f"{rel} imports outside [{extra}]"
            continue
        imported |= _imports(path)
    # distribution name -> what proves the runtime needs it
    needed_by = {
        "duckdb-engine": "sqlalchemy dialect 'duckdb://'",
        "duckdb": "the database under duckdb-engine's dialect",
        "psycopg": "sqlalchemy dialect 'postgresql+psycopg'",
        "tzdata": "zoneinfo's fallback database (veil.schedule.zone)",
        "vl-convert-python": "imported as vl_convert (veil.report.charts)",
    }
    for dep in _pyproject()["project"]["dependencies"]:
        name = _name(dep)
        module = name.replace("-", "_")
        assert module in imported or name in needed_by, f"{name} is a runtime dependency the runtime never imports"
    assert not {"pandas", "pyarrow", "pyspark"} & imported


# What a checkout holds but a build never reads (and a build's own leftovers).
NOT_SOURCE = shutil.ignore_patterns(
    ".git",
    ".venv",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".pytest_cache",
    ".hypothesis",
    ".work",
    "run",
    "veil-demo",
    "*.duckdb",
    "*.duckdb.wal",
)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built from a copy of the source tree: setuptools builds in the tree (``build/``), and tests on
    other pytest-xdist workers may build at the same time."""
    out, tree = tmp_path_factory.mktemp("wheel"), tmp_path_factory.mktemp("tree") / "veil"
    shutil.copytree(ROOT, tree, ignore=NOT_SOURCE)
    res = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(tree)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr
    (path,) = out.glob("veil-*.whl")
    return path


@pytest.mark.xdist_group("wheel")  # one build for both tests
def test_wheel_holds_veil_and_its_data_and_nothing_named_engine(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names} == {"veil", f"veil-{veil.__version__}.dist-info"}
    assert not [n for n in names if "engine" in n.split("/")[0]]
    for data in (
        "veil/demo/data/inpatient.csv",
        "veil/demo/data/hierarchies/inpatient_age.csv",
        "veil/sql/census.sql",
        "veil/migrations/env.py",
        "veil/migrations/script.py.mako",
        "veil/migrations/versions/0001_catalog.py",
        "veil/cli.py",
        "veil/commands/releasing.py",
        "veil/models/registry.py",
    ):
        assert data in names, data
    metadata = zipfile.ZipFile(wheel).read(f"veil-{veil.__version__}.dist-info/METADATA").decode()
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    runtime = [r for r in requires if "extra ==" not in r]
    assert runtime and not [r for r in runtime if "==" in r]
    assert not [r for r in runtime if re.search(r"pandas|pyarrow|pycanon", r)]


@pytest.mark.xdist_group("wheel")
def test_installed_wheel_runs_without_the_source_tree(wheel: Path, tmp_path: Path) -> None:
    """A non-editable install (the wheel in a folder of its own, dependencies from this environment):
    ``import veil`` comes from there, nothing named ``engine`` is installed, the demo finds its data."""
    target = tmp_path / "site"
    res = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr
    assert "engine" not in {p.name for p in target.iterdir()}
    env = {**os.environ, "PYTHONPATH": str(target)}
    where = subprocess.run(
        [sys.executable, "-c", "import veil; print(veil.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    assert where.stdout.strip() == str(target / "veil" / "__init__.py"), where
    demo = subprocess.run(
        [sys.executable, "-m", "veil.cli", "demo", "--dir", str(tmp_path / "demo"), "--rows", "2000", "--quiet"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert demo.returncode == 0, demo.stderr
    assert "published 'census' version 1" in demo.stdout
