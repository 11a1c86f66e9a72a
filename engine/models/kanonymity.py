"""k-anonymity (Samarati & Sweeney, 1998; docs/models.md §2.1): every q*-block has ``n(E) >= k``; achieved
``k* = min n(E)``.

>>> from veil.counts import NodeCounts
>>> import numpy as np
>>> nc = NodeCounts.from_cells(("zip",), (0,), np.array([[0], [1]]), np.zeros((2, 0)), np.array([4, 2]), (2,))
>>> v = KAnonymity(k=3).check(nc)
>>> v.passed.tolist(), v.achieved
([True, False], 2.0)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from veil.counts import NodeCounts, SensitiveDomain
from veil.errors import ConfigError
from veil.models.base import Needs, Properties, Reference, Verdict
from veil.models.params import Params
from veil.registry import MODELS


@MODELS.register("k-anonymity")
@dataclass(frozen=True)
class KAnonymity:
    type: ClassVar[str]  # set by the registration above
    reference: ClassVar[Reference] = Reference(achieved="`min n(E)`", sample={"k": 2})
    k: int
    where: str = "k-anonymity"

    @classmethod
    def from_params(cls, p: Params) -> KAnonymity:
        """The model of a ``[[models]]`` table."""
        return cls(k=p.integer("k"), where=p.where)

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise ConfigError(f"{self.where}: parameter 'k' must be a whole number >= 1, got {self.k!r}")

    @property
    def attribute(self) -> str | None:
        return None

    @property
    def properties(self) -> Properties:
        return Properties(monotone=True, monotone_with_suppression=True, needs=Needs.SIZES, min_block_size=self.k)

    def levels(self, counts: NodeCounts) -> np.ndarray:
        """``n(E)`` per block."""
        return counts.sizes.astype(np.float64)

    def check(self, counts: NodeCounts) -> Verdict:
        sizes = counts.sizes
        return Verdict(sizes >= self.k, float(sizes.min()) if len(sizes) else None)

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        return None

    def describe(self) -> str:
        return f"k-anonymity (k={self.k})"
