package org.apache.spark.shuffle.rdma;

import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.executor.ShuffleReadMetrics;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;

/**
 * Driver-side sums of Spark's shuffle read metrics over every finished task, for reports and
 * benchmarks. Register with {@code SparkContext.addSparkListener}; Spark delivers task ends
 * asynchronously, so wait for the listener bus before reading. Thread safe; subclasses that
 * override {@link #onTaskEnd} call it.
 */
public class ShuffleReadTotals extends SparkListener {
  private final AtomicLong remoteBytes = new AtomicLong();
  private final AtomicLong remoteBlocks = new AtomicLong();
  private final AtomicLong localBytes = new AtomicLong();
  private final AtomicLong localBlocks = new AtomicLong();
  private final AtomicLong fetchWaitMs = new AtomicLong();
  private final AtomicLong records = new AtomicLong();
  private final AtomicLong tasks = new AtomicLong();

  /** A snapshot of the sums. */
  public record Totals(long remoteBytes, long remoteBlocks, long localBytes, long localBlocks, long fetchWaitMs,
      long records, long tasks) {
    public Totals minus(Totals earlier) {
      return new Totals(remoteBytes - earlier.remoteBytes, remoteBlocks - earlier.remoteBlocks,
          localBytes - earlier.localBytes, localBlocks - earlier.localBlocks, fetchWaitMs - earlier.fetchWaitMs,
          records - earlier.records, tasks - earlier.tasks);
    }
  }

  @Override
  public void onTaskEnd(SparkListenerTaskEnd end) {
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
    tasks.incrementAndGet();
  }

  public Totals snapshot() {
    return new Totals(remoteBytes.get(), remoteBlocks.get(), localBytes.get(), localBlocks.get(), fetchWaitMs.get(),
        records.get(), tasks.get());
  }
}
