"""sluice.torch.SluiceDataset against a real SluiceFlightServer and the Java FlightLoader."""

from __future__ import annotations

import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (bin/sluice-test installs Debian's python3-torch as root)")

import pyarrow as pa  # noqa: E402

from conftest import CALL_SECONDS  # noqa: E402
from sluice import UnsupportedColumnException, order  # noqa: E402
from sluice.torch import SluiceDataset, batch_to_tensors  # noqa: E402


def dataset(served_table, **kwargs):
    return SluiceDataset.from_locations([served_table.location], "t.", served_table.token, timeout=CALL_SECONDS,
                                        **kwargs)


def ids_of(items):
    return [int(i) for item in items for i in item["id"]]


# How long a DataLoader waits for a worker's next batch: a spawned worker imports torch first,
# which takes seconds on a loaded machine. Past it the loader raises instead of waiting forever.
WORKER_BATCH_SECONDS = 120


@pytest.mark.parametrize("seed,epoch,rank,world", [(0, 0, 0, 1), (7, 1, 0, 2), (7, 1, 1, 2), (-3, 4, 2, 3)])
def test_rows_come_in_the_java_loaders_order(served_table, java, seed, epoch, rank, world):
    lines = java("io.sluice.flight.loader.PrintLoaderRows", served_table.location, served_table.secret, "t.",
                 str(seed), str(epoch), str(rank), str(world))
    java_ids = [int(i) for line in lines for i in line.split()[2:]]
    assert {line.split()[1] for line in lines} <= {"tcp", "grpc"}
    ds = dataset(served_table, seed=seed, epoch=epoch, rank=rank, world=world, prefetch=3)
    assert ids_of(ds) == java_ids
    assert ds.cursor == order.Cursor(epoch + 1, 0)


def test_batches_are_tensors_over_the_arrow_buffers(served_table):
    ds = dataset(served_table, seed=1, pin_memory=False)
    item = next(iter(ds))
    assert item["id"].dtype == torch.int64 and item["x"].dtype == torch.float64
    assert item["label"].dtype == torch.int32
    assert item["v"].shape == (len(item["id"]), 3) and item["v"].dtype == torch.float32
    assert torch.equal(item["x"], item["id"].double() * 0.25)
    assert torch.equal(item["v"][:, 1], (item["id"] % 1000).float() + 0.5)


def test_no_copy_is_made():
    ids = pa.array(range(100), pa.int64())
    vs = pa.FixedSizeListArray.from_arrays(pa.array([float(i) for i in range(300)], pa.float32()), 3)
    batch = pa.RecordBatch.from_arrays([ids, vs], ["id", "v"]).slice(10, 50)
    tensors = batch_to_tensors(batch)
    assert tensors["id"].data_ptr() == ids.buffers()[1].address + 10 * 8
    assert tensors["v"].data_ptr() == vs.values.buffers()[1].address + 10 * 3 * 4
    assert tensors["v"][0].tolist() == [30.0, 31.0, 32.0]


def test_lists_of_one_length_are_2d_tensors_without_a_copy():
    # Spark's array columns arrive as variable-size lists: every row the same length is a matrix.
    values = pa.array([float(i) for i in range(300)], pa.float64())
    lists = pa.ListArray.from_arrays(pa.array(range(0, 301, 3), pa.int32()), values)
    big = pa.LargeListArray.from_arrays(pa.array(range(0, 301, 3), pa.int64()), values)
    batch = pa.RecordBatch.from_arrays([lists, big], ["v", "w"]).slice(10, 50)
    tensors = batch_to_tensors(batch)
    for name in ("v", "w"):
        assert tensors[name].shape == (50, 3) and tensors[name].dtype == torch.float64
        assert tensors[name].data_ptr() == values.buffers()[1].address + 10 * 3 * 8
        assert tensors[name][0].tolist() == [30.0, 31.0, 32.0] and tensors[name][-1].tolist() == [177.0, 178.0, 179.0]
    empty = pa.RecordBatch.from_arrays([pa.array([], pa.list_(pa.float32()))], ["v"])
    assert batch_to_tensors(empty)["v"].shape == (0, 0)


def test_lists_of_uneven_length_or_with_nulls_are_named():
    uneven = pa.array([[1.0, 2.0], [3.0], [4.0, 5.0]], pa.list_(pa.float64()))
    with pytest.raises(UnsupportedColumnException, match="column 'u' is a list column with rows of different"):
        batch_to_tensors(pa.RecordBatch.from_arrays([uneven], ["u"]))
    # the same rows sliced to the even ones are fine
    assert batch_to_tensors(pa.RecordBatch.from_arrays([uneven.slice(2, 1)], ["u"]))["u"].tolist() == [[4.0, 5.0]]
    with pytest.raises(UnsupportedColumnException, match="column 'n' has null lists"):
        batch_to_tensors(pa.RecordBatch.from_arrays([pa.array([[1.0], None], pa.list_(pa.float64()))], ["n"]))
    with pytest.raises(UnsupportedColumnException, match="column 'e' has nulls"):
        batch_to_tensors(pa.RecordBatch.from_arrays([pa.array([[1.0], [None]], pa.list_(pa.float64()))], ["e"]))
    with pytest.raises(UnsupportedColumnException, match="column 's' of type string"):
        batch_to_tensors(pa.RecordBatch.from_arrays([pa.array([["a"], ["b"]])], ["s"]))


def test_columns_without_a_tensor_form_are_named():
    batch = pa.RecordBatch.from_arrays([pa.array([1, 2]), pa.array(["a", "b"]), pa.array([1, None])], ["n", "s", "z"])
    with pytest.raises(UnsupportedColumnException, match="column 's' of type string"):
        batch_to_tensors(batch)
    with pytest.raises(UnsupportedColumnException, match="column 'z' has nulls"):
        batch_to_tensors(batch, ["z"])
    assert list(batch_to_tensors(batch, ["n"])) == ["n"]


def test_resume_yields_exactly_the_remaining_batches(served_table):
    whole = list(dataset(served_table, seed=5, epoch=2, max_rows=10))
    for consumed in [0, 1, 2, 5, len(whole) - 1, len(whole)]:
        first = dataset(served_table, seed=5, epoch=2, max_rows=10)
        it = iter(first)
        for _ in range(consumed):
            next(it)
        state = first.state_dict()
        it.close()
        resumed = dataset(served_table, seed=5, epoch=2, max_rows=10)
        resumed.load_state_dict(state)
        assert ids_of(resumed) == ids_of(whole[consumed:]), f"after {consumed} items, state {state}"


def test_resume_opens_no_shard_it_consumed(served_table, monkeypatch):
    import sluice.loader as sl

    opened = []
    real = sl._read_shard
    monkeypatch.setattr(sl, "_read_shard", lambda client, shard, *a: opened.append(shard.name) or real(client, shard, *a))
    first = dataset(served_table, seed=9)
    it = iter(first)
    for _ in range(3):
        next(it)
    state = first.state_dict()
    it.close()
    opened.clear()
    resumed = dataset(served_table, seed=9)
    resumed.load_state_dict(state)
    list(resumed)
    mine = order.for_rank(len(served_table.shards), 9, 0, 0, 1)
    start = state["position"]
    assert opened == [f"t.s{k:02d}" for k in mine[start:]]


def test_a_state_of_another_rank_or_worker_is_refused(served_table):
    state = dataset(served_table, seed=1, rank=0, world=2).state_dict()
    with pytest.raises(ValueError, match="rank, world"):
        dataset(served_table, seed=1, rank=1, world=2).load_state_dict(state)
    ds = dataset(served_table, seed=1)
    ds.load_state_dict(dict(ds.state_dict(), position=1, worker=1, workers=2))
    with pytest.raises(ValueError, match="the state is worker 1's of 2"):
        iter(ds)


def test_dataloader_workers_split_the_ranks_shards(served_table):
    ds = dataset(served_table, seed=11, epoch=1, rank=1, world=2)
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2, multiprocessing_context="spawn",
                                         timeout=WORKER_BATCH_SECONDS)
    got = ids_of(loader)
    mine = order.for_rank(len(served_table.shards), 11, 1, 1, 2)
    per_worker = [[mine[p] for p in order.for_worker(mine, w, 2)] for w in range(2)]
    shards_seen = [i // 1_000_000 for i in got]
    # Every shard of the rank, each whole, once; each worker's shards in the rank's order.
    assert sorted(set(shards_seen)) == sorted(mine)
    assert sorted(got) == sorted(ids_of(dataset(served_table, seed=11, epoch=1, rank=1, world=2)))
    for shards in per_worker:
        assert [k for k in dict.fromkeys(shards_seen) if k in shards] == shards


def test_a_forked_worker_is_refused_rather_than_hang(served_table):
    ds = dataset(served_table, seed=11)
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=1, multiprocessing_context="fork",
                                         timeout=WORKER_BATCH_SECONDS)
    batches = iter(loader)
    try:
        with pytest.raises(RuntimeError, match="multiprocessing_context='spawn'"):
            next(batches)
    finally:
        batches._shutdown_workers()


