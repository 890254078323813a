"""Bearer tokens that authenticate Flight calls to a ``SluiceFlightServer`` with a secret.

Mirrors ``io.sluice.flight.CallToken`` (its doc comment and ``arrow-flight-rdma/README.md`` define
the format; the tests check this module against tokens the Java side minted):

- psk = HKDF-Extract("sluice/6/psk", UTF-8 of the secret), the transport's pre-shared key
  (``docs/protocol.md``; protocol 7 kept version 6's salt, so tokens did not change);
  key = HKDF-Expand(psk, "sluice/flight token key", 32);
- payload = version byte 2 | expiry (epoch seconds, 8 bytes big-endian) | audience (UTF-8);
- token = base64url(payload | HMAC-SHA256(key, payload)), unpadded.

The audience is the server's location as ``scheme://host:port`` (:func:`audience`). A token opens
only its server's calls and only until it expires; every call presents it as
``Authorization: Bearer <token>``. Tokens minted here live :data:`DEFAULT_VALIDITY` (10 minutes,
as the Java client's) unless told otherwise; a client that calls for longer presents a
:class:`RenewingToken` through :func:`middleware`, which mints the next before one expires.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import struct
import threading
import time
from typing import Callable, List, Mapping, Optional, Tuple, Union
from urllib.parse import urlsplit

from ..transport._handshake import hkdf_expand, psk

__all__ = ["DEFAULT_VALIDITY", "RenewingToken", "Tokens", "VERSION", "audience", "call_options", "claims",
           "for_server", "headers", "key", "middleware", "mint", "sign"]

#: What readers take as their call tokens: one token (every server accepts it: a shared audience),
#: a token per server location (as a published table's catalog hands them out), or None.
Tokens = Union[None, str, Mapping[str, str]]

#: The token format's version, its first byte.
VERSION = 2
_KEY_LABEL = b"sluice/flight token key"
_MAX_AUDIENCE_BYTES = 1024
#: Seconds a token minted here is valid unless told otherwise: ``sluice.flight.tokenValidityMs``'s default.
DEFAULT_VALIDITY = 600.0


def key(secret: str) -> bytes:
    """The token key of ``secret``; raises ``ValueError`` naming ``sluice.transport.secret`` if it is too short."""
    return hkdf_expand(psk(secret), _KEY_LABEL, 32)


def audience(location: str) -> str:
    """``location`` in the one form tokens carry: ``grpc://Host:8815/`` as ``grpc://host:8815``; a name as it is."""
    if location is None or not location.strip():
        raise ValueError("a Flight call token needs an audience (the server's location)")
    a = location.strip()
    try:
        u = urlsplit(a)
        if u.scheme.startswith("grpc") and u.hostname and u.port is not None:
            host = u.hostname.lower()
            if ":" in host:
                host = "[" + host + "]"
            return f"{u.scheme.lower()}://{host}:{u.port}"
    except ValueError:
        pass
    return a


