#!/usr/bin/env python3
"""The architecture's rules, read off the source with ``ast`` (stdlib only, nothing imported from ``engine/``):

    .venv/bin/python .ci/architecture.py          # print the five lists; exit 1 when one of them breaks a rule

1. **Import cycles** among ``veil`` modules.  Every import counts: those run when a module is loaded (module
   level, class bodies, module-level ``try``/``if``), those under ``if TYPE_CHECKING:`` (a type-only cycle
   still means neither module can be read without the other) and those inside a function (a lazy import keeps
   start-up cheap, it does not make two modules independent).  The cycles are listed in two groups: closed by
   imports run on load alone, and closed only with a ``TYPE_CHECKING`` or in-function import; each import
   of a cycle is printed with its line and kind.
2. **Functions and methods over** ``MAX_LINES`` lines (``def`` line to last line, decorators excluded,
   nested functions counted in their parent too), longest first.
3. **SQL built outside** ``engine/queries/``: a call of one of SQLAlchemy's statement, schema or expression
   constructors (``BUILDERS``: ``select``, ``insert``, ``text``, ``Table``, ``CreateTable``, ``func.…``, …;
   types such as ``sa.Text()`` are not statements), and a SQL string handed to an execution call.
4. **Statements executed outside** ``engine/backends/``: a call ``x.execute(…)``, ``x.scalar(…)``,
   ``x.exec_driver_sql(…)``, … (``EXECUTORS``) with at least one argument (``result.scalar()`` reads a result).
5. **Modules over** ``MAX_MODULE_LINES`` lines: one concept a module, small enough to read at once (the release
   job was 1,206 lines before it was split by step, the CLI 1,103 before its commands went to ``veil.commands``).

``tests/test_layers.py`` loads this file and asserts each list empty; the same functions run on a package
made in a temporary folder to show that each rule fails on a bad snippet.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "engine"  # installed as the package ``veil``
PACKAGE = "veil"
MAX_LINES = 60
MAX_MODULE_LINES = 800
STATEMENTS_IN = "queries"  # the subpackage that builds SQL
EXECUTED_IN = "backends"  # the subpackage that executes it

# SQLAlchemy's constructors of statements, schema objects and SQL expressions (a call of sqlalchemy.<name>,
# sqlalchemy.<module>.<name> or <name> imported from any sqlalchemy module; ``func`` covers func.count etc.)
BUILDERS = frozenset(
    {
        "select",
        "insert",
        "update",
        "delete",
        "text",
        "union",
        "union_all",
        "intersect",
        "except_",
        "values",
        "exists",
        "lateral",
        "join",
        "outerjoin",
        "alias",
        "Table",
        "MetaData",
        "Column",
        "Index",
        "Sequence",
        "PrimaryKeyConstraint",
        "ForeignKeyConstraint",
        "UniqueConstraint",
        "CheckConstraint",
        "DDL",
        "CreateTable",
        "DropTable",
        "CreateIndex",
        "DropIndex",
        "CreateSchema",
        "DropSchema",
        "CreateSequence",
        "DropSequence",
        "CreateColumn",
        "AddConstraint",
        "DropConstraint",
        "table",
        "column",
        "literal",
        "literal_column",
        "bindparam",
        "func",
        "case",
        "cast",
        "and_",
        "or_",
        "not_",
        "tuple_",
        "null",
        "true",
        "false",
        "distinct",
        "over",
        "within_group",
        "type_coerce",
        "collate",
    }
)
# calls that run a statement, on a connection, session, cursor or DB-API/Spark/pandas object
EXECUTORS = frozenset(
    {
        "execute",
        "executemany",
        "executescript",
        "exec_driver_sql",
        "scalar",
        "scalars",
        "sql",
        "read_sql",
        "read_sql_query",
        "read_sql_table",
        "to_sql",
    }
)


@dataclass(frozen=True)
class Module:
    name: str  # veil.release.job
    path: Path  # engine/release/job.py
    tree: ast.Module
    package: bool  # an __init__.py

    def within(self, sub: str, root: str = PACKAGE) -> bool:
        return self.name == f"{root}.{sub}" or self.name.startswith(f"{root}.{sub}.")


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int
    kind: str  # "module" (runs on load), "typing" (under if TYPE_CHECKING), "deferred" (inside a function)


@dataclass(frozen=True)
class Function:
    module: str
    qualname: str
    path: str
    line: int
    lines: int


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    what: str


@dataclass
class Report:
    cycles: list[list[Import]] = field(default_factory=list)  # rule 1 (every kind of import)
    long_functions: list[Function] = field(default_factory=list)  # rule 2
    longest: list[Function] = field(default_factory=list)  # information: the longest overall
    statements: list[Finding] = field(default_factory=list)  # rule 3
    executions: list[Finding] = field(default_factory=list)  # rule 4
    long_modules: list[Finding] = field(default_factory=list)  # rule 5 (``what``: the module's line count)

    @property
    def broken(self) -> bool:
        return bool(self.cycles or self.long_functions or self.statements or self.executions or self.long_modules)


def load(source: Path = ENGINE, package: str = PACKAGE) -> dict[str, Module]:
    """Every module under ``source`` (the folder installed as ``package``), by dotted name."""
    modules = {}
    for path in sorted(source.rglob("*.py")):
        rel = path.relative_to(source).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        name = ".".join((package, *parts))
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        modules[name] = Module(name, path, tree, rel.name == "__init__")
    return modules


def display(path: Path, base: Path = ROOT) -> str:
    try:
        return str(path.relative_to(base))
    except ValueError:
        return str(path)


# ---------------------------------------------------------------------------------------------------- imports


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST, kind: str = "module") -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
    """Every import statement with the way it runs: on load, under TYPE_CHECKING, or inside a function."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, kind
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            yield from _import_nodes(node, "deferred")
        elif isinstance(node, ast.If) and _is_type_checking(node.test) and kind == "module":
            for child in node.body:
                yield from _import_nodes(ast.Module(body=[child], type_ignores=[]), "typing")
            for child in node.orelse:
                yield from _import_nodes(ast.Module(body=[child], type_ignores=[]), kind)
        else:
            yield from _import_nodes(node, kind)


