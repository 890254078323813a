"""The record layer without sockets (docs/protocol.md section 3): each epoch's keys from the spec's
formulas, the step at 2^20 in both modes, and mac mode's READ_RESPONSE tag over header and body."""

from __future__ import annotations

import hashlib
import hmac
import struct
import tracemalloc

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from sluice.errors import ProtocolException
from sluice.transport import _records as records
from sluice.transport._frames import FrameType, Header

SECRET = bytes(range(32))  # a direction's secret, as the handshake gives it
EPOCH = 1 << 20
HEADER = 16
TAG = records.TAG_LENGTH


def expand(prk: bytes, label: bytes, length: int) -> bytes:
    """HKDF-Expand for one block, written here from RFC 5869 rather than taken from the package."""
    return hmac.new(prk, label + b"\x01", hashlib.sha256).digest()[:length]


def secret_of(epoch: int) -> bytes:
    s = SECRET
    for _ in range(epoch):
        s = expand(s, b"sluice/7 next", 32)
    return s


def mac_key(epoch: int) -> bytes:
    return expand(secret_of(epoch), b"sluice/7 key", 32)


def aes_key(epoch: int) -> bytes:
    return expand(secret_of(epoch), b"sluice/7 key", 16)


def body_key(epoch: int) -> bytes:
    return expand(secret_of(epoch), b"sluice/7 body", 16)


def nonce(seq: int) -> bytes:
    return bytes(4) + struct.pack(">Q", seq)


def hmac_tag(key: bytes, seq: int, header: bytes, payload: bytes) -> bytes:
    return hmac.new(key, struct.pack(">Q", seq) + header + payload, hashlib.sha256).digest()[:TAG]


def gmac_tag(key: bytes, seq: int, header: bytes, payload: bytes) -> bytes:
    # AES-GCM over no plain text: what it returns is the tag alone.
    return AESGCM(key).encrypt(nonce(seq), b"", header + payload)


def at(direction, seq: int):
    direction.seq = seq
    return direction


def test_the_schedule_functions_are_the_specs():
    assert records.next_secret(SECRET) == secret_of(1)
    assert records.record_key(SECRET, False) == mac_key(0)
    assert records.record_key(SECRET, True) == aes_key(0)
    assert records.body_key(secret_of(1)) == body_key(1)


@pytest.mark.parametrize("kind", [FrameType.RESPONSE, FrameType.READ_RESPONSE])
def test_mac_frames_take_the_key_of_their_sequence_numbers_epoch(kind):
    sealer = at(records.Sealer(SECRET, False), EPOCH - 1)
    opener = at(records.Opener(SECRET, False), EPOCH - 1)
    payload = b"the last frame of an epoch, then the first of the next"
    tag_of, key_of = (gmac_tag, body_key) if kind == FrameType.READ_RESPONSE else (hmac_tag, mac_key)
    for seq, corr in ((EPOCH - 1, 5), (EPOCH, 6), (EPOCH + 1, 7)):
        frame = sealer.seal(kind, corr, payload)
        header = Header(kind, len(payload), corr).encode()
        assert frame == header + tag_of(key_of(seq >> 20), seq, header, payload) + payload
        opener.verify(frame[:HEADER], kind, frame[HEADER:HEADER + TAG], frame[HEADER + TAG:])
    assert sealer.seq == opener.seq == EPOCH + 2


def test_an_aead_frame_may_straddle_two_epochs():
    payload = bytes(range(256)) * 700  # three records
    assert records.records(len(payload)) == 3
    sealer = at(records.Sealer(SECRET, True), EPOCH - 1)
    frame = sealer.seal(FrameType.RESPONSE, 9, payload)
    header = frame[:HEADER]
    at_byte, opened = HEADER, b""
    for i, seq in enumerate((EPOCH - 1, EPOCH, EPOCH + 1)):
        n = records.record_length(len(payload), i)
        tag, ct = frame[at_byte:at_byte + TAG], frame[at_byte + TAG:at_byte + TAG + n]
        opened += AESGCM(aes_key(seq >> 20)).decrypt(nonce(seq), ct + tag, header)
        at_byte += TAG + n
    assert opened == payload and at_byte == len(frame)

    opener = at(records.Opener(SECRET, True), EPOCH - 1)
    at_byte = HEADER
    for i in range(3):
        n = records.record_length(len(payload), i)
        tag, ct = frame[at_byte:at_byte + TAG], frame[at_byte + TAG:at_byte + TAG + n]
        assert opener.open_record(header, FrameType.RESPONSE, ct + tag) == payload[i * records.RECORD_LENGTH:][:n]
        at_byte += TAG + n


