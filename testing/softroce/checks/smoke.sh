#!/bin/sh
# Lab smoke checks, run inside the guest, once per device: the device exists and is usable, and
# rdma_cm connects and moves data with RDMA READ/WRITE (rping) over its address: SoftRoCE rxe0
# at 10.77.0.1 (checks ibv_devices, rping-loopback) and soft-iWARP siw0 at 10.77.1.1 (checks
# ibv_devices-siw, rping-loopback-siw).
check() { echo "SLUICE-LAB: check $1: $2"; }
status=0

# smoke DEVICE ADDRESS SUFFIX
smoke() {
  dev=$1 addr=$2 suffix=$3
  if ibv_devices | grep -q "$dev"; then check "ibv_devices$suffix" PASS; else check "ibv_devices$suffix" FAIL; status=1; fi
  ibv_devinfo -d "$dev" | grep -E 'state|transport|link_layer' | sed 's/^/  /'
  rping -s -a "$addr" -C 3 > "/tmp/rping-server-$dev.log" 2>&1 &
  server=$!
  sleep 2
  if timeout 60 rping -c -a "$addr" -C 3 -v > "/tmp/rping-client-$dev.log" 2>&1 \
     && [ "$(grep -c 'ping data' "/tmp/rping-client-$dev.log")" -eq 3 ]; then
    check "rping-loopback$suffix" PASS
  else
    check "rping-loopback$suffix" FAIL; status=1
    sed 's/^/  client: /' "/tmp/rping-client-$dev.log"; sed 's/^/  server: /' "/tmp/rping-server-$dev.log"
  fi
  for _ in 1 2 3 4 5; do kill -0 "$server" 2>/dev/null || break; sleep 1; done
  kill "$server" 2>/dev/null
}
smoke rxe0 10.77.0.1 ""
smoke siw0 10.77.1.1 -siw
exit $status
