package io.sluice.perf.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * What HotSpot's {@code -XX:+PrintCompilation} wrote to one JVM's standard output, read for one
 * question: how long a cold executor's reducers sort in code the JIT has not yet optimized. Each
 * line names when a compilation started (ms since the JVM's start), its tier (1 to 3: C1, 4: C2)
 * and the method; lines of other output and of code thrown away ("made not entrant") are skipped.
 * Stateless.
 */
final class CompilationLog {
  /** Spark's reduce-side sorter compares {@code (partition, key)} pairs with this lambda's body. */
  static final String SORT_COMPARATOR = "org.apache.spark.util.collection.WritablePartitionedPairCollection$"
      + "::$anonfun$partitionKeyComparator$1";
  /** Spark's own TimSort, which sorts the reducers' buffers; its loops inline the comparator. */
  static final String SORT_LOOP = "org.apache.spark.util.collection.TimSort";
  private static final int C2 = 4;
  /** Time stamp, compile id, attribute flags (%: on-stack replacement, s, !, b, n), tier, method. */
  private static final Pattern LINE = Pattern.compile("^\\s*(\\d+)\\s+(\\d+)\\s+[%sb!n ]*?(\\d)\\s+(\\S+::\\S+)");

  private CompilationLog() {}

  /** One compilation: when it started, in ms since the JVM's start, its tier and the method. */
  record Compile(long ms, int tier, String method) {}

  /** The compilations among {@code lines}, in their order. */
  static List<Compile> parse(List<String> lines) {
    List<Compile> out = new ArrayList<>();
    for (String line : lines) {
      if (line.contains("made not entrant") || line.contains("made zombie")) {
        continue;
      }
      Matcher m = LINE.matcher(line);
      if (m.find()) {
        out.add(new Compile(Long.parseLong(m.group(1)), Integer.parseInt(m.group(3)), m.group(4)));
      }
    }
    return out;
  }

  /**
   * Milliseconds from the first compilation of Spark's sort comparator (the reducers' sort has
   * become hot enough for C1) to the first C2 compilation of Spark's TimSort after it (the sort
   * loop optimized, the comparator inlined into it); empty where the JVM never sorted for a
   * reducer or its log ends before C2 got there.
   */
  static OptionalLong sortLoopC2LagMs(List<Compile> log) {
    long hot = -1;
    for (Compile c : log) {
      if (hot < 0 && c.method().startsWith(SORT_COMPARATOR)) {
        hot = c.ms();
      } else if (hot >= 0 && c.tier() == C2 && c.method().startsWith(SORT_LOOP) && c.ms() >= hot) {
        return OptionalLong.of(c.ms() - hot);
      }
    }
    return OptionalLong.empty();
  }

  /**
   * {@link #sortLoopC2LagMs} of every executor of a standalone or local-cluster application,
   * whose Worker keeps each executor's standard output in {@code appDir/<executor id>/stdout};
   * executors whose log has no such lag are left out.
   */
  static List<Long> sortLoopC2LagsMs(Path appDir) {
    List<Long> lags = new ArrayList<>();
    try (Stream<Path> executors = Files.list(appDir)) {
      for (Path stdout : executors.map(d -> d.resolve("stdout")).filter(Files::isRegularFile).sorted().toList()) {
        List<String> lines;
        try (Stream<String> s = Files.lines(stdout, StandardCharsets.ISO_8859_1)) {
          lines = s.toList();
        }
        sortLoopC2LagMs(parse(lines)).ifPresent(lags::add);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the executors' output in " + appDir, e);
    }
    return lags;
  }
}
