"""Protocol 7's handshake (docs/protocol.md section 2; ``io.sluice.transport.handshake.Handshake``,
``KeySchedule``, ``SecretKeys``, ``NodeIdentity``): a SIGMA-style exchange with a pre-shared key,
X25519 for forward secrecy and Ed25519 signatures for node identity, HKDF-SHA256 for the secret
of each direction, where the record layer's key schedule (``_records``) starts.

:class:`ClientHandshake` is the connecting side and does no I/O (``connection`` runs it on a
socket). :class:`ServerHandshake` is the accepting side, here so that the test vectors can be
reproduced end to end; this package runs no server. Each object serves one handshake on one thread.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import struct
from dataclasses import dataclass
from typing import Optional

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey

from ..errors import AuthenticationFailedException
from . import _frames as frames
from ._frames import FLAG_ENCRYPT, Greeting

MIN_SECRET_BYTES = 16
#: Version 6's salt still: psk is no record key, and Flight's call tokens derive from it.
PSK_SALT = b"sluice/6/psk"
TRANSCRIPT = b"sluice/7 transcript"
CLIENT_FINISHED = b"sluice/7 client finished"
CLIENT_TO_SERVER = b"sluice/7 c2s"
SERVER_TO_CLIENT = b"sluice/7 s2c"
CLIENT_SIGNATURE = b"sluice/7 client signature"
SERVER_SIGNATURE = b"sluice/7 server signature"
NODE_LABEL = b"sluice/node"
_RESERVED_NODES = (0, -(1 << 63))


def hmac_sha256(key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, hashlib.sha256).digest()


def hkdf_expand(prk: bytes, info: bytes, length: int) -> bytes:
    """HKDF-Expand for at most one block: the first ``length`` bytes of HMAC(prk, info | 0x01)."""
    if not 0 < length <= 32:
        raise ValueError(f"HKDF-Expand of {length} bytes; this schedule needs at most 32")
    return hmac_sha256(prk, info + b"\x01")[:length]


def check_secret(secret: str) -> bytes:
    """The secret's UTF-8; raises ValueError (never naming its value) if empty or under 16 bytes."""
    if not secret:
        raise ValueError("a shared secret is required (sluice.transport.secret)")
    raw = secret.encode("utf-8")
    if len(raw) < MIN_SECRET_BYTES:
        raise ValueError(
            f"sluice.transport.secret is {len(raw)} bytes; it must be at least {MIN_SECRET_BYTES} bytes (128 bits)"
        )
    return raw


def psk(secret: str) -> bytes:
    """psk = HKDF-Extract(salt "sluice/6/psk", UTF-8 of the secret)."""
    return hmac_sha256(PSK_SALT, check_secret(secret))


def node_id(identity_public_key: bytes) -> int:
    """The node id a key derives: the first 8 bytes of SHA-256("sluice/node" | key) as an i64."""
    return struct.unpack(">q", hashlib.sha256(NODE_LABEL + identity_public_key).digest()[:8])[0]


def check_claim(who: str, node: int, identity_public_key: bytes) -> None:
    """Refuses a peer whose identity key is not a canonical Ed25519 key of large order, or whose
    claimed node id is not the one its key derives, or is reserved (``NodeIdentity.checkClaim``)."""
    if not is_canonical_of_large_order(identity_public_key):
        # A key of small order verifies forged signatures (the neutral point verifies R = neutral,
        # S = 0 for every message), so its node id would prove no private key.
        raise AuthenticationFailedException(f"{who}'s public key is not a canonical Ed25519 key of large order")
    if node in _RESERVED_NODES or node != node_id(identity_public_key):
        raise AuthenticationFailedException(f"{who} claims node {node & (2**64 - 1):016x}, which its key does not derive")


_P = 2**255 - 19
_D = (-121665 * pow(121666, -1, _P)) % _P


