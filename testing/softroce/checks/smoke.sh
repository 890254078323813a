#!/bin/sh
# Lab smoke checks, run inside the guest: the SoftRoCE device exists and is usable, and
# rdma_cm connects and moves data with RDMA READ/WRITE (rping) over 10.77.0.1.
check() { echo "SLUICE-LAB: check $1: $2"; }
status=0

if ibv_devices | grep -q rxe0; then check ibv_devices PASS; else check ibv_devices FAIL; status=1; fi
ibv_devinfo -d rxe0 | grep -E 'state|transport|link_layer' | sed 's/^/  /'

rping -s -a 10.77.0.1 -C 3 > /tmp/rping-server.log 2>&1 &
server=$!
sleep 2
if timeout 60 rping -c -a 10.77.0.1 -C 3 -v > /tmp/rping-client.log 2>&1 \
   && [ "$(grep -c 'ping data' /tmp/rping-client.log)" -eq 3 ]; then
  check rping-loopback PASS
else
  check rping-loopback FAIL; status=1
  sed 's/^/  client: /' /tmp/rping-client.log; sed 's/^/  server: /' /tmp/rping-server.log
fi
for _ in 1 2 3 4 5; do kill -0 "$server" 2>/dev/null || break; sleep 1; done
kill "$server" 2>/dev/null
exit $status
