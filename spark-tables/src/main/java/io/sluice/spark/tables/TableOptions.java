package io.sluice.spark.tables;

import java.io.Serializable;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.apache.spark.network.util.JavaUtils;

/**
 * How one table is published; every option has a default, and an unknown or invalid one fails
 * before any task runs, naming it.
 *
 * <ul>
 *   <li>{@code batchRows} (default {@value #DEFAULT_BATCH_ROWS}): rows per record batch, and so per
 *       shard.
 *   <li>{@code ttl} (default none): the table is unpublished this long after it was published
 *       ({@code 30s}, {@code 10m}, {@code 2h}: Spark's time strings).
 *   <li>{@code republishLost} (default {@code false}): shards lost with an executor are published
 *       again from the DataFrame's lineage on the remaining executors, instead of being reported.
 *   <li>{@code mode} ({@code error} by default, or {@code overwrite}): what happens when a table of
 *       that name is published already.
 * </ul>
 *
 * @param batchRows rows per record batch
 * @param ttl how long the table lives, when it is bounded
 * @param republishLost whether lost shards are published again
 * @param overwrite whether an existing table of the name is replaced
 */
public record TableOptions(int batchRows, Optional<Duration> ttl, boolean republishLost, boolean overwrite)
    implements Serializable {
  public static final int DEFAULT_BATCH_ROWS = 8192;
  private static final Set<String> KEYS = Set.of("batchrows", "ttl", "republishlost", "mode", "table", "path");

  public TableOptions {
    if (batchRows < 1) {
      throw new IllegalArgumentException("batchRows must be at least 1, got " + batchRows);
    }
    if (ttl.isPresent() && (ttl.get().isNegative() || ttl.get().isZero())) {
      throw new IllegalArgumentException("ttl must be positive, got " + ttl.get());
    }
  }

  /** The defaults. */
  public static TableOptions defaults() {
    return new TableOptions(DEFAULT_BATCH_ROWS, Optional.empty(), false, false);
  }

  /**
   * Options from their string form (keys case-insensitive, as Spark's data source options); {@code
   * table} and {@code path} are the data source's and ignored here.
   *
   * @throws IllegalArgumentException naming the first unknown key or invalid value
   */
  public static TableOptions parse(Map<String, String> options) {
    Map<String, String> m = new TreeMap<>();
    options.forEach((k, v) -> m.put(k.toLowerCase(Locale.ROOT), v));
    for (String k : m.keySet()) {
      if (!KEYS.contains(k)) {
        throw new IllegalArgumentException("unknown table option '" + k + "': the options are batchRows, ttl,"
            + " republishLost and mode");
      }
    }
    int batchRows = DEFAULT_BATCH_ROWS;
    if (m.containsKey("batchrows")) {
      try {
        batchRows = Integer.parseInt(m.get("batchrows").trim());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("batchRows must be a whole number of rows, got '" + m.get("batchrows") + "'");
      }
    }
    Optional<Duration> ttl = Optional.empty();
    if (m.containsKey("ttl")) {
      try {
        ttl = Optional.of(Duration.ofMillis(JavaUtils.timeStringAsMs(m.get("ttl"))));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("ttl must be a time such as 30s, 10m or 2h, got '" + m.get("ttl") + "'");
      }
    }
    boolean republish = bool(m, "republishlost", "republishLost");
    String mode = m.getOrDefault("mode", "error").toLowerCase(Locale.ROOT);
    if (!mode.equals("error") && !mode.equals("errorifexists") && !mode.equals("overwrite")) {
      throw new IllegalArgumentException("mode must be error or overwrite, got '" + m.get("mode") + "'");
    }
    return new TableOptions(batchRows, ttl, republish, mode.equals("overwrite"));
  }

  private static boolean bool(Map<String, String> m, String key, String name) {
    String v = m.getOrDefault(key, "false").trim().toLowerCase(Locale.ROOT);
    if (!v.equals("true") && !v.equals("false")) {
      throw new IllegalArgumentException(name + " must be true or false, got '" + m.get(key) + "'");
    }
    return v.equals("true");
  }
}