def is_canonical_of_large_order(key: bytes) -> bool:
    """Whether ``key`` encodes its y below p (RFC 8032 refuses the others) and, if it is a point at
    all, one whose order does not divide 8: [8]P, computed from x² and y alone (the doubling on the
    twisted Edwards curve with a = -1 needs only x², and is complete on it), is not the neutral
    element (0, 1). A key that is no point is left to signature verification, which refuses it.
    The same rule as ``NodeIdentity.isCanonicalOfLargeOrder``."""
    if len(key) != 32:
        return False
    y = int.from_bytes(key, "little") & ~(1 << 255)  # the top bit is the sign of x
    if y >= _P:
        return False
    try:
        yy = y * y % _P
        xx = (yy - 1) * pow(_D * yy + 1, -1, _P) % _P  # x² = (y² - 1) / (d y² + 1)
        for _ in range(3):
            yy = y * y % _P
            total, diff = (yy + xx) % _P, (yy - xx) % _P
            # x3² = 4 x² y² / (y² - x²)², y3 = (y² + x²) / (2 + x² - y²)
            xx, y = 4 * xx * yy * pow(diff * diff, -1, _P) % _P, total * pow((2 + xx - yy) % _P, -1, _P) % _P
    except ValueError:  # no inverse: not on the curve
        return True
    return not (xx == 0 and y == 1)


def transcript_hash(hello: bytes, challenge: bytes) -> bytes:
    return hashlib.sha256(
        TRANSCRIPT + struct.pack(">I", len(hello)) + hello + struct.pack(">I", len(challenge)) + challenge
    ).digest()


class NodeIdentity:
    """An Ed25519 key pair and the node id it derives. A fresh one per process unless a seed is given."""

    def __init__(self, seed: Optional[bytes] = None) -> None:
        self._key = Ed25519PrivateKey.from_private_bytes(seed) if seed is not None else Ed25519PrivateKey.generate()
        self.public_key = self._key.public_key().public_bytes_raw()
        self.node_id = node_id(self.public_key)
        if self.node_id in _RESERVED_NODES:  # one chance in 2^63
            raise ValueError("this identity derives a reserved node id; draw another")

    def sign(self, label: bytes, data: bytes) -> bytes:
        return self._key.sign(label + data)


def verifies(public_key: bytes, label: bytes, data: bytes, signature: bytes) -> bool:
    if len(public_key) != 32 or len(signature) != 64:
        return False
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, label + data)
        return True
    except (InvalidSignature, ValueError):
        return False


def agree(private: X25519PrivateKey, peer_public: bytes) -> bytes:
    """dh = X25519(private, peer's public key); a point of small order (all-zero dh) fails."""
    try:
        dh = private.exchange(X25519PublicKey.from_public_bytes(peer_public))
    except ValueError:
        dh = bytes(32)  # OpenSSL refuses the all-zero result itself
    if dh == bytes(32):
        raise AuthenticationFailedException("the peer's ephemeral key is a point of small order")
    return dh


@dataclass(frozen=True)
class KeySchedule:
    """What the handshake derives (docs/protocol.md section 2.3): the client finished key and the
    secret each direction's key schedule starts from (its epoch 0; ``_records`` takes it on)."""

    transcript_hash: bytes
    dh: bytes
    handshake_secret: bytes
    client_finished_key: bytes
    c2s_secret: bytes
    s2c_secret: bytes
    encrypted: bool

    @staticmethod
    def derive(psk_: bytes, dh: bytes, th: bytes, encrypted: bool) -> "KeySchedule":
        hs = hmac_sha256(psk_, dh)
        return KeySchedule(
            th, dh, hs,
            hkdf_expand(hs, CLIENT_FINISHED + th, 32),
            hkdf_expand(hs, CLIENT_TO_SERVER + th, 32),
            hkdf_expand(hs, SERVER_TO_CLIENT + th, 32),
            encrypted,
        )

    @property
    def client_finished(self) -> bytes:
        return hmac_sha256(self.client_finished_key, self.transcript_hash)


