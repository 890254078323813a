package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Comparisons with spark.authenticate=true in which every block crosses the transport's tcp data
 * path: local reads and shared memory are off, so a reducer READs even its own executor's blocks
 * (a connection to itself). Subclasses add their settings on top.
 */
abstract class AuthenticatedTcpComparison extends ComparisonSupport {
  AuthenticatedTcpComparison(String name, Map<String, String> settings, List<Job> jobs) {
    super(name, authenticatedTcpOnly(settings), jobs);
  }

  private static Map<String, String> authenticatedTcpOnly(Map<String, String> settings) {
    Map<String, String> all = new HashMap<>(settings);
    all.put("spark.authenticate", "true");
    all.put("spark.authenticate.secret", "sluice-test-secret");
    all.put(RdmaShuffleOption.LOCAL_READS.key(), "false");
    all.put("spark.shuffle.rdma.transport.shm.enabled", "false");
    return all;
  }

  @Test
  void readsWentThroughTheTransportsTcpPath() throws Exception {
    RddJobs.groupByKey(sc);
    assertTransportsActive();
    assertRemoteBytesMoved();
    Map<String, Long> paths = bytesReadByPath();
    assertTrue(paths.getOrDefault("tcp", 0L) > 0 && !paths.containsKey("shm"), "data paths: " + paths);
  }
}
