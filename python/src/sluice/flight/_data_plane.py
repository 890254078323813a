"""The data-plane messages, Python side: the one module to follow when
``io.sluice.flight.protocol.DataPlaneProtocol`` and ``DataPlaneOffer`` (version 4) change.

* the server's **offer** (the ``sluice.data-plane`` action's result): where its transport listens,
  the identity key that transport proves, and the number of gets one client may hold of that
  server at once;
* the **command** of the DoExchange that opens a get (``OPEN_GET`` with the grant and the ticket);
* **frames**, the ``app_metadata`` of the call's metadata-only messages (the schema frame);
* over the authenticated transport connection: the **grant** request and reply, **pulls**
  (acknowledge, ask for the next bodies, or stop) and their **announcements** of body frames
  (IPC metadata, where the body lies, its CRC32C).

Big-endian throughout. Decoders raise ValueError naming what is malformed. Stateless.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import List, Optional, Tuple

from ..transport._handshake import node_id

VERSION = 4
ACTION = "sluice.data-plane"
GRANT_BYTES = 32
MAX_METADATA_BYTES = 16 << 20
MAX_ANNOUNCED_BODIES = 4096
_COMMAND_MAGIC = b"sluice-data-plane"
_GRANT_REQUEST = 0x47
_PULL_REQUEST = 0x50
_ANNOUNCEMENT = 0x41
_OPEN_GET = 1
_SCHEMA, _DICTIONARY, _BATCH, _ACK = 1, 2, 3, 4
_DESCRIPTOR = struct.Struct(">qqqq")  # RemoteDescriptor: node, address, length, key


#: Length of a transport identity key (Ed25519, raw).
IDENTITY_KEY_BYTES = 32


@dataclass(frozen=True)
class Offer:
    """Where the server's transport listens, the identity key its handshake will prove (its node id
    derives from it), its provider, and ``max_streams``: how many data-plane gets one client may
    hold of this server at once (its share of the server's get threads; the server refuses one more
    with RESOURCE_EXHAUSTED). A client takes an offer only signed by the server."""

    host: str
    port: int
    identity_key: bytes
    provider: str
    max_streams: int

    @property
    def node_id(self) -> int:
        """The transport node id the identity key derives."""
        return node_id(self.identity_key)


@dataclass(frozen=True)
class BodyFrame:
    """A dictionary or record batch: its IPC Message flatbuffer, where its body lies (region
    ``key`` of ``region_length`` bytes on ``node``, ``[offset, +length)``), the body's CRC32C."""

    dictionary: bool
    sequence: int
    metadata: bytes
    node: int
    key: int
    region_length: int
    offset: int
    length: int
    crc32c: int


@dataclass(frozen=True)
class Announcement:
    last: bool
    bodies: List[BodyFrame]


class _Reader:
    def __init__(self, data, what: str) -> None:
        self.b = memoryview(data)
        self.at = 0
        self.what = what

    def take(self, n: int) -> memoryview:
        if n < 0 or self.at + n > len(self.b):
            raise ValueError(f"truncated {self.what}: needs {n} more bytes, {len(self.b) - self.at} remain")
        v = self.b[self.at : self.at + n]
        self.at += n
        return v

    def unpack(self, fmt: str) -> Tuple:
        s = struct.Struct(fmt)
        return s.unpack(self.take(s.size))

    def sized(self, limit: int) -> bytes:
        (n,) = self.unpack(">i")
        if n < 0 or n > limit:
            raise ValueError(f"field of {n} bytes in a {self.what} (at most {limit})")
        return bytes(self.take(n))

    def end(self) -> None:
        if self.at != len(self.b):
            raise ValueError(f"{len(self.b) - self.at} bytes after the end of the {self.what}")


#: What the server's signature over its answer to the offer action starts with (``DataPlaneOffer.SIGNATURE_LABEL``).
SIGNATURE_LABEL = "sluice/flight/data-plane-answer"
_REFUSAL = 0


def refusal_reason(answer: bytes) -> Optional[str]:
    """The reason of a refusal (the answer's first byte is 0), or None for an offer."""
    if len(answer) > 0 and answer[0] == _REFUSAL:
        return answer[1:].decode("utf-8", errors="replace")
    return None


