"""The driver of perf/bin/handoff-bench: how long a trainer waits for a DataFrame Spark has computed.

One DataFrame (the shape of the pipeline's feature table: ``id`` int64, ``label`` float64, 21 float64
features ``f00``..``f20`` and a 256-float32 ``embedding`` array), cached and materialized before the
rounds, is handed to a reader in this process three ways, in alternated rounds (A B C C B A):

* ``publish``: ``SluiceTables.publish`` (the JVM API through py4j), then the catalog's FlightInfo
  and the shards read with ``sluice.flight`` over the READ data plane (the tables' secret);
* ``parquet``: ``df.write.parquet`` into a fresh folder, then ``pyarrow.dataset`` over it;
* ``toarrow``: ``df.toArrow()`` on the driver (every batch through the driver; the first batch is
  in hand only when it returns).

Hand-off ("first_batch") is from the call that starts the hand-off to the first record batch in
hand; "whole_table" from the same start to the last row read. Executor CPU: the tasks' CPU time of
the way's jobs from Spark's status REST API (``executorCpuTime`` of their stages), and the executor
JVMs' own CPU (every thread, from /proc) over the same calls. Prints medians and spreads and writes
the results file in the shared shape (perf/README.md).
"""

from __future__ import annotations

import argparse
import contextlib
import decimal
import json
import os
import pathlib
import shutil
import signal
import statistics
import sys
import tempfile
import time
import urllib.request

import pyarrow.dataset as ds
import pyarrow.flight as flight

from sluice.flight import SluiceFlightClient, Shard

ROOT = pathlib.Path(__file__).resolve().parents[2]
TABLE = "handoff_features"
WAYS = ("publish", "parquet", "toarrow")
BATCH_ROWS = 8192  # SluiceTables' default batchRows; parquet is read in batches of the same size
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class Deadline(TimeoutError):
    pass


