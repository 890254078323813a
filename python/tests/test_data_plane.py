"""sluice.flight's READ data plane against a real SluiceFlightServer (io.sluice.flight.ServeTestTable)
on tcp and on shm, with and without encryption."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading
import time

import pyarrow as pa
import pytest

from conftest import CALL_SECONDS, serve
from eventually import PipeLines, wait_until
from sluice.errors import (
    AuthenticationFailedException,
    ReadIntegrityException,
    ResourceExhaustedException,
    SluiceException,
)
from sluice.flight import DataPlaneOptions, SluiceFlightClient, open_reader
from sluice.flight import _data_plane as data_plane
from sluice.transport import connect
from test_flight import crc32_of


def read_everything(table, **options):
    for name, expected in table.shards.items():
        with open_reader(table.location, name, table.token, secret=table.secret, timeout=CALL_SECONDS,
                         data_plane_options=DataPlaneOptions(**options)) as reader:
            path = reader.data_path
            batches = reader.read_all()
        assert len(batches) == expected["batches"], name
        assert sum(b.num_rows for b in batches) == expected["rows"], name
        assert crc32_of(batches) == expected["crc32"], name
        assert batches[0].column("id")[0].as_py() == int(name[len("t.s"):]) * 1_000_000
    return path


@pytest.mark.parametrize("encrypt", [False, True], ids=["mac", "aead"])
def test_rows_over_tcp_are_the_java_rows(served_table, encrypt):
    assert read_everything(served_table, encrypt=encrypt) == "tcp"


@pytest.mark.parametrize("encrypt", [False, True], ids=["mac", "aead"])
def test_rows_over_shm_are_the_java_rows(served_shm_table, encrypt):
    assert read_everything(served_shm_table, encrypt=encrypt) == "shm"


def test_shm_can_be_read_over_tcp_instead(served_shm_table):
    assert read_everything(served_shm_table, shm=False) == "tcp"
    assert read_everything(served_shm_table, zero_copy=False) == "shm"  # attached, bodies READ


def test_small_read_chunks_and_window(served_table):
    read_everything(served_table, read_chunk_bytes=24, stream_window=1)


def test_a_wrong_secret_is_refused(served_table):
    offer_host, offer_port = _transport_address(served_table)
    with pytest.raises(AuthenticationFailedException):
        connect(offer_host, offer_port, "not-the-python-test-secret", connect_timeout=CALL_SECONDS)
    with SluiceFlightClient(served_table.location, served_table.token, secret="not-the-python-test-secret",
                            timeout=CALL_SECONDS) as client:
        # The server's offer is signed under its secret, which is not this client's.
        assert client.decision.data_path == "grpc"
        assert not client.decision.authenticated
        assert "its signature does not verify" in client.decision.reason
    # asked for encryption: no plaintext gRPC instead
    with SluiceFlightClient(served_table.location, served_table.token, secret="not-the-python-test-secret",
                            timeout=CALL_SECONDS, data_plane_options=DataPlaneOptions(encrypt=True)) as client:
        with pytest.raises(SluiceException, match="not falling back to plaintext"):
            client.open("t.s00")


def _transport_address(table):
    with SluiceFlightClient(table.location, table.token, secret=table.secret, timeout=CALL_SECONDS) as client:
        offer = client.decision.session.offer
        return offer.host, offer.port


def _mapped_files():
    """(start, end, path) of every file mapping of this process."""
    out = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            parts = line.split()
            if len(parts) >= 6:
                start, end = (int(x, 16) for x in parts[0].split("-"))
                out.append((start, end, parts[5]))
    return out


def _buffer_ranges(batch):
    for column in batch.columns:
        for array in [column] + ([column.flatten()] if pa.types.is_fixed_size_list(column.type) else []):
            for buf in array.buffers():
                if buf is not None and buf.size:
                    yield buf.address, buf.size


def test_batches_lie_in_the_landing_memory(served_table):
    with open_reader(served_table.location, "t.s02", served_table.token, secret=served_table.secret,
                     timeout=CALL_SECONDS) as reader:
        batches = reader.read_all()
        bodies = list(reader.body_ranges)
    assert len(bodies) == 2
    for batch, (start, length) in zip(batches, bodies):
        for address, size in _buffer_ranges(batch):
            assert start <= address and address + size <= start + length, "a buffer outside its landing body"


def test_batches_lie_in_the_shm_mapping(served_shm_table):
    with open_reader(served_shm_table.location, "t.s02", served_shm_table.token, secret=served_shm_table.secret,
                     timeout=CALL_SECONDS) as reader:
        assert reader.data_path == "shm"
        batches = reader.read_all()
    maps = _mapped_files()
    for batch in batches:
        for address, size in _buffer_ranges(batch):
            owners = [path for start, end, path in maps if start <= address and address + size <= end]
            assert owners and owners[0].startswith("/memfd:sluice-"), f"buffer at {address:x} is not in a server's memfd"
    assert batches[1].column("id")[0].as_py() == 2_000_016


def test_a_kept_batch_keeps_its_lease_and_releasing_it_frees_the_grant(java):
    with serve(java, "shm", shards=1) as table:
        with open_reader(table.location, "t.s00", table.token, secret=table.secret, timeout=CALL_SECONDS) as reader:
            batches = reader.read_all()
        # Nothing may free them while a batch is held, so one reading says it.
        assert table.counts() == HELD, "the server freed a table a batch still views"
        assert batches[0].column("id")[3].as_py() == 3
        del batches
        gc.collect()  # the views go; the reader ends its call on a thread, the server frees on one of its own
        _wait_idle(table, "the server to free the grant and the stream once no batch is held")


HELD = {"grants": 1, "streams": 1}
IDLE = {"grants": 0, "streams": 0}


def _wait_idle(table, what):
    """Waits until the server holds no grant and no stream: it frees them on its own threads."""
    wait_until(what, table.counts, lambda counts: counts == IDLE)


# Holds its batches until it is killed, or until its input ends: it never outlives the test.
KILLED_READER = """
import sys
from sluice.flight import open_reader
reader = open_reader(sys.argv[1], "t.s00", sys.argv[2], secret=sys.argv[3])
batches = reader.read_all()
print("holding", reader.data_path, flush=True)
sys.stdin.read()
"""


@pytest.mark.parametrize("provider", ["tcp", "shm"])
def test_a_reader_killed_while_holding_views_leaves_nothing_pinned(java, provider):
    with serve(java, provider, shards=1) as table:
        child = subprocess.Popen([sys.executable, "-c", KILLED_READER, table.location, table.token, table.secret],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            line = PipeLines(child.stdout, "the reader child").next_line("the reader child to hold its batches", 120)
            assert line is not None and line.split() == ["holding", provider], f"the child said {line!r}"
            if provider == "shm":
                assert table.counts() == HELD  # the child holds its views until it dies
        finally:
            child.kill()  # SIGKILL: the reader closes nothing, its process just ends
            child.wait(timeout=30)
            child.stdin.close()
        _wait_idle(table, f"the server to free what the killed {provider} reader held")


@pytest.mark.parametrize("provider", ["tcp", "shm"])
def test_a_corrupted_body_is_refused(java, provider):
    with serve(java, provider, shards=3) as table:
        table.corrupt("t.s02")
        with pytest.raises(ReadIntegrityException, match="corrupt READ of record batch body 1"):
            with open_reader(table.location, "t.s02", table.token, secret=table.secret, timeout=CALL_SECONDS) as reader:
                reader.read_all()
        # unverified, the flipped byte arrives: the check above is what refused it
        with open_reader(table.location, "t.s02", table.token, secret=table.secret, timeout=CALL_SECONDS,
                         data_plane_options=DataPlaneOptions(verify_reads=False)) as reader:
            assert crc32_of(reader.read_all()) != table.shards["t.s02"]["crc32"]
        _wait_idle(table, "the server to free the refused and the unverified streams")


def test_a_stream_left_early_frees_the_server(java):
    with serve(java, shards=3) as table:
        with SluiceFlightClient(table.location, table.token, secret=table.secret, timeout=CALL_SECONDS) as client:
            with client.open("t.s02") as reader:
                first = next(iter(reader))
            assert first.num_rows == 16
            # The call is cancelled; the server frees the stream when it sees that, on its own thread.
            _wait_idle(table, "the server to free a stream its reader left early, the client still open")
            with client.open("t.s02") as reader:
                assert len(reader.read_all()) == 2


def test_a_get_refused_because_this_host_holds_its_share_of_get_threads_is_asked_again(java):
    # One get thread in all: while one client holds it, the server refuses another client's get
    # with gRPC's RESOURCE_EXHAUSTED (this host's share), whose text the client never looks at.
    with serve(java, shards=1, settings={"sluice.flight.dataPlaneGets": "1"}) as table:
        def client() -> SluiceFlightClient:
            return SluiceFlightClient(table.location, table.token, secret=table.secret,
                                      data_plane_options=DataPlaneOptions(io_timeout=CALL_SECONDS))

        with client() as holder, client() as other:
            held = holder.open("t.s00")
            outcome = {}

            def read_other() -> None:
                try:
                    with other.open("t.s00") as reader:
                        outcome["rows"] = sum(b.num_rows for b in reader.read_all())
                except BaseException as e:  # noqa: BLE001 - looked at below
                    outcome["error"] = e

            waiting = threading.Thread(target=read_other, name="the other client's get", daemon=True)
            waiting.start()
            waiting.join(1.0)
            assert waiting.is_alive(), f"the other get ended while the only get thread was held: {outcome}"
            assert sum(b.num_rows for b in held.read_all()) == 16
            held.close()  # the call ends: the server's thread is free
            waiting.join(CALL_SECONDS)
            assert not waiting.is_alive(), "the other get was not asked again once the thread was free"
            assert outcome == {"rows": 16}


def test_a_grant_the_server_refuses_for_load_is_asked_for_again(java):
    # Every peer on loopback is one host, and the host holds one grant at most: the hog takes it
    # and never redeems it, so the client's grants are refused (ERROR code EXHAUSTED) until the
    # hog's grant expires with the acknowledgement deadline.
    settings = {"sluice.flight.grantsPerHost": "1", "sluice.flight.ackTimeoutMs": "2000"}
    with serve(java, shards=1, settings=settings) as table:
        host, port = _transport_address(table)
        with connect(host, port, table.secret, connect_timeout=CALL_SECONDS) as hog:
            hog.request(data_plane.grant_request(), CALL_SECONDS)
            with pytest.raises(ResourceExhaustedException, match="sluice.flight.grantsPerHost"):
                hog.request(data_plane.grant_request(), CALL_SECONDS)
            started = time.monotonic()
            with open_reader(table.location, "t.s00", table.token, secret=table.secret, timeout=CALL_SECONDS,
                             data_plane_options=DataPlaneOptions(io_timeout=CALL_SECONDS)) as reader:
                assert sum(b.num_rows for b in reader.read_all()) == 16
            assert time.monotonic() - started > 0.5, "the client's grant came while the hog's was unexpired"


def test_a_signed_refusal_is_honoured_only_for_the_server_it_names(java):
    # verbs is not on the test server's class path: its transport does not start, and it answers
    # the offer with a refusal signed over the nonce, its audience and the answer.
    from pyarrow import flight as pa_flight

    from sluice.flight import call_token
    from sluice.flight._negotiator import negotiate

    with serve(java, provider="verbs", shards=1, rows=10) as table:
        with SluiceFlightClient(table.location, table.token, secret=table.secret, timeout=CALL_SECONDS) as client:
            assert client.decision.data_path == "grpc"
            assert "(signed)" in client.decision.reason
            assert sum(b.num_rows for b in client.open("t.s00").read_all()) == 10
        plain = pa_flight.FlightClient(table.location)
        options = call_token.call_options(table.token, CALL_SECONDS)
        try:
            own = negotiate(plain, options, table.secret, audience=call_token.audience(table.location))
            assert own.authenticated and "(signed)" in own.reason
            relayed = negotiate(plain, options, table.secret, audience="grpc+tcp://127.0.0.1:1")
            assert not relayed.authenticated
            assert "unsigned" in relayed.reason
        finally:
            plain.close()


def test_verification_without_the_crc32c_module_is_refused_when_the_client_is_made(monkeypatch):
    from sluice.flight import _body_reader as body_reader

    monkeypatch.setattr(body_reader, "_crc32c", None)
    with pytest.raises(SluiceException, match="pip install crc32c"):
        SluiceFlightClient("grpc+tcp://127.0.0.1:9", secret="s" * 32)
    # Without verification, or without the data plane, nothing needs it.
    SluiceFlightClient("grpc+tcp://127.0.0.1:9", secret="s" * 32,
                       data_plane_options=DataPlaneOptions(verify_reads=False)).close()
    SluiceFlightClient("grpc+tcp://127.0.0.1:9", secret="s" * 32, data_plane=False).close()
