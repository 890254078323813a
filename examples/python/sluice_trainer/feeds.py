"""The three hand-offs the trainer is fed by, each an epoch at a time as dicts of column tensors
(``user_id``, ``label``, ``f0``.., ``embedding`` as an (n, 256) tensor), in the shard order of
``sluice.order`` for the same seed and epoch, with the same number of shards read ahead, each on a
thread of its own (``prefetch``: the feed's reading threads):

* ``sluice``: ``sluice.torch.SluiceDataset.from_table``, the published table read by its catalog's
  URI and name with the tables' secret (derived from Spark's and the application id), over the
  executors' READ data plane (shm on their host,
  tcp elsewhere);
* ``flight-grpc``: the same table read by ``pyarrow.flight`` over gRPC, with no secret: the catalog
  asked with the driver's catalog token, each shard's executor with the token the catalog handed
  out for it;
* ``parquet``: the Parquet files Spark wrote, read every epoch with ``pyarrow.dataset`` a row
  group at a time (a row group is a shard), the way Petastorm's Spark converter reads them, each
  row group decoded on its reading thread alone. Where no pipeline wrote them (a table published
  by other means), :func:`write_parquet` writes the published table's rows as Parquet first.

The run folder's ``driver.properties`` (written by the pipeline's driver, owner-only) names the
catalog and the table, and holds a catalog token that lives while the driver serves. The secret is
never in a file: the ``sluice`` feed takes it from the environment (``SLUICE_SECRET``, as the
driver does). Every feed is a context manager; one epoch is iterated at a time.
"""

from __future__ import annotations

import collections
import concurrent.futures
import os
import pathlib
from typing import Dict, Iterator, List, Optional

import pyarrow as pa
import torch

from sluice import order
from sluice.flight import DataPlaneOptions, SluiceFlightClient, call_token, table_shards
from sluice.spark import tables_secret
from sluice.torch import SluiceDataset, batch_to_tensors

from . import properties

__all__ = ["Feed", "SluiceFeed", "FlightGrpcFeed", "ParquetFeed", "open_feed", "write_parquet", "FEEDS",
           "SECRET_ENV"]

FEEDS = ("sluice", "flight-grpc", "parquet")
#: The environment variable that holds the tables' secret (the pipeline's driver reads the same).
SECRET_ENV = "SLUICE_SECRET"
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


class Published:
    """Where the driver says the table is (``driver.properties``): the catalog's URI, the table's
    name, the catalog token and the application id."""

    def __init__(self, run_dir: pathlib.Path) -> None:
        p = properties.load(run_dir / "driver.properties")
        if "catalog" not in p:
            raise ValueError(f"{run_dir}/driver.properties names no catalog: that run wrote Parquet")
        self.catalog, self.table = p["catalog"], p["table"]
        self.token = p.get("catalogToken") or None
        self.application_id = p["applicationId"]


