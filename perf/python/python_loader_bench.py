"""The driver of perf/bin/python-loader-bench: one table, served by two ServeTestTable programs (an
shm and a tcp data plane, the same deterministic shards), and the same rows written once to Parquet
files, read in alternating rounds (A B C .. C B A) by

* the Python reader (sluice.flight) over shm (bodies viewed in the server's memory), tcp (bodies
  READ into landing memory) and tcp with encryption, CRC32C-checked as by default, each with one
  client kept from round to round as a trainer's loader keeps it from epoch to epoch (connections
  made, regions mapped), and ``python.shm-first`` with a new client every round (a first epoch);
* pyarrow.flight's plain DoGet over gRPC, from the same tcp server;
* pyarrow.dataset over the Parquet files (one a shard, page cache warm);
* the Java loader (io.sluice.perf.loader.LoaderRounds, a warm JVM, a new loader every round) over
  shm, tcp and gRPC;
* and the memcpy ceiling: NumPy copying 256 MiB arrays on one thread.

Every reader but the ceiling reads with ``--threads`` threads: the Python feeds read that many
shards at once (one client, a stream a thread), the Java loader reads that many ahead, and
pyarrow's CPU and I/O pools are that large for the Parquet scan.

Throughput is the table's column bytes (32 a row: id, x, v[3], label) over the round's wall time;
each figure is the median of its rounds. Prints a table of GB/s and ratios and writes the results
file in the shared shape (perf/README.md).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import json
import os
import pathlib
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Callable, Dict, List, Sequence, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.flight as flight
import pyarrow.parquet as pq

from sluice.flight import DataPlaneOptions, SluiceFlightClient, call_token

ROOT = pathlib.Path(__file__).resolve().parents[2]
BYTES_PER_ROW = 32
SECRET = "python-loader-bench-secret"
JVM = ["--add-opens=java.base/java.nio=ALL-UNNAMED", "-XX:+UseParallelGC"]
#: How long a Java program may take to start, or to answer one round (seconds).
JAVA_SECONDS = 600.0
#: The size of each array the memcpy ceiling copies.
COPY_BYTES = 256 << 20
#: The feeds, in the order of a forward round, and the path each must report.
FEEDS = {
    "python.shm": "shm", "python.shm-first": "shm", "python.tcp": "tcp", "python.tcp-aes": "tcp", "pyarrow.grpc": "grpc",
    "parquet": "parquet", "java.shm": "shm", "java.tcp": "tcp", "java.grpc": "grpc", "memcpy": "memory",
}
#: The baselines every feed is judged against, in the printed table's columns.
BASELINES = ("memcpy", "pyarrow.grpc", "parquet")
#: Pairs judged beside the table: encryption's cost, and Python against Java reader for reader.
PAIRS = (("python.tcp-aes", "python.tcp"), ("python.shm-first", "java.shm"), ("python.shm", "python.shm-first"), ("python.tcp", "java.tcp"),
         ("pyarrow.grpc", "java.grpc"))


class Child:
    """A Java program whose output lines are read on a thread, each waited for with a deadline."""

    def __init__(self, name: str, argv: Sequence[str], ready: str) -> None:
        self.name = name
        self.process = subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        self._err: List[str] = []
        self._lines: "queue.Queue" = queue.Queue()
        threading.Thread(target=lambda: self._err.extend(self.process.stderr), daemon=True).start()
        threading.Thread(target=self._pump, daemon=True).start()
        self.printed: List[List[str]] = []
        while True:
            words = self.next_words(f"'{ready}'")
            self.printed.append(words)
            if words and words[0] == ready:
                return

    def _pump(self) -> None:
        for line in self.process.stdout:
            self._lines.put(line.split())
        self._lines.put(None)

    def next_words(self, what: str) -> List[str]:
        try:
            words = self._lines.get(timeout=JAVA_SECONDS)
        except queue.Empty:
            raise SystemExit(f"{self.name}: no {what} within {JAVA_SECONDS:.0f} s") from None
        if words is None:
            raise SystemExit(f"{self.name} ended before {what}:\n" + "".join(self._err[-40:]))
        return words

    def ask(self, line: str) -> List[str]:
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        return self.next_words(f"an answer to '{line}'")

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=30)


def serve(java: str, test_cp: str, provider: str, shards: int, rows: int, server_mb: int) -> Tuple[Child, str, int]:
    child = Child(f"ServeTestTable ({provider})",
                  [java, *JVM, f"-Xmx{server_mb}m", f"-XX:MaxDirectMemorySize={2 * server_mb}m", "-cp", test_cp,
                   "io.sluice.flight.ServeTestTable", str(shards), str(rows), SECRET, provider], "serving")
    location = next(w[1] for w in child.printed if w[0] == "location")
    total_rows = sum(int(w[3]) for w in child.printed if w[0] == "shard")
    return child, location, total_rows


def on_threads(threads: int, names: Sequence[str], read_one: Callable[[str], int]) -> int:
    """Reads every shard, ``threads`` at a time; the rows read."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=threads, thread_name_prefix="reader") as pool:
        return sum(pool.map(read_one, names))


