"""The bearer token that authenticates Flight calls to a ``SluiceFlightServer`` with a secret.
Mirrors ``io.sluice.flight.CallToken`` (the tests check this module against a token the Java side
derived): token = base64url(HKDF-Expand(psk, "sluice/flight bearer", 32)) without padding, where
psk is the transport's pre-shared key of the secret (:func:`sluice.transport.handshake.psk`). Every
call presents it as ``Authorization: Bearer <token>``. The token does not reveal the secret and
cannot stand in for it on the transport; whoever holds it can make Flight calls, so on networks
others can watch use ``grpc+tls`` locations.
"""

from __future__ import annotations

import base64
from typing import List, Optional, Tuple

from ..transport.handshake import hkdf_expand, psk

__all__ = ["derive", "headers", "call_options"]

_LABEL = b"sluice/flight bearer"


def derive(secret: str) -> str:
    """The call token of ``secret``; ValueError if the secret is empty or under 16 bytes."""
    key = hkdf_expand(psk(secret), _LABEL, 32)
    return base64.urlsafe_b64encode(key).rstrip(b"=").decode("ascii")


def headers(token: Optional[str]) -> List[Tuple[bytes, bytes]]:
    """The call headers presenting ``token`` (none when it is None: a server without a secret)."""
    if token is None:
        return []
    return [(b"authorization", b"Bearer " + token.encode("ascii"))]


def call_options(token: Optional[str], timeout: Optional[float] = None):
    """``pyarrow.flight.FlightCallOptions`` presenting ``token``, with an optional timeout in seconds."""
    from pyarrow import flight

    return flight.FlightCallOptions(headers=headers(token), timeout=timeout)
