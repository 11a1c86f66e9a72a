"""Builders of ``NodeCounts`` for the model tests (blocks given as dense histograms, or a pandas frame)."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
from hypothesis import HealthCheck, settings

from veil.counts import BlockCounts, NodeCounts, SensitiveDomain

# Property tests run 150 examples (CI: tests/models well under two minutes); ``VEIL_HYPOTHESIS_PROFILE=hard``
# runs 3000, to hunt for counter-examples to the monotonicity claims.  Applied per test, not as a global
# hypothesis profile, so the rest of the suite keeps its own settings.
HARD = os.environ.get("VEIL_HYPOTHESIS_PROFILE") == "hard"
PROPERTY = settings(
    max_examples=3000 if HARD else 150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow] + ([HealthCheck.filter_too_much] if HARD else []),
)


def domain(name: str, values: Sequence, total: Sequence[int], numeric: bool | None = None) -> SensitiveDomain:
    """A sensitive domain; numeric unless told otherwise when every value is a number."""
    if numeric is None:
        numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
    vals = np.asarray(list(values)) if numeric else np.asarray(list(values), dtype=object)
    return SensitiveDomain(name, vals, np.asarray(total, dtype=np.int64), numeric=numeric)


def nodes(hists: Sequence[Sequence[int]], dom: SensitiveDomain, node: tuple = (0,), generalizers=None) -> NodeCounts:  # noqa: ANN001
    """One block per histogram row (QI code = row index)."""
    h = np.asarray(hists, dtype=np.int64).reshape(len(hists), dom.size)
    b, v = np.nonzero(h)
    return NodeCounts.from_cells(
        ("q",), node, b[:, None], v[:, None], h[b, v], (max(len(h), 1),), (dom,), generalizers=generalizers
    )


def joint_nodes(joints: Sequence[np.ndarray], doms: Sequence[SensitiveDomain]) -> NodeCounts:
    """One block per joint histogram (shape = the domains' sizes)."""
    j = np.asarray(joints, dtype=np.int64)
    idx = np.nonzero(j)
    return NodeCounts.from_cells(
        ("q",), (0,), idx[0][:, None], np.column_stack(idx[1:]), j[idx], (max(len(j), 1),), tuple(doms)
    )


def domain_of_hists(
    name: str, values: Sequence, hists: Sequence[Sequence[int]], extra=None, numeric: bool | None = None
) -> SensitiveDomain:  # noqa: ANN001
    total = np.asarray(hists, dtype=np.int64).sum(axis=0)
    if extra is not None:
        total = total + np.asarray(extra, dtype=np.int64)
    return domain(name, values, total, numeric)


def frame_counts(
    df,
    qis: Sequence[str],
    sensitive: Sequence[str],
    numeric: Sequence[str] = (),  # noqa: ANN001
    generalizers=None,
    node=None,
) -> NodeCounts:  # noqa: ANN001
    """The bottom node of a pandas frame: QI codes = sorted factorization, sensitive codes = sorted values."""
    import pandas as pd

    qcodes, cards = [], []
    for q in qis:
        codes, uniq = pd.factorize(df[q], sort=True)
        qcodes.append(codes)
        cards.append(len(uniq))
    doms, scodes = [], []
    for s in sensitive:
        codes, uniq = pd.factorize(df[s], sort=True)
        total = np.bincount(codes, minlength=len(uniq))
        isnum = s in numeric
        vals = np.asarray(uniq.tolist()) if isnum else np.asarray(uniq.tolist(), dtype=object)
        doms.append(SensitiveDomain(s, vals, total, numeric=isnum))
        scodes.append(codes)
    cols = np.column_stack(qcodes + scodes) if (qcodes or scodes) else np.zeros((len(df), 0), dtype=np.int64)
    cells, count = np.unique(cols, axis=0, return_counts=True)
    d = len(qis)
    return NodeCounts.from_cells(
        tuple(qis),
        node or tuple(0 for _ in qis),
        cells[:, :d],
        cells[:, d:],
        count,
        tuple(cards),
        tuple(doms),
        generalizers=generalizers,
    )


def hist(matrix: Sequence[Sequence[int]]) -> BlockCounts:
    """Sparse histograms of a dense (blocks, values) matrix over values 0..V-1."""
    m = np.asarray(matrix, dtype=np.int64)
    v = m.shape[1]
    return BlockCounts.from_dense(m, SensitiveDomain("s", np.arange(v), m.sum(axis=0), numeric=True))