class ClientHandshake:
    """The connecting side: :attr:`hello`, then :meth:`auth` for the server's CHALLENGE, then
    :meth:`check_auth_ok` (after the record layer checked AUTH_OK's tag with :attr:`keys`).

    ``nonce`` and ``ephemeral_private`` are drawn fresh unless given (the test vectors give them).
    """

    def __init__(
        self,
        secret: str,
        identity: NodeIdentity,
        encrypt: bool,
        *,
        nonce: Optional[bytes] = None,
        ephemeral_private: Optional[bytes] = None,
    ) -> None:
        self._psk = psk(secret)
        self._identity = identity
        self.flags = FLAG_ENCRYPT if encrypt else 0
        self._ephemeral = (
            X25519PrivateKey.from_private_bytes(ephemeral_private) if ephemeral_private else X25519PrivateKey.generate()
        )
        self.hello = Greeting(
            frames.VERSION, identity.node_id, self.flags, nonce if nonce is not None else os.urandom(32),
            self._ephemeral.public_key().public_bytes_raw(), identity.public_key,
        ).encode()
        self.keys: Optional[KeySchedule] = None
        self.challenge: Optional[Greeting] = None

    def auth(self, challenge_payload) -> bytes:
        """Takes the CHALLENGE and returns the AUTH payload; raises AuthenticationFailedException for
        another version, a node id its key does not derive, or an ephemeral key of small order."""
        version = frames.version_of(challenge_payload)
        if version != frames.VERSION:
            raise AuthenticationFailedException(f"server speaks protocol version {version}; this side speaks {frames.VERSION}")
        raw = bytes(challenge_payload)
        self.challenge = Greeting.decode(raw, "CHALLENGE")
        check_claim("server", self.challenge.node, self.challenge.identity_key)
        dh = agree(self._ephemeral, self.challenge.ephemeral_key)
        self._ephemeral = None  # discarded once used
        encrypted = bool((self.flags | self.challenge.flags) & FLAG_ENCRYPT)
        self.keys = KeySchedule.derive(self._psk, dh, transcript_hash(self.hello, raw), encrypted)
        signature = self._identity.sign(CLIENT_SIGNATURE, self.keys.transcript_hash)
        return frames.Auth(self.keys.client_finished, signature).encode()

    def check_auth_ok(self, payload) -> int:
        """Checks the server's signature in AUTH_OK; returns the server's node id, now proven."""
        signature = frames.decode_auth_ok(payload)
        assert self.keys is not None and self.challenge is not None
        if not verifies(self.challenge.identity_key, SERVER_SIGNATURE,
                        self.keys.transcript_hash + self.keys.client_finished, signature):
            raise AuthenticationFailedException(
                f"server's signature does not verify with the public key of node {self.challenge.node & (2**64 - 1):016x}"
            )
        return self.challenge.node


class ServerHandshake:
    """The accepting side, made from HELLO: :attr:`challenge`, then :meth:`auth_ok` for AUTH."""

    def __init__(
        self,
        secret: str,
        identity: NodeIdentity,
        encrypt: bool,
        hello_payload,
        *,
        nonce: Optional[bytes] = None,
        ephemeral_private: Optional[bytes] = None,
    ) -> None:
        self._identity = identity
        version = frames.version_of(hello_payload)  # first, whatever the length
        if version != frames.VERSION:
            raise AuthenticationFailedException(
                f"unsupported protocol version {version}; this side speaks {frames.VERSION}")
        self.hello = Greeting.decode(bytes(hello_payload), "HELLO")
        check_claim("client", self.hello.node, self.hello.identity_key)
        flags = FLAG_ENCRYPT if encrypt else 0
        ephemeral = X25519PrivateKey.from_private_bytes(ephemeral_private) if ephemeral_private else X25519PrivateKey.generate()
        self.challenge = Greeting(
            frames.VERSION, identity.node_id, flags, nonce if nonce is not None else os.urandom(32),
            ephemeral.public_key().public_bytes_raw(), identity.public_key,
        ).encode()
        dh = agree(ephemeral, self.hello.ephemeral_key)
        encrypted = bool((flags | self.hello.flags) & FLAG_ENCRYPT)
        self.keys = KeySchedule.derive(psk(secret), dh, transcript_hash(bytes(hello_payload), self.challenge), encrypted)

    def auth_ok(self, auth_payload) -> bytes:
        auth = frames.Auth.decode(auth_payload)
        if not hmac.compare_digest(self.keys.client_finished, auth.finished):
            raise AuthenticationFailedException("authentication failed")
        if not verifies(self.hello.identity_key, CLIENT_SIGNATURE, self.keys.transcript_hash, auth.signature):
            raise AuthenticationFailedException(
                f"client's signature does not verify with the public key of node {self.hello.node & (2**64 - 1):016x}"
            )
        return self._identity.sign(SERVER_SIGNATURE, self.keys.transcript_hash + self.keys.client_finished)
