package io.sluice.perf.cluster;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.FetchFailed;
import org.apache.spark.executor.ShuffleReadMetrics;
import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorAdded;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;

/**
 * What the driver saw of an application, for checks and reports: stage attempts (a retried stage
 * has an attempt number above 0), fetch failures, executors added and removed, and Spark's shuffle
 * read metrics summed over finished tasks. Register it with {@code addSparkListener}; read it
 * with {@link #snapshot()} after {@code listenerBus().waitUntilEmpty}. Thread safe.
 */
public final class JobAudit extends SparkListener {
  /** Totals since the listener was added; subtract two snapshots for one job. */
  public record Totals(int stagesSubmitted, int stageRetries, int fetchFailures, int executorsAdded,
      int executorsRemoved, long fetchWaitMs, long remoteBytes, long localBytes, long recordsRead,
      List<String> retriedStages) {
    public Totals minus(Totals earlier) {
      return new Totals(stagesSubmitted - earlier.stagesSubmitted, stageRetries - earlier.stageRetries,
          fetchFailures - earlier.fetchFailures, executorsAdded - earlier.executorsAdded,
          executorsRemoved - earlier.executorsRemoved, fetchWaitMs - earlier.fetchWaitMs,
          remoteBytes - earlier.remoteBytes, localBytes - earlier.localBytes, recordsRead - earlier.recordsRead,
          retriedStages.subList(earlier.retriedStages.size(), retriedStages.size()));
    }
  }

  private int stagesSubmitted;
  private int stageRetries;
  private int fetchFailures;
  private int executorsAdded;
  private int executorsRemoved;
  private long fetchWaitMs;
  private long remoteBytes;
  private long localBytes;
  private long recordsRead;
  private final List<String> retriedStages = new ArrayList<>();

  @Override
  public synchronized void onStageSubmitted(SparkListenerStageSubmitted submitted) {
    stagesSubmitted++;
    if (submitted.stageInfo().attemptNumber() > 0) {
      stageRetries++;
      retriedStages.add(submitted.stageInfo().stageId() + "." + submitted.stageInfo().attemptNumber() + " ("
          + submitted.stageInfo().name() + ")");
    }
  }

  @Override
  public synchronized void onTaskEnd(SparkListenerTaskEnd end) {
    if (end.reason() instanceof FetchFailed) {
      fetchFailures++;
    }
    TaskMetrics m = end.taskMetrics();
    if (m != null) {
      ShuffleReadMetrics r = m.shuffleReadMetrics();
      fetchWaitMs += r.fetchWaitTime();
      remoteBytes += r.remoteBytesRead();
      localBytes += r.localBytesRead();
      recordsRead += r.recordsRead();
    }
  }

  @Override
  public synchronized void onExecutorAdded(SparkListenerExecutorAdded added) {
    executorsAdded++;
  }

  @Override
  public synchronized void onExecutorRemoved(SparkListenerExecutorRemoved removed) {
    executorsRemoved++;
  }

  public synchronized Totals snapshot() {
    return new Totals(stagesSubmitted, stageRetries, fetchFailures, executorsAdded, executorsRemoved, fetchWaitMs,
        remoteBytes, localBytes, recordsRead, List.copyOf(retriedStages));
  }
}
