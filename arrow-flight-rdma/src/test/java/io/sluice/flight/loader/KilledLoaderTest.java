package io.sluice.flight.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;

/**
 * A trainer killed mid-epoch: its loader, in a JVM of its own, has taken a shard and has more
 * being read ahead when the JVM is killed (SIGKILL); the servers end its streams and grants and
 * keep no memory registered for it.
 */
class KilledLoaderTest {
  @Test
  void loaderKilledMidEpochLeavesNoGrantsOnTheServers() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         ShardedTables tables = new ShardedTables(allocator, 2, 11, 50_000, true)) {
      List<Integer> regions = tables.servers.stream().map(s -> s.registeredRegions()).toList();
      List<String> cmd = new ArrayList<>();
      cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
      cmd.add("-Xmx256m");
      for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
        if (arg.startsWith("--add-opens")) {
          cmd.add(arg);
        }
      }
      cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), StalledTrainer.class.getName()));
      tables.locations().forEach(l -> cmd.add(l.getUri().toString()));
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      try {
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        StringBuilder seen = new StringBuilder();
        String line;
        while ((line = out.readLine()) != null && !line.startsWith("TRAINING")) {
          seen.append(line).append('\n');
        }
        assertTrue(line != null, "the trainer process ended before it trained: " + seen);
        assertEquals("TRAINING tcp", line);
        p.destroyForcibly(); // SIGKILL
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        tables.awaitNoGrants();
        assertEquals(regions, tables.servers.stream().map(s -> s.registeredRegions()).toList(),
            "regions registered for the dead trainer");
      } finally {
        p.destroyForcibly();
      }
    }
  }

  /** A trainer in its own JVM: takes one shard with more read ahead, says so, then stalls until killed. */
  public static final class StalledTrainer {
    public static void main(String[] args) throws Exception {
      BufferAllocator allocator = new RootAllocator();
      List<Location> locations = new ArrayList<>();
      for (String a : args) {
        locations.add(new Location(a));
      }
      List<Shard> shards = Shards.list(allocator, locations, "t.", Duration.ofSeconds(30));
      FlightLoader loader = FlightLoader.builder(allocator, shards).seed(5).prefetch(4)
          .config(ShardedTables.config(true)).build();
      LoadedShard first = loader.next(Duration.ofSeconds(60)).orElseThrow();
      System.out.println("TRAINING " + first.dataPath());
      System.out.flush();
      Thread.sleep(TimeUnit.MINUTES.toMillis(5));
    }
  }
}
