"""A client connection of the carrier (``io.sluice.transport.carrier.CarrierConnection``'s client side),
blocking, on the caller's thread: the handshake, then REQUESTs, CONTROLs and READs.

Operations are started (``send_*``) and then waited for (:meth:`Connection.wait`), so a caller can
keep several under way: a batched READ is its READ_REQUEST frames in one write, and its answers
(in any order) land straight in the caller's memory: ``socket.recv_into`` the destination, its
GMAC then computed over the bytes where they landed (mac mode), or on an encrypted connection each
64 KiB record opened into it once its tag checks out. A READ is done only once its bytes checked
out; one that does not fails, and closes the connection. A READ that fails once its answer began
to land (its check, the connection closing or a deadline passing mid-body) leaves zeros over its
destination, never bytes of that answer. Every wait has a deadline; a connection that misses one
mid-frame, or sees a bad frame, is closed.

Not thread safe: one thread uses a connection. Close it (or use it as a context manager).
"""

from __future__ import annotations

import hmac
import queue
import select
import socket
import threading
import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple, Union

from ..errors import (
    AuthenticationFailedException,
    PeerClosedException,
    ProtocolException,
    TransportException,
    TransportTimeoutException,
)
from . import _frames as frames, _records as records
from ._frames import FrameType, Header
from ._handshake import ClientHandshake, NodeIdentity, node_id
from ._records import TAG_LENGTH

__all__ = ["Connection", "ReadRange", "connect"]

DEFAULT_MAX_MESSAGE_BYTES = 16 << 20

#: What the destination of a failed READ is overwritten with, a piece at a time.
_ZEROS = memoryview(bytes(1 << 20))


@dataclass(frozen=True)
class ReadRange:
    """``length`` bytes of region ``key`` from ``offset``, to land in ``into`` (a writable
    memoryview of exactly ``length`` bytes, owned by the caller)."""

    key: int
    offset: int
    length: int
    into: memoryview


class _Pending:
    __slots__ = ("kind", "into", "result", "error", "done")

    def __init__(self, kind: FrameType, into: Optional[memoryview] = None) -> None:
        self.kind = kind  # the answer expected: READ_RESPONSE, RESPONSE or CONTROL_REPLY
        self.into = into
        self.result: Optional[bytes] = None
        self.error: Optional[TransportException] = None
        self.done = False


