"""The one definition, on the Python side, of the carrier's frames (docs/protocol.md, protocol 7;
``io.sluice.transport.wire.FrameHeader``, ``Frames``, ``shm.ShmMessages``): the 16-byte header, every
control payload, and the shm control service's messages. Integers are big-endian; strings are a
u16 byte count and UTF-8. Every decoder refuses anything not exactly well formed with a
:class:`~sluice.errors.ProtocolException` naming what is wrong, and raises nothing else: an
ERROR's text, only ever shown, is decoded with replacement and cut to :data:`MAX_ERROR_TEXT`
code points (docs/protocol.md 4.3); a string that names something (a folder, a file) must be
UTF-8. Stateless.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass
from typing import Tuple

from ..errors import (
    AuthenticationFailedException,
    MessageTooLargeException,
    ProtocolException,
    ReadOutOfBoundsException,
    RegionRevokedException,
    RemoteHandlerException,
    ResourceExhaustedException,
    TransportException,
    TransportUnavailableException,
    UnknownKeyException,
)

VERSION = 7
MAGIC = 0x5C
HEADER_LENGTH = 16
#: The most any frame's payload may be (its i32 length); each kind has its own, lower bound.
MAX_FRAME_PAYLOAD = 0x7FFFFFFF
NONCE_LENGTH = 32
KEY_LENGTH = 32
SIGNATURE_LENGTH = 64
HASH_LENGTH = 32
MAX_CONTROL_PAYLOAD = 4096
#: The most code points of an ERROR's text a receiver keeps (and a sender writes).
MAX_ERROR_TEXT = 1024
FLAG_ENCRYPT = 1

_HEADER = struct.Struct(">BBHiq")
_GREETING = struct.Struct(">HqB32s32s32s")
_READ_REQUEST = struct.Struct(">qqi")


class FrameType(enum.IntEnum):
    """Frame types; the value is the wire id."""

    HELLO = 1
    CHALLENGE = 2
    AUTH = 3
    AUTH_OK = 4
    READ_REQUEST = 5
    READ_RESPONSE = 6
    REQUEST = 7
    RESPONSE = 8
    ERROR = 9
    CONTROL = 10
    CONTROL_REPLY = 11


class ErrorCode(enum.IntEnum):
    """Codes of ERROR frames; the value is the wire id. A requester acts on the code alone; the text
    is for people."""

    UNKNOWN_KEY = 1
    REGION_REVOKED = 2
    OUT_OF_BOUNDS = 3
    HANDLER_FAILED = 4
    MESSAGE_TOO_LARGE = 5
    AUTHENTICATION_FAILED = 6
    PROTOCOL = 7
    UNAVAILABLE = 8
    #: The handler refused for load; the same request may succeed later.
    EXHAUSTED = 9

    def to_exception(self, text: str) -> TransportException:
        """The exception a requester sees for this code and the peer's text."""
        kind = {
            ErrorCode.UNKNOWN_KEY: UnknownKeyException,
            ErrorCode.REGION_REVOKED: RegionRevokedException,
            ErrorCode.OUT_OF_BOUNDS: ReadOutOfBoundsException,
            ErrorCode.HANDLER_FAILED: RemoteHandlerException,
            ErrorCode.MESSAGE_TOO_LARGE: MessageTooLargeException,
            ErrorCode.AUTHENTICATION_FAILED: AuthenticationFailedException,
            ErrorCode.PROTOCOL: ProtocolException,
            ErrorCode.UNAVAILABLE: TransportUnavailableException,
            ErrorCode.EXHAUSTED: ResourceExhaustedException,
        }[self]
        return kind("peer: " + text)


@dataclass(frozen=True)
class Header:
    """A frame header: type, plain payload length (never counts tags), correlation id."""

    type: FrameType
    length: int
    correlation: int

    def encode(self) -> bytes:
        return _HEADER.pack(MAGIC, self.type, 0, self.length, self.correlation)

    @staticmethod
    def decode(buf, max_payload: int) -> "Header":
        if len(buf) < HEADER_LENGTH:
            raise ProtocolException(f"truncated frame header: {len(buf)} bytes")
        magic, kind, reserved, length, corr = _HEADER.unpack_from(buf)
        if magic != MAGIC:
            raise ProtocolException(f"bad frame magic 0x{magic:02x}")
        try:
            kind = FrameType(kind)
        except ValueError:
            raise ProtocolException(f"unknown frame type {kind}") from None
        if reserved != 0:
            raise ProtocolException(f"reserved header bits set: {reserved}")
        if length < 0 or length > max_payload:
            raise ProtocolException(f"frame {kind.name} payload length {length} outside 0..{max_payload}")
        return Header(kind, length, corr)


@dataclass(frozen=True)
class Greeting:
    """HELLO (client) and CHALLENGE (server): version, node id, flags, nonce, ephemeral X25519 key,
    Ed25519 identity key; 107 bytes."""

    version: int
    node: int
    flags: int
    nonce: bytes
    ephemeral_key: bytes
    identity_key: bytes

    LENGTH = _GREETING.size

    def encode(self) -> bytes:
        return _GREETING.pack(self.version, self.node, self.flags, self.nonce, self.ephemeral_key, self.identity_key)

    @staticmethod
    def decode(payload, what: str) -> "Greeting":
        if len(payload) != Greeting.LENGTH:
            raise ProtocolException(f"{what} payload is {len(payload)} bytes, expected {Greeting.LENGTH}")
        version, node, flags, nonce, eph, ident = _GREETING.unpack_from(payload)
        if flags & ~FLAG_ENCRYPT:
            raise ProtocolException(f"unknown handshake flags {flags}")
        return Greeting(version, node, flags, nonce, eph, ident)


