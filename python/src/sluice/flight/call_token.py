"""The bearer token that authenticates Flight calls to a ``SluiceFlightServer`` with a secret.

Mirrors ``io.sluice.flight.CallToken`` (the one definition of the derivation; the tests check this
module against a token the Java side derived): key = PBKDF2-HMAC-SHA256(secret,
"sluice/flight-token/" + salt, 20000 iterations, 32 bytes), token =
base64url(HMAC-SHA256(key, "sluice/flight/bearer")) without padding. Every call presents it as
``Authorization: Bearer <token>``. The token does not reveal the secret; whoever holds it can make
Flight calls, so on networks others can watch use ``grpc+tls`` locations.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import List, Optional, Tuple

__all__ = ["DEFAULT_SALT", "derive", "headers", "call_options"]

#: ``sluice.transport.secretSalt``'s default.
DEFAULT_SALT = "sluice"
_ITERATIONS = 20_000


def derive(secret: str, salt: str = DEFAULT_SALT) -> str:
    """The call token of ``secret`` under ``salt``."""
    if not secret:
        raise ValueError("a Flight call token needs a secret (sluice.transport.secret)")
    key = hashlib.pbkdf2_hmac(
        "sha256", secret.encode("utf-8"), ("sluice/flight-token/" + salt).encode("utf-8"), _ITERATIONS, 32
    )
    mac = hmac.new(key, b"sluice/flight/bearer", hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode("ascii")


def headers(token: Optional[str]) -> List[Tuple[bytes, bytes]]:
    """The call headers presenting ``token`` (none when it is None: a server without a secret)."""
    if token is None:
        return []
    return [(b"authorization", b"Bearer " + token.encode("ascii"))]


def call_options(token: Optional[str], timeout: Optional[float] = None):
    """``pyarrow.flight.FlightCallOptions`` presenting ``token``, with an optional timeout in seconds."""
    from pyarrow import flight

    return flight.FlightCallOptions(headers=headers(token), timeout=timeout)
