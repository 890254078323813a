package org.apache.spark.shuffle.rdma;

import io.sluice.spark.shuffle.ShuffleFileRoots;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.config.ConfigKey;
import io.sluice.transport.config.ConfigSource;
import io.sluice.transport.config.TransportKeys;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.apache.spark.SecurityManager;
import org.apache.spark.SparkConf;
import org.apache.spark.util.Utils;

/**
 * Builds the transport's configuration from a SparkConf: {@code spark.shuffle.rdma.transport.X}
 * is passed through as {@code sluice.transport.X}; the secret and the advertised host are filled
 * in from Spark unless set explicitly. Spark's security settings are honoured, never dropped:
 * {@code spark.network.crypto.enabled=true} turns on {@code sluice.transport.encryption} (no
 * pass-through key can turn it off), and {@code spark.io.encryption.enabled=true} tells the
 * transport that shuffle files are already ciphertext, so verbs may still carry them. {@link
 * #validate} reads every setting with the declarations the transport and the manager read them
 * with, so a value either would refuse is refused at start-up, naming the Spark key.
 */
final class SparkTransportConfig {
  static final String SPARK_PREFIX = "spark.shuffle.rdma.transport.";
  static final String NETWORK_CRYPTO = "spark.network.crypto.enabled";
  static final String IO_ENCRYPTION = "spark.io.encryption.enabled";

  private SparkTransportConfig() {}

  /**
   * The transport configuration of this process. Unless set, the shm roots below which same-host
   * peers' shuffle files are mapped come from this executor's block-manager folders ({@link
   * ShuffleFileRoots}); the driver passes none.
   */
  static TransportConfig from(SparkConf conf, SecurityManager security, List<Path> blockManagerDirs)
      throws IOException {
    String secret = secret(conf, security);
    String advertise = conf.get(SPARK_PREFIX + "advertiseHost", "").trim();
    String host = advertise.isEmpty() ? Utils.localHostName() : advertise;
    java.util.Map<String, String> fromSpark = new java.util.HashMap<>();
    fromSpark.put(TransportKeys.SECRET.key(), secret);
    fromSpark.put(TransportKeys.ADVERTISE_HOST.key(), host);
    if (conf.getBoolean(NETWORK_CRYPTO, false)) {
      fromSpark.put(TransportKeys.ENCRYPTION.key(), "true");
    }
    if (conf.getBoolean(IO_ENCRYPTION, false)) {
      fromSpark.put(TransportKeys.DATA_ENCRYPTED_AT_REST.key(), "true");
    }
    if (!conf.contains(SPARK_PREFIX + TransportKeys.suffix(TransportKeys.SHM_TRUSTED_FILE_ROOTS.key()))) {
      fromSpark.put(TransportKeys.SHM_TRUSTED_FILE_ROOTS.key(), ShuffleFileRoots.of(blockManagerDirs).stream()
          .map(Path::toString).collect(Collectors.joining(",")));
    }
    return passThrough(conf).with(fromSpark);
  }

  /** The SparkConf as a source of raw values by Spark key. */
  static ConfigSource source(SparkConf conf) {
    return key -> conf.contains(key) ? Optional.of(conf.get(key)) : Optional.empty();
  }

  /** The {@code spark.shuffle.rdma.transport.*} keys as the transport's {@code sluice.transport.*} keys. */
  static TransportConfig passThrough(SparkConf conf) {
    ConfigSource spark = source(conf);
    return key -> key.startsWith(TransportKeys.PREFIX)
        ? spark.get(SPARK_PREFIX + TransportKeys.suffix(key))
        : Optional.empty();
  }

  /**
   * Reads every {@code spark.shuffle.rdma.*} setting and every transport key passed through with
   * its declaration. @throws IllegalArgumentException naming the Spark key and the value that is invalid
   */
  static void validate(SparkConf conf) {
    ConfigSource spark = source(conf);
    for (ConfigKey<?> k : RdmaShuffleOption.all()) {
      k.from(spark);
    }
    TransportConfig transport = passThrough(conf);
    for (ConfigKey<?> k : TransportKeys.all()) {
      try {
        k.from(transport);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(SPARK_PREFIX + TransportKeys.suffix(k.key()) + ": " + e.getMessage(), e);
      }
    }
  }

  /**
   * The secret every transport of this application shares. With {@code spark.authenticate=true}
   * it is Spark's own application secret, so only processes Spark trusts can READ shuffle data.
   * Without Spark authentication there is no secret to share, so it is derived from the
   * application id, which every driver and executor of the application knows; this keeps other
   * applications' processes out by mistake but is not a defence against someone who learns the
   * application id (which is no weaker than Spark's own unauthenticated block transfer).
   */
  static String secret(SparkConf conf, SecurityManager security) {
    String explicit = conf.get(SPARK_PREFIX + "secret", "").trim();
    if (!explicit.isEmpty()) {
      return explicit;
    }
    if (security != null && security.isAuthenticationEnabled()) {
      return security.getSecretKey();
    }
    String appId = conf.get("spark.app.id", "").trim();
    if (appId.isEmpty()) {
      throw new IllegalStateException(
          "spark.app.id is not set yet; the shuffle transport secret is derived from it");
    }
    return sha256Hex("sluice-spark-shuffle/" + appId);
  }

  private static String sha256Hex(String text) {
    try {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      return HexFormat.of().formatHex(md.digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }
}
