"""The server's data-plane offer, decoded from the bytes DataPlaneProtocolTest (Java) encodes, and
from a real server."""

from __future__ import annotations

import struct

import pytest

from conftest import CALL_SECONDS
from sluice.flight import SluiceFlightClient
from sluice.flight._data_plane import VERSION, Offer, decode_offer

#: DataPlaneProtocolTest.OFFER_HEX: version 4, identity key bytes 1 to 32 (node c82d2520f6e0b15d),
#: port 40621, 16 gets per client, host "10.0.0.7", provider "tcp".
OFFER_KEY = bytes(range(1, 33))
OFFER_HEX = "04" + OFFER_KEY.hex() + "00009ead" "00000010" "00000008" "31302e302e302e37" "00000003" "746370"
_BOUND_AT = 1 + 32 + 4


def test_the_offer_names_the_transports_identity_key_and_the_gets_one_client_may_hold():
    assert VERSION == 4
    offer = decode_offer(bytes.fromhex(OFFER_HEX))
    assert offer == Offer("10.0.0.7", 40621, OFFER_KEY, "tcp", 16)
    assert offer.node_id & (2**64 - 1) == 0xC82D2520F6E0B15D


@pytest.mark.parametrize("bound", [0, -1])
def test_an_offer_of_fewer_than_one_get_is_refused(bound):
    data = bytearray.fromhex(OFFER_HEX)
    struct.pack_into(">i", data, _BOUND_AT, bound)
    with pytest.raises(ValueError, match=f"{bound} streams per client"):
        decode_offer(bytes(data))


def test_an_offer_of_another_version_or_cut_short_is_refused():
    data = bytearray.fromhex(OFFER_HEX)
    data[0] = 3
    with pytest.raises(ValueError, match="version 3, this client speaks 4"):
        decode_offer(bytes(data))
    with pytest.raises(ValueError, match="truncated"):
        decode_offer(bytes.fromhex(OFFER_HEX)[: _BOUND_AT + 2])
    with pytest.raises(ValueError, match="truncated"):
        decode_offer(bytes.fromhex(OFFER_HEX)[: 1 + 8])


def test_a_server_offers_its_per_client_share(served_table):
    with SluiceFlightClient(served_table.location, served_table.token, secret=served_table.secret,
                            timeout=CALL_SECONDS) as client:
        # sluice.flight.dataPlaneGetsPerClient's default, under sluice.flight.dataPlaneGets' 64
        assert client.decision.session.offer.max_streams == 16
