#!/bin/sh
# Runs transport-verbs' JUnit tests and the lab's device tests (testing/lab) inside the lab guest,
# where the tests that need an RDMA device (ReadCheckOnDeviceTest, VerbsIsolationOnDeviceTest,
# the device branches of DisniRuntimeTest and DisniTaskTest) run instead of being skipped. The
# transport contract runs separately (verbs-contract.sh).
# Memory window support of the device (ibv_devinfo): what per-peer isolation could build on.
echo "SLUICE-LAB: MW-SUPPORT $(ibv_devinfo -v -d rxe0 | grep -E 'max_mw|MEM_WINDOW' | tr -s ' \t' ' ' | paste -sd ';' -)"
cp=/payload/test-classes:/payload/lab-test-classes
for jar in /payload/lib/*.jar /payload/test-lib/*.jar; do cp="$cp:$jar"; done
if java -Xmx512m --add-exports java.base/sun.nio.ch=ALL-UNNAMED -Dsluice.rdma.address=10.77.0.1 \
     -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
     -jar /payload/junit/junit-platform-console-standalone-*.jar execute \
     --class-path "$cp" --select-package io.sluice.transport.verbs \
     --exclude-classname '.*ContractTest' \
     --details=tree --disable-banner --disable-ansi-colors; then
  echo "SLUICE-LAB: check verbs-unit-tests: PASS"
else
  echo "SLUICE-LAB: check verbs-unit-tests: FAIL"
  exit 1
fi