def version_of(payload) -> int:
    """The version a HELLO or CHALLENGE payload claims (its first u16), or -1 if it has none."""
    return struct.unpack_from(">H", payload)[0] if len(payload) >= 2 else -1


@dataclass(frozen=True)
class Auth:
    """AUTH: the client's finished value (32) and its signature (64)."""

    finished: bytes
    signature: bytes

    LENGTH = HASH_LENGTH + SIGNATURE_LENGTH

    def encode(self) -> bytes:
        return self.finished + self.signature

    @staticmethod
    def decode(payload) -> "Auth":
        _expect_length("AUTH", payload, Auth.LENGTH)
        return Auth(bytes(payload[:HASH_LENGTH]), bytes(payload[HASH_LENGTH:]))


def decode_auth_ok(payload) -> bytes:
    """AUTH_OK: the server's signature (64 bytes)."""
    _expect_length("AUTH_OK", payload, SIGNATURE_LENGTH)
    return bytes(payload)


def encode_read_request(key: int, offset: int, length: int) -> bytes:
    """READ_REQUEST: i64 key, i64 offset, i32 length."""
    return _READ_REQUEST.pack(key, offset, length)


READ_REQUEST_LENGTH = _READ_REQUEST.size


def decode_error(payload) -> Tuple[ErrorCode, str]:
    """ERROR: u8 code, u16 n, n bytes of text. The text is for people: each maximal ill-formed
    subsequence becomes U+FFFD (Python's ``errors="replace"``; Java's decoder may put fewer), and at most
    :data:`MAX_ERROR_TEXT` code points are kept. Whoever gets the ERROR acts on its code alone."""
    if len(payload) < 3:
        raise ProtocolException(f"ERROR payload too short: {len(payload)}")
    try:
        code = ErrorCode(payload[0])
    except ValueError:
        raise ProtocolException(f"unknown error code {payload[0]}") from None
    (n,) = struct.unpack_from(">H", payload, 1)
    if n != len(payload) - 3:
        raise ProtocolException(f"ERROR text of {n} bytes in a payload of {len(payload)}")
    return code, bytes(payload[3:]).decode("utf-8", errors="replace")[:MAX_ERROR_TEXT]


def encode_control(service: int, request: bytes) -> bytes:
    """CONTROL: u8 service id (1..255), then the service's request (at most 4096 bytes)."""
    if not 1 <= service <= 255:
        raise ValueError(f"control service id {service} outside 1..255")
    if len(request) > MAX_CONTROL_PAYLOAD:
        raise ValueError(f"control request of {len(request)} bytes exceeds {MAX_CONTROL_PAYLOAD}")
    return bytes([service]) + request


def string_at(buf, at: int) -> Tuple[str, int]:
    """The string (u16 n, n bytes of UTF-8) at ``at``, and where it ends."""
    raw, end = _string_bytes_at(buf, at)
    try:
        return raw.decode("utf-8"), end
    except UnicodeDecodeError as e:
        raise ProtocolException(f"a string of {len(raw)} bytes at offset {at} is not UTF-8 ({e.reason} at byte {e.start})") from None


def _string_bytes_at(buf, at: int) -> Tuple[bytes, int]:
    if len(buf) < at + 2:
        raise ProtocolException("payload truncated before a string length")
    (n,) = struct.unpack_from(">H", buf, at)
    if len(buf) < at + 2 + n:
        raise ProtocolException(f"payload truncated: need {n} bytes, have {len(buf) - at - 2}")
    return bytes(buf[at + 2 : at + 2 + n]), at + 2 + n


def _expect_length(what: str, payload, length: int) -> None:
    if len(payload) != length:
        raise ProtocolException(f"{what} payload is {len(payload)} bytes, expected {length}")


# ---- the shm control service (service 1): ShmMessages

SHM_SERVICE = 1
SHM_TOKEN_LENGTH = 16
_SHM_HELLO = 1
_SHM_OPEN = 2


@dataclass(frozen=True)
class ShmInfo:
    """HELLO's reply: where the server's arena lives and the token that proves we see the same folder."""

    directory: str
    token: bytes


@dataclass(frozen=True)
class ShmLocation:
    """OPEN's reply: a region's backing file, the range in it, and its revocation slot."""

    path: str
    file_offset: int
    length: int
    slot: int


def shm_hello() -> bytes:
    return bytes([_SHM_HELLO])


def shm_open(key: int) -> bytes:
    return struct.pack(">bq", _SHM_OPEN, key)


def decode_shm_info(reply) -> ShmInfo:
    directory, at = string_at(reply, 0)
    if len(reply) - at != SHM_TOKEN_LENGTH:
        raise ProtocolException(f"shm INFO has {len(reply) - at} bytes after the directory, expected {SHM_TOKEN_LENGTH}")
    return ShmInfo(directory, bytes(reply[at:]))


def decode_shm_location(reply) -> ShmLocation:
    path, at = string_at(reply, 0)
    if len(reply) - at != 20:
        raise ProtocolException(f"shm REGION payload has {len(reply) - at} bytes after the path, expected 20")
    offset, length, slot = struct.unpack_from(">qqi", reply, at)
    if offset < 0 or length < 0 or slot < 0:
        raise ProtocolException("shm REGION with negative field")
    return ShmLocation(path, offset, length, slot)
