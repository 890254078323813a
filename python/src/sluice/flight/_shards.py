"""A table's shards on Flight servers, found as ``io.sluice.flight.loader.Shards`` finds them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, List, Optional

from . import call_token

__all__ = ["Shard", "list_shards"]


@dataclass(frozen=True)
class Shard:
    """One unit a loader hands out: a Flight endpoint holding some record batches of a table.

    ``location`` is where it is read (the server that was asked), ``ticket`` opens it (DoGet),
    ``rows`` and ``bytes`` are what the server announced (-1: unknown). ``token``: the call token
    for its server that a catalog handed out with it (:func:`sluice.flight.table_shards`), None
    otherwise; it expires, and it is kept out of ``repr`` and comparisons. Immutable and
    picklable, so a dataset holding shards can go to DataLoader worker processes.
    """

    name: str
    location: str
    ticket: bytes
    rows: int = -1
    bytes: int = -1
    token: Optional[str] = field(default=None, repr=False, compare=False)

    def __str__(self) -> str:
        return f"{self.name}@{self.location}"


def list_shards(
    locations: Iterable[str],
    prefix: str,
    token: call_token.Tokens = None,
    timeout: Optional[float] = 30.0,
    secret: Optional[str] = None,
) -> List[Shard]:
    """The shards named ``prefix...`` on ``locations``, ordered by name and then location: the order
    every reader of the table agrees on (Java's ``Shards.list``).

    A shard is every flight whose descriptor is a one-element path starting with ``prefix``, with
    the ticket of its first endpoint, read at the location asked (a server that announces a
    wildcard address is still reached where it was found).

    ``token`` is one token, a mapping of location to token, or None with ``secret`` to mint a token
    per server (tokens name the server they are for).

    :raises LookupError: if no server lists such a shard
    """
    from pyarrow import flight

    locations = list(locations)
    found: List[Shard] = []
    for location in locations:
        options = call_token.call_options(call_token.for_server(token, location, secret), timeout)
        with flight.FlightClient(location) as client:
            for info in client.list_flights(options=options):
                d = info.descriptor
                if (
                    d.descriptor_type != flight.DescriptorType.PATH
                    or len(d.path) != 1
                    or not info.endpoints
                ):
                    continue
                name = d.path[0].decode("utf-8") if isinstance(d.path[0], bytes) else d.path[0]
                if not name.startswith(prefix):
                    continue
                found.append(
                    Shard(name, location, info.endpoints[0].ticket.ticket, info.total_records, info.total_bytes)
                )
    if not found:
        raise LookupError(f"no flight named '{prefix}...' on {locations}")
    found.sort(key=lambda s: (s.name, s.location))
    return found
