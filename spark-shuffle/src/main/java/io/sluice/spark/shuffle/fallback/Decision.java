package io.sluice.spark.shuffle.fallback;

import java.util.Objects;
import java.util.Optional;

/**
 * One decision of the {@link FallbackPolicy}: whether {@code subject} (an executor, a shuffle on
 * an executor, or a reduce task) goes through the shuffle transport or through Spark's sort
 * shuffle, and if the latter, why. Immutable.
 *
 * @param scope what was decided about
 * @param subject who it was decided for, as a log reader names it ("executor 1", "shuffle 3 on
 *     executor 1", "shuffle 3 reduce 2")
 * @param sparkShuffleReason why Spark's sort shuffle is used, or empty when the transport is
 * @param fallbackReason the same reason as a key that metrics count by; empty when the transport
 *     is used, or for a reason no key names
 */
public record Decision(Scope scope, String subject, Optional<String> sparkShuffleReason,
    Optional<FallbackReason> fallbackReason) {
  /** What a decision is about; each says in its own words what either outcome means. */
  public enum Scope {
    /** Once per process: whether this executor's shuffle transport started. */
    EXECUTOR("this executor uses Spark's sort shuffle", "this executor serves and reads shuffle output through"
        + " its shuffle transport"),
    /** Once per shuffle on each executor: whether its map outputs are registered and read by READs. */
    SHUFFLE("Spark's sort shuffle writes and reads it here", "its map outputs are registered and read"
        + " through the shuffle transport"),
    /** Once per reduce task: whether the task READs its remote blocks. */
    REDUCE_TASK("reading through Spark's sort shuffle", "reading through the shuffle transport", "reduceTask");

    private final String sparkShuffle;
    private final String transport;
    private final String metricName;

    Scope(String sparkShuffle, String transport) {
      this(sparkShuffle, transport, null);
    }

    Scope(String sparkShuffle, String transport, String metricName) {
      this.sparkShuffle = sparkShuffle;
      this.transport = transport;
      this.metricName = metricName != null ? metricName : name().toLowerCase(java.util.Locale.ROOT);
    }

    /** The scope as metric names spell it: executor, shuffle, reduceTask. */
    public String metricName() {
      return metricName;
    }
  }

  public Decision {
    Objects.requireNonNull(scope, "scope");
    Objects.requireNonNull(subject, "subject");
    Objects.requireNonNull(sparkShuffleReason, "sparkShuffleReason");
    Objects.requireNonNull(fallbackReason, "fallbackReason");
    if (fallbackReason.isPresent() && (sparkShuffleReason.isEmpty() || fallbackReason.get().scope() != scope)) {
      throw new IllegalArgumentException("fallback reason " + fallbackReason.get() + " does not fit a " + scope
          + " decision " + (sparkShuffleReason.isEmpty() ? "that uses the transport" : ""));
    }
    if (subject.isBlank()) {
      throw new IllegalArgumentException("a fallback decision needs a subject");
    }
  }

  /** A decision whose reason, if any, no {@link FallbackReason} names. */
  public Decision(Scope scope, String subject, Optional<String> sparkShuffleReason) {
    this(scope, subject, sparkShuffleReason, Optional.empty());
  }

  /** The transport is used. */
  public static Decision transport(Scope scope, String subject) {
    return new Decision(scope, subject, Optional.empty());
  }

  /** Spark's sort shuffle is used, for {@code reason}, which {@code key} names. */
  public static Decision sparkShuffle(Scope scope, String subject, FallbackReason key, String reason) {
    return new Decision(scope, subject, Optional.of(reason), Optional.of(key));
  }

  public boolean usesSparkShuffle() {
    return sparkShuffleReason.isPresent();
  }

  /** The decision's one log line: "Shuffle 3 reduce 2: executor 2 has no shuffle transport; reading through ...". */
  public String logLine() {
    String who = Character.toUpperCase(subject.charAt(0)) + subject.substring(1);
    return sparkShuffleReason.map(r -> who + ": " + r + "; " + scope.sparkShuffle)
        .orElse(who + ": " + scope.transport);
  }
}
