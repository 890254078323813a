"""The record layer (docs/protocol.md section 3; ``io.sluice.transport.wire.RecordLayer``): every
frame after the handshake is header | tag | payload, protected with its direction's key and a
64-bit sequence number that never travels.

* **mac**: tag = HMAC-SHA256(key, u64 seq | header | payload)[:16]; a READ_RESPONSE's payload is
  left out of its tag (the bytes go straight into their destination; use aead to protect them).
* **aead**: AES-128-GCM in records of at most 64 KiB of plain text, each header | tag_0 | ct_0 |
  tag_1 | ct_1 ...: nonce = 4 zero bytes | u64 seq (one sequence number per record), the 16-byte
  header as associated data.

A :class:`Sealer` or :class:`Opener` is one direction's state and is not thread safe.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from typing import List

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..errors import ProtocolException
from ._frames import FrameType, Header

TAG_LENGTH = 16
RECORD_LENGTH = 64 * 1024
_SEQ = struct.Struct(">Q")
_NONCE = struct.Struct(">4xQ")


def records(length: int) -> int:
    """How many records carry an encrypted payload of ``length`` bytes (at least one)."""
    return max(1, -(-length // RECORD_LENGTH))


def record_length(length: int, index: int) -> int:
    return min(RECORD_LENGTH, length - index * RECORD_LENGTH)


def mac_covers_payload(kind: FrameType) -> bool:
    return kind != FrameType.READ_RESPONSE


class _Direction:
    def __init__(self, key: bytes, encrypted: bool) -> None:
        self.encrypted = encrypted
        self.key = key
        self._aead = AESGCM(key) if encrypted else None
        self.seq = 0

    def _next_seq(self) -> int:
        s = self.seq
        if s >= (1 << 63) - 1:
            raise ProtocolException("sequence numbers exhausted")
        self.seq = s + 1
        return s

    def _mac_tag(self, seq: int, header: bytes, payload) -> bytes:
        m = hmac.new(self.key, _SEQ.pack(seq), hashlib.sha256)
        m.update(header)
        if payload is not None:
            m.update(payload)
        return m.digest()[:TAG_LENGTH]


class Sealer(_Direction):
    """Protects this side's outgoing frames."""

    def seal(self, kind: FrameType, correlation: int, payload=b"") -> bytes:
        """The whole protected frame as it travels."""
        header = Header(kind, len(payload), correlation).encode()
        if not self.encrypted:
            tag = self._mac_tag(self._next_seq(), header, payload if mac_covers_payload(kind) else None)
            return header + tag + bytes(payload)
        out: List[bytes] = [header]
        view = memoryview(payload)
        for i in range(records(len(payload))):
            plain = view[i * RECORD_LENGTH : i * RECORD_LENGTH + record_length(len(payload), i)]
            sealed = self._aead.encrypt(_NONCE.pack(self._next_seq()), bytes(plain), header)
            out.append(sealed[-TAG_LENGTH:])  # GCM appends the tag; the wire wants it first
            out.append(sealed[:-TAG_LENGTH])
        return b"".join(out)


class Opener(_Direction):
    """Checks (and decrypts) the peer's incoming frames, in wire order."""

    def verify(self, header: bytes, kind: FrameType, tag, payload) -> None:
        """Checks a mac-mode frame's tag; ``payload`` is ignored for READ_RESPONSE."""
        seq = self._next_seq()
        expected = self._mac_tag(seq, header, payload if mac_covers_payload(kind) else None)
        if not hmac.compare_digest(expected, bytes(tag)):
            raise ProtocolException(f"{kind.name} frame {seq} failed authentication (altered, injected or out of order)")

    def open_record(self, header: bytes, kind: FrameType, ciphertext_and_tag) -> bytes:
        """Opens one record of an aead frame (its ciphertext followed by its tag): its plain text,
        returned only when the tag checks out."""
        seq = self._next_seq()
        try:
            return self._aead.decrypt(_NONCE.pack(seq), ciphertext_and_tag, header)
        except InvalidTag:
            raise ProtocolException(
                f"{kind.name} record {seq} failed authentication (altered, injected or out of order)"
            ) from None
