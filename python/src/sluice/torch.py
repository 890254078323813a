"""``SluiceDataset``: a table's shards as a PyTorch ``IterableDataset``, in the Java loader's order.

One iteration is one epoch of one rank: the rank's shards in ``sluice.order``'s order for
(seed, epoch, rank, world), read ahead on threads, each record batch yielded as a dict of tensors
that share the Arrow buffers (no copy). Worker processes of a ``DataLoader`` split the rank's
shards: worker ``w`` of ``W`` reads the positions ``w, w + W, ...`` of the rank's list.

Imports torch; ``import sluice`` does not.
"""

from __future__ import annotations

import collections
import concurrent.futures
import multiprocessing
import warnings
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Mapping, Optional, Sequence, Union

import pyarrow as pa
import torch
import torch.utils.data

from . import order
from .errors import ShardReadException, UnsupportedColumnException
from .flight._client import SluiceFlightClient
from .flight._catalog import table_shards
from .flight._negotiator import DataPlaneOptions
from .flight._shards import Shard, list_shards

if TYPE_CHECKING:
    from .spark import PublishedTable

__all__ = ["SluiceDataset", "batch_to_tensors"]

_STATE_VERSION = 1


class SluiceDataset(torch.utils.data.IterableDataset):
    """The shards of one table for one rank, epoch after epoch.

    Semantics are the Java ``FlightLoader``'s: the same shards in the same order for the same
    (seed, epoch, rank, world), every shard read whole, up to ``prefetch`` shards read ahead (on
    threads, a bounded window) while the trainer computes. Each Arrow record batch becomes one
    item (or several, of at most ``max_rows`` rows each): a dict from column name to tensor.
    Fixed-width columns become 1-D tensors, fixed-size lists (and lists whose rows all have one
    length, as Spark's arrays arrive) 2-D tensors, sharing the Arrow buffers; other columns raise
    :class:`UnsupportedColumnException` unless ``columns`` leaves them out. Tensors are pinned
    when CUDA is available and the iteration runs in the main process (``pin_memory=None``); with
    worker processes, let ``DataLoader(pin_memory=True)`` pin them.

    Each ``iter()`` runs the epoch the cursor stands in, from where it stands, and leaves the
    cursor at the next epoch's start. :meth:`set_epoch` moves it to an epoch's start; call it before
    each epoch when a ``DataLoader`` has worker processes (they iterate copies), as with
    ``DistributedSampler``.

    :meth:`state_dict` is the cursor of the iteration in this process: the epoch, the rank
    position of the next shard, and how many items of that shard were consumed.
    :meth:`load_state_dict` resumes there: shards before it are not opened; a shard left midway is
    read again and its consumed items are skipped. With ``num_workers == 0`` that is the rank's
    whole state; with worker processes each worker has its own, which torchdata's
    ``StatefulDataLoader`` collects from each worker.

    Worker processes must be started with ``multiprocessing_context="spawn"`` (or
    ``"forkserver"``): gRPC does not survive ``fork``; a forked worker raises at once rather than
    hang. Use ``DataLoader(dataset, batch_size=None, ...)``: items are batches already.

    Picklable (clients are made per iteration). Not thread safe: one iteration at a time.
    """

    def __init__(
        self,
        shards: Sequence[Shard],
        token: Optional[str] = None,
        *,
        seed: int = 0,
        epoch: int = 0,
        rank: int = 0,
        world: int = 1,
        prefetch: int = 2,
        columns: Optional[Sequence[str]] = None,
        max_rows: Optional[int] = None,
        pin_memory: Optional[bool] = None,
        secret: Optional[str] = None,
        timeout: Optional[float] = None,
        data_plane_options: Optional[DataPlaneOptions] = None,
    ) -> None:
        super().__init__()
        if not shards:
            raise ValueError("a dataset needs at least one shard")
        order.check_rank(rank, world)
        if not 1 <= prefetch <= 64:
            raise ValueError(f"prefetch depth must be in [1, 64], got {prefetch}")
        if max_rows is not None and max_rows < 1:
            raise ValueError(f"max_rows must be >= 1, got {max_rows}")
        self.shards: List[Shard] = list(shards)
        self.seed, self.rank, self.world = seed, rank, world
        self.prefetch = prefetch
        self.columns = list(columns) if columns is not None else None
        self.max_rows = max_rows
        self.pin_memory = pin_memory
        self._token, self._secret, self._timeout = token, secret, timeout
        self._data_plane_options = data_plane_options or DataPlaneOptions()
        self._cursor = order.Cursor(epoch, 0)
        self._batch = 0
        self._worker = (0, 1)

    @classmethod
    def from_locations(
        cls, locations: Sequence[str], prefix: str, token: Any = None, **kwargs: Any
    ) -> "SluiceDataset":
        """The dataset of the shards named ``prefix...`` on ``locations`` (:func:`list_shards`).
        ``token``: one token, a mapping of location to token, or None with ``secret=`` to mint one per server."""
        return cls(list_shards(locations, prefix, token, secret=kwargs.get("secret")), token, **kwargs)

    @classmethod
    def from_table(
        cls,
        table: Union[str, "PublishedTable"],
        name: Optional[str] = None,
        *,
        secret: Optional[str] = None,
        token: Optional[str] = None,
        **kwargs: Any,
    ) -> "SluiceDataset":
        """The dataset of a published table: ``from_table(uri, name, secret=...)`` asks the
        catalog at ``uri`` for table ``name`` (:func:`sluice.flight.table_shards`);
        ``from_table(t)`` takes a :class:`sluice.spark.PublishedTable` (its URI, name and secret).

        With ``secret`` (the tables' secret) the reader mints its own tokens and takes the
        executors' data plane (shm on the same host, else tcp). With only ``token``, a call token
        for the catalog, it reads each shard over plain Flight with the token the catalog handed
        out for that shard's executor (those expire: ``spark.sluice.tables.tokenValidity``, 10
        minutes by default; make a new dataset past it).

        :raises LostShardsError: the table lost shards with their executors
        :raises LookupError: no such table is published
        """
        from .spark import PublishedTable

        if isinstance(table, PublishedTable):
            if name is not None and name != table.name:
                raise ValueError(f"a PublishedTable names its table ('{table.name}'); got name='{name}' too")
            uri, name = table.uri, table.name
            if secret is None and token is None:
                secret = table.secret
        else:
            uri = table
            if name is None:
                raise ValueError("from_table(uri, name): the table's name is missing")
        if secret is None and token is None:
            raise ValueError("reading a published table needs its secret= or a catalog token=")
        shards = table_shards(uri, name, secret=secret, token=token, timeout=kwargs.get("timeout") or 30.0)
        if isinstance(table, PublishedTable):
            # The catalog's answer has no per-shard sizes; the handle has them.
            sizes = {s.flight: (s.rows, s.bytes) for s in table.shards}
            shards = [_sized(s, sizes) for s in shards]
        executors = None if secret else {s.location: s.token for s in shards}
        return cls(shards, executors, secret=secret, **kwargs)

    def set_epoch(self, epoch: int) -> None:
        """Moves the cursor to the start of ``epoch``."""
        self._cursor = order.Cursor(epoch, 0)
        self._batch = 0

    @property
    def cursor(self) -> order.Cursor:
        """The epoch and rank position of the next shard this process reads."""
        return self._cursor

    def state_dict(self) -> Dict[str, Any]:
        worker, workers = self._worker
        return {
            "version": _STATE_VERSION,
            "shards": len(self.shards),
            "seed": self.seed,
            "rank": self.rank,
            "world": self.world,
            "worker": worker,
            "workers": workers,
            "epoch": self._cursor.epoch,
            "position": self._cursor.position,
            "batch": self._batch,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Resumes from a :meth:`state_dict` of a dataset of the same shards, seed, rank and world."""
        if state.get("version") != _STATE_VERSION:
            raise ValueError(f"a state of version {state.get('version')}, this dataset reads {_STATE_VERSION}")
        mine = (len(self.shards), self.seed, self.rank, self.world)
        theirs = (state["shards"], state["seed"], state["rank"], state["world"])
        if mine != theirs:
            raise ValueError(
                f"the state is of (shards, seed, rank, world) {theirs}, this dataset's are {mine}"
            )
        self._cursor = order.Cursor(state["epoch"], state["position"])
        self._batch = state["batch"]
        self._worker = (state["worker"], state["workers"])

    def _this_worker(self) -> tuple:
        info = torch.utils.data.get_worker_info()
        if info is not None and type(multiprocessing.current_process()).__name__ == "ForkProcess":
            # gRPC (Arrow Flight's C++ client) does not survive fork once the parent used it, as
            # list_shards did: a forked worker's first call hangs.
            raise RuntimeError(
                "SluiceDataset reads over gRPC, which a forked DataLoader worker cannot use: pass"
                " multiprocessing_context='spawn' (or 'forkserver') to the DataLoader"
            )
        here = (0, 1) if info is None else (info.id, info.num_workers)
        if (self._cursor.position or self._batch) and here != self._worker:
            # A mid-epoch cursor is one worker's: another would skip or repeat shards.
            raise ValueError(
                f"the state is worker {self._worker[0]}'s of {self._worker[1]}, this iteration runs in worker"
                f" {here[0]} of {here[1]}: resume each worker from its own state (torchdata's"
                " StatefulDataLoader) with as many workers, or start from an epoch's start (set_epoch)"
            )
        return here

    def __iter__(self) -> Iterator[Dict[str, torch.Tensor]]:
        worker, workers = self._this_worker()
        self._worker = (worker, workers)
        start, skip = self._cursor, self._batch
        mine = order.for_rank(len(self.shards), self.seed, start.epoch, self.rank, self.world)
        if start.position > len(mine):
            raise ValueError(
                f"cursor {start} is past the {len(mine)} shards rank {self.rank} of {self.world}"
                f" reads in epoch {start.epoch}"
            )
        positions = [p for p in order.for_worker(mine, worker, workers) if p >= start.position]
        if not positions or positions[0] != start.position:
            skip = 0
        pin = self.pin_memory
        if pin is None:
            pin = torch.cuda.is_available() and torch.utils.data.get_worker_info() is None
        return self._epoch(start.epoch, mine, positions, skip, pin)

    def _epoch(
        self, epoch: int, mine: List[int], positions: List[int], skip: int, pin: bool
    ) -> Iterator[Dict[str, torch.Tensor]]:
        clients: Dict[str, SluiceFlightClient] = {}
        readers = concurrent.futures.ThreadPoolExecutor(
            max_workers=self.prefetch, thread_name_prefix=f"sluice-loader-{self.rank}"
        )
        ahead: collections.deque = collections.deque()
        todo = iter(positions)

        def client(location: str) -> SluiceFlightClient:
            # Made here, on the consuming thread, so readers share one channel per server.
            if location not in clients:
                clients[location] = SluiceFlightClient(
                    location, self._token, secret=self._secret, timeout=self._timeout,
                    data_plane_options=self._data_plane_options,
                )
            return clients[location]

        def read_ahead() -> None:
            while len(ahead) < self.prefetch:
                p = next(todo, None)
                if p is None:
                    return
                shard = self.shards[mine[p]]
                ahead.append((p, shard, readers.submit(_read_shard, client(shard.location), shard)))

        try:
            read_ahead()
            while ahead:
                p, shard, future = ahead[0]
                try:
                    batches = future.result()
                except Exception as e:  # noqa: BLE001 - any failure of the read is the shard's
                    raise ShardReadException(shard, e) from e
                ahead.popleft()
                read_ahead()
                items = [piece for b in batches for piece in self._pieces(b)]
                for i in range(skip, len(items)):
                    tensors = batch_to_tensors(items[i], self.columns, pin)
                    if i + 1 < len(items):
                        self._cursor, self._batch = order.Cursor(epoch, p), i + 1
                    else:
                        self._cursor, self._batch = order.Cursor(epoch, p + 1), 0
                    yield tensors
                if len(items) <= skip:
                    self._cursor, self._batch = order.Cursor(epoch, p + 1), 0
                skip = 0
            self._cursor, self._batch = order.Cursor(epoch, 0).next_epoch(), 0
        finally:
            # Reads not started are dropped; one in progress runs to its end (a shard is bounded).
            readers.shutdown(wait=True, cancel_futures=True)
            for c in clients.values():
                c.close()

    def _pieces(self, batch: pa.RecordBatch) -> List[pa.RecordBatch]:
        if self.max_rows is None or batch.num_rows <= self.max_rows:
            return [batch]
        return [batch.slice(o, self.max_rows) for o in range(0, batch.num_rows, self.max_rows)]


def _sized(shard: Shard, sizes: Mapping[str, tuple]) -> Shard:
    from .flight._catalog import flight_name

    rows, size = sizes.get(flight_name(shard.ticket), (-1, -1))
    return Shard(shard.name, shard.location, shard.ticket, rows, size, token=shard.token)


def _read_shard(client: SluiceFlightClient, shard: Shard) -> List[pa.RecordBatch]:
    """Reads one shard whole. Runs on a reader thread."""
    with client.get_stream(shard.ticket) as reader:
        return reader.read_all()


def batch_to_tensors(
    batch: pa.RecordBatch, columns: Optional[Sequence[str]] = None, pin: bool = False
) -> Dict[str, torch.Tensor]:
    """The columns of ``batch`` as tensors over its Arrow buffers (no copy; ``pin`` copies into
    pinned memory). Fixed-width numbers become 1-D tensors, fixed-size lists of them 2-D tensors,
    and so do variable-size lists whose rows all have the same length (Spark's arrays).

    :raises UnsupportedColumnException: for a column that cannot be viewed so
    """
    names = batch.schema.names if columns is None else columns
    out: Dict[str, torch.Tensor] = {}
    for name in names:
        index = batch.schema.get_field_index(name)
        if index < 0:
            raise KeyError(f"no column '{name}' in {batch.schema.names}")
        tensor = _tensor(name, batch.column(index))
        out[name] = tensor.pin_memory() if pin else tensor
    return out


def _tensor(name: str, column: pa.Array) -> torch.Tensor:
    t = column.type
    if pa.types.is_fixed_size_list(t):
        if column.null_count:
            raise UnsupportedColumnException(f"column '{name}' has null lists; a tensor has no nulls")
        # flatten() honours the array's offset (a slice), unlike .values.
        values = _numpy(name, column.flatten(), t.value_type)
        return _from_numpy(name, values.reshape(len(column), t.list_size))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _from_numpy(name, _even_list(name, column, t))
    return _from_numpy(name, _numpy(name, column, t))


def _even_list(name: str, column: pa.Array, t: pa.DataType):
    """A list column whose rows all have one length, as a (rows, length) view of its values: what
    Spark's array columns are when every row is a vector of the same size."""
    if column.null_count:
        raise UnsupportedColumnException(f"column '{name}' has null lists; a tensor has no nulls")
    # .offsets honours the array's offset (a slice): len(column) + 1 positions into .values.
    offsets = column.offsets.to_numpy(zero_copy_only=True)
    rows = len(column)
    width = int(offsets[1] - offsets[0]) if rows else 0
    if rows and (offsets[1:] - offsets[:-1] != width).any():
        lengths = offsets[1:] - offsets[:-1]
        raise UnsupportedColumnException(
            f"column '{name}' is a list column with rows of different lengths ({int(lengths.min())} to"
            f" {int(lengths.max())}); a tensor needs one length per row: leave it out with columns="
        )
    values = column.values.slice(int(offsets[0]) if rows else 0, rows * width)
    return _numpy(name, values, t.value_type).reshape(rows, width)


def _numpy(name: str, column: pa.Array, t: pa.DataType):
    if not (pa.types.is_integer(t) or pa.types.is_floating(t)):
        raise UnsupportedColumnException(
            f"column '{name}' of type {t} has no zero-copy tensor form (fixed-width numbers and"
            " fixed-size lists of them do); leave it out with columns="
        )
    if column.null_count:
        raise UnsupportedColumnException(f"column '{name}' has nulls; a tensor has no nulls")
    return column.to_numpy(zero_copy_only=True)


def _from_numpy(name: str, array) -> torch.Tensor:
    with warnings.catch_warnings():
        # Arrow buffers are immutable, so the arrays are read-only; the tensors share them and
        # must not be written either (torch warns once about exactly that).
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        try:
            return torch.from_numpy(array)
        except TypeError as e:
            raise UnsupportedColumnException(f"column '{name}': {e}") from e