class Connection:
    """An authenticated connection to one server. :attr:`peer_identity_key` is the server's Ed25519
    identity key and :attr:`peer_node` the node id it derives, both proven by its signature;
    :attr:`encrypted` says whether the record layer encrypts (aead) or only authenticates (mac:
    every byte of every frame, READ bodies included, but none hidden)."""

    def __init__(self, sock: socket.socket, hs: ClientHandshake, opener: records.Opener, peer_node: int,
                 io_timeout: float, max_message_bytes: int, address: Tuple[str, int]) -> None:
        keys = hs.keys
        self._sock = sock
        self._sealer = records.Sealer(keys.c2s_secret, keys.encrypted)
        self._opener = opener  # the server's direction, which AUTH_OK started
        self.peer_node = peer_node
        self.peer_identity_key = bytes(hs.challenge.identity_key)
        self.node_id = int.from_bytes(hs.hello[2:10], "big", signed=True)
        self.encrypted = keys.encrypted
        self.address = address
        self.io_timeout = io_timeout
        self._max_message = max_message_bytes
        self._next_corr = 1
        self._pending: Dict[int, _Pending] = {}
        self._scratch = bytearray(frames.HEADER_LENGTH + TAG_LENGTH)
        self._record = bytearray(records.RECORD_LENGTH + TAG_LENGTH) if keys.encrypted else None
        self._closed: Optional[str] = None

    # ---- starting operations

    def send_request(self, payload: bytes) -> int:
        """Sends a REQUEST for the server's message handler; returns its correlation id."""
        if len(payload) > self._max_message:
            raise ValueError(f"request of {len(payload)} bytes exceeds {self._max_message}")
        return self._send(FrameType.REQUEST, FrameType.RESPONSE, [payload])[0]

    def send_control(self, service: int, request: bytes) -> int:
        """Sends a CONTROL for control service ``service``; returns its correlation id."""
        return self._send(FrameType.CONTROL, FrameType.CONTROL_REPLY, [frames.encode_control(service, request)])[0]

    def send_reads(self, ranges: Sequence[ReadRange]) -> List[int]:
        """Sends one READ_REQUEST per range, back to back in one write; returns their correlation ids."""
        for r in ranges:
            if len(r.into) != r.length or r.into.readonly:
                raise ValueError(f"READ destination of {len(r.into)} bytes for a READ of {r.length}, or read-only")
            if r.offset < 0 or r.length < 0 or r.length > 0x7FFFFFFF:
                raise ValueError(f"READ of [{r.offset}, +{r.length}) is not a range")
        return self._send(FrameType.READ_REQUEST, FrameType.READ_RESPONSE,
                          [frames.encode_read_request(r.key, r.offset, r.length) for r in ranges],
                          [r.into for r in ranges])

    # ---- waiting

    def wait(self, correlation: int, deadline: float) -> Optional[bytes]:
        """Waits (until ``deadline``, a ``time.monotonic()`` value) for the operation's answer: the
        RESPONSE or CONTROL_REPLY payload, or None for a READ (its bytes are in place). Raises the
        peer's error as its exception type, TransportTimeoutException past the deadline."""
        p = self._pending.get(correlation)
        if p is None:
            raise KeyError(f"no operation {correlation} under way")
        while not p.done:
            self._receive_frame(deadline)
        del self._pending[correlation]
        if p.error is not None:
            raise p.error
        return p.result

    def is_done(self, correlation: int) -> bool:
        """Whether the operation's answer is in, taking the frames that have arrived without waiting
        for more (a frame that has started arriving is taken whole, within the I/O deadline)."""
        p = self._pending[correlation]
        while not p.done and self._readable():
            self._receive_frame(time.monotonic() + self.io_timeout)
        return p.done

    def forget(self, correlation: int) -> None:
        """Stops waiting for an operation: its answer is taken and dropped when it comes. A READ's
        destination is still written until then, so the caller keeps it until the connection
        closes or :meth:`wait` returned."""
        p = self._pending.get(correlation)
        if p is not None and p.done:
            del self._pending[correlation]

    # ---- whole operations

    def request(self, payload: bytes, timeout: Optional[float] = None) -> bytes:
        return self.wait(self.send_request(payload), self._deadline(timeout))

    def control(self, service: int, request: bytes, timeout: Optional[float] = None) -> bytes:
        return self.wait(self.send_control(service, request), self._deadline(timeout))

    def read_batch(self, ranges: Sequence[ReadRange], timeout: Optional[float] = None) -> None:
        """READs every range into its destination; raises the first failure once all are answered."""
        deadline = self._deadline(timeout)
        first: Optional[BaseException] = None
        for corr in self.send_reads(ranges):
            try:
                self.wait(corr, deadline)
            except TransportException as e:
                first = first or e
        if first is not None:
            raise first

    def read(self, key: int, offset: int, into: memoryview, timeout: Optional[float] = None) -> None:
        self.read_batch([ReadRange(key, offset, len(into), into)], timeout)

    @property
    def is_open(self) -> bool:
        return self._closed is None

    @property
    def has_pending(self) -> bool:
        """Whether an operation is still under way (its answer not yet taken)."""
        return bool(self._pending)

    def close(self) -> None:
        if self._closed is None:
            self._closed = "closed by this side"
            try:
                self._sock.close()
            except OSError:
                pass

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- internals

    def _deadline(self, timeout: Optional[float]) -> float:
        return time.monotonic() + (self.io_timeout if timeout is None else timeout)

    def _check_open(self) -> None:
        if self._closed is not None:
            raise PeerClosedException(f"connection to {self.address[0]}:{self.address[1]} is closed ({self._closed})")

    def _send(self, kind: FrameType, answer: FrameType, payloads: List[bytes],
              destinations: Optional[List[memoryview]] = None) -> List[int]:
        self._check_open()
        corrs, wire = [], []
        for i, payload in enumerate(payloads):
            corr = self._next_corr
            self._next_corr += 1
            wire.append(self._sealer.seal(kind, corr, payload))
            self._pending[corr] = _Pending(answer, destinations[i] if destinations else None)
            corrs.append(corr)
        try:
            self._sock.settimeout(self.io_timeout)  # the whole sendall's deadline
            self._sock.sendall(b"".join(wire))
        except socket.timeout as e:
            self._fail("a write did not finish within its deadline")
            raise TransportTimeoutException(
                f"{self.address[0]}:{self.address[1]} took no data for {self.io_timeout} s") from e
        except OSError as e:
            self._fail(f"write failed: {e}")
            raise PeerClosedException(f"connection to {self.address} failed writing: {e}") from e
        return corrs

    def _readable(self) -> bool:
        self._check_open()
        r, _, _ = select.select([self._sock], [], [], 0)
        return bool(r)

    def _fail(self, why: str) -> None:
        if self._closed is None:
            self._closed = why
            try:
                self._sock.close()
            except OSError:
                pass

    def _recv_into(self, view: memoryview, deadline: float) -> None:
        got, n = 0, len(view)
        while got < n:
            left = deadline - time.monotonic()
            if left <= 0:
                self._fail("a frame was not received within its deadline")
                raise TransportTimeoutException(f"no answer from {self.address[0]}:{self.address[1]} within the deadline")
            self._sock.settimeout(left)
            try:
                k = self._sock.recv_into(view[got:], n - got)
            except socket.timeout:
                continue
            except OSError as e:
                self._fail(f"read failed: {e}")
                raise PeerClosedException(f"connection to {self.address} failed: {e}") from e
            if k == 0:
                self._fail("the server closed the connection")
                raise PeerClosedException(f"{self.address[0]}:{self.address[1]} closed the connection")
            got += k

    def _receive_frame(self, deadline: float) -> None:
        """Takes one whole frame and completes the operation it answers."""
        self._check_open()
        scratch = memoryview(self._scratch)
        self._recv_into(scratch, deadline)
        header_bytes = bytes(scratch[: frames.HEADER_LENGTH])
        try:
            # Each kind's own bound is checked below, before its payload is read: a READ_RESPONSE
            # is exactly the length of the READ it answers, which the caller chose.
            h = Header.decode(header_bytes, frames.MAX_FRAME_PAYLOAD)
            p = self._pending.get(h.correlation)
            if h.type == FrameType.ERROR:
                code, text = frames.decode_error(self._payload(h, header_bytes, scratch[16:], frames.MAX_CONTROL_PAYLOAD, deadline))
                if h.correlation == 0 or p is None:
                    self._fail(f"the server ended the connection: {code.name}: {text}")
                    raise code.to_exception(text)
                p.error, p.done = code.to_exception(text), True
                return
            if p is None or h.type != p.kind:
                raise ProtocolException(f"{h.type.name} under correlation id {h.correlation} answers no operation of that kind")
            if h.type == FrameType.READ_RESPONSE:
                if h.length != len(p.into):
                    raise ProtocolException(f"READ_RESPONSE of {h.length} bytes for a READ of {len(p.into)}")
                self._land(h, header_bytes, scratch[16:], p.into, deadline)
                p.done = True
                return
            limit = self._max_message if h.type == FrameType.RESPONSE else frames.MAX_CONTROL_PAYLOAD
            p.result, p.done = self._payload(h, header_bytes, scratch[16:], limit, deadline), True
        except ProtocolException as e:
            self._fail(str(e))
            raise

    def _payload(self, h: Header, header_bytes: bytes, first_tag, limit: int, deadline: float) -> bytes:
        if h.length > limit:
            raise ProtocolException(f"{h.type.name} payload of {h.length} bytes exceeds {limit}")
        out = bytearray(h.length)
        if not self.encrypted:
            self._recv_into(memoryview(out), deadline)
            self._opener.verify(header_bytes, h.type, first_tag, out)
            return bytes(out)
        self._land(h, header_bytes, first_tag, memoryview(out), deadline)
        return bytes(out)

    def _land(self, h: Header, header_bytes: bytes, first_tag, into: memoryview, deadline: float) -> None:
        """Receives a payload into ``into``: mac READ_RESPONSE bytes straight from the socket, then
        their GMAC computed where they landed (``first_tag`` is the caller's scratch, which nothing
        overwrites meanwhile); aead records opened one by one, each written only once its tag
        checks out. If anything fails on the way, ``into`` is zeroed before the failure goes up:
        the caller's memory, reused or read after a failure it may not look at, keeps no byte of
        an answer that did not check out, nor of one cut short (nor of the records before one that
        failed)."""
        try:
            self._land_unchecked(h, header_bytes, first_tag, into, deadline)
        except BaseException:
            _zero(into)
            raise

    def _land_unchecked(self, h: Header, header_bytes: bytes, first_tag, into: memoryview, deadline: float) -> None:
        if not self.encrypted:
            self._recv_into(into, deadline)
            self._opener.verify(header_bytes, h.type, first_tag, into)
            return
        record = memoryview(self._record)
        tag = bytes(first_tag)
        for i in range(records.records(h.length)):
            n = records.record_length(h.length, i)
            if i > 0:
                self._recv_into(record[n : n + TAG_LENGTH], deadline)
            else:
                record[n : n + TAG_LENGTH] = tag
            self._recv_into(record[:n], deadline)
            plain = self._opener.open_record(header_bytes, h.type, record[: n + TAG_LENGTH])
            at = i * records.RECORD_LENGTH
            into[at : at + n] = plain


