package io.sluice.spark.tables;

import java.io.Serializable;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.spark.SparkConf;
import scala.Tuple2;

/**
 * The Spark configuration keys of published tables, read where they apply: the driver's for the
 * catalog, each executor's own for its server and budget. Every value is checked when read; an
 * invalid one fails naming its key.
 */
public final class TablesConf {
  public static final String PREFIX = "spark.sluice.tables.";
  /** Bytes of published tables one executor may hold (Spark's size strings: 512m, 4g). */
  public static final String MEMORY = PREFIX + "memory";
  /** Without {@link #MEMORY}: this share of spark.memory.offHeap.size when off-heap memory is on, else of the executor's heap. */
  public static final String MEMORY_FRACTION = PREFIX + "memoryFraction";
  public static final double DEFAULT_MEMORY_FRACTION = 0.3;
  /** The port of the driver's catalog server (0: any free port). */
  public static final String CATALOG_PORT = PREFIX + "catalog.port";
  /** How long the tokens the catalog hands out for the executors' servers stay valid. */
  public static final String TOKEN_VALIDITY = PREFIX + "tokenValidity";
  public static final String DEFAULT_TOKEN_VALIDITY = "10m";
  /** Serve over TLS: by default whenever Spark's RPC SSL is on (spark.ssl.rpc.enabled or spark.ssl.enabled). */
  public static final String TLS = PREFIX + "tls";
  /** PEM certificate chain and PKCS#8 private key the Flight servers present over TLS; Spark's RPC ones by default. */
  public static final String TLS_CERT_CHAIN = PREFIX + "tls.certChain";
  public static final String TLS_PRIVATE_KEY = PREFIX + "tls.privateKey";
  /** Transport keys of the executors' data plane and of readers started here: spark.sluice.tables.transport.X is sluice.transport.X. */
  public static final String TRANSPORT_PREFIX = PREFIX + "transport.";
  /** Flight server keys: spark.sluice.tables.flight.X is sluice.flight.X. */
  public static final String FLIGHT_PREFIX = PREFIX + "flight.";

  private TablesConf() {}

  /** The executor's budget for published tables, in bytes. */
  static long memoryBudget(SparkConf conf, long heapBytes) {
    if (conf.contains(MEMORY)) {
      long bytes;
      try {
        bytes = conf.getSizeAsBytes(MEMORY);
      } catch (RuntimeException e) {
        throw new IllegalArgumentException(MEMORY + " must be a size such as 512m or 4g, got '" + conf.get(MEMORY) + "'");
      }
      if (bytes <= 0) {
        throw new IllegalArgumentException(MEMORY + " must be positive, got '" + conf.get(MEMORY) + "'");
      }
      return bytes;
    }
    double fraction;
    try {
      fraction = conf.getDouble(MEMORY_FRACTION, DEFAULT_MEMORY_FRACTION);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(MEMORY_FRACTION + " must be a number, got '" + conf.get(MEMORY_FRACTION) + "'");
    }
    if (!(fraction > 0 && fraction <= 1)) {
      throw new IllegalArgumentException(MEMORY_FRACTION + " must be in (0, 1], got " + fraction);
    }
    long offHeap = offHeapBytes(conf);
    return (long) (fraction * (offHeap > 0 ? offHeap : heapBytes));
  }

  /** Spark's off-heap memory when it is on, else 0. */
  private static long offHeapBytes(SparkConf conf) {
    return conf.getBoolean("spark.memory.offHeap.enabled", false)
        ? conf.getSizeAsBytes("spark.memory.offHeap.size", "0") : 0;
  }

  /** Where the budget comes from, for messages. */
  static String memoryBudgetSource(SparkConf conf) {
    if (conf.contains(MEMORY)) {
      return MEMORY + " = " + conf.get(MEMORY);
    }
    return conf.get(MEMORY_FRACTION, Double.toString(DEFAULT_MEMORY_FRACTION)) + " ("
        + MEMORY_FRACTION + ") of " + (offHeapBytes(conf) > 0 ? "spark.memory.offHeap.size" : "the executor's heap");
  }

