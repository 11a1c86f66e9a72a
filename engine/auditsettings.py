"""The ``[audit]`` table of the config: the thresholds of the attack audit (``veil.risk``, docs/audit.md).  It sits
beside ``veil.config``, below the audit, so that parsing a config never imports the audit's package.

Every key is optional; the defaults are what the README documents.  ``config.py`` calls ``parse_audit`` once
(so a bad ``[audit]`` fails at load time, naming the key); the audit reads the settings again from the
config's text with ``settings_of``.

>>> s = parse_audit({"share": 0.8, "attributes": {"condition": {"similarity_level": 2}}}, Path("veil.toml"),
...                 ("condition",))
>>> s.share, s.worst, s.attribute("condition").similarity_level, s.attribute("other").similarity_level
(0.8, 5, 2, 1)
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from veil.errors import ConfigError
from veil.models.params import unknown_keys

DISTANCES = ("equal", "ordered", "hierarchical")
MODES = ("absolute", "relative")


@dataclass(frozen=True)
class AttributeSettings:
    """Per sensitive attribute: the EMD ground distance and sensitive hierarchy (skewness, similarity), the
    proximity window (numeric values) and the ε-privacy adversary (``epsilon-privacy`` model parameters)."""

    distance: str | None = None            # None: ordered for numbers, hierarchical with a hierarchy, else equal
    hierarchy: Path | None = None           # ARX-format CSV over the sensitive values
    delimiter: str = ";"
    similarity_level: int = 1
    proximity_epsilon: float | None = None  # None: 5% relative
    proximity_mode: str = "absolute"
    adversary: tuple[tuple[str, Any], ...] | None = None


@dataclass(frozen=True)
class AuditSettings:
    share: float = 0.9             # homogeneity: one value holds >= share of a block; also "revealed"
    l: int | None = None            # background knowledge: up to l-1 eliminations (None: from the models, else 2)
    t: float | None = None          # skewness: EMD > t exposes (None: from a t-closeness model, else 0.2)
    posterior: float = 0.8          # Bayes-optimal positive disclosure: posterior >= this (and above the prior)
    proximity_share: float = 0.5    # proximity: >= this share of a block within ε of one value
    worst: int = 5                  # worst blocks listed per attack
    attributes: Mapping[str, AttributeSettings] = field(default_factory=dict)

    def attribute(self, name: str) -> AttributeSettings:
        return self.attributes.get(name, AttributeSettings())


class _Reader:
    """Typed access to one table of ``[audit]``; ``done()`` rejects unknown keys."""

    def __init__(self, data: Any, where: str, file: Path) -> None:
        if not isinstance(data, Mapping):
            raise ConfigError(f"{file}: {where} must be a table, got {data!r}")
        self.data, self.where, self.file = data, where, file
        self.seen: set[str] = set()

    def fail(self, key: str, message: str) -> ConfigError:
        return ConfigError(f"{self.file}: {self.where} key {key!r} {message}")

    def number(self, key: str, default: float | None, low: float, high: float, open_low: bool = False) -> float | None:
        self.seen.add(key)
        if key not in self.data:
            return default
        v = self.data[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise self.fail(key, f"must be a number, got {v!r}")
        if v < low or v > high or (open_low and v == low):
            bound = f"in ({low:g}, {high:g}]" if open_low else f"in [{low:g}, {high:g}]"
            raise self.fail(key, f"must be {bound}, got {v!r}")
        return float(v)

    def whole(self, key: str, default: int | None, low: int) -> int | None:
        self.seen.add(key)
        if key not in self.data:
            return default
        v = self.data[key]
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            raise self.fail(key, f"must be a whole number >= {low}, got {v!r}")
        return v

    def choice(self, key: str, default: str | None, choices: Sequence[str]) -> str | None:
        self.seen.add(key)
        if key not in self.data:
            return default
        v = self.data[key]
        if v not in choices:
            raise self.fail(key, f"must be one of {', '.join(map(repr, choices))}, got {v!r}")
        return str(v)

    def done(self) -> None:
        unknown = set(self.data) - self.seen
        if unknown:
            raise ConfigError(f"{self.file}: {self.where} has unknown key(s) {unknown_keys(unknown, self.seen)}")


def _attribute(data: Any, name: str, file: Path, sensitive: Sequence[str]) -> AttributeSettings:
    r = _Reader(data, f"[audit.attributes.{name}]", file)
    hierarchy, delimiter = None, ";"
    r.seen.add("hierarchy")
    if "hierarchy" in data:
        raw = data["hierarchy"]
        if not isinstance(raw, Mapping) or not isinstance(raw.get("csv"), str) or set(raw) - {"csv", "delimiter"}:
            raise r.fail("hierarchy", f'must be a table like {{ csv = "disease.csv" }}, got {raw!r}')
        delimiter = raw.get("delimiter", ";")
        if not isinstance(delimiter, str) or len(delimiter) != 1:
            raise r.fail("hierarchy", f"delimiter must be one character, got {delimiter!r}")
        hierarchy = Path(raw["csv"]) if Path(raw["csv"]).is_absolute() else file.parent / raw["csv"]
    distance = r.choice("distance", None, DISTANCES)
    if distance == "hierarchical" and hierarchy is None:
        raise r.fail("distance", "'hierarchical' needs key 'hierarchy' (the sensitive values' taxonomy)")
    adversary = None
    r.seen.add("adversary")
    if "adversary" in data:
        from veil.models.registry import build

        raw = data["adversary"]
        if not isinstance(raw, Mapping):
            raise r.fail("adversary", f"must be a table of epsilon-privacy parameters, got {raw!r}")
        table = {"type": "epsilon-privacy", "attribute": name, **raw}
        build(table, where=f"{file}: [audit.attributes.{name}] adversary", sensitive=tuple(sensitive),
              base_dir=file.parent)  # validates now; the audit builds it again
        adversary = tuple((k, v) for k, v in table.items())
    settings = AttributeSettings(
        distance=distance, hierarchy=hierarchy, delimiter=delimiter,
        similarity_level=int(r.whole("similarity_level", 1, 1)),  # type: ignore[arg-type]
        proximity_epsilon=r.number("proximity_epsilon", None, 0.0, math.inf),
        proximity_mode=str(r.choice("proximity_mode", "absolute", MODES)), adversary=adversary)
    r.done()
    return settings


def parse_audit(data: Any, file: Path, sensitive: Sequence[str]) -> AuditSettings:
    """The ``[audit]`` table (``{}`` when absent); errors name the file and the key."""
    r = _Reader(data, "[audit]", file)
    attributes: dict[str, AttributeSettings] = {}
    r.seen.add("attributes")
    per = data.get("attributes", {})
    if not isinstance(per, Mapping):
        raise r.fail("attributes", f"must be a table of sensitive columns, got {per!r}")
    for name, table in per.items():
        if name not in sensitive:
            raise ConfigError(f"{file}: [audit.attributes.{name}] names {name!r}, which is not a sensitive column "
                              f"(sensitive columns: {', '.join(map(repr, sensitive)) or 'none'})")
        attributes[name] = _attribute(table, name, file, sensitive)
    settings = AuditSettings(
        share=float(r.number("share", 0.9, 0.0, 1.0, open_low=True)),  # type: ignore[arg-type]
        l=r.whole("l", None, 1), t=r.number("t", None, 0.0, 1.0),
        posterior=float(r.number("posterior", 0.8, 0.0, 1.0, open_low=True)),  # type: ignore[arg-type]
        proximity_share=float(r.number("proximity_share", 0.5, 0.0, 1.0, open_low=True)),  # type: ignore[arg-type]
        worst=int(r.whole("worst", 5, 1)),  # type: ignore[arg-type]
        attributes=attributes)
    r.done()
    return settings


def settings_of(text: str, file: Path, sensitive: Sequence[str]) -> AuditSettings:
    """The ``[audit]`` settings of a config file's text (already validated when the config loaded)."""
    return parse_audit(tomllib.loads(text).get("audit", {}), file, sensitive)
