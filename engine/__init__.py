"""Veil: a SQL-backed anonymization engine (k-anonymity, l-diversity, t-closeness, ε-privacy).

From Python: ``veil.anonymize(df, ...)``, ``veil.check(df, ...)``, ``veil.audit(df, ...)`` and ``veil.risk(df, ...)``
(see ``veil.notebook``), loaded on first use.  Importing ``veil`` imports nothing else: ``import veil`` and the ``veil`` command stay fast (``veil
--help`` loads no numpy, SQLAlchemy, pandas or driver), and each module imports what it needs.
"""

from typing import Any

__version__ = "0.1.0"
__all__ = ["anonymize", "audit", "check", "risk"]

# the attack audit lives in veil.adversary, re-identification risk in veil.reidentification
_API = ("anonymize", "audit", "check", "risk")


def __getattr__(name: str) -> Any:
    if name in _API:
        from veil import notebook

        return getattr(notebook, name)
    raise AttributeError(f"module 'veil' has no attribute {name!r}")
