#!/bin/sh
# Arrow Flight over verbs inside the lab guest: FlightVerbsCheck (testing/lab) starts a
# SluiceFlightServer and a SluiceFlightClient with the verbs provider on rxe0's 10.77.0.1, puts a
# table over the data plane, reads it back over the data plane and with a plain DoGet, and checks
# that the rows are equal and that both data-plane streams took the path "verbs", then changes a
# byte of the served table and checks that a read over verbs refuses it (CRC32C). The Flight
# module's class path comes in /payload/flight.
cp="/payload/lib/*:/payload/flight/*"
. "$(dirname "$0")/java-check.sh"
java_check flight-verbs FLIGHT-VERBS /tmp/flight.log --add-opens=java.base/java.nio=ALL-UNNAMED \
  -cp "$cp" io.sluice.lab.flight.FlightVerbsCheck 10.77.0.1 4 5000
