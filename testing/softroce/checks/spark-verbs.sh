#!/bin/sh
# Spark over verbs inside the lab guest: VerbsLabJob (testing/lab) runs a
# groupByKey and a sortByKey with Spark's sort shuffle (local[2]), then with RdmaShuffleManager
# and the verbs provider on local-cluster[2,1,600] (two executor JVMs, transports on rxe0's
# 10.77.0.1), compares the answers and checks from the manager's metrics that every remote
# shuffle byte was READ over verbs. Spark's jars come from the image's Spark layer
# (/opt/spark/jars); the shuffle manager's jar, the lab job and its helpers from /payload/spark.
lib=/payload/spark
export SPARK_HOME=/opt/spark SPARK_SCALA_VERSION=2.13 SPARK_LOCAL_IP=10.77.0.1
# Some of Spark (and Hadoop) asks for the local host's address by name.
grep -qs "$(hostname)" /etc/hosts || echo "10.77.0.1 $(hostname)" >> /etc/hosts
[ -d "$SPARK_HOME/jars" ] || { echo "SLUICE-LAB: no Spark jars in $SPARK_HOME (run disni-check with the Spark layer)"; \
  echo "SLUICE-LAB: check spark-verbs: FAIL"; exit 1; }
cp=$(ls "$lib"/*.jar | paste -sd: -)
# C1 only and a serial collector: far less compiling and fewer threads under emulation.
jvm="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
# The job's VERBS-SPARK lines reach the console as they come (progress under a slow emulation).
{
  timeout 900 java -Xmx640m $jvm $(cat "$lib/module-opens") \
    -Dspark.executor.extraJavaOptions="$jvm" \
    -cp "$SPARK_HOME/jars/*:$cp" io.sluice.lab.spark.VerbsLabJob 10.77.0.1 "$cp" 100000 600 \
    2> /tmp/spark.err
  echo $? > /tmp/spark.rc
} | tee /tmp/spark.log | grep --line-buffered VERBS-SPARK | sed 's/^/SLUICE-LAB: /'
rc=$(cat /tmp/spark.rc)
if [ "$rc" = 0 ]; then
  echo "SLUICE-LAB: check spark-verbs: PASS"
else
  echo "SLUICE-LAB: spark-verbs exit $rc; last driver log lines:"
  tail -40 /tmp/spark.err
  for f in "$SPARK_HOME"/work/*/*/stderr; do
    [ -f "$f" ] && { echo "--- $f"; grep -E 'ERROR|Exception' "$f" | tail -20; }
  done
  echo "SLUICE-LAB: check spark-verbs: FAIL"
  exit 1
fi
