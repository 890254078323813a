#!/bin/sh
# Runs the transport contract suite on the verbs provider inside the lab guest
# (VerbsTransportContractTest, transport-verbs's tests): two or three transports per case, each
# with its tcp listener and its RDMA listener on 10.77.0.1, real queue pairs and READs; the
# peer-crash case kills a child JVM mid-READ. The launcher runs from the class path (not
# --class-path) so that child JVMs inherit it.
cp=/payload/test-classes
for jar in /payload/lib/*.jar /payload/test-lib/*.jar; do cp="$cp:$jar"; done
cp="$cp:$(ls /payload/junit/junit-platform-console-standalone-*.jar)"
if java -Xmx768m --add-exports java.base/sun.nio.ch=ALL-UNNAMED -Dsluice.rdma.address=10.77.0.1 \
     -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
     -cp "$cp" org.junit.platform.console.ConsoleLauncher execute \
     --select-class io.sluice.transport.verbs.VerbsTransportContractTest \
     --details=tree --disable-banner --disable-ansi-colors; then
  echo "SLUICE-LAB: check verbs-contract: PASS"
else
  echo "SLUICE-LAB: check verbs-contract: FAIL"
  exit 1
fi
