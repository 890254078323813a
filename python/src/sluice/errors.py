"""The package's exceptions, named like their Java counterparts. Those a caller would catch as a
builtin are that builtin too: a missed deadline is a ``TimeoutError``, a closed or unreachable peer a
``ConnectionError``, a refused handshake a ``PermissionError``, a table over its budget a ``MemoryError``."""

from __future__ import annotations

__all__ = [
    "SluiceException", "ShardReadException", "UnsupportedColumnException", "TransportException",
    "ProtocolException", "AuthenticationFailedException", "UnknownKeyException", "RegionRevokedException",
    "RegionTruncatedException", "ReadOutOfBoundsException", "RemoteHandlerException", "ResourceExhaustedException",
    "MessageTooLargeException", "TransportUnavailableException", "TransportTimeoutException",
    "PeerClosedException", "ReadIntegrityException",
    "TableError", "TableMemoryError", "LostShardsError", "UnsupportedColumnError",
]


class SluiceException(Exception):
    """Base of every exception this package raises itself."""


class ShardReadException(SluiceException):
    """Reading a shard failed (``shard``: the :class:`sluice.flight.Shard`). The dataset that raised it is unusable; one restored from its last
    ``state_dict()`` starts with this shard (``io.sluice.flight.loader.ShardReadException``)."""

    def __init__(self, shard: object, cause: BaseException) -> None:
        super().__init__(f"reading shard {shard} failed: {cause}")
        self.shard = shard


class UnsupportedColumnException(SluiceException, TypeError):
    """A column cannot become a tensor without a copy (strings, nulls, booleans, nested lists),
    or torch has no dtype for it. Leave it out with ``columns=``."""


# ---- the transport's failures (io.sluice.transport.*Exception), raised by sluice.transport


class TransportException(SluiceException):
    """A transport operation failed (``io.sluice.transport.TransportException``)."""


class ProtocolException(TransportException):
    """A malformed or unexpected frame; the connection is closed."""


class AuthenticationFailedException(TransportException, PermissionError):
    """The handshake failed: another secret, another node than expected, or a forged signature."""


class UnknownKeyException(TransportException):
    """No live region under the key, or the region is not readable by this node."""


class RegionRevokedException(TransportException):
    """The region was revoked by its owner."""


class RegionTruncatedException(TransportException):
    """The file behind a same-host region was cut short under the reader (any process of the same
    user may): its bytes cannot be read, and nothing stands in for them. The message names the
    region, its file and the file's size."""


class ReadOutOfBoundsException(TransportException):
    """A READ outside its region."""


class RemoteHandlerException(TransportException):
    """The peer's message handler failed."""


class ResourceExhaustedException(TransportException):
    """The peer's message handler refused for load (ERROR code EXHAUSTED): a bound on this peer's
    or all peers' use is reached, and the same request may succeed later. Its class, never its
    text, is what says so."""


class MessageTooLargeException(TransportException):
    """A message exceeds the receiver's ``maxMessageBytes``."""


class TransportUnavailableException(TransportException, ConnectionError):
    """The peer runs no such service, or it failed."""


class TransportTimeoutException(TransportException, TimeoutError):
    """An operation missed its deadline."""


class PeerClosedException(TransportException, ConnectionError):
    """The connection is closed."""


class ReadIntegrityException(SluiceException):
    """A body's bytes do not match the CRC32C its owner computed when it stored them
    (``io.sluice.flight.ReadIntegrityException``)."""


# ---- published tables (io.sluice.spark.tables.TableException and its subclasses), raised by
# sluice.spark and by readers of a table's catalog (sluice.flight.table_shards)


class TableError(SluiceException):
    """A published table cannot be made, found or read (``io.sluice.spark.tables.TableException``);
    the message names the table."""


class TableMemoryError(TableError, MemoryError):
    """The table does not fit in an executor's budget for published tables; the message names the
    budget's key (``spark.sluice.tables.memory``) and the sizes (``TableMemoryException``)."""


class LostShardsError(TableError, ConnectionError):
    """Some of the table's shards went with executors that are gone; the message names them
    (``LostShardsException``, or the catalog's UNAVAILABLE answer)."""


class UnsupportedColumnError(TableError, TypeError):
    """A column whose Spark type Arrow cannot hold; the message names the column and its type
    (``TableException.UnsupportedColumnException``)."""