def _zero(view: memoryview) -> None:
    """Overwrites ``view`` (writable, contiguous) with zeros, at most a megabyte per copy."""
    flat = view if view.format == "B" and view.ndim == 1 else view.cast("B")
    for at in range(0, len(flat), len(_ZEROS)):
        n = min(len(_ZEROS), len(flat) - at)
        flat[at : at + n] = _ZEROS[:n]


def connect(
    host: str,
    port: int,
    secret: str,
    *,
    encrypt: bool = False,
    identity: Optional[NodeIdentity] = None,
    connect_timeout: float = 10.0,
    io_timeout: float = 30.0,
    expected_identity_key: Optional[bytes] = None,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
) -> Connection:
    """Connects and authenticates within ``connect_timeout`` seconds (the name's look-up, each of
    its addresses tried, and the handshake together). ``encrypt`` asks for aead (the connection is
    encrypted if either side asks). ``expected_identity_key``: refuse a server that proves another
    identity key (the whole key: another key with the same 64-bit node id is refused too). Raises
    AuthenticationFailedException (another secret, an impostor, another key), TransportTimeoutException,
    PeerClosedException, ProtocolException (a malformed frame); ValueError for a port outside 1..65535."""
    if not isinstance(port, int) or not 0 < port <= 0xFFFF:
        raise ValueError(f"port {port!r} outside 1..65535")
    deadline = time.monotonic() + connect_timeout
    hs = ClientHandshake(secret, identity or NodeIdentity(), encrypt)
    sock = _open_socket(host, port, deadline, connect_timeout)
    try:
        return _authenticate(sock, hs, deadline, (host, port), io_timeout, max_message_bytes, expected_identity_key)
    except BaseException:
        sock.close()
        raise


