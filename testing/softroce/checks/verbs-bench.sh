#!/bin/sh
# A small READ benchmark inside the lab guest with perftest as its yardstick, once per device in
# this one boot: rxe0 at 10.77.0.1 (records named as before: verbs.*, tcp.*, ib_read_bw.*,
# ib_read_lat.*), then soft-iWARP's siw0 at 10.77.1.1 (the same records under siw.: siw.read.*,
# siw.busyPoll0.*, siw.tcp.*, siw.ib_read_bw.*, siw.ib_read_lat.*). VerbsReadBench runs rounds of
# the verbs provider, the tcp provider (same JVM) and perftest's ib_read_bw / ib_read_lat
# (connected through rdma_cm like the provider), alternating: p50/p99 of 4 KiB and 64 KiB READs
# one at a time, MB/s of 64 KiB and 1 MiB READs with 16 in flight, request round trips of 256 B
# and 64 KiB against tcp; verbs with busy polling and without. Prints the table, the ratios and
# where the CPU time went in every cell, and hands the figures of both devices to the host as one
# "result-file verbs-lab.json" marker line.
# C1 only and a serial collector, as every lab JVM: under emulation on a loaded host, a JVM that
# compiles with C2 on several threads misses the 3 s handshake deadline of its first connections.
# (Conservative for the figures: perftest's C code is compared with C1-compiled Java.)
records=""
status=0
# bench DEVICE ADDRESS [PREFIX]
bench() {
  dev=$1 addr=$2 prefix=${3:-}
  log=/tmp/bench-$dev.log
  if java -Xmx768m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC --add-exports java.base/sun.nio.ch=ALL-UNNAMED \
       -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
       -cp '/payload/lib/*' io.sluice.transport.verbs.bench.VerbsReadBench ${prefix:+--prefix $prefix} "$addr" 3 "$dev" \
       > "$log" 2>&1; then
    grep VERBS-BENCH "$log" | sed "s/^/SLUICE-LAB: $dev /"
    json=$(sed -n 's/^RESULTS \[\(.*\)\]$/\1/p' "$log")
    records="${records:+$records, }$json"
    echo "SLUICE-LAB: check verbs-bench-$dev: PASS"
  else
    tail -30 "$log"
    echo "SLUICE-LAB: check verbs-bench-$dev: FAIL"
    status=1
  fi
}
bench rxe0 10.77.0.1
bench siw0 10.77.1.1 siw
[ -z "$records" ] || echo "SLUICE-LAB: result-file verbs-lab.json [$records]"
exit $status
