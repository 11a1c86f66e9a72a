"""The equivalence-class size histogram every re-identification estimator reads: ``counts[i]`` classes
(q*-blocks) of ``sizes[i]`` records each, sizes ascending and distinct — ARX's ``RiskModelHistogram``, Veil's
``SizeHistogram`` (``Warehouse.sizes``) without its node.  numpy only.

Worked example: a sample whose classes have 1, 1, 2 and 4 records has ``n = 8`` records in ``u = 4`` classes,
``c(1) = 2`` classes of size 1 and ``c(2) = 1`` of size 2.

>>> h = ClassSizes.of([1, 4, 1, 2])
>>> h.sizes.tolist(), h.counts.tolist(), h.records, h.classes, h.of_size(1), h.of_size(3)
([1, 2, 4], [2, 1, 1], 8, 4, 2, 0)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True, eq=False)
class ClassSizes:
    """``counts[i]`` equivalence classes of ``sizes[i]`` records (sizes > 0, ascending, distinct)."""

    sizes: np.ndarray
    counts: np.ndarray

    def __post_init__(self) -> None:
        sizes = np.asarray(self.sizes, dtype=np.int64)
        counts = np.asarray(self.counts, dtype=np.int64)
        keep = (sizes > 0) & (counts > 0)
        sizes, counts = sizes[keep], counts[keep]
        if len(np.unique(sizes)) != len(sizes) or np.any(np.diff(sizes) < 0):
            sizes, inverse = np.unique(sizes, return_inverse=True)
            counts = np.bincount(inverse.reshape(-1), weights=counts).astype(np.int64)
        object.__setattr__(self, "sizes", sizes)
        object.__setattr__(self, "counts", counts)

    @classmethod
    def of(cls, class_sizes: Sequence[int] | np.ndarray) -> ClassSizes:
        """From one size per class."""
        sizes, counts = np.unique(np.asarray(class_sizes, dtype=np.int64), return_counts=True)
        return cls(sizes, counts)

    @classmethod
    def of_histogram(cls, histogram: Any) -> ClassSizes:
        """From a ``veil.counts.SizeHistogram`` (``sizes``, ``blocks``)."""
        return cls(np.asarray(histogram.sizes), np.asarray(histogram.blocks))

    @property
    def records(self) -> int:
        """``n``: records in the sample (Σ size · count)."""
        return int((self.sizes * self.counts).sum())

    @property
    def classes(self) -> int:
        """``u``: equivalence classes in the sample."""
        return int(self.counts.sum())

    def of_size(self, size: int) -> int:
        """``c(size)``: classes of exactly ``size`` records."""
        hit = self.sizes == size
        return int(self.counts[hit].sum())

    @property
    def empty(self) -> bool:
        return self.records == 0

    def without_smallest(self, m: int) -> ClassSizes:
        """The histogram without its ``m`` smallest classes (ties: any of equal size, the histogram is the same).

        >>> ClassSizes.of([1, 1, 2, 4]).without_smallest(3).document()
        [[4, 1]]
        """
        removed = np.clip(m - (np.cumsum(self.counts) - self.counts), 0, self.counts)
        return ClassSizes(self.sizes, self.counts - removed)

    def rows_of_smallest(self, m: int) -> int:
        """Records in the ``m`` smallest classes."""
        removed = np.clip(m - (np.cumsum(self.counts) - self.counts), 0, self.counts)
        return int((removed * self.sizes).sum())

    def document(self) -> list[list[int]]:
        """``[[size, classes], ...]`` for JSON."""
        return [[int(s), int(c)] for s, c in zip(self.sizes, self.counts)]