def python_read(c: SluiceFlightClient, names: Sequence[str], threads: int) -> Tuple[str, int]:
    """Every shard with ``c``, ``threads`` at a time. A client kept from round to round reads as a
    trainer's loader does from its second epoch on (connections made, shm regions mapped)."""

    def read_one(name: str) -> int:
        rows = 0
        with c.open(name) as reader:
            for batch in reader:
                rows += batch.num_rows
                del batch
        return rows

    return c.decision.data_path, on_threads(threads, names, read_one)


def python_client(location: str, options: DataPlaneOptions) -> SluiceFlightClient:
    return SluiceFlightClient(location, call_token.mint(SECRET, location), secret=SECRET, data_plane_options=options)


def python_first(location: str, names: Sequence[str], threads: int) -> Tuple[str, int]:
    """A new client for the round: a trainer's first epoch."""
    with python_client(location, DataPlaneOptions()) as c:
        return python_read(c, names, threads)


def grpc_read(location: str, names: Sequence[str], threads: int) -> Tuple[str, int]:
    client = flight.FlightClient(location)
    options = flight.FlightCallOptions(headers=[(b"authorization", b"Bearer " + call_token.mint(SECRET, location).encode())])

    def read_one(name: str) -> int:
        info = client.get_flight_info(flight.FlightDescriptor.for_path(name), options=options)
        return sum(b.num_rows for b in client.do_get(info.endpoints[0].ticket, options=options).to_reader())

    try:
        return "grpc", on_threads(threads, names, read_one)
    finally:
        client.close()


def write_parquet(location: str, names: Sequence[str], directory: pathlib.Path) -> List[str]:
    """The served shards, fetched once by plain DoGet, as one Parquet file each (pyarrow's defaults:
    snappy, row groups of at most 1 Mi rows); then every file read once, so the page cache holds them."""
    files = []
    client = flight.FlightClient(location)
    options = flight.FlightCallOptions(headers=[(b"authorization", b"Bearer " + call_token.mint(SECRET, location).encode())])
    try:
        for name in names:
            info = client.get_flight_info(flight.FlightDescriptor.for_path(name), options=options)
            table = client.do_get(info.endpoints[0].ticket, options=options).read_all()
            path = directory / f"{name}.parquet"
            pq.write_table(table, path)
            files.append(str(path))
            del table
    finally:
        client.close()
    for f in files:
        with open(f, "rb") as handle:
            while handle.read(16 << 20):
                pass
    return files


def parquet_read(files: Sequence[str], threads: int) -> Tuple[str, int]:
    rows = 0
    for batch in ds.dataset(files, format="parquet").to_batches(use_threads=threads > 1):
        rows += batch.num_rows
    return "parquet", rows


