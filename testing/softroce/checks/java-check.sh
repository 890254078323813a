# Sourced by the checks that run one lab program in a JVM of the guest and judge it by its exit
# status. Not a check itself.
#
# java_check NAME TAG LOG JAVA_ARGS...: runs java with JAVA_ARGS (class path, main class and its
# arguments, any extra flags first) for at most 600 s, with C1 only and a serial collector (far
# less compiling and fewer threads under emulation), its output in LOG; prints the program's TAG
# lines as SLUICE-LAB lines, then "check NAME: PASS", or the log's last 40 lines and "check
# NAME: FAIL" and exits 1.
java_check() {
  name=$1 tag=$2 log=$3
  shift 3
  if timeout 600 java -Xmx640m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
       --add-exports java.base/sun.nio.ch=ALL-UNNAMED \
       -Dorg.slf4j.simpleLogger.defaultLogLevel=warn "$@" > "$log" 2>&1; then
    grep "$tag" "$log" | sed "s/^/SLUICE-LAB: /"
    echo "SLUICE-LAB: check $name: PASS"
  else
    grep "$tag" "$log" | sed "s/^/SLUICE-LAB: /"
    tail -40 "$log"
    echo "SLUICE-LAB: check $name: FAIL"
    exit 1
  fi
}
