package io.sluice.perf.spark;

import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;

/**
 * Driver-side sums of the task metrics the benchmark reports beside {@code ShuffleReadTotals}:
 * executor CPU and run time, shuffle bytes written and read, and spills. Register with {@code
 * SparkContext.addSparkListener}; task ends arrive asynchronously, so wait for the listener bus
 * before {@link #snapshot}. Thread safe.
 */
final class TaskTotals extends SparkListener {
  private final AtomicLong cpuNs = new AtomicLong();
  private final AtomicLong runMs = new AtomicLong();
  private final AtomicLong writeBytes = new AtomicLong();
  private final AtomicLong readBytes = new AtomicLong();
  private final AtomicLong memorySpilled = new AtomicLong();
  private final AtomicLong diskSpilled = new AtomicLong();

  /**
   * A snapshot of the sums.
   *
   * @param cpuNs Spark's {@code executorCpuTime}: CPU of the task threads while they ran tasks
   * @param runMs Spark's {@code executorRunTime}
   * @param writeBytes shuffle bytes written by the map tasks
   * @param readBytes shuffle bytes read by the reduce tasks, remote and local
   * @param memorySpilled {@code memoryBytesSpilled}: in-memory size of what was spilled
   * @param diskSpilled {@code diskBytesSpilled}: what the spills wrote to disk
   */
  record Totals(long cpuNs, long runMs, long writeBytes, long readBytes, long memorySpilled, long diskSpilled) {
    Totals minus(Totals earlier) {
      return new Totals(cpuNs - earlier.cpuNs, runMs - earlier.runMs, writeBytes - earlier.writeBytes,
          readBytes - earlier.readBytes, memorySpilled - earlier.memorySpilled, diskSpilled - earlier.diskSpilled);
    }
  }

  @Override
  public void onTaskEnd(SparkListenerTaskEnd end) {
    TaskMetrics m = end.taskMetrics();
    if (m == null) {
      return;
    }
    cpuNs.addAndGet(m.executorCpuTime());
    runMs.addAndGet(m.executorRunTime());
    writeBytes.addAndGet(m.shuffleWriteMetrics().bytesWritten());
    readBytes.addAndGet(m.shuffleReadMetrics().totalBytesRead());
    memorySpilled.addAndGet(m.memoryBytesSpilled());
    diskSpilled.addAndGet(m.diskBytesSpilled());
  }

  Totals snapshot() {
    return new Totals(cpuNs.get(), runMs.get(), writeBytes.get(), readBytes.get(), memorySpilled.get(),
        diskSpilled.get());
  }
}