def _absolute(module: Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = module.name.split(".")
    base = parts if module.package else parts[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imports(modules: dict[str, Module], package: str = PACKAGE) -> list[Import]:
    """The imports of one package module by another (``from veil.x import y`` is an import of ``veil.x.y`` when
    that is a module, else of ``veil.x``)."""
    found = []
    for module in modules.values():
        for node, kind in _import_nodes(module.tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = _absolute(module, node)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for target in dict.fromkeys(targets):  # a module not (yet) in the tree is no import of its package
                if target in modules and target != module.name and target.split(".")[0] == package:
                    found.append(Import(module.name, target, node.lineno, kind))
    return found


def _components(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        result.append(sorted(component))
    return sorted(result)


def _path(start: str, goal: str, members: set[str], edges: dict[tuple[str, str], Import]) -> list[Import]:
    """The imports of a shortest path from ``start`` to ``goal`` inside one group of modules (breadth first)."""
    previous: dict[str, str] = {start: start}
    frontier = [start]
    while frontier and goal not in previous:
        following = []
        for node in frontier:
            for a, b in sorted(edges):
                if a == node and b in members and b not in previous:
                    previous[b] = a
                    following.append(b)
        frontier = following
    path: list[Import] = []
    node = goal
    while node != start:
        path.insert(0, edges[(previous[node], node)])
        node = previous[node]
    return path


def cycles(found: Iterable[Import], kinds: Iterable[str] = ("module", "typing", "deferred")) -> list[list[Import]]:
    """The import cycles among ``kinds`` of imports: for every import inside a group of modules that import each
    other, the shortest cycle through it (so each such import is shown once at least), without repeats."""
    kinds = set(kinds)
    graph: dict[str, set[str]] = {}
    edges: dict[tuple[str, str], Import] = {}
    for imp in sorted(found, key=lambda i: (i.source, i.target, i.kind != "module", i.line)):
        if imp.kind in kinds:
            graph.setdefault(imp.source, set()).add(imp.target)
            graph.setdefault(imp.target, set())
            edges.setdefault((imp.source, imp.target), imp)  # an import run on load first, else the first line
    result: dict[tuple[str, ...], list[Import]] = {}
    for component in _components(graph):
        members = set(component)
        for (a, b), imp in sorted(edges.items()):
            if a in members and b in members:
                cycle = [imp, *_path(b, a, members, edges)]
                first = min(range(len(cycle)), key=lambda k: cycle[k].source)
                cycle = cycle[first:] + cycle[:first]
                result.setdefault(tuple(i.source for i in cycle), cycle)
    return [result[key] for key in sorted(result, key=lambda k: (len(k), k))]


# -------------------------------------------------------------------------------------------------- functions


def functions(modules: dict[str, Module], base: Path = ROOT) -> list[Function]:
    """Every function and method, longest first."""
    found = []

    def visit(node: ast.AST, module: Module, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                lines = (child.end_lineno or child.lineno) - child.lineno + 1
                found.append(Function(module.name, name, display(module.path, base), child.lineno, lines))
                visit(child, module, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, module, f"{prefix}{child.name}.")
            else:
                visit(child, module, prefix)

    for module in modules.values():
        visit(module.tree, module, "")
    return sorted(found, key=lambda f: (-f.lines, f.path, f.line))


# ------------------------------------------------------------------------------------------------- statements


def _dotted(node: ast.expr) -> list[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    return [node.id, *parts] if isinstance(node, ast.Name) else []


def _sqlalchemy_names(tree: ast.AST) -> dict[str, str]:
    """Local name → the sqlalchemy object it stands for (``sa`` → ``sqlalchemy``, ``select`` →
    ``sqlalchemy.select``), from every import in the module."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "sqlalchemy":
                    if alias.asname:
                        names[alias.asname] = alias.name
                    else:
                        names["sqlalchemy"] = "sqlalchemy"
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "sqlalchemy":
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _builder(call: ast.Call, names: dict[str, str]) -> str | None:
    """``sa.select`` for a call of a SQLAlchemy constructor, else None."""
    parts = _dotted(call.func)
    if not parts or parts[0] not in names:
        return None
    resolved = names[parts[0]].split(".") + parts[1:]
    return ".".join(parts) if any(p in BUILDERS for p in resolved[1:]) else None


def _executor(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in EXECUTORS and (call.args or call.keywords):
        return func.attr
    return None


def _is_sql_string(node: ast.expr) -> bool:
    """A string literal, an f-string, a concatenation or ``"…".format(…)`` / ``"…".join(…)`` of one."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        return _is_sql_string(node.left) or _is_sql_string(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("format", "join"):
        return _is_sql_string(node.func.value)
    return False


def statements(modules: dict[str, Module], base: Path = ROOT, package: str = PACKAGE) -> list[Finding]:
    """SQLAlchemy constructors called, and SQL strings executed, outside ``<package>.queries``."""
    found = []
    for module in modules.values():
        if module.within(STATEMENTS_IN, package):
            continue
        names = _sqlalchemy_names(module.tree)
        for node in ast.walk(module.tree):
            if not isinstance(node, ast.Call):
                continue
            built = _builder(node, names)
            if built:
                found.append(Finding(display(module.path, base), node.lineno, f"{built}(…)"))
            elif _executor(node) and node.args and _is_sql_string(node.args[0]):
                found.append(Finding(display(module.path, base), node.lineno, f".{_executor(node)}(<SQL string>)"))
    return sorted(found, key=lambda f: (f.path, f.line, f.what))


def _through_a_session(call: ast.Call) -> bool:
    """``session.execute(…)``, ``self.session.rows(…)``: a statement handed to a backend's ``Session`` (which
    executes it, translating driver errors), not run on a driver's connection, cursor or engine."""
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
    parts = _dotted(receiver) if receiver is not None else []
    return bool(parts) and parts[-1].endswith("session")


def executions(modules: dict[str, Module], base: Path = ROOT, package: str = PACKAGE) -> list[Finding]:
    """Statement executions outside ``<package>.backends``."""
    found = []
    for module in modules.values():
        if module.within(EXECUTED_IN, package):
            continue
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Call) and _executor(node) and not _through_a_session(node):
                target = ".".join(_dotted(node.func)) or f"….{_executor(node)}"
                found.append(Finding(display(module.path, base), node.lineno, f"{target}(…)"))
    return sorted(found, key=lambda f: (f.path, f.line, f.what))


def long_modules(modules: dict[str, Module], base: Path = ROOT) -> list[Finding]:
    """Modules over ``MAX_MODULE_LINES`` lines, longest first."""
    found = []
    for module in modules.values():
        count = len(module.path.read_text(encoding="utf-8").splitlines())
        if count > MAX_MODULE_LINES:
            found.append(Finding(display(module.path, base), count, f"{count} lines"))
    return sorted(found, key=lambda f: (-f.line, f.path))


def analyze(source: Path = ENGINE, package: str = PACKAGE, base: Path = ROOT, longest: int = 5) -> Report:
    modules = load(source, package)
    found = imports(modules, package)
    every = functions(modules, base)
    return Report(
        cycles=cycles(found),
        long_functions=[f for f in every if f.lines > MAX_LINES],
        longest=every[:longest],
        statements=statements(modules, base, package),
        executions=executions(modules, base, package),
        long_modules=long_modules(modules, base),
    )


# ------------------------------------------------------------------------------------------------------ print


def _cycle_lines(found: list[list[Import]]) -> list[str]:
    lines = []
    for cycle in found:
        lines.append("  " + " → ".join([i.source for i in cycle] + [cycle[0].source]))
        for imp in cycle:
            how = {"typing": " (if TYPE_CHECKING)", "deferred": " (inside a function)"}.get(imp.kind, "")
            lines.append(f"      {imp.source}:{imp.line} imports {imp.target}{how}")
    return lines


def render(report: Report, package: str = PACKAGE) -> str:
    on_load = [c for c in report.cycles if all(i.kind == "module" for i in c)]
    other = [c for c in report.cycles if c not in on_load]
    out = [
        f"import cycles (every import counts): {len(report.cycles)}",
        f"  closed by imports run on load: {len(on_load)}",
        *("  " + line for line in _cycle_lines(on_load)),
        f"  closed with an import under `if TYPE_CHECKING:` or inside a function: {len(other)}",
        *("  " + line for line in _cycle_lines(other)),
        "",
        f"functions over {MAX_LINES} lines: {len(report.long_functions)}",
        *(f"  {f.lines:4d}  {f.module}.{f.qualname}  ({f.path}:{f.line})" for f in report.long_functions),
        "  longest: " + ", ".join(f"{f.qualname} {f.lines}" for f in report.longest),
        "",
        f"SQL built outside {package}.{STATEMENTS_IN}: {len(report.statements)}",
        *_findings(report.statements),
        "",
        f"statements executed outside {package}.{EXECUTED_IN}: {len(report.executions)}",
        *_findings(report.executions),
        "",
        f"modules over {MAX_MODULE_LINES} lines: {len(report.long_modules)}",
        *(f"  {f.path}: {f.what}" for f in report.long_modules),
    ]
    return "\n".join(out)


def _findings(found: list[Finding]) -> list[str]:
    by_path: dict[str, list[Finding]] = {}
    for f in found:
        by_path.setdefault(f.path, []).append(f)
    return [
        f"  {path} ({len(items)}): " + ", ".join(f"{f.line} {f.what}" for f in items)
        for path, items in sorted(by_path.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", nargs="?", type=Path, default=ENGINE, help="the package's folder (engine/)")
    parser.add_argument("--package", default=PACKAGE, help="the name it is installed as (veil)")
    args = parser.parse_args(argv)
    report = analyze(args.source.resolve(), args.package)
    print(render(report, args.package))
    return 1 if report.broken else 0


if __name__ == "__main__":
    sys.exit(main())
