package io.sluice.perf.loader;

import io.sluice.flight.loader.Cursor;
import io.sluice.flight.loader.FlightLoader;
import io.sluice.flight.loader.LoadedShard;
import io.sluice.flight.loader.Shard;
import io.sluice.flight.loader.Shards;
import io.sluice.transport.TransportConfig;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The Java side of {@code perf/bin/python-loader-bench}: a warm JVM that reads one epoch of every
 * shard with a real {@link FlightLoader} whenever its driver asks, so the Java loader's rounds
 * alternate with the Python reader's in one run. Reads lines {@code PATH LOCATION PREFIX [PREFETCH]}
 * from standard input (PATH: {@code tcp}, {@code shm}, or {@code grpc} for plain Flight; PREFETCH:
 * the loader's read-ahead, so its reading threads, default 2) and answers each with
 * {@code read PATH DATAPATH ROWS NANOS} once the epoch is loaded (every batch is delivered and
 * released, as a training loop would). Ends when its input ends.
 *
 * <pre>
 * java -cp ... io.sluice.perf.loader.LoaderRounds SECRET
 * </pre>
 */
public final class LoaderRounds {
  private LoaderRounds() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      throw new IllegalArgumentException("usage: SECRET");
    }
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    try (BufferAllocator allocator = new RootAllocator()) {
      System.out.println("ready");
      System.out.flush();
      String line;
      while ((line = in.readLine()) != null) {
        String[] words = line.trim().split("\\s+");
        if (words.length != 3 && words.length != 4) {
          throw new IllegalArgumentException("expected PATH LOCATION PREFIX [PREFETCH], got '" + line + "'");
        }
        int prefetch = words.length == 4 ? Integer.parseInt(words[3]) : 2;
        TransportConfig config = config(words[0], args[0]);
        long t0 = System.nanoTime();
        long rows = 0;
        String dataPath = "?";
        List<Shard> shards = Shards.list(allocator, List.of(new Location(words[1])), words[2], Duration.ofSeconds(30),
            config);
        try (FlightLoader loader = FlightLoader.builder(allocator, shards).epochs(1).resumeFrom(new Cursor(0, 0))
            .prefetch(prefetch).config(config).build()) {
          Optional<LoadedShard> next;
          while ((next = loader.next(Duration.ofSeconds(120))).isPresent()) {
            try (LoadedShard s = next.get()) {
              dataPath = s.dataPath();
              for (VectorSchemaRoot batch : s.batches()) {
                rows += batch.getRowCount();
              }
            }
          }
        }
        System.out.println("read " + words[0] + " " + dataPath + " " + rows + " " + (System.nanoTime() - t0));
        System.out.flush();
      }
    }
  }

  private static TransportConfig config(String path, String secret) {
    Map<String, String> m = new HashMap<>();
    m.put("sluice.transport.bindHost", "127.0.0.1");
    m.put("sluice.transport.secret", secret);
    switch (path) {
      case "grpc" -> m.put("sluice.flight.dataPlane", "false");
      case "tcp", "shm" -> m.put("sluice.transport.provider", path);
      default -> throw new IllegalArgumentException("unknown path " + path + " (tcp, shm or grpc)");
    }
    return TransportConfig.of(m);
  }
}
