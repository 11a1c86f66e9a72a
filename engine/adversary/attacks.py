"""Run every attack on every counted sensitive attribute of one node's counts: ``audit_counts``.

Thresholds come from ``[audit]`` (``veil.auditsettings``); what it leaves open comes from the configured
models (the largest integer ``l`` of an l-diversity model for the background-knowledge adversary, a
t-closeness model's ``t``, distance and hierarchy, an ε-privacy model's adversary, an (ε,m)-anonymity or
(δ,l)-diversity model's neighbourhood), else from the documented defaults (``l = 2``, ``t = 0.2``, a class III
adversary who knows the table's distribution with ε = 2, a relative neighbourhood of 5%).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from veil.adversary import distance, diversity
from veil.adversary.exposure import Audit, Exposure, Label, skipped
from veil.adversary.histogram import Histogram
from veil.auditsettings import AttributeSettings, AuditSettings
from veil.counts import NodeCounts, SensitiveDomain
from veil.errors import ConfigError
from veil.hierarchy import CsvSpec, ValueKind, build
from veil.models.base import Model
from veil.models.epsilon import EpsilonPrivacy
from veil.models.proximity import DeltaLDiversity, EMAnonymity


@dataclass(frozen=True)
class Resolved:
    """One attribute's effective audit parameters."""

    l: int
    t: float
    distance: str
    hierarchy: Path | None
    delimiter: str
    similarity_level: int
    proximity: tuple[float, str]
    adversary: EpsilonPrivacy


def _on(models: Sequence[Model], name: str, kind: str) -> list[Model]:
    return [m for m in models if m.type == kind and m.attribute == name]


def resolve(settings: AuditSettings, models: Sequence[Model], domain: SensitiveDomain) -> Resolved:
    """The effective parameters for ``domain``'s attribute: ``[audit]`` first, then the models, then defaults."""
    name = domain.name
    own: AttributeSettings = settings.attribute(name)
    ls = [
        int(math.floor(level))
        for m in models
        if m.type.endswith("l-diversity")
        and m.type != "delta-l-diversity"
        and m.attribute in (name, None)
        and (level := getattr(m, "l", None)) is not None
    ]
    closeness = _on(models, name, "t-closeness")
    t_model: Any = closeness[0] if closeness else None
    hierarchy = own.hierarchy or (Path(t_model.hierarchy) if t_model is not None and t_model.hierarchy else None)
    delimiter = own.delimiter if own.hierarchy else (t_model.delimiter if t_model is not None else ";")
    dist = own.distance or (t_model.distance if t_model is not None and not own.hierarchy else None)
    if dist is None:
        dist = "ordered" if domain.numeric else ("hierarchical" if hierarchy is not None else "equal")
    return Resolved(
        l=settings.l or max(ls, default=2),
        t=settings.t if settings.t is not None else min((m.t for m in closeness), default=0.2),  # type: ignore[attr-defined]
        distance=dist,
        hierarchy=hierarchy,
        delimiter=delimiter,
        similarity_level=own.similarity_level,
        proximity=_neighbourhood(own, models, name),
        adversary=_adversary(own, models, name),
    )


def _neighbourhood(own: AttributeSettings, models: Sequence[Model], name: str) -> tuple[float, str]:
    if own.proximity_epsilon is not None:
        return own.proximity_epsilon, own.proximity_mode
    for m in _on(models, name, "em-anonymity"):
        assert isinstance(m, EMAnonymity)
        return float(m.epsilon), str(m.mode)
    for m in _on(models, name, "delta-l-diversity"):
        assert isinstance(m, DeltaLDiversity)
        return 2 * float(m.delta), "absolute"
    return 0.05, "relative"


