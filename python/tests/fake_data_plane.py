"""A Sluice server written in Python for tests of the client: a Flight server that answers the
``sluice.data-plane`` action with an offer and opens gets by DoExchange, and a transport server
that speaks the server side of the handshake (mac mode) and serves grants, pulls and READs of a
table laid out in one in-memory region. Each step can be replaced by the test's own, to answer
what the real server never would, or to answer late.

Use :class:`FakeDataPlane` as a context manager: it starts both servers on loopback and, at the
end of the block, closes the clients and loaders handed to :meth:`FakeDataPlane.owned`, then the
servers, and joins their threads. A step that stalls waits on :meth:`FakeDataPlane.stall`, which
closing ends, so that no server thread outlives its test. Every socket operation has a deadline
(:data:`SOCKET_SECONDS`).
"""

from __future__ import annotations

import socket
import struct
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import crc32c
import pyarrow as pa
from pyarrow import flight

from sluice.flight import DataPlaneOptions, SluiceFlightClient
from sluice.flight import _data_plane as data_plane, call_token
from sluice.transport import _frames as frames, _records as records
from sluice.transport._frames import ErrorCode, FrameType, Header
from sluice.transport._handshake import NodeIdentity, ServerHandshake

__all__ = [
    "REGION_KEY", "SECRET", "SOCKET_SECONDS", "STALL_SECONDS", "Carrier", "FakeDataPlane", "Handler", "Table",
    "announcement", "bare_frame", "body_frame", "encode_offer", "error_payload", "exactly", "options_of",
    "sample_batches", "schema_frame", "sign_answer",
]

SECRET = "fake-data-plane-secret"
#: The deadline of every socket operation of the fake servers (seconds).
SOCKET_SECONDS = 10.0
#: The longest a stalled step waits when nothing closes the fake (seconds).
STALL_SECONDS = 30.0
#: How often the accepting thread looks whether the fake is closing (seconds).
_ACCEPT_POLL_SECONDS = 0.1

_PULL_REQUEST = 0x50
_ANNOUNCEMENT = 0x41
_SCHEMA_FRAME, _BATCH_FRAME = 1, 3
_READ_REQUEST = struct.Struct(">qqi")
#: The region key every table is served under.
REGION_KEY = 7


# ---- wire encodings the client decodes (the server's side of sluice.flight._data_plane)


def encode_offer(port: int, identity_key: bytes, host: bytes = b"127.0.0.1", provider: bytes = b"tcp",
                 max_streams: int = 16) -> bytes:
    """The data-plane action's answer offering a transport at ``host:port`` proving ``identity_key``."""
    return struct.pack(">b", data_plane.VERSION) + identity_key + struct.pack(">ii", port, max_streams) \
        + struct.pack(">i", len(host)) + host + struct.pack(">i", len(provider)) + provider


def sign_answer(nonce: bytes, location: str, answer: bytes, secret: str = SECRET) -> bytes:
    """The signature a server with ``secret`` adds to ``answer`` for a client of ``location``."""
    return call_token.sign(secret, data_plane.SIGNATURE_LABEL, nonce, call_token.audience(location).encode("utf-8"),
                           answer)


def schema_frame(metadata: bytes) -> bytes:
    """The first metadata-only message of a get: the IPC Schema message flatbuffer."""
    return struct.pack(">bi", _SCHEMA_FRAME, len(metadata)) + metadata


def body_frame(sequence: int, metadata: bytes, node: int, region_length: int, offset: int, length: int,
               crc: int) -> bytes:
    """A record batch's entry of an announcement: its IPC metadata and where its body lies."""
    return struct.pack(">bq", _BATCH_FRAME, sequence) + struct.pack(">i", len(metadata)) + metadata \
        + struct.pack(">qqqq", node, 0, region_length, REGION_KEY) \
        + struct.pack(">qqI", offset, length, crc)


def announcement(bodies: Sequence[bytes], last: bool) -> bytes:
    """A pull's answer announcing ``bodies`` (each from :func:`body_frame`)."""
    out = struct.pack(">bbi", _ANNOUNCEMENT, 1 if last else 0, len(bodies))
    for body in bodies:
        out += struct.pack(">i", len(body)) + body
    return out


def error_payload(code: ErrorCode, text: bytes) -> bytes:
    """The payload of an ERROR frame."""
    return bytes([code]) + struct.pack(">H", len(text)) + text


def _split_message(message: pa.Buffer) -> Tuple[bytes, bytes]:
    """An encapsulated IPC message's flatbuffer and body."""
    b = message.to_pybytes()
    length = int.from_bytes(b[4:8], "little")
    return b[8:8 + length], b[8 + length:]


