#!/bin/sh
# On demand (disni-check --only siw-stress), not in ci: the contract cases that issue many
# concurrent READs (two of them caught soft-iWARP replying to short READs across a page boundary
# with wrong bytes), each run again and again in a JVM of its own on siw0 (10.77.1.1) and then on
# rxe0 (10.77.0.1), so that a fault that comes once in a few runs shows how often and where its
# bytes came from: 8 runs of each case on siw0, 3 on rxe0.
cp=/payload/test-classes
for jar in /payload/lib/*.jar /payload/test-lib/*.jar; do cp="$cp:$jar"; done
cp="$cp:$(ls /payload/junit/junit-platform-console-standalone-*.jar)"
status=0
for address in 10.77.1.1 10.77.0.1; do
  rounds=8
  [ "$address" = 10.77.0.1 ] && rounds=3
  for case in thousandConcurrentReadsFromSeveralThreads readsRacingRegionAndPeerClosesLandWholeOrFailWithTheirCause \
      manySmallReadsRacingRegionAndPeerClosesLandWholeOrFailWithTheirCause shortReadsAcrossAPageBoundaryLandWhole; do
    failed=0
    i=1
    while [ "$i" -le "$rounds" ]; do
      if java -Xmx768m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC --add-exports java.base/sun.nio.ch=ALL-UNNAMED -Dsluice.rdma.address="$address" \
           -Dsluice.contract.stressReads=100000 \
           -Dorg.slf4j.simpleLogger.defaultLogLevel=error \
           -cp "$cp" org.junit.platform.console.ConsoleLauncher execute \
           --select-method "io.sluice.transport.verbs.VerbsTransportContractTest#$case" \
           --details=none --disable-banner --disable-ansi-colors > /tmp/stress.out 2>&1; then
        :
      else
        failed=$((failed + 1))
        grep -m 3 -E "problems|wrong bytes|=>" /tmp/stress.out | sed "s/^/SLUICE-LAB: STRESS $address $case run $i: /"
      fi
      i=$((i + 1))
    done
    echo "SLUICE-LAB: STRESS $address $case: $failed of $rounds runs failed"
    [ "$failed" -gt 0 ] && status=1
  done
done
if [ "$status" = 0 ]; then echo "SLUICE-LAB: check siw-stress: PASS"; else echo "SLUICE-LAB: check siw-stress: FAIL"; exit 1; fi
