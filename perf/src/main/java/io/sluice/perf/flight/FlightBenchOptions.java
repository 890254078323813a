package io.sluice.perf.flight;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

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
  static final Path DEFAULT_OUT = Path.of("perf", "results", "flight.json");
  /** Smoke runs write beside the build output, so they never replace a real run's results. */
  static final Path QUICK_OUT = Path.of("perf", "target", "flight-quick.json");
  static final String USAGE =
      "usage: flight-bench [--quick] [--size-mb N] [--rounds N] [--operations get,put] [--out FILE]\n"
          + "  --quick       smoke run: " + QUICK_SIZE_MB + " MiB, one round, no warm-up (numbers are meaningless)\n"
          + "  --size-mb N   body bytes of the served table in MiB (default " + DEFAULT_SIZE_MB + ")\n"
          + "  --rounds N    measured rounds after one warm-up round (default " + DEFAULT_ROUNDS + ")\n"
          + "  --operations  get, put or get,put (default both)\n"
          + "  --out FILE    results file (default " + DEFAULT_OUT + ", with --quick " + QUICK_OUT + ")";

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
   * @throws IllegalArgumentException naming the bad argument, with the usage text
   */
  public static FlightBenchOptions parse(String... args) {
    boolean quick = false;
    Optional<Long> sizeMb = Optional.empty();
    Optional<Integer> rounds = Optional.empty();
    Optional<Path> out = Optional.empty();
    List<String> operations = OPERATIONS;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--quick" -> quick = true;
        case "--size-mb" -> sizeMb = Optional.of(positive(value(args, ++i, "--size-mb"), "--size-mb"));
        case "--rounds" -> rounds = Optional.of(Math.toIntExact(positive(value(args, ++i, "--rounds"), "--rounds")));
        case "--out" -> out = Optional.of(Path.of(value(args, ++i, "--out")));
        case "--operations" -> operations = operations(value(args, ++i, "--operations"));
        default -> throw new IllegalArgumentException("unknown argument '" + args[i] + "'\n" + USAGE);
      }
    }
    if (quick) {
      return new FlightBenchOptions(sizeMb.orElse(QUICK_SIZE_MB) * MIB, BATCH_ROWS, rounds.orElse(1), operations, false,
          out.orElse(QUICK_OUT), true);
    }
    return new FlightBenchOptions(sizeMb.orElse(DEFAULT_SIZE_MB) * MIB, BATCH_ROWS, rounds.orElse(DEFAULT_ROUNDS),
        operations, true, out.orElse(DEFAULT_OUT), false);
  }

  private static String value(String[] args, int i, String flag) {
    if (i >= args.length) {
      throw new IllegalArgumentException(flag + " needs a value\n" + USAGE);
    }
    return args[i];
  }

  private static List<String> operations(String text) {
    List<String> list = new ArrayList<>();
    for (String o : text.split(",")) {
      String name = o.trim();
      if (!OPERATIONS.contains(name) || list.contains(name)) {
        throw new IllegalArgumentException("--operations takes get, put or get,put; got '" + text + "'\n" + USAGE);
      }
      list.add(name);
    }
    return OPERATIONS.stream().filter(list::contains).toList();
  }

  private static long positive(String text, String flag) {
    long v;
    try {
      v = Long.parseLong(text.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(flag + " needs a whole number, got '" + text + "'\n" + USAGE);
    }
    if (v < 1 || v > (1L << 20)) {
      throw new IllegalArgumentException(flag + " must be between 1 and " + (1L << 20) + ", got " + v);
    }
    return v;
  }
}
