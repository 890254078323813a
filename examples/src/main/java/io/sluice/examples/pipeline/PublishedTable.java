package io.sluice.examples.pipeline;

import io.sluice.flight.CallToken;
import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Properties;

/**
 * Where a feature table is served: the file the driver writes when every executor has published
 * and the trainer reads. One Flight location per executor, the table's name (its shards are the
 * flights named {@code table.*}), the transport's shared secret (empty: plain Flight only) and the
 * Flight call token derived from it (what a plain Flight client such as pyarrow presents), row,
 * feature, shard and byte counts, and when the raw events started (epoch ms) so the trainer can
 * time the whole path. The file is readable by its owner only and appears atomically. Immutable.
 */
public record PublishedTable(String table, String secret, List<String> locations, long rows, int features,
    int shards, long bytes, long startedMs) {
  /** The prefix of the shards' flight names. */
  public String shardPrefix() {
    return table + ".";
  }

  static final String FILE = "endpoints.properties";

  /**
   * The bearer token every Flight call to the executors presents ({@code Authorization: Bearer
   * <token>}); empty when the servers have no secret and authenticate nothing.
   */
  public Optional<String> callToken() {
    return secret.isEmpty() ? Optional.empty() : Optional.of(CallToken.derive(secret));
  }

  public void write(Path runDir) throws IOException {
    Properties p = new Properties();
    p.setProperty("table", table);
    p.setProperty("secret", secret);
    callToken().ifPresent(t -> p.setProperty("token", t));
    p.setProperty("locations", String.join(",", locations));
    p.setProperty("rows", Long.toString(rows));
    p.setProperty("features", Integer.toString(features));
    p.setProperty("shards", Integer.toString(shards));
    p.setProperty("bytes", Long.toString(bytes));
    p.setProperty("startedMs", Long.toString(startedMs));
    Path tmp = runDir.resolve(FILE + ".tmp");
    Files.deleteIfExists(tmp);
    Files.createFile(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    try (Writer w = Files.newBufferedWriter(tmp)) {
      p.store(w, "Flight endpoints of the feature table");
    }
    Files.move(tmp, runDir.resolve(FILE), StandardCopyOption.ATOMIC_MOVE);
  }

  public static PublishedTable read(Path runDir) throws IOException {
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(runDir.resolve(FILE))) {
      p.load(r);
    }
    return new PublishedTable(p.getProperty("table"), p.getProperty("secret", ""),
        Arrays.asList(p.getProperty("locations").split(",")), Long.parseLong(p.getProperty("rows")),
        Integer.parseInt(p.getProperty("features")), Integer.parseInt(p.getProperty("shards")),
        Long.parseLong(p.getProperty("bytes")), Long.parseLong(p.getProperty("startedMs")));
  }

  public static boolean exists(Path runDir) {
    return Files.exists(runDir.resolve(FILE));
  }
}