@pytest.mark.parametrize("encrypted", [False, True])
def test_a_frame_sealed_with_the_epoch_befores_key_does_not_open(encrypted):
    # A sender that failed to step, or a key of an epoch gone, opens nothing in the next one.
    payload = b"payload"
    header = Header(FrameType.RESPONSE, len(payload), 1).encode()
    opener = at(records.Opener(SECRET, encrypted), EPOCH)
    with pytest.raises(ProtocolException, match="failed authentication"):
        if encrypted:
            opener.open_record(header, FrameType.RESPONSE, AESGCM(aes_key(0)).encrypt(nonce(EPOCH), payload, header))
        else:
            opener.verify(header, FrameType.RESPONSE, hmac_tag(mac_key(0), EPOCH, header, payload), payload)


def test_a_direction_steps_once_per_epoch_and_never_goes_back():
    sealer = records.Sealer(SECRET, False)
    sealer.seq = 3 * EPOCH + 5  # three steps at once, as a connection that skipped no frame took one by one
    frame = sealer.seal(FrameType.REQUEST, 1, b"x")
    assert frame[HEADER:HEADER + TAG] == hmac_tag(mac_key(3), 3 * EPOCH + 5, frame[:HEADER], b"x")
    with pytest.raises(ValueError, match="behind"):
        sealer.seq = 3 * EPOCH


def test_sequence_numbers_are_not_wrapped():
    sealer = records.Sealer(SECRET, False)
    # Stepping 2^43 epochs to get there would take a while; the keys are beside the point.
    sealer._seq, sealer._epoch = (1 << 63) - 2, ((1 << 63) - 2) >> records.EPOCH_BITS
    sealer.seal(FrameType.REQUEST, 1, b"the last")
    with pytest.raises(ProtocolException, match="exhausted"):
        sealer.seal(FrameType.REQUEST, 2, b"one more")


def read_response(body: bytes, seq: int = 1, corr: int = 4):
    header = Header(FrameType.READ_RESPONSE, len(body), corr).encode()
    return header, at(records.Sealer(SECRET, False), seq).seal(FrameType.READ_RESPONSE, corr, body)[HEADER:HEADER + TAG]


def test_a_read_response_tag_covers_every_byte_of_its_body():
    body = bytes(range(256)) * 64
    header, tag = read_response(body)
    at(records.Opener(SECRET, False), 1).verify(header, FrameType.READ_RESPONSE, tag, body)
    for i in (0, len(body) // 2, len(body) - 1):
        altered = bytearray(body)
        altered[i] ^= 0x01
        with pytest.raises(ProtocolException, match="READ_RESPONSE frame 1 failed authentication"):
            at(records.Opener(SECRET, False), 1).verify(header, FrameType.READ_RESPONSE, tag, altered)


def test_a_read_response_with_the_header_only_tag_of_version_6_is_refused():
    # Version 6 left a READ's body out of its tag: on the path, a body could be changed and its
    # frame still check out. Here the tag is that header-only HMAC under the epoch's key.
    body = bytearray(b"the bytes of a READ, as the server registered them")
    body[0] ^= 0xFF
    header = Header(FrameType.READ_RESPONSE, len(body), 4).encode()
    v6_tag = hmac.new(mac_key(0), struct.pack(">Q", 1) + header, hashlib.sha256).digest()[:TAG]
    with pytest.raises(ProtocolException, match="failed authentication"):
        at(records.Opener(SECRET, False), 1).verify(header, FrameType.READ_RESPONSE, v6_tag, body)


def test_a_read_responses_body_is_hashed_where_it_lies():
    body = bytearray(32 << 20)
    body[-1] = 1
    header, tag = read_response(bytes(body))
    opener = at(records.Opener(SECRET, False), 1)
    tracemalloc.start()
    try:
        opener.verify(header, FrameType.READ_RESPONSE, tag, memoryview(body))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, f"checking a 32 MiB body took {peak} bytes: it was copied"