def decode_offer(data: bytes) -> Offer:
    """Version (1), identity key (32), port (4), max streams (4, at least 1), host length (4) and
    UTF-8 host, provider length (4) and UTF-8 name."""
    r = _Reader(data, "data-plane offer")
    (version,) = r.unpack(">b")
    if version != VERSION:
        raise ValueError(
            f"data-plane offer of version {version}, this client speaks {VERSION} (client and server must be the same release)"
        )
    key = bytes(r.take(IDENTITY_KEY_BYTES))
    port, max_streams = r.unpack(">ii")
    if max_streams < 1:
        raise ValueError(f"a data-plane offer of {max_streams} streams per client (at least 1)")
    host = r.sized(len(data)).decode("utf-8")
    provider = r.sized(len(data)).decode("utf-8")
    r.end()
    return Offer(host, port, key, provider, max_streams)


def encode_open_get(grant: bytes, ticket: bytes) -> bytes:
    """The DoExchange descriptor command that opens a get of the table ``ticket`` names."""
    _check_grant(grant)
    return _COMMAND_MAGIC + struct.pack(">bb", VERSION, _OPEN_GET) + grant + struct.pack(">i", len(ticket)) + ticket


def decode_schema_frame(frame) -> bytes:
    """The IPC Schema message flatbuffer a stream starts with."""
    r = _Reader(frame, "data-plane frame")
    (kind,) = r.unpack(">b")
    if kind != _SCHEMA:
        raise ValueError(f"data-plane stream must start with its schema, got frame type {kind}")
    metadata = r.sized(MAX_METADATA_BYTES)
    r.end()
    return metadata


def grant_request() -> bytes:
    return bytes([_GRANT_REQUEST])


def decode_grant_reply(reply) -> bytes:
    if len(reply) != GRANT_BYTES:
        raise ValueError(f"grant reply of {len(reply)} bytes, expected {GRANT_BYTES}")
    return bytes(reply)


def encode_pull(grant: bytes, consumed: int, max_bodies: int, stop: bool = False) -> bytes:
    """Acknowledges the first ``consumed`` bodies and asks for up to ``max_bodies`` more; with
    ``stop`` the reader wants no more (it keeps what it has)."""
    _check_grant(grant)
    if consumed < 0 or not 0 <= max_bodies <= MAX_ANNOUNCED_BODIES:
        raise ValueError(f"pull of {max_bodies} bodies after {consumed}")
    return bytes([_PULL_REQUEST]) + grant + struct.pack(">qib", consumed, max_bodies, 1 if stop else 0)


def decode_announcement(reply) -> Announcement:
    r = _Reader(reply, "announcement")
    kind, last, count = r.unpack(">bbi")
    if kind != _ANNOUNCEMENT:
        raise ValueError("not an announcement")
    if last not in (0, 1):
        raise ValueError(f"announcement flag {last}")
    if not 0 <= count <= MAX_ANNOUNCED_BODIES:
        raise ValueError(f"announcement of {count} bodies (at most {MAX_ANNOUNCED_BODIES})")
    bodies = []
    for _ in range(count):
        (n,) = r.unpack(">i")
        bodies.append(_decode_body_frame(r.take(n)))
    r.end()
    return Announcement(last == 1, bodies)


def _decode_body_frame(data) -> BodyFrame:
    r = _Reader(data, "body frame")
    kind, sequence = r.unpack(">bq")
    if kind not in (_DICTIONARY, _BATCH):
        raise ValueError(f"an announcement lists a frame of type {kind}, not a body")
    if sequence < 0:
        raise ValueError(f"negative frame sequence {sequence}")
    metadata = r.sized(MAX_METADATA_BYTES)
    node, _address, region_length, key = r.unpack(">qqqq")
    offset, length, crc = r.unpack(">qqi")
    if region_length < 0 or offset < 0 or length < 0 or offset + length > region_length:
        raise ValueError(f"body [{offset}, +{length}) outside a region of {region_length} bytes")
    r.end()
    return BodyFrame(kind == _DICTIONARY, sequence, metadata, node, key, region_length, offset, length, crc & 0xFFFFFFFF)


def _check_grant(grant: bytes) -> None:
    if len(grant) != GRANT_BYTES:
        raise ValueError(f"a grant has {GRANT_BYTES} bytes, got {len(grant)}")
