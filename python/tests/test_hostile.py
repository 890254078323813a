"""The Python client against hostile servers on loopback: whatever a server sends, the client
raises a Python exception (a TransportException where it speaks the transport) and never decides
more than the server proved. The servers are Python ones speaking the carrier (with the server
side of the handshake) and the real Java program, here with files the test cuts short."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import os
import queue
import socket
import stat
import struct
import subprocess
import sys
import threading
import time
from typing import Callable, Iterator, List, Optional, Tuple

import pytest

from conftest import CALL_SECONDS, ROWS, serve
from eventually import DEADLINE, PipeLines
from sluice.errors import (
    AuthenticationFailedException,
    PeerClosedException,
    ProtocolException,
    RemoteHandlerException,
    TransportTimeoutException,
    TransportUnavailableException,
    UnknownKeyException,
)
from sluice.flight import DataPlaneOptions, SluiceFlightClient, call_token, open_reader
from sluice.transport import _frames as frames, _records as records, _shm as shm, connect
from sluice.transport._frames import ErrorCode, FrameType, Header
from sluice.transport._handshake import ClientHandshake, NodeIdentity, ServerHandshake, node_id
from test_flight import crc32_of

from fake_data_plane import (
    Carrier, bare_frame as _bare, encode_offer, error_payload as _error_payload, exactly as _exactly, sign_answer,
)

SECRET = "hostile-test-secret"
NOT_UTF8 = b"\xff\xfe\xc3("


# ---- a loopback server whose every step is the test's


@contextlib.contextmanager
def listener(serve_one: Callable[[socket.socket], None]) -> Iterator[int]:
    """A loopback port whose first connection ``serve_one`` serves, on a thread; every socket
    operation there has the test's deadline. Re-raises what the server raised, unless the client
    hung up first."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(DEADLINE)
    failures: List[BaseException] = []

    def run() -> None:
        try:
            sock, _ = server.accept()
            with sock:
                sock.settimeout(DEADLINE)
                serve_one(sock)
        except ConnectionError:
            pass  # the client refused what it was sent and hung up: the test's point
        except BaseException as e:  # noqa: BLE001 (handed to the test)
            failures.append(e)

    thread = threading.Thread(target=run, name="hostile server", daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        server.close()
        thread.join(DEADLINE)
    assert not thread.is_alive(), "the hostile server did not finish"
    if failures:
        raise failures[0]


def answers_hello_with(frame: bytes) -> Callable[[socket.socket], None]:
    def serve_one(sock: socket.socket) -> None:
        h = Header.decode(_exactly(sock, frames.HEADER_LENGTH), frames.MAX_CONTROL_PAYLOAD)
        _exactly(sock, h.length)
        sock.sendall(frame)
        while sock.recv(4096):
            pass
    return serve_one


# ---- 1. garbage fails closed


def test_an_error_text_that_is_not_utf8_is_the_errors_exception():
    frame = _bare(FrameType.ERROR, _error_payload(ErrorCode.AUTHENTICATION_FAILED, b"no " + NOT_UTF8))
    with listener(answers_hello_with(frame)) as port:
        with pytest.raises(AuthenticationFailedException, match="peer: no \ufffd"):
            connect("127.0.0.1", port, SECRET, connect_timeout=DEADLINE)

    def refuses_a_request(sock):
        c = Carrier(sock, secret=SECRET)
        c.answer_next(FrameType.ERROR, _error_payload(ErrorCode.HANDLER_FAILED, NOT_UTF8))
        c.wait_for_hang_up()

    with listener(refuses_a_request) as port:
        with connect("127.0.0.1", port, SECRET, connect_timeout=DEADLINE) as conn:
            with pytest.raises(RemoteHandlerException, match="peer: \ufffd"):
                conn.request(b"hello", timeout=DEADLINE)


@pytest.mark.parametrize("raw, text", [
    (b"\xff\xfe\xc3(", "\ufffd\ufffd\ufffd("),  # two bytes never in UTF-8, a lead byte cut short
    (b"a\xe2\x82z", "a\ufffdz"),  # a maximal subpart of a 3-byte sequence is one U+FFFD
    (b"\xed\xa0\x80", "\ufffd\ufffd\ufffd"),  # a surrogate's encoding is ill-formed throughout
    (b"\xf0\x80\x80\x80", "\ufffd" * 4),  # so is an overlong one
    ("\u00e9".encode() * 1500, "\u00e9" * frames.MAX_ERROR_TEXT),  # 1024 code points kept, not bytes
    (b"\xff" * 1100, "\ufffd" * frames.MAX_ERROR_TEXT),
])
def test_an_error_text_is_decoded_by_maximal_subparts_and_cut_at_1024_code_points(raw, text):
    assert frames.decode_error(_error_payload(ErrorCode.UNKNOWN_KEY, raw)) == (ErrorCode.UNKNOWN_KEY, text)


def test_an_error_is_handled_by_its_code_whatever_its_text():
    def refuses_a_read(sock):
        c = Carrier(sock, secret=SECRET)
        c.answer_next(FrameType.ERROR, _error_payload(ErrorCode.UNKNOWN_KEY, b"REGION_REVOKED: ok \xc3"))
        c.answer_next(FrameType.RESPONSE, b"still open")
        c.wait_for_hang_up()

    with listener(refuses_a_read) as port:
        with connect("127.0.0.1", port, SECRET, connect_timeout=DEADLINE) as conn:
            with pytest.raises(UnknownKeyException, match="peer: REGION_REVOKED: ok \ufffd$"):
                conn.read(7, 0, memoryview(bytearray(8)), timeout=DEADLINE)
            assert conn.request(b"next", timeout=DEADLINE) == b"still open"


@pytest.mark.parametrize("n", [0, 4, 6])
def test_an_error_whose_length_disagrees_with_its_payload_is_a_protocol_error(n):
    def answers_a_bad_error(sock):
        c = Carrier(sock, secret=SECRET)
        c.answer_next(FrameType.ERROR, bytes([ErrorCode.HANDLER_FAILED]) + struct.pack(">H", n) + b"12345")
        c.wait_for_hang_up()

    with listener(answers_a_bad_error) as port:
        with connect("127.0.0.1", port, SECRET, connect_timeout=DEADLINE) as conn:
            with pytest.raises(ProtocolException, match=f"ERROR text of {n} bytes in a payload of 8"):
                conn.request(b"hello", timeout=DEADLINE)
            assert not conn.is_open


def test_a_name_that_is_not_utf8_is_a_protocol_error():
    def names_its_arena_badly(sock):
        c = Carrier(sock, secret=SECRET)
        c.answer_next(FrameType.CONTROL_REPLY, struct.pack(">H", len(NOT_UTF8)) + NOT_UTF8 + bytes(16))
        c.wait_for_hang_up()

    with listener(names_its_arena_badly) as port:
        with connect("127.0.0.1", port, SECRET, connect_timeout=DEADLINE) as conn:
            with pytest.raises(ProtocolException, match="not UTF-8"):
                shm.attach(conn, DEADLINE)


class OfferingServer:
    """A Flight server that answers the data-plane action with ``answer``, signed as a server with
    the secret signs it, counting the actions it was asked."""

    def __init__(self, answer: bytes) -> None:
        from pyarrow import flight

        outer = self
        self.actions = 0

        class Server(flight.FlightServerBase):
            def do_action(self, context, action):
                outer.actions += 1
                return [flight.Result(answer),
                        flight.Result(sign_answer(action.body.to_pybytes(), outer.location, answer, SECRET))]

        self.server = Server("grpc://127.0.0.1:0")
        self.location = f"grpc+tcp://127.0.0.1:{self.server.port}"

    def __enter__(self) -> "OfferingServer":
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()


def _offer(port: int) -> bytes:
    return encode_offer(port, NodeIdentity().public_key)


def answers_auth_with(frame: bytes) -> Callable[[socket.socket], None]:
    """A server that takes HELLO, answers a CHALLENGE of its own, and answers AUTH with ``frame``."""
    def serve_one(sock: socket.socket) -> None:
        h = Header.decode(_exactly(sock, frames.HEADER_LENGTH), frames.MAX_CONTROL_PAYLOAD)
        server = ServerHandshake(SECRET, NodeIdentity(), False, _exactly(sock, h.length))
        sock.sendall(_bare(FrameType.CHALLENGE, server.challenge))
        h = Header.decode(_exactly(sock, frames.HEADER_LENGTH), frames.MAX_CONTROL_PAYLOAD)
        _exactly(sock, h.length)
        sock.sendall(frame)
        while sock.recv(4096):
            pass
    return serve_one


@pytest.mark.parametrize("instead_of", ["CHALLENGE", "AUTH_OK"])
@pytest.mark.parametrize("code", [ErrorCode.PROTOCOL, ErrorCode.AUTHENTICATION_FAILED])
@pytest.mark.parametrize("encrypt", [False, True])
def test_a_transport_that_answers_garbage_is_no_authenticated_refusal(instead_of, code, encrypt):
    # An ERROR instead of CHALLENGE or AUTH_OK fails the connect whatever its text: no plain Flight
    # (unless asked for by unsigned_fallback), never plaintext for a client that asked for encryption.
    frame = _bare(FrameType.ERROR, _error_payload(code, NOT_UTF8))
    serve_one = answers_hello_with(frame) if instead_of == "CHALLENGE" else answers_auth_with(frame)
    with listener(serve_one) as port, OfferingServer(_offer(port)) as flight_server:
        with SluiceFlightClient(flight_server.location, "a-token", secret=SECRET, timeout=CALL_SECONDS,
                                data_plane_options=DataPlaneOptions(encrypt=encrypt)) as client:
            assert client.decision.data_path == "grpc"
            assert not client.decision.authenticated, client.decision.reason
            assert "\ufffd\ufffd\ufffd(" in client.decision.reason
            with pytest.raises(TransportUnavailableException, match="not falling back to"):
                client.get_stream(b"a ticket")


def test_an_unusable_secret_is_decided_before_anything_is_asked():
    refusal = bytes([0]) + b"no data plane here"
    with OfferingServer(refusal) as flight_server:
        with SluiceFlightClient(flight_server.location, "a-token", secret="fifteen-bytes!!",
                                timeout=CALL_SECONDS) as client:
            assert client.decision.data_path == "grpc"
            assert "secret is unusable" in client.decision.reason
            assert client.decision.authenticated  # the client's own setting, not the server's word
        assert flight_server.actions == 0


# ---- 2. identity keys of small order


class SmallOrderIdentity:
    """An identity whose public key is the neutral point: R = neutral, S = 0 verifies as its
    signature of every message, with no private key at all."""

    public_key = bytes([1]) + bytes(31)
    node_id = node_id(public_key)

    def sign(self, label: bytes, data: bytes) -> bytes:
        return bytes([1]) + bytes(63)


def test_a_server_with_an_identity_key_of_small_order_is_refused():
    def presents_a_small_order_key(sock):
        Carrier(sock, SmallOrderIdentity(), SECRET)
        sock.recv(1)

    with listener(presents_a_small_order_key) as port:
        with pytest.raises(AuthenticationFailedException, match="not a canonical Ed25519 key of large order"):
            connect("127.0.0.1", port, SECRET, connect_timeout=DEADLINE, expected_identity_key=SmallOrderIdentity.public_key)


def test_a_client_with_an_identity_key_of_small_order_is_refused():
    hello = ClientHandshake(SECRET, SmallOrderIdentity(), False).hello
    with pytest.raises(AuthenticationFailedException, match="not a canonical Ed25519 key of large order"):
        ServerHandshake(SECRET, NodeIdentity(), False, hello)


# ---- 3. READs are bounded by what they asked for, other frames by their limits


def test_a_read_of_more_than_the_message_limit_arrives(java):
    rows = 700_000  # 32 bytes a row: one batch body over 16 MiB
    assert rows * 32 > 16 << 20
    with serve(java, "tcp", shards=1, rows=rows) as table:
        with open_reader(table.location, "t.s00", table.token, secret=table.secret, timeout=CALL_SECONDS,
                         data_plane_options=DataPlaneOptions(read_chunk_bytes=64 << 20)) as reader:
            assert reader.data_path == "tcp"
            batches = reader.read_all()
    assert sum(b.num_rows for b in batches) == rows
    assert crc32_of(batches) == table.shards["t.s00"]["crc32"]


@pytest.mark.parametrize("kind", ["read", "response", "error"])
def test_an_answer_over_its_bound_is_refused_before_its_payload(kind):
    def answers_too_much(sock):
        c = Carrier(sock, secret=SECRET)
        h, _ = c.next()
        # a header claiming far more than allowed, and no payload behind it
        length = {"read": 17, "response": 2048, "error": frames.MAX_CONTROL_PAYLOAD + 1}[kind]
        answer = {"read": FrameType.READ_RESPONSE, "response": FrameType.RESPONSE, "error": FrameType.ERROR}[kind]
        sock.sendall(Header(answer, length, h.correlation).encode() + bytes(records.TAG_LENGTH))
        c.wait_for_hang_up()

    with listener(answers_too_much) as port:
        with connect("127.0.0.1", port, SECRET, connect_timeout=DEADLINE, max_message_bytes=1024) as conn:
            with pytest.raises(ProtocolException):
                if kind == "read":
                    conn.read(7, 0, memoryview(bytearray(16)), timeout=DEADLINE)
                else:
                    conn.request(b"hello", timeout=DEADLINE)
            assert not conn.is_open


# ---- 4. call tokens live as long as Java's and are renewed


def test_tokens_live_as_long_as_the_java_clients():
    assert call_token.DEFAULT_VALIDITY == 600.0  # FlightOption.TOKEN_VALIDITY_MS: 600000
    _, expires = call_token.claims(SECRET, call_token.mint(SECRET, "grpc+tcp://127.0.0.1:1"))
    assert expires <= time.time() + 601


def test_a_renewing_token_is_minted_again_at_half_its_validity():
    now = [1_000_000.0]
    tokens = call_token.RenewingToken(SECRET, "grpc+tcp://127.0.0.1:1", validity=60, clock=lambda: now[0])
    first = tokens()
    assert call_token.claims(SECRET, first)[1] == 1_000_061
    now[0] += 29
    assert tokens() == first
    now[0] += 1
    assert call_token.claims(SECRET, tokens())[1] == 1_000_091
    with pytest.raises(ValueError, match="positive"):
        call_token.RenewingToken(SECRET, "grpc+tcp://127.0.0.1:1", validity=0)
    with pytest.raises(ValueError, match="sluice.transport.secret"):
        call_token.RenewingToken("fifteen-bytes!!", "grpc+tcp://127.0.0.1:1")


def test_a_client_whose_token_expired_still_makes_calls(served_table):
    from pyarrow import flight

    now = [time.time() - 3600]  # an hour ago: the first token expired long before the call
    tokens = call_token.RenewingToken(served_table.secret, served_table.location, validity=60, clock=lambda: now[0])
    client = flight.FlightClient(served_table.location, middleware=[call_token.middleware(tokens)])
    try:
        options = flight.FlightCallOptions(timeout=CALL_SECONDS)
        descriptor = flight.FlightDescriptor.for_path("t.s00")
        with pytest.raises(flight.FlightUnauthenticatedError):
            client.get_flight_info(descriptor, options=options)
        now[0] = time.time()  # more than half the validity later: the next call presents a new token
        assert client.get_flight_info(descriptor, options=options).endpoints
    finally:
        client.close()


def test_a_client_with_the_secret_presents_renewing_tokens(served_table):
    from sluice.flight import SluiceFlightClient

    with SluiceFlightClient(served_table.location, secret=served_table.secret, timeout=CALL_SECONDS) as client:
        assert client.ticket("t.s00")
        assert not client._options.headers, "a fixed token in every call's options"


# ---- 5. an arena file cut short is an exception, not SIGBUS


def _cut_under(script: str, args: List[str], cut: Callable[[str], None], *, who: str, ready: str,
               again: str) -> Optional[str]:
    """Runs ``script`` with ``args`` in a Python child (``who``) that reads a file, says a line and
    waits for a line on its stdin; ``cut`` checks that first line (``ready`` names its wait) and
    cuts the file, or tries to. Once the child is told, its next line (``again`` names the wait) is
    returned, None when it said none; the child must end with 0. Each wait has a deadline, and a
    child still running at the end is killed.
    """
    child = subprocess.Popen([sys.executable, "-c", script, *args],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        lines = PipeLines(child.stdout, who)
        cut(lines.next_line(f"{who} {ready}", 120) or "")
        child.stdin.write("cut\n")
        child.stdin.flush()
        said = lines.next_line(f"{who} {again}", 120)
        assert child.wait(timeout=DEADLINE) == 0, f"{who} ended with {child.returncode} after {said!r}"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=DEADLINE)
        child.stdin.close()
    return said


CUT_READER = """
import sys
from sluice.flight import DataPlaneOptions, SluiceFlightClient

def mapped_arena_files():
    with open("/proc/self/maps") as maps:
        return sorted({line.split()[5] for line in maps if len(line.split()) >= 6 and "/sluice-" in line.split()[5]})

options = DataPlaneOptions(zero_copy=sys.argv[4] == "views")
with SluiceFlightClient(sys.argv[1], sys.argv[2], secret=sys.argv[3], timeout=60, data_plane_options=options) as client:
    with client.open("t.s00") as reader:
        rows = sum(b.num_rows for b in reader.read_all())
    print("mapped", client.decision.data_path, rows, *mapped_arena_files(), flush=True)
    sys.stdin.readline()  # the test cuts a file
    try:
        with client.open("t.s00") as reader:
            reader.read_all()
        print("read", flush=True)
    except Exception as e:
        print("raised", type(e).__name__, str(e).replace("\\n", " "), flush=True)
"""


@pytest.mark.parametrize("bodies", ["views", "copies"])
@pytest.mark.parametrize("cut", ["region", "slots"])
def test_an_arena_file_cut_short_is_an_exception(java, cut, bodies):
    # Regions as files, which a process of the user can cut: the reader copies their bodies even
    # when it was asked for views, and fails with an exception; the slot table is a file always.
    with serve(java, "shm", shards=1, settings={"sluice.transport.shm.sealed": "false"}) as table:
        def cut_the_files(first: str) -> None:
            words = first.split()
            assert words[:3] == ["mapped", "shm", "16"], f"the child said {words}"
            regions = [p for p in words[3:] if os.path.basename(p) != shm.SLOTS_FILE]
            assert regions, "no region file is mapped"
            for path in regions if cut == "region" else [os.path.join(os.path.dirname(regions[0]), shm.SLOTS_FILE)]:
                os.truncate(path, 0)

        said = _cut_under(CUT_READER, [table.location, table.token, table.secret, bodies], cut_the_files,
                          who="the reader child", ready="to map its region", again="to read again")
        assert said is not None and said.startswith("raised "), said
        assert ("was cut to 0 bytes" if cut == "region" else "was cut short") in said, said


SEALED_READER = """
import os, sys, zlib
from sluice.flight import SluiceFlightClient

def checksum(batches):
    return sum(zlib.crc32(b) for batch in batches for c in batch.columns for b in c.buffers() if b is not None)

def held_memfds():
    held = []
    for n in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{n}").startswith("/memfd:sluice-"):
                held.append(f"/proc/{os.getpid()}/fd/{n}")
        except OSError:
            pass  # the listing's own descriptor, gone
    return held

with SluiceFlightClient(sys.argv[1], sys.argv[2], secret=sys.argv[3], timeout=60) as client:
    with client.open("t.s00") as reader:
        batches = reader.read_all()  # views of the server's memory, kept across the cut
    with open("/proc/self/maps") as maps:
        viewed = sum("/memfd:sluice-" in line for line in maps)
    before = checksum(batches)
    rows = sum(b.num_rows for b in batches)
    print("viewing", client.decision.data_path, rows, viewed > 0, *held_memfds(), flush=True)
    sys.stdin.readline()  # the test tries to cut the regions
    print("read", checksum(batches) == before, flush=True)
"""


def _sealed_memfds(pid: int) -> List[str]:
    paths = []
    for n in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{n}").startswith("/memfd:sluice-"):
                paths.append(f"/proc/{pid}/fd/{n}")
        except OSError:
            pass
    return paths


def test_a_sealed_region_cannot_be_cut_under_a_view(java):
    # Regions are sealed memfds: the same user reopening one, through the reader's descriptor or the
    # server's, cannot shorten it (EPERM), and the views the reader holds keep their bytes.
    with serve(java, "shm", shards=1) as table:
        def try_to_cut(first: str) -> None:
            words = first.split()
            assert words[:4] == ["viewing", "shm", "16", "True"], f"the child said {words}"
            paths = words[4:] + _sealed_memfds(table.program.process.pid)
            assert words[4:], "the reader holds no sealed memfd of the server"
            for path in paths:
                with pytest.raises(PermissionError):
                    os.truncate(path, 0)
                fd = os.open(path, os.O_RDWR)
                try:
                    assert fcntl.fcntl(fd, fcntl.F_GET_SEALS) & fcntl.F_SEAL_SHRINK
                    with pytest.raises(PermissionError):
                        os.ftruncate(fd, 1)
                finally:
                    os.close(fd)

        said = _cut_under(SEALED_READER, [table.location, table.token, table.secret], try_to_cut,
                          who="the reader child", ready="to view its shard", again="to read its views again")
        assert said == "read True", said


class _NamingServer:
    """The server's side of the shm OPEN, answering each key with the path the test names for it."""

    def __init__(self, paths):
        self.paths = paths
        self.open = True

    def control(self, service, payload, timeout=None):
        path = self.paths[struct.unpack(">bq", payload)[1]].encode()
        return struct.pack(">H", len(path)) + path + struct.pack(">qqi", 0, 4096, 0)

    @property
    def is_open(self):
        return self.open


def test_a_memfd_is_mapped_only_if_sealed_and_the_arenas_else_read_over_the_connection(tmp_path, caplog):
    # A memfd the reader cannot open or will not trust is never mapped: its region is READ over the
    # connection, where the server serves its own bytes and answers for a region it revoked.
    token = bytes(range(16))
    prefix = shm.memfd_name_prefix(token)
    pid = os.getpid()
    arena = tmp_path / f"sluice-{pid}-{token.hex()}"
    arena.mkdir(mode=0o700)
    (arena / shm.SLOTS_FILE).write_bytes(bytes(shm.SLOTS * 8))
    (arena / shm.SLOTS_FILE).chmod(0o600)
    loose = os.memfd_create(prefix + "region-0", os.MFD_ALLOW_SEALING)
    sealed = os.memfd_create(prefix + "region-1", os.MFD_ALLOW_SEALING)
    other = os.memfd_create("sluice-" + bytes(16).hex() + "-region-0", os.MFD_ALLOW_SEALING)
    peer = None
    try:
        os.ftruncate(loose, 4096)
        for fd in (sealed, other):
            os.ftruncate(fd, 4096)
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
        opened = shm._open_memfd(f"/proc/{pid}/fd/{sealed}", pid, prefix)
        assert os.fstat(opened).st_size == 4096
        os.close(opened)
        with pytest.raises(OSError, match="may be shortened"):
            shm._open_memfd(f"/proc/{pid}/fd/{loose}", pid, prefix)
        with pytest.raises(OSError, match="not a memfd of the server's arena"):
            shm._open_memfd(f"/proc/{pid}/fd/{other}", pid, prefix)
        with pytest.raises(OSError, match="not a descriptor of the arena's owner"):
            shm._open_memfd(f"/proc/{pid}/fd/{sealed}", pid + 1, prefix)

        server = _NamingServer({
            1: f"/proc/{pid}/fd/{sealed}",
            2: f"/proc/{pid}/fd/{loose}",  # not sealed
            3: f"/proc/{pid}/fd/{other}",  # another arena's
            4: f"/proc/{pid}/fd/2147483647",  # not there, as to a reader in another pid namespace
            5: "/proc/1/fd/0",  # not the arena owner's
            6: f"/proc/{pid}/fd/2147483647",
        })
        peer = shm.ShmPeer(server, str(arena), shm._open_in_arena(str(arena), str(arena / shm.SLOTS_FILE)), prefix)
        with caplog.at_level("DEBUG", logger="sluice.transport._shm"):
            assert peer.reaches(1) and peer.sealed(1)
            for key in (2, 3, 4, 5):
                assert not peer.reaches(key) and not peer.sealed(key), key
                with pytest.raises(TransportUnavailableException, match="READ it"):
                    peer.view(key, 0, 16)
        warned = [r for r in caplog.records if r.levelname == "WARNING"]
        assert len(warned) == 1 and "may be shortened" in warned[0].getMessage(), [r.getMessage() for r in warned]
        assert sum("not mapping a memfd" in r.getMessage() for r in caplog.records) == 4
        server.open = False
        with pytest.raises(PeerClosedException):
            peer.reaches(6)  # the connection closed while its memfd was being opened
    finally:
        if peer is not None:
            peer.close()
        for fd in (loose, sealed, other):
            os.close(fd)


def test_a_reader_that_cannot_open_the_servers_memfds_reads_over_the_connection(java, monkeypatch, caplog):
    # A reader in another pid namespace than the server's finds nothing at /proc/<server pid>/fd/<n>:
    # it still reads every row, over the connection.
    decode = frames.decode_shm_location
    named = []

    def elsewhere(reply):
        where = decode(reply)
        named.append(where.path)
        return frames.ShmLocation(os.path.dirname(where.path) + "/2147483647", where.file_offset, where.length,
                                  where.slot)

    monkeypatch.setattr(frames, "decode_shm_location", elsewhere)
    with serve(java, "shm", shards=1) as table, caplog.at_level("WARNING", logger="sluice.transport._shm"):
        with open_reader(table.location, "t.s00", table.token, secret=table.secret, timeout=CALL_SECONDS) as reader:
            assert reader.data_path == "shm"
            batches = reader.read_all()
        assert named and all(path.startswith(f"/proc/{table.program.process.pid}/fd/") for path in named), named
    assert sum(b.num_rows for b in batches) == ROWS
    assert batches[0].column("id")[0].as_py() == 0
    warned = [r.getMessage() for r in caplog.records if "not mapping a memfd" in r.getMessage()]
    assert len(warned) == 1 and "2147483647" in warned[0], warned


CUT_COPIER = """
import os, struct, sys
from sluice.errors import RegionTruncatedException
from sluice.transport import _shm as shm

arena, region, length = sys.argv[1], sys.argv[2], int(sys.argv[3])

class Server:
    # Answers the shm OPEN of any key with the whole file, revocation slot 0.
    def control(self, service, payload, timeout=None):
        path = region.encode()
        return struct.pack(">H", len(path)) + path + struct.pack(">qqi", 0, length, 0)

peer = shm.ShmPeer(Server(), arena, shm._open_in_arena(arena, os.path.join(arena, shm.SLOTS_FILE)))
into = bytearray(length)
source = peer.positional(0x5EED, 0, length)
print("checked", flush=True)
sys.stdin.readline()  # the test cuts the file
try:
    source.read_into(memoryview(into))
    print("read", flush=True)
except RegionTruncatedException as e:
    half = open(region, "rb").read() == bytes(into[: length // 2])
    print("raised", "first-half-" + ("kept" if half else "lost"), e, flush=True)
"""


def test_a_file_cut_during_a_positional_copy_ends_it_with_an_exception(tmp_path):
    # The file is cut after the copy's checks passed: its positional reads come short, where a copy
    # from the mapping would be a SIGBUS.
    arena = tmp_path / "arena"
    arena.mkdir(mode=0o700)
    slots = bytearray(shm.SLOTS * 8)
    struct.pack_into("=q", slots, 0, 0x5EED)
    region = arena / "region-0"
    length = 4 << 20
    for path, data in ((arena / shm.SLOTS_FILE, slots), (region, os.urandom(length))):
        path.write_bytes(data)
        path.chmod(0o600)

    def cut_the_region(first: str) -> None:
        assert first == "checked", first
        os.truncate(region, length // 2)

    said = _cut_under(CUT_COPIER, [str(arena), str(region), str(length)], cut_the_region,
                      who="the copying child", ready="to check the region", again="to copy")
    assert said is not None and said.startswith("raised first-half-kept "), said
    assert f"was cut to {length // 2} bytes" in said and str(region) in said and "region 5eed" in said, said


# ---- 6. every wait has a deadline


def test_a_fifo_swapped_in_after_the_check_does_not_block_the_open(tmp_path, monkeypatch):
    arena = tmp_path / "arena"
    arena.mkdir(mode=0o700)
    fifo = arena / "region"
    os.mkfifo(fifo, 0o600)
    real_lstat = os.lstat

    def what_the_check_saw(path, *args, **kwargs):
        st = real_lstat(path, *args, **kwargs)
        if os.fspath(path) == str(fifo):  # a regular file then, the same inode: swapped after
            return os.stat_result((stat.S_IFREG | 0o600,) + tuple(st)[1:])
        return st

    monkeypatch.setattr(os, "lstat", what_the_check_saw)
    outcome: "queue.Queue[object]" = queue.Queue()

    def open_it() -> None:
        try:
            fd = shm._open_in_arena(str(arena), str(fifo))
            os.close(fd)
            outcome.put("opened")
        except OSError as e:
            outcome.put(e)

    threading.Thread(target=open_it, name="open in arena", daemon=True).start()
    try:
        got = outcome.get(timeout=DEADLINE)
    except queue.Empty:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # a writer lets the stuck open end
        raise AssertionError("opening a FIFO in the arena blocked") from None
    assert isinstance(got, OSError) and "replaced" in str(got), got


def test_a_port_outside_the_tcp_range_is_refused():
    with pytest.raises(ValueError, match="1..65535"):
        connect("127.0.0.1", 65536 + 4464, SECRET, connect_timeout=DEADLINE)


def test_a_server_that_never_answers_misses_the_deadline():
    def says_nothing(sock):
        while sock.recv(4096):
            pass

    with listener(says_nothing) as port:
        with pytest.raises(TransportTimeoutException):
            connect("127.0.0.1", port, SECRET, connect_timeout=0.5)


def test_a_name_is_looked_up_and_its_addresses_tried_within_the_deadline():
    def serves_one_request(sock):
        c = Carrier(sock, secret=SECRET)
        c.answer_next(FrameType.RESPONSE, b"pong")
        c.wait_for_hang_up()

    with listener(serves_one_request) as port:
        with connect("localhost", port, SECRET, connect_timeout=DEADLINE) as conn:
            assert conn.request(b"ping", timeout=DEADLINE) == b"pong"


# ---- 7. protocol 7: every byte of a READ is authenticated; version 6 is refused, and says so


def answers_a_read_with(alter: Callable[[Carrier, int, bytes], bytes], body: bytes,
                        encrypt: bool = False) -> Callable[[socket.socket], None]:
    """A server that answers the first READ with ``alter(carrier, correlation, body)``, the frame as
    it reaches the client."""
    def serve_one(sock: socket.socket) -> None:
        c = Carrier(sock, secret=SECRET, encrypt=encrypt)
        h, _ = c.next()
        sock.sendall(alter(c, h.correlation, body))
        c.wait_for_hang_up()
    return serve_one


def flipped_on_the_path(c: Carrier, correlation: int, body: bytes) -> bytes:
    frame = bytearray(c.sealer.seal(FrameType.READ_RESPONSE, correlation, body))
    frame[-5] ^= 0x20
    return bytes(frame)


def tagged_as_version_6(c: Carrier, correlation: int, body: bytes) -> bytes:
    # Version 6 tagged a READ_RESPONSE's header only, so that anybody on the path could change its
    # body: here a changed body with that tag, made with this connection's own key.
    altered = bytearray(body)
    altered[-5] ^= 0x20
    header = Header(FrameType.READ_RESPONSE, len(altered), correlation).encode()
    seq = c.sealer.seq
    c.sealer.seq = seq + 1
    key = records.record_key(c.keys.s2c_secret, False)
    tag = hmac.new(key, struct.pack(">Q", seq) + header, hashlib.sha256).digest()[:records.TAG_LENGTH]
    return header + tag + bytes(altered)


@pytest.mark.parametrize("alter", [flipped_on_the_path, tagged_as_version_6])
def test_a_read_body_changed_on_the_path_fails_the_read_and_closes_the_connection(alter):
    body = b"registered bytes, " * 1000
    into = bytearray(b"\xa5" * len(body))  # a reused buffer: it held other bytes
    with listener(answers_a_read_with(alter, body)) as port:
        with connect("127.0.0.1", port, SECRET, connect_timeout=DEADLINE) as conn:
            with pytest.raises(ProtocolException, match="READ_RESPONSE frame 1 failed authentication"):
                conn.read(7, 0, memoryview(into), timeout=DEADLINE)
            assert not conn.is_open
    assert into == bytes(len(body)), "bytes of a READ that failed its check stayed in its destination"


def record_at(i: int) -> int:
    """Where record ``i`` of an encrypted frame (its tag, then its ciphertext) starts."""
    return frames.HEADER_LENGTH + i * (records.TAG_LENGTH + records.RECORD_LENGTH)


def test_a_later_record_changed_on_the_path_leaves_no_record_of_the_read():
    body = bytes(range(256)) * (3 * records.RECORD_LENGTH // 256) + b"tail"

    def third_record_flipped(c: Carrier, correlation: int, b: bytes) -> bytes:
        frame = bytearray(c.sealer.seal(FrameType.READ_RESPONSE, correlation, b))
        frame[record_at(2) + records.TAG_LENGTH + 7] ^= 0x01
        return bytes(frame)

    into = bytearray(b"\xa5" * len(body))
    with listener(answers_a_read_with(third_record_flipped, body, encrypt=True)) as port:
        with connect("127.0.0.1", port, SECRET, encrypt=True, connect_timeout=DEADLINE) as conn:
            with pytest.raises(ProtocolException, match="failed authentication"):
                conn.read(7, 0, memoryview(into), timeout=DEADLINE)
            assert not conn.is_open
    assert into == bytes(len(body)), "records opened before the one that failed stayed in the destination"


@pytest.mark.parametrize("encrypt", [False, True], ids=["mac", "aead"])
@pytest.mark.parametrize("cut", ["closed", "stalled"])
def test_a_read_cut_mid_body_leaves_zeros_in_its_destination(cut, encrypt):
    body = bytes(range(256)) * (3 * records.RECORD_LENGTH // 256)
    # Past two records' worth of body: in either mode those bytes landed before the cut.
    if encrypt:
        cut_at = record_at(2) + records.TAG_LENGTH + 100
    else:
        cut_at = frames.HEADER_LENGTH + records.TAG_LENGTH + 2 * records.RECORD_LENGTH + 100

    def half_then(sock: socket.socket) -> None:
        c = Carrier(sock, secret=SECRET, encrypt=encrypt)
        h, _ = c.next()
        sock.sendall(c.sealer.seal(FrameType.READ_RESPONSE, h.correlation, body)[:cut_at])
        if cut == "stalled":
            c.wait_for_hang_up()

    into = bytearray(b"\xa5" * len(body))
    with listener(half_then) as port:
        with connect("127.0.0.1", port, SECRET, encrypt=encrypt, connect_timeout=DEADLINE) as conn:
            failure = TransportTimeoutException if cut == "stalled" else PeerClosedException
            with pytest.raises(failure):
                conn.read(7, 0, memoryview(into), timeout=1.0 if cut == "stalled" else DEADLINE)
            assert not conn.is_open
    assert into == bytes(len(body)), "bytes of a READ cut short stayed in its destination"


def test_a_read_body_checks_out_where_it_landed():
    body = bytes(range(256)) * 4096
    into = bytearray(len(body))
    sealed = lambda c, correlation, b: c.sealer.seal(FrameType.READ_RESPONSE, correlation, b)  # noqa: E731
    with listener(answers_a_read_with(sealed, body)) as port:
        with connect("127.0.0.1", port, SECRET, connect_timeout=DEADLINE) as conn:
            conn.read(7, 0, memoryview(into), timeout=DEADLINE)
    assert into == body


def test_a_challenge_of_version_6_is_refused():
    def speaks_6(sock):
        h = Header.decode(_exactly(sock, frames.HEADER_LENGTH), frames.MAX_CONTROL_PAYLOAD)
        challenge = ServerHandshake(SECRET, NodeIdentity(), False, _exactly(sock, h.length)).challenge
        sock.sendall(_bare(FrameType.CHALLENGE, struct.pack(">H", 6) + challenge[2:]))
        while sock.recv(4096):
            pass

    with listener(speaks_6) as port:
        with pytest.raises(AuthenticationFailedException, match="server speaks protocol version 6; this side speaks 7"):
            connect("127.0.0.1", port, SECRET, connect_timeout=DEADLINE)


def test_a_version_6_servers_refusal_is_reported_as_it_said():
    said = b"unsupported protocol version 7; this side speaks 6"
    frame = _bare(FrameType.ERROR, _error_payload(ErrorCode.PROTOCOL, said))
    with listener(answers_hello_with(frame)) as port:
        with pytest.raises(ProtocolException, match="^peer: unsupported protocol version 7; this side speaks 6$"):
            connect("127.0.0.1", port, SECRET, connect_timeout=DEADLINE)
    with listener(answers_hello_with(frame)) as port, OfferingServer(_offer(port)) as flight_server:
        with SluiceFlightClient(flight_server.location, "a-token", secret=SECRET, timeout=CALL_SECONDS) as client:
            assert said.decode() in client.decision.reason
            assert not client.decision.authenticated


def test_a_hello_of_version_6_is_refused_whatever_its_length():
    hello = ClientHandshake(SECRET, NodeIdentity(), False).hello
    for other in (struct.pack(">H", 6) + hello[2:], struct.pack(">H", 6)):
        with pytest.raises(AuthenticationFailedException, match="^unsupported protocol version 6; this side speaks 7$"):
            ServerHandshake(SECRET, NodeIdentity(), False, other)
