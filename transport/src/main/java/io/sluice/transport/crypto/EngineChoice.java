package io.sluice.transport.crypto;

import java.util.Optional;
import java.util.function.Function;

/**
 * The AES-GCM engine a transport uses, decided once when it opens, with the reason in one line.
 *
 * <p>{@code auto} takes OpenSSL when its library loads and passes its {@link
 * AesGcmEngine#selfCheck self-check}, else the JDK's; {@code openssl} insists on OpenSSL and fails
 * the open when it cannot be used; {@code jdk} takes the JDK's. Whatever fails, the outcome is
 * another engine or no transport, never an unprotected connection. Immutable.
 */
public record EngineChoice(AesGcmEngine engine, String reason) {
  /** The preferences {@code sluice.transport.encryption.engine} accepts. */
  public static final String AUTO = "auto";
  public static final String OPENSSL = "openssl";
  public static final String JDK = "jdk";
  /**
   * A system property that stands in for {@code auto}: a way to force an engine in every
   * transport of a JVM (a benchmark, a test run) without touching its configuration.
   */
  public static final String PROPERTY = "sluice.transport.encryption.engine";

  /**
   * Chooses for {@code preference} (auto, openssl or jdk).
   *
   * @throws IllegalStateException if openssl was asked for and cannot be used, naming why
   */
  public static EngineChoice choose(String preference) {
    return choose(preference, System.getProperty(PROPERTY, ""), AesGcmEngine::selfCheck);
  }

  /**
   * As above, with {@code property} standing for the system property's value (empty when unset)
   * and {@code check} for each engine's self-check.
   */
  static EngineChoice choose(String preference, String property, Function<AesGcmEngine, Optional<String>> check) {
    String asked = preference;
    if (asked.equals(AUTO) && !property.isEmpty()) {
      asked = property;
    }
    switch (asked) {
      case JDK:
        return new EngineChoice(AesGcmEngine.JDK, "jdk asked for");
      case OPENSSL: {
        Optional<String> problem = check.apply(AesGcmEngine.OPENSSL);
        if (problem.isPresent()) {
          throw new IllegalStateException("AES-GCM engine openssl was asked for and cannot be used: " + problem.get());
        }
        return new EngineChoice(AesGcmEngine.OPENSSL, "openssl asked for");
      }
      case AUTO: {
        Optional<String> problem = check.apply(AesGcmEngine.OPENSSL);
        return problem
            .map(p -> new EngineChoice(AesGcmEngine.JDK, "openssl unusable (" + p + ")"))
            .orElseGet(() -> new EngineChoice(AesGcmEngine.OPENSSL, "openssl loaded and passed its self-check"));
      }
      default:
        throw new IllegalArgumentException("AES-GCM engine '" + asked + "': expected auto, openssl or jdk"
            + (asked.equals(property) ? " (from -D" + PROPERTY + ")" : ""));
    }
  }
}
