package io.sluice.perf;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The one definition of the results file every benchmark under {@code perf/} writes: a JSON list
 * with one object per {@link Measurement}, keys in this order:
 *
 * <pre>
 * [
 *   {"name": "tcp.read.1MiB.inflight8", "unit": "GB/s", "value": 1.93,
 *    "baseline_name": "socket.stream.1MiB", "baseline_value": 2.1},
 *   ...
 * ]
 * </pre>
 *
 * Numbers carry six significant digits and never use NaN or infinities (a {@link Measurement}
 * cannot hold them). Names must be unique within one file. Stateless and thread safe.
 */
public final class ResultsJson {
  private static final MathContext DIGITS = new MathContext(6);

  private ResultsJson() {}

  /**
   * Writes the measurements to {@code file}, creating its folder. The file is written next to its
   * final name and moved into place, so a reader never sees half a file.
   *
   * @throws IllegalArgumentException if two measurements share a name
   */
  public static void write(Path file, List<Measurement> measurements) throws IOException {
    String json = encode(measurements);
    Path absolute = file.toAbsolutePath();
    Path dir = absolute.getParent();
    Files.createDirectories(dir);
    Path tmp = dir.resolve(absolute.getFileName() + "." + ProcessHandle.current().pid() + ".tmp");
    try {
      Files.writeString(tmp, json, StandardCharsets.UTF_8);
      Files.move(tmp, absolute, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  /**
   * Returns the file's text for these measurements, one object per line.
   *
   * @throws IllegalArgumentException if two measurements share a name
   */
  public static String encode(List<Measurement> measurements) {
    Set<String> names = new HashSet<>();
    StringBuilder out = new StringBuilder("[\n");
    for (int i = 0; i < measurements.size(); i++) {
      Measurement m = measurements.get(i);
      if (!names.add(m.name())) {
        throw new IllegalArgumentException("duplicate measurement name " + m.name());
      }
      out.append("  {\"name\": ").append(quote(m.name()))
          .append(", \"unit\": ").append(quote(m.unit()))
          .append(", \"value\": ").append(number(m.value()))
          .append(", \"baseline_name\": ").append(quote(m.baselineName()))
          .append(", \"baseline_value\": ").append(number(m.baselineValue()))
          .append(i + 1 < measurements.size() ? "},\n" : "}\n");
    }
    return out.append("]\n").toString();
  }

  static String number(double v) {
    if (v == 0) {
      return "0";
    }
    return new BigDecimal(v).round(DIGITS).stripTrailingZeros().toPlainString();
  }

  static String quote(String s) {
    StringBuilder q = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> q.append("\\\"");
        case '\\' -> q.append("\\\\");
        case '\n' -> q.append("\\n");
        case '\r' -> q.append("\\r");
        case '\t' -> q.append("\\t");
        default -> {
          if (c < 0x20) {
            q.append(String.format("\\u%04x", (int) c));
          } else {
            q.append(c);
          }
        }
      }
    }
    return q.append('"').toString();
  }
}
