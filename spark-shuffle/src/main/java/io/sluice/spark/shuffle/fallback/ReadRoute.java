package io.sluice.spark.shuffle.fallback;

import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The reduce-task rule of the {@link FallbackPolicy}: whether the task READs its remote blocks or
 * reads the whole task through Spark's sort-shuffle reader. READ needs every executor that holds
 * remote blocks to be alive and to serve them through a transport. Spark's reader is used when one
 * of them
 * <ul>
 *   <li>is gone while its map output stays registered: with the external shuffle service, Spark
 *       keeps a removed executor's output (dynamic allocation removed it) and its host's shuffle
 *       service serves the files; asked only when the service is enabled, since without it Spark
 *       unregisters a lost executor's output;</li>
 *   <li>has no shuffle transport (it fell back to Spark's shuffle).</li>
 * </ul>
 * Stateless.
 */
final class ReadRoute {
  private ReadRoute() {}

  /**
   * Why the task must read through Spark's reader, or empty when it may READ.
   *
   * @param remoteExecutors the executors holding the task's remote blocks
   * @param shuffleServiceEnabled {@code spark.shuffle.service.enabled}
   * @param goneAmong which of the given executors the driver no longer counts as active
   * @param hasTransport whether an executor registered a shuffle transport
   */
  static Optional<String> sparkReaderReason(Collection<String> remoteExecutors, boolean shuffleServiceEnabled,
      Function<Collection<String>, Set<String>> goneAmong, Predicate<String> hasTransport) {
    return sparkReaderFallback(remoteExecutors, shuffleServiceEnabled, goneAmong, hasTransport).map(Fallback::text);
  }

  /** Why Spark's reader, with its key; see {@link #sparkReaderReason}. */
  record Fallback(FallbackReason key, String text) {}

  /** As {@link #sparkReaderReason}, with the reason's key. */
  static Optional<Fallback> sparkReaderFallback(Collection<String> remoteExecutors, boolean shuffleServiceEnabled,
      Function<Collection<String>, Set<String>> goneAmong, Predicate<String> hasTransport) {
    Set<String> executors = new LinkedHashSet<>(remoteExecutors);
    if (executors.isEmpty()) {
      return Optional.empty();
    }
    // Gone first: a gone executor's transport address may still be known (and cached).
    if (shuffleServiceEnabled) {
      Set<String> gone = goneAmong.apply(executors);
      if (!gone.isEmpty()) {
        return Optional.of(new Fallback(FallbackReason.EXECUTOR_REMOVED, "executor(s) " + String.join(",", gone)
            + " removed; their output is served by the external shuffle service"));
      }
    }
    for (String id : executors) {
      if (!hasTransport.test(id)) {
        return Optional.of(new Fallback(FallbackReason.PEER_WITHOUT_TRANSPORT,
            "executor " + id + " has no shuffle transport"));
      }
    }
    return Optional.empty();
  }
}