@contextlib.contextmanager
def deadline(seconds: float, what: str):
    """Raises Deadline in this (the main) thread when the block runs past ``seconds``; py4j's and
    gRPC's blocking calls are interrupted by the signal."""

    def expired(signum, frame):
        raise Deadline(f"{what}: no result within its deadline of {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def start_spark(jar: str, executors: int, executor_mb: int, partitions: int):
    from pyspark.sql import SparkSession

    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"  # the UI (and every other Spark server) on loopback only
    return (SparkSession.builder.master(f"local-cluster[{executors},1,{executor_mb}]").appName("handoff-bench")
            .config("spark.driver.extraClassPath", jar).config("spark.executor.extraClassPath", jar)
            .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.driver.memory", "2g")
            .config("spark.ui.enabled", "true").config("spark.ui.port", "0")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", str(partitions))
            .config("spark.sluice.tables.transport.bindHost", "127.0.0.1")
            .getOrCreate())


def feature_table(spark, rows: int, partitions: int):
    """The feature table: random features (rand(seed)), an embedding derived from the id (cheap,
    deterministic), cached and counted so that every hand-off starts from computed data."""
    features = [f"rand({k + 2}) as f{k:02d}" for k in range(21)]
    embedding = ("transform(sequence(0, 255), i -> cast(((id * 2654435761 + i * 40503) % 1000003) / 1000003.0 as float))"
                 " as embedding")
    df = spark.range(0, rows, 1, partitions).selectExpr("id", "cast(rand(1) < 0.5 as double) as label", *features,
                                                         embedding)
    df.cache()
    if df.count() != rows:
        raise SystemExit("the cached DataFrame does not have the rows it was made with")
    return df


class StatusApi:
    """Spark's status REST API on the driver's UI: the executors' task CPU time of a job group."""

    def __init__(self, spark) -> None:
        sc = spark.sparkContext
        if not sc.uiWebUrl:
            raise SystemExit("the Spark UI did not start; its REST API is where executor CPU time comes from")
        self.base = f"{sc.uiWebUrl.rstrip('/')}/api/v1/applications/{sc.applicationId}"

    def _get(self, path: str):
        with urllib.request.urlopen(self.base + path, timeout=10) as r:
            return json.load(r)

    def task_cpu_seconds(self, group: str, limit_s: float = 60.0) -> float:
        """executorCpuTime of every stage of the group's jobs, once the status store has seen them
        end (its listener runs behind the jobs)."""
        end = time.monotonic() + limit_s
        while True:
            jobs = [j for j in self._get("/jobs") if j.get("jobGroup") == group]
            if jobs and all(j["status"] != "RUNNING" for j in jobs):
                break
            if time.monotonic() > end:
                raise Deadline(f"the status API did not show the jobs of {group} ended within {limit_s:.0f} s")
            time.sleep(0.2)
        if any(j["status"] != "SUCCEEDED" for j in jobs):
            raise SystemExit(f"{group}: a job did not succeed: {[(j['jobId'], j['status']) for j in jobs]}")
        stage_ids = {s for j in jobs for s in j["stageIds"]}
        stages = self._get("/stages")
        return sum(s["executorCpuTime"] for s in stages if s["stageId"] in stage_ids) / 1e9


class ExecutorProcesses:
    """The executor JVMs of this application (local-cluster starts them as processes): their CPU
    time, every thread, GC and JIT included."""

    def __init__(self, app_id: str, expected: int) -> None:
        self.pids = []
        for d in pathlib.Path("/proc").iterdir():
            if not d.name.isdigit():
                continue
            try:
                argv = (d / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if any(a.endswith(b"CoarseGrainedExecutorBackend") for a in argv) and app_id.encode() in argv:
                self.pids.append(int(d.name))
        if len(self.pids) != expected:
            raise SystemExit(f"found {len(self.pids)} executor processes of {app_id} in /proc, expected {expected}")

    def cpu_seconds(self) -> float:
        total = 0
        for pid in self.pids:
            fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
        return total / CLOCK_TICKS


class Handoffs:
    """The three ways, each returning (first batch s, whole table s, rows read, facts) for one
    sample; every call that can block runs under a deadline."""

    def __init__(self, spark, df, rows: int, limit_s: float, parquet_root: pathlib.Path) -> None:
        self.spark, self.df, self.rows, self.limit_s = spark, df, rows, limit_s
        self.sc = spark.sparkContext
        self.tables = spark._jvm.io.sluice.spark.tables.SluiceTables
        jspark = spark._jsparkSession
        with deadline(limit_s, "the tables' catalog"):
            self.secret = self.tables.secret(jspark)
            self.catalog_token = self.tables.catalogToken(jspark, spark._jvm.java.time.Duration.ofHours(2))
        self.parquet_root = parquet_root
        self.status = StatusApi(spark)
        self.executors = ExecutorProcesses(self.sc.applicationId, int(self.sc.master.split("[")[1].split(",")[0]))
        self.facts = {}

    def measure(self, way: str, group: str):
        cpu0 = self.executors.cpu_seconds()
        self.sc.setJobGroup(group, f"handoff-bench {way}")
        try:
            first, whole, rows, write_s = getattr(self, way)(group)
        finally:
            self.sc.setJobGroup("handoff-bench-other", "handoff-bench set-up and clean-up")
        cpu1 = self.executors.cpu_seconds()
        if rows != self.rows:
            raise SystemExit(f"{way}: read {rows} rows, the DataFrame has {self.rows}")
        task_cpu = self.status.task_cpu_seconds(group, self.limit_s)
        return {"first_batch": first, "whole_table": whole, "write": write_s, "task_cpu": task_cpu,
                "process_cpu": cpu1 - cpu0}

    def publish(self, group: str):
        jspark = self.spark._jsparkSession
        with deadline(self.limit_s, "publish and read"):
            t0 = time.perf_counter()
            table = self.tables.publish(self.df._jdf, TABLE)
            t_written = time.perf_counter()
            options = flight.FlightCallOptions(headers=[(b"authorization", b"Bearer " + self.catalog_token.encode())],
                                               timeout=self.limit_s)
            with flight.FlightClient(table.uri()) as catalog:
                info = catalog.get_flight_info(flight.FlightDescriptor.for_path(TABLE), options)
            clients = {}
            try:
                rows, first = 0, None
                for k, e in enumerate(info.endpoints):
                    location = e.locations[0].uri.decode()
                    if location not in clients:
                        clients[location] = SluiceFlightClient(location, e.app_metadata.decode(), secret=self.secret,
                                                               timeout=self.limit_s)
                    with clients[location].open(Shard(f"{TABLE}#{k}", location, e.ticket.ticket)) as reader:
                        for batch in reader:
                            if first is None:
                                first = time.perf_counter() - t0
                            rows += batch.num_rows
                            del batch
                whole = time.perf_counter() - t0
                paths = sorted({c.decision.data_path for c in clients.values()})
            finally:
                for c in clients.values():
                    c.close()
        self.facts.update(publish_bytes=table.bytes(), publish_shards=len(info.endpoints),
                          publish_executors=len(clients), publish_data_path="+".join(paths))
        with deadline(self.limit_s, "unpublish"):
            if not self.tables.unpublish(jspark, TABLE):
                raise SystemExit(f"unpublish did not find table {TABLE}")
        return first, whole, rows, t_written - t0

    def parquet(self, group: str):
        folder = self.parquet_root / group
        try:
            with deadline(self.limit_s, "parquet write and read"):
                t0 = time.perf_counter()
                self.df.write.mode("overwrite").parquet(str(folder))
                t_written = time.perf_counter()
                rows, first = 0, None
                for batch in ds.dataset(str(folder), format="parquet").to_batches(batch_size=BATCH_ROWS):
                    if first is None:
                        first = time.perf_counter() - t0
                    rows += batch.num_rows
                    del batch
                whole = time.perf_counter() - t0
            self.facts["parquet_bytes"] = sum(f.stat().st_size for f in folder.glob("*.parquet"))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return first, whole, rows, t_written - t0

    def toarrow(self, group: str):
        with deadline(self.limit_s, "toArrow"):
            t0 = time.perf_counter()
            table = self.df.toArrow()
            whole = time.perf_counter() - t0
        self.facts["toarrow_bytes"] = table.nbytes
        rows = table.num_rows
        del table
        return whole, whole, rows, whole


def plain(v: float) -> str:
    """Six significant digits in plain notation, as io.sluice.perf.bench.ResultsFile writes numbers."""
    d = decimal.Decimal(f"{v:.6g}")
    s = format(d, "f")
    return s.rstrip("0").rstrip(".") if "." in s else s


def write_results(out: pathlib.Path, records) -> None:
    names = [r[0] for r in records]
    if len(set(names)) != len(names):
        raise AssertionError("duplicate measurement names")
    lines = [f'  {{"name": {json.dumps(n)}, "unit": {json.dumps(u)}, "value": {plain(v)}, '
             f'"baseline_name": {json.dumps(bn)}, "baseline_value": {plain(bv)}}}' for n, u, v, bn, bv in records]
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + f".{os.getpid()}.tmp")
    tmp.write_text("[\n" + ",\n".join(lines) + "\n]\n")
    tmp.replace(out)


def main() -> int:
    ap = argparse.ArgumentParser(prog="handoff-bench")
    ap.add_argument("--quick", action="store_true", help="smoke run: a small table, one round; figures mean nothing")
    ap.add_argument("--rows", type=int, default=200_000, help="rows of the DataFrame (default 200000)")
    ap.add_argument("--rounds", type=int, default=3, help="measured rounds, each A B C C B A (default 3)")
    ap.add_argument("--partitions", type=int, default=8, help="partitions of the DataFrame (default 8)")
    ap.add_argument("--executor-mb", type=int, default=2048, help="memory of each of the 2 executors (default 2048)")
    ap.add_argument("--deadline-s", type=float, default=300.0, help="deadline of each call that can block (default 300)")
    ap.add_argument("--out", default=None, help="results file (default perf/results/handoff.json, "
                                                "perf/target/handoff-quick.json with --quick)")
    ap.add_argument("--jar", required=True, help="the sluice-spark-tables jar of PySpark's Spark line")
    a = ap.parse_args()
    if a.quick:
        a.rows, a.rounds, a.partitions, a.executor_mb = 20_000, 1, 4, 1024
    if a.rows < 1 or a.rounds < 1 or a.partitions < 1:
        ap.error("--rows, --rounds and --partitions must be at least 1")
    out = pathlib.Path(a.out or (ROOT / ("perf/target/handoff-quick.json" if a.quick else "perf/results/handoff.json")))
    executors = 2

    t_start = time.monotonic()
    parquet_root = pathlib.Path(tempfile.mkdtemp(prefix="handoff-bench-"))
    with deadline(a.deadline_s, "starting Spark"):
        spark = start_spark(a.jar, executors, a.executor_mb, a.partitions)
    try:
        with deadline(a.deadline_s, "computing and caching the DataFrame"):
            df = feature_table(spark, a.rows, a.partitions)
        ways = Handoffs(spark, df, a.rows, a.deadline_s, parquet_root)
        print(f"spark: local-cluster[{executors},1,{a.executor_mb}] on {os.cpu_count()} cores, up and cached in "
              f"{time.monotonic() - t_start:.1f} s; table: {a.rows} rows in {a.partitions} partitions", flush=True)
        samples = {w: [] for w in WAYS}
        order = list(WAYS) + list(reversed(WAYS))
        warmup = 0 if a.quick else 1
        for r in range(warmup + a.rounds):
            label = "warm-up" if r < warmup else f"round {r - warmup + 1}"
            for k, way in enumerate(order if r >= warmup else WAYS):
                s = ways.measure(way, f"handoff-{way}-r{r}-{k}")
                print(f"{label:>8} {way:<8} first batch {s['first_batch']:7.3f} s  whole table {s['whole_table']:7.3f} s"
                      f"  write/publish {s['write']:7.3f} s  executor CPU: tasks {s['task_cpu']:6.2f} s,"
                      f" processes {s['process_cpu']:6.2f} s  (load {os.getloadavg()[0]:.1f})", flush=True)
                if r >= warmup:
                    samples[way].append(s)
    finally:
        with contextlib.suppress(Exception), deadline(120, "stopping Spark"):
            spark.stop()
        shutil.rmtree(parquet_root, ignore_errors=True)

    def med(way, key):
        return statistics.median(s[key] for s in samples[way])

    def lo(way, key):
        return min(s[key] for s in samples[way])

    def hi(way, key):
        return max(s[key] for s in samples[way])

    f = ways.facts
    n = len(samples["publish"])
    print(f"\ntable: {a.rows} rows; Arrow bodies {f['publish_bytes'] / 1e6:.1f} MB in {f['publish_shards']} shards on "
          f"{f['publish_executors']} executors (read over {f['publish_data_path']}), Parquet files "
          f"{f['parquet_bytes'] / 1e6:.1f} MB, toArrow table {f['toarrow_bytes'] / 1e6:.1f} MB; "
          f"{os.cpu_count()} cores, {n} samples a way ({a.rounds} round(s) of A B C C B A), medians [min, max]")
    print(f"{'way':<9} {'first batch s':>22} {'whole table s':>22} {'write s':>8} {'task CPU s':>11} {'process CPU s':>14}")
    for w in WAYS:
        print(f"{w:<9} {med(w, 'first_batch'):7.3f} [{lo(w, 'first_batch'):6.3f}, {hi(w, 'first_batch'):6.3f}]"
              f" {med(w, 'whole_table'):7.3f} [{lo(w, 'whole_table'):6.3f}, {hi(w, 'whole_table'):6.3f}]"
              f" {med(w, 'write'):8.3f} {med(w, 'task_cpu'):11.2f} {med(w, 'process_cpu'):14.2f}")
    ratios = [
        ("hand-off publish / parquet", med("publish", "first_batch") / med("parquet", "first_batch")),
        ("hand-off publish / toArrow", med("publish", "first_batch") / med("toarrow", "first_batch")),
        ("whole table publish / parquet", med("publish", "whole_table") / med("parquet", "whole_table")),
        ("whole table publish / toArrow", med("publish", "whole_table") / med("toarrow", "whole_table")),
        ("executor task CPU publish / parquet", med("publish", "task_cpu") / med("parquet", "task_cpu")),
        ("executor process CPU publish / parquet", med("publish", "process_cpu") / med("parquet", "process_cpu")),
    ]
    for what, ratio in ratios:
        print(f"{what:<40} {ratio:5.2f}x")

    records = []
    for figure in ("first_batch", "whole_table"):
        for w, base in (("publish", "parquet"), ("toarrow", "parquet")):
            records.append((f"handoff.{w}.{figure}", "s", med(w, figure), f"handoff.{base}.{figure}", med(base, figure)))
        records.append((f"handoff.publish.{figure}.against_toarrow", "s", med("publish", figure),
                        f"handoff.toarrow.{figure}", med("toarrow", figure)))
        for w in ("publish", "toarrow"):
            records.append((f"handoff.{w}.{figure}_min", "s", lo(w, figure), f"handoff.parquet.{figure}_min",
                            lo("parquet", figure)))
            records.append((f"handoff.{w}.{figure}_max", "s", hi(w, figure), f"handoff.parquet.{figure}_max",
                            hi("parquet", figure)))
    records += [
        ("handoff.publish.write", "s", med("publish", "write"), "handoff.parquet.write", med("parquet", "write")),
        ("handoff.publish.executor_task_cpu", "s", med("publish", "task_cpu"), "handoff.parquet.executor_task_cpu",
         med("parquet", "task_cpu")),
        ("handoff.publish.executor_process_cpu", "s", med("publish", "process_cpu"),
         "handoff.parquet.executor_process_cpu", med("parquet", "process_cpu")),
        ("handoff.toarrow.executor_task_cpu", "s", med("toarrow", "task_cpu"), "handoff.parquet.executor_task_cpu",
         med("parquet", "task_cpu")),
        ("handoff.publish.table_bytes", "MB", f["publish_bytes"] / 1e6, "handoff.parquet.files_bytes",
         f["parquet_bytes"] / 1e6),
        ("handoff.toarrow.table_bytes", "MB", f["toarrow_bytes"] / 1e6, "handoff.parquet.files_bytes",
         f["parquet_bytes"] / 1e6),
        ("handoff.table.rows", "rows", a.rows, "handoff.table.rows_per_partition", a.rows / a.partitions),
        ("handoff.machine.cores", "cores", os.cpu_count(), "handoff.spark.executor_cores", executors),
    ]
    write_results(out, records)
    print(f"wrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Deadline as e:
        print(f"handoff-bench: {e}", file=sys.stderr)
        sys.exit(1)
