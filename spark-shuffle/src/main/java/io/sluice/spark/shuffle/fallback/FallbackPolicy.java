package io.sluice.spark.shuffle.fallback;

import io.sluice.spark.shuffle.fallback.Decision.Scope;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place that decides when the shuffle manager leaves its transport for Spark's own sort
 * shuffle, so that a job never fails because the transport is unavailable. Three decisions, each
 * with its reason, each logged in one line ({@link Decision#logLine}):
 * <ul>
 *   <li>per executor, once per process: the transport could not start here, so this executor
 *       writes and reads exactly as Spark's sort shuffle;</li>
 *   <li>per shuffle, once on each executor: a shuffle goes through Spark's writer and reader when
 *       this executor has no transport, or when push-based shuffle merges its blocks (Spark's
 *       reader reads merged blocks; READs do not);</li>
 *   <li>per reduce task: the task reads through Spark's reader when its blocks are not plain
 *       shuffle blocks, or when an executor holding them is gone or has no transport ({@link
 *       ReadRoute}).</li>
 * </ul>
 * The rules are static and stateless ({@link #executorRule}, {@link #shuffleRule}, {@link
 * #reduceTaskRule}); an instance remembers the executor's and each shuffle's decision, so they are
 * made and logged once. Reduce-task decisions are made afresh for every task (executors come and
 * go); those that fall back are logged at info, the others at debug.
 *
 * <p>Thread safe: task threads decide concurrently; one decision per shuffle wins.
 */
public final class FallbackPolicy {
  private static final Logger LOG = LoggerFactory.getLogger(FallbackPolicy.class);

  private final Consumer<Decision> log;
  private final Map<Integer, Decision> shuffles = new ConcurrentHashMap<>();
  private final FallbackCounts counts = new FallbackCounts();
  private Decision executor; // guarded by this

  /** A policy that logs its decisions through this class's logger. */
  public FallbackPolicy() {
    this(FallbackPolicy::logToSlf4j);
  }

  /** A policy that hands each decision, once made, to {@code log}. */
  FallbackPolicy(Consumer<Decision> log) {
    this.log = d -> {
      counts.count(d);
      log.accept(d);
    };
  }

  /** How many decisions of each kind this policy made. */
  public FallbackCounts counts() {
    return counts;
  }

  private static void logToSlf4j(Decision d) {
    if (d.scope() == Scope.EXECUTOR && d.usesSparkShuffle()) {
      LOG.warn(d.logLine());
    } else if (d.scope() == Scope.REDUCE_TASK && !d.usesSparkShuffle()) {
      LOG.debug(d.logLine());
    } else {
      LOG.info(d.logLine());
    }
  }

  /** Whether an executor whose transport failed, or did not fail, to start uses it. */
  public static Decision executorRule(String executorId, Optional<String> transportStartFailure) {
    String subject = "executor " + executorId;
    return transportStartFailure
        .map(why -> Decision.sparkShuffle(Scope.EXECUTOR, subject, FallbackReason.TRANSPORT_START_FAILED,
            "the shuffle transport could not start: " + why))
        .orElseGet(() -> Decision.transport(Scope.EXECUTOR, subject));
  }

  /** Whether a shuffle goes through the transport on an executor. */
  public static Decision shuffleRule(int shuffleId, String executorId, boolean transportRunning,
      boolean pushMergeEnabled) {
    String subject = "shuffle " + shuffleId + " on executor " + executorId;
    if (!transportRunning) {
      return Decision.sparkShuffle(Scope.SHUFFLE, subject, FallbackReason.NO_TRANSPORT, "this executor has no shuffle transport");
    }
    if (pushMergeEnabled) {
      return Decision.sparkShuffle(Scope.SHUFFLE, subject, FallbackReason.PUSH_MERGE, "push-based shuffle merges its blocks");
    }
    return Decision.transport(Scope.SHUFFLE, subject);
  }

  /**
   * Whether a reduce task READs its remote blocks.
   *
   * @param unsupportedBlock why the task's blocks cannot be planned for READs (a block other than a
   *     plain shuffle block), or empty; when present nobody is asked anything
   * @param remoteExecutors the executors holding the task's remote blocks
   * @param shuffleServiceEnabled {@code spark.shuffle.service.enabled}
   * @param goneAmong which of the given executors the driver no longer counts as active
   * @param hasTransport whether an executor registered a shuffle transport
   */
  public static Decision reduceTaskRule(int shuffleId, int reduceId, Optional<String> unsupportedBlock,
      Collection<String> remoteExecutors, boolean shuffleServiceEnabled,
      Function<Collection<String>, Set<String>> goneAmong, Predicate<String> hasTransport) {
    String subject = "shuffle " + shuffleId + " reduce " + reduceId;
    if (unsupportedBlock.isPresent()) {
      return Decision.sparkShuffle(Scope.REDUCE_TASK, subject, FallbackReason.UNSUPPORTED_BLOCK,
          unsupportedBlock.get());
    }
    return ReadRoute.sparkReaderFallback(remoteExecutors, shuffleServiceEnabled, goneAmong, hasTransport)
        .map(f -> Decision.sparkShuffle(Scope.REDUCE_TASK, subject, f.key(), f.text()))
        .orElseGet(() -> Decision.transport(Scope.REDUCE_TASK, subject));
  }

  /**
   * Decides, once per process, whether this executor uses its transport, and logs it.
   *
   * @throws IllegalStateException if this process has decided already
   */
  public synchronized Decision decideExecutor(String executorId, Optional<String> transportStartFailure) {
    if (executor != null) {
      throw new IllegalStateException("the shuffle transport of this process was decided already: "
          + executor.logLine());
    }
    executor = executorRule(executorId, transportStartFailure);
    log.accept(executor);
    return executor;
  }

  /**
   * Decides a shuffle once on this executor, logging it; later calls return the first decision,
   * whatever they pass, until {@link #forgetShuffle}.
   */
  public Decision decideShuffle(int shuffleId, String executorId, boolean transportRunning,
      boolean pushMergeEnabled) {
    Decision[] made = new Decision[1];
    Decision d = shuffles.computeIfAbsent(shuffleId,
        id -> made[0] = shuffleRule(id, executorId, transportRunning, pushMergeEnabled));
    if (made[0] != null) {
      log.accept(made[0]);
    }
    return d;
  }

  /** Drops a shuffle's decision once the shuffle is unregistered. */
  public void forgetShuffle(int shuffleId) {
    shuffles.remove(shuffleId);
  }

  /** Decides one reduce task ({@link #reduceTaskRule}) and logs it. */
  public Decision decideReduceTask(int shuffleId, int reduceId, Optional<String> unsupportedBlock,
      Collection<String> remoteExecutors, boolean shuffleServiceEnabled,
      Function<Collection<String>, Set<String>> goneAmong, Predicate<String> hasTransport) {
    Decision d = reduceTaskRule(shuffleId, reduceId, unsupportedBlock, remoteExecutors, shuffleServiceEnabled,
        goneAmong, hasTransport);
    log.accept(d);
    return d;
  }
}
