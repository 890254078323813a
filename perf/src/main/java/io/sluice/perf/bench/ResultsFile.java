package io.sluice.perf.bench;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.core.util.MinimalPrettyPrinter;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The one definition of the results file every benchmark under {@code perf/} writes: a JSON list
 * with one object per {@link Measurement}, keys in this order, one object per line:
 *
 * <pre>
 * [
 *   {"name": "tcp.read.1MiB.inflight8", "unit": "GB/s", "value": 1.93,
 *    "baseline_name": "socket.stream.1MiB", "baseline_value": 2.1},
 *   ...
 * ]
 * </pre>
 *
 * Numbers carry six significant digits in plain notation and never NaN or infinities (a {@link
 * Measurement} cannot hold them). Names must be unique within one file. {@link #read} reads the
 * same shape back (keys in any order, any white space) and refuses anything else. Jackson does
 * the JSON; this class only says what the file holds. Stateless and thread safe.
 */
public final class ResultsFile {
  static final String NAME = "name";
  static final String UNIT = "unit";
  static final String VALUE = "value";
  static final String BASELINE_NAME = "baseline_name";
  static final String BASELINE_VALUE = "baseline_value";
  private static final Set<String> KEYS = Set.of(NAME, UNIT, VALUE, BASELINE_NAME, BASELINE_VALUE);
  private static final MathContext DIGITS = new MathContext(6);
  private static final JsonMapper JSON = JsonMapper.builder()
      .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
      .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
      .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
      .enable(JsonGenerator.Feature.WRITE_BIGDECIMAL_AS_PLAIN)
      .disable(JsonWriteFeature.ESCAPE_NON_ASCII)
      .build();

  private ResultsFile() {}

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
      ObjectNode o = JSON.createObjectNode()
          .put(NAME, m.name())
          .put(UNIT, m.unit())
          .put(VALUE, number(m.value()))
          .put(BASELINE_NAME, m.baselineName())
          .put(BASELINE_VALUE, number(m.baselineValue()));
      out.append("  ").append(line(o)).append(i + 1 < measurements.size() ? ",\n" : "\n");
    }
    return out.append("]\n").toString();
  }

  /**
   * Reads a results file.
   *
   * @throws IllegalArgumentException if the text is not a list of measurement objects, saying
   *     where the first problem is
   */
  public static List<Measurement> read(Path file) throws IOException {
    try {
      return decode(Files.readString(file, StandardCharsets.UTF_8));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
    }
  }

  /** The measurements of a results file's text; see {@link #read}. */
  public static List<Measurement> decode(String json) {
    JsonNode root;
    try {
      root = JSON.readTree(json);
    } catch (JsonProcessingException e) {
      JsonLocation at = e.getLocation();
      throw new IllegalArgumentException("not JSON: " + e.getOriginalMessage()
          + (at == null ? "" : " at offset " + at.getCharOffset()), e);
    }
    if (root == null || !root.isArray()) {
      throw new IllegalArgumentException("a results file is a JSON list of measurements");
    }
    List<Measurement> out = new ArrayList<>();
    for (int i = 0; i < root.size(); i++) {
      out.add(measurement(root.get(i), i));
    }
    return out;
  }

  private static Measurement measurement(JsonNode node, int index) {
    if (!node.isObject()) {
      throw new IllegalArgumentException("entry " + index + " is not an object");
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
      String key = it.next().getKey();
      if (!KEYS.contains(key)) {
        throw new IllegalArgumentException("entry " + index + " has an unknown key '" + key + "'");
      }
    }
    return new Measurement(text(node, NAME, index), text(node, UNIT, index), number(node, VALUE, index),
        text(node, BASELINE_NAME, index), number(node, BASELINE_VALUE, index));
  }

  private static String text(JsonNode o, String key, int index) {
    JsonNode v = o.get(key);
    if (v == null || !v.isTextual()) {
      throw new IllegalArgumentException("entry " + index + " needs the string '" + key + "'");
    }
    return v.textValue();
  }

  private static double number(JsonNode o, String key, int index) {
    JsonNode v = o.get(key);
    if (v == null || !v.isNumber()) {
      throw new IllegalArgumentException("entry " + index + " needs the number '" + key + "'");
    }
    return v.doubleValue();
  }

  private static String line(ObjectNode o) {
    try {
      return JSON.writer(new OneLine()).writeValueAsString(o);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** One object on one line, a space after every colon and comma, as the committed files are written. */
  private static final class OneLine extends MinimalPrettyPrinter {
    private static final long serialVersionUID = 1L;

    @Override
    public void writeObjectFieldValueSeparator(JsonGenerator g) throws IOException {
      g.writeRaw(": ");
    }

    @Override
    public void writeObjectEntrySeparator(JsonGenerator g) throws IOException {
      g.writeRaw(", ");
    }
  }

  /** Six significant digits, never an exponent. */
  static BigDecimal number(double v) {
    if (v == 0) {
      return BigDecimal.ZERO;
    }
    return new BigDecimal(v).round(DIGITS).stripTrailingZeros();
  }
}
