"""Privacy models: pure numpy checkers of one node's counts (SPEC §2, §3, §5)."""

from engine.models.base import Model, Needs, Properties, Verdict
from engine.models.closeness import NTCloseness, TCloseness, Taxonomy, emd_equal, emd_ordered
from engine.models.epsilon import EpsilonPrivacy, posteriors
from engine.models.kanonymity import KAnonymity
from engine.models.ldiversity import (DistinctLDiversity, EntropyLDiversity, FrequencyLDiversity,
                                      MultiAttributeLDiversity, NpdRecursiveCLDiversity, PdRecursiveCLDiversity,
                                      RecursiveCLDiversity)
from engine.models.proximity import DeltaLDiversity, EMAnonymity
from engine.models.registry import FACTORIES, build

__all__ = [
    "FACTORIES", "Model", "Needs", "Properties", "Verdict", "build",
    "KAnonymity", "DistinctLDiversity", "FrequencyLDiversity", "EntropyLDiversity", "RecursiveCLDiversity",
    "PdRecursiveCLDiversity", "NpdRecursiveCLDiversity", "MultiAttributeLDiversity", "TCloseness", "NTCloseness",
    "Taxonomy", "emd_equal", "emd_ordered", "EMAnonymity", "DeltaLDiversity", "EpsilonPrivacy", "posteriors",
]
