"""What one attack exposes (rows, blocks, the worst blocks) and the audit of a whole table: plain values
with their stable JSON documents.

>>> e = exposure("homogeneity", "condition", "one value only", {}, "share of the most frequent value",
...              score=np.array([0.5, 0.5, 1.0]), exposed=np.array([False, False, True]),
...              sizes=np.array([4, 4, 4]), worst=2, describe=lambda b: f"block {b}", label=lambda b: [str(b)])
>>> e.blocks, e.rows, [w.block for w in e.worst]
(1, 4, [2, 0])
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Label = Callable[[int], list[str]]


def shown(v: Any) -> str:
    """A sensitive value as the audit prints it (``50000.0`` → ``50000``)."""
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    if isinstance(v, (dt.date, dt.datetime)):
        return v.isoformat()
    return str(v)


def number(x: float | None) -> float | None:
    """A score for JSON: ``None`` when infinite or undefined, else rounded to 6 significant digits."""
    if x is None or not math.isfinite(float(x)):
        return None
    return float(f"{float(x):.6g}")


@dataclass(frozen=True)
class WorstBlock:
    block: int
    key: list[str]
    size: int
    score: float | None
    exposed: bool
    detail: str

    def document(self) -> dict[str, Any]:
        return {
            "block": self.block,
            "key": self.key,
            "size": self.size,
            "score": number(self.score),
            "exposed": self.exposed,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class Exposure:
    """One attack on one sensitive attribute: how many blocks and rows it exposes, by which definition."""

    attack: str
    attribute: str
    definition: str
    parameters: dict[str, Any]
    measure: str  # what a block's score is
    blocks: int = 0
    rows: int = 0
    worst: tuple[WorstBlock, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    skipped: str | None = None  # why the attack could not be evaluated (e.g. no hierarchy)

    def document(self) -> dict[str, Any]:
        return {
            "attack": self.attack,
            "attribute": self.attribute,
            "definition": self.definition,
            "parameters": self.parameters,
            "measure": self.measure,
            "blocks": self.blocks,
            "rows": self.rows,
            "worst": [w.document() for w in self.worst],
            **({"extra": self.extra} if self.extra else {}),
            "skipped": self.skipped,
        }


def exposure(
    attack: str,
    attribute: str,
    definition: str,
    parameters: dict[str, Any],
    measure: str,
    *,
    score: np.ndarray,
    exposed: np.ndarray,
    sizes: np.ndarray,
    worst: int,
    describe: Callable[[int], str],
    label: Label,
    rows: int | None = None,
    ascending: bool = False,
    extra: dict[str, Any] | None = None,
) -> Exposure:
    """Count the exposed blocks and rows and list the ``worst`` blocks: highest score first (lowest with
    ``ascending``), ties to the larger block.  ``rows`` overrides the exposed blocks' sizes (an attack that
    exposes only some rows of a block)."""
    key = score if ascending else -score
    order = np.lexsort((np.arange(len(sizes)), -sizes, key))[:worst]
    listed = tuple(
        WorstBlock(int(b), label(int(b)), int(sizes[b]), float(score[b]), bool(exposed[b]), describe(int(b)))
        for b in order.tolist()
    )
    return Exposure(
        attack,
        attribute,
        definition,
        parameters,
        measure,
        blocks=int(exposed.sum()),
        rows=int(sizes[exposed].sum()) if rows is None else int(rows),
        worst=listed,
        extra=extra or {},
    )


def skipped(attack: str, attribute: str, definition: str, reason: str) -> Exposure:
    return Exposure(attack, attribute, definition, {}, "", skipped=reason)


@dataclass(frozen=True)
class Audit:
    """Every attack on every audited sensitive attribute of one generalized table."""

    subject: str
    attributes: tuple[str, ...]
    node: tuple[int, ...] | None
    rows: int
    blocks: int
    smallest_block: int
    exposures: tuple[Exposure, ...]

    def document(self) -> dict[str, Any]:
        """The stable JSON of ``veil audit``."""
        return {
            "subject": self.subject,
            "attributes": list(self.attributes),
            "node": list(self.node) if self.node is not None else None,
            "rows": self.rows,
            "blocks": self.blocks,
            "smallest_block": self.smallest_block,
            "attacks": [e.document() for e in self.exposures],
        }

    def find(self, attack: str, attribute: str) -> Exposure:
        for e in self.exposures:
            if e.attack == attack and e.attribute == attribute:
                return e
        raise KeyError((attack, attribute))


def values_text(domain_values: Sequence[Any] | np.ndarray, pairs: Sequence[tuple[int, int]], limit: int = 4) -> str:
    """``cancer 2, heart 1, …`` for a block's (value index, count) pairs."""
    shown_pairs = [f"{shown(domain_values[v])} {c}" for v, c in pairs[:limit]]
    more = f", … ({len(pairs) - limit} more)" if len(pairs) > limit else ""
    return ", ".join(shown_pairs) + more