def mint(secret: str, server: str, validity: float = DEFAULT_VALIDITY, expires: Optional[int] = None) -> str:
    """A token for ``server`` (its location, or a name the servers accept), valid ``validity`` seconds."""
    aud = audience(server).encode("utf-8")
    if len(aud) > _MAX_AUDIENCE_BYTES:
        raise ValueError(f"a token audience of {len(aud)} bytes, at most {_MAX_AUDIENCE_BYTES}")
    when = int(time.time() + validity) if expires is None else int(expires)
    payload = bytes([VERSION]) + struct.pack(">q", when) + aud
    mac = hmac.new(key(secret), payload, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(payload + mac).rstrip(b"=").decode("ascii")


def claims(secret: str, token: str) -> Tuple[str, int]:
    """The audience and expiry of ``token`` after checking its MAC under ``secret``; ``ValueError`` if it fails."""
    raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    if len(raw) < 1 + 8 + 32 or raw[0] != VERSION:
        raise ValueError("not a Sluice call token")
    payload, mac = raw[:-32], raw[-32:]
    if not hmac.compare_digest(mac, hmac.new(key(secret), payload, hashlib.sha256).digest()):
        raise ValueError("the call token's MAC does not match this secret")
    (expires,) = struct.unpack(">q", payload[1:9])
    return payload[9:].decode("utf-8"), expires


def sign(secret: str, label: str, *parts: bytes) -> bytes:
    """HMAC-SHA256 under the token key of ``label`` | 0 | each part as u32 length | bytes (``CallToken.Key.sign``)."""
    m = hmac.new(key(secret), label.encode("utf-8") + b"\x00", hashlib.sha256)
    for p in parts:
        m.update(struct.pack(">I", len(p)))
        m.update(p)
    return m.digest()


def for_server(tokens: Tokens, location: str, secret: Optional[str] = None) -> Optional[str]:
    """The token to present to the server at ``location``: its own from a mapping, the one token
    given, or, with neither, one minted here from ``secret`` for :data:`DEFAULT_VALIDITY` seconds
    (None: present none). A client that lives longer presents a :class:`RenewingToken` instead."""
    if isinstance(tokens, Mapping):
        found = tokens.get(location) or tokens.get(audience(location))
        if found is None and not secret:
            raise KeyError(f"no call token for {location} among the tokens given")
        if found is not None:
            return found
    elif tokens is not None:
        return tokens
    return mint(secret, location) if secret else None


class RenewingToken:
    """The token a client presents to one server, minted from ``secret`` and minted again once half
    of ``validity`` (seconds) has passed since the last (``io.sluice.flight.client.RenewingToken``),
    so that a client living longer than a token keeps making calls. Call it for the token to
    present now; :func:`middleware` presents it on each call. ``clock`` gives the time in epoch
    seconds. Thread safe.

    :raises ValueError: the secret is unusable, or ``validity`` is not a positive number of seconds
    """

    def __init__(self, secret: str, server: str, validity: float = DEFAULT_VALIDITY,
                 clock: Callable[[], float] = time.time) -> None:
        if not validity > 0:
            raise ValueError(f"a call token validity of {validity!r} s; it must be positive")
        key(secret)  # an unusable secret fails here, not at the first call
        self._secret = secret
        self._server = server
        self._validity = validity
        self._clock = clock
        self._lock = threading.Lock()
        self._token = ""
        self._renew_at = float("-inf")

    def __call__(self) -> str:
        with self._lock:
            now = self._clock()
            if now >= self._renew_at:
                # One second more than asked: the expiry is whole seconds, truncated.
                self._token = mint(self._secret, self._server, expires=int(now + self._validity) + 1)
                self._renew_at = now + self._validity / 2
            return self._token


def middleware(tokens: Callable[[], str]):
    """A ``pyarrow.flight.ClientMiddlewareFactory`` presenting ``Authorization: Bearer <tokens()>``
    on every call of the ``pyarrow.flight.FlightClient`` it is given to (``middleware=[...]``);
    with a :class:`RenewingToken`, no call presents an expired token."""
    from pyarrow import flight

    class Presenting(flight.ClientMiddleware):
        def sending_headers(self):
            return {"authorization": "Bearer " + tokens()}

    class Factory(flight.ClientMiddlewareFactory):
        def start_call(self, info):
            return Presenting()

    return Factory()


def headers(token: Optional[str]) -> List[Tuple[bytes, bytes]]:
    """The call headers presenting ``token`` (none when it is None: a server without a secret)."""
    if token is None:
        return []
    return [(b"authorization", b"Bearer " + token.encode("ascii"))]


def call_options(token: Optional[str], timeout: Optional[float] = None):
    """``pyarrow.flight.FlightCallOptions`` presenting ``token``, with an optional timeout in seconds."""
    from pyarrow import flight

    return flight.FlightCallOptions(headers=headers(token), timeout=timeout)