def _open_socket(host: str, port: int, deadline: float, connect_timeout: float) -> socket.socket:
    """A socket connected to one of ``host``'s addresses, tried in turn within the one deadline."""
    last: Optional[OSError] = None
    for family, kind, proto, _, address in _resolve(host, port, deadline, connect_timeout):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(left)
            sock.connect(address)
            return sock
        except OSError as e:
            sock.close()
            last = e
    if last is None or isinstance(last, socket.timeout) or time.monotonic() >= deadline:
        raise TransportTimeoutException(f"{host}:{port} did not accept within {connect_timeout} s") from last
    raise PeerClosedException(f"cannot connect to {host}:{port}: {last}") from last


def _resolve(host: str, port: int, deadline: float, connect_timeout: float) -> list:
    """``host``'s addresses; a name is looked up on a thread of its own, so that the lookup, which
    the resolver gives no deadline, is waited for only until ``deadline`` (the thread is left to end)."""
    try:
        return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)
    except (OSError, UnicodeError, ValueError):
        pass  # not a numeric address
    answer: "queue.Queue[object]" = queue.Queue(maxsize=1)

    def look_up() -> None:
        try:
            answer.put(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except Exception as e:  # noqa: BLE001 (handed to the waiting caller)
            answer.put(e)

    threading.Thread(target=look_up, name=f"sluice look-up of {host}", daemon=True).start()
    try:
        found = answer.get(timeout=max(0.0, deadline - time.monotonic()))
    except queue.Empty:
        raise TransportTimeoutException(f"looking up {host} took longer than {connect_timeout} s") from None
    if isinstance(found, Exception):
        raise PeerClosedException(f"cannot connect to {host}:{port}: {found}") from found
    return found


def _authenticate(sock, hs: ClientHandshake, deadline: float, address, io_timeout: float, max_message: int,
                  expected_identity_key: Optional[bytes]) -> Connection:
    def recv(n: int) -> bytes:
        buf = bytearray(n)
        view, got = memoryview(buf), 0
        while got < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TransportTimeoutException(f"the handshake with {address[0]}:{address[1]} did not finish in time")
            sock.settimeout(left)
            try:
                k = sock.recv_into(view[got:])
            except socket.timeout:
                continue
            except OSError as e:
                raise PeerClosedException(f"the handshake with {address[0]}:{address[1]} failed reading: {e}") from e
            if k == 0:
                raise PeerClosedException(f"{address[0]}:{address[1]} closed the connection during the handshake")
            got += k
        return bytes(buf)

    def send(kind: FrameType, payload: bytes) -> None:
        try:
            sock.settimeout(max(0.001, deadline - time.monotonic()))  # the whole sendall's deadline
            sock.sendall(Header(kind, len(payload), 0).encode() + payload)
        except socket.timeout as e:
            raise TransportTimeoutException(f"the handshake with {address[0]}:{address[1]} did not finish in time") from e
        except OSError as e:
            raise PeerClosedException(f"the handshake with {address[0]}:{address[1]} failed writing: {e}") from e

    def bare_error(h: Header) -> TransportException:
        code, text = frames.decode_error(recv(h.length))
        return code.to_exception(text)

    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError as e:
        raise PeerClosedException(f"the connection to {address[0]}:{address[1]} failed: {e}") from e

    send(FrameType.HELLO, hs.hello)
    h = Header.decode(recv(frames.HEADER_LENGTH), frames.MAX_CONTROL_PAYLOAD)
    if h.type == FrameType.ERROR:
        raise bare_error(h)
    if h.type != FrameType.CHALLENGE:
        raise AuthenticationFailedException(f"peer answered HELLO with {h.type.name}")
    send(FrameType.AUTH, hs.auth(recv(h.length)))
    header_bytes = recv(frames.HEADER_LENGTH)
    h = Header.decode(header_bytes, frames.MAX_CONTROL_PAYLOAD)
    if h.type == FrameType.ERROR:
        raise bare_error(h)
    if h.type != FrameType.AUTH_OK:
        raise ProtocolException(f"expected AUTH_OK, got {h.type.name}")
    opener = records.Opener(hs.keys.s2c_secret, hs.keys.encrypted)
    tag, payload = recv(TAG_LENGTH), recv(h.length)
    # The tag proves the server holds the same keys (the secret and its ephemeral key), then
    # the signature that it holds the identity key its node id derives from.
    try:
        if hs.keys.encrypted:
            payload = opener.open_record(header_bytes, h.type, payload + tag)
        else:
            opener.verify(header_bytes, h.type, tag, payload)
    except ProtocolException as e:
        raise AuthenticationFailedException(f"AUTH_OK from {address[0]}:{address[1]} does not authenticate: {e}") from None
    node = hs.check_auth_ok(payload)
    if expected_identity_key is not None and not hmac.compare_digest(hs.challenge.identity_key, expected_identity_key):
        raise AuthenticationFailedException(
            f"the transport at {address[0]}:{address[1]} proved another identity key (node {node & (2**64 - 1):016x})"
            f" than the one expected (node {node_id(expected_identity_key) & (2**64 - 1):016x})"
        )
    return Connection(sock, hs, opener, node, io_timeout, max_message, address)
