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
 * cannot hold them). Names must be unique within one file. {@link #read} reads the same shape
 * back (keys in any order, any white space). Stateless and thread safe.
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

  /**
   * Reads a results file.
   *
   * @throws IllegalArgumentException if the text is not a list of measurement objects, with the
   *     offset of the first problem
   */
  public static List<Measurement> read(Path file) throws IOException {
    return decode(Files.readString(file, StandardCharsets.UTF_8));
  }

  /** The measurements of a results file's text; see {@link #read}. */
  public static List<Measurement> decode(String json) {
    return new Reader(json).measurements();
  }

  /** A reader for exactly this shape: a list of flat objects with string and number values. */
  private static final class Reader {
    private final String text;
    private int pos;

    Reader(String text) {
      this.text = text;
    }

    List<Measurement> measurements() {
      List<Measurement> out = new java.util.ArrayList<>();
      expect('[');
      if (!peek(']')) {
        do {
          out.add(measurement());
        } while (take(','));
      }
      expect(']');
      space();
      if (pos != text.length()) {
        throw error("trailing characters");
      }
      return out;
    }

    private Measurement measurement() {
      java.util.Map<String, Object> fields = new java.util.HashMap<>();
      int start = pos;
      expect('{');
      if (!peek('}')) {
        do {
          String key = string();
          expect(':');
          space();
          Object value = pos < text.length() && text.charAt(pos) == '"' ? string() : number();
          if (fields.put(key, value) != null) {
            throw error("key " + key + " given twice");
          }
        } while (take(','));
      }
      expect('}');
      try {
        return new Measurement((String) fields.get("name"), (String) fields.get("unit"),
            (Double) fields.get("value"), (String) fields.get("baseline_name"), (Double) fields.get("baseline_value"));
      } catch (RuntimeException e) {
        throw new IllegalArgumentException("not a measurement at offset " + start + ": " + e.getMessage(), e);
      }
    }

    private String string() {
      space();
      if (pos >= text.length() || text.charAt(pos) != '"') {
        throw error("a string expected");
      }
      StringBuilder b = new StringBuilder();
      pos++;
      while (pos < text.length()) {
        char c = text.charAt(pos++);
        if (c == '"') {
          return b.toString();
        }
        if (c != '\\') {
          b.append(c);
          continue;
        }
        if (pos >= text.length()) {
          break;
        }
        char e = text.charAt(pos++);
        switch (e) {
          case '"', '\\', '/' -> b.append(e);
          case 'n' -> b.append('\n');
          case 'r' -> b.append('\r');
          case 't' -> b.append('\t');
          case 'b' -> b.append('\b');
          case 'f' -> b.append('\f');
          case 'u' -> {
            if (pos + 4 > text.length()) {
              throw error("short \\u escape");
            }
            b.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
            pos += 4;
          }
          default -> throw error("bad escape \\" + e);
        }
      }
      throw error("unterminated string");
    }

    private Double number() {
      int start = pos;
      while (pos < text.length() && "+-0123456789.eE".indexOf(text.charAt(pos)) >= 0) {
        pos++;
      }
      try {
        return Double.valueOf(text.substring(start, pos));
      } catch (NumberFormatException e) {
        pos = start;
        throw error("a number or string expected");
      }
    }

    private void expect(char c) {
      if (!take(c)) {
        throw error("'" + c + "' expected");
      }
    }

    private boolean take(char c) {
      space();
      if (pos < text.length() && text.charAt(pos) == c) {
        pos++;
        return true;
      }
      return false;
    }

    private boolean peek(char c) {
      space();
      return pos < text.length() && text.charAt(pos) == c;
    }

    private void space() {
      while (pos < text.length() && Character.isWhitespace(text.charAt(pos))) {
        pos++;
      }
    }

    private IllegalArgumentException error(String what) {
      return new IllegalArgumentException(what + " at offset " + pos);
    }
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
