"""Every value of docs/protocol-vectors.json, reproduced from the inputs by sluice.transport
(the client half and, for the server's values, its test-only server half): the handshake, each
direction's secret and epoch 0's keys, the first step of the key schedule, and every frame sealed
at its sequence number and opened by the peer."""

from __future__ import annotations

import json

import pytest

from conftest import ROOT
from sluice.transport import _frames as frames, _handshake as handshake, _records as records
from sluice.transport._frames import FrameType, Header

VECTORS = json.loads((ROOT / "docs" / "protocol-vectors.json").read_text())


def v(name: str) -> bytes:
    return bytes.fromhex(VECTORS[name])


SECRET = v("secret").decode("utf-8")


def test_fixed_values():
    client = handshake.NodeIdentity(v("client_identity_seed"))
    server = handshake.NodeIdentity(v("server_identity_seed"))
    assert client.public_key == v("client_identity_public")
    assert server.public_key == v("server_identity_public")
    assert client.node_id.to_bytes(8, "big", signed=True) == v("client_node_id")
    assert server.node_id.to_bytes(8, "big", signed=True) == v("server_node_id")
    assert handshake.psk(SECRET) == v("psk")


def handshake_of(mode: str):
    """Both halves of the vectors' handshake, run to the end: the client and its AUTH, the server and its AUTH_OK."""
    client = handshake.ClientHandshake(
        SECRET, handshake.NodeIdentity(v("client_identity_seed")), v(f"{mode}.client_flags") == b"\x01",
        nonce=v("client_nonce"), ephemeral_private=v("client_ephemeral_private"),
    )
    server = handshake.ServerHandshake(
        SECRET, handshake.NodeIdentity(v("server_identity_seed")), v(f"{mode}.server_flags") == b"\x01", client.hello,
        nonce=v("server_nonce"), ephemeral_private=v("server_ephemeral_private"),
    )
    auth = client.auth(server.challenge)
    return client, server, auth, server.auth_ok(auth)


@pytest.mark.parametrize("mode", ["mac", "aead"])
def test_handshake(mode):
    client, server, auth, auth_ok = handshake_of(mode)
    assert client.hello == v(f"{mode}.hello")
    assert client.hello[43:75] == v("client_ephemeral_public")
    assert server.challenge == v(f"{mode}.challenge")
    assert server.challenge[43:75] == v("server_ephemeral_public")
    keys = client.keys
    assert keys.transcript_hash == v(f"{mode}.th")
    assert keys.dh == v("dh")
    assert keys.handshake_secret == v(f"{mode}.hs")
    assert keys.client_finished_key == v(f"{mode}.client_finished_key")
    assert keys.c2s_secret == v(f"{mode}.c2s_secret")
    assert keys.s2c_secret == v(f"{mode}.s2c_secret")
    assert keys.client_finished == v(f"{mode}.client_finished")
    assert keys.encrypted == (mode == "aead")
    assert auth == v(f"{mode}.auth")
    assert server.keys == keys
    assert auth_ok == v(f"{mode}.auth_ok")
    assert client.check_auth_ok(auth_ok) == handshake.NodeIdentity(v("server_identity_seed")).node_id


@pytest.mark.parametrize("mode", ["mac", "aead"])
def test_key_schedule(mode):
    keys = handshake_of(mode)[0].keys
    encrypted = mode == "aead"
    assert records.record_key(keys.c2s_secret, encrypted) == v(f"{mode}.c2s_key")
    assert records.record_key(keys.s2c_secret, encrypted) == v(f"{mode}.s2c_key")
    if not encrypted:
        assert records.body_key(keys.s2c_secret) == v("mac.s2c_body_key")
    assert records.next_secret(keys.c2s_secret) == v(f"{mode}.c2s_secret_1")
    assert records.record_key(v(f"{mode}.c2s_secret_1"), encrypted) == v(f"{mode}.c2s_key_1")


