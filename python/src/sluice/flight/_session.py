"""A client's data plane with one server (``io.sluice.flight.client.DataPlaneSession``).

The negotiated connection is the session's control connection: it answers the shm lookups (where a
region lies) and nothing else. Each stream borrows a connection of its own from a pool, so streams
never wait on each other's READs; idle connections are kept for the next stream (across epochs,
as long as the client lives). At most ``offer.max_streams`` streams are open at once, the number
of data-plane gets the server lets one client hold: one more waits (within its deadline) until a
stream's call ends, so a reader never provokes the server's RESOURCE_EXHAUSTED itself.

Thread safe.
"""

from __future__ import annotations

import collections
import threading
import time
import weakref
from typing import Callable, List, Optional

from ..errors import PeerClosedException, TransportTimeoutException
from ..transport import _connection as transport
from ..transport import _shm as shm
from . import _data_plane as data_plane
from ._landing import Allocate, LandingPool

__all__ = ["DataPlaneSession", "StreamSlot"]

#: The server's bound when its offer names none.
DEFAULT_MAX_STREAMS = 16


class StreamSlot:
    """One of the session's stream places, and the connection the stream uses once it opens
    (:meth:`connect`). The connection goes back when the stream needs it no more
    (:meth:`return_connection`), the place when the server's stream ended (:meth:`release`); both
    at most once. A place taken ahead of its stream (a loader reserving in its shards' order) is
    released by whoever gives the stream up."""

    __slots__ = ("_session", "connection", "_released", "state", "__weakref__")

    def __init__(self, session: "DataPlaneSession") -> None:
        self._session = session
        self.connection: Optional[transport.Connection] = None
        self._released = False
        #: what the stream is doing: "reserved", "reading", "batches held", "ending" (for errors)
        self.state = "reserved"

    def connect(self) -> transport.Connection:
        """The stream's connection: an idle one of the session's, or a new one."""
        if self.connection is None:
            self.connection = self._session._take()
        return self.connection

    def return_connection(self) -> None:
        c, self.connection = self.connection, None
        if c is not None:
            self._session._put_back(c)

    def release(self) -> None:
        self.return_connection()
        if not self._released:
            self._released = True
            self._session._live.discard(self)
            self._session._slots.release()


class DataPlaneSession:
    """A client's authenticated transport to one server's data plane: the control connection, a pool
    of stream connections made by ``connect``, the landing memory and, on the same host, the
    server's arena (``shm``, used under :attr:`shm_lock`). Owned by the client, which closes it."""

    def __init__(self, conn: transport.Connection, offer: data_plane.Offer, peer: Optional[shm.ShmPeer],
                 options, connect: Optional[Callable[[], transport.Connection]] = None,
                 allocate: Optional[Allocate] = None) -> None:
        self.connection = conn
        self.offer = offer
        self.shm = peer
        self.options = options
        self.landing = LandingPool(allocate=allocate)
        self.shm_lock = threading.Lock()
        self.max_streams = max(1, int(getattr(offer, "max_streams", DEFAULT_MAX_STREAMS)))
        self._slots = threading.BoundedSemaphore(self.max_streams)
        self._connect = connect
        self._idle: List[transport.Connection] = []
        self._live: "weakref.WeakSet[StreamSlot]" = weakref.WeakSet()
        self._lock = threading.Lock()
        self._closed = False

    @property
    def data_path(self) -> str:
        return "shm" if self.shm is not None else "tcp"

    def reserve(self, deadline: Optional[float]) -> Optional[StreamSlot]:
        """A stream place, waiting until ``deadline`` (``time.monotonic()``) while the server's bound
        is reached; with ``deadline`` None, only a place free now (None if there is none).

        :raises TransportTimeoutException: no place came free by the deadline
        """
        if deadline is None:
            if not self._slots.acquire(blocking=False):
                return None
        elif not self._slots.acquire(timeout=max(0.0, deadline - time.monotonic())):
            states = collections.Counter(s.state for s in list(self._live))
            raise TransportTimeoutException(
                f"all {self.max_streams} data-plane streams the server at {self.offer.host}:{self.offer.port} allows one"
                " client (sluice.flight.dataPlaneGetsPerClient) stayed open past the deadline ("
                + ", ".join(f"{n} {state}" for state, n in sorted(states.items()))
                + "): a stream's place comes free once its batches are released and its call ended"
            )
        slot = StreamSlot(self)
        self._live.add(slot)
        return slot

    def _take(self) -> transport.Connection:
        with self._lock:
            if self._closed:
                raise PeerClosedException("the data-plane session is closed")
            while self._idle:
                c = self._idle.pop()
                if c.is_open:
                    return c
        if self._connect is None:
            raise TransportTimeoutException("this session opens no further connections")
        return self._connect()

    def _put_back(self, conn: transport.Connection) -> None:
        with self._lock:
            if conn.is_open and not self._closed and not conn.has_pending:
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for c in idle:
            c.close()
        if self.shm is not None:
            with self.shm_lock:
                self.shm.close()
        self.connection.close()
