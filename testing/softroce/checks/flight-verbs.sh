#!/bin/sh
# Arrow Flight over verbs inside the lab guest: FlightVerbsCheck (testing/lab) starts a
# SluiceFlightServer and a SluiceFlightClient with the verbs provider on rxe0's 10.77.0.1, puts a
# table over the data plane, reads it back over the data plane and with a plain DoGet, and checks
# that the rows are equal and that both data-plane streams took the path "verbs". The Flight
# module's class path comes in /payload/flight.
cp="/payload/lib/*:/payload/flight/*"
# C1 only and a serial collector: far less compiling and fewer threads under emulation.
if timeout 600 java -Xmx640m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
     --add-exports java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED \
     -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
     -cp "$cp" io.sluice.lab.flight.FlightVerbsCheck 10.77.0.1 4 5000 > /tmp/flight.log 2>&1; then
  grep FLIGHT-VERBS /tmp/flight.log | sed "s/^/SLUICE-LAB: /"
  echo "SLUICE-LAB: check flight-verbs: PASS"
else
  grep FLIGHT-VERBS /tmp/flight.log | sed "s/^/SLUICE-LAB: /"
  tail -40 /tmp/flight.log
  echo "SLUICE-LAB: check flight-verbs: FAIL"
  exit 1
fi
