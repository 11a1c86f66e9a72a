"""The source's rows grouped once and held here (``queries.source_cells``, fetched by ``SourceScan.cells``), where
a statement costs more than a pass over the data (Spark) and the rows fit ``local_cells``: one ``GROUP BY`` gives
both what the scan of the source's values finds (``SourceScan.found_in``) and the base frequency set, coded here
through the hierarchies (``coded``) — in place of the scan, the coding statement and the fetch of its cells.

numpy only: the cells arrive factorized (``Session.factors``: each column's codes and its distinct values).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from veil.counts import sorted_sum
from veil.errors import BackendError
from veil.grouping import pack
from veil.hierarchy import Hierarchy


@dataclass(frozen=True)
class SourceCells:
    """The source's rows grouped by its counted ``columns`` (quasi-identifiers, then sensitive columns, then the
    ``carried`` published columns a release takes by value) and by whether each other null-checked column is NULL:
    per cell, each column's value as a code into ``values[k]`` (``codes[k]``, ``-1`` for NULL), the null-checked
    columns' NULL flags (``flags``, one column each) and its rows ``n``.

    >>> cells = SourceCells(
    ...     [np.array([0, 0, 1, -1]), np.array([0, 1, 0, 0])], [["a", "b"], ["x", "y"]],
    ...     np.array([[False], [True], [False], [False]]), np.array([3, 1, 2, 4]))
    >>> cells.rows, cells.kept, cells.nulls(0), cells.flagged(0)
    (10, 5, 4, 1)
    >>> cells.kept_values(0), cells.kept_values(1)
    ([('a', 3), ('b', 2)], [('x', 5)])
    """

    codes: Sequence[np.ndarray]
    values: Sequence[Sequence[Any]]
    flags: np.ndarray
    n: np.ndarray
    carried: int = 0  # the last columns of ``codes``: published, not counted (``valued``; ``coded`` sums them away)

    @property
    def rows(self) -> int:
        return int(self.n.sum())

    @cached_property
    def complete(self) -> np.ndarray:
        """The cells with no NULL in any column: the rows the NULL policy keeps (``nulls = "drop"``)."""
        mask = ~self.flags.any(axis=1) if self.flags.shape[1] else np.ones(len(self.n), dtype=bool)
        for codes in self.codes:
            mask &= codes >= 0
        return mask

    @property
    def kept(self) -> int:
        return int(self.n[self.complete].sum())

    def nulls(self, k: int) -> int:
        """The rows where column ``k`` is NULL."""
        return int(self.n[self.codes[k] < 0].sum())

    def flagged(self, j: int) -> int:
        """The rows where null-checked column ``j`` is NULL."""
        return int(self.n[self.flags[:, j]].sum())

    def kept_values(self, k: int) -> list[tuple[Any, int]]:
        """Column ``k``'s values with their kept rows (a value only in rows left out is no value of the table)."""
        mask = self.complete
        rows = np.bincount(self.codes[k][mask], weights=self.n[mask], minlength=len(self.values[k]))
        return [(v, int(r)) for v, r in zip(self.values[k], rows.astype(np.int64)) if r]

    def coded(self, hierarchies: Sequence[Hierarchy], sensitive: Sequence[Sequence[Any]]) -> dict[str, np.ndarray]:
        """The base frequency set of the kept rows, as ``queries.base_leaves`` gives it: ``q{i}_0`` each QI's leaf
        code (its value's place in ``hierarchies[i].leaves``), ``s{j}`` each sensitive column's code (its value's
        place in ``sensitive[j]``, the domain), ``n`` the rows; cells of the same codes merged (the carried columns
        summed away)."""
        out, distinct = self._leaf_coded(hierarchies, sensitive)
        names = [k for k in out if k != "n"]
        return out if distinct and not self.carried else merged(out, names)

    def valued(
        self, hierarchies: Sequence[Hierarchy], sensitive: Sequence[Sequence[Any]]
    ) -> tuple[dict[str, np.ndarray], list[Sequence[Any]]]:
        """``coded``'s columns with the carried ones' codes (``c{j}``, into the values returned), cells not merged:
        the kept rows with every published column, for a release's candidate rolled up here.

        >>> cells = SourceCells([np.array([0, 0, 1]), np.array([1, 0, 0])], [[3, 4], ["x", "y"]],
        ...     np.zeros((3, 0), dtype=bool), np.array([2, 5, 1]), carried=1)
        >>> h = Hierarchy("a", (3, 4), (("*", "*"),))
        >>> cells.coded([h], [])["n"].tolist(), cells.valued([h], [])[0]["c0"].tolist()
        ([7, 1], [1, 0, 0])
        """
        out, _distinct = self._leaf_coded(hierarchies, sensitive)
        first, mask = len(self.codes) - self.carried, self.complete
        out.update({f"c{j}": np.asarray(self.codes[first + j][mask], dtype=np.int32) for j in range(self.carried)})
        return out, list(self.values[first:])

    def _leaf_coded(
        self, hierarchies: Sequence[Hierarchy], sensitive: Sequence[Sequence[Any]]
    ) -> tuple[dict[str, np.ndarray], bool]:
        """The kept cells' codes (``coded``'s columns), and whether distinct values got distinct codes."""
        mask = self.complete
        out: dict[str, np.ndarray] = {}
        distinct = True  # every value its own code: the kept cells (no flag set, distinct values) code apart
        names = [f"q{i}_0" for i in range(len(hierarchies))] + [f"s{j}" for j in range(len(sensitive))]
        domains = [h.leaves for h in hierarchies] + list(sensitive)
        for k, (name, domain) in enumerate(zip(names, domains)):
            place = {v: i for i, v in enumerate(domain)}
            lookup = np.fromiter((place.get(v, -1) for v in self.values[k]), dtype=np.int32, count=len(self.values[k]))
            found = lookup[lookup >= 0]
            distinct &= len(np.unique(found)) == len(found)
            out[name] = lookup[self.codes[k][mask]] if len(lookup) else np.zeros(int(mask.sum()), dtype=np.int32)
        out["n"] = self.n[mask].astype(np.int64)
        lost = np.zeros(len(out["n"]), dtype=bool)
        for name in names:
            lost |= out[name] < 0
        if lost.any():
            raise BackendError(
                f"coding the base frequency set lost rows ({int(out['n'][~lost].sum())} of {int(out['n'].sum())}); "
                "a source value is not a value of its hierarchy or domain"
            )
        return out, distinct


