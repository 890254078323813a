package io.sluice.perf.flight;

import io.sluice.perf.bench.Cli;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import picocli.CommandLine.Option;

/**
 * What one run of the Flight benchmark moves and how often. A full run streams a table of about
 * 2 GiB through every path in three measured rounds after a warm-up round that moves a smaller
 * table of the same rows ({@value #WARMUP_BYTES} bytes at most); {@code --quick}
 * shrinks it to a smoke run that proves the harness works and says nothing about speed.
 * Immutable.
 *
 * @param tableBytes body bytes of the served table (the table is built to at least this size)
 * @param batchRows rows per record batch
 * @param rounds measured rounds; every cell runs once per round, interleaved with the others
 * @param operations what to measure: {@code get}, {@code put} or both, in that order
 * @param warmup whether an unmeasured round runs first
 * @param out where the results file goes
 * @param quick true for a smoke run
 */
public record FlightBenchOptions(long tableBytes, int batchRows, int rounds, List<String> operations, boolean warmup,
    Path out, boolean quick) {
  static final long MIB = 1L << 20;
  static final long DEFAULT_SIZE_MB = 2048;
  static final long QUICK_SIZE_MB = 24;
  /** Enough to touch every path's pools and compile its code; the warm-up round moves this much. */
  static final long WARMUP_BYTES = 512 * MIB;
  static final int BATCH_ROWS = 64 * 1024;
  static final int DEFAULT_ROUNDS = 3;
  static final List<String> OPERATIONS = List.of("get", "put");

  static final Cli.Command COMMAND = new Cli.Command("flight-bench", "flight",
      "DoGet and DoPut of one table between two JVMs on loopback: the Flight data plane over tcp"
          + " and shm beside flight-core's plain gRPC Flight, and its gets with and without the CRC32C"
          + " check of what they read, in interleaved rounds.",
      "Smoke run: " + QUICK_SIZE_MB + " MiB, one round, no warm-up (the figures are meaningless).");

  /** The command's own options; {@link #parse} turns them into options. */
  static final class Flags {
    @Option(names = "--size-mb", paramLabel = "N",
        description = "Body bytes of the served table in MiB (default " + DEFAULT_SIZE_MB + ").")
    Long sizeMb;

    @Option(names = "--rounds", paramLabel = "N",
        description = "Measured rounds after one warm-up round (default " + DEFAULT_ROUNDS + ").")
    Integer rounds;

    @Option(names = "--operations", split = ",", paramLabel = "LIST",
        description = "get, put or get,put (default both).")
    List<String> operations = OPERATIONS;
  }

  public FlightBenchOptions {
    if (tableBytes < MIB) {
      throw new IllegalArgumentException("the table needs at least 1 MiB, got " + tableBytes + " bytes");
    }
    if (batchRows < 1) {
      throw new IllegalArgumentException("batches need at least one row, got " + batchRows);
    }
    if (rounds < 1) {
      throw new IllegalArgumentException("rounds must be at least 1, got " + rounds);
    }
    operations = List.copyOf(operations);
    if (operations.isEmpty() || !OPERATIONS.containsAll(operations)) {
      throw new IllegalArgumentException("operations must be a subset of " + OPERATIONS + ", got " + operations);
    }
  }

  /** Body bytes of the warm-up table; 0 when there is no warm-up round. */
  long warmupBytes() {
    return warmup ? Math.min(WARMUP_BYTES, tableBytes) : 0;
  }

  /**
   * Parses the command line.
   *
   * @throws IllegalArgumentException naming the bad argument
   * @throws Cli.HelpRequested for {@code --help}
   */
  public static FlightBenchOptions parse(String... args) {
    Cli.Parsed<Flags> line = Cli.parse(COMMAND, new Flags(), args);
    Flags f = line.options();
    boolean quick = line.quick();
    Optional<Long> sizeMb = Optional.ofNullable(f.sizeMb).map(v -> positive(v, "--size-mb"));
    int rounds = Math.toIntExact(positive(f.rounds != null ? f.rounds : quick ? 1 : DEFAULT_ROUNDS, "--rounds"));
    List<String> operations = operations(f.operations);
    if (quick) {
      return new FlightBenchOptions(sizeMb.orElse(QUICK_SIZE_MB) * MIB, BATCH_ROWS, rounds, operations, false,
          line.out(), true);
    }
    return new FlightBenchOptions(sizeMb.orElse(DEFAULT_SIZE_MB) * MIB, BATCH_ROWS, rounds, operations, true,
        line.out(), false);
  }

  private static List<String> operations(List<String> given) {
    List<String> list = new ArrayList<>();
    for (String o : given) {
      String name = o.trim();
      if (!OPERATIONS.contains(name) || list.contains(name)) {
        throw new IllegalArgumentException("--operations takes get, put or get,put; got '"
            + String.join(",", given) + "'");
      }
      list.add(name);
    }
    return OPERATIONS.stream().filter(list::contains).toList();
  }

  private static long positive(long v, String flag) {
    if (v < 1 || v > (1L << 20)) {
      throw new IllegalArgumentException(flag + " must be between 1 and " + (1L << 20) + ", got " + v);
    }
    return v;
  }
}