class Table:
    """Record batches laid one after another in one region: the schema's flatbuffer, the region,
    and each batch's flatbuffer with where its body lies and the body's CRC32C."""

    def __init__(self, batches: Sequence[pa.RecordBatch]) -> None:
        self.record_batches = list(batches)
        self.schema = batches[0].schema
        self.schema_metadata, _ = _split_message(self.schema.serialize())
        region = bytearray()
        #: each batch's flatbuffer, its body's offset and length in the region, the body's CRC32C
        self.bodies: List[Tuple[bytes, int, int, int]] = []
        for batch in batches:
            metadata, body = _split_message(batch.serialize())
            self.bodies.append((metadata, len(region), len(body), crc32c.crc32c(body)))
            region += body
        self.region = bytes(region)

    def body_frames(self, node: int) -> List[bytes]:
        """An announcement's entries for every batch, in ``node``'s region."""
        return [body_frame(i, metadata, node, len(self.region), offset, length, crc)
                for i, (metadata, offset, length, crc) in enumerate(self.bodies)]


# ---- the transport server


def exactly(sock: socket.socket, n: int) -> bytes:
    """``n`` bytes from ``sock`` (within the socket's timeout)."""
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("the client closed the connection")
        buf += chunk
    return bytes(buf)


def bare_frame(kind: FrameType, payload: bytes) -> bytes:
    """A frame of the handshake: its header and payload, no tag."""
    return Header(kind, len(payload), 0).encode() + payload


class Carrier:
    """The server side of one authenticated transport connection, in mac mode unless either side
    asks to encrypt: the handshake (in the constructor), then frames. Not thread safe: one thread
    serves one connection."""

    def __init__(self, sock: socket.socket, identity: Optional[NodeIdentity] = None, secret: str = SECRET,
                 encrypt: bool = False) -> None:
        self.sock = sock
        h = Header.decode(exactly(sock, frames.HEADER_LENGTH), frames.MAX_CONTROL_PAYLOAD)
        handshake = ServerHandshake(secret, identity or NodeIdentity(), encrypt, exactly(sock, h.length))
        sock.sendall(bare_frame(FrameType.CHALLENGE, handshake.challenge))
        h = Header.decode(exactly(sock, frames.HEADER_LENGTH), frames.MAX_CONTROL_PAYLOAD)
        auth_ok = handshake.auth_ok(exactly(sock, h.length))
        self.keys = handshake.keys
        self.sealer = records.Sealer(handshake.keys.s2c_secret, handshake.keys.encrypted)
        self.opener = records.Opener(handshake.keys.c2s_secret, handshake.keys.encrypted)
        self.send(FrameType.AUTH_OK, 0, auth_ok)

    def next(self) -> Tuple[Header, bytes]:
        """The client's next frame, its MAC checked (or, encrypted, its one record opened)."""
        header = exactly(self.sock, frames.HEADER_LENGTH)
        h = Header.decode(header, frames.MAX_FRAME_PAYLOAD)
        tag, payload = exactly(self.sock, records.TAG_LENGTH), exactly(self.sock, h.length)
        if self.keys.encrypted:
            return h, self.opener.open_record(header, h.type, payload + tag)
        self.opener.verify(header, h.type, tag, payload)
        return h, payload

    def send(self, kind: FrameType, correlation: int, payload: bytes) -> None:
        self.sock.sendall(self.sealer.seal(kind, correlation, payload))

    def answer_next(self, kind: FrameType, payload: bytes) -> None:
        """Answers the client's next frame with ``kind`` and ``payload``, whatever it asked."""
        h, _ = self.next()
        self.send(kind, h.correlation, payload)

    def wait_for_hang_up(self) -> None:
        while self.sock.recv(4096):
            pass


#: A step of the transport server replaced by the test: called with the fake, the connection, the
#: request's correlation id and its payload (for a READ: ``(key, offset, length)``); returns True
#: when it answered (or chose not to), False to let the fake answer as a real server would.
Handler = Callable[["FakeDataPlane", Carrier, int, Any], bool]


