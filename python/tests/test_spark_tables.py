"""sluice.spark against a real Spark local-cluster (pyspark from PyPI, two executor JVMs) with the
sluice-spark-tables jar: publish, read by URI and name (pyarrow.flight, the data plane over shm
and tcp, a DataLoader), unpublish, the memory budget, refused tokens, and an executor killed
under a reader (last: the session has one executor left after it).

The jar: $SLUICE_TABLES_JAR, else the newest spark-tables/target/sluice-spark-tables-4.1_2.13-*.jar
of this checkout. Without it the tests skip, unless $SLUICE_REQUIRE_SPARK_TABLES is set
(bin/sluice-test sets it), when they fail.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import pathlib
import pickle
import subprocess
import sys
import threading
import time

import pyarrow as pa
import pytest
from pyarrow import flight

from conftest import CALL_SECONDS
from eventually import DEADLINE, wait_until
import sluice.spark
from sluice.errors import LostShardsError, ShardReadException, TableError, TableMemoryError
from sluice.flight import DataPlaneOptions, call_token, table_shards

ROOT = pathlib.Path(__file__).resolve().parents[2]
REQUIRED = bool(os.environ.get("SLUICE_REQUIRE_SPARK_TABLES"))
#: The executors' budget for published tables in this session: the over-budget case needs a small one.
BUDGET = "32m"
#: How long a local-cluster may take to start on a loaded two-core machine (seconds).
SPARK_START_SECONDS = 180.0


def _jar() -> pathlib.Path:
    given = os.environ.get("SLUICE_TABLES_JAR")
    if given:
        jar = pathlib.Path(given)
        if not jar.is_file():
            pytest.fail(f"SLUICE_TABLES_JAR={given} is not a file")
        return jar
    built = sorted((ROOT / "spark-tables" / "target").glob("sluice-spark-tables-4.1_2.13-*.jar"),
                   key=lambda p: p.stat().st_mtime)
    if not built:
        why = ("the sluice-spark-tables jar is not built (no spark-tables/target/sluice-spark-tables-4.1_2.13-*.jar,"
               " and SLUICE_TABLES_JAR is unset): run bin/sluice-test, or mvn -pl spark-tables -am package -DskipTests")
        if REQUIRED:
            pytest.fail(why + " (SLUICE_REQUIRE_SPARK_TABLES is set)")
        pytest.skip(why)
    return built[-1]


@pytest.fixture(scope="session")
def spark():
    """One local-cluster of two executors for the whole session."""
    jar = _jar()
    if REQUIRED:
        import pyspark  # noqa: F401 - fail, not skip, where CI needs it
    else:
        pytest.importorskip("pyspark", reason="pyspark is not installed (pip install -e 'python[test]')")
    from pyspark.sql import SparkSession

    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    started = time.monotonic()
    session = (
        SparkSession.builder.master("local-cluster[2,1,1024]")
        .appName("sluice-spark-tables-python-tests")
        .config("spark.driver.extraClassPath", str(jar))
        .config("spark.executor.extraClassPath", str(jar))
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.sluice.tables.transport.bindHost", "127.0.0.1")
        .config("spark.sluice.tables.memory", BUDGET)
        .config("spark.sql.shuffle.partitions", "2")
        # Short-lived test JVMs: the client compiler alone, as the Java tests run them.
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1")
        .config("spark.executor.defaultJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
        .getOrCreate()
    )
    try:
        # Both executors registered: publishing spreads over them, and one can be killed.
        wait_until("two executors to register",
                   lambda: session.sparkContext._jsc.sc().getExecutorIds().size(), lambda n: n >= 2,
                   SPARK_START_SECONDS - (time.monotonic() - started))
        yield session
    finally:
        session.stop()


def test_the_tables_secret_is_derived_as_the_jvm_derives_it():
    # The vector spark-tables' TablesSecretTest checks SluiceTables.tablesSecret against.
    assert sluice.spark.tables_secret("a shared spark.authenticate.secret", "app-20261128103731-0000") == \
        "cabf9261903104a6e4a53d79b93f785a37a5a040d10eb049584492a919c4f0f6"


def test_importing_sluice_spark_does_not_import_pyspark():
    code = "import sys, sluice, sluice.spark, sluice.flight; assert 'pyspark' not in sys.modules, 'pyspark imported'"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=CALL_SECONDS)


def features(spark, rows=10_000, partitions=4):
    """ids, a double and a 3-float array (Spark arrays arrive as Arrow variable-size lists)."""
    return spark.range(0, rows, 1, partitions).selectExpr(
        "id", "cast(id as double) * 0.25 as x",
        "array(cast(id as float), cast(id % 1000 + 0.5 as float), cast(-id as float)) as v")


def arrow_of(df):
    return df.toArrow().sort_by("id")


@pytest.fixture
def published(spark):
    """``features`` published as 'features' in batches of 1000 rows, unpublished after the test."""
    df = features(spark)
    table = sluice.spark.publish(df, "features", batch_rows=1000)
    try:
        yield df, table
    finally:
        sluice.spark.unpublish(spark, "features")


def rows_equal(got: pa.Table, df) -> None:
    want = arrow_of(df)
    got = got.sort_by("id")
    assert got.num_rows == want.num_rows
    assert got.to_pydict() == want.to_pydict()


def test_publish_then_read_by_name_with_pyarrow_flight(spark, published):
    df, t = published
    assert t.name == "features" and t.rows == 10_000 and t.bytes > 0 and not t.lost and t.expires is None
    # 4 partitions of 2500 rows, in batches of at most 1000
    assert len(t.shards) == 12 and sorted(s.rows for s in t.shards) == [500] * 4 + [1000] * 8
    assert [(s.partition, s.batch) for s in t.shards] == sorted((s.partition, s.batch) for s in t.shards)
    assert set(t.endpoints) == {s.location for s in t.shards}
    # The secret is the handle's to read with, never to show or ship.
    assert t.secret and t.secret not in repr(t) and t.secret not in str(t) and "secret=<hidden>" in repr(t)
    assert pickle.loads(pickle.dumps(t)).secret is None
    assert t.secret not in str(dataclasses.asdict(t))

    token = sluice.spark.catalog_token(spark, validity=60)
    catalog = call_token.call_options(token, CALL_SECONDS)
    with flight.FlightClient(t.uri) as client:
        info = client.get_flight_info(flight.FlightDescriptor.for_path("features"), catalog)
        assert info.total_records == 10_000 and len(info.endpoints) == 12
        batches = []
        for endpoint in info.endpoints:
            # Each endpoint carries the token for its executor alone.
            executor = call_token.call_options(endpoint.app_metadata.decode("utf-8"), CALL_SECONDS)
            with flight.FlightClient(endpoint.locations[0]) as at:
                batches.extend(at.do_get(endpoint.ticket, executor).read_all().to_batches())
    got = pa.Table.from_batches(batches)
    assert pa.types.is_list(got.schema.field("v").type)
    rows_equal(got, df)

    shards = table_shards(t.uri, "features", token=token, timeout=CALL_SECONDS)
    assert [s.location for s in shards] == [s.location for s in t.shards]
    assert [s.name for s in shards] == sorted(s.name for s in shards) and len({s.name for s in shards}) == 12
    assert all(s.token for s in shards)
    assert [s.name for s in table_shards(t.uri, "features", secret=t.secret, timeout=CALL_SECONDS)] == \
        [s.name for s in shards]


@pytest.mark.parametrize("shm,path", [(True, "shm"), (False, "tcp")])
def test_data_plane_reads_the_table(spark, published, shm, path):
    df, t = published
    assert t.data_plane in ("shm", "tcp", "auto"), t.data_plane
    options = DataPlaneOptions(shm=shm)
    with t.reader(timeout=CALL_SECONDS, data_plane_options=options) as reader:
        got = reader.read_all()
        assert set(reader.data_paths) == {path}
    rows_equal(got, df)
    assert t.to_table(timeout=CALL_SECONDS).num_rows == 10_000


def test_dataset_over_the_data_plane_and_with_catalog_tokens_only(spark, published):
    torch = pytest.importorskip("torch")
    df, t = published
    ids = []
    data = t.dataset(timeout=CALL_SECONDS, pin_memory=False, seed=3)
    assert [s.rows for s in data.shards] == [s.rows for s in t.shards]
    for item in data:
        assert item["v"].shape == (len(item["id"]), 3) and item["v"].dtype == torch.float32
        assert torch.equal(item["v"][:, 0], item["id"].float())
        assert torch.equal(item["x"], item["id"].double() * 0.25)
        ids.extend(item["id"].tolist())
    assert sorted(ids) == list(range(10_000))

    # A trainer that holds only a catalog token reads each executor with the catalog's tokens for it.
    from sluice.torch import SluiceDataset

    token = sluice.spark.catalog_token(spark, validity=60)
    by_token = SluiceDataset.from_table(t.uri, "features", token=token, timeout=CALL_SECONDS, pin_memory=False)
    assert sorted(i for item in by_token for i in item["id"].tolist()) == list(range(10_000))


def test_three_lines_from_a_dataframe_to_a_data_loader(spark):
    pytest.importorskip("torch")
    from torch.utils.data import DataLoader

    df = features(spark, rows=5000, partitions=2)
    # The README's three lines.
    t = sluice.spark.publish(df, "readme")
    try:
        loader = DataLoader(t.dataset(columns=["x", "v"], timeout=CALL_SECONDS), batch_size=None)
        rows = sum(len(batch["x"]) for batch in loader)
        assert rows == 5000
    finally:
        assert sluice.spark.unpublish(spark, "readme")


def test_a_trainer_reads_by_uri_and_name_with_the_secret_from_its_environment(spark, published, monkeypatch):
    pytest.importorskip("torch")
    from sluice.torch import SluiceDataset

    df, t = published
    monkeypatch.setenv("SLUICE_TABLES_SECRET", sluice.spark.secret(spark))
    data = SluiceDataset.from_table(t.uri, "features", secret=os.environ["SLUICE_TABLES_SECRET"],
                                    timeout=CALL_SECONDS, pin_memory=False, rank=1, world=2)
    assert 0 < sum(len(item["id"]) for item in data) < 10_000


def test_unpublish_frees_every_executors_memory(spark):
    t = sluice.spark.publish(features(spark, rows=20_000), "freed", batch_rows=2000)
    assert [x.name for x in sluice.spark.tables(spark)] == ["freed"]
    held = sluice.spark.memory(spark)
    assert sum(m.bytes for m in held) == t.bytes and {m.location for m in held} >= set(t.endpoints)
    assert all(m.budget == 32 << 20 for m in held)

    assert sluice.spark.unpublish(spark, "freed")
    wait_until("every executor to free the table",
               lambda: [(m.executor_id, m.tables, m.shards, m.bytes) for m in sluice.spark.memory(spark)],
               lambda ms: all(m[1:] == (0, 0, 0) for m in ms))
    assert not sluice.spark.unpublish(spark, "freed")
    assert sluice.spark.table(spark, "freed") is None and sluice.spark.tables(spark) == []
    with pytest.raises(LookupError, match="no table named 'freed'"):
        table_shards(t.uri, "freed", secret=t.secret, timeout=CALL_SECONDS)


def test_a_table_lives_until_its_time_to_live(spark):
    t = sluice.spark.publish(features(spark, rows=100, partitions=1), "brief", ttl=2)
    assert t.expires is not None and t.expires > datetime.datetime.now(datetime.timezone.utc)
    wait_until("the table's time-to-live to unpublish it", lambda: sluice.spark.table(spark, "brief"),
               lambda found: found is None)


def test_a_table_over_the_budget_fails_naming_it(spark):
    big = spark.range(0, 4_000_000, 1, 1).selectExpr("id", "cast(id as double) d")  # 64 MB in one partition
    with pytest.raises(TableMemoryError, match="spark.sluice.tables.memory") as raised:
        sluice.spark.publish(big, "too-big")
    assert "too-big" in str(raised.value) and isinstance(raised.value, MemoryError)
    assert sluice.spark.table(spark, "too-big") is None
    wait_until("the failed table's memory to be freed", lambda: [m.bytes for m in sluice.spark.memory(spark)],
               lambda b: sum(b) == 0)


def test_invalid_publishes_raise_python_errors_with_the_java_message(spark, published):
    df, _ = published
    with pytest.raises(TableError, match="published already"):
        sluice.spark.publish(df, "features")
    with pytest.raises(ValueError, match="a table name is 1 to 128"):
        sluice.spark.publish(df, "no spaces")
    with pytest.raises(ValueError, match="ttl must be a time"):
        sluice.spark.publish(df, "later", ttl="soon")
    with pytest.raises(ValueError, match="mode must be error or overwrite"):
        sluice.spark.publish(df, "later", mode="append")
    again = sluice.spark.publish(df.limit(10), "features", mode="overwrite")
    assert again.rows == 10


def test_wrong_missing_and_expired_tokens_are_refused(spark, published):
    _, t = published
    path = flight.FlightDescriptor.for_path("features")
    with flight.FlightClient(t.uri) as client:
        with pytest.raises(flight.FlightUnauthenticatedError):
            client.get_flight_info(path, call_token.call_options(None, CALL_SECONDS))
        expired = call_token.mint(t.secret, t.uri, expires=int(time.time()) - 60)
        with pytest.raises(flight.FlightUnauthenticatedError, match="refused"):
            client.get_flight_info(path, call_token.call_options(expired, CALL_SECONDS))
        info = client.get_flight_info(path, call_token.call_options(call_token.mint(t.secret, t.uri), CALL_SECONDS))
    with pytest.raises(flight.FlightUnauthenticatedError):
        table_shards(t.uri, "features", secret="another secret, long enough", timeout=CALL_SECONDS)
    # The catalog's token opens the catalog only; an executor's token opens that executor only.
    endpoint = info.endpoints[0]
    with flight.FlightClient(endpoint.locations[0]) as executor:
        with pytest.raises(flight.FlightUnauthenticatedError):
            executor.do_get(endpoint.ticket, call_token.call_options(
                sluice.spark.catalog_token(spark, 60), CALL_SECONDS)).read_all()
        with pytest.raises(flight.FlightUnauthenticatedError):
            executor.do_get(endpoint.ticket, call_token.call_options(None, CALL_SECONDS)).read_all()
    others = [e for e in info.endpoints if e.locations[0] != endpoint.locations[0]]
    if others:
        with flight.FlightClient(others[0].locations[0]) as executor:
            with pytest.raises(flight.FlightUnauthenticatedError):
                executor.do_get(others[0].ticket, call_token.call_options(
                    endpoint.app_metadata.decode("utf-8"), CALL_SECONDS)).read_all()


# Last: the session keeps one executor after it.
def test_an_executor_killed_while_a_trainer_reads(spark):
    pytest.importorskip("torch")
    t = sluice.spark.publish(features(spark, rows=100_000, partitions=4), "doomed", batch_rows=500)
    victim = t.shards[0].executor_id
    gone = sorted(s.flight for s in t.shards if s.executor_id == victim)
    data = t.dataset(timeout=CALL_SECONDS, prefetch=1, pin_memory=False)
    items = iter(data)
    next(items)  # the reader is reading

    assert spark.sparkContext._jsc.sc().killExecutor(victim)
    outcome = {}

    def read_on() -> None:
        try:
            for _ in items:
                time.sleep(0.005)
            outcome["ended"] = "without an error"
        except Exception as e:  # noqa: BLE001 - the test inspects what came
            outcome["error"] = e

    reader = threading.Thread(target=read_on, name="killed-executor reader", daemon=True)
    reader.start()
    reader.join(timeout=CALL_SECONDS + DEADLINE)
    assert not reader.is_alive(), "the reader hangs after its executor was killed"
    assert isinstance(outcome.get("error"), ShardReadException), outcome
    assert outcome["error"].shard.location == t.shards[0].location

    lost = wait_until("the catalog to report the lost shards",
                      lambda: sluice.spark.table(spark, "doomed").lost, lambda m: len(m) == len(gone))
    assert sorted(lost) == gone and all(f"executor {victim}" in why for why in lost.values())
    with pytest.raises(LostShardsError, match="table 'doomed' lost") as raised:
        table_shards(t.uri, "doomed", secret=t.secret, timeout=CALL_SECONDS)
    assert f"lost {len(gone)} shards" in str(raised.value) and any(f in str(raised.value) for f in gone)
    with pytest.raises(LostShardsError):
        t.dataset(timeout=CALL_SECONDS)
    # The survivors still answer for their memory; the dead executor is no longer asked.
    wait_until("memory() to list only the surviving executors",
               lambda: [m.executor_id for m in sluice.spark.memory(spark)], lambda ids: victim not in ids and ids)
    assert sluice.spark.unpublish(spark, "doomed")
