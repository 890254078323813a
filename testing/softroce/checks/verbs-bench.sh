#!/bin/sh
# A small READ benchmark inside the lab guest: the verbs provider against the tcp provider,
# same JVM, same address (10.77.0.1), alternating rounds (VerbsReadBench). Prints the table
# and hands the figures to the host as a "result-file verbs-lab.json" marker line.
if java -Xmx768m --add-exports java.base/sun.nio.ch=ALL-UNNAMED \
     -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
     -cp '/payload/lib/*' io.sluice.transport.verbs.bench.VerbsReadBench 10.77.0.1 3 > /tmp/bench.log 2>&1; then
  grep VERBS-BENCH /tmp/bench.log | sed "s/^/SLUICE-LAB: /"
  json=$(sed -n 's/^RESULTS //p' /tmp/bench.log)
  echo "SLUICE-LAB: result-file verbs-lab.json $json"
  echo "SLUICE-LAB: check verbs-bench: PASS"
else
  tail -30 /tmp/bench.log
  echo "SLUICE-LAB: check verbs-bench: FAIL"
  exit 1
fi
