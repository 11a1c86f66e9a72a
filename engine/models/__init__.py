"""Privacy models: pure numpy checkers of one node's sparse counts (docs/models.md)."""

from veil.models.base import Model, Needs, Properties, Verdict
from veil.models.closeness import NTCloseness, TCloseness
from veil.models.emd import Taxonomy, dense_equal, dense_ordered
from veil.models.epsilon import EpsilonPrivacy, posteriors
from veil.models.kanonymity import KAnonymity
from veil.models.ldiversity import (DistinctLDiversity, EntropyLDiversity, FrequencyLDiversity,
                                      MultiAttributeLDiversity, NpdRecursiveCLDiversity, PdRecursiveCLDiversity,
                                      RecursiveCLDiversity)
from veil.models.proximity import DeltaLDiversity, EMAnonymity
from veil.models.registry import FACTORIES, build

__all__ = [
    "FACTORIES", "Model", "Needs", "Properties", "Verdict", "build",
    "KAnonymity", "DistinctLDiversity", "FrequencyLDiversity", "EntropyLDiversity", "RecursiveCLDiversity",
    "PdRecursiveCLDiversity", "NpdRecursiveCLDiversity", "MultiAttributeLDiversity", "TCloseness", "NTCloseness",
    "Taxonomy", "dense_equal", "dense_ordered", "EMAnonymity", "DeltaLDiversity", "EpsilonPrivacy", "posteriors",
]
