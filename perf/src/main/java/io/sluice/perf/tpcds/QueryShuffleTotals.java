package io.sluice.perf.tpcds;

import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.shuffle.rdma.ShuffleReadTotals;

/** {@link ShuffleReadTotals} plus the bytes the map side wrote. Thread safe. */
final class QueryShuffleTotals extends ShuffleReadTotals {
  private final AtomicLong writeBytes = new AtomicLong();

  @Override
  public void onTaskEnd(SparkListenerTaskEnd end) {
    super.onTaskEnd(end);
    if (end.taskMetrics() != null) {
      writeBytes.addAndGet(end.taskMetrics().shuffleWriteMetrics().bytesWritten());
    }
  }

  long writeBytes() {
    return writeBytes.get();
  }
}
