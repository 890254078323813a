#!/bin/sh
# A small READ benchmark inside the lab guest with perftest as its yardstick, all on rxe0 at
# 10.77.0.1 in this one boot: perftest's ib_read_bw (64 KiB and 1 MiB READs, 16 in flight)
# and ib_read_lat (4 KiB), connected through rdma_cm like the provider, then VerbsReadBench
# (the verbs provider against the tcp provider, same JVM, alternating rounds), which takes
# perftest's figures (medians of three rounds) as the baseline of its READ figures. Prints the
# table, the goals, where the CPU time went in every cell, and hands the figures to the host as
# a "result-file verbs-lab.json" marker line.
dev=rxe0
addr=10.77.0.1
figures=/tmp/perftest.txt
: > /tmp/perftest.log
fail() { echo "SLUICE-LAB: $*"; echo "SLUICE-LAB: check verbs-bench: FAIL"; exit 1; }

# Jiffies of /proc/stat's cpu line: user nice system idle iowait irq softirq steal.
cpu_now() { head -1 /proc/stat | cut -d' ' -f3-10; }
cpu_since() {
  echo "$1 $(cpu_now)" | awk '{ for (i = 1; i <= 8; i++) { d[i] = $(i + 8) - $i; t += d[i] }
    if (t > 0) printf "machine user %.0f%% sys %.0f%% softirq %.0f%% irq %.0f%% idle %.0f%%",
      100 * (d[1] + d[2]) / t, 100 * d[3] / t, 100 * d[7] / t, 100 * d[6] / t, 100 * (d[4] + d[5]) / t }'
}

# perftest TOOL PORT SIZE ARGS...: one server and one client run of SIZE-byte messages; prints
# the client's result line (the one that starts with the size). Both sides get the same
# arguments; the client retries while the server is not listening yet.
perftest() {
  tool=$1; port=$2; size=$3; shift 3
  set -- -s "$size" "$@"
  timeout 120 "$tool" -d "$dev" -R -F -p "$port" "$@" > /tmp/perftest-server.log 2>&1 &
  server=$!
  for attempt in 1 2 3 4 5 6 7 8 9 10; do
    sleep 1
    if timeout 120 "$tool" -d "$dev" -R -F -p "$port" "$@" "$addr" > /tmp/perftest-client.log 2>&1; then
      break
    fi
    kill -0 "$server" 2>/dev/null || break
  done
  wait "$server"
  cat /tmp/perftest-client.log >> /tmp/perftest.log
  awk -v size="$size" '$1 == size && NF >= 5 { line = $0 } END { if (line != "") print line }' /tmp/perftest-client.log
}

# One round: READ bandwidth in Gb/s (10^9 bits) at 64 KiB and 1 MiB with 16 READs posted (about
# 96 MiB each), and the typical (median) 4 KiB READ latency over 400 READs.
perftest_round() {
  round=$1
  for size in 65536 1048576; do
    before=$(cpu_now)
    line=$(perftest ib_read_bw $((18515 + round)) "$size" --report_gbits -t 16 -n $((100663296 / size)))
    [ -n "$line" ] || fail "ib_read_bw -s $size printed no result: $(tail -5 /tmp/perftest-client.log)"
    # columns: bytes iterations peak average msg-rate; MB/s = Gb/s * 125
    mbs=$(echo "$line" | awk '{ printf "%.1f", $4 * 125 }')
    echo "bw $size $mbs" >> /tmp/perftest-rounds.txt
    echo "SLUICE-LAB: VERBS-BENCH cpu ib_read_bw $size round $round ($mbs MB/s): $(cpu_since "$before")"
  done
  before=$(cpu_now)
  line=$(perftest ib_read_lat $((18525 + round)) 4096 -n 400)
  [ -n "$line" ] || fail "ib_read_lat printed no result: $(tail -5 /tmp/perftest-client.log)"
  # columns: bytes iterations t_min t_max t_typical ...
  us=$(echo "$line" | awk '{ print $5 }')
  echo "lat 4096 $us" >> /tmp/perftest-rounds.txt
  echo "SLUICE-LAB: VERBS-BENCH cpu ib_read_lat 4096 round $round ($us us): $(cpu_since "$before")"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

: > /tmp/perftest-rounds.txt
for round in 1 2 3; do perftest_round "$round"; done
{
  for size in 65536 1048576; do
    label=$([ "$size" = 65536 ] && echo 64KiB || echo 1MiB)
    echo "ib_read_bw.$label.inflight16 $(awk -v s="$size" '$1 == "bw" && $2 == s { print $3 }' /tmp/perftest-rounds.txt | median)"
  done
  echo "ib_read_lat.4KiB.latency_p50 $(awk '$1 == "lat" { print $3 }' /tmp/perftest-rounds.txt | median)"
} > "$figures"
sed 's/^/SLUICE-LAB: PERFTEST /' "$figures"

if java -Xmx768m --add-exports java.base/sun.nio.ch=ALL-UNNAMED \
     -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
     -cp '/payload/test-classes:/payload/lib/*' io.sluice.transport.verbs.bench.VerbsReadBench "$addr" 3 "$figures" \
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
