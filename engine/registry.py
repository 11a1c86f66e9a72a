"""One registry per extension point — search strategies, backends, privacy models — each read by config
validation, the command line's choices and help, the docs reference and dispatch.

An implementation registers itself where it is defined, once, like sqlglot's dialects::

    @BACKENDS.register("postgresql", "postgres")
    class PostgresBackend(Backend): ...

so adding one touches its own file (and its tests).  Listing the names must stay cheap — ``veil --help`` lists
the strategies without loading numpy, and a run imports only the models its config names — so a registry
finds the declarations in the source of the modules it covers (the literal names of ``@<REGISTRY>.register``)
without importing them, and imports a module only when one of its entries is asked for.
``tests/test_registry.py`` checks that what the source declares is what importing registers.

This module imports nothing from Veil: the command line reads it at start-up.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Generic, TypeVar

T = TypeVar("T")
PACKAGE = Path(__file__).resolve().parent  # the folder installed as ``veil``


class Registry(Generic[T]):
    """The entries of one extension point, declared in the modules ``where`` (a module, or every module of a
    package) as ``@<var>.register("name", "alias", ...)``; ``attribute`` (if any) is set on each registered
    object to its name."""

    def __init__(self, kind: str, var: str, where: str, attribute: str | None = None) -> None:
        self.kind, self.var, self.where, self.attribute = kind, var, where, attribute
        self._entries: dict[str, T] = {}
        self._declared: dict[str, tuple[str, bool]] | None = None  # name → (module, an alias)

    def register(self, name: str, *aliases: str) -> Callable[[T], T]:
        def decorate(obj: T) -> T:
            for key in (name, *aliases):
                known = self._entries.get(key)
                if known is not None and known is not obj and not _reloaded(known, obj):
                    raise ValueError(f"{self.kind} {key!r} is registered twice")
                self._entries[key] = obj
            if self.attribute:
                setattr(obj, self.attribute, name)
            return obj

        return decorate

    def declared(self) -> dict[str, tuple[str, bool]]:
        """Every name the source declares: name → (its module, whether it is an alias), without importing."""
        if self._declared is None:
            pattern = re.compile(rf"^\s*@(?:\w+\.)*{re.escape(self.var)}\.register\(([^)]*)\)", re.MULTILINE)
            found: dict[str, tuple[str, bool]] = {}
            for module, path in self._modules():
                for match in pattern.finditer(path.read_text(encoding="utf-8")):
                    for i, key in enumerate(re.findall(r"\"([^\"]+)\"", match.group(1))):
                        found[key] = (module, i > 0)
            self._declared = found
        return self._declared

    def names(self, aliases: bool = False) -> tuple[str, ...]:
        """The registered names in the order their modules declare them (``aliases``: also the other names)."""
        return tuple(k for k, (_, alias) in self.declared().items() if aliases or not alias)

    def get(self, name: str) -> T:
        """The entry registered as ``name`` (its module imported now); ``KeyError`` for an unknown name."""
        if name not in self._entries:
            module = self.declared().get(name)
            if module is None:
                raise KeyError(name)
            importlib.import_module(module[0])
        return self._entries[name]

    def load_all(self) -> dict[str, T]:
        """Every entry, each module imported (the docs' generator and the tests), in the order the source
        declares them — not the order a process happened to import them in."""
        for module in dict.fromkeys(m for m, _ in self.declared().values()):
            importlib.import_module(module)
        order = [k for k in self.names(aliases=True) if k in self._entries]
        return {k: self._entries[k] for k in order + [k for k in self._entries if k not in order]}

    def _modules(self) -> list[tuple[str, Path]]:
        rel = Path(*self.where.split(".")[1:])
        if (PACKAGE / rel).is_dir():
            return [(f"{self.where}.{p.stem}", p) for p in sorted((PACKAGE / rel).glob("*.py")) if p.stem != "__init__"]
        return [(self.where, PACKAGE / rel.with_suffix(".py"))]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __contains__(self, name: object) -> bool:
        return name in self.declared()

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self.names())})"


# search strategies: functions ``(lattice, evaluator, result) -> None`` in veil.search, in the order help lists them
STRATEGIES: Registry[Callable[..., Any]] = Registry("strategy", "STRATEGIES", "veil.search")
# backends: ``Backend`` classes, by URL scheme (``sc`` for Spark Connect), in veil.backends; ``cls.open(url)``
BACKENDS: Registry[Any] = Registry("backend", "BACKENDS", "veil.backends")
# privacy models: classes in veil.models, by config ``type``; ``cls.from_params(params)`` builds one from its
# ``[[models]]`` table (``veil.models.build``), and registering sets ``cls.type`` (the name is written once)
MODELS: Registry[Any] = Registry("model", "MODELS", "veil.models", attribute="type")


def _reloaded(old: object, new: object) -> bool:
    """The same definition again: its module re-imported (``importlib.reload``, a test loading it without an
    optional dependency), so the newer object replaces the older."""
    return (getattr(old, "__module__", None), getattr(old, "__qualname__", None)) == (
        getattr(new, "__module__", None),
        getattr(new, "__qualname__", None),
    )
