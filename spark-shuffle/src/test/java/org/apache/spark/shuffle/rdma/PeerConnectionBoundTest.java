package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.spark.shuffle.TransportReport;
import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import scala.Tuple2;

/**
 * An all-to-all shuffle among three executor JVMs ({@code local-cluster[3,1,1024]}) with at most one
 * connection to peers per executor, the peers past it READ in turns ({@code peersBeyondBound=queue}): every block crosses the transport over tcp (no local reads, no
 * shm), so each reduce task reads every executor that ran map tasks (its own included) through one
 * connection, closed and reopened between peers. The answer is right, no task fails to fetch, no executor
 * ever had more than one connection open, and no task opened a peer twice.
 */
class PeerConnectionBoundTest {
  static final int EXECUTORS = 3;
  private static final int ROWS = 60_000;
  private static final int REDUCE_TASKS = 6;

  @Test
  @Timeout(600)
  void anAllToAllShuffleAtABoundOfOneConnectionGivesTheRightAnswerWithoutFetchFailures() throws Exception {
    try (JavaSparkContext sc = LocalCluster.start(boundToOneConnection("peer-connection-bound", "queue"), EXECUTORS)) {
      FetchFailureMessages fetchFailures = FetchFailureMessages.of(sc);
      // Map tasks that take a moment, so that the single-core executors share them.
      JavaPairRDD<Integer, Long> reduced = sc.parallelize(SharedJobs.range(ROWS), 12)
          .mapPartitionsToPair(PeerConnectionBoundTest::slowly)
          .reduceByKey(Long::sum, REDUCE_TASKS);
      Map<Integer, Long> sums = new TreeMap<>(reduced.collectAsMap());
      Map<Integer, Long> expected = new TreeMap<>();
      SharedJobs.range(ROWS).forEach(i -> expected.merge(i % 1000, (long) i, Long::sum));
      assertEquals(expected, sums);
      sc.sc().listenerBus().waitUntilEmpty(10_000);
      assertEquals(List.of(), fetchFailures.messages(), "fetch failures");

      List<TransportReport> reports = TransportReports.collect(sc);
      assertEquals(EXECUTORS, reports.size(), reports.toString());
      // The scheduler spreads the map tasks but does not promise each executor one: at least two
      // executors hold map output, so every reduce task reads two peers or more through its one
      // connection.
      assertTrue(reports.stream().filter(r -> r.registeredMapOutputs() >= 1).count() >= 2,
          "map output on fewer than two executors: " + reports);
      long evictions = 0;
      for (TransportReport r : reports) {
        assertTrue(r.bytesRead() > 0, r.toString());
        assertEquals(1, r.maxPeerConnections(), r.toString());
        assertTrue(r.peerConnectionsPeak() <= 1, "more than one connection to peers at once: " + r);
        assertEquals(0, r.peerConnectionWaitTimeouts(), r.toString());
        evictions += r.peerConnectionEvictions();
      }
      // A reduce task that reads several executors through one connection closes it for the next
      // peer, but opens each peer once: it asks the next executor for ranges only when the one before
      // is READ, and starts with the peer the task before it left connected.
      assertTrue(evictions >= 2, reports.toString());
      assertTrue(evictions <= (long) REDUCE_TASKS * (EXECUTORS - 1), evictions + " evictions: " + reports);
      // Until here the shuffle stays reachable, so that Spark's cleaner cannot remove it (and the
      // executors' registered map outputs with it) before the reports are taken.
      Reference.reachabilityFence(reduced);
    }
  }

  /**
   * RdmaShuffleManager on {@code EXECUTORS} executors with at most one connection to peers each,
   * the peers past it read as {@code peersBeyondBound} says, and every block crossing the network:
   * over tcp (no shm), an executor's own blocks too (no local reads).
   */
  static SparkConf boundToOneConnection(String appName, String peersBeyondBound) {
    return LocalCluster.conf(appName, true, EXECUTORS)
        .set(RdmaShuffleOption.MAX_PEER_CONNECTIONS.key(), "1")
        .set(RdmaShuffleOption.PEERS_BEYOND_BOUND.key(), peersBeyondBound)
        .set(RdmaShuffleOption.LOCAL_READS.key(), "false")
        .set("spark.shuffle.rdma.transport.shm.enabled", "false");
  }

  /** Rows as (row % 1000, row), after 300 ms: map tasks that take a moment, so that single-core executors share them. */
  static Iterator<Tuple2<Integer, Long>> slowly(Iterator<Integer> rows) throws InterruptedException {
    Thread.sleep(300);
    List<Tuple2<Integer, Long>> out = new ArrayList<>();
    rows.forEachRemaining(i -> out.add(new Tuple2<>(i % 1000, (long) i)));
    return out.iterator();
  }
}
