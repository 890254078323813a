package io.sluice.examples.pipeline;

import io.sluice.flight.CallToken;
import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.List;
import java.util.Optional;
import java.util.Properties;

/**
 * Where a feature table is served: the file the driver writes when every executor has published
 * and the trainer reads. One Flight location per executor, the table's name (its shards are the
 * flights named {@code table.*}), the transport's shared secret (empty: plain Flight only) and, per
 * location, a Flight call token for that server alone that lasts the run ({@link #RUN_TOKEN_VALIDITY}:
 * what a plain Flight client such as pyarrow presents), row,
 * feature, shard and byte counts, and when the raw events started (epoch ms) so the trainer can
 * time the whole path. The file is readable by its owner only and appears atomically. Immutable.
 */
public record PublishedTable(String table, String secret, List<String> locations, long rows, int features,
    int shards, long bytes, long startedMs, Map<String, String> tokens) {
  /** How long the call tokens the file hands out stay valid: longer than any run. */
  public static final Duration RUN_TOKEN_VALIDITY = Duration.ofHours(24);

  public PublishedTable {
    locations = List.copyOf(locations);
    tokens = Map.copyOf(tokens);
  }

  /** The table as the driver publishes it: with a secret, a token for each location, minted now. */
  public static PublishedTable of(String table, String secret, List<String> locations, long rows, int features,
      int shards, long bytes, long startedMs) {
    Map<String, String> tokens = new LinkedHashMap<>();
    if (!secret.isEmpty()) {
      CallToken.Key key = CallToken.key(secret);
      Instant expires = Instant.now().plus(RUN_TOKEN_VALIDITY);
      for (String location : locations) {
        tokens.put(CallToken.audience(location), key.mint(location, expires));
      }
    }
    return new PublishedTable(table, secret, locations, rows, features, shards, bytes, startedMs, tokens);
  }

  /** The prefix of the shards' flight names. */
  public String shardPrefix() {
    return table + ".";
  }

  static final String FILE = "endpoints.properties";

  /**
   * The bearer token every Flight call to the executor at {@code location} presents ({@code
   * Authorization: Bearer <token>}); a token for one server only. Empty when the servers have no
   * secret and authenticate nothing.
   */
  public Optional<String> callToken(String location) {
    return Optional.ofNullable(tokens.get(CallToken.audience(location)));
  }

  public void write(Path runDir) throws IOException {
    Properties p = new Properties();
    p.setProperty("table", table);
    p.setProperty("secret", secret);
    p.setProperty("locations", String.join(",", locations));
    for (int i = 0; i < locations.size(); i++) {
      String location = locations.get(i);
      callToken(location).ifPresent(t -> p.setProperty("token." + location, t));
    }
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
    List<String> locations = Arrays.asList(p.getProperty("locations").split(","));
    Map<String, String> tokens = new LinkedHashMap<>();
    for (String location : locations) {
      String t = p.getProperty("token." + location);
      if (t != null) {
        tokens.put(CallToken.audience(location), t);
      }
    }
    return new PublishedTable(p.getProperty("table"), p.getProperty("secret", ""), locations,
        Long.parseLong(p.getProperty("rows")), Integer.parseInt(p.getProperty("features")),
        Integer.parseInt(p.getProperty("shards")), Long.parseLong(p.getProperty("bytes")),
        Long.parseLong(p.getProperty("startedMs")), tokens);
  }

  public static boolean exists(Path runDir) {
    return Files.exists(runDir.resolve(FILE));
  }
}
