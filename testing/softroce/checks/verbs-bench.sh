#!/bin/sh
# A small READ benchmark inside the lab guest with perftest as its yardstick, all on rxe0 at
# 10.77.0.1 in this one boot: VerbsReadBench runs rounds of the verbs provider, the tcp
# provider (same JVM) and perftest's ib_read_bw / ib_read_lat (connected through rdma_cm like
# the provider), alternating: p50/p99 of 4 KiB and 64 KiB READs one at a time, MB/s of 64 KiB and
# 1 MiB READs with 16 in flight, request round trips of 256 B and 64 KiB against tcp; verbs with
# busy polling and without. Prints the table, the ratios and where the CPU time went in every
# cell, and hands the figures to the host as a "result-file verbs-lab.json" marker line.
# C1 only and a serial collector, as every lab JVM: under emulation on a loaded host, a JVM that
# compiles with C2 on several threads misses the 3 s handshake deadline of its first connections.
# (Conservative for the figures: perftest's C code is compared with C1-compiled Java.)
if java -Xmx768m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC --add-exports java.base/sun.nio.ch=ALL-UNNAMED \
     -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
     -cp '/payload/lib/*' io.sluice.transport.verbs.bench.VerbsReadBench 10.77.0.1 3 rxe0 \
     > /tmp/bench.log 2>&1; then
  grep VERBS-BENCH /tmp/bench.log | sed "s/^/SLUICE-LAB: /"
  json=$(sed -n 's/^RESULTS //p' /tmp/bench.log)
  echo "SLUICE-LAB: result-file verbs-lab.json $json"
  echo "SLUICE-LAB: check verbs-bench: PASS"
else
  tail -30 /tmp/bench.log
  echo "SLUICE-LAB: check verbs-bench: FAIL"
  exit 1
fi
