"""The three hand-offs the trainer is fed by, each an epoch at a time as dicts of column tensors
(``user_id``, ``label``, ``f0``.., ``embedding`` as an (n, 256) tensor), in the shard order of
``sluice.order`` for the same seed and epoch, with the same number of shards read ahead on threads:

* ``sluice``: ``sluice.torch.SluiceDataset``, the executors' Flight servers over the READ data
  plane (shm on the servers' host, tcp elsewhere);
* ``flight-grpc``: the same Flight servers read by ``pyarrow.flight``'s DoGet over gRPC;
* ``parquet``: the Parquet files Spark wrote, read every epoch with ``pyarrow.dataset`` a row
  group at a time (a row group is a shard), the way Petastorm's Spark converter reads them.

Every feed is a context manager; one epoch is iterated at a time.
"""

from __future__ import annotations

import collections
import concurrent.futures
import pathlib
from typing import Dict, Iterator, List, Optional

import pyarrow as pa
import torch

from sluice import order
from sluice.flight import DataPlaneOptions, SluiceFlightClient, call_token, list_shards
from sluice.torch import SluiceDataset, batch_to_tensors

from . import properties

__all__ = ["Feed", "SluiceFeed", "FlightGrpcFeed", "ParquetFeed", "open_feed", "FEEDS"]

FEEDS = ("sluice", "flight-grpc", "parquet")
# A Flight call (one shard, or a negotiation) that takes longer than this fails instead of
# waiting: a server that stops sending must not hold the trainer forever.
CALL_TIMEOUT_S = 300.0
Batch = Dict[str, torch.Tensor]


class Feed:
    """One hand-off: :meth:`epoch` yields an epoch's batches; :attr:`path` is how they travelled."""

    name = ""
    path = ""

    def epoch(self, epoch: int) -> Iterator[Batch]:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __enter__(self) -> "Feed":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Endpoints:
    """What the driver wrote to ``endpoints.properties``: the table, its servers and their tokens."""

    def __init__(self, run_dir: pathlib.Path) -> None:
        p = properties.load(run_dir / "endpoints.properties")
        self.table = p["table"]
        self.secret = p.get("secret") or None
        self.locations = p["locations"].split(",")
        self.tokens = {call_token.audience(k[len("token."):]): v for k, v in p.items() if k.startswith("token.")}
        self.shards = int(p["shards"])

    def token(self, location: str) -> Optional[str]:
        return self.tokens.get(call_token.audience(location))


class SluiceFeed(Feed):
    name = "sluice"

    def __init__(self, run_dir: pathlib.Path, seed: int, prefetch: int, verify_reads: bool = True) -> None:
        e = Endpoints(run_dir)
        if e.secret is None:
            raise ValueError(f"{run_dir}: the executors serve without a secret, so without the data plane")
        self._endpoints = e
        self._options = DataPlaneOptions(verify_reads=verify_reads)
        self._dataset = SluiceDataset(
            list_shards(e.locations, e.table + ".", e.tokens), e.tokens, secret=e.secret, seed=seed,
            prefetch=prefetch, pin_memory=False, data_plane_options=self._options, timeout=CALL_TIMEOUT_S,
        )
        self._path: Optional[str] = None

    @property
    def path(self) -> str:  # type: ignore[override]
        """The data path the servers' clients take; asked on first use (after the epochs: it is
        not part of the hand-off), as the dataset's clients negotiate it on every epoch."""
        if self._path is None:
            paths = set()
            for location in self._endpoints.locations:
                with SluiceFlightClient(location, self._endpoints.tokens, secret=self._endpoints.secret,
                                        timeout=CALL_TIMEOUT_S, data_plane_options=self._options) as c:
                    paths.add(c.decision.data_path)
            self._path = "+".join(sorted(paths))
        return self._path

    def epoch(self, epoch: int) -> Iterator[Batch]:
        self._dataset.set_epoch(epoch)
        return iter(self._dataset)