def memcpy_read(src: np.ndarray, dst: np.ndarray, total_rows: int) -> Tuple[str, int]:
    """Copies the table's bytes (rounded up to whole arrays) from ``src`` to ``dst``; the rows
    that many bytes hold, so its rate counts as the feeds' do."""
    copies = -(-total_rows * BYTES_PER_ROW // src.nbytes)
    for _ in range(copies):
        np.copyto(dst, src)
    return "memory", copies * src.nbytes // BYTES_PER_ROW


def main() -> int:
    ap = argparse.ArgumentParser(prog="python-loader-bench")
    ap.add_argument("--quick", action="store_true", help="smoke run: a small table, one round; figures mean nothing")
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--rows", type=int, default=1 << 22, help="rows a batch (a shard has 1 or 2 batches)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2,
                    help="reading threads of every reader but the memcpy ceiling (one thread)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--java", required=True)
    ap.add_argument("--test-classpath", required=True)
    ap.add_argument("--perf-classpath", required=True)
    a = ap.parse_args()
    if a.quick:
        a.shards, a.rows, a.rounds = 4, 1 << 14, 1
    if a.threads < 1:
        ap.error("--threads must be at least 1")
    out = pathlib.Path(a.out or (ROOT / ("perf/target/python-loader-quick.json" if a.quick else "perf/results/python-loader.json")))
    server_mb = max(256, 2 * a.shards * a.rows * BYTES_PER_ROW * 2 // (1 << 20))
    pa.set_cpu_count(a.threads)
    pa.set_io_thread_count(a.threads)

    children: List[Child] = []
    closing: List[SluiceFlightClient] = []
    with tempfile.TemporaryDirectory(prefix="python-loader-bench-") as parquet_dir:
        try:
            shm_server, shm_location, total_rows = serve(a.java, a.test_classpath, "shm", a.shards, a.rows, server_mb)
            children.append(shm_server)
            tcp_server, tcp_location, _ = serve(a.java, a.test_classpath, "tcp", a.shards, a.rows, server_mb)
            children.append(tcp_server)
            loader = Child("LoaderRounds", [a.java, *JVM, "-Xmx1g", f"-XX:MaxDirectMemorySize={2 * server_mb}m", "-cp",
                            a.perf_classpath, "io.sluice.perf.loader.LoaderRounds", SECRET], "ready")
            children.append(loader)
            names = [f"t.s{k:02d}" for k in range(a.shards)]
            table_bytes = total_rows * BYTES_PER_ROW
            files = write_parquet(tcp_location, names, pathlib.Path(parquet_dir))
            parquet_bytes = sum(os.path.getsize(f) for f in files)

            def java_read(path: str, location: str) -> Tuple[str, int]:
                words = loader.ask(f"{path} {location} t. {a.threads}")
                if words[0] != "read":
                    raise SystemExit(f"LoaderRounds answered {' '.join(words)}")
                return words[2], int(words[3])

            src, dst = np.ones(COPY_BYTES, np.uint8), np.zeros(COPY_BYTES, np.uint8)
            kept = {
                "python.shm": python_client(shm_location, DataPlaneOptions()),
                "python.tcp": python_client(tcp_location, DataPlaneOptions()),
                "python.tcp-aes": python_client(tcp_location, DataPlaneOptions(encrypt=True)),
            }
            closing.extend(kept.values())
            readers: Dict[str, Callable[[], Tuple[str, int]]] = {
                "python.shm": lambda: python_read(kept["python.shm"], names, a.threads),
                "python.shm-first": lambda: python_first(shm_location, names, a.threads),
                "python.tcp": lambda: python_read(kept["python.tcp"], names, a.threads),
                "python.tcp-aes": lambda: python_read(kept["python.tcp-aes"], names, a.threads),
                "pyarrow.grpc": lambda: grpc_read(tcp_location, names, a.threads),
                "parquet": lambda: parquet_read(files, a.threads),
                "java.shm": lambda: java_read("shm", shm_location),
                "java.tcp": lambda: java_read("tcp", tcp_location),
                "java.grpc": lambda: java_read("grpc", tcp_location),
                "memcpy": lambda: memcpy_read(src, dst, total_rows),
            }
            rates: Dict[str, List[float]] = {name: [] for name in FEEDS}
            for r in range(a.rounds + (0 if a.quick else 1)):  # the first of a full run warms up
                order = list(FEEDS) if r % 2 == 0 else list(reversed(FEEDS))
                for name in order:
                    t0 = time.perf_counter()
                    path, rows = readers[name]()
                    seconds = time.perf_counter() - t0
                    if path != FEEDS[name] or (rows != total_rows and name != "memcpy"):
                        raise SystemExit(f"{name}: read {rows} rows over {path}, expected {total_rows} over {FEEDS[name]}")
                    if a.quick or r > 0:
                        rates[name].append(rows * BYTES_PER_ROW / seconds / 1e9)
        finally:
            for c in closing:
                c.close()
            for child in children:
                child.stop()

    gbps = {name: statistics.median(v) for name, v in rates.items()}
    measured = len(rates["memcpy"])
    print(f"table: {a.shards} shards, {total_rows:,} rows, {table_bytes / 2**20:,.0f} MiB of columns"
          f" ({parquet_bytes / 2**20:,.0f} MiB as Parquet); {a.threads} reading thread(s) a feed, memcpy on one;"
          f" {measured} round(s), medians [min .. max]")
    print(f"{'feed':<16} {'GB/s':>7} {'[min .. max]':>19}  " + "  ".join(f"{'x ' + b:>14}" for b in BASELINES))
    for name in FEEDS:
        spread = f"[{min(rates[name]):.3f} .. {max(rates[name]):.3f}]"
        print(f"{name:<16} {gbps[name]:7.3f} {spread:>19}  "
              + "  ".join(f"{gbps[name] / gbps[b]:13.2f}x" for b in BASELINES))
    print(f"{'feed':<16} {'GB/s':>7}   {'baseline':<12} {'GB/s':>7}  ratio")
    for ours, theirs in PAIRS:
        print(f"{ours:<16} {gbps[ours]:7.3f}   {theirs:<12} {gbps[theirs]:7.3f}  {gbps[ours] / gbps[theirs]:5.2f}x")

    def record(name: str, unit: str, value: float, base_name: str, base_value: float) -> dict:
        return {"name": f"python-loader.{name}", "unit": unit, "value": round(value, 6),
                "baseline_name": f"python-loader.{base_name}", "baseline_value": round(base_value, 6)}

    records = [record(name, "GB/s", gbps[name], b, gbps[b])
               for name in FEEDS if name != "memcpy" for b in BASELINES if b != name]
    for ours, theirs in PAIRS:
        records.append(record(ours, "GB/s", gbps[ours], theirs, gbps[theirs]))
    # A measurement is named for itself and for its baseline, so that every name is one figure.
    for r in records:
        r["name"] += ".against_" + r["baseline_name"].removeprefix("python-loader.")
    records.append(record("table.column_bytes", "MB", table_bytes / 1e6, "parquet.file_bytes", parquet_bytes / 1e6))
    records.append(record("reader_threads", "threads", a.threads, "machine.cores", os.cpu_count() or 0))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("[\n" + ",\n".join("  " + json.dumps(r) for r in records) + "\n]\n")
    print(f"wrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
