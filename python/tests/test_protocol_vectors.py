"""Every value of docs/protocol-vectors.json, reproduced from the inputs by sluice.transport
(the client half and, for the server's values, its test-only server half)."""

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


@pytest.mark.parametrize("mode", ["mac", "aead"])
def test_handshake_and_first_frames(mode):
    client = handshake.ClientHandshake(
        SECRET, handshake.NodeIdentity(v("client_identity_seed")), v(f"{mode}.client_flags") == b"\x01",
        nonce=v("client_nonce"), ephemeral_private=v("client_ephemeral_private"),
    )
    assert client.hello == v(f"{mode}.hello")
    assert client.hello[43:75] == v("client_ephemeral_public")
    server = handshake.ServerHandshake(
        SECRET, handshake.NodeIdentity(v("server_identity_seed")), v(f"{mode}.server_flags") == b"\x01", client.hello,
        nonce=v("server_nonce"), ephemeral_private=v("server_ephemeral_private"),
    )
    assert server.challenge == v(f"{mode}.challenge")
    assert server.challenge[43:75] == v("server_ephemeral_public")

    auth = client.auth(server.challenge)
    keys = client.keys
    assert keys.transcript_hash == v(f"{mode}.th")
    assert keys.dh == v("dh")
    assert keys.handshake_secret == v(f"{mode}.hs")
    assert keys.client_finished_key == v(f"{mode}.client_finished_key")
    assert keys.client_to_server == v(f"{mode}.c2s_key")
    assert keys.server_to_client == v(f"{mode}.s2c_key")
    assert keys.client_finished == v(f"{mode}.client_finished")
    assert keys.encrypted == (mode == "aead")
    assert auth == v(f"{mode}.auth")
    assert server.keys == keys

    auth_ok = server.auth_ok(auth)
    assert auth_ok == v(f"{mode}.auth_ok")
    assert client.check_auth_ok(auth_ok) == handshake.NodeIdentity(v("server_identity_seed")).node_id

    s2c = records.Sealer(keys.server_to_client, keys.encrypted)
    c2s = records.Sealer(keys.client_to_server, keys.encrypted)
    assert s2c.seal(FrameType.AUTH_OK, 0, auth_ok) == v(f"{mode}.auth_ok_frame")
    assert c2s.seal(FrameType.READ_REQUEST, 1, v("read_request")) == v(f"{mode}.read_request_frame")
    assert s2c.seal(FrameType.READ_RESPONSE, 1, v("read_response")) == v(f"{mode}.read_response_frame")

    # And the client's opener takes the server's frames back.
    opener = records.Opener(keys.server_to_client, keys.encrypted)
    for frame, payload in ((v(f"{mode}.auth_ok_frame"), auth_ok), (v(f"{mode}.read_response_frame"), v("read_response"))):
        header = Header.decode(frame[:16], 1 << 20)
        tag, body = frame[16:32], frame[32:]
        if keys.encrypted:
            assert opener.open_record(frame[:16], header.type, body + tag) == payload
        else:
            opener.verify(frame[:16], header.type, tag, body)
            assert body == payload


def test_read_request_layout():
    assert frames.encode_read_request(0x0102030405060708, 0, 16) == v("read_request")


def test_a_tampered_frame_fails():
    from sluice.errors import ProtocolException

    keys = handshake.KeySchedule.derive(v("psk"), v("dh"), v("aead.th"), True)
    frame = bytearray(v("aead.read_response_frame"))
    frame[-1] ^= 1
    with pytest.raises(ProtocolException, match="failed authentication"):
        records.Opener(keys.server_to_client, True).open_record(bytes(frame[:16]), FrameType.READ_RESPONSE, bytes(frame[32:] + frame[16:32]))
