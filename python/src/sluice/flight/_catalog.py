"""A published table's shards, from the catalog that lists it (``io.sluice.spark.tables``' driver
catalog, or any Flight server that answers GetFlightInfo with one endpoint per shard).

The catalog answers ``GetFlightInfo(path [name])`` with one endpoint per shard, in the table's
order (partition, then batch): the executor's location, the ticket that opens the shard there,
and, as the endpoint's app metadata, a call token for that executor alone (UTF-8, with an expiry).
A table that lost shards with their executors is answered UNAVAILABLE, an unknown one NOT_FOUND;
both become Python exceptions carrying the catalog's text.
"""

from __future__ import annotations

import re
from typing import List, Optional

from ..errors import LostShardsError
from . import call_token
from ._shards import Shard

__all__ = ["TICKET_PREFIX", "table_shards", "flight_name"]

#: What a Sluice server's ticket starts with; the flight's name follows (``TableRegistry.ticket``).
TICKET_PREFIX = b"sluice-table:"
# A published table's flight: <table key>/r<round>/p<partition>-a<attempt>-b<batch> (ShardWriter).
_PUBLISHED_FLIGHT = re.compile(r"/r\d+/p(\d+)-a\d+-b(\d+)$")


def flight_name(ticket: bytes) -> str:
    """The flight a Sluice ticket opens (``TableRegistry.nameOf``); another server's ticket as text."""
    raw = ticket[len(TICKET_PREFIX):] if ticket.startswith(TICKET_PREFIX) else ticket
    return raw.decode("utf-8", errors="replace")


def _shard_name(table: str, flight: str, index: int) -> str:
    # Unique within the table and sorting as the catalog orders shards, whatever round or task
    # attempt published them; a flight of another shape keeps the catalog's position.
    m = _PUBLISHED_FLIGHT.search(flight)
    if m is not None:
        return f"{table}/p{int(m.group(1)):05d}-b{int(m.group(2)):05d}"
    return f"{table}/{index:06d}"


def table_shards(
    uri: str,
    name: str,
    *,
    secret: Optional[str] = None,
    token: Optional[str] = None,
    timeout: Optional[float] = 30.0,
) -> List[Shard]:
    """The shards of table ``name`` at the catalog ``uri``, in the catalog's order (partition, batch).

    The catalog is called with ``token`` (a call token for it, such as
    ``SluiceTables.catalogToken``), or one minted here from ``secret``. Each shard keeps its
    endpoint's token for its executor (:attr:`Shard.token`): a reader without the secret presents
    it there (over plain Flight); a reader with the secret mints its own and may take the data
    plane. Rows and bytes per shard are not in the catalog's answer (-1).

    :raises LostShardsError: the table lost shards with their executors (the catalog's text names them)
    :raises LookupError: no table ``name`` is published there
    :raises pyarrow.flight.FlightUnauthenticatedError: the token is refused
    """
    import pyarrow as pa
    from pyarrow import flight

    options = call_token.call_options(call_token.for_server(token, uri, secret), timeout)
    with flight.FlightClient(uri) as client:
        try:
            info = client.get_flight_info(flight.FlightDescriptor.for_path(name), options)
        except flight.FlightUnavailableError as e:
            if "lost" in str(e):
                raise LostShardsError(_detail(e)) from e
            raise
        except (pa.ArrowKeyError, KeyError) as e:  # gRPC NOT_FOUND
            raise LookupError(_detail(e)) from e
    shards = []
    for i, endpoint in enumerate(info.endpoints):
        if not endpoint.locations:
            raise ValueError(f"table '{name}' at {uri}: endpoint {i} names no location")
        ticket = endpoint.ticket.ticket
        metadata = endpoint.app_metadata
        shards.append(Shard(
            _shard_name(name, flight_name(ticket), i),
            endpoint.locations[0].uri.decode("utf-8"),
            ticket,
            token=metadata.decode("utf-8") if metadata else None,
        ))
    if not shards:
        raise LookupError(f"table '{name}' at {uri} has no shards")
    return shards


def _detail(e: Exception) -> str:
    # pyarrow appends the gRPC plumbing ("... Detail: Unavailable. gRPC client debug context: ...");
    # the catalog's own sentence is what the caller needs.
    text = str(e)
    for cut in (". Detail:", ". gRPC client debug context"):
        at = text.find(cut)
        if at > 0:
            text = text[:at]
    return text.replace("Flight returned unavailable error, with message: ", "").replace(
        "Flight returned not found error, with message: ", "")
