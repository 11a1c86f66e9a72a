"""Veil's one small error hierarchy, and what an error may show.  Imports nothing from Veil.

Every message is one line that names the file, key, table, column, model or value at fault; the CLI
prints it as is and exits 1 (``NoSolutionError``: exit 2).  Driver errors never escape a backend: they
are translated into ``BackendError`` at the backend boundary.

A message quotes a value read from a file or a table only as :func:`excerpt` shows it (a few characters
and its length), and whatever leaves the process — the error line, the ``--json`` document, the catalog's
``releases.error`` — goes through :func:`redact`, which masks credentials.
"""

from __future__ import annotations

import re


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


EXCERPT = 8  # characters of a value an error quotes; longer values are cut there and their length given

# scheme://user:password@host — the password (up to the authority's last "@") becomes ***
_URL_PASSWORD = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@'\"\x00]*):([^\s/'\"\x00]*)@")
# password=…, PGPASSWORD=…, "secret": "…", token = … — the value (quoted or up to a separator) becomes ***
_ASSIGNED = re.compile(
    r"""(?i)(\b\w*(?:password|passwd|pwd|secret|token)\w*['"]?[ \t]*[=:][ \t]*)"""
    r"""('[^'\n\x00]*'|"[^"\n\x00]*"|[^\s'"&;,\x00]+)"""
)


def redact(text: str) -> str:
    """``text`` with credentials masked: the password of every URL and the value of every
    ``password=``-style assignment (``PGPASSWORD``, ``passwd``, ``secret``, ``token`` … in any case).

    >>> redact("cannot connect to postgresql+psycopg://veil:s3cr@t@db:5432/wh")
    'cannot connect to postgresql+psycopg://veil:***@db:5432/wh'
    >>> redact("host=db user=veil password=hunter2 PGPASSWORD='x y' dbname=wh")
    "host=db user=veil password=*** PGPASSWORD='***' dbname=wh"
    >>> redact("password authentication failed for user 'veil'")
    "password authentication failed for user 'veil'"
    """
    text = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}:***@", text)
    return _ASSIGNED.sub(lambda m: m.group(1) + _masked(m.group(2)), text)


def _masked(value: str) -> str:
    quote = value[0] if value[0] in "'\"" else ""
    return f"{quote}***{quote}"


def excerpt(value: object, keep: int = EXCERPT) -> str:
    """A value read from a file or a table as an error may quote it: its ``repr`` when short, else its first
    ``keep`` characters, ``…`` and its length — never a whole line of a file that was not meant as a hierarchy.

    >>> excerpt("forty"), excerpt(28.5), excerpt("PATH=/usr/bin:/bin\\x00PGPASSWORD=hunter2")
    ("'forty'", '28.5', "'PATH=/us…' (37 characters)")
    """
    text = value if isinstance(value, str) else repr(value)
    if len(text) <= keep + 4:
        return repr(value)
    return f"{text[:keep] + '…'!r} ({len(text)} characters)"


CTRL_C = "Ctrl-C (SIGINT)"


class Interruption(KeyboardInterrupt):
    """A run stopped from outside: Ctrl-C, SIGTERM, or a statement the database stopped on such a signal.

    A ``KeyboardInterrupt``, so no ``except Exception`` on the way swallows it; its message says what stopped
    the run, never empty.  A driver that swallows the exception a signal handler raised while it ran a statement
    (DuckDB answers ``Query interrupted``) is translated into one at the backend boundary, with the reason that
    handler noted (``noted``; one process runs one command, so the latest signal is the one that counts).

    >>> str(Interruption()), str(Interruption.noted("terminated (SIGTERM)")), str(Interruption())
    ('Ctrl-C (SIGINT)', 'terminated (SIGTERM)', 'terminated (SIGTERM)')
    >>> Interruption.last = ""
    """

    last = ""  # the reason the latest signal handler noted

    def __init__(self, reason: str = "") -> None:
        super().__init__(reason or Interruption.last or CTRL_C)

    @classmethod
    def noted(cls, reason: str) -> Interruption:
        """What a signal handler raises: ``reason``, kept for a driver that swallows the exception."""
        Interruption.last = reason
        return cls(reason)
