package io.sluice.spark.tables;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.apache.spark.SparkEnv;

/**
 * The tables' secret of one application where Spark authenticates: HMAC-SHA256 keyed with Spark's
 * secret over a label and the application id, in hex. Applications that share Spark's secret (a
 * standalone cluster's {@code spark.authenticate.secret}) so get secrets of their own: a token,
 * a signed drop or a data-plane session of one application is nothing to another.
 */
final class TablesSecret {
  private static final String LABEL = "sluice/tables secret";

  private TablesSecret() {}

  static String derive(String sparkSecret, String applicationId) {
    if (sparkSecret == null || sparkSecret.isEmpty()) {
      throw new TableException("spark.authenticate is on but Spark has no secret here");
    }
    if (applicationId == null || applicationId.isEmpty()) {
      throw new TableException("the application has no id yet");
    }
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(sparkSecret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
      mac.update(LABEL.getBytes(StandardCharsets.UTF_8));
      mac.update((byte) 0);
      return HexFormat.of().formatHex(mac.doFinal(applicationId.getBytes(StandardCharsets.UTF_8)));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is missing from this JVM", e);
    }
  }

  /**
   * The tables' secret in a task: the one the driver shipped (Spark does not authenticate), else
   * derived from the executor's own Spark secret and application id.
   */
  static String onExecutor(String shipped) {
    if (shipped != null) {
      return shipped;
    }
    SparkEnv env = SparkEnv.get();
    return derive(env.securityManager().getSecretKey(), env.conf().getAppId());
  }
}
