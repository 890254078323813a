package org.apache.spark.shuffle.rdma;

import org.apache.spark.SparkConf;

/**
 * Every {@code spark.shuffle.rdma.*} setting of the shuffle manager with its default; the one
 * list the README's table follows. Transport settings are passed through separately: {@code
 * spark.shuffle.rdma.transport.X} becomes the transport's {@code sluice.transport.X} (see {@link
 * SparkTransportConfig}).
 */
public enum RdmaShuffleOption {
  MAX_BYTES_IN_FLIGHT("spark.shuffle.rdma.maxBytesInFlight", "48m",
      "Bytes a reduce task may have requested by READ and not yet consumed; at least one range is"
          + " always in flight, however large."),
  READ_CHUNK_BYTES("spark.shuffle.rdma.readChunkBytes", "4m",
      "Largest single READ; a larger range is read as several READs in one batch."),
  MAX_RANGE_BYTES("spark.shuffle.rdma.maxRangeBytes", "256m",
      "Contiguous partitions of one map output are fetched as one range up to this size."),
  REGISTRATION_WINDOW_BYTES("spark.shuffle.rdma.registrationWindowBytes", "1g",
      "A map output's data file is registered for READs in windows of at most this size (at most"
          + " 2g - 1), so data files of any size can be read."),
  LOCAL_READS("spark.shuffle.rdma.localReads", "true",
      "Read blocks written by the reducer's own executor straight from its local files."),
  LOOKUP_TIMEOUT("spark.shuffle.rdma.lookupTimeout", "30s",
      "Deadline for registering with, and asking, the driver's transport address book.");

  private final String key;
  private final String defaultValue;
  private final String description;

  RdmaShuffleOption(String key, String defaultValue, String description) {
    this.key = key;
    this.defaultValue = defaultValue;
    this.description = description;
  }

  public String key() {
    return key;
  }

  public String defaultValue() {
    return defaultValue;
  }

  public String description() {
    return description;
  }

  /** The value as a byte count (suffixes k, m, g as in Spark). */
  public long bytes(SparkConf conf) {
    long v = conf.getSizeAsBytes(key, defaultValue);
    if (v <= 0) {
      throw new IllegalArgumentException(key + " must be positive, got " + conf.get(key, defaultValue));
    }
    return v;
  }

  /** The value as milliseconds (suffixes ms, s, m as in Spark). */
  public long millis(SparkConf conf) {
    long v = conf.getTimeAsMs(key, defaultValue);
    if (v <= 0) {
      throw new IllegalArgumentException(key + " must be positive, got " + conf.get(key, defaultValue));
    }
    return v;
  }

  public boolean bool(SparkConf conf) {
    String s = conf.get(key, defaultValue).trim();
    if (s.equalsIgnoreCase("true")) {
      return true;
    }
    if (s.equalsIgnoreCase("false")) {
      return false;
    }
    throw new IllegalArgumentException(key + " must be true or false, got '" + s + "'");
  }
}
