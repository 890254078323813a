"""The record layer (docs/protocol.md section 3; ``io.sluice.transport.wire.RecordLayer``): every
frame after the handshake is header | tag | payload, protected with its direction's keys and a
64-bit sequence number that never travels.

* **keys**: a direction's sequence numbers fall into epochs of 2^20. Epoch 0's secret is the one
  the handshake gave the direction; each next one is HKDF-Expand(secret, "sluice/7 next", 32), and
  the epoch's keys are expanded from its secret. A direction steps when it seals or opens the first
  frame or record of an epoch, and keeps nothing of the epoch before.
* **mac**: tag = HMAC-SHA256(key, u64 seq | header | payload)[:16], but a READ_RESPONSE's tag is
  GMAC(body key, nonce, header | payload): AES-128-GCM over no plain text, so that its bytes are
  hashed where they are (a sender's registered memory, a receiver's destination) and never copied.
* **aead**: AES-128-GCM in records of at most 64 KiB of plain text, each header | tag_0 | ct_0 |
  tag_1 | ct_1 ...: one sequence number per record, the 16-byte header as associated data.

Both GCM uses take nonce = 4 zero bytes | u64 seq. A :class:`Sealer` or :class:`Opener` is one
direction's state and is not thread safe.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from typing import List

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers import Cipher
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.ciphers.algorithms import AES
from cryptography.hazmat.primitives.ciphers.modes import GCM

from ..errors import ProtocolException
from ._frames import FrameType, Header
from ._handshake import hkdf_expand

TAG_LENGTH = 16
RECORD_LENGTH = 64 * 1024
#: Sequence numbers per epoch: 2^20, a key's share of AES-GCM's limit (docs/protocol.md 3.1).
EPOCH_BITS = 20
NEXT_SECRET = b"sluice/7 next"
RECORD_KEY = b"sluice/7 key"
BODY_KEY = b"sluice/7 body"
MAC_KEY_LENGTH = 32
AES_KEY_LENGTH = 16
#: The last sequence number a direction may take: the connection closes rather than wrap.
_LAST_SEQ = (1 << 63) - 2
#: The most associated data handed to OpenSSL in one call (its lengths are C ints).
_GHASH_CHUNK = 1 << 30
_SEQ = struct.Struct(">Q")
_NONCE = struct.Struct(">4xQ")


def records(length: int) -> int:
    """How many records carry an encrypted payload of ``length`` bytes (at least one)."""
    return max(1, -(-length // RECORD_LENGTH))


def record_length(length: int, index: int) -> int:
    return min(RECORD_LENGTH, length - index * RECORD_LENGTH)


def next_secret(secret: bytes) -> bytes:
    """secret_(e+1) from secret_e."""
    return hkdf_expand(secret, NEXT_SECRET, 32)


def record_key(secret: bytes, encrypted: bool) -> bytes:
    """An epoch's key: HMAC-SHA256's in mac mode (32 bytes), AES-128's in aead mode."""
    return hkdf_expand(secret, RECORD_KEY, AES_KEY_LENGTH if encrypted else MAC_KEY_LENGTH)


def body_key(secret: bytes) -> bytes:
    """An epoch's GMAC key for READ_RESPONSE (mac mode)."""
    return hkdf_expand(secret, BODY_KEY, AES_KEY_LENGTH)


class _Direction:
    def __init__(self, secret: bytes, encrypted: bool) -> None:
        if len(secret) != 32:
            raise ValueError(f"a direction's secret is 32 bytes, got {len(secret)}")
        self.encrypted = encrypted
        self._seq = 0
        self._epoch = 0
        self._secret = secret
        self._derive_keys()

    @property
    def seq(self) -> int:
        """The sequence number the next frame (or record) takes."""
        return self._seq

    @seq.setter
    def seq(self, value: int) -> None:
        # Only forward: the secrets of the epochs behind are gone. The test vectors seal a frame at
        # 2^20 this way; the keys step when that frame is sealed, as they would have on the wire.
        if not self._seq <= value <= _LAST_SEQ + 1:
            raise ValueError(f"sequence number {value} is behind {self._seq} or past the last")
        self._seq = value

    def _derive_keys(self) -> None:
        key = record_key(self._secret, self.encrypted)
        self._aead = AESGCM(key) if self.encrypted else None
        self._mac_key = None if self.encrypted else key
        self._body_key = None if self.encrypted else body_key(self._secret)

    def _next_seq(self) -> int:
        s = self._seq
        if s > _LAST_SEQ:
            raise ProtocolException("sequence numbers exhausted")
        epoch = s >> EPOCH_BITS
        if epoch != self._epoch:
            secret = self._secret
            for _ in range(epoch - self._epoch):
                secret = next_secret(secret)
            self._secret, self._epoch = secret, epoch
            self._derive_keys()
        self._seq = s + 1
        return s

    def _mac_tag(self, seq: int, kind: FrameType, header: bytes, payload) -> bytes:
        if kind == FrameType.READ_RESPONSE:
            return self._gmac(seq, header, payload)
        m = hmac.new(self._mac_key, _SEQ.pack(seq), hashlib.sha256)
        m.update(header)
        m.update(payload)
        return m.digest()[:TAG_LENGTH]

    def _gmac(self, seq: int, header: bytes, body) -> bytes:
        # GHASHes the body where it lies: a memoryview of it goes to OpenSSL, never a copy.
        gmac = Cipher(AES(self._body_key), GCM(_NONCE.pack(seq))).encryptor()
        gmac.authenticate_additional_data(header)
        view = memoryview(body).cast("B")
        for at in range(0, len(view), _GHASH_CHUNK):
            gmac.authenticate_additional_data(view[at : at + _GHASH_CHUNK])
        gmac.finalize()
        return gmac.tag


class Sealer(_Direction):
    """Protects this side's outgoing frames."""

    def seal(self, kind: FrameType, correlation: int, payload=b"") -> bytes:
        """The whole protected frame as it travels."""
        header = Header(kind, len(payload), correlation).encode()
        if not self.encrypted:
            tag = self._mac_tag(self._next_seq(), kind, header, payload)
            return header + tag + bytes(payload)
        out: List[bytes] = [header]
        view = memoryview(payload)
        for i in range(records(len(payload))):
            plain = view[i * RECORD_LENGTH : i * RECORD_LENGTH + record_length(len(payload), i)]
            nonce = _NONCE.pack(self._next_seq())  # steps the epoch (and its key) first
            sealed = self._aead.encrypt(nonce, bytes(plain), header)
            out.append(sealed[-TAG_LENGTH:])  # GCM appends the tag; the wire wants it first
            out.append(sealed[:-TAG_LENGTH])
        return b"".join(out)


class Opener(_Direction):
    """Checks (and decrypts) the peer's incoming frames, in wire order."""

    def verify(self, header: bytes, kind: FrameType, tag, payload) -> None:
        """Checks a mac-mode frame's tag over its header and payload; a READ_RESPONSE's payload is
        checked where it landed, before anybody is told it is there."""
        seq = self._next_seq()
        if not hmac.compare_digest(self._mac_tag(seq, kind, header, payload), bytes(tag)):
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
