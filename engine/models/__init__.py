"""Privacy models: pure numpy checkers of one node's counts (SPEC §2, §3, §5)."""

from engine.models.base import Model, Needs, Properties, Verdict
from engine.models.registry import FACTORIES, build

__all__ = ["FACTORIES", "Model", "Needs", "Properties", "Verdict", "build"]
