"""Building a model from its ``[[models]]`` table: the ``type`` names a class registered in ``veil.registry.MODELS``
(``@MODELS.register("k-anonymity")`` on the class, in its own module), whose ``from_params`` reads its parameters
through ``Params``.  Only the named model's module is imported: a config loads only the checkers it names.

>>> from pathlib import Path
>>> m = build({"type": "recursive-cl-diversity", "c": 3, "l": 2}, where="veil.toml: [[models]] #2",
...           sensitive=("disease",), base_dir=Path("."))
>>> m.describe()
'recursive (c,l)-diversity (c=3, l=2) on disease'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from veil.errors import ConfigError
from veil.models.base import Model
from veil.models.params import Params
from veil.registry import MODELS


def build(table: Mapping[str, Any], *, where: str, sensitive: Sequence[str], base_dir: Path) -> Model:
    """Build one model from its ``[[models]]`` table; errors name ``where`` and the parameter."""
    kind = table.get("type")
    if not isinstance(kind, str):
        raise ConfigError(f"{where}: missing required key 'type' (one of {', '.join(sorted(MODELS))})")
    if kind not in MODELS:
        raise ConfigError(f"{where}: unknown model type {kind!r}; known types: {', '.join(sorted(MODELS))}")
    params = Params(table, f"{where} ({kind})", tuple(sensitive), base_dir)
    model: Model = MODELS.get(kind).from_params(params)
    params.finish()
    return model
