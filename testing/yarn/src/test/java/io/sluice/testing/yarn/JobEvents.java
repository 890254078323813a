package io.sluice.testing.yarn;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.ExecutorLostFailure;
import org.apache.spark.FetchFailed;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;

/**
 * What the scheduler told its listeners, as far as the YARN tests ask: why executors were
 * removed, stages submitted, and tasks lost with their executor or failed to fetch. Call {@code
 * sc.sc().listenerBus().waitUntilEmpty} before reading it. Thread safe (the listener bus writes,
 * the test reads).
 */
final class JobEvents extends SparkListener {
  /** A stage attempt that was submitted. */
  record Stage(int stageId, int attempt) {}

  /** A task attempt that ended because its executor was lost. */
  record LostTask(int stageId, int partition, int attempt, String executorId) {}

  private final Map<String, String> removed = new ConcurrentHashMap<>();
  private final List<Stage> stages = new ArrayList<>(); // guarded by this
  private final List<LostTask> lost = new ArrayList<>(); // guarded by this
  private int fetchFailures; // guarded by this

  @Override
  public void onExecutorRemoved(SparkListenerExecutorRemoved r) {
    removed.put(r.executorId(), r.reason());
  }

  @Override
  public synchronized void onStageSubmitted(SparkListenerStageSubmitted submitted) {
    stages.add(new Stage(submitted.stageInfo().stageId(), submitted.stageInfo().attemptNumber()));
  }

  @Override
  public synchronized void onTaskEnd(SparkListenerTaskEnd end) {
    if (end.reason() instanceof ExecutorLostFailure f) {
      lost.add(new LostTask(end.stageId(), end.taskInfo().partitionId(), end.taskInfo().attemptNumber(),
          f.execId()));
    } else if (end.reason() instanceof FetchFailed) {
      fetchFailures++;
    }
  }

  /** Why the scheduler removed an executor, if it did. */
  Optional<String> removalReason(String executorId) {
    return Optional.ofNullable(removed.get(executorId));
  }

  /** The executors the scheduler removed, for whatever reason. */
  List<String> removedExecutors() {
    return List.copyOf(removed.keySet());
  }

  synchronized List<Stage> stages() {
    return List.copyOf(stages);
  }

  synchronized List<LostTask> lostTasks() {
    return List.copyOf(lost);
  }

  synchronized int fetchFailures() {
    return fetchFailures;
  }
}
