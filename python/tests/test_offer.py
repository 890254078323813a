"""The server's data-plane offer, decoded from the bytes DataPlaneProtocolTest (Java) encodes, and
from a real server."""

from __future__ import annotations

import struct

import pytest

from conftest import CALL_SECONDS
from sluice.flight import SluiceFlightClient
from sluice.flight._data_plane import VERSION, Offer, decode_offer

#: DataPlaneProtocolTest.OFFER_HEX: version 3, node 0x0102030405060708, port 40621, 16 gets per
#: client, host "10.0.0.7", provider "tcp".
OFFER_HEX = "03" "0102030405060708" "00009ead" "00000010" "00000008" "31302e302e302e37" "00000003" "746370"
_BOUND_AT = 1 + 8 + 4


def test_the_offer_carries_the_gets_one_client_may_hold():
    assert VERSION == 3
    assert decode_offer(bytes.fromhex(OFFER_HEX)) == Offer("10.0.0.7", 40621, 0x0102030405060708, "tcp", 16)


@pytest.mark.parametrize("bound", [0, -1])
def test_an_offer_of_fewer_than_one_get_is_refused(bound):
    data = bytearray.fromhex(OFFER_HEX)
    struct.pack_into(">i", data, _BOUND_AT, bound)
    with pytest.raises(ValueError, match=f"{bound} streams per client"):
        decode_offer(bytes(data))


def test_an_offer_of_another_version_or_cut_short_is_refused():
    data = bytearray.fromhex(OFFER_HEX)
    data[0] = 2
    with pytest.raises(ValueError, match="version 2, this client speaks 3"):
        decode_offer(bytes(data))
    with pytest.raises(ValueError, match="truncated"):
        decode_offer(bytes.fromhex(OFFER_HEX)[: _BOUND_AT + 2])


def test_a_server_offers_its_per_client_share(served_table):
    with SluiceFlightClient(served_table.location, served_table.token, secret=served_table.secret,
                            timeout=CALL_SECONDS) as client:
        # sluice.flight.dataPlaneGetsPerClient's default, under sluice.flight.dataPlaneGets' 64
        assert client.decision.session.offer.max_streams == 16
