"""A Flight client for Sluice servers: plain Flight now, the READ data plane where offered later."""

from __future__ import annotations

import logging
import threading
from typing import Callable, Optional, Union

from . import call_token
from .negotiator import Decision, negotiate
from .shards import Shard
from .table_reader import GrpcTableReader, TableReader

__all__ = ["SluiceFlightClient", "open_reader"]

_log = logging.getLogger("sluice.flight")


class SluiceFlightClient:
    """A client of one Flight server (``io.sluice.flight.SluiceFlightClient``), presenting
    ``Authorization: Bearer <token>`` on every call (``token`` from the pipeline, for example the
    ``token`` line of ``endpoints.properties``; None for a server without a secret).

    How streams travel is decided once, on the first stream, and logged with its reason
    (:attr:`decision`). Use it as a context manager; it owns its gRPC channel. Thread safe: streams
    may be opened from several threads at once.
    """

    def __init__(
        self,
        location: str,
        token: Optional[str] = None,
        *,
        secret: Optional[str] = None,
        data_plane: bool = True,
        timeout: Optional[float] = None,
    ) -> None:
        from pyarrow import flight

        self.location = location
        self._options = call_token.call_options(token, timeout)
        self._secret = secret
        self._data_plane = data_plane
        self._client = flight.FlightClient(location)
        self._lock = threading.Lock()
        self._decision: Optional[Decision] = None

    @property
    def decision(self) -> Decision:
        """How this client's streams travel, and why; negotiated on first use."""
        with self._lock:
            if self._decision is None:
                self._decision = negotiate(self._client, self._options, self._secret, self._data_plane)
                _log.info("%s: streams take %s: %s", self.location, self._decision.data_path, self._decision.reason)
            return self._decision

    def ticket(self, table: str) -> bytes:
        """The ticket of table ``table``, from its FlightInfo (descriptor path ``[table]``)."""
        from pyarrow import flight

        info = self._client.get_flight_info(flight.FlightDescriptor.for_path(table), options=self._options)
        if not info.endpoints:
            raise LookupError(f"table '{table}' at {self.location} has no endpoint")
        return info.endpoints[0].ticket.ticket

    def get_stream(self, ticket: bytes) -> TableReader:
        """Opens the stream ``ticket`` names; the caller closes the reader."""
        return self._stream(ticket, None)

    def open(self, table: Union[str, Shard]) -> TableReader:
        """Opens a table by name, or a shard by its ticket."""
        return self.get_stream(table.ticket if isinstance(table, Shard) else self.ticket(table))

    def _stream(self, ticket: bytes, on_close: Optional[Callable[[], None]]) -> TableReader:
        from pyarrow import flight

        self.decision  # noqa: B018 - decided (and logged) once, before the first stream
        return GrpcTableReader(self._client.do_get(flight.Ticket(ticket), options=self._options), on_close)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> "SluiceFlightClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_reader(
    location: str,
    table: Union[str, Shard],
    token: Optional[str] = None,
    *,
    secret: Optional[str] = None,
    data_plane: bool = True,
    timeout: Optional[float] = None,
) -> TableReader:
    """Opens one table (by name) or shard at ``location``: over the READ data plane where the
    server offers it and the client can take it, over plain Flight otherwise (the reason is
    logged once). The reader owns its client; close it, or use it as a context manager::

        with open_reader("grpc+tcp://host:8815", "features", token) as reader:
            for batch in reader:
                ...
    """
    client = SluiceFlightClient(location, token, secret=secret, data_plane=data_plane, timeout=timeout)
    try:
        return client._stream(table.ticket if isinstance(table, Shard) else client.ticket(table), client.close)
    except BaseException:
        client.close()
        raise
