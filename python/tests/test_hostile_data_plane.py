"""The Python client against a data-plane server that answers wrongly or not at all
(:mod:`fake_data_plane`, on loopback): every failure is one of the package's exceptions (or
pyarrow's own timeout for a plain Flight call), and a server that never answers costs at most the
I/O timeout, not a wait for as long as the server likes."""

from __future__ import annotations

import gc
import threading
from typing import Any, Callable, Dict, List, Optional, Type

import pyarrow as pa
import pytest
from pyarrow import flight

from fake_data_plane import (
    SECRET, FakeDataPlane, Handler, Table, encode_offer, error_payload, options_of, sample_batches, schema_frame, sign_answer,
)
from sluice.errors import (
    RemoteHandlerException,
    ResourceExhaustedException,
    ShardReadException,
    SluiceException,
    TransportTimeoutException,
    TransportUnavailableException,
)
from sluice.flight import Shard, SluiceFlightClient, call_token
from sluice.loader import FlightLoader
from sluice.transport import _handshake as handshake
from sluice.transport._frames import ErrorCode, FrameType

#: The I/O timeout of the clients here (seconds).
IO_SECONDS = 1.0
#: How long an operation against a server that never answers may take in all: a few I/O timeouts,
#: far below the wait for the server (until the fake closes).
HANG_SECONDS = 5 * IO_SECONDS


