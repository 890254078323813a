"""Reading tables from Sluice Flight servers (and any Arrow Flight server).

* :func:`open_reader` / :class:`SluiceFlightClient`: one table or shard as a :class:`TableReader`.
* :func:`list_shards`: a table's shards on several servers, in the order every reader agrees on.
* :func:`table_shards`: a published table's shards from its catalog, by URI and name.
* :mod:`sluice.flight.call_token`: the bearer token a server with a secret asks every call for.
"""

from ._catalog import table_shards
from ._client import SluiceFlightClient, open_reader
from ._negotiator import DataPlaneOptions, Decision
from ._shards import Shard, list_shards
from ._table_reader import GrpcTableReader, TableReader

__all__ = [
    "SluiceFlightClient",
    "open_reader",
    "Decision",
    "DataPlaneOptions",
    "Shard",
    "list_shards",
    "table_shards",
    "TableReader",
    "GrpcTableReader",
]
