"""The series secret and its coins (docs/series.md §2).

Every choice the series step makes that a sensitive value could influence — whether a batch that passes the
models is published tonight — is also gated by a coin drawn from a secret kept in the catalog (never in a
published object, never granted to analysts).  A coin comes up with probability ``RHO`` whatever the values, so
a reader who replays Veil's code under two hypotheses about someone's value cannot tell them apart by *when*
a batch appeared: the batch could have waited on its coin.  Coins are keyed HMACs, so a run that is repeated
(``--force``, a retried night) draws the same ones.

>>> c = Coins(bytes(32), "people", 7)
>>> c.flip("join", "a*|<30") == Coins(bytes(32), "people", 7).flip("join", "a*|<30")
True
>>> sum(Coins(bytes(32), "people", v).flip("join", "x") for v in range(1000))   # about RHO × 1000
498
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

RHO = 0.5  # the chance that a batch ready tonight is published tonight (docs/series.md §2: delay against evidence)
SECRET_BYTES = 32


def new_secret() -> str:
    """A fresh secret, as the catalog stores it (hex)."""
    return secrets.token_hex(SECRET_BYTES)


class Coins:
    """The coins of one night (version ``version``) of release ``name``."""

    def __init__(self, secret: bytes, name: str, version: int, rho: float = RHO) -> None:
        self.secret, self.prefix, self.rho = secret, f"{name}\x1f{version}\x1f", rho

    @classmethod
    def of(cls, secret_hex: str, name: str, version: int) -> Coins:
        return cls(bytes.fromhex(secret_hex), name, version)

    def flip(self, kind: str, key: str) -> bool:
        """Heads (publish tonight) with probability ``rho``, the same for the same secret, night, kind and key."""
        digest = hmac.new(self.secret, f"{self.prefix}{kind}\x1f{key}".encode(), hashlib.sha256).digest()
        return int.from_bytes(digest[:8], "big") < self.rho * 2**64
