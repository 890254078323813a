package io.sluice.spark.shuffle.fallback;

import io.sluice.spark.shuffle.fallback.Decision.Scope;

/**
 * Why a {@link Decision} chose Spark's sort shuffle, as a stable key that metrics count by (the
 * decision's text says the same for a person, with the names of the executors involved).
 */
public enum FallbackReason {
  /** The executor's transport could not start. */
  TRANSPORT_START_FAILED(Scope.EXECUTOR, "transportStartFailed"),
  /** A shuffle on an executor without a transport. */
  NO_TRANSPORT(Scope.SHUFFLE, "noTransport"),
  /** Push-based shuffle merges the shuffle's blocks. */
  PUSH_MERGE(Scope.SHUFFLE, "pushMerge"),
  /** A reduce task's blocks are not plain shuffle blocks. */
  UNSUPPORTED_BLOCK(Scope.REDUCE_TASK, "unsupportedBlock"),
  /** An executor holding a reduce task's blocks was removed; the shuffle service serves them. */
  EXECUTOR_REMOVED(Scope.REDUCE_TASK, "executorRemoved"),
  /** An executor holding a reduce task's blocks has no transport. */
  PEER_WITHOUT_TRANSPORT(Scope.REDUCE_TASK, "peerWithoutTransport");

  private final Scope scope;
  private final String key;

  FallbackReason(Scope scope, String key) {
    this.scope = scope;
    this.key = key;
  }

  public Scope scope() {
    return scope;
  }

  /** The metric that counts it: {@code fallback.<scope>.<reason>}, e.g. {@code fallback.reduceTask.unsupportedBlock}. */
  public String metricName() {
    return "fallback." + scope.metricName() + "." + key;
  }
}
