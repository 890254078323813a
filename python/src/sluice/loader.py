"""``FlightLoader``: a table's shards for one rank, epoch after epoch, as Arrow record batches; the
twin of the Java ``io.sluice.flight.loader.FlightLoader`` (order, prefetch, cursors), without torch.

:class:`sluice.torch.SluiceDataset` is this loader under PyTorch's ``IterableDataset``; use the
loader itself to feed anything else that takes Arrow (NumPy, JAX, a custom trainer)::

    with FlightLoader(shards, secret=secret, prefetch=8, seed=0, rank=rank, world=world) as loader:
        for epoch in range(3):
            loader.set_epoch(epoch)
            for batch in loader:          # pyarrow.RecordBatch
                ...
"""

from __future__ import annotations

import collections
import concurrent.futures
import weakref
from typing import Any, Deque, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import pyarrow as pa

from . import order
from .errors import ShardReadException
from .flight._client import SluiceFlightClient
from .flight._landing import Allocate
from .flight._negotiator import DataPlaneOptions
from .flight._session import StreamSlot
from .flight._shards import Shard, list_shards

__all__ = ["FlightLoader", "STATE_VERSION"]

#: The version of :meth:`FlightLoader.state_dict`'s layout.
STATE_VERSION = 1


class FlightLoader:
    """The shards of one table for one rank, epoch after epoch (``io.sluice.flight.loader.FlightLoader``).

    The same shards in the same order as the Java loader for the same (seed, epoch, rank, world),
    every shard read whole, up to ``prefetch`` shards read ahead on threads while the consumer
    works. Each record batch becomes one item, or several: ``batch_size`` rows each (the last of a
    shard may be shorter; a batch never spans two shards, so a cursor stays exact), or at most
    ``max_rows`` rows each. A batch that spans two of the server's record batches is one copy;
    every other item shares the memory the bodies landed in (or, on shm, the server's).

    Reads scale with ``prefetch``: each shard is read on its own thread over a connection of its
    own. A server lets one client hold a bounded number of data-plane streams at once (its offer
    names the bound, ``sluice.flight.dataPlaneGetsPerClient``); no more shards of one server are
    read ahead than that bound, so a deeper prefetch waits instead of failing. Any failure ends
    the iteration with :class:`ShardReadException` naming the shard (the cause chained), after
    every stream of the epoch is closed.

    Each ``iter()`` runs the epoch the cursor stands in, from where it stands, and leaves the
    cursor at the next epoch's start; :meth:`set_epoch` moves it to an epoch's start.
    :meth:`state_dict` is the cursor: the epoch, the rank position of the next shard, and how many
    items of that shard were consumed; :meth:`load_state_dict` resumes there (shards before it are
    not opened; a shard left midway is read again and its consumed items are skipped).

    ``worker``/``workers`` split the rank's shards between processes on one host (DataLoader
    workers): worker ``w`` of ``W`` reads positions ``w, w + W, ...`` of the rank's list.

    Clients (a gRPC channel and transport connections per server) are made on first use and kept
    across epochs; :meth:`close` closes them (also when the loader is garbage, or at exit).
    Picklable: a copy has no clients yet. Not thread safe: one iteration at a time.
    """

    def __init__(
        self,
        shards: Sequence[Shard],
        token: Any = None,
        *,
        seed: int = 0,
        epoch: int = 0,
        rank: int = 0,
        world: int = 1,
        prefetch: int = 2,
        batch_size: Optional[int] = None,
        max_rows: Optional[int] = None,
        secret: Optional[str] = None,
        timeout: Optional[float] = None,
        data_plane_options: Optional[DataPlaneOptions] = None,
        landing: Optional[Allocate] = None,
    ) -> None:
        if not shards:
            raise ValueError("a loader needs at least one shard")
        order.check_rank(rank, world)
        if not 1 <= prefetch <= 256:
            raise ValueError(f"prefetch depth must be in [1, 256], got {prefetch}")
        if max_rows is not None and max_rows < 1:
            raise ValueError(f"max_rows must be >= 1, got {max_rows}")
        if batch_size is not None and batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if batch_size is not None and max_rows is not None:
            raise ValueError("give batch_size (rows per item) or max_rows (at most rows per item), not both")
        self.shards: List[Shard] = list(shards)
        self.seed, self.rank, self.world = seed, rank, world
        self.prefetch = prefetch
        self.batch_size = batch_size
        self.max_rows = max_rows
        self.token = token
        self.secret = secret
        self.timeout = timeout
        self.data_plane_options = data_plane_options or DataPlaneOptions()
        self.landing = landing
        self._cursor = order.Cursor(epoch, 0)
        self._batch = 0
        self._worker = (0, 1)
        self._clients: Dict[str, SluiceFlightClient] = {}
        self._closer = weakref.finalize(self, _close_clients, self._clients)

    @classmethod
    def from_locations(cls, locations: Sequence[str], prefix: str, token: Any = None, **kwargs: Any) -> "FlightLoader":
        """The loader of the shards named ``prefix...`` on ``locations`` (:func:`sluice.flight.list_shards`)."""
        return cls(list_shards(locations, prefix, token, secret=kwargs.get("secret")), token, **kwargs)

    # ---- the cursor

    def set_epoch(self, epoch: int) -> None:
        """Moves the cursor to the start of ``epoch``."""
        self._cursor = order.Cursor(epoch, 0)
        self._batch = 0

    @property
    def cursor(self) -> order.Cursor:
        """The epoch and rank position of the next shard this loader reads."""
        return self._cursor

    def state_dict(self) -> Dict[str, Any]:
        worker, workers = self._worker
        return {
            "version": STATE_VERSION,
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
        """Resumes from a :meth:`state_dict` of a loader of the same shards, seed, rank and world."""
        if state.get("version") != STATE_VERSION:
            raise ValueError(f"a state of version {state.get('version')}, this loader reads {STATE_VERSION}")
        mine = (len(self.shards), self.seed, self.rank, self.world)
        theirs = (state["shards"], state["seed"], state["rank"], state["world"])
        if mine != theirs:
            raise ValueError(f"the state is of (shards, seed, rank, world) {theirs}, this loader's are {mine}")
        self._cursor = order.Cursor(state["epoch"], state["position"])
        self._batch = state["batch"]
        self._worker = (state["worker"], state["workers"])

    # ---- reading

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        return self.batches()

    def batches(self, worker: int = 0, workers: int = 1) -> Iterator[pa.RecordBatch]:
        """The items of the epoch the cursor stands in, from where it stands, for worker ``worker``
        of ``workers``; the cursor follows each item handed out."""
        here = (worker, workers)
        if (self._cursor.position or self._batch) and here != self._worker:
            # A mid-epoch cursor is one worker's: another would skip or repeat shards.
            raise ValueError(
                f"the state is worker {self._worker[0]}'s of {self._worker[1]}, this iteration runs in worker"
                f" {worker} of {workers}: resume each worker from its own state (torchdata's"
                " StatefulDataLoader) with as many workers, or start from an epoch's start (set_epoch)"
            )
        self._worker = here
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
        return self._epoch(start.epoch, mine, positions, skip)

    def client(self, location: str) -> SluiceFlightClient:
        """The loader's client of ``location``, made on first use (on the consuming thread)."""
        c = self._clients.get(location)
        if c is None:
            c = SluiceFlightClient(location, self.token, secret=self.secret, timeout=self.timeout,
                                   data_plane_options=self.data_plane_options, landing=self.landing)
            self._clients[location] = c
        return c

    def _epoch(self, epoch: int, mine: List[int], positions: List[int], skip: int) -> Iterator[pa.RecordBatch]:
        readers = concurrent.futures.ThreadPoolExecutor(
            max_workers=self.prefetch, thread_name_prefix=f"sluice-loader-{self.rank}")
        ahead: Deque[Tuple[int, Shard, concurrent.futures.Future, Optional[StreamSlot]]] = collections.deque()
        todo: Deque[int] = collections.deque(positions)
        wait = self.data_plane_options.io_timeout

        def read_ahead() -> None:
            # Each read gets its server's stream place here, in the shards' order: a read handed to
            # a thread never waits for a place that a later shard (read, not yet consumed) holds.
            while len(ahead) < self.prefetch and todo:
                shard = self.shards[mine[todo[0]]]
                try:
                    c = self.client(shard.location)
                    place = c.reserve_stream(None if ahead else wait)
                    bounded = c.max_streams is not None
                except Exception as e:  # noqa: BLE001 - negotiating or waiting for a place is part of the read
                    raise ShardReadException(shard, e) from e
                if place is None and bounded:
                    return  # the server's bound: read on once a place comes free
                ahead.append((todo.popleft(), shard, readers.submit(_read_shard, c, shard, place), place))

        try:
            read_ahead()
            while ahead:
                p, shard, future, _ = ahead[0]
                try:
                    batches = future.result()
                except Exception as e:  # noqa: BLE001 - any failure of the read is the shard's
                    raise ShardReadException(shard, e) from e
                ahead.popleft()
                future = None  # it holds the batches too: once handed out, nothing here may keep them
                items = self._pieces(batches)
                batches = None
                for i in range(skip, len(items)):
                    if i + 1 < len(items):
                        self._cursor, self._batch = order.Cursor(epoch, p), i + 1
                    else:
                        self._cursor, self._batch = order.Cursor(epoch, p + 1), 0
                    item, items[i] = items[i], None
                    yield item
                    item = None
                    read_ahead()
                if len(items) <= skip:
                    self._cursor, self._batch = order.Cursor(epoch, p + 1), 0
                skip = 0
                read_ahead()
            self._cursor, self._batch = order.Cursor(epoch, 0).next_epoch(), 0
        finally:
            # Reads not started are dropped (their places given back); those under way end within
            # their deadlines, and what they read is dropped with them (each reader closed, its
            # streams ended).
            for _, _, future, place in ahead:
                if future.cancel() and place is not None:
                    place.release()
            readers.shutdown(wait=True)
            ahead.clear()

    def _pieces(self, batches: List[pa.RecordBatch]) -> List[Optional[pa.RecordBatch]]:
        if self.batch_size is not None:
            return _rebatch(batches, self.batch_size)
        if self.max_rows is None:
            return list(batches)
        return [b.slice(o, self.max_rows) for b in batches for o in range(0, max(1, b.num_rows), self.max_rows)]

    # ---- life

    def close(self) -> None:
        """Closes the loader's clients (a later iteration makes new ones)."""
        _close_clients(self._clients)

    def __enter__(self) -> "FlightLoader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_clients")
        state.pop("_closer")
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._clients = {}
        self._closer = weakref.finalize(self, _close_clients, self._clients)


