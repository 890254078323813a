#!/bin/sh
# Runs inside the lab guest with the lab programs (testing/lab, never shipped) and transport-verbs
# in /payload/lib: DiSNI over the
# project's libdisni.so connects with rdma_cm and does RDMA READs, first between two
# threads of one JVM, then between two JVMs; then the READs and connects that must fail
# (wrong rkey, past the end, deregistered region, no listener, refused request); then the
# RdmaNode READ path, and a hostile requester against a message channel (malformed frame,
# credit exceeded, staged request of unregistered memory).
java_cmd() {
  java -Xmx512m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC --add-exports java.base/sun.nio.ch=ALL-UNNAMED \
    -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
    -cp '/payload/lib/*' io.sluice.transport.verbs.nativelib.DisniCheck "$@"
}
check() { echo "SLUICE-LAB: check $1: $2"; }
status=0

if java_cmd loopback 10.77.0.1 19190 1048576 180; then
  check disni-read-two-threads PASS
else
  check disni-read-two-threads FAIL; status=1
fi

java_cmd server 10.77.0.1 19191 4194304 240 > /tmp/server.log 2>&1 &
server=$!
# The client must not connect before the server listens (a refused connect is an error).
waited=0
until grep -q 'server listening' /tmp/server.log || [ "$waited" -ge 120 ] || ! kill -0 "$server" 2>/dev/null; do
  sleep 1; waited=$((waited + 1))
done
if java_cmd client 10.77.0.1 19191 4194304 240; then client_ok=1; else client_ok=0; fi
wait "$server"
server_rc=$?
sed 's/^/  server: /' /tmp/server.log
if [ "$client_ok" = 1 ] && [ "$server_rc" = 0 ]; then
  check disni-read-two-jvms PASS
else
  check disni-read-two-jvms FAIL; status=1
fi
if java_cmd failures 10.77.0.1 19193 4096 180; then
  check disni-failure-cases PASS
else
  check disni-failure-cases FAIL; status=1
fi
if java_cmd readpath 10.77.0.1 19196 4096 180; then
  check verbs-read-path PASS
else
  check verbs-read-path FAIL; status=1
fi
if java_cmd channel 10.77.0.1 19197 4096 180; then
  check verbs-channel-hostile-peer PASS
else
  check verbs-channel-hostile-peer FAIL; status=1
fi
exit $status
