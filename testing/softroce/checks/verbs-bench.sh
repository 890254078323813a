#!/bin/sh
# A small READ benchmark inside the lab guest with perftest as its yardstick, all on rxe0 at
# 10.77.0.1 in this one boot: VerbsReadBench runs rounds of the verbs provider, the tcp
# provider (same JVM) and perftest's ib_read_bw / ib_read_lat (connected through rdma_cm like
# the provider), alternating, at 64 KiB and 1 MiB with 16 READs in flight and at 4 KiB one at a
# time. Prints the table, the ratios and where the CPU time went in every cell, and hands the
# figures to the host as a "result-file verbs-lab.json" marker line.
if java -Xmx768m --add-exports java.base/sun.nio.ch=ALL-UNNAMED \
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