def _close_clients(clients: Dict[str, SluiceFlightClient]) -> None:
    while clients:
        _, c = clients.popitem()
        c.close()


def _read_shard(client: SluiceFlightClient, shard: Shard, place: Optional[StreamSlot] = None) -> List[pa.RecordBatch]:
    """Reads one shard whole (on ``place``, reserved for it). Runs on a reader thread."""
    with client.get_stream(shard.ticket, place) as reader:
        return reader.read_all()


def _rebatch(batches: List[pa.RecordBatch], size: int) -> List[Optional[pa.RecordBatch]]:
    """A shard's rows as batches of ``size`` rows (the last may be shorter): slices where a batch
    lies within one record batch, one copy where it spans several."""
    out: List[Optional[pa.RecordBatch]] = []
    parts: List[pa.RecordBatch] = []
    have = 0
    for b in batches:
        at = 0
        while at < b.num_rows:
            take = min(size - have, b.num_rows - at)
            parts.append(b.slice(at, take))
            have += take
            at += take
            if have == size:
                out.append(_joined(parts))
                parts, have = [], 0
    if have:
        out.append(_joined(parts))
    if not out and batches:
        out.append(batches[0].slice(0, 0))
    return out


def _joined(parts: List[pa.RecordBatch]) -> pa.RecordBatch:
    if len(parts) == 1:
        return parts[0]
    return pa.Table.from_batches(parts).combine_chunks().to_batches()[0]