def _adversary(own: AttributeSettings, models: Sequence[Model], name: str) -> EpsilonPrivacy:
    if own.adversary is not None:
        from veil.models.registry import build as build_model

        model = build_model(
            dict(own.adversary), where=f"[audit.attributes.{name}] adversary", sensitive=(name,), base_dir=Path(".")
        )
        assert isinstance(model, EpsilonPrivacy)
        return model
    for m in _on(models, name, "epsilon-privacy"):
        assert isinstance(m, EpsilonPrivacy)
        return m
    return EpsilonPrivacy(
        epsilon=2.0, adversary="III", attribute=name, prior="table", where=f"[audit] default adversary of {name!r}"
    )


def groups(domain: SensitiveDomain, path: Path, delimiter: str, level: int) -> tuple[np.ndarray, list[str]]:
    """Each domain value's group at ``level`` of the sensitive hierarchy in ``path``, and the group labels."""
    kind = (
        (ValueKind.FLOAT if any(isinstance(v, float) for v in domain.values.tolist()) else ValueKind.INTEGER)
        if domain.numeric
        else ValueKind.TEXT
    )
    h = build(CsvSpec(path, delimiter), domain.name, domain.values.tolist(), kind)
    if not 1 <= level <= h.height:
        raise ConfigError(
            f"[audit.attributes.{domain.name}] similarity_level {level} is outside the sensitive "
            f"hierarchy {path} (levels 1..{h.height})"
        )
    index = {leaf: i for i, leaf in enumerate(h.leaves)}
    codes = h.codes(level)[[index[v] for v in domain.values.tolist()]]
    return codes.astype(np.int64), [str(x) for x in h.domain(level)]


def attribute_attacks(
    counts: NodeCounts, domain: SensitiveDomain, r: Resolved, settings: AuditSettings, label: Label
) -> list[Exposure]:
    """Every attack on one sensitive attribute."""
    h = Histogram.of(counts, domain.name)
    worst = settings.worst
    found: list[Exposure] = [
        *diversity.homogeneity(h, settings.share, worst, label),
        diversity.background(h, r.l, settings.share, worst, label),
        *diversity.posterior(h, settings.posterior, worst, label),
        distance.skewness(counts, h, r.distance, r.hierarchy, r.delimiter, r.t, worst, label),
    ]
    if r.hierarchy is not None:
        grp, names = groups(domain, r.hierarchy, r.delimiter, r.similarity_level)
        found.append(distance.similarity(h, grp, names, r.similarity_level, worst, label))
    else:
        found.append(
            skipped(
                "similarity",
                domain.name,
                "values of a block in one semantic group",
                "no sensitive hierarchy: set [audit.attributes.<column>] hierarchy = { csv = ... }",
            )
        )
    if domain.numeric:
        eps, mode = r.proximity
        found.append(distance.proximity(h, eps, mode, settings.proximity_share, worst, label))
    else:
        found.append(skipped("proximity", domain.name, "rows within ε of one value", "the attribute is not numeric"))
    found.append(distance.beliefs(r.adversary, counts, h, worst, label))
    return found


def audit_counts(
    counts: NodeCounts,
    settings: AuditSettings,
    models: Sequence[Model],
    subject: str,
    label: Label,
    attributes: Sequence[str] | None = None,
) -> Audit:
    """The audit of one generalized table given as counts (a lattice node, a release, a table as it is)."""
    names = list(attributes) if attributes is not None else [d.name for d in counts.sensitive]
    exposures: list[Exposure] = []
    for name in names:
        domain = counts.domain(name)
        exposures.extend(attribute_attacks(counts, domain, resolve(settings, models, domain), settings, label))
    levels = [int(x) for x in counts.node if isinstance(x, int)]
    node = tuple(levels) if counts.node and len(levels) == len(counts.node) else None
    return Audit(
        subject=subject,
        attributes=tuple(names),
        node=node,
        rows=counts.rows,
        blocks=counts.n_blocks,
        smallest_block=int(counts.sizes.min()) if counts.n_blocks else 0,
        exposures=tuple(exposures),
    )
