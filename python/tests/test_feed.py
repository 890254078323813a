"""The feed under load and failure: the loader against real SluiceFlightServers with a small per-client
stream bound, a server killed mid-epoch, a server that stalls, several ranks under torchrun, and the
landing memory's lifetimes and bounds."""

from __future__ import annotations

import gc
import os
import pathlib
import subprocess
import sys
import textwrap
import threading
import time

import pyarrow as pa
import pytest

from conftest import CALL_SECONDS, serve
from eventually import DEADLINE
from sluice import ShardReadException, SluiceException, order
from sluice.flight import DataPlaneOptions, SluiceFlightClient
from sluice.loader import FlightLoader

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"
BOUND = {"sluice.flight.dataPlaneGetsPerClient": "4"}


def ids(batches):
    return [int(i) for b in batches for i in b.column("id").to_pylist()]


@pytest.fixture(scope="module", params=["tcp", "shm"])
def bounded_table(java, request):
    """24 shards on a server that lets one client hold 4 data-plane streams at once."""
    with serve(java, request.param, shards=24, rows=64, settings=BOUND) as table:
        yield table


def test_a_prefetch_deeper_than_the_servers_bound_queues(bounded_table):
    t = bounded_table
    plain = ids(FlightLoader.from_locations([t.location], "t.", t.token, seed=2, timeout=CALL_SECONDS))
    with FlightLoader.from_locations([t.location], "t.", t.token, secret=t.secret, seed=2, prefetch=64,
                                     timeout=CALL_SECONDS) as loader:
        assert loader.client(t.location).max_streams == 4
        for epoch in range(2):  # the second epoch on the connections the first one made
            loader.set_epoch(0)
            assert ids(loader) == plain, f"epoch {epoch}"


def test_streams_past_the_bound_wait_for_a_place(bounded_table):
    t = bounded_table
    with SluiceFlightClient(t.location, t.token, secret=t.secret, timeout=CALL_SECONDS) as client:
        readers = [client.open(f"t.s{k:02d}") for k in range(4)]
        opened = []
        late = threading.Thread(target=lambda: opened.append(client.open("t.s04")), daemon=True)
        late.start()
        late.join(1.0)
        assert not opened, "a fifth stream opened while four were held"
        readers[0].read_all()
        readers[0].close()
        late.join(DEADLINE)
        assert opened and opened[0].read_all()
        assert opened[0].read_all() == [], "a finished stream read again"
        for r in readers[1:]:
            r.read_all()
        for r in readers[1:] + opened:
            r.close()


def test_a_server_killed_mid_epoch_ends_in_a_python_exception(java):
    """The reading process exits with ShardReadException, not a signal, and within its deadlines."""
    script = textwrap.dedent("""
        import sys
        from sluice.loader import FlightLoader
        location, token, secret = sys.argv[1:4]
        loader = FlightLoader.from_locations([location], "t.", token, secret=secret, prefetch=64, timeout=20)
        batches = iter(loader)
        next(batches)
        print("first", flush=True)
        sys.stdin.readline()
        for _ in batches:
            pass
        print("finished", flush=True)
    """)
    with serve(java, "tcp", shards=40, rows=4096, settings=BOUND) as t:
        reader = subprocess.Popen(
            [sys.executable, "-c", script, t.location, t.token, t.secret],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=dict(os.environ, PYTHONPATH=str(SRC)),
        )
        try:
            assert reader.stdout.readline().strip() == "first"
            t.program.process.kill()
            t.program.process.wait(DEADLINE)
            reader.stdin.write("go\n")
            reader.stdin.flush()
            out, err = reader.communicate(timeout=DEADLINE)
        finally:
            if reader.poll() is None:
                reader.kill()
    assert reader.returncode == 1, f"exit {reader.returncode}:\n{err[-3000:]}"
    assert "ShardReadException" in err and "finished" not in out, err[-3000:]


def test_a_stalled_server_fails_the_read_within_its_deadline():
    from pyarrow import flight

    release = threading.Event()

    class Stalling(flight.FlightServerBase):
        def do_get(self, context, ticket):
            schema = pa.schema([("id", pa.int64())])

            def batches():
                yield pa.record_batch([pa.array([1, 2, 3])], schema=schema)
                release.wait(DEADLINE)  # then nothing, for longer than the reader's deadline
            return flight.GeneratorStream(schema, batches())

    server = Stalling("grpc+tcp://127.0.0.1:0")
    try:
        client = SluiceFlightClient(f"grpc+tcp://127.0.0.1:{server.port}", data_plane=False,
                                    data_plane_options=DataPlaneOptions(io_timeout=1.0))
        outcome = []

        def read():
            try:
                with client.get_stream(b"t") as reader:
                    outcome.append(reader.read_all())
            except BaseException as e:  # noqa: BLE001
                outcome.append(e)

        reading = threading.Thread(target=read, daemon=True)
        reading.start()
        reading.join(DEADLINE / 2)
        assert not reading.is_alive(), "the read outlived its deadline"
        assert isinstance(outcome[0], TimeoutError), outcome
        client.close()
    finally:
        release.set()
        server.shutdown()


