"""Config ``type`` strings → model factories.  Each factory reads its parameters through ``Params``."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from engine.errors import ConfigError
from engine.models.base import Model
from engine.models.kanonymity import KAnonymity
from engine.models.params import Params


def _k_anonymity(p: Params) -> Model:
    model = KAnonymity(k=p.integer("k"), where=p.where)
    p.finish()
    return model


FACTORIES: dict[str, Callable[[Params], Model]] = {
    "k-anonymity": _k_anonymity,
}


def build(table: Mapping[str, Any], *, where: str, sensitive: Sequence[str], base_dir: Path) -> Model:
    """Build one model from its ``[[models]]`` table; errors name ``where`` and the parameter."""
    kind = table.get("type")
    if not isinstance(kind, str):
        raise ConfigError(f"{where}: missing required key 'type' (one of {', '.join(sorted(FACTORIES))})")
    factory = FACTORIES.get(kind)
    if factory is None:
        raise ConfigError(f"{where}: unknown model type {kind!r}; known types: {', '.join(sorted(FACTORIES))}")
    return factory(Params(table, f"{where} ({kind})", tuple(sensitive), base_dir))
