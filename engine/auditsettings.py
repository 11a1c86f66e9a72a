"""The ``[audit]`` table of the config: the thresholds of the attack audit (``veil.adversary``, docs/audit.md).  It sits
beside ``veil.config``, below the audit, so that parsing a config never imports the audit's package.

Every key is optional; the defaults are the dataclasses' (what the README documents).  ``config.py`` calls
``parse_audit`` once, through the config's one reader (``veil.settings.Table``), so a bad ``[audit]`` fails at load
time naming the key; the audit reads the result, ``Config.audit``.

>>> s = parse_audit({"share": 0.8, "attributes": {"condition": {"similarity_level": 2}}}, Path("veil.toml"),
...                 ("condition",))
>>> s.share, s.worst, s.attribute("condition").similarity_level, s.attribute("other").similarity_level
(0.8, 5, 2, 1)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from veil.errors import ConfigError
from veil.settings import Table, defaults

DISTANCES = ("equal", "ordered", "hierarchical")
MODES = ("absolute", "relative")


@dataclass(frozen=True)
class AttributeSettings:
    """Per sensitive attribute: the EMD ground distance and sensitive hierarchy (skewness, similarity), the
    proximity window (numeric values) and the ε-privacy adversary (``epsilon-privacy`` model parameters)."""

    distance: str | None = None  # None: ordered for numbers, hierarchical with a hierarchy, else equal
    hierarchy: Path | None = None  # ARX-format CSV over the sensitive values
    delimiter: str = ";"
    similarity_level: int = 1
    proximity_epsilon: float | None = None  # None: 5% relative
    proximity_mode: str = "absolute"
    adversary: tuple[tuple[str, Any], ...] | None = None


@dataclass(frozen=True)
class AuditSettings:
    share: float = 0.9  # homogeneity: one value holds >= share of a block; also "revealed"
    l: int | None = None  # background knowledge: up to l-1 eliminations (None: from the models, else 2)
    t: float | None = None  # skewness: EMD > t exposes (None: from a t-closeness model, else 0.2)
    posterior: float = 0.8  # Bayes-optimal positive disclosure: posterior >= this (and above the prior)
    proximity_share: float = 0.5  # proximity: >= this share of a block within ε of one value
    worst: int = 5  # worst blocks listed per attack
    attributes: Mapping[str, AttributeSettings] = field(default_factory=dict)

    def attribute(self, name: str) -> AttributeSettings:
        return self.attributes.get(name, AttributeSettings())


def _hierarchy(r: Table) -> tuple[Path | None, str]:
    """``hierarchy = { csv = "disease.csv" }`` (with ``delimiter``): the sensitive values' taxonomy."""
    delimiter = defaults(AttributeSettings)["delimiter"]
    if not r.has("hierarchy"):
        r.read.add("hierarchy")
        return None, delimiter
    raw = r.raw("hierarchy")
    if not isinstance(raw, Mapping) or not isinstance(raw.get("csv"), str) or set(raw) - {"csv", "delimiter"}:
        raise r.error("hierarchy", f'must be a table like {{ csv = "disease.csv" }}, got {raw!r}')
    delimiter = raw.get("delimiter", delimiter)
    if not isinstance(delimiter, str) or len(delimiter) != 1:
        raise r.error("hierarchy", f"delimiter must be one character, got {delimiter!r}")
    file = Path(r.file)
    return (Path(raw["csv"]) if Path(raw["csv"]).is_absolute() else file.parent / raw["csv"]), delimiter


def _adversary(r: Table, name: str, sensitive: Sequence[str]) -> tuple[tuple[str, Any], ...] | None:
    """``adversary = { ... }``: the epsilon-privacy model's parameters, validated now by the model registry."""
    if not r.has("adversary"):
        r.read.add("adversary")
        return None
    from veil.models.registry import build

    raw = r.raw("adversary")
    if not isinstance(raw, Mapping):
        raise r.error("adversary", f"must be a table of epsilon-privacy parameters, got {raw!r}")
    table = {"type": "epsilon-privacy", "attribute": name, **raw}
    file = Path(r.file)
    build(
        table, where=f"{file}: {r.where} adversary", sensitive=tuple(sensitive), base_dir=file.parent
    )  # validates now; the audit builds it again from the parameters
    return tuple((k, v) for k, v in table.items())


def _attribute(data: Any, name: str, file: Path, sensitive: Sequence[str]) -> AttributeSettings:
    r, d = Table(data, f"[audit.attributes.{name}]", file), defaults(AttributeSettings)
    hierarchy, delimiter = _hierarchy(r)
    distance = r.text("distance", d["distance"], DISTANCES)
    if distance == "hierarchical" and hierarchy is None:
        raise r.error("distance", "'hierarchical' needs key 'hierarchy' (the sensitive values' taxonomy)")
    adversary = _adversary(r, name, sensitive)
    settings = AttributeSettings(
        distance=distance,
        hierarchy=hierarchy,
        delimiter=delimiter,
        similarity_level=r.integer("similarity_level", d["similarity_level"], minimum=1, interval=True),
        proximity_epsilon=r.number("proximity_epsilon", d["proximity_epsilon"], minimum=0),
        proximity_mode=r.text("proximity_mode", d["proximity_mode"], MODES),
        adversary=adversary,
    )
    r.finish()
    return settings


def parse_audit(data: Any, file: Path, sensitive: Sequence[str]) -> AuditSettings:
    """The ``[audit]`` table (``{}`` when absent); errors name the file and the key."""
    r, d = Table(data, "[audit]", file), defaults(AuditSettings)
    per = r.raw("attributes", {})
    if not isinstance(per, Mapping):
        raise r.error("attributes", f"must be a table of sensitive columns, got {per!r}")
    attributes: dict[str, AttributeSettings] = {}
    for name, table in per.items():
        if name not in sensitive:
            raise ConfigError(
                f"{file}: [audit.attributes.{name}] names {name!r}, which is not a sensitive column "
                f"(sensitive columns: {', '.join(map(repr, sensitive)) or 'none'})"
            )
        attributes[name] = _attribute(table, name, file, sensitive)
    unit: dict[str, Any] = {"maximum": 1.0, "above": 0.0, "interval": True}  # a share: in (0, 1]
    settings = AuditSettings(
        share=r.number("share", d["share"], **unit),
        l=r.integer("l", d["l"], minimum=1, interval=True),
        t=r.number("t", d["t"], minimum=0.0, maximum=1.0, interval=True),
        posterior=r.number("posterior", d["posterior"], **unit),
        proximity_share=r.number("proximity_share", d["proximity_share"], **unit),
        worst=r.integer("worst", d["worst"], minimum=1, interval=True),
        attributes=attributes,
    )
    r.finish()
    return settings
