package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.spark.shuffle.TransportReport;
import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.HashPartitioner;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import scala.Tuple2;

/**
 * {@code spark.shuffle.rdma.peersBeyondBound=spark} among three executor JVMs ({@code
 * local-cluster[3,1,1024]}) with at most one connection to peers per executor, over tcp (no shm), its
 * own blocks READ over the transport too (no local reads): a reduce task that reads two peers READs
 * one and has Spark's reader fetch the other's blocks in the same task, never its own. Every kind of
 * shuffle read gives the right answer (an aggregator with and without map-side combine, a key
 * ordering, neither), no task fails to fetch, both paths moved bytes, and no executor ever had more
 * than one connection open.
 */
class PeersBeyondBoundTest {
  private static final int EXECUTORS = PeerConnectionBoundTest.EXECUTORS;
  private static final int ROWS = 30_000;
  private static final int KEYS = 1000; // as PeerConnectionBoundTest.slowly keys the rows
  private static final int REDUCE_TASKS = 6;

  @Test
  @Timeout(600)
  void peersPastTheSharedBoundAreReadThroughSparksReaderInTheSameTask() throws Exception {
    SparkConf conf = PeerConnectionBoundTest.boundToOneConnection("peers-beyond-bound", "spark");
    try (JavaSparkContext sc = LocalCluster.start(conf, EXECUTORS)) {
      ShuffleMetricsListener listener = new ShuffleMetricsListener();
      sc.sc().addSparkListener(listener);
      // Map tasks that take a moment, so that the single-core executors share them.
      JavaPairRDD<Integer, Long> pairs = sc.parallelize(SharedJobs.range(ROWS), 12)
          .mapPartitionsToPair(PeerConnectionBoundTest::slowly);
      Map<Integer, Long> sums = new TreeMap<>();
      Map<Integer, Long> counts = new TreeMap<>();
      List<Tuple2<Integer, Long>> all = new ArrayList<>();
      for (int i = 0; i < ROWS; i++) {
        sums.merge(i % KEYS, (long) i, Long::sum);
        counts.merge(i % KEYS, 1L, Long::sum);
        all.add(new Tuple2<>(i % KEYS, (long) i));
      }
      all.sort(PeersBeyondBoundTest::compare);

      // An aggregator with map-side combine.
      assertEquals(sums, new TreeMap<>(pairs.reduceByKey(Long::sum, REDUCE_TASKS).collectAsMap()), "reduceByKey");
      // An aggregator without it: the READ part is combined, then merged with Spark's combiners.
      Map<Integer, Long> grouped = new TreeMap<>();
      pairs.groupByKey(REDUCE_TASKS).collect().forEach(kv -> {
        long n = 0;
        for (Long ignored : kv._2()) {
          n++;
        }
        grouped.put(kv._1(), n);
      });
      assertEquals(counts, grouped, "groupByKey");
      // A key ordering, no aggregator.
      List<Integer> keys = pairs.sortByKey(true, REDUCE_TASKS).keys().collect();
      assertEquals(all.stream().map(Tuple2::_1).toList(), keys, "sortByKey");
      // Neither.
      List<Tuple2<Integer, Long>> moved = new ArrayList<>(pairs.partitionBy(new HashPartitioner(REDUCE_TASKS)).collect());
      moved.sort(PeersBeyondBoundTest::compare);
      assertEquals(all, moved, "partitionBy");

      sc.sc().listenerBus().waitUntilEmpty(10_000);
      assertEquals(0, listener.fetchFailures.get(), "fetch failures");
      List<TransportReport> reports = TransportReports.collect(sc);
      assertEquals(EXECUTORS, reports.size(), reports.toString());
      long passedOn = 0;
      long bytesRead = 0;
      for (TransportReport r : reports) {
        assertEquals(1, r.maxPeerConnections(), r.toString());
        assertTrue(r.peerConnectionsPeak() <= 1, "more than one connection to peers at once: " + r);
        assertEquals(0, r.peerConnectionWaitTimeouts(), r.toString());
        passedOn += r.peersPassedOn();
        bytesRead += r.bytesRead();
      }
      assertTrue(passedOn > 0, "no peer was read through Spark's reader: " + reports);
      // Four shuffles of REDUCE_TASKS reduce tasks, each reading at most two peers besides itself at
      // a bound of one: at most one peer passed on per task, never the executor itself.
      assertTrue(passedOn <= 4L * REDUCE_TASKS, passedOn + " peers passed on: " + reports);
      assertTrue(bytesRead > 0, "nothing was READ: " + reports);
      long remote = listener.snapshot().remoteBytes();
      assertTrue(remote > bytesRead, "Spark's reader moved no remote bytes: " + remote + " remote bytes in all, "
          + bytesRead + " of them READ");
      // Until here the shuffles stay reachable, so that Spark's cleaner cannot remove them (and the
      // executors' registered map outputs with them) before the reports are taken.
      Reference.reachabilityFence(pairs);
    }
  }

  private static int compare(Tuple2<Integer, Long> a, Tuple2<Integer, Long> b) {
    int c = Integer.compare(a._1(), b._1());
    return c != 0 ? c : Long.compare(a._2(), b._2());
  }
}
