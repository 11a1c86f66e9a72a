"""What every privacy model is and declares (docs/models.md §2, §6).  numpy only, no SQL.

A model is a frozen dataclass of its parameters with

- ``check(counts) -> Verdict``: one boolean per q*-block of the node (in ``counts``' block order) and the
  table's achieved level (``None`` when infinite or undefined);
- ``levels(counts) -> np.ndarray``: each block's own achieved level (float; ``inf`` where no parameter value
  makes the block pass, e.g. recursive (c,l) with ``m < l``).  ``Verdict.achieved`` is their ``min`` or
  ``max`` (``properties.achieved``), so a caller can take the level of any subset of blocks; a block passes iff
  its level passes the model's comparison with its parameter (docs/models.md §7).

``counts`` may be a whole node or a chunk of its complete blocks: a block's verdict and level never depend on
other blocks, except for models with ``needs = SUPERSETS`` ((n,t)-closeness), which see the whole node.
It declares, as data, what the search may rely on:

- ``monotone``: merging two passing blocks gives a passing block, so without suppression a node that
  passes makes every node above it pass (and a node that fails makes every node below it fail);
- ``monotone_with_suppression``: a block containing a passing block passes, so the rows suppressed never
  grow when generalizing, and "passes within the suppression budget" is monotone too;
- ``needs``: what of the counts it reads (the query layer may skip the histogram for ``SIZES``);
- ``achieved``: whether the table's level is the minimum or the maximum over blocks, so the caller can
  evaluate a node in slices of blocks and combine (bounded memory for huge nodes);
- ``min_block_size``: every block with fewer rows fails the model whatever its histogram, so the warehouse
  can account those blocks from their sizes alone (in SQL) and ship histograms only of larger blocks.  A
  model with ``needs = SIZES`` is decided by it exactly: a block passes iff ``n(E) >= min_block_size``;
- ``reduction``: a block passes iff a statistic of its histogram reaches a threshold (distinct and entropy
  l-diversity), so the warehouse can return verdicts per block size instead of the histograms.

Each claim is backed by a hypothesis property test in ``tests/models``; a claim that failed is ``False``
with the counter-example's story in ``note``.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from veil.counts import NodeCounts, SensitiveDomain
from veil.models.params import Params


class Needs(enum.Enum):
    SIZES = "sizes"  # only n(E)
    HISTOGRAM = "histogram"  # n(E, s) of one sensitive attribute
    VALUES = "values"  # n(E, s) with numeric s in sorted order
    JOINT = "joint"  # all sensitive attributes jointly (multi-attribute l-diversity)
    SUPERSETS = "supersets"  # block keys and hierarchies, to roll up to nodes above ((n,t)-closeness)


class Statistic(enum.Enum):
    """A per-block number of one sensitive attribute's counts ``n(E, s)`` that a database computes as well."""

    DISTINCT = "distinct"  # m, the number of distinct values in the block
    ENTROPY = "entropy"  # exp(-sum p ln p), exactly m when the block's counts are all equal
    ORDERED = "ordered"  # EMD to the whole table, ordered ground distance (numeric values)
    EQUAL = "equal"  # EMD to the whole table, equal ground distance


@dataclass(frozen=True)
class Reduction:
    """A model that passes a block iff ``statistic >= threshold`` (its level is the statistic, the table's the
    minimum), or with ``at_most`` iff ``statistic <= threshold`` (the table's level the maximum): the search
    may have the warehouse compute the verdicts instead of shipping histograms.  Where
    floating point cannot decide a block (near the threshold: within a thousand times the checker's own error
    bound), the node is evaluated from its histograms by ``check`` as usual, so the verdicts stay exact."""

    statistic: Statistic
    attribute: str
    threshold: float
    at_most: bool = False


@dataclass(frozen=True)
class Properties:
    monotone: bool
    monotone_with_suppression: bool
    needs: Needs
    note: str = ""
    achieved: str = "min"  # the table's level is the min ("min") or max ("max") of the blocks' levels,
    #                         so verdicts computed on slices of blocks combine (None: infinite, the worst)
    min_block_size: int = 1  # blocks smaller than this fail whatever their histogram
    reduction: Reduction | None = None  # decided per block by a statistic a database can compute


@dataclass(frozen=True, eq=False)
class Verdict:
    """Per-block verdicts of one model at one node, and the table's achieved level."""

    passed: np.ndarray
    achieved: float | None

    @property
    def violating(self) -> int:
        return int((~self.passed).sum())


@dataclass(frozen=True)
class Reference:
    """What the config reference (``docs/gen_reference.py``) says of a model type beyond its parameters: the
    ``achieved`` level as ``check`` and the catalog report it (Markdown), and a ``sample`` ``[[models]]`` table
    (without ``type``) setting every parameter, in a config whose sensitive columns are ``s`` (text: ``flu``,
    ``cancer``...) and ``n`` (numeric) — parsed so that the page lists every parameter the model reads."""

    achieved: str
    sample: Mapping[str, Any]


@runtime_checkable
class Model(Protocol):
    """A privacy model.  Each model class registers itself (``@MODELS.register("k-anonymity")``, ``veil.registry``),
    which sets its ``type``; ``from_params`` builds it from its ``[[models]]`` table (``veil.models.build``)."""

    type: ClassVar[str]
    reference: ClassVar[Reference]

    @classmethod
    def from_params(cls, p: Params) -> Model:
        """The model of its ``[[models]]`` table, each parameter read through ``p`` (``build`` then rejects the
        keys no parameter read)."""

    @property
    def attribute(self) -> str | None:
        """The sensitive column judged (``None`` for k-anonymity)."""

    @property
    def properties(self) -> Properties: ...

    def check(self, counts: NodeCounts) -> Verdict: ...

    def levels(self, counts: NodeCounts) -> np.ndarray:
        """Each block's achieved level (float, ``inf`` when no parameter makes it pass)."""

    def validate(self, domains: Mapping[str, SensitiveDomain]) -> None:
        """Check parameters against the data once the domains are known (raise ``ConfigError``)."""

    def describe(self) -> str:
        """One line, e.g. ``k-anonymity (k=4)``."""
