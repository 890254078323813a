package io.sluice.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The test parser must reject what is not JSON, or the results-file tests could not fail. */
class JsonParserTest {
  @Test
  void parsesNestedValues() {
    Object v = JsonParser.parse(" [ {\"a\": [1, -2.5e3, true, null], \"b\": \"x\\u0041\"} ] ");
    Map<?, ?> m = (Map<?, ?>) ((List<?>) v).get(0);
    assertEquals(List.of(1.0, -2500.0, true, JsonParser.NULL), m.get("a"));
    assertEquals("xA", m.get("b"));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "[", "[1,]", "{\"a\" 1}", "{\"a\":1,}", "[01]", "[NaN]", "[1.]",
      "\"unterminated", "[\"raw\ttab\"]", "{\"a\":1,\"a\":2}", "[] []", "{a:1}", "[.5]"})
  void rejectsMalformedText(String text) {
    assertThrows(IllegalArgumentException.class, () -> JsonParser.parse(text));
  }
}
