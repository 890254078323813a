"""sluice.flight against a real SluiceFlightServer (io.sluice.flight.ServeTestTable)."""

from __future__ import annotations

import logging
import zlib

import pyarrow as pa
import pytest
from pyarrow import flight

from conftest import CALL_SECONDS
from sluice.flight import SluiceFlightClient, call_token, list_shards, open_reader


def crc32_of(batches):
    """The CRC ServeTestTable prints: each batch's columns in order, values little-endian."""
    crc = 0
    for b in batches:
        for name in ["id", "x", "v", "label"]:
            col = b.column(name)
            if pa.types.is_fixed_size_list(col.type):
                col = col.flatten()
            crc = zlib.crc32(col.to_numpy(zero_copy_only=True).tobytes(), crc)
    return crc


def test_token_is_the_java_token(served_table):
    aud, expires = call_token.claims(served_table.secret, served_table.token)
    assert aud == call_token.audience(served_table.location)
    assert call_token.mint(served_table.secret, served_table.location, expires=expires) == served_table.token
    with pytest.raises(ValueError, match="MAC"):
        call_token.claims("another secret, long enough", served_table.token)
    with pytest.raises(ValueError, match="sluice.transport.secret"):
        call_token.mint("fifteen-bytes!!", served_table.location)


def test_tokens_per_server_or_from_the_secret(served_table):
    by_location = {served_table.location: served_table.token}
    assert call_token.for_server(by_location, served_table.location) == served_table.token
    with pytest.raises(KeyError):
        call_token.for_server(by_location, "grpc+tcp://127.0.0.1:1")
    minted = call_token.for_server(None, served_table.location, served_table.secret)
    assert call_token.claims(served_table.secret, minted)[0] == call_token.audience(served_table.location)
    assert call_token.for_server(None, served_table.location) is None
    shards = list_shards([served_table.location], "t.", by_location)
    assert [s.name for s in shards] == sorted(served_table.shards)
    assert [s.name for s in list_shards([served_table.location], "t.", secret=served_table.secret)] == \
        sorted(served_table.shards)


def test_a_token_minted_here_opens_its_server(served_table):
    token = call_token.mint(served_table.secret, served_table.location, validity=60)
    with open_reader(served_table.location, "t.s00", token, timeout=CALL_SECONDS) as reader:
        assert sum(b.num_rows for b in reader.read_all()) == served_table.shards["t.s00"]["rows"]


def test_every_shard_reads_as_the_server_digested_it(served_table):
    for name, expected in served_table.shards.items():
        with open_reader(served_table.location, name, served_table.token, timeout=CALL_SECONDS) as reader:
            assert reader.data_path == "grpc"
            assert reader.schema.names == ["id", "x", "v", "label"]
            batches = reader.read_all()
        assert len(batches) == expected["batches"], name
        assert sum(b.num_rows for b in batches) == expected["rows"], name
        assert crc32_of(batches) == expected["crc32"], name
        k = int(name[len("t.s"):])
        assert batches[0].column("id")[0].as_py() == k * 1_000_000


def test_shards_are_listed_in_name_order(served_table):
    shards = list_shards([served_table.location], "t.", served_table.token)
    assert [s.name for s in shards] == sorted(served_table.shards)
    assert [s.rows for s in shards] == [served_table.shards[s.name]["rows"] for s in shards]
    assert all(s.location == served_table.location for s in shards)
    with pytest.raises(LookupError, match="no flight named 'nothing[.]...'"):
        list_shards([served_table.location], "nothing.", served_table.token)


@pytest.mark.parametrize("kind", ["none", "garbage", "other-secret", "other-server", "expired"])
def test_a_call_without_the_token_is_refused(served_table, kind):
    token = {
        "none": None,
        "garbage": "not-the-token",
        "other-secret": call_token.mint("another secret, long enough", served_table.location),
        "other-server": call_token.mint(served_table.secret, "grpc+tcp://127.0.0.1:1"),
        "expired": call_token.mint(served_table.secret, served_table.location, expires=1_000_000),
    }[kind]
    with pytest.raises(flight.FlightUnauthenticatedError):
        with open_reader(served_table.location, "t.s00", token, timeout=CALL_SECONDS) as reader:
            reader.read_all()
    with pytest.raises(flight.FlightUnauthenticatedError):
        list_shards([served_table.location], "t.", token)


def test_a_missing_table_is_not_found(served_table):
    with pytest.raises(KeyError, match="no table .absent."):
        open_reader(served_table.location, "absent", served_table.token, timeout=CALL_SECONDS)


def test_the_transport_decision_is_made_once_with_its_reason(served_table, caplog):
    caplog.set_level(logging.INFO, logger="sluice.flight")
    with SluiceFlightClient(served_table.location, served_table.token, timeout=CALL_SECONDS) as client:
        for _ in range(2):
            with client.open("t.s01") as reader:
                reader.read_all()
        assert client.decision.data_path == "grpc"
        assert "no transport secret" in client.decision.reason
    assert len([r for r in caplog.records if "streams take grpc" in r.getMessage()]) == 1
    with SluiceFlightClient(served_table.location, served_table.token, secret=served_table.secret,
                            timeout=CALL_SECONDS) as client:
        assert client.decision.data_path == "tcp"
        assert "offers a tcp data plane at" in client.decision.reason
    with SluiceFlightClient(served_table.location, served_table.token, secret="s", data_plane=False,
                            timeout=CALL_SECONDS) as client:
        assert "turned off" in client.decision.reason


def test_a_stream_left_early_closes(served_table):
    with SluiceFlightClient(served_table.location, served_table.token, timeout=CALL_SECONDS) as client:
        shard = list_shards([served_table.location], "t.s02", served_table.token)[0]
        with client.open(shard) as reader:
            first = next(iter(reader))
        assert first.num_rows == 16
        # the client still works after a stream was cancelled
        with client.open(shard) as reader:
            assert len(reader.read_all()) == 2