def merged(data: dict[str, np.ndarray], names: Sequence[str]) -> dict[str, np.ndarray]:
    """Cells of the same codes summed (where distinct source values code alike, or carried columns are summed away):
    the codes packed into one int64 key where they fit and the keys sorted with their rows (``counts.sorted_sum``:
    the 1M census's 896,367 cells, one column sorted, not the rows), else the rows sorted.

    >>> merged({"a": np.array([1, 0, 1]), "b": np.array([2, 2, 2]), "n": np.array([1, 2, 3])}, ["a", "b"])["n"].tolist()
    [2, 4]
    """
    radices = [int(data[name].max(initial=0)) + 1 for name in names]
    if math.prod(radices) < 1 << 62:
        key = pack([(k, data[name], radix) for k, (name, radix) in enumerate(zip(names, radices))], len(data["n"]))
        keys, n = sorted_sum(key, np.asarray(data["n"], dtype=np.int64))
        del key
        out: dict[str, np.ndarray] = {}
        for name, radix in zip(reversed(names), reversed(radices)):
            keys, code = np.divmod(keys, radix)
            out[name] = code.astype(np.int32)
        return {**{name: out[name] for name in names}, "n": n}
    rows = np.column_stack([data[name] for name in names])
    unique, inverse = np.unique(rows, axis=0, return_inverse=True)
    summed = np.bincount(inverse.reshape(-1), weights=data["n"], minlength=len(unique)).astype(np.int64)
    return {**{name: unique[:, k] for k, name in enumerate(names)}, "n": summed}
