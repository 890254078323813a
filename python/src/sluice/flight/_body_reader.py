"""The receiving side of a data-plane get (``io.sluice.flight.plane.BodyReader``,
``client.DataPlaneTableReader``, ``plane.ViewLease``), on the consumer's thread.

The schema arrives on the DoExchange call; body announcements are pulled over the authenticated
transport connection (a pull also acknowledges the bodies taken so far), one pull under way at a
time and sent while earlier announcements are still being read. Up to ``stream_window`` bodies
are being READ at once, each in one batched READ (ranges of at most ``read_chunk_bytes``) straight
into landing memory; on shm a body is not READ at all but taken as a read-only view of the
server's memory, or, with ``zero_copy`` off, copied into landing memory with positional reads of
the server's file (``os.preadv``), never through the mapping, so that a file cut short under the
reader is an exception rather than a SIGBUS. Each body is checked against its CRC32C before Arrow
sees it. Arrow's own IPC
stream reader then builds the batches: it reads the encapsulated messages from
:class:`_IpcMessages`, which hands it each body as the very memoryview the bytes lie in, so the
arrays' buffers point into the landing memory or the mapping (no copy after the READ).

Lifetimes as in Java: a batch kept alive keeps its memory. On shm the server keeps the table and
the grant until the reader half-closes the call, which happens once no view is held (the last
batch over a view released, on whichever thread releases it, hands the ending of the call to the
client's ender thread), or when the call dies with the process.

Each stream owns a connection of the session's pool while it reads (no lock is shared with other
streams; checksums, copies and socket waits release the GIL) and holds one of the session's
stream places until its call ends. Every wait on the Flight call has the stream's deadline: a
read that misses it cancels the call (``_watchdog``). Not thread safe: one reading thread.
"""

from __future__ import annotations

import collections
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Callable, Deque, Iterator, List, Optional

import pyarrow as pa

from ..errors import (
    ReadIntegrityException,
    RegionRevokedException,
    ResourceExhaustedException,
    SluiceException,
    TransportException,
    TransportTimeoutException,
    UnknownKeyException,
)
from ..transport._connection import ReadRange
from . import _data_plane as data_plane
from ._data_plane import BodyFrame
from ._session import DataPlaneSession, StreamSlot
from ._table_reader import TableReader
from ._watchdog import read_chunk

__all__ = ["DataPlaneTableReader", "Ender", "open_get", "read_frame"]

try:  # the C implementation; a table-driven pure-Python fallback would be ~1000x slower
    from crc32c import crc32c as _crc32c
except ImportError:  # pragma: no cover - the package is a dependency
    _crc32c = None


def require_crc32c() -> None:
    """Raises :class:`SluiceException` when READ bodies are to be verified and the CRC32C module
    is missing, so that a client says so when it is made rather than on its first body."""
    if _crc32c is None:
        raise SluiceException(
            "verifying READ bodies needs the 'crc32c' package, a dependency of sluice (pip install crc32c);"
            " or turn verification off with DataPlaneOptions(verify_reads=False)")


def encapsulate(metadata: bytes) -> bytes:
    """An IPC message's prefix: continuation, padded metadata length, the flatbuffer, padding."""
    pad = (-len(metadata)) % 8
    return b"\xff\xff\xff\xff" + (len(metadata) + pad).to_bytes(4, "little") + metadata + bytes(pad)


def declared_body_length(metadata: bytes) -> int:
    """The bodyLength field of an IPC Message flatbuffer (field 3, a long): read so a frame that
    offers less body than its metadata declares is refused before Arrow sees it."""
    b = memoryview(metadata)
    if len(b) < 8:
        raise ValueError("IPC metadata too short")
    table = int.from_bytes(b[0:4], "little")
    vtable = table - int.from_bytes(b[table : table + 4], "little", signed=True)
    vt_len = int.from_bytes(b[vtable : vtable + 2], "little")
    slot = 4 + 2 * 3
    if slot + 2 > vt_len:
        return 0
    off = int.from_bytes(b[vtable + slot : vtable + slot + 2], "little")
    return int.from_bytes(b[table + off : table + off + 8], "little", signed=True) if off else 0


