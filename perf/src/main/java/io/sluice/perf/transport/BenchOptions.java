package io.sluice.perf.transport;

import io.sluice.perf.bench.Cli;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * What one run of the transport benchmark measures and for how long. A full run takes a little over
 * a minute; {@code --quick} shrinks every phase to a smoke test that proves the harness works and
 * says nothing about speed. Immutable.
 *
 * @param providers transport variants to measure, in order ({@code tcp}, {@code tcp-aes}: tcp
 *     encrypted, {@code tcp-aes-jdk}: the same with the JDK's AES-GCM, {@code shm})
 * @param blockSizes READ sizes for the throughput cells
 * @param depths READs kept in flight for the throughput cells
 * @param latencyBytes size of each READ in the latency cells
 * @param regionBytes size of the served region that READs cycle over
 * @param rounds how often every cell is measured, interleaved with the others
 * @param warmup time spent before each cell is measured, in every round
 * @param measure time each cell is measured for, in every round
 * @param maxLatencySamples upper bound on samples per latency cell and round
 * @param out where the results file goes
 * @param quick true for a smoke run
 */
public record BenchOptions(
    List<String> providers,
    List<Integer> blockSizes,
    List<Integer> depths,
    int latencyBytes,
    int regionBytes,
    int rounds,
    Duration warmup,
    Duration measure,
    int maxLatencySamples,
    Path out,
    boolean quick) {
  static final List<String> KNOWN_PROVIDERS = List.of("tcp", "tcp-aes", "tcp-aes-jdk", "shm");

  static final Cli.Command COMMAND = new Cli.Command("transport-bench", "transport",
      "READ throughput and latency of the transport's providers between two JVMs on loopback,"
          + " beside a plain socket stream and a memcpy measured in the same run.",
      "Tiny smoke run; the figures are meaningless.");

  /** The command's own options; {@link #parse} turns them into options. */
  static final class Flags {
    @Option(names = "--providers", split = ",", paramLabel = "LIST",
        description = "Comma-separated subset of tcp,tcp-aes,tcp-aes-jdk,shm (default all; tcp-aes: tcp with"
            + " sluice.transport.encryption=true and the AES-GCM engine auto chooses; tcp-aes-jdk: the same with"
            + " the JDK's engine).")
    List<String> providers = KNOWN_PROVIDERS;
  }

  public BenchOptions {
    providers = List.copyOf(providers);
    blockSizes = List.copyOf(blockSizes);
    depths = List.copyOf(depths);
    if (rounds < 1) {
      throw new IllegalArgumentException("rounds must be at least 1, got " + rounds);
    }
    if (providers.isEmpty()) {
      throw new IllegalArgumentException("at least one provider is needed");
    }
    for (int block : blockSizes) {
      if (block <= 0 || block > regionBytes) {
        throw new IllegalArgumentException("block size " + block + " outside 1.." + regionBytes);
      }
    }
  }

  /** The largest local destination a throughput cell needs: one block per READ in flight. */
  int destinationBytes() {
    int max = latencyBytes;
    for (int block : blockSizes) {
      for (int depth : depths) {
        max = Math.max(max, Math.multiplyExact(block, depth));
      }
    }
    return max;
  }

  /**
   * Parses the command line.
   *
   * @throws IllegalArgumentException naming the bad argument
   * @throws Cli.HelpRequested for {@code --help}
   */
  public static BenchOptions parse(String... args) {
    Cli.Parsed<Flags> line = Cli.parse(COMMAND, new Flags(), args);
    Flags f = line.options();
    List<String> providers = checkProviders(f.providers);
    List<Integer> blocks = List.of(64 << 10, 1 << 20, 8 << 20);
    List<Integer> depths = List.of(1, 8);
    if (line.quick()) {
      return new BenchOptions(providers, blocks, depths, 4 << 10, 16 << 20, 1,
          Duration.ofMillis(20), Duration.ofMillis(60), 2_000, line.out(), true);
    }
    return new BenchOptions(providers, blocks, depths, 4 << 10, 64 << 20, 3,
        Duration.ofMillis(200), Duration.ofMillis(700), 100_000, line.out(), false);
  }

  private static List<String> checkProviders(List<String> given) {
    List<String> list = new ArrayList<>();
    for (String p : given) {
      String name = p.trim();
      if (!KNOWN_PROVIDERS.contains(name)) {
        throw new IllegalArgumentException(
            "unknown provider '" + name + "' in --providers; expected a subset of " + KNOWN_PROVIDERS);
      }
      if (list.contains(name)) {
        throw new IllegalArgumentException("provider '" + name + "' given twice in --providers");
      }
      list.add(name);
    }
    return list;
  }
}
