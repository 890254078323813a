"""The driver of perf/bin/python-loader-bench: one table, served by two ServeTestTable programs (an
shm and a tcp data plane, the same deterministic shards), read in alternating rounds by

* the Python reader (sluice.flight) over shm (bodies viewed in the server's memory) and tcp
  (bodies READ into landing memory), CRC32C-checked as by default;
* pyarrow.flight's plain DoGet over gRPC, from the same tcp server;
* the Java loader (io.sluice.perf.loader.LoaderRounds, a warm JVM) over shm, tcp and gRPC;
* and the memcpy ceiling (NumPy copying a buffer of one shard's size).

Throughput is the table's column bytes (32 a row: id, x, v[3], label) over the round's wall time;
each figure is the median of its rounds. Prints a table and writes the results file in the shared
shape (perf/README.md).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import threading
import time

import numpy as np
import pyarrow.flight as flight

from sluice.flight import DataPlaneOptions, SluiceFlightClient, call_token

ROOT = pathlib.Path(__file__).resolve().parents[2]
BYTES_PER_ROW = 32
SECRET = "python-loader-bench-secret"
JVM = ["--add-opens=java.base/java.nio=ALL-UNNAMED", "-XX:+UseParallelGC"]


def start(argv, ready: str):
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    err = []
    threading.Thread(target=lambda: err.extend(p.stderr), daemon=True).start()
    lines = []
    for line in p.stdout:
        lines.append(line.split())
        if line.split()[0] == ready:
            return p, lines
    raise SystemExit(f"{argv[-1]} ended before '{ready}':\n" + "".join(err[-40:]))


def serve(java, test_cp, provider, shards, rows, server_mb):
    p, lines = start([java, *JVM, f"-Xmx{server_mb}m", f"-XX:MaxDirectMemorySize={2 * server_mb}m", "-cp", test_cp,
                      "io.sluice.flight.ServeTestTable", str(shards), str(rows), SECRET, provider], "serving")
    location = next(w[1] for w in lines if w[0] == "location")
    total_rows = sum(int(w[3]) for w in lines if w[0] == "shard")
    return p, location, total_rows


def python_read(location, names, options):
    rows = 0
    with SluiceFlightClient(location, call_token.mint(SECRET, location), secret=SECRET, data_plane_options=options) as c:
        path = c.decision.data_path
        for name in names:
            with c.open(name) as reader:
                for batch in reader:
                    rows += batch.num_rows
                    del batch
    return path, rows


def grpc_read(location, names):
    rows = 0
    client = flight.FlightClient(location)
    options = flight.FlightCallOptions(headers=[(b"authorization", b"Bearer " + call_token.mint(SECRET, location).encode())])
    try:
        for name in names:
            info = client.get_flight_info(flight.FlightDescriptor.for_path(name), options=options)
            for batch in client.do_get(info.endpoints[0].ticket, options=options).to_reader():
                rows += batch.num_rows
    finally:
        client.close()
    return "grpc", rows


def main() -> int:
    ap = argparse.ArgumentParser(prog="python-loader-bench")
    ap.add_argument("--quick", action="store_true", help="smoke run: a small table, one round; figures mean nothing")
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--rows", type=int, default=1 << 19, help="rows a batch (a shard has 1 or 2 batches)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=None)
    ap.add_argument("--java", required=True)
    ap.add_argument("--test-classpath", required=True)
    ap.add_argument("--perf-classpath", required=True)
    a = ap.parse_args()
    if a.quick:
        a.shards, a.rows, a.rounds = 4, 1 << 14, 1
    out = pathlib.Path(a.out or (ROOT / ("perf/target/python-loader-quick.json" if a.quick else "perf/results/python-loader.json")))
    server_mb = max(256, 2 * a.shards * a.rows * BYTES_PER_ROW * 2 // (1 << 20))

    procs = []
    try:
        shm_server, shm_location, total_rows = serve(a.java, a.test_classpath, "shm", a.shards, a.rows, server_mb)
        procs.append(shm_server)
        tcp_server, tcp_location, _ = serve(a.java, a.test_classpath, "tcp", a.shards, a.rows, server_mb)
        procs.append(tcp_server)
        loader, _ = start([a.java, *JVM, "-Xmx1g", f"-XX:MaxDirectMemorySize={2 * server_mb}m", "-cp", a.perf_classpath,
                           "io.sluice.perf.loader.LoaderRounds", SECRET], "ready")
        procs.append(loader)
        names = [f"t.s{k:02d}" for k in range(a.shards)]
        table_bytes = total_rows * BYTES_PER_ROW

        def java_read(path, location):
            loader.stdin.write(f"{path} {location} t.\n")
            loader.stdin.flush()
            words = loader.stdout.readline().split()
            assert words[0] == "read", words
            return words[2], int(words[3])

        shard_bytes = a.rows * BYTES_PER_ROW
        src, dst = np.ones(shard_bytes, np.uint8), np.empty(shard_bytes, np.uint8)

        def memcpy():
            for _ in range(max(1, total_rows // a.rows)):
                np.copyto(dst, src)
            return "memory", total_rows

        readers = {
            "python.shm": lambda: python_read(shm_location, names, DataPlaneOptions()),
            "python.tcp": lambda: python_read(tcp_location, names, DataPlaneOptions()),
            "python.tcp-aes": lambda: python_read(tcp_location, names, DataPlaneOptions(encrypt=True)),
            "pyarrow.grpc": lambda: grpc_read(tcp_location, names),
            "java.shm": lambda: java_read("shm", shm_location),
            "java.tcp": lambda: java_read("tcp", tcp_location),
            "java.grpc": lambda: java_read("grpc", tcp_location),
            "memcpy": memcpy,
        }
        expect_path = {"python.shm": "shm", "python.tcp": "tcp", "python.tcp-aes": "tcp", "pyarrow.grpc": "grpc",
                       "java.shm": "shm", "java.tcp": "tcp", "java.grpc": "grpc", "memcpy": "memory"}
        rates = {name: [] for name in readers}
        for r in range(a.rounds + (0 if a.quick else 1)):  # the first of a full run warms up
            for name, read in readers.items():
                t0 = time.perf_counter()
                path, rows = read()
                seconds = time.perf_counter() - t0
                if path != expect_path[name] or rows != total_rows:
                    raise SystemExit(f"{name}: read {rows} rows over {path}, expected {total_rows} over {expect_path[name]}")
                if a.quick or r > 0:
                    rates[name].append(table_bytes / seconds / 1e9)
        gbps = {name: statistics.median(v) for name, v in rates.items()}
    finally:
        for p in procs:
            try:
                p.stdin.close()
            except OSError:
                pass
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()

    pairs = [
        ("python.shm", "pyarrow.grpc"), ("python.tcp", "pyarrow.grpc"), ("python.tcp-aes", "python.tcp"),
        ("python.shm", "java.shm"), ("python.tcp", "java.tcp"), ("pyarrow.grpc", "java.grpc"),
        ("python.shm", "memcpy"),
    ]
    print(f"table: {a.shards} shards, {total_rows} rows, {table_bytes / 1e6:.1f} MB of columns; "
          f"{len(next(iter(rates.values())))} round(s), medians")
    print(f"{'measurement':<18} {'GB/s':>8}   {'baseline':<14} {'GB/s':>8}  ratio")
    for name, base in pairs:
        print(f"{name:<18} {gbps[name]:8.3f}   {base:<14} {gbps[base]:8.3f}  {gbps[name] / gbps[base]:5.2f}x")
    records = [
        {"name": f"python-loader.{name}", "unit": "GB/s", "value": round(gbps[name], 6),
         "baseline_name": f"python-loader.{base}", "baseline_value": round(gbps[base], 6)}
        for name, base in pairs
    ]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("[\n" + ",\n".join("  " + json.dumps(r) for r in records) + "\n]\n")
    print(f"wrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