class ViewLease:
    """The views of one stream's bodies that Arrow buffers still hold; actions given to
    :meth:`after_views` run once none is. Thread safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held = 0
        self._when_idle: List[Callable[[], None]] = []

    def hold(self, view: memoryview) -> weakref.finalize:
        """Counts ``view`` as held until it is garbage, or until the returned finalizer is called
        (a view given back before Arrow saw it)."""
        with self._lock:
            self._held += 1
        return weakref.finalize(view, self._released)

    @property
    def held(self) -> int:
        with self._lock:
            return self._held

    def after_views(self, action: Callable[[], None]) -> None:
        with self._lock:
            if self._held > 0:
                self._when_idle.append(action)
                return
        action()

    def _released(self) -> None:
        with self._lock:
            self._held -= 1
            if self._held > 0 or not self._when_idle:
                return
            run, self._when_idle = self._when_idle, []
        for action in run:
            action()


@dataclass
class _Body:
    """A body on its way: READ into ``into`` (under ``reads``, or with positional reads of the
    server's file when ``positional``), or viewed where it lies."""

    frame: BodyFrame
    into: Optional[memoryview] = None
    reads: List[int] = field(default_factory=list)
    positional: bool = False
    view: Optional[memoryview] = None
    lease: Optional[weakref.finalize] = None


class _IpcMessages:
    """The IPC stream Arrow's reader reads: one encapsulated message after the other, each body
    handed over as the memoryview it lies in (Arrow keeps that object; nothing is copied)."""

    closed = False

    def __init__(self, next_message: Callable[[], Optional[tuple]]) -> None:
        self._next = next_message
        self._parts: Deque = collections.deque()
        self.error: Optional[BaseException] = None

    def read(self, n: int = -1):
        while not self._parts or len(self._parts[0]) == 0:
            if self._parts:
                self._parts.popleft()
                continue
            try:
                message = self._next()
            except BaseException as e:
                self.error = e  # Arrow reports it as an OSError; the reader raises this one
                raise
            if message is None:
                return b""
            self._parts.extend(message)
        part = self._parts[0]
        if n < 0 or n >= len(part):
            return self._parts.popleft()  # the very object: a body's view stays the one Arrow holds
        self._parts[0] = part[n:]
        return part[:n]

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False


def read_frame(call, deadline: float, what: str) -> Optional[bytes]:
    """The next data-plane frame of ``call`` (the ``app_metadata`` of its next message), None at its
    end, waiting until ``deadline`` at most (then the call is cancelled: TransportTimeoutException)."""
    try:
        chunk = read_chunk(call, deadline, what)
    except StopIteration:
        return None
    if chunk.data is not None and chunk.data.num_rows > 0 or chunk.app_metadata is None:
        raise SluiceException("data-plane stream carried a Flight message that is not a frame")
    return chunk.app_metadata.to_pybytes()


#: How pyarrow begins the message of a Flight call that failed with gRPC's RESOURCE_EXHAUSTED. It
#: has no exception class for that code: it raises ArrowInvalid, and writes this phrase ahead of
#: the server's text, so the phrase at the start stands for the code (a Java server's text cannot
#: put it there; an Arrow C++ server that sends an Arrow status of its own can, as it can send the
#: code itself).
_GRPC_RESOURCE_EXHAUSTED = "gRPC returned resource exhausted error"


def _load_refusal(e: BaseException) -> bool:
    """Whether a failed open is the server's refusal for load, told by its code alone, never by
    what its text says: a grant refused with the transport's EXHAUSTED (the peer, its host or the
    server holds as many grants as it may), or a DoExchange refused with gRPC's RESOURCE_EXHAUSTED
    (the server's get threads all busy, or this client's or its host's share of them)."""
    if isinstance(e, ResourceExhaustedException):
        return True
    return isinstance(e, pa.ArrowInvalid) and str(e).startswith(_GRPC_RESOURCE_EXHAUSTED)


def open_get(session: DataPlaneSession, client, options, ticket: bytes, ender,
             on_close: Optional[Callable[[], None]] = None, place: Optional[StreamSlot] = None) -> "DataPlaneTableReader":
    """Opens a data-plane get of ``ticket`` over the Flight ``client`` (calls made with ``options``):
    a stream place of ``session`` (``place`` when one was reserved for it, which this takes over)
    and a connection, a grant over that connection, the DoExchange and its schema, all within the
    session's I/O timeout. A refusal for load (a grant refused with the transport's EXHAUSTED, or
    the DoExchange with gRPC's RESOURCE_EXHAUSTED: the server busy with other clients) is tried
    again with back-off within that deadline; any other failure ends the open at once. ``ender``
    runs the ending of calls whose batches outlive the reading (:class:`Ender`)."""
    from pyarrow import flight

    deadline = time.monotonic() + session.options.io_timeout
    pause = 0.02
    slot = place
    try:
        if slot is None:
            slot = session.reserve(deadline)
        while True:
            writer = call = None
            try:
                conn = slot.connect()
                grant = data_plane.decode_grant_reply(
                    conn.request(data_plane.grant_request(), max(0.001, deadline - time.monotonic())))
                descriptor = flight.FlightDescriptor.for_command(data_plane.encode_open_get(grant, ticket))
                writer, call = client.do_exchange(descriptor, options=options)
                schema_frame = read_frame(call, deadline, "schema")
                return DataPlaneTableReader(session, slot, writer, call, grant, schema_frame, ender, on_close)
            except BaseException as e:
                _abandon(writer, call)
                if not _load_refusal(e) or time.monotonic() + pause >= deadline:
                    raise
            time.sleep(pause)
            pause = min(1.0, pause * 2)
    except BaseException:
        if slot is not None:
            slot.release()
        raise


def _abandon(writer, call) -> None:
    """Cancels and closes a call that will not be read (a refused or failed open)."""
    for step in (getattr(call, "cancel", None), getattr(writer, "close", None)):
        if step is not None:
            try:
                step()
            except Exception:  # noqa: BLE001 - the call already failed; ending it can only fail the same way
                pass


class DataPlaneTableReader(TableReader):
    def __init__(self, session: DataPlaneSession, slot: StreamSlot, exchange_writer, exchange_reader, grant: bytes,
                 schema_frame: Optional[bytes], ender, on_close: Optional[Callable[[], None]] = None) -> None:
        o = session.options
        self._session = session
        self._slot = slot
        self._conn = slot.connection
        slot.state = "reading"
        self._ender = ender
        self._writer = exchange_writer
        self._call = exchange_reader
        self._grant = grant
        self._depth = max(1, o.stream_window)
        self._chunk = o.read_chunk_bytes
        self._timeout = o.io_timeout
        self._view_bodies = o.zero_copy and session.shm is not None
        self._verify = o.verify_reads
        self._landing_bytes = o.landing_bytes
        self._ahead_bytes = 0
        self._on_close = on_close
        self.views = ViewLease()
        self._announced: Deque[BodyFrame] = collections.deque()
        self._reading: Deque[_Body] = collections.deque()
        self._pull: Optional[int] = None
        self._pulled_at = -1
        self._all_announced = False
        self._next_sequence = 0
        self._consumed = 0
        self.bytes_read = 0
        #: (address, length) of every body handed to Arrow, for tests that prove batches lie there
        self.body_ranges: List[tuple] = []
        self._finished = False
        self._closed = False
        self._call_ended = False
        if schema_frame is None:
            raise SluiceException("data-plane stream ended before its schema")
        self._schema_message = encapsulate(data_plane.decode_schema_frame(schema_frame))
        try:
            self._schema = pa.ipc.read_schema(pa.py_buffer(self._schema_message))
        except (OSError, pa.ArrowException) as e:
            raise SluiceException(f"the server's schema frame is not an Arrow schema: {e}") from e
        self._sent_schema = False
        self._send_pull()

    @property
    def schema(self) -> pa.Schema:
        return self._schema

    @property
    def data_path(self) -> str:
        return self._session.data_path

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        if self._finished or self._closed:
            return
        source = _IpcMessages(self._next_message)
        stream = pa.ipc.open_stream(pa.PythonFile(source, mode="r"))
        while True:
            try:
                batch = stream.read_next_batch()
            except StopIteration:
                break
            except (OSError, pa.ArrowException) as e:
                # Nothing here may keep a batch (and its lease) alive through the traceback.
                stream = batch = None
                if source.error is not None:
                    raise source.error from None
                raise SluiceException(f"bad batch from the server: {e}") from e
            except BaseException:
                stream = batch = None
                raise
            yield batch
            batch = None
        self._finished = True

    # ---- the stream, message by message

    def _next_message(self) -> Optional[tuple]:
        if not self._sent_schema:
            self._sent_schema = True
            return (memoryview(self._schema_message),)
        body = self._next_body()
        if body is None:
            self._finish()
            self._slot.return_connection()  # every body acknowledged: the connection serves other streams
            return None
        view = self._complete(body)
        declared = declared_body_length(body.frame.metadata)
        if declared > body.frame.length:
            raise SluiceException(
                f"batch metadata declares a body of {declared} bytes, the frame offers {body.frame.length}"
            )
        prefix = memoryview(encapsulate(body.frame.metadata))
        if view is None or declared == 0:
            return (prefix,)
        if declared < len(view):
            view = view[:declared]  # a new view object: lease it (or let it pin the landing) itself
            if self._view_bodies:
                self.views.hold(view)
        self.body_ranges.append((pa.py_buffer(view).address, len(view)))
        return (prefix, view)

    def _next_body(self) -> Optional[_Body]:
        while True:
            self._take_announcement(wait=False)
            self._start_reads()
            if (self._pull is None and not self._all_announced and len(self._announced) < self._depth
                    and self._pulled_at != self._consumed):
                self._send_pull()
            if self._reading:
                return self._reading.popleft()
            if self._all_announced and not self._announced:
                return None
            if self._pull is None:
                self._send_pull()
            self._take_announcement(wait=True)

    def _send_pull(self) -> None:
        self._pulled_at = self._consumed
        want = min(data_plane.MAX_ANNOUNCED_BODIES, max(64, 4 * self._depth))
        payload = data_plane.encode_pull(self._grant, self._consumed, 0 if self._all_announced else want)
        self._pull = self._conn.send_request(payload)

    def _take_announcement(self, wait: bool) -> None:
        if self._pull is None or (not wait and not self._conn.is_done(self._pull)):
            return
        corr, self._pull = self._pull, None
        try:
            reply = self._conn.wait(corr, time.monotonic() + self._timeout)
        except TransportException as e:
            if isinstance(e, TransportTimeoutException):
                raise SluiceException(f"the server did not answer the stream's pull: {e}") from e
            self._server_verdict()  # the server's own reason, if it ended the call
            raise SluiceException(f"the server refused the stream's pull: {e}") from e
        try:
            a = data_plane.decode_announcement(reply)
        except ValueError as e:
            raise SluiceException(f"malformed announcement: {e}") from e
        if self._all_announced and a.bodies:
            raise SluiceException("the server announced bodies after its last one")
        for f in a.bodies:
            if f.sequence != self._next_sequence:
                raise SluiceException(f"announced body {f.sequence}, expected {self._next_sequence}")
            self._next_sequence += 1
            self._announced.append(f)
        self._all_announced |= a.last

    def _start_reads(self) -> None:
        while len(self._reading) < self._depth and self._announced:
            f = self._announced[0]
            if f.length == 0 or self._view_bodies and self._sealed(f.key):
                self._reading.append(_Body(self._announced.popleft()))
                continue  # viewed where it lies when its turn comes
            if f.length > self._landing_bytes:
                raise SluiceException(
                    f"the server announced a body of {f.length} bytes, over the {self._landing_bytes} bytes a stream may"
                    " land (DataPlaneOptions.landing_bytes)")
            if self._ahead_bytes and self._ahead_bytes + f.length > self._landing_bytes:
                return  # READ once the consumer took the bodies landed before it
            body = _Body(self._announced.popleft())
            self._reading.append(body)
            body.into = self._session.landing.acquire(f.length)
            self._ahead_bytes += f.length
            if self._session.shm is not None and self._reaches(f.key):
                body.positional = True  # copied from the server's file when its turn comes
                continue
            ranges = [
                ReadRange(f.key, f.offset + at, min(self._chunk, f.length - at), body.into[at : at + min(self._chunk, f.length - at)])
                for at in range(0, f.length, self._chunk)
            ]
            body.reads = self._conn.send_reads(ranges)

    def _reaches(self, key: int) -> bool:
        with self._session.shm_lock:
            return self._session.shm.reaches(key, self._timeout)

    def _sealed(self, key: int) -> bool:
        """Whether region ``key`` is mapped and sealed against shrinking: only such bodies are
        viewed; a region that is a file may be cut under a view, so its bodies are copied."""
        with self._session.shm_lock:
            return self._session.shm.sealed(key, self._timeout)

    def _complete(self, body: _Body) -> Optional[memoryview]:
        """Waits for the body's READ (or takes its view), checks its CRC32C; the next pull
        acknowledges it."""
        f = body.frame
        deadline = time.monotonic() + self._timeout
        if body.into is not None:
            self._ahead_bytes -= f.length
        try:
            while body.reads:
                corr = body.reads.pop(0)  # taken, whether it answers or fails
                self._conn.wait(corr, deadline)
            if f.length and body.into is None:
                with self._session.shm_lock:
                    body.view = self._session.shm.view(f.key, f.offset, f.length, self._timeout)
                body.lease = self.views.hold(body.view)
            elif body.positional:
                with self._session.shm_lock:
                    source = self._session.shm.positional(f.key, f.offset, f.length, self._timeout)
                source.read_into(body.into)  # outside the lock: the copy holds descriptors of its own
        except TransportException as e:
            self._give_back(body)
            if isinstance(e, (UnknownKeyException, RegionRevokedException)):
                self._server_verdict()  # the server withdraws access when it ends a stream
            raise SluiceException(f"READ of a batch body failed: {e}") from e
        body.reads = []
        data = body.view if body.view is not None else body.into
        if self._verify and f.length:
            actual = _crc32c(data)
            if actual != f.crc32c:
                self._give_back(body)
                kind = "dictionary" if f.dictionary else "record batch"
                raise ReadIntegrityException(
                    f"corrupt READ of {kind} body {f.sequence} from node {f.node & (2**64 - 1):016x} (region {f.key & (2**64 - 1):x}"
                    f" at {f.offset}, {f.length} bytes): CRC32C {actual:08x}, the server announced {f.crc32c:08x}"
                )
        self._consumed += 1
        self.bytes_read += f.length
        return data

    def _give_back(self, body: _Body) -> None:
        """Waits (within the deadline) for a body's READs still under way, so that its landing is
        written no more; a connection that misses the deadline is closed by it."""
        deadline = time.monotonic() + self._timeout
        for corr in body.reads:
            try:
                self._conn.wait(corr, deadline)
            except (TransportException, KeyError):
                pass  # failed, or already taken: written no more either way
        body.reads = []
        if body.lease is not None:
            body.lease()  # the view never reached Arrow
            body.view.release()
            body.view = None

    def _finish(self) -> None:
        """Acknowledges every body with a last pull."""
        if self._pull is not None:
            self._take_announcement(wait=True)
        if self._pulled_at != self._consumed:
            self._send_pull()
            self._take_announcement(wait=True)

    def _stop(self) -> bool:
        """Tells the server this reader wants no more bodies, keeping those it has."""
        try:
            if self._pull is not None:
                self._take_announcement(wait=True)
            self._conn.request(data_plane.encode_pull(self._grant, self._consumed, 0, stop=True), self._timeout)
            return True
        except (TransportException, SluiceException):
            return False

    # ---- the Flight call

    def _receive_frame(self, deadline: Optional[float] = None) -> Optional[bytes]:
        return read_frame(self._call, deadline or time.monotonic() + self._timeout, "frame")

    def _server_verdict(self) -> None:
        """Raises the server's error if the call ended with one (waiting for its end within the
        I/O timeout)."""
        from pyarrow import flight

        deadline = time.monotonic() + self._timeout
        try:
            while self._receive_frame(deadline) is not None:
                pass
        except flight.FlightError as e:
            raise SluiceException(f"the server ended the stream: {e}") from e

    def _end_call(self) -> None:
        """Half-closes the call and waits for the server's end of it; once, and not at all once
        the client is closed (closing it ended every call)."""
        if self._call_ended:
            return
        self._call_ended = True
        if self._ender.closed:
            return
        try:
            self._writer.done_writing()
            self._server_verdict()
        except Exception:  # noqa: BLE001
            pass  # every body was acknowledged and taken: how the server ends the call changes nothing
        finally:
            try:
                self._writer.close()
            except Exception:  # noqa: BLE001
                pass  # a server gone meanwhile (its executor killed) ends the call as well; nothing is lost

    def close(self) -> None:
        """Unfinished with no view held: cancels the call (the server frees the stream at once).
        Otherwise tells the server it is done (a stop when unfinished) and ends the call once no
        view of its bodies is held: at once for READ bodies, or when the application releases
        the last batch over a view (the server keeps the table and the grant until then). The
        stream's connection goes back to the session's pool, its place once the call ended."""
        if self._closed:
            return
        self._closed = True
        for body in self._reading:
            self._give_back(body)
        self._reading.clear()
        self._announced.clear()
        if not self._finished and (self.views.held == 0 or not self._stop()):
            _abandon(self._writer, self._call)
            self._call_ended = True
            self._slot.return_connection()
            self._closed_all()
            return
        self._finished = True
        self._slot.return_connection()
        self._slot.state = "batches held"
        # The client closes only after the call ended: closing it first would end the call and
        # let the server free memory a batch still views.
        if self.views.held == 0:
            self._end_then_close()
        else:
            self.views.after_views(lambda: self._ender.submit(self._end_then_close))

    def _end_then_close(self) -> None:
        self._slot.state = "ending"
        try:
            self._end_call()
        finally:
            self._closed_all()

    def _closed_all(self) -> None:
        self._slot.release()
        if self._on_close is not None:
            self._on_close()


class Ender:
    """Ends the calls of streams whose last batch was released (on whichever thread released it,
    inside a finalizer): one thread of the client's, started on first use, that runs those endings
    in turn. :meth:`close` stops it after the endings queued so far, within a deadline; endings
    submitted later run on the submitting thread and touch no call (the client ended them all)."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._queue: Deque[Callable[[], None]] = collections.deque()
        self._cv = threading.Condition()
        self._thread: Optional[threading.Thread] = None
        self.closed = False

    def submit(self, action: Callable[[], None]) -> None:
        with self._cv:
            if not self.closed:
                self._queue.append(action)
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                    self._thread.start()
                self._cv.notify()
                return
        action()

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._queue and not self.closed:
                    self._cv.wait()
                if not self._queue:
                    return
                action = self._queue.popleft()
            try:
                action()
            except Exception:  # noqa: BLE001 - an ending that fails has nothing left to free
                pass

    def close(self, timeout: float) -> None:
        """Runs the endings queued so far (waiting ``timeout`` seconds at most), then stops."""
        with self._cv:
            thread = self._thread
            if thread is None or thread is threading.current_thread():
                self.closed = True  # from an ending itself: the thread finds the flag when it returns
                self._cv.notify()
                return
            self._cv.notify()
        deadline = time.monotonic() + timeout
        with self._cv:
            while self._queue and thread.is_alive() and time.monotonic() < deadline:
                self._cv.wait(0.01)
            self.closed = True
            self._cv.notify()
        thread.join(max(0.0, deadline - time.monotonic()))