class _ShardFeed(Feed):
    """Shards read whole on ``prefetch`` threads, ``prefetch`` ahead, in ``sluice.order``'s order."""

    def __init__(self, shards: int, seed: int, prefetch: int) -> None:
        self._count, self._seed = shards, seed
        self._readers = concurrent.futures.ThreadPoolExecutor(max_workers=prefetch, thread_name_prefix="feed")
        self._prefetch = prefetch

    def _read(self, shard: int) -> List[pa.RecordBatch]:
        raise NotImplementedError

    def epoch(self, epoch: int) -> Iterator[Batch]:
        todo = iter(order.for_rank(self._count, self._seed, epoch, 0, 1))
        ahead: collections.deque = collections.deque()

        def read_ahead() -> None:
            while len(ahead) < self._prefetch:
                s = next(todo, None)
                if s is None:
                    return
                ahead.append(self._readers.submit(self._read, s))

        try:
            read_ahead()
            while ahead:
                batches = ahead[0].result()
                ahead.popleft()
                read_ahead()
                for b in batches:
                    yield batch_to_tensors(b)
        finally:
            for f in ahead:
                f.cancel()

    def close(self) -> None:
        self._readers.shutdown(wait=True, cancel_futures=True)


class FlightGrpcFeed(_ShardFeed):
    name = "flight-grpc"
    path = "grpc"

    def __init__(self, run_dir: pathlib.Path, seed: int, prefetch: int) -> None:
        from pyarrow import flight

        e = Endpoints(run_dir)
        self._shards = list_shards(e.locations, e.table + ".", e.tokens or None)
        self._clients = {location: flight.FlightClient(location) for location in e.locations}
        self._options = {location: call_token.call_options(e.token(location), CALL_TIMEOUT_S)
                         for location in e.locations}
        super().__init__(len(self._shards), seed, prefetch)

    def _read(self, shard: int) -> List[pa.RecordBatch]:
        from pyarrow import flight

        s = self._shards[shard]
        reader = self._clients[s.location].do_get(flight.Ticket(s.ticket), options=self._options[s.location])
        return reader.read_all().to_batches()

    def close(self) -> None:
        super().close()
        for c in self._clients.values():
            c.close()


class ParquetFeed(_ShardFeed):
    name = "parquet"
    path = "parquet"

    def __init__(self, directory: pathlib.Path, seed: int, prefetch: int) -> None:
        import pyarrow.dataset as ds

        files = ds.dataset(str(directory), format="parquet")
        fragments = sorted(files.get_fragments(), key=lambda f: f.path)
        self._pieces = [rg for f in fragments for rg in f.split_by_row_group()]
        if not self._pieces:
            raise LookupError(f"no Parquet row groups under {directory}")
        super().__init__(len(self._pieces), seed, prefetch)

    def _read(self, shard: int) -> List[pa.RecordBatch]:
        return [fixed_size_lists(b) for b in self._pieces[shard].to_table().to_batches()]


def fixed_size_lists(batch: pa.RecordBatch, width: int = 256) -> pa.RecordBatch:
    """``batch`` with its list columns of ``width`` values as fixed-size lists (Parquet keeps no list
    size), sharing the values' buffers."""
    columns = []
    for column in batch.columns:
        if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
            if column.null_count:
                raise ValueError("a list column with nulls has no fixed-size form")
            column = pa.FixedSizeListArray.from_arrays(column.flatten(), width)
        columns.append(column)
    return pa.RecordBatch.from_arrays(columns, names=batch.schema.names)


def open_feed(name: str, run_dir: pathlib.Path, seed: int = 1, prefetch: int = 4,
              parquet: Optional[pathlib.Path] = None, verify_reads: bool = True) -> Feed:
    """The feed ``name`` of the run in ``run_dir`` (``parquet``: the files the driver names in its
    ``driver.properties``, or ``parquet`` when given; ``verify_reads``: sluice's CRC32C check)."""
    if name == "sluice":
        return SluiceFeed(run_dir, seed, prefetch, verify_reads)
    if name == "flight-grpc":
        return FlightGrpcFeed(run_dir, seed, prefetch)
    if name == "parquet":
        if parquet is None:
            parquet = pathlib.Path(properties.load(run_dir / "driver.properties")["parquetDir"])
        return ParquetFeed(parquet, seed, prefetch)
    raise ValueError(f"a feed is one of {', '.join(FEEDS)}, got '{name}'")