class SluiceFeed(Feed):
    name = "sluice"

    def __init__(self, run_dir: pathlib.Path, seed: int, prefetch: int, verify_reads: bool = True,
                 device: Optional[str] = None) -> None:
        secret = os.environ.get(SECRET_ENV)
        if not secret:
            raise ValueError(f"the sluice feed reads with the tables' secret: set {SECRET_ENV} in the environment,"
                             " as for the pipeline's driver")
        t = Published(run_dir)
        secret = tables_secret(secret, t.application_id)
        self._secret = secret
        self._options = DataPlaneOptions(verify_reads=verify_reads)
        # On a CUDA device the dataset hands out device tensors: bodies land pinned (shm views are
        # staged once) and move on a side stream while the model works on the batch before.
        cuda = device is not None and device.startswith("cuda")
        self._dataset = SluiceDataset.from_table(
            t.catalog, t.table, secret=secret, seed=seed, prefetch=prefetch, device=device if cuda else None,
            data_plane_options=self._options, timeout=CALL_TIMEOUT_S,
        )
        self._path: Optional[str] = None

    @property
    def path(self) -> str:  # type: ignore[override]
        """The data path the executors' clients take; asked on first use (after the epochs: it is
        not part of the hand-off), as the dataset's clients negotiate it on every epoch."""
        if self._path is None:
            paths = set()
            for location in sorted({s.location for s in self._dataset.shards}):
                with SluiceFlightClient(location, None, secret=self._secret, timeout=CALL_TIMEOUT_S,
                                        data_plane_options=self._options) as c:
                    paths.add(c.decision.data_path)
            self._path = "+".join(sorted(paths))
        return self._path

    def epoch(self, epoch: int) -> Iterator[Batch]:
        self._dataset.set_epoch(epoch)
        return iter(self._dataset)

    def close(self) -> None:
        self._dataset.close()


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
    """pyarrow.flight alone: the catalog's endpoints, each read with the token it came with. The
    catalog is asked again every epoch, so the executors' tokens (minutes) stay fresh."""

    name = "flight-grpc"
    path = "grpc"

    def __init__(self, run_dir: pathlib.Path, seed: int, prefetch: int) -> None:
        from pyarrow import flight

        t = Published(run_dir)
        if t.token is None:
            raise ValueError(f"{run_dir}/driver.properties holds no catalog token")
        self._catalog, self._table, self._token = t.catalog, t.table, t.token
        self._shards = self._list()
        self._clients = {s.location: flight.FlightClient(s.location) for s in self._shards}
        super().__init__(len(self._shards), seed, prefetch)

    def _list(self):
        return table_shards(self._catalog, self._table, token=self._token, timeout=CALL_TIMEOUT_S)

    def epoch(self, epoch: int) -> Iterator[Batch]:
        if epoch > 0:
            shards = self._list()
            if len(shards) != len(self._shards):
                raise RuntimeError(f"table '{self._table}' had {len(self._shards)} shards, now {len(shards)}")
            self._shards = shards
        return super().epoch(epoch)

    def _read(self, shard: int) -> List[pa.RecordBatch]:
        from pyarrow import flight

        s = self._shards[shard]
        options = call_token.call_options(s.token, CALL_TIMEOUT_S)
        reader = self._clients[s.location].do_get(flight.Ticket(s.ticket), options=options)
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
        # The embedding is a list column here as over Flight (Spark's array<float>): batch_to_tensors
        # makes both (n, 256) tensors. Decoded on this reading thread alone, so the feed reads with
        # ``prefetch`` threads as the Flight feeds do, not with pyarrow's whole pool besides.
        return self._pieces[shard].to_table(use_threads=False).to_batches()


def write_parquet(run_dir: pathlib.Path, directory: pathlib.Path, row_group_rows: Optional[int] = None) -> int:
    """Writes the table the run in ``run_dir`` published into ``directory`` (made here; it must not
    exist) as Parquet, one file a shard in the catalog's order (``part-00000.parquet``..), read by
    ``pyarrow.flight`` with the catalog's tokens as the ``flight-grpc`` feed reads it, written with
    pyarrow's defaults (snappy). Each file is one row group (the parquet feed reads a row group a
    shard, so it reads the table in the units the Flight feeds do), or row groups of
    ``row_group_rows`` rows. Returns the rows written."""
    import pyarrow.parquet as pq
    from pyarrow import flight

    t = Published(run_dir)
    if t.token is None:
        raise ValueError(f"{run_dir}/driver.properties holds no catalog token")
    directory.mkdir(parents=True)
    rows = 0
    for i, s in enumerate(table_shards(t.catalog, t.table, token=t.token, timeout=CALL_TIMEOUT_S)):
        with flight.FlightClient(s.location) as client:
            reader = client.do_get(flight.Ticket(s.ticket), options=call_token.call_options(s.token, CALL_TIMEOUT_S))
            table = reader.read_all()
        pq.write_table(table, directory / f"part-{i:05d}.parquet",
                       row_group_size=row_group_rows or max(1, table.num_rows))
        rows += table.num_rows
    return rows


def open_feed(name: str, run_dir: pathlib.Path, seed: int = 1, prefetch: int = 4,
              parquet: Optional[pathlib.Path] = None, verify_reads: bool = True, device: Optional[str] = None) -> Feed:
    """The feed ``name`` of the run in ``run_dir`` (``parquet``: the files the driver names in its
    ``driver.properties``, or ``parquet`` when given; ``verify_reads``: sluice's CRC32C check;
    ``device``: where the trainer computes, which the sluice feed delivers to itself)."""
    if name == "sluice":
        return SluiceFeed(run_dir, seed, prefetch, verify_reads, device)
    if name == "flight-grpc":
        return FlightGrpcFeed(run_dir, seed, prefetch)
    if name == "parquet":
        if parquet is None:
            parquet = pathlib.Path(properties.load(run_dir / "driver.properties")["parquetDir"])
        return ParquetFeed(parquet, seed, prefetch)
    raise ValueError(f"a feed is one of {', '.join(FEEDS)}, got '{name}'")
