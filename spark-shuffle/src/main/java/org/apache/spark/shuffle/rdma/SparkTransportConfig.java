package org.apache.spark.shuffle.rdma;

import io.sluice.spark.shuffle.ShuffleFileRoots;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.Transports;
import io.sluice.transport.config.ConfigKey;
import io.sluice.transport.config.ConfigSource;
import io.sluice.transport.config.TransportKeys;
import java.io.IOException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
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
  static TransportConfig from(SparkConf conf, SecurityManager security, Supplier<String> fromDriver,
      List<Path> blockManagerDirs) throws IOException {
    String secret = secret(conf, security).orElseGet(fromDriver);
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
    if (!conf.contains(SPARK_PREFIX + TransportKeys.suffix(Transports.VERBS_READ_DOMAINS))) {
      // Map outputs are readable by every holder of the transport secret (ANY_PEER; any peer may
      // ask for any map output's ranges), so one registration in a domain the peers share loses
      // no isolation the shuffle has, and keeps pinned memory from growing with the executors.
      fromSpark.put(Transports.VERBS_READ_DOMAINS, "shared");
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
    // The providers' own keys too (verbs), whether or not this host can run them.
    for (ConfigKey<?> k : Transports.keys()) {
      try {
        k.from(transport);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(SPARK_PREFIX + TransportKeys.suffix(k.key()) + ": " + e.getMessage(), e);
      }
    }
  }

  /**
   * Warnings for the {@code spark.shuffle.rdma.*} keys set in {@code conf} that neither the manager
   * nor the transport declares, each naming the closest known key.
   */
  static List<String> unknownKeys(SparkConf conf) {
    List<String> known = new java.util.ArrayList<>();
    for (ConfigKey<?> k : RdmaShuffleOption.all()) {
      known.add(k.key());
    }
    for (ConfigKey<?> k : Transports.keys()) {
      known.add(SPARK_PREFIX + TransportKeys.suffix(k.key()));
    }
    known.add(RdmaShuffleManager.TEST_OPEN_DELAY.key());
    List<String> present = java.util.Arrays.stream(conf.getAll()).map(t -> t._1()).toList();
    return ConfigKey.unknown(present, "spark.shuffle.rdma.", known);
  }

  /**
   * The secret every transport of this application shares, when the process knows it itself: an
   * explicit {@code spark.shuffle.rdma.transport.secret}, or with {@code spark.authenticate=true}
   * Spark's own application secret, so only processes Spark trusts can READ shuffle data. Empty
   * otherwise: then the driver makes a random one ({@link #newSecret}) and hands it to executors
   * over Spark's RPC.
   */
  static Optional<String> secret(SparkConf conf, SecurityManager security) {
    String explicit = conf.get(SPARK_PREFIX + "secret", "").trim();
    if (!explicit.isEmpty()) {
      return Optional.of(explicit);
    }
    if (security != null && security.isAuthenticationEnabled()) {
      return Optional.of(security.getSecretKey());
    }
    return Optional.empty();
  }

  /** A random secret for one application: 32 bytes from a strong source, as hex digits. */
  static String newSecret() {
    byte[] bytes = new byte[32];
    new SecureRandom().nextBytes(bytes);
    return HexFormat.of().formatHex(bytes);
  }
}
