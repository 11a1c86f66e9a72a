"""Veil's one small error hierarchy.  Imports nothing.

Every message is one line that names the file, key, table, column, model or value at fault; the CLI
prints it as is and exits 1 (``NoSolutionError``: exit 2).  Driver errors never escape a backend: they
are translated into ``BackendError`` at the backend boundary.
"""

from __future__ import annotations


class VeilError(Exception):
    """Base of every error Veil raises on purpose.  ``details`` (JSON-ready) join the failure document
    that ``--json`` prints: ``{"status": <status>, "error": <message>, **details}``."""

    exit_code = 1
    status = "failed"

    def __init__(self, message: str = "", **details: object) -> None:
        super().__init__(message)
        self.details = details


class ConfigError(VeilError):
    """The release config is wrong: unknown key, wrong type, missing required key, bad model parameter."""


class SourceError(VeilError):
    """The warehouse source is not what the config says: missing table or column, NULLs, bad types."""


class HierarchyError(VeilError):
    """A generalization hierarchy is invalid: not covering the data, not a function chain, ragged."""


class BackendError(VeilError):
    """The database failed (connection, SQL execution); the driver's error, translated."""


class NoSolutionError(VeilError):
    """No lattice node satisfies the privacy models (nothing is published)."""

    exit_code = 2
    status = "no_solution"


class BusyError(VeilError):
    """Another run holds the release lock."""


class ReleaseError(VeilError):
    """A release step (materialize, verify, view swap) failed; the previous release stays published."""
