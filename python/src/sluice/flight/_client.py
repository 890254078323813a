"""A Flight client for Sluice servers: the READ data plane where the server offers it, plain Flight otherwise."""

from __future__ import annotations

import atexit
import logging
import threading
import time
import weakref
from typing import Callable, Mapping, Optional, Union

from ..errors import TransportUnavailableException
from . import call_token
from ._body_reader import Ender, open_get, require_crc32c
from ._landing import Allocate
from ._negotiator import DataPlaneOptions, Decision, negotiate
from ._session import StreamSlot
from ._shards import Shard
from ._table_reader import GrpcTableReader, TableReader
from ._watchdog import call_within

__all__ = ["SluiceFlightClient", "open_reader"]

_log = logging.getLogger("sluice.flight")


class SluiceFlightClient:
    """A client of one Flight server (``io.sluice.flight.SluiceFlightClient``), presenting
    ``Authorization: Bearer <token>`` on every call (``token`` from whoever serves the table, for example a published table's endpoint
    (:attr:`Shard.token`); None for a server without a secret).

    How streams travel is decided once, on the first stream, and logged with its reason
    (:attr:`decision`): with ``secret`` (the transport's shared secret) and a server that offers
    it, bodies are READ over the transport (``"tcp"``) or viewed in a same-host server's memory
    (``"shm"``); otherwise they come by plain Flight (``"grpc"``). ``data_plane_options`` tunes
    the data plane (:class:`DataPlaneOptions`); with ``encrypt=True`` there a client never takes
    a plaintext ``grpc+tcp`` stream instead. ``landing`` allocates the memory READ bodies land in
    (bytes -> a writable uint8 NumPy array; ``sluice.torch`` passes pinned memory for CUDA).

    Thread safe: streams may be opened and read from several threads at once, each data-plane
    stream on a transport connection of its own (kept for the next stream), at most as many at
    once as the server lets one client hold (its offer says how many; one more waits for a
    stream's call to end). Use it as a context manager, or close it: closing ends the calls of
    streams whose batches were released, then the connections and the gRPC channel. A client
    still open when the interpreter exits is closed then.
    """

    def __init__(
        self,
        location: str,
        token: call_token.Tokens = None,
        *,
        secret: Optional[str] = None,
        data_plane: bool = True,
        timeout: Optional[float] = None,
        data_plane_options: DataPlaneOptions = DataPlaneOptions(),
        landing: Optional[Allocate] = None,
    ) -> None:
        from pyarrow import flight

        self.location = location
        # One token, or this server's from a mapping; with neither, tokens minted from the secret
        # for this server, renewed as they age, so a client outliving one token keeps calling.
        given = call_token.for_server(token, location, None) if not _mints(token, location, secret) else None
        renewing = call_token.RenewingToken(secret, location) if secret and given is None else None
        self._options = call_token.call_options(given, timeout)
        # Calls that answer at once (the offer, a table's FlightInfo) and the start of a plain
        # stream wait at most the I/O timeout when no call timeout is given.
        self._brief = call_token.call_options(given, timeout if timeout is not None else data_plane_options.io_timeout)
        self._secret = secret
        # The audience the server signs its data-plane answer for: the one the calls' token names.
        self._audience = _audience_of(given, secret) or call_token.audience(location)
        self._data_plane = data_plane
        self._settings = data_plane_options
        if data_plane and data_plane_options.verify_reads:
            require_crc32c()
        self._landing = landing
        self._client = flight.FlightClient(
            location, middleware=[call_token.middleware(renewing)] if renewing is not None else None)
        self._lock = threading.Lock()
        self._decision: Optional[Decision] = None
        self._ender = Ender(f"sluice-flight-ender {location}")
        self._closed = False
        _OPEN.add(self)

    @property
    def decision(self) -> Decision:
        """How this client's streams travel, and why; negotiated on first use."""
        with self._lock:
            if self._decision is None:
                self._decision = negotiate(self._client, self._brief, self._secret, self._data_plane, self._settings,
                                           audience=self._audience, allocate=self._landing)
                _log.info("%s: streams take %s: %s", self.location, self._decision.data_path, self._decision.reason)
            return self._decision

    @property
    def max_streams(self) -> Optional[int]:
        """How many data-plane streams the server lets this client hold at once (its offer says), or
        None when streams take plain Flight; negotiated on first use."""
        session = self.decision.session
        return session.max_streams if session is not None else None

    def ticket(self, table: str) -> bytes:
        """The ticket of table ``table``, from its FlightInfo (descriptor path ``[table]``)."""
        from pyarrow import flight

        info = self._client.get_flight_info(flight.FlightDescriptor.for_path(table), options=self._brief)
        if not info.endpoints:
            raise LookupError(f"table '{table}' at {self.location} has no endpoint")
        return info.endpoints[0].ticket.ticket

    def reserve_stream(self, timeout: Optional[float] = None) -> Optional[StreamSlot]:
        """One of the places the server lets this client hold, taken ahead of the stream that will
        use it (:meth:`get_stream`'s ``place``), so that streams opened on several threads get their
        places in the order they were reserved. ``timeout`` None: only a place free now; None when
        there is none, or when streams take plain Flight (no places to count). A reserved place
        goes back when its stream ends, or with :meth:`StreamSlot.release` if it is not used.

        :raises TimeoutError: no place came free within ``timeout`` seconds
        """
        session = self.decision.session
        if session is None:
            return None
        return session.reserve(None if timeout is None else time.monotonic() + timeout)

    def get_stream(self, ticket: bytes, place: Optional[StreamSlot] = None) -> TableReader:
        """Opens the stream ``ticket`` names (on ``place``, from :meth:`reserve_stream`, which it
        takes over); the caller closes the reader."""
        return self._stream(ticket, None, place)

    def open(self, table: Union[str, Shard]) -> TableReader:
        """Opens a table by name, or a shard by its ticket."""
        return self.get_stream(table.ticket if isinstance(table, Shard) else self.ticket(table))

    def _stream(self, ticket: bytes, on_close: Optional[Callable[[], None]],
                place: Optional[StreamSlot] = None) -> TableReader:
        from pyarrow import flight

        decision = self.decision  # decided (and logged) once, before the first stream
        session = decision.session
        if session is not None:
            return open_get(session, self._client, self._options, ticket, self._ender, on_close, place)
        if self._settings.encrypt and not self.location.startswith("grpc+tls"):
            raise TransportUnavailableException(
                f"encryption was asked for, and the data plane of {self.location} cannot be used ({decision.reason});"
                " not falling back to plaintext Flight"
            )
        if not decision.authenticated and not self._settings.unsigned_fallback \
                and not self.location.startswith("grpc+tls"):
            raise TransportUnavailableException(
                f"the data plane of {self.location} cannot be used ({decision.reason}), and nothing authenticated"
                " that answer; not falling back to plain Flight (DataPlaneOptions(unsigned_fallback=True) allows it)"
            )
        stream = call_within(lambda: self._client.do_get(flight.Ticket(ticket), options=self._options),
                             self._settings.io_timeout, f"the start of a Flight stream from {self.location}",
                             lambda late: late.cancel())
        return GrpcTableReader(stream, on_close, self._settings.io_timeout)

    def close(self) -> None:
        """Ends the calls of streams whose batches were released (within the I/O timeout), then
        closes the data-plane connections and the gRPC channel. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._ender.close(self._settings.io_timeout)
        with self._lock:
            if self._decision is not None and self._decision.session is not None:
                self._decision.session.close()
        self._client.close()
        _OPEN.discard(self)

    def __enter__(self) -> "SluiceFlightClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _mints(token: call_token.Tokens, location: str, secret: Optional[str]) -> bool:
    """Whether a client of ``location`` mints its own tokens: it has the secret and was given no
    token for this server."""
    if not secret:
        return False
    if isinstance(token, Mapping):
        return not (token.get(location) or token.get(call_token.audience(location)))
    return token is None


def _audience_of(token: Optional[str], secret: Optional[str]) -> Optional[str]:
    """The audience ``token`` names (one given, say for every server of a run), when it is a token
    of ``secret``; None otherwise (the server refuses such calls anyway)."""
    if token is None or not secret:
        return None
    try:
        return call_token.claims(secret, token)[0]
    except (ValueError, UnicodeError):
        return None


#: Clients not yet closed, closed when the interpreter exits (before its threads and C++ objects go).
_OPEN: "weakref.WeakSet[SluiceFlightClient]" = weakref.WeakSet()


@atexit.register
def _close_open_clients() -> None:
    for client in list(_OPEN):
        try:
            client.close()
        except Exception:  # noqa: BLE001 - exiting anyway; a client that fails to close holds nothing of ours
            pass


def open_reader(
    location: str,
    table: Union[str, Shard],
    token: call_token.Tokens = None,
    *,
    secret: Optional[str] = None,
    data_plane: bool = True,
    timeout: Optional[float] = None,
    data_plane_options: DataPlaneOptions = DataPlaneOptions(),
) -> TableReader:
    """Opens one table (by name) or shard at ``location``: over the READ data plane where the
    server offers it and the client can take it, over plain Flight otherwise (the reason is
    logged once). The reader owns its client; close it, or use it as a context manager::

        with open_reader("grpc+tcp://host:8815", "features", token) as reader:
            for batch in reader:
                ...
    """
    client = SluiceFlightClient(location, token, secret=secret, data_plane=data_plane, timeout=timeout,
                                data_plane_options=data_plane_options)
    try:
        return client._stream(table.ticket if isinstance(table, Shard) else client.ticket(table), client.close)
    except BaseException:
        client.close()
        raise