def frames_of(mode: str):
    """(direction, kind, correlation, payload, sequence number, the vectors' frame) of every frame
    in the vectors."""
    auth_ok = v(f"{mode}.auth_ok")
    return [
        ("s2c", FrameType.AUTH_OK, 0, auth_ok, 0, v(f"{mode}.auth_ok_frame")),
        ("c2s", FrameType.READ_REQUEST, 1, v("read_request"), 0, v(f"{mode}.read_request_frame")),
        ("s2c", FrameType.READ_RESPONSE, 1, v("read_response"), 1, v(f"{mode}.read_response_frame")),
        ("c2s", FrameType.READ_REQUEST, 2, v("read_request"), 1 << 20, v(f"{mode}.read_request_frame_1")),
    ]


@pytest.mark.parametrize("mode", ["mac", "aead"])
def test_frames_seal_as_the_vectors(mode):
    keys = handshake_of(mode)[0].keys
    sealers = {"c2s": records.Sealer(keys.c2s_secret, keys.encrypted), "s2c": records.Sealer(keys.s2c_secret, keys.encrypted)}
    for direction, kind, corr, payload, seq, frame in frames_of(mode):
        sealers[direction].seq = seq
        assert sealers[direction].seal(kind, corr, payload) == frame, f"{kind.name} at {direction} {seq}"


@pytest.mark.parametrize("mode", ["mac", "aead"])
def test_the_peer_opens_the_vectors_frames(mode):
    # Each frame opened by the side that receives it: the server's by the client, the client's by the server.
    keys = handshake_of(mode)[0].keys
    openers = {"c2s": records.Opener(keys.c2s_secret, keys.encrypted), "s2c": records.Opener(keys.s2c_secret, keys.encrypted)}
    for direction, kind, corr, payload, seq, frame in frames_of(mode):
        opener = openers[direction]
        opener.seq = seq
        header = Header.decode(frame[:16], 1 << 20)
        assert (header.type, header.correlation, header.length) == (kind, corr, len(payload))
        tag, body = frame[16:32], frame[32:]
        if keys.encrypted:
            assert opener.open_record(frame[:16], kind, body + tag) == payload
        else:
            opener.verify(frame[:16], kind, tag, body)
            assert body == payload


def test_every_vector_is_checked():
    # A value the Java side adds to the file fails here until a test above checks it.
    inputs = ["secret", "client_nonce", "server_nonce", "client_ephemeral_private", "server_ephemeral_private",
              "client_identity_seed", "server_identity_seed", "read_request", "read_response"]
    fixed = ["client_ephemeral_public", "server_ephemeral_public", "client_identity_public", "server_identity_public",
             "client_node_id", "server_node_id", "psk", "dh"]
    per_mode = ["client_flags", "server_flags", "hello", "challenge", "th", "hs", "client_finished_key", "c2s_secret",
                "s2c_secret", "c2s_key", "s2c_key", "client_finished", "auth", "auth_ok", "auth_ok_frame",
                "read_request_frame", "read_response_frame", "c2s_secret_1", "c2s_key_1", "read_request_frame_1"]
    checked = {"about", *inputs, *fixed, "mac.s2c_body_key", *(f"{m}.{n}" for m in ("mac", "aead") for n in per_mode)}
    assert set(VECTORS) == checked


def test_read_request_layout():
    assert frames.encode_read_request(0x0102030405060708, 0, 16) == v("read_request")


def test_a_tampered_frame_fails():
    from sluice.errors import ProtocolException

    for mode in ("mac", "aead"):
        keys = handshake.KeySchedule.derive(v("psk"), v("dh"), v(f"{mode}.th"), mode == "aead")
        frame = bytearray(v(f"{mode}.read_response_frame"))
        frame[-1] ^= 1
        opener = records.Opener(keys.s2c_secret, keys.encrypted)
        opener.seq = 1
        with pytest.raises(ProtocolException, match="READ_RESPONSE .* 1 failed authentication"):
            if keys.encrypted:
                opener.open_record(bytes(frame[:16]), FrameType.READ_RESPONSE, bytes(frame[32:] + frame[16:32]))
            else:
                opener.verify(bytes(frame[:16]), FrameType.READ_RESPONSE, frame[16:32], frame[32:])
