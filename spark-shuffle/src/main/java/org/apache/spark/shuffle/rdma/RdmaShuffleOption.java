package org.apache.spark.shuffle.rdma;

import io.sluice.transport.config.Check;
import io.sluice.transport.config.ConfigKey;
import io.sluice.transport.config.Parsers;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Every {@code spark.shuffle.rdma.*} setting of the shuffle manager, declared with the transport's
 * {@link ConfigKey}: sizes and durations use Spark's syntax and the transport's parsers. Read them
 * from a SparkConf through {@link SparkTransportConfig#source}. {@link #all()} is the one list the
 * README's table follows. Transport settings are passed through separately: {@code
 * spark.shuffle.rdma.transport.X} becomes the transport's {@code sluice.transport.X} (see {@link
 * SparkTransportConfig}).
 */
public final class RdmaShuffleOption {
  public static final ConfigKey<Long> MAX_BYTES_IN_FLIGHT = ConfigKey.of("spark.shuffle.rdma.maxBytesInFlight", "48m",
      "Bytes a reduce task may have requested by READ and not yet consumed; at least one range is"
          + " always in flight, however large.",
      Parsers.bytes(), Check.positive());
  public static final ConfigKey<Long> READ_CHUNK_BYTES = ConfigKey.of("spark.shuffle.rdma.readChunkBytes", "4m",
      "Largest single READ; a larger range is read as several READs in one batch.",
      Parsers.bytes(), Check.positive());
  public static final ConfigKey<Long> MAX_RANGE_BYTES = ConfigKey.of("spark.shuffle.rdma.maxRangeBytes", "256m",
      "Contiguous partitions of one map output are fetched as one range up to this size.",
      Parsers.bytes(), Check.positive());
  public static final ConfigKey<Long> REGISTRATION_WINDOW_BYTES = ConfigKey.of(
      "spark.shuffle.rdma.registrationWindowBytes", "1g",
      "A map output's data file is registered for READs in windows of at most this size (at most"
          + " 2g - 1), so data files of any size can be read.",
      Parsers.bytes(), Check.between(1, Integer.MAX_VALUE));
  public static final ConfigKey<Boolean> LOCAL_READS = ConfigKey.of("spark.shuffle.rdma.localReads", "true",
      "Read blocks written by the reducer's own executor straight from its local files.", Parsers.bool());
  public static final ConfigKey<Boolean> VERIFY_READS = ConfigKey.of("spark.shuffle.rdma.verifyReads", "true",
      "Check every block a reduce task READ against the CRC32C its owner computed when it registered the map"
          + " output; a mismatch is a fetch failure, never data.", Parsers.bool());
  public static final ConfigKey<Boolean> SAME_HOST_VIEWS = ConfigKey.of("spark.shuffle.rdma.sameHostViews", "true",
      "Deserialize blocks of executors on the same host (shm) from views of their registered files, read where"
          + " they lie with positional reads and held until the task's iterator moves past them, instead of"
          + " copying them into READ destinations.", Parsers.bool());
  public static final ConfigKey<Integer> MAX_PEER_CONNECTIONS = ConfigKey.of(
      "spark.shuffle.rdma.maxPeerConnections", "256",
      "Connections an executor keeps open (or opening) to peer executors at once, however many it reads from;"
          + " peers past it are read as peersBeyondBound says; where a connection is still needed at the bound"
          + " the least recently used idle one is closed for it, or the read waits for one to become idle, at most"
          + " transport.ioTimeoutMs, then fails as a fetch failure.",
      Parsers.integer(), Check.positive());
  public static final ConfigKey<String> PEERS_BEYOND_BOUND = ConfigKey.of(
      "spark.shuffle.rdma.peersBeyondBound", "queue",
      "What a reduce task does when it reads more peers than maxPeerConnections has room for: queue, READ them"
          + " all, its share of the bound at a time, reopening connections for them; spark, READ as many as there"
          + " is room for (beside the peers other tasks are reading), those with a connection first, and read the"
          + " others through Spark's own shuffle reader in the same task, with Spark's protection of the network"
          + " (spark.authenticate, spark.network.crypto.enabled) instead of the transport's authentication, frame"
          + " integrity and verifyReads.",
      Parsers.choice("queue", "spark"));
  public static final ConfigKey<Long> LOOKUP_TIMEOUT = ConfigKey.of("spark.shuffle.rdma.lookupTimeout", "30s",
      "Deadline for registering with, and asking, the driver's transport address book.",
      Parsers.duration(TimeUnit.MILLISECONDS), Check.positive());

  public static final ConfigKey<Long> METRICS_REPORT_INTERVAL = ConfigKey.of(
      "spark.shuffle.rdma.metricsReportInterval", "10s",
      "How often each executor sends its Sluice metrics to the driver, whose `sluice` metrics source adds"
          + " them up; also once when the executor stops.",
      Parsers.duration(TimeUnit.MILLISECONDS), Check.positive());

  private static final List<ConfigKey<?>> ALL = List.of(MAX_BYTES_IN_FLIGHT, READ_CHUNK_BYTES, MAX_RANGE_BYTES,
      REGISTRATION_WINDOW_BYTES, LOCAL_READS, VERIFY_READS, SAME_HOST_VIEWS, MAX_PEER_CONNECTIONS,
      PEERS_BEYOND_BOUND, LOOKUP_TIMEOUT, METRICS_REPORT_INTERVAL);

  private RdmaShuffleOption() {}

  /** Every shuffle manager key, in the order of the README's table. */
  public static List<ConfigKey<?>> all() {
    return ALL;
  }
}