  static int catalogPort(SparkConf conf) {
    int port = conf.getInt(CATALOG_PORT, 0);
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException(CATALOG_PORT + " must be a port (0 for any), got " + port);
    }
    return port;
  }

  static java.time.Duration tokenValidity(SparkConf conf) {
    long ms;
    try {
      ms = conf.getTimeAsMs(TOKEN_VALIDITY, DEFAULT_TOKEN_VALIDITY);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(TOKEN_VALIDITY + " must be a time such as 10m, got '" + conf.get(TOKEN_VALIDITY) + "'");
    }
    if (ms <= 0) {
      throw new IllegalArgumentException(TOKEN_VALIDITY + " must be positive");
    }
    return java.time.Duration.ofMillis(ms);
  }

  /** The certificate chain and key when tables are served over TLS; empty when they are not. */
  static Optional<String[]> tls(SparkConf conf) {
    boolean sparkSsl = conf.getBoolean("spark.ssl.rpc.enabled", conf.getBoolean("spark.ssl.enabled", false));
    boolean on = conf.getBoolean(TLS, sparkSsl);
    if (!on) {
      return Optional.empty();
    }
    String chain = conf.get(TLS_CERT_CHAIN, conf.get("spark.ssl.rpc.certChain", ""));
    String key = conf.get(TLS_PRIVATE_KEY, conf.get("spark.ssl.rpc.privateKey", ""));
    if (chain.isEmpty() || key.isEmpty()) {
      throw new IllegalArgumentException("tables are served over TLS (" + (conf.contains(TLS) ? TLS : "Spark's SSL is on")
          + ") but no PEM certificate chain and private key are set: set " + TLS_CERT_CHAIN + " and " + TLS_PRIVATE_KEY
          + " (or spark.ssl.rpc.certChain and spark.ssl.rpc.privateKey), or " + TLS + "=false");
    }
    return Optional.of(new String[] {chain, key});
  }

  /** sluice.transport.* and sluice.flight.* keys from their spark.sluice.tables.* forms. */
  static Map<String, String> transportKeys(SparkConf conf) {
    Map<String, String> keys = new LinkedHashMap<>();
    for (Tuple2<String, String> e : conf.getAllWithPrefix(TRANSPORT_PREFIX)) {
      keys.put("sluice.transport." + e._1(), e._2());
    }
    for (Tuple2<String, String> e : conf.getAllWithPrefix(FLIGHT_PREFIX)) {
      keys.put("sluice.flight." + e._1(), e._2());
    }
    return keys;
  }

  /** Keys that must not travel in a task or appear anywhere: the secret comes from Spark or the driver. */
  static void refuseSecretKey(Map<String, String> keys) {
    if (keys.containsKey("sluice.transport.secret")) {
      throw new IllegalArgumentException(TRANSPORT_PREFIX + "secret is not a key: tables use Spark's authentication"
          + " secret (spark.authenticate), or one the driver makes for the application");
    }
    // Readers hold call tokens for the executors: puts would let them write there, and shared
    // audiences would make one executor's token good on every executor.
    for (String k : new String[] {"sluice.flight.puts", "sluice.flight.tokenAudiences"}) {
      if (keys.containsKey(k)) {
        throw new IllegalArgumentException(FLIGHT_PREFIX + k.substring("sluice.flight.".length()) + " is not a key"
            + " of published tables: their servers take no puts, and each executor's tokens are its own");
      }
    }
  }

  /** For messages. */
  static String size(long bytes) {
    return bytes >= 1L << 30 ? String.format("%.1f GiB", bytes / (double) (1L << 30))
        : String.format("%.1f MiB", bytes / (double) (1L << 20));
  }

  /** Serializable settings that the catalog gives each publishing task. */
  record TaskSettings(String tableKey, int round, String name, int rddId, int batchRows, Map<String, String> transportKeys,
      String shippedSecret) implements Serializable {
    TaskSettings {
      transportKeys = Map.copyOf(transportKeys);
    }

    @Override
    public String toString() {
      return "TaskSettings[table=" + name + ", key=" + tableKey + ", round=" + round + ", batchRows=" + batchRows + ", secret=<hidden>]";
    }
  }
}
