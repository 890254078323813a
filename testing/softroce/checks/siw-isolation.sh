#!/bin/sh
# The verbs provider's isolation on iWARP: soft-iWARP's siw0 at 10.77.1.1, in the same guest as
# rxe0. First what the device reports (SLUICE-LAB: SIW-DEVICE: transport, READ scatter/gather
# limit, memory windows), then the per-peer isolation and life-cycle checks
# (VerbsIsolationOnDeviceTest, check verbs-isolation-siw): a peer READing with another peer's
# rkey, after a withdrawn grant or with guessed rkeys reads nothing.
echo "SLUICE-LAB: SIW-DEVICE $(ibv_devinfo -v -d siw0 | grep -E 'transport|max_sge_rd|max_mw|max_qp_rd_atom|link_layer' | tr -s ' \t' ' ' | paste -sd ';' -)"
cp=/payload/test-classes:/payload/lab-test-classes
for jar in /payload/lib/*.jar /payload/test-lib/*.jar; do cp="$cp:$jar"; done
if java -Xmx512m --add-exports java.base/sun.nio.ch=ALL-UNNAMED -Dsluice.rdma.address=10.77.1.1 \
     -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
     -jar /payload/junit/junit-platform-console-standalone-*.jar execute \
     --class-path "$cp" --select-class io.sluice.transport.verbs.nativelib.VerbsIsolationOnDeviceTest \
     --details=tree --disable-banner --disable-ansi-colors; then
  echo "SLUICE-LAB: check verbs-isolation-siw: PASS"
else
  echo "SLUICE-LAB: check verbs-isolation-siw: FAIL"
  exit 1
fi
