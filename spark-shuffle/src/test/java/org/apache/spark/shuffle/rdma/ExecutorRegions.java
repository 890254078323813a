package org.apache.spark.shuffle.rdma;

import io.sluice.transport.Eventually;
import java.util.Arrays;
import java.util.List;
import java.util.function.Predicate;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * Waits, on the driver, until the executors' transport regions are what a test expects. A READ
 * that failed or that its task abandoned frees its destination when the READ ends, and a revoked
 * region is freed when the last READ of it ends: both may come after the task, so a test asks
 * the executors ({@link ExecutorProbe#registrations}) until the regions settle, within {@link
 * Eventually#DEADLINE}. Stateless.
 */
final class ExecutorRegions {
  private ExecutorRegions() {}

  /** Waits until each executor's only live regions are its registered map outputs (no READ destination left). */
  static void awaitOnlyMapOutputs(JavaSparkContext sc) {
    await(sc, "live regions of every executor are its registered map outputs only (no leaked READ destination)",
        r -> r.get(0).equals(r.get(1)));
  }

  /** Waits until no executor has a registered map output or any other live region. */
  static void awaitNone(JavaSparkContext sc) {
    await(sc, "no registered map output and no live region on any executor",
        r -> r.get(0) == 0 && r.get(1) == 0);
  }

  private static void await(JavaSparkContext sc, String what, Predicate<List<Long>> settled) {
    Eventually.matches(what + "; per task {registered, live}", Eventually.DEADLINE,
        () -> ExecutorProbe.registrations(sc).stream().map(c -> Arrays.stream(c).boxed().toList()).toList(),
        all -> all.stream().allMatch(settled));
  }
}
