#!/bin/sh
# bin/sluice-check's program (SluiceCheck, compiled on the host into /payload/host-check, since
# the guest's Java runtime has no compiler) inside the lab guest, where RDMA devices exist: with
# provider verbs on each device's address it must find the device's port ACTIVE and pass; then a
# `--serve` on each device and a `--peer` of it in a second JVM must READ over verbs; and run as an
# unprivileged user under a low locked-memory limit it must name that limit.
cp="/payload/lib/*:/payload/host-check"
# The secret goes through the environment: sluice-check refuses it on the command line.
SLUICE_SECRET=lab-host-check-secret-0123456789abcdef
export SLUICE_SECRET
# The guest is emulated and one JVM there starts its crypto and RDMA set-up in seconds, not
# milliseconds: the --serve/--peer pair gets a minute to connect and authenticate, where a real host
# keeps the defaults (connect 10 s, handshake 3 s).
slow="--conf sluice.transport.connectTimeoutMs=60000 --conf sluice.transport.handshakeTimeoutMs=60000"
status=0
sluice_check() {
  timeout 300 java -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC --add-exports java.base/sun.nio.ch=ALL-UNNAMED \
    -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$cp" SluiceCheck "$@"
}
for device in rxe0:10.77.0.1 siw0:10.77.1.1; do
  name=${device%%:*} address=${device#*:}
  log=/tmp/host-check-$name.log
  if sluice_check --conf sluice.transport.provider=verbs --conf sluice.transport.verbs.deviceAddress="$address" \
      > "$log" 2>&1 && grep -q "^result: OK" "$log" && grep -q "\[ok\] port .*$name" "$log"; then
    echo "SLUICE-LAB: HOST-CHECK $name: $(grep -c '\[ok\]' "$log") findings ok, $(grep -c '\[!!\]' "$log") problems; $(grep "\[ok\] port .*$name" "$log" | head -1 | sed 's/^ *//')"
  else
    cat "$log"
    echo "SLUICE-LAB: HOST-CHECK $name: the check did not pass with provider verbs"
    status=1
    continue
  fi
  serve=/tmp/host-check-serve-$name.log
  sluice_check --serve $slow --conf sluice.transport.provider=verbs --conf sluice.transport.verbs.deviceAddress="$address" \
    --conf sluice.transport.bindHost="$address" > "$serve" 2>&1 &
  server=$!
  peer=
  for _ in $(seq 1 120); do
    peer=$(sed -n 's/^ *bin\/sluice-check --peer \([^ ]*\) .*/\1/p' "$serve" | head -1)
    [ -n "$peer" ] && break
    kill -0 "$server" 2>/dev/null || break
    sleep 1
  done
  if [ -z "$peer" ]; then
    cat "$serve"
    echo "SLUICE-LAB: HOST-CHECK $name: --serve printed no address"
    status=1
  elif sluice_check --peer "$peer" $slow --conf sluice.transport.provider=verbs \
      --conf sluice.transport.verbs.deviceAddress="$address" > "$log" 2>&1 \
      && grep -q "^result: OK" "$log" && grep -q "\[ok\] peer .* over verbs " "$log"; then
    echo "SLUICE-LAB: HOST-CHECK $name: $(grep '\[ok\] peer' "$log" | sed 's/^ *//')"
  else
    cat "$log" "$serve"
    echo "SLUICE-LAB: HOST-CHECK $name: --peer $peer did not pass"
    status=1
  fi
  kill "$server" 2>/dev/null
  wait "$server" 2>/dev/null
done
# As an unprivileged service user (no CAP_IPC_LOCK) under a 64 KiB locked-memory limit: the check
# must name the limit as the problem, with its fix, and fail for provider verbs.
log=/tmp/host-check-memlock.log
rm -rf /tmp/host-check-cp && mkdir -p /tmp/host-check-cp && cp -r /payload/lib /payload/host-check /tmp/host-check-cp/ \
  && chmod -R a+rX /tmp/host-check-cp
if (ulimit -l 64 && exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
    java -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC --add-exports java.base/sun.nio.ch=ALL-UNNAMED \
    -Djava.io.tmpdir=/tmp -cp "/tmp/host-check-cp/lib/*:/tmp/host-check-cp/host-check" SluiceCheck \
    --conf sluice.transport.provider=verbs \
    --conf sluice.transport.verbs.deviceAddress=10.77.0.1) > "$log" 2>&1; then
  cat "$log"
  echo "SLUICE-LAB: HOST-CHECK memlock: the check passed under a 64 KiB limit"
  status=1
elif grep -q "\[!!\] memlock    locked-memory limit 64.0 KiB" "$log" && grep -q "fix: raise it" "$log" \
    && grep -q "^result: FAILED: provider verbs cannot run here" "$log"; then
  echo "SLUICE-LAB: HOST-CHECK memlock: $(grep '\[!!\] memlock' "$log" | sed 's/^ *//')"
else
  cat "$log"
  echo "SLUICE-LAB: HOST-CHECK memlock: the low limit was not named"
  status=1
fi
if [ "$status" = 0 ]; then
  echo "SLUICE-LAB: check host-check: PASS"
else
  echo "SLUICE-LAB: check host-check: FAIL"
fi
exit "$status"
