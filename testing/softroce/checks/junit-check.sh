# Sourced by the checks that run JUnit tests of the payload (transport-verbs's and the lab's test
# classes) inside the guest. Not a check itself.
#
# junit_check NAME ADDRESS SELECTOR...: runs JUnit's console launcher on those test classes with
# the RDMA device at ADDRESS (sluice.rdma.address) and the given selectors (--select-class ...,
# --select-package ..., --exclude-classname ...); prints the test tree, then "check NAME: PASS",
# or "check NAME: FAIL" and exits 1.
junit_check() {
  name=$1 address=$2
  shift 2
  cp=/payload/test-classes:/payload/lab-test-classes
  for jar in /payload/lib/*.jar /payload/test-lib/*.jar; do cp="$cp:$jar"; done
  if java -Xmx512m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC --add-exports java.base/sun.nio.ch=ALL-UNNAMED -Dsluice.rdma.address="$address" \
       -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
       -jar /payload/junit/junit-platform-console-standalone-*.jar execute \
       --class-path "$cp" "$@" --details=tree --disable-banner --disable-ansi-colors; then
    echo "SLUICE-LAB: check $name: PASS"
  else
    echo "SLUICE-LAB: check $name: FAIL"
    exit 1
  fi
}
