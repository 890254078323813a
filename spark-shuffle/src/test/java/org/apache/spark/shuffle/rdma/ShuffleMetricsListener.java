package org.apache.spark.shuffle.rdma;

import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.scheduler.SparkListenerTaskEnd;

/**
 * {@link ShuffleReadTotals} that also counts tasks that ended in a fetch failure, as the driver
 * sees them. Thread safe.
 */
final class ShuffleMetricsListener extends ShuffleReadTotals {
  final AtomicLong fetchFailures = new AtomicLong();

  @Override
  public void onTaskEnd(SparkListenerTaskEnd end) {
    if (end.reason() instanceof org.apache.spark.FetchFailed) {
      fetchFailures.incrementAndGet();
    }
    super.onTaskEnd(end);
  }
}