class _TransportServer:
    """Accepts connections on loopback, each served on a thread of its own: the first (the
    session's control connection) is only kept open; the others run ``serve``."""

    def __init__(self, identity: NodeIdentity, serve: Callable[[Carrier], None]) -> None:
        self._identity = identity
        self._serve = serve
        self._closing = threading.Event()
        self._lock = threading.Lock()
        self._sockets: List[socket.socket] = []
        self._threads: List[threading.Thread] = []
        self.failures: List[BaseException] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(_ACCEPT_POLL_SECONDS)
        self.port = self._listener.getsockname()[1]
        self._start(self._accept, "fake transport accept")

    def _start(self, target: Callable[..., None], name: str, *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        with self._lock:
            self._threads.append(thread)
        thread.start()

    def _accept(self) -> None:
        accepted = 0
        while not self._closing.is_set():
            try:
                sock, _ = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return  # the listener was closed
            sock.settimeout(SOCKET_SECONDS)
            with self._lock:
                self._sockets.append(sock)
            self._start(self._connection, f"fake transport connection {accepted}", sock, accepted == 0)
            accepted += 1

    def _connection(self, sock: socket.socket, control: bool) -> None:
        try:
            carrier = Carrier(sock, self._identity)
            if control:
                self._keep_open(sock)
            else:
                self._serve(carrier)
        except OSError:
            pass  # the client hung up, or the fake is closing: the end of the connection either way
        except BaseException as e:  # noqa: BLE001 - handed to the test by close()
            self.failures.append(e)
        finally:
            sock.close()

    def _keep_open(self, sock: socket.socket) -> None:
        """Reads what the client sends on its control connection until it hangs up or the fake closes."""
        while not self._closing.is_set():
            try:
                if not sock.recv(4096):
                    return
            except socket.timeout:
                continue

    def close(self) -> None:
        """Stops accepting, ends every connection and joins the threads."""
        self._closing.set()
        self._listener.close()
        with self._lock:
            sockets, threads = list(self._sockets), list(self._threads)
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already closed
        for thread in threads:
            thread.join(SOCKET_SECONDS)
        alive = [t.name for t in threads if t.is_alive()]
        assert not alive, f"fake transport threads still running: {alive}"


# ---- the Flight server


class _FlightServer(flight.FlightServerBase):
    """Answers with ``fake``'s steps."""

    def __init__(self, fake: "FakeDataPlane") -> None:
        super().__init__("grpc://127.0.0.1:0")
        self._fake = fake

    def do_action(self, context, action):
        return self._fake.answer_offer(action)

    def get_flight_info(self, context, descriptor):
        return self._fake.flight_info(descriptor)

    def do_get(self, context, ticket):
        return self._fake.plain_get(ticket)

    def do_exchange(self, context, descriptor, reader, writer):
        self._fake.open_get(reader, writer)


# ---- both servers


class FakeDataPlane:
    """A Flight server with a tcp data plane, serving :attr:`table` (which a test may replace
    between streams). By default each step answers as the real server does; a test replaces:

    * ``offer(fake, action)``: the data-plane action's results (default: an offer of the transport,
      signed as the real server signs it);
    * ``flight_info(fake, descriptor)``: a table's FlightInfo (default: one endpoint, ticket ``b"T"``);
    * ``plain_get(fake, ticket)``: a plain DoGet's stream (default: :attr:`table`'s batches);
    * ``open_get(fake, reader, writer)``: the DoExchange that opens a get (default: the schema
      frame, then waits for the client to end the call);
    * ``handlers``: transport steps by kind, ``"grant"``, ``"pull"``, ``"read"`` (see :data:`Handler`).

    By default a pull is answered with every body of the table (last), and the next pulls of the
    same grant with none. Thread safe as far as the servers need: each connection and call is
    served on a thread of its own.
    """

    def __init__(self, batches: Optional[Sequence[pa.RecordBatch]] = None, *,
                 offer: Optional[Callable[["FakeDataPlane", flight.Action], List[flight.Result]]] = None,
                 flight_info: Optional[Callable[["FakeDataPlane", flight.FlightDescriptor], flight.FlightInfo]] = None,
                 plain_get: Optional[Callable[["FakeDataPlane", flight.Ticket], Any]] = None,
                 open_get: Optional[Callable[["FakeDataPlane", Any, Any], None]] = None,
                 handlers: Optional[Dict[str, Handler]] = None) -> None:
        self.table = Table(batches if batches is not None else sample_batches())
        self.identity = NodeIdentity()
        self._offer, self._flight_info, self._plain_get, self._open_get = offer, flight_info, plain_get, open_get
        self._handlers = dict(handlers or {})
        self._released = threading.Event()
        self._owned: List[Any] = []
        self.transport = _TransportServer(self.identity, self._serve_connection)
        try:
            self._flight = _FlightServer(self)
        except BaseException:
            self.transport.close()
            raise
        self.location = f"grpc+tcp://127.0.0.1:{self._flight.port}"

    # -- what the test uses

    def client(self, data_plane: bool = True, **options: Any) -> SluiceFlightClient:
        """A client of this server with the secret and data-plane ``options`` (:func:`options_of`),
        closed with the fake."""
        return self.owned(SluiceFlightClient(self.location, None, secret=SECRET, data_plane=data_plane,
                                             data_plane_options=options_of(**options)))

    def owned(self, closeable: Any) -> Any:
        """``closeable``, closed when the fake closes (before the servers, after stalls end)."""
        self._owned.append(closeable)
        return closeable

    def stall(self) -> None:
        """Waits until the fake closes (at most :data:`STALL_SECONDS`): a step that never answers."""
        self._released.wait(STALL_SECONDS)

    def close(self) -> None:
        """Ends stalled steps, closes what the fake owns, then both servers; raises what a
        transport step raised other than the client hanging up."""
        self._released.set()
        try:
            for closeable in reversed(self._owned):
                closeable.close()
        finally:
            self._flight.shutdown()
            self.transport.close()
        if self.transport.failures:
            raise self.transport.failures[0]

    def __enter__(self) -> "FakeDataPlane":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- the Flight steps

    def answer_offer(self, action: flight.Action) -> List[flight.Result]:
        if self._offer is not None:
            return self._offer(self, action)
        answer = self.offer_bytes()
        return [flight.Result(answer), flight.Result(sign_answer(action.body.to_pybytes(), self.location, answer))]

    def offer_bytes(self) -> bytes:
        """The offer of this fake's transport, unsigned."""
        return encode_offer(self.transport.port, self.identity.public_key)

    def flight_info(self, descriptor: flight.FlightDescriptor) -> flight.FlightInfo:
        if self._flight_info is not None:
            return self._flight_info(self, descriptor)
        return flight.FlightInfo(self.table.schema, descriptor, [flight.FlightEndpoint(b"T", [])], -1, -1)

    def plain_get(self, ticket: flight.Ticket) -> Any:
        if self._plain_get is not None:
            return self._plain_get(self, ticket)
        return flight.RecordBatchStream(pa.Table.from_batches(self.table.record_batches))

    def open_get(self, reader: Any, writer: Any) -> None:
        if self._open_get is not None:
            self._open_get(self, reader, writer)
            return
        writer.write_metadata(pa.py_buffer(schema_frame(self.table.schema_metadata)))
        for _ in reader:
            pass  # until the client ends the call

    # -- the transport steps

    def _handled(self, kind: str, carrier: Carrier, correlation: int, request: Any) -> bool:
        handler = self._handlers.get(kind)
        return handler is not None and handler(self, carrier, correlation, request)

    def _serve_connection(self, carrier: Carrier) -> None:
        announced = False
        while True:
            h, payload = carrier.next()
            if h.type == FrameType.REQUEST and payload == data_plane.grant_request():
                if not self._handled("grant", carrier, h.correlation, payload):
                    announced = False
                    carrier.send(FrameType.RESPONSE, h.correlation, bytes(data_plane.GRANT_BYTES))
            elif h.type == FrameType.REQUEST and payload[:1] == bytes([_PULL_REQUEST]):
                if not self._handled("pull", carrier, h.correlation, payload):
                    bodies = [] if announced else self.table.body_frames(self.identity.node_id)
                    announced = True
                    carrier.send(FrameType.RESPONSE, h.correlation, announcement(bodies, True))
            elif h.type == FrameType.READ_REQUEST:
                key, offset, length = _READ_REQUEST.unpack(payload)
                if not self._handled("read", carrier, h.correlation, (key, offset, length)):
                    carrier.send(FrameType.READ_RESPONSE, h.correlation, self.table.region[offset:offset + length])
            else:
                carrier.send(FrameType.ERROR, h.correlation, error_payload(ErrorCode.PROTOCOL, b"unexpected frame"))


def sample_batches(count: int = 3, rows: int = 1000) -> List[pa.RecordBatch]:
    """``count`` batches of an int64 column ``a`` (0, 1, 2, ... across batches) and a string column ``s``."""
    return [pa.record_batch({"a": pa.array(range(i * rows, (i + 1) * rows), pa.int64()),
                             "s": pa.array([f"b{i}-{j}" for j in range(rows)])}) for i in range(count)]


def options_of(**options: Any) -> DataPlaneOptions:
    """Data-plane options for the fake: tcp (no shm), short deadlines, overridden by ``options``."""
    settings = dict(io_timeout=2.0, connect_timeout=2.0, shm=False)
    settings.update(options)
    return DataPlaneOptions(**settings)
