"""How a table's record batches arrive, whatever carried them."""

from __future__ import annotations

import abc
import time
from typing import Callable, Iterator, List, Optional

import pyarrow as pa

from ._watchdog import read_chunk

__all__ = ["TableReader", "GrpcTableReader"]


class TableReader(abc.ABC):
    """One stream of a table's record batches (``io.sluice.flight.TableReader``): iterate it for
    the batches in the order the server sent them, then close it (or use it as a context manager).

    The batches stay valid after the reader closes: they own their buffers. ``data_path`` says how
    the bodies travelled: ``"grpc"`` (plain Flight) or, once the READ client exists, the
    transport's provider (``"verbs"``, ``"tcp"``, ``"shm"``). Not thread safe.
    """

    @property
    @abc.abstractmethod
    def schema(self) -> pa.Schema: ...

    @property
    @abc.abstractmethod
    def data_path(self) -> str: ...

    @abc.abstractmethod
    def __iter__(self) -> Iterator[pa.RecordBatch]: ...

    @abc.abstractmethod
    def close(self) -> None: ...

    def read_all(self) -> List[pa.RecordBatch]:
        """Every remaining batch."""
        return list(self)

    def __enter__(self) -> "TableReader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class GrpcTableReader(TableReader):
    """A table read by plain Flight DoGet (the bodies come in the gRPC messages).

    Owns the pyarrow stream; ``on_close`` runs when it closes (a reader from
    :func:`sluice.flight.open_reader` closes its client there). Each message must arrive within
    ``io_timeout`` seconds, or the call is cancelled.
    """

    def __init__(self, stream, on_close: Optional[Callable[[], None]] = None, io_timeout: float = 30.0) -> None:
        self._stream = stream
        self._timeout = io_timeout
        self._on_close = on_close
        self._ended = False
        self._closed = False

    @property
    def schema(self) -> pa.Schema:
        return self._stream.schema

    @property
    def data_path(self) -> str:
        return "grpc"

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        while True:
            try:
                chunk = read_chunk(self._stream, time.monotonic() + self._timeout, "batch")
            except StopIteration:
                self._ended = True
                return
            yield chunk.data

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if not self._ended:
                # A stream left early is cancelled, so the server stops sending at once.
                self._stream.cancel()
        finally:
            if self._on_close is not None:
                self._on_close()
