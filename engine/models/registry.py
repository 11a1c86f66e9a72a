"""Config ``type`` strings → model factories.  Each factory reads its parameters through ``Params``.

>>> from pathlib import Path
>>> m = build({"type": "recursive-cl-diversity", "c": 3, "l": 2}, where="veil.toml: [[models]] #2",
...           sensitive=("disease",), base_dir=Path("."))
>>> m.describe()
'recursive (c,l)-diversity (c=3, l=2) on disease'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from veil.errors import ConfigError
from veil.hierarchy import HierarchySpec, RowsSpec, TableSpec
from veil.models.base import Model
from veil.models.params import Params

# Each factory imports its model's module itself: a config loads only the checkers it names.


def _done(p: Params, model: Model) -> Model:
    p.finish()
    return model


def _k_anonymity(p: Params) -> Model:
    from veil.models.kanonymity import KAnonymity

    return _done(p, KAnonymity(k=p.integer("k"), where=p.where))


def _distinct(p: Params) -> Model:
    from veil.models.ldiversity import DistinctLDiversity

    return _done(p, DistinctLDiversity(l=p.integer("l", minimum=1), attribute=p.attribute(), where=p.where))


def _frequency(p: Params) -> Model:
    from veil.models.ldiversity import FrequencyLDiversity

    return _done(p, FrequencyLDiversity(l=p.number("l", minimum=1), attribute=p.attribute(), where=p.where))


def _entropy(p: Params) -> Model:
    from veil.models.ldiversity import EntropyLDiversity

    return _done(p, EntropyLDiversity(l=p.number("l", minimum=1), attribute=p.attribute(), where=p.where))


def _recursive(p: Params) -> Model:
    from veil.models.ldiversity import RecursiveCLDiversity

    return _done(p, RecursiveCLDiversity(c=p.number("c", above=0), l=p.integer("l", minimum=1),
                                         attribute=p.attribute(), where=p.where))


def _pd_recursive(p: Params) -> Model:
    from veil.models.ldiversity import PdRecursiveCLDiversity

    return _done(p, PdRecursiveCLDiversity(c=p.number("c", above=0), l=p.integer("l", minimum=1),
                                           allowed=p.strings("allowed"), attribute=p.attribute(), where=p.where))


def _npd_recursive(p: Params) -> Model:
    from veil.models.ldiversity import NpdRecursiveCLDiversity

    return _done(p, NpdRecursiveCLDiversity(
        c1=p.number("c1", above=0), c2=p.number("c2", minimum=0, maximum=100), l=p.integer("l", minimum=1),
        allowed=p.strings("allowed", default=()), protected=p.strings("protected"), attribute=p.attribute(),
        where=p.where))


def _multi_attribute(p: Params) -> Model:
    from veil.models.ldiversity import INSTANTIATIONS, MultiAttributeLDiversity

    inst = p.text("instantiation", choices=INSTANTIATIONS)
    l: float = p.integer("l", minimum=1) if inst in ("distinct", "recursive") else p.number("l", minimum=1)
    c = p.number("c", above=0) if p.has("c") else None
    return _done(p, MultiAttributeLDiversity(instantiation=inst, l=l, c=c, where=p.where))


def _hierarchy(p: Params) -> tuple[str | HierarchySpec | None, str]:
    """``{ csv = "disease.csv" }`` (a path), ``{ table = "dims.diseases", columns = [...] }`` (read by the run
    through its session, see ``veil.hierarchies.resolve``), or rows the Python API made of a DataFrame."""
    if not p.has("hierarchy"):
        return None, ";"
    raw = p.raw("hierarchy")
    if isinstance(raw, RowsSpec):
        return raw, ";"
    if isinstance(raw, Mapping) and "table" in raw:
        columns = raw.get("columns")
        if not isinstance(raw["table"], str) or not raw["table"] or set(raw) - {"table", "columns"} or not (
                columns is None or (isinstance(columns, (list, tuple)) and len(columns) >= 2
                                    and all(isinstance(c, str) and c for c in columns))):
            raise p.error("hierarchy", 'must be a table like hierarchy = { table = "dims.diseases" } (optionally with '
                                       f'columns = ["value", "level1", ...] naming at least two columns), got {raw!r}')
        return TableSpec(raw["table"], tuple(columns) if columns is not None else None), ";"
    shape = ('must be a table like hierarchy = { csv = "disease.csv" } (optionally with delimiter = ";") or '
             'hierarchy = { table = "dims.diseases" }')
    if not isinstance(raw, Mapping) or not isinstance(raw.get("csv"), str) or set(raw) - {"csv", "delimiter"}:
        raise p.error("hierarchy", f"{shape}, got {raw!r}")
    delimiter = raw.get("delimiter", ";")
    if not isinstance(delimiter, str) or len(delimiter) != 1:
        raise p.error("hierarchy", f"delimiter must be one character, got {delimiter!r}")
    return str(p.path(raw["csv"])), delimiter


def _t_closeness(p: Params) -> Model:
    from veil.models.closeness import DISTANCES, TCloseness

    t = p.number("t", minimum=0, maximum=1)
    distance = p.text("distance", choices=DISTANCES)
    hierarchy, delimiter = _hierarchy(p)
    return _done(p, TCloseness(t=t, distance=distance, attribute=p.attribute(), hierarchy=hierarchy,
                               delimiter=delimiter, where=p.where))


def _nt_closeness(p: Params) -> Model:
    from veil.models.closeness import DISTANCES, NTCloseness

    n = p.integer("n", minimum=1)
    t = p.number("t", minimum=0, maximum=1)
    distance = p.text("distance", choices=DISTANCES)
    hierarchy, delimiter = _hierarchy(p)
    return _done(p, NTCloseness(n=n, t=t, distance=distance, attribute=p.attribute(), hierarchy=hierarchy,
                                delimiter=delimiter, where=p.where))


def _em_anonymity(p: Params) -> Model:
    from veil.models.proximity import MODES, EMAnonymity

    return _done(p, EMAnonymity(epsilon=p.number("epsilon", minimum=0), m=p.number("m", minimum=1),
                                mode=p.text("mode", default="absolute", choices=MODES), attribute=p.attribute(),
                                where=p.where))


def _delta_l(p: Params) -> Model:
    from veil.models.proximity import DeltaLDiversity

    return _done(p, DeltaLDiversity(delta=p.number("delta", minimum=0), l=p.number("l", minimum=1),
                                    attribute=p.attribute(), where=p.where))


def _epsilon_privacy(p: Params) -> Model:
    from veil.models.epsilon import ADVERSARIES, SHAPES, EpsilonPrivacy

    epsilon = p.number("epsilon", above=1)
    adversary = p.text("adversary", choices=ADVERSARIES)
    prior: tuple[tuple[str, float], ...] | str | None = None
    if p.has("prior"):
        raw: Any = p.raw("prior")
        if isinstance(raw, str):
            if raw not in SHAPES:
                raise p.error("prior", f"must be a table of value = σ(s), 'uniform' or 'table', got {raw!r}")
            prior = raw
        elif isinstance(raw, Mapping):
            prior = tuple((str(k), v) for k, v in raw.items())
        else:
            raise p.error("prior", f"must be a table of value = σ(s), 'uniform' or 'table', got {raw!r}")
    stubbornness = p.number("stubbornness", minimum=1) if p.has("stubbornness") else None
    known = p.integer("known_rows", default=0, minimum=0)
    return _done(p, EpsilonPrivacy(epsilon=epsilon, adversary=adversary, attribute=p.attribute(), prior=prior,
                                   stubbornness=stubbornness, known_rows=known, where=p.where))



def _average_risk(p: Params) -> Model:
    from veil.models.risk import AverageRisk

    return _done(p, AverageRisk(threshold=p.number("threshold", above=0, maximum=1), where=p.where))


def _population_uniqueness(p: Params) -> Model:
    from veil.models.risk import PopulationUniqueness
    from veil.reidentification.uniqueness import MODELS

    threshold = p.number("threshold", above=0, maximum=1)
    model = p.text("model", default="dankar", choices=MODELS)
    fraction = p.number("sampling_fraction", above=0, maximum=1) if p.has("sampling_fraction") else None
    population = p.integer("population", minimum=1) if p.has("population") else None
    return _done(p, PopulationUniqueness(threshold=threshold, model=model, sampling_fraction=fraction,
                                         population=population, where=p.where))


FACTORIES: dict[str, Callable[[Params], Model]] = {
    "k-anonymity": _k_anonymity,
    "distinct-l-diversity": _distinct,
    "frequency-l-diversity": _frequency,
    "entropy-l-diversity": _entropy,
    "recursive-cl-diversity": _recursive,
    "pd-recursive-cl-diversity": _pd_recursive,
    "npd-recursive-cl-diversity": _npd_recursive,
    "multi-attribute-l-diversity": _multi_attribute,
    "t-closeness": _t_closeness,
    "nt-closeness": _nt_closeness,
    "em-anonymity": _em_anonymity,
    "delta-l-diversity": _delta_l,
    "epsilon-privacy": _epsilon_privacy,
    "average-risk": _average_risk,
    "population-uniqueness": _population_uniqueness,
}


def build(table: Mapping[str, Any], *, where: str, sensitive: Sequence[str], base_dir: Path) -> Model:
    """Build one model from its ``[[models]]`` table; errors name ``where`` and the parameter."""
    kind = table.get("type")
    if not isinstance(kind, str):
        raise ConfigError(f"{where}: missing required key 'type' (one of {', '.join(sorted(FACTORIES))})")
    factory = FACTORIES.get(kind)
    if factory is None:
        raise ConfigError(f"{where}: unknown model type {kind!r}; known types: {', '.join(sorted(FACTORIES))}")
    return factory(Params(table, f"{where} ({kind})", tuple(sensitive), base_dir))
