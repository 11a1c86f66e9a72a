"""Reading one ``[[models]]`` table of the config: the config's one reader (``veil.settings.Table``) worded for
a model's parameters — errors name the file, the model and the parameter — plus what only models need (the
sensitive column judged, files relative to the config's folder)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from veil.errors import ConfigError
from veil.settings import PARAMETERS, REQUIRED, Table, near, unknown_keys

__all__ = ["Params", "near", "unknown_keys"]

_MISSING = REQUIRED  # the default of a required parameter (kept for callers that name it)


class Params(Table):
    """Typed access to a model's table; ``finish()`` rejects keys nobody read.  ``where`` names the file and
    the model (``veil.toml: [[models]] #1 (k-anonymity)``): the model keeps it for its own errors.

    >>> p = Params({"type": "k-anonymity", "k": 4}, "veil.toml: [[models]] #1 (k-anonymity)", ("disease",), Path("."))
    >>> p.integer("k", minimum=1)
    4
    >>> p.finish()
    """

    def __init__(self, table: Mapping[str, Any], where: str, sensitive: Sequence[str], base_dir: Path) -> None:
        super().__init__(table, where, wording=PARAMETERS)
        self.sensitive, self.base_dir = tuple(sensitive), base_dir
        self.read.add("type")

    @property
    def table(self) -> Mapping[str, Any]:
        return self.data

    @property
    def _read(self) -> set[str]:  # the keys read so far, as ``Params`` called them
        return self.read

    def attribute(self) -> str:
        """The sensitive column judged: ``attribute``, or the only sensitive column."""
        if "attribute" in self.data:
            v = self.text("attribute")
            if v not in self.sensitive:
                raise self.error(
                    "attribute",
                    f"names {v!r}, which is not a sensitive column "
                    f"(sensitive columns: {', '.join(map(repr, self.sensitive)) or 'none'})",
                )
            return str(v)
        self.read.add("attribute")
        if len(self.sensitive) == 1:
            return self.sensitive[0]
        if not self.sensitive:
            raise ConfigError(f"{self.where}: needs a sensitive column, but [sensitive] columns is empty")
        raise ConfigError(
            f"{self.where}: missing parameter 'attribute' (several sensitive columns: "
            f"{', '.join(map(repr, self.sensitive))})"
        )

    def path(self, value: str) -> Path:
        p = Path(value)
        return p if p.is_absolute() else self.base_dir / p
