"""``SluiceDataset``: a table's shards as a PyTorch ``IterableDataset``, in the Java loader's order.

A thin adapter over :class:`sluice.loader.FlightLoader` (order, prefetch, cursors, no torch): each
item the loader hands out becomes a dict of tensors that share the Arrow buffers (no copy), or
whatever ``collate_fn`` makes of the record batch, on ``device`` if one is given. For a CUDA
device, bodies READ over tcp land in pinned memory, shm views are copied once into pinned
staging, and each batch moves with a ``non_blocking`` copy on a side stream while the model works
on the one before; the tensors handed out are ready for the step on the current stream.

Imports torch; ``import sluice`` does not.
"""

from __future__ import annotations

import collections
import multiprocessing
import warnings
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Union

import pyarrow as pa
import torch
import torch.utils.data

from . import order
from .errors import UnsupportedColumnException
from .flight._catalog import table_shards
from .flight._negotiator import DataPlaneOptions
from .flight._shards import Shard, list_shards
from .loader import FlightLoader

__all__ = ["SluiceDataset", "batch_to_tensors"]


class SluiceDataset(torch.utils.data.IterableDataset):
    """The shards of one table for one rank, epoch after epoch.

    Semantics are the Java ``FlightLoader``'s (:class:`sluice.loader.FlightLoader` does the
    reading): the same shards in the same order for the same (seed, epoch, rank, world), every
    shard read whole, up to ``prefetch`` shards read ahead on threads (each over a connection of
    its own; never more of one server's than it lets one client hold, so any depth is safe).

    Items, as Ray's ``iter_torch_batches`` hands them out: each Arrow record batch is one item, or
    ``batch_size`` rows are (a batch never spans two shards, so the last of a shard may be shorter),
    or at most ``max_rows`` rows are. An item is a dict from column name to tensor
    (:func:`batch_to_tensors`: fixed-width columns 1-D, fixed-size lists and lists of one length
    2-D, sharing the Arrow buffers; ``columns`` picks columns), or ``collate_fn(record_batch)``
    when given. ``device`` (``"cuda"``, ``"cuda:1"``, a ``torch.device``) moves every tensor of the
    item there, overlapped with the step (see the module). ``pin_memory``: land bodies and copy
    tensors into pinned memory (default: when ``device`` is CUDA; with worker processes, let
    ``DataLoader(pin_memory=True)`` pin instead and leave ``device`` unset).

    Each ``iter()`` runs the epoch the cursor stands in, from where it stands, and leaves the
    cursor at the next epoch's start. :meth:`set_epoch` moves it to an epoch's start; call it before
    each epoch when a ``DataLoader`` has worker processes (they iterate copies), as with
    ``DistributedSampler``. :meth:`state_dict` / :meth:`load_state_dict`: the cursor of the
    iteration in this process (with worker processes each worker has its own, which torchdata's
    ``StatefulDataLoader`` collects).

    Ranks: pass ``rank`` and ``world`` (``torch.distributed.get_rank()`` and ``get_world_size()``):
    ranks read disjoint shards that cover the table. Worker processes of a ``DataLoader`` split
    their rank's shards; they must be started with ``multiprocessing_context="spawn"`` (or
    ``"forkserver"``): gRPC does not survive ``fork``, and a forked worker raises at once rather
    than hang. Use ``DataLoader(dataset, batch_size=None, ...)``: items are batches already.

    Connections are kept across epochs; :meth:`close` closes them. Picklable (a copy has none yet).
    Not thread safe: one iteration at a time.
    """

    def __init__(
        self,
        shards: Sequence[Shard],
        token: Optional[Any] = None,
        *,
        seed: int = 0,
        epoch: int = 0,
        rank: int = 0,
        world: int = 1,
        prefetch: int = 2,
        columns: Optional[Sequence[str]] = None,
        batch_size: Optional[int] = None,
        max_rows: Optional[int] = None,
        collate_fn: Optional[Callable[[pa.RecordBatch], Any]] = None,
        device: Union[str, torch.device, None] = None,
        pin_memory: Optional[bool] = None,
        secret: Optional[str] = None,
        timeout: Optional[float] = None,
        data_plane_options: Optional[DataPlaneOptions] = None,
    ) -> None:
        super().__init__()
        self.device = torch.device(device) if device is not None else None
        cuda = self.device is not None and self.device.type == "cuda"
        if cuda and not torch.cuda.is_available():
            raise ValueError(f"device {self.device} asked for, and torch sees no CUDA device")
        self.pin_memory = cuda if pin_memory is None else bool(pin_memory)
        if self.pin_memory and not torch.cuda.is_available():
            raise ValueError("pin_memory=True needs a CUDA device, and torch sees none")
        self.columns = list(columns) if columns is not None else None
        self.collate_fn = collate_fn
        self._loader = FlightLoader(
            shards, token, seed=seed, epoch=epoch, rank=rank, world=world, prefetch=prefetch,
            batch_size=batch_size, max_rows=max_rows, secret=secret, timeout=timeout,
            data_plane_options=data_plane_options, landing=_pinned_empty if self.pin_memory else None,
        )

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
        table: Union[str, Any],
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
        published = not isinstance(table, str)  # a sluice.spark.PublishedTable (not imported: it imports this)
        if published:
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
        if published:
            # The catalog's answer has no per-shard sizes; the handle has them.
            sizes = {s.flight: (s.rows, s.bytes) for s in table.shards}
            shards = [_sized(s, sizes) for s in shards]
        executors = None if secret else {s.location: s.token for s in shards}
        return cls(shards, executors, secret=secret, **kwargs)

    @property
    def loader(self) -> FlightLoader:
        """The torch-free loader underneath."""
        return self._loader

    @property
    def shards(self) -> List[Shard]:
        return self._loader.shards

    @property
    def prefetch(self) -> int:
        return self._loader.prefetch

    def set_epoch(self, epoch: int) -> None:
        """Moves the cursor to the start of ``epoch``."""
        self._loader.set_epoch(epoch)

    @property
    def cursor(self) -> order.Cursor:
        """The epoch and rank position of the next shard this process reads."""
        return self._loader.cursor

    def state_dict(self) -> Dict[str, Any]:
        return self._loader.state_dict()

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Resumes from a :meth:`state_dict` of a dataset of the same shards, seed, rank and world."""
        self._loader.load_state_dict(state)

    def close(self) -> None:
        """Closes the connections kept across epochs."""
        self._loader.close()

    def _this_worker(self) -> tuple:
        info = torch.utils.data.get_worker_info()
        if info is not None and type(multiprocessing.current_process()).__name__ == "ForkProcess":
            # gRPC (Arrow Flight's C++ client) does not survive fork once the parent used it, as
            # list_shards did: a forked worker's first call hangs.
            raise RuntimeError(
                "SluiceDataset reads over gRPC, which a forked DataLoader worker cannot use: pass"
                " multiprocessing_context='spawn' (or 'forkserver') to the DataLoader"
            )
        return (0, 1) if info is None else (info.id, info.num_workers)

    def __iter__(self) -> Iterator[Any]:
        worker, workers = self._this_worker()
        items = (self._collate(b) for b in self._loader.batches(worker, workers))
        if self.device is None or self.device.type == "cpu":
            return items
        return _on_device(items, self.device)

    def _collate(self, batch: pa.RecordBatch) -> Any:
        if self.collate_fn is not None:
            return self.collate_fn(batch)
        return batch_to_tensors(batch, self.columns, self.pin_memory and self.device is None)


def _pinned_empty(size: int):
    """Landing memory for a CUDA device: pinned, so a batch READ into it moves without staging."""
    return torch.empty(size, dtype=torch.uint8, pin_memory=True).numpy()


def _map_tensors(item: Any, f: Callable[[torch.Tensor], Any]) -> Any:
    """``item`` with ``f`` applied to every tensor in it (dicts, lists, tuples, named tuples)."""
    if isinstance(item, torch.Tensor):
        return f(item)
    if isinstance(item, Mapping):
        return {k: _map_tensors(v, f) for k, v in item.items()}
    if isinstance(item, tuple) and hasattr(item, "_fields"):
        return type(item)(*(_map_tensors(v, f) for v in item))
    if isinstance(item, (list, tuple)):
        return type(item)(_map_tensors(v, f) for v in item)
    return item


def _on_device(items: Iterator[Any], device: torch.device) -> Iterator[Any]:
    """Moves each item's tensors to ``device`` on a side stream, one item ahead of the consumer:
    host tensors in pinned memory move as they are, others are copied once into pinned staging
    first. An item is handed out once the current stream waits for its copies; its host memory
    (which may return to a landing pool) is let go only once those copies are done."""
    side = torch.cuda.Stream(device)
    moving: collections.deque = collections.deque()
    handed: collections.deque = collections.deque()

    def start(item: Any) -> tuple:
        with torch.cuda.stream(side):
            moved = _map_tensors(item, lambda t: _staged(t).to(device, non_blocking=True))
            done = torch.cuda.Event()
            done.record(side)
        return moved, done, item

    def hand_out(entry: tuple) -> Any:
        moved, done, _host = entry
        current = torch.cuda.current_stream(device)
        current.wait_event(done)
        _map_tensors(moved, lambda t: t.record_stream(current))
        handed.append(entry)
        while len(handed) > 1:
            handed.popleft()[1].synchronize()
        return moved

    try:
        for item in items:
            moving.append(start(item))  # this item copies while the model works on the one before
            if len(moving) > 1:
                yield hand_out(moving.popleft())
        while moving:
            yield hand_out(moving.popleft())
    finally:
        for _, done, _ in (*moving, *handed):
            done.synchronize()


def _staged(t: torch.Tensor) -> torch.Tensor:
    if t.device.type != "cpu" or t.is_pinned():
        return t
    staging = torch.empty(t.shape, dtype=t.dtype, pin_memory=True)
    staging.copy_(t)
    return staging


def _sized(shard: Shard, sizes: Mapping[str, tuple]) -> Shard:
    from .flight._catalog import flight_name

    rows, size = sizes.get(flight_name(shard.ticket), (-1, -1))
    return Shard(shard.name, shard.location, shard.ticket, rows, size, token=shard.token)


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