def finishes_within(seconds: float, call: Callable[[], Any]) -> Any:
    """``call()``'s result, or what it raised, when it comes within ``seconds``; run on a thread
    so that a call that hangs fails the test instead of holding it.

    :raises AssertionError: ``call`` was still running after ``seconds``
    """
    outcome: Dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as e:  # noqa: BLE001 - handed to the test
            outcome["error"] = e

    thread = threading.Thread(target=run, name="client call", daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"the call was still waiting after {seconds} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def read_table(client) -> list:
    with client.open("t") as reader:
        return list(reader)


def stalls(fake: FakeDataPlane, *request: Any) -> Any:
    """A Flight step that never answers (until the fake closes)."""
    fake.stall()
    raise flight.FlightUnavailableError("the fake closed")


def reading_fails(fake: FakeDataPlane, error: Type[BaseException], match: str, **options: Any) -> Any:
    """A client of ``fake`` (I/O timeout IO_SECONDS, and ``options``) whose reading of the table
    raised ``error``, matching ``match``, within HANG_SECONDS; for the test to look at further."""
    client = fake.client(io_timeout=IO_SECONDS, **options)
    with pytest.raises(error, match=match):
        finishes_within(HANG_SECONDS, lambda: read_table(client))
    return client


def answers_error(code: ErrorCode, text: bytes, asked: Optional[List[int]] = None) -> Handler:
    """A handler of the fake's transport answering every request with an ERROR frame of ``code``
    and ``text``; the correlation of each goes to ``asked`` where given."""
    def handler(fake, carrier, correlation, request) -> bool:
        if asked is not None:
            asked.append(correlation)
        carrier.send(FrameType.ERROR, correlation, error_payload(code, text))
        return True

    return handler


# ---- an ERROR frame answering a READ


def test_an_error_answering_a_read_fails_the_stream():
    with FakeDataPlane(handlers={"read": answers_error(ErrorCode.OUT_OF_BOUNDS, b"outside the region")}) as fake:
        reading_fails(fake, SluiceException, "outside the region")


def test_a_read_body_changed_on_the_path_fails_the_stream_without_crc_checks():
    # mac mode's tag covers every byte of a READ: a body changed after the server tagged it fails
    # its READ even where nobody checks the CRC32C the server announced.
    def changes_a_body(fake, carrier, correlation, read):
        _, offset, length = read
        frame = bytearray(carrier.sealer.seal(FrameType.READ_RESPONSE, correlation, fake.table.region[offset:offset + length]))
        frame[-1] ^= 0x01
        carrier.sock.sendall(frame)
        return True

    with FakeDataPlane(handlers={"read": changes_a_body}) as fake:
        reading_fails(fake, SluiceException, "READ_RESPONSE frame [0-9]+ failed authentication", verify_reads=False)


# ---- a refusal for load is told by its code, never by its text

#: A refusal whose words are all the client ever looked for before refusals had codes.
READS_LIKE_A_REFUSAL = b"RESOURCE_EXHAUSTED: this client already holds 16 streams; every thread is busy"


def test_a_grant_refused_for_load_is_asked_for_again_within_the_deadline():
    asked = []

    def busy_twice(fake, carrier, correlation, request):
        asked.append(correlation)
        if len(asked) > 2:
            return False  # the grant, as a real server gives it
        carrier.send(FrameType.ERROR, correlation, error_payload(ErrorCode.EXHAUSTED, b"this peer holds 1 grant"))
        return True

    with FakeDataPlane(handlers={"grant": busy_twice}) as fake:
        client = fake.client(io_timeout=IO_SECONDS)
        batches = finishes_within(HANG_SECONDS, lambda: read_table(client))
        assert pa.Table.from_batches(batches).equals(pa.Table.from_batches(fake.table.record_batches))
        assert len(asked) == 3, asked


def test_a_grant_always_refused_for_load_fails_at_the_deadline():
    with FakeDataPlane(handlers={"grant": answers_error(ErrorCode.EXHAUSTED, b"this peer holds 1 grant")}) as fake:
        reading_fails(fake, ResourceExhaustedException, "this peer holds 1 grant")


def test_a_failed_grant_whose_text_reads_like_a_refusal_for_load_is_not_asked_for_again():
    asked: List[int] = []
    fails = answers_error(ErrorCode.HANDLER_FAILED, READS_LIKE_A_REFUSAL, asked)
    with FakeDataPlane(handlers={"grant": fails}) as fake:
        reading_fails(fake, RemoteHandlerException, "RESOURCE_EXHAUSTED: this client already holds")
        assert len(asked) == 1, asked


def test_a_failed_get_whose_text_reads_like_a_refusal_for_load_is_not_asked_for_again():
    opened = []

    def fails(fake, reader, writer):
        opened.append(reader)
        raise flight.FlightUnavailableError(READS_LIKE_A_REFUSAL.decode())

    with FakeDataPlane(open_get=fails) as fake:
        reading_fails(fake, flight.FlightUnavailableError, "every thread is busy")
        assert len(opened) == 1, opened


# ---- calls that answer at once wait at most the I/O timeout


def test_the_offer_waits_at_most_the_io_timeout():
    with FakeDataPlane(offer=stalls) as fake:
        client = reading_fails(fake, TransportUnavailableException, "nothing authenticated")
        assert client.decision.data_path == "grpc"
        assert not client.decision.authenticated, client.decision.reason


def test_a_tables_flight_info_waits_at_most_the_io_timeout():
    with FakeDataPlane(flight_info=stalls) as fake:
        client = fake.client(io_timeout=IO_SECONDS)
        with pytest.raises(flight.FlightTimedOutError):
            finishes_within(HANG_SECONDS, lambda: client.ticket("t"))


def test_the_start_of_a_plain_stream_waits_at_most_the_io_timeout():
    with FakeDataPlane(plain_get=stalls) as fake:
        reading_fails(fake, TransportTimeoutException, "the start of a Flight stream", data_plane=False)


# ---- a gRPC status on the offer action is a "no" nothing authenticated


def _unimplemented(fake, action):
    raise NotImplementedError("no such action")


def _fails(fake, action):
    raise ValueError("the handler failed")


@pytest.mark.parametrize("offer", [_unimplemented, _fails], ids=["unimplemented", "unknown"])
def test_a_grpc_status_on_the_offer_is_an_unauthenticated_no(offer):
    with FakeDataPlane(offer=offer) as fake:
        client = reading_fails(fake, TransportUnavailableException, "nothing authenticated")
        assert not client.decision.authenticated, client.decision.reason

        falls_back = fake.client(io_timeout=IO_SECONDS, unsigned_fallback=True)
        batches = finishes_within(HANG_SECONDS, lambda: read_table(falls_back))
        assert falls_back.decision.data_path == "grpc"
        assert pa.Table.from_batches(batches).equals(pa.Table.from_batches(fake.table.record_batches))


def test_a_loader_names_the_shard_whose_negotiation_failed():
    with FakeDataPlane(offer=_fails) as fake:
        shards = [Shard(f"s{i}", fake.location, b"T") for i in range(3)]
        loader = fake.owned(FlightLoader(shards, secret=SECRET, prefetch=2,
                                         data_plane_options=options_of(io_timeout=IO_SECONDS)))
        with pytest.raises(ShardReadException) as failure:
            finishes_within(HANG_SECONDS, lambda: list(loader))
        assert failure.value.shard in shards


# ---- a forged offer: unsigned, signed under another secret, or naming another transport's key


def test_an_unsigned_offer_of_another_node_of_the_cluster_is_an_unauthenticated_no():
    # Whoever is on the path swaps the offer for one naming another node of the cluster: that node
    # holds the secret and passes the handshake, and serves a table of the same name. Only the
    # server's signature, which the one on the path cannot make, says the node is the server's.
    with FakeDataPlane(sample_batches(count=2, rows=7)) as other:
        with FakeDataPlane(offer=lambda fake, action: [flight.Result(other.offer_bytes())]) as fake:
            client = reading_fails(fake, TransportUnavailableException, "nothing authenticated")
            assert not client.decision.authenticated, client.decision.reason
            assert "unsigned data-plane offer (no signature)" in client.decision.reason, client.decision.reason


def test_an_offer_signed_under_another_secret_or_for_another_audience_is_an_unauthenticated_no():
    def wrong_secret(fake, action):
        answer = fake.offer_bytes()
        return [flight.Result(answer),
                flight.Result(sign_answer(action.body.to_pybytes(), fake.location, answer, secret="another-secret-of-16+"))]

    def another_audience(fake, action):
        answer = fake.offer_bytes()
        return [flight.Result(answer), flight.Result(sign_answer(action.body.to_pybytes(), "grpc+tcp://127.0.0.1:1", answer))]

    def another_nonce(fake, action):
        answer = fake.offer_bytes()
        return [flight.Result(answer), flight.Result(sign_answer(bytes(16), fake.location, answer))]

    for forged in (wrong_secret, another_audience, another_nonce):
        with FakeDataPlane(offer=forged) as fake:
            client = reading_fails(fake, TransportUnavailableException, "nothing authenticated")
            assert "its signature does not verify" in client.decision.reason, client.decision.reason


def test_a_signed_offer_naming_another_key_with_the_same_node_id_is_an_unauthenticated_no(monkeypatch):
    # The server (the fake holds the secret) names its transport's address with another node's key.
    # Here every key derives one node id, as a second key found for a real node's id would (a search
    # of about 2^64 keys): the handshake at that address proves the fake's own key, whose node id is
    # the one named, and the client, which compares the whole key, still refuses it.
    monkeypatch.setattr(handshake, "node_id", lambda key: 0x5EED)
    with FakeDataPlane() as other:
        def names_another_key(fake, action):
            answer = encode_offer(fake.transport.port, other.identity.public_key)
            return [flight.Result(answer), flight.Result(sign_answer(action.body.to_pybytes(), fake.location, answer))]

        with FakeDataPlane(offer=names_another_key) as fake:
            assert fake.identity.node_id == other.identity.node_id != 0
            client = reading_fails(fake, TransportUnavailableException, "nothing authenticated")
            assert not client.decision.authenticated, client.decision.reason
            assert "proved another identity key" in client.decision.reason, client.decision.reason


def test_the_fakes_signed_offer_is_taken():
    # The refusals above are the signature's and the key's: the same fake, answering as the real
    # server does, is read over its data plane.
    with FakeDataPlane() as fake:
        client = fake.client(io_timeout=IO_SECONDS)
        batches = finishes_within(HANG_SECONDS, lambda: read_table(client))
        assert client.decision.data_path == "tcp", client.decision.reason
        assert pa.Table.from_batches(batches).equals(pa.Table.from_batches(fake.table.record_batches))


def test_an_offer_signed_for_the_audience_of_a_given_token_is_taken():
    # A client given one token for every server of a run (a shared audience) checks the signature
    # against that audience, the one its calls name and the server signs for.
    def signs_for_the_run(fake, action):
        answer = fake.offer_bytes()
        return [flight.Result(answer), flight.Result(sign_answer(action.body.to_pybytes(), "a-run", answer))]

    with FakeDataPlane(offer=signs_for_the_run) as fake:
        client = fake.owned(SluiceFlightClient(fake.location, call_token.mint(SECRET, "a-run"), secret=SECRET,
                                               data_plane_options=options_of(io_timeout=IO_SECONDS)))
        finishes_within(HANG_SECONDS, lambda: read_table(client))
        assert client.decision.data_path == "tcp", client.decision.reason


# ---- a garbled schema frame, a pull never answered


def test_a_garbled_schema_frame_is_a_sluice_exception():
    def garbles(fake, reader, writer):
        writer.write_metadata(pa.py_buffer(schema_frame(b"\xff" * 8)))
        for _ in reader:
            pass  # until the client ends the call

    with FakeDataPlane(open_get=garbles) as fake:
        reading_fails(fake, SluiceException, "not an Arrow schema")


def test_a_pull_never_answered_fails_within_the_io_timeout():
    io_seconds = 2.0  # far enough from twice the timeout that the bound below is no race
    pulled = threading.Event()

    def never_answers(fake, carrier, correlation, payload):
        pulled.set()
        return True

    with FakeDataPlane(handlers={"pull": never_answers}) as fake:
        client = fake.client(io_timeout=io_seconds)
        outcome: Dict[str, BaseException] = {}

        def read() -> None:
            try:
                read_table(client)
            except BaseException as e:  # noqa: BLE001 - looked at below
                outcome["error"] = e

        thread = threading.Thread(target=read, name="reads the stream", daemon=True)
        thread.start()
        assert pulled.wait(HANG_SECONDS), "the client sent no pull"
        thread.join(1.5 * io_seconds)  # the hang check: the pull's wait starts right after it is sent
        assert not thread.is_alive(), f"a pull never answered still waited after {1.5 * io_seconds} s"
        assert isinstance(outcome.get("error"), SluiceException), outcome
        assert isinstance(outcome["error"].__cause__, TransportTimeoutException), outcome


# ---- held: the memory a kept batch lies in


def test_a_kept_batch_is_not_overwritten_by_later_streams():
    first = [pa.record_batch({"a": pa.array(range(i * 100_000, (i + 1) * 100_000), pa.int64())}) for i in range(4)]
    later = [pa.record_batch({"a": pa.array([-7] * 100_000, pa.int64())}) for _ in range(4)]
    with FakeDataPlane(first) as fake:
        client = fake.client(io_timeout=IO_SECONDS)
        batches = finishes_within(HANG_SECONDS, lambda: read_table(client))
        assert client.decision.data_path == "tcp", client.decision.reason
        kept_slice = batches[1].slice(5, 3)
        kept_column = batches[2].column(0)
        kept_array = batches[3].column(0).to_numpy()
        kept_buffer = batches[0].column(0).buffers()[1]
        del batches
        gc.collect()

        fake.table = Table(later)
        for _ in range(3):
            again = finishes_within(HANG_SECONDS, lambda: read_table(client))
            assert again[0].column(0)[0].as_py() == -7
            del again
            gc.collect()

        assert kept_slice.column(0).to_pylist() == [100_005, 100_006, 100_007]
        assert kept_column[:3].to_pylist() == [200_000, 200_001, 200_002]
        assert kept_array[:3].tolist() == [300_000, 300_001, 300_002]
        assert kept_buffer.to_pybytes()[:16] == (0).to_bytes(8, "little") + (1).to_bytes(8, "little")
