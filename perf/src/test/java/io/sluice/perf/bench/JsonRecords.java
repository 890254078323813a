package io.sluice.perf.bench;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * Reads a results file's text with plain Jackson, independent of {@link ResultsFile}, so a test
 * sees the file as any JSON reader would: a list of objects, keys in file order.
 */
public final class JsonRecords {
  private static final ObjectMapper JSON = new ObjectMapper();

  private JsonRecords() {}

  public static List<LinkedHashMap<String, Object>> parse(String text) throws IOException {
    return JSON.readValue(text, new TypeReference<List<LinkedHashMap<String, Object>>>() {});
  }

  /** A number field as a double, whatever JSON number type Jackson chose for it. */
  public static double number(java.util.Map<?, ?> record, String key) {
    return ((Number) record.get(key)).doubleValue();
  }
}
