#!/bin/sh
# Runs the transport contract suite on the verbs provider inside the lab guest
# (VerbsTransportContractTest, transport-verbs's tests): two or three transports per case, each
# with its tcp listener and its RDMA listener on the device's address, real queue pairs and
# READs; the peer-crash case kills a child JVM mid-READ. The stress case of small READs racing
# region and peer closes issues 100,000 READs here (4,000 elsewhere). The launcher runs from the
# class path (not --class-path) so that child JVMs inherit it.
#
#   verbs-contract.sh [ADDRESS [CHECK_NAME [LAUNCHER_OPTION...]]]
#                                    (default: rxe0's 10.77.0.1, verbs-contract)
address=${1:-10.77.0.1}
name=${2:-verbs-contract}
[ $# -ge 2 ] && shift 2 || shift $#
cp=/payload/test-classes
for jar in /payload/lib/*.jar /payload/test-lib/*.jar; do cp="$cp:$jar"; done
cp="$cp:$(ls /payload/junit/junit-platform-console-standalone-*.jar)"
if java -Xmx768m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC --add-exports java.base/sun.nio.ch=ALL-UNNAMED -Dsluice.rdma.address="$address" \
     -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.log.io.sluice.transport.verbs.rc.RdmaNode=info \
     -Dsluice.contract.stressReads=100000 \
     -cp "$cp" org.junit.platform.console.ConsoleLauncher execute \
     --select-class io.sluice.transport.verbs.VerbsTransportContractTest "$@" \
     --details=tree --disable-banner --disable-ansi-colors; then
  echo "SLUICE-LAB: check $name: PASS"
else
  echo "SLUICE-LAB: check $name: FAIL"
  exit 1
fi