def test_a_body_over_the_landing_bound_is_refused_and_one_at_a_time_is_read(served_table):
    t = served_table
    body = 16 * 8 + 16 * 8 + 16 * 12 + 16 * 4  # one batch of 16 rows: id, x, v[3], label
    small = DataPlaneOptions(landing_bytes=body // 2)
    with SluiceFlightClient(t.location, t.token, secret=t.secret, timeout=CALL_SECONDS,
                            data_plane_options=small) as client:
        with pytest.raises(SluiceException, match="landing_bytes"):
            client.open("t.s00").read_all()
    one = DataPlaneOptions(landing_bytes=body + body // 2, stream_window=8)  # READ one body at a time
    with SluiceFlightClient(t.location, t.token, secret=t.secret, timeout=CALL_SECONDS,
                            data_plane_options=one) as client:
        with client.open("t.s02") as reader:
            assert reader.data_path == "tcp"
            assert len(ids(reader.read_all())) == 32


def test_a_landing_returns_only_when_nothing_points_into_it():
    from sluice.flight._landing import LandingPool

    pool = LandingPool()
    view = pool.acquire(100)
    view[:3] = b"abc"
    kept = pa.py_buffer(view[:3])  # what Arrow keeps when the metadata declares fewer bytes
    del view
    gc.collect()
    again = pool.acquire(100)
    again[:3] = b"xyz"
    assert kept.to_pybytes() == b"abc", "a held slice was overwritten by the next landing"
    del kept, again
    gc.collect()
    assert pool.outstanding_bytes == 0


def test_the_loader_makes_batches_of_a_size_within_each_shard(served_table):
    t = served_table
    whole = FlightLoader.from_locations([t.location], "t.", t.token, seed=4, timeout=CALL_SECONDS)
    sized = FlightLoader.from_locations([t.location], "t.", t.token, seed=4, batch_size=10, timeout=CALL_SECONDS)
    got = list(sized)
    assert ids(got) == ids(whole)
    assert all(b.num_rows <= 10 for b in got)
    shards = [[i // 1_000_000 for i in b.column("id").to_pylist()] for b in got]
    assert all(len(set(s)) == 1 for s in shards), "a batch spans two shards"
    rows = {k: t.shards[f"t.s{k:02d}"]["rows"] for k in range(len(t.shards))}
    for k, n in rows.items():
        sizes = [b.num_rows for b, s in zip(got, shards) if s[0] == k]
        assert sizes == [10] * (n // 10) + ([n % 10] if n % 10 else []), (k, sizes)


def test_the_loader_imports_no_torch():
    code = "import sys, sluice.loader; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(SRC)))


TORCHRUN = textwrap.dedent("""
    import json, sys
    import torch.distributed as dist
    from sluice.torch import SluiceDataset
    location, token, secret, out = sys.argv[1:5]
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    ds = SluiceDataset.from_locations([location], "t.", token, secret=secret, seed=6, rank=rank, world=world,
                                      prefetch=4, timeout=60)
    mine = [int(i) for item in ds for i in item["id"]]
    ds.close()
    everyone = [None] * world
    dist.all_gather_object(everyone, mine)
    if rank == 0:
        json.dump(everyone, open(out, "w"))
    dist.destroy_process_group()
""")


def test_ranks_under_torchrun_read_disjoint_shards_covering_the_table(served_shm_table, tmp_path):
    pytest.importorskip("torch", reason="torch is not installed")
    t = served_shm_table
    script, out = tmp_path / "rank.py", tmp_path / "ids.json"
    script.write_text(TORCHRUN)
    # --redirects/--tee given single-stream values: torch 1.13's launcher on Python 3.11 cannot
    # parse their defaults (0) and fails before starting any rank.
    done = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "--redirects", "1",
         "--tee", "2", str(script),
         t.location, t.token, t.secret, str(out)],
        capture_output=True, text=True, timeout=DEADLINE * 4, env=dict(os.environ, PYTHONPATH=str(SRC)),
    )
    assert done.returncode == 0, done.stderr[-4000:]
    import json

    per_rank = json.loads(out.read_text())
    whole = ids(FlightLoader.from_locations([t.location], "t.", t.token, seed=6, timeout=CALL_SECONDS))
    assert len(per_rank) == 2 and all(per_rank)
    assert not set(per_rank[0]) & set(per_rank[1])
    assert sorted(per_rank[0] + per_rank[1]) == sorted(whole)
    for rank, got in enumerate(per_rank):
        shards = list(dict.fromkeys(i // 1_000_000 for i in got))
        assert shards == order.for_rank(len(t.shards), 6, 0, rank, 2)