def test_a_failed_read_names_the_shard(served_table):
    from sluice import ShardReadException
    from sluice.flight import Shard

    bad = Shard("t.gone", served_table.location, b"sluice-table:t.gone")
    with pytest.raises(ShardReadException, match="t.gone"):
        list(SluiceDataset([bad], served_table.token, timeout=CALL_SECONDS))


def test_import_sluice_does_not_import_torch():
    code = "import sys, sluice, sluice.order, sluice.flight; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@pytest.mark.parametrize("shm", [False, True], ids=["tcp", "shm"])
def test_the_dataset_reads_over_the_data_plane(served_table, served_shm_table, shm):
    from sluice.flight import DataPlaneOptions, SluiceFlightClient

    table = served_shm_table if shm else served_table
    with SluiceFlightClient(table.location, table.token, secret=table.secret, timeout=CALL_SECONDS) as client:
        assert client.decision.data_path == ("shm" if shm else "tcp")
    plain = list(dataset(table, seed=3, prefetch=3))
    read = list(dataset(table, seed=3, prefetch=3, secret=table.secret,
                        data_plane_options=DataPlaneOptions(encrypt=not shm)))
    assert ids_of(read) == ids_of(plain)
    assert all(torch.equal(a["v"], b["v"]) for a, b in zip(read, plain))


def test_items_of_a_batch_size_a_collate_fn_or_on_a_device(served_table):
    whole = ids_of(dataset(served_table, seed=8))
    sized = list(dataset(served_table, seed=8, batch_size=5))
    assert ids_of(sized) == whole and all(len(item["id"]) <= 5 for item in sized)
    rows = list(dataset(served_table, seed=8, collate_fn=lambda batch: batch.num_rows))
    assert sum(rows) == len(whole)
    on_cpu = list(dataset(served_table, seed=8, device="cpu", columns=["id"]))
    assert ids_of(on_cpu) == whole and all(item["id"].device.type == "cpu" for item in on_cpu)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is present")
def test_a_cuda_device_without_cuda_is_refused_when_the_dataset_is_made(served_table):
    with pytest.raises(ValueError, match="CUDA"):
        dataset(served_table, device="cuda")
