package org.apache.spark.shuffle.rdma;

import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.executor.ShuffleReadMetrics;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;

/** Sums the shuffle read metrics of every finished task, as the driver sees them. Thread safe. */
final class ShuffleMetricsListener extends SparkListener {
  final AtomicLong remoteBytes = new AtomicLong();
  final AtomicLong remoteBlocks = new AtomicLong();
  final AtomicLong localBytes = new AtomicLong();
  final AtomicLong localBlocks = new AtomicLong();
  final AtomicLong fetchWaitMs = new AtomicLong();
  final AtomicLong records = new AtomicLong();
  final AtomicLong fetchFailures = new AtomicLong();

  @Override
  public void onTaskEnd(SparkListenerTaskEnd end) {
    if (end.reason() instanceof org.apache.spark.FetchFailed) {
      fetchFailures.incrementAndGet();
    }
    if (end.taskMetrics() == null) {
      return;
    }
    ShuffleReadMetrics m = end.taskMetrics().shuffleReadMetrics();
    remoteBytes.addAndGet(m.remoteBytesRead());
    remoteBlocks.addAndGet(m.remoteBlocksFetched());
    localBytes.addAndGet(m.localBytesRead());
    localBlocks.addAndGet(m.localBlocksFetched());
    fetchWaitMs.addAndGet(m.fetchWaitTime());
    records.addAndGet(m.recordsRead());
  }

  void reset() {
    remoteBytes.set(0);
    remoteBlocks.set(0);
    localBytes.set(0);
    localBlocks.set(0);
    fetchWaitMs.set(0);
    records.set(0);
  }
}
