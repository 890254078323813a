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
 */
public record Decision(Scope scope, String subject, Optional<String> sparkShuffleReason) {
  /** What a decision is about; each says in its own words what either outcome means. */
  public enum Scope {
    /** Once per process: whether this executor's shuffle transport started. */
    EXECUTOR("this executor uses Spark's sort shuffle", "this executor serves and reads shuffle output through"
        + " its shuffle transport"),
    /** Once per shuffle on each executor: whether its map outputs are registered and read by READs. */
    SHUFFLE("Spark's sort shuffle writes and reads it here", "its map outputs are registered and read"
        + " through the shuffle transport"),
    /** Once per reduce task: whether the task READs its remote blocks. */
    REDUCE_TASK("reading through Spark's sort shuffle", "reading through the shuffle transport");

    private final String sparkShuffle;
    private final String transport;

    Scope(String sparkShuffle, String transport) {
      this.sparkShuffle = sparkShuffle;
      this.transport = transport;
    }
  }

  public Decision {
    Objects.requireNonNull(scope, "scope");
    Objects.requireNonNull(subject, "subject");
    Objects.requireNonNull(sparkShuffleReason, "sparkShuffleReason");
    if (subject.isBlank()) {
      throw new IllegalArgumentException("a fallback decision needs a subject");
    }
  }

  /** The transport is used. */
  public static Decision transport(Scope scope, String subject) {
    return new Decision(scope, subject, Optional.empty());
  }

  /** Spark's sort shuffle is used, for {@code reason}. */
  public static Decision sparkShuffle(Scope scope, String subject, String reason) {
    return new Decision(scope, subject, Optional.of(reason));
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
