"""Privacy models: pure numpy checkers of one node's sparse counts (docs/models.md).

Each model registers itself where it is defined (``@MODELS.register("k-anonymity")``, ``veil.registry``): the
registry lists the types without importing them, and each model's module is imported on first use
(``veil.models.KAnonymity``, or building it from a config with ``build``), so a run loads only the checkers its
config names.
"""

from importlib import import_module
from typing import Any

from veil.models.base import Model, Needs, Properties, Verdict
from veil.models.registry import build
from veil.registry import MODELS

_LAZY = {
    "NTCloseness": "closeness",
    "TCloseness": "closeness",
    "Taxonomy": "emd",
    "dense_equal": "emd",
    "dense_ordered": "emd",
    "EpsilonPrivacy": "epsilon",
    "posteriors": "epsilon",
    "KAnonymity": "kanonymity",
    "DistinctLDiversity": "ldiversity",
    "EntropyLDiversity": "ldiversity",
    "FrequencyLDiversity": "ldiversity",
    "MultiAttributeLDiversity": "ldiversity",
    "NpdRecursiveCLDiversity": "ldiversity",
    "PdRecursiveCLDiversity": "ldiversity",
    "RecursiveCLDiversity": "ldiversity",
    "DeltaLDiversity": "proximity",
    "EMAnonymity": "proximity",
}

__all__ = [
    "MODELS",
    "Model",
    "Needs",
    "Properties",
    "Verdict",
    "build",
    "KAnonymity",
    "DistinctLDiversity",
    "FrequencyLDiversity",
    "EntropyLDiversity",
    "RecursiveCLDiversity",
    "PdRecursiveCLDiversity",
    "NpdRecursiveCLDiversity",
    "MultiAttributeLDiversity",
    "TCloseness",
    "NTCloseness",
    "Taxonomy",
    "dense_equal",
    "dense_ordered",
    "EMAnonymity",
    "DeltaLDiversity",
    "EpsilonPrivacy",
    "posteriors",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'veil.models' has no attribute {name!r}")
    return getattr(import_module(f"veil.models.{module}"), name)
