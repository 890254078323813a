package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A transport size written in Spark's syntax ({@code spark.shuffle.rdma.transport.maxMessageBytes=16m})
 * is read by the executors' transports as the manager reads it: every executor's transport starts
 * (none falls back to the sort shuffle), the reducers READ through it, and the answers match
 * Spark's own shuffle. Local reads are off, so every block crosses a transport.
 */
class SizeSuffixShuffleTest extends ComparisonSupport {
  SizeSuffixShuffleTest() {
    super("size-suffix", Map.of(
        "spark.shuffle.rdma.transport.maxMessageBytes", "16m",
        "spark.shuffle.rdma.transport.ioTimeoutMs", "30s",
        RdmaShuffleOption.LOOKUP_TIMEOUT.key(), "30s",
        RdmaShuffleOption.LOCAL_READS.key(), "false"), List.of(
        new Job("reduceByKey", RddJobs::reduceByKey),
        new Job("groupByKey", RddJobs::groupByKey)));
  }

  @Test
  void theExecutorsTransportsCarriedTheShuffle() throws Exception {
    RddJobs.sortByKey(sc);
    assertTransportsActive();
    assertRemoteBytesMoved();
    Map<String, Long> paths = bytesReadByPath();
    long total = paths.values().stream().mapToLong(Long::longValue).sum();
    assertTrue(total > 0, "no bytes were READ through the executors' transports: " + paths);
  }
}
