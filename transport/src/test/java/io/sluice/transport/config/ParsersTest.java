package io.sluice.transport.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Each parser's accepted syntax, and the reason it gives for what it refuses. */
class ParsersTest {
  @ParameterizedTest
  @CsvSource({
      "0, 0",
      "16777216, 16777216",
      "7b, 7",
      "1k, 1024",
      "1kb, 1024",
      "16m, 16777216",
      "16MB, 16777216",
      "2g, 2147483648",
      "2Gb, 2147483648",
      "1t, 1099511627776",
      "1TB, 1099511627776",
      "1p, 1125899906842624",
      "3pb, 3377699720527872"})
  void sizesFollowSparksByteStrings(String text, long bytes) {
    assertEquals(bytes, Parsers.bytes().parse(text));
  }

  @Test
  void sizesThatAreNotSizesAreRefusedWithTheSyntax() {
    assertTrue(refusal(() -> Parsers.bytes().parse("16q")).contains("unknown size suffix 'q'"));
    assertTrue(refusal(() -> Parsers.bytes().parse("1.5m")).contains("fractional sizes are not supported"));
    assertTrue(refusal(() -> Parsers.bytes().parse("-1")).contains("whole number of bytes"));
    assertTrue(refusal(() -> Parsers.bytes().parse("")).contains("whole number of bytes"));
    assertTrue(refusal(() -> Parsers.bytes().parse("16 m")).contains("whole number of bytes"));
    assertTrue(refusal(() -> Parsers.bytes().parse("m")).contains("whole number of bytes"));
    assertTrue(refusal(() -> Parsers.bytes().parse("8192p")).contains("size too large"));
    assertTrue(refusal(() -> Parsers.bytes().parse("99999999999999999999")).contains("size too large"));
  }

  @ParameterizedTest
  @CsvSource({
      "30000, 30000",
      "0, 0",
      "-5, -5",
      "1500us, 1",
      "250ms, 250",
      "30s, 30000",
      "30S, 30000",
      "2m, 120000",
      "2min, 120000",
      "1h, 3600000",
      "1d, 86400000"})
  void durationsFollowSparksTimeStringsInTheKeysUnit(String text, long millis) {
    assertEquals(millis, Parsers.duration(TimeUnit.MILLISECONDS).parse(text));
  }

  @Test
  void aPlainDurationIsInTheDeclaredUnit() {
    assertEquals(90L, Parsers.duration(TimeUnit.SECONDS).parse("90"));
    assertEquals(30L, Parsers.duration(TimeUnit.SECONDS).parse("30s"));
    assertEquals(120L, Parsers.duration(TimeUnit.SECONDS).parse("2m"));
    assertEquals(2_000_000L, Parsers.duration(TimeUnit.MICROSECONDS).parse("2s"));
  }

  @Test
  void durationsThatAreNotDurationsAreRefusedWithTheSyntax() {
    assertTrue(refusal(() -> Parsers.duration(TimeUnit.MILLISECONDS).parse("30x")).contains("unknown time suffix 'x'"));
    assertTrue(refusal(() -> Parsers.duration(TimeUnit.MILLISECONDS).parse("1.5s")).contains("fractional durations"));
    assertTrue(refusal(() -> Parsers.duration(TimeUnit.MILLISECONDS).parse("soon")).contains("optional suffix us, ms"));
    assertTrue(refusal(() -> Parsers.duration(TimeUnit.MILLISECONDS).parse("")).contains("optional suffix us, ms"));
    assertTrue(refusal(() -> Parsers.duration(TimeUnit.NANOSECONDS).parse("999999999d")).contains("too large"));
    assertTrue(refusal(() -> Parsers.duration(TimeUnit.MILLISECONDS).parse("99999999999999999999")).contains("too large"));
  }

  @ParameterizedTest
  @CsvSource({"true, true", "TRUE, true", "True, true", "false, false", "FaLsE, false"})
  void booleansAreTrueOrFalseInAnyCase(String text, boolean value) {
    assertEquals(value, Parsers.bool().parse(text));
  }

  @ParameterizedTest
  @ValueSource(strings = {"yes", "1", "", "t", "truee"})
  void otherBooleansAreRefused(String text) {
    assertEquals("expected true or false", refusal(() -> Parsers.bool().parse(text)));
  }

  @Test
  void integersFitTheirType() {
    assertEquals(-7, Parsers.integer().parse("-7"));
    assertEquals(Integer.MAX_VALUE, Parsers.integer().parse("2147483647"));
    assertTrue(refusal(() -> Parsers.integer().parse("2147483648")).contains("whole number between"));
    assertTrue(refusal(() -> Parsers.integer().parse("4k")).contains("whole number between"));
    assertEquals(Long.MAX_VALUE, Parsers.longInteger().parse("9223372036854775807"));
    assertEquals("expected a whole number", refusal(() -> Parsers.longInteger().parse("9223372036854775808")));
    assertEquals("expected a whole number", refusal(() -> Parsers.longInteger().parse("ten")));
  }

  @Test
  void absolutePathsAreCommaSeparatedAndNormalized() {
    assertEquals(List.of(), Parsers.absolutePaths().parse(""));
    assertEquals(List.of(Path.of("/data/1"), Path.of("/data/2")), Parsers.absolutePaths().parse("/data/1, /data/x/../2"));
  }

  @Test
  void relativeOrEmptyPathsAreRefused() {
    assertTrue(refusal(() -> Parsers.absolutePaths().parse("/data/1,tmp")).contains("'tmp' is relative"));
    assertTrue(refusal(() -> Parsers.absolutePaths().parse("/data/1,,/data/2")).contains("empty entry"));
  }

  @Test
  void stringsAreTheirText() {
    assertEquals("/dev/shm", Parsers.string().parse("/dev/shm"));
    assertEquals("", Parsers.string().parse(""));
  }

  @Test
  void choicesMatchInAnyCaseAndGiveTheDeclaredSpelling() {
    ValueParser<String> p = Parsers.choice("auto", "tcp", "verbs");
    assertEquals("tcp", p.parse("TCP"));
    assertEquals("verbs", p.parse("Verbs"));
    assertEquals("expected one of auto, tcp, verbs", refusal(() -> p.parse("carrier-pigeon")));
    assertThrows(IllegalArgumentException.class, Parsers::choice);
  }

  private static String refusal(org.junit.jupiter.api.function.Executable parse) {
    return assertThrows(IllegalArgumentException.class, parse).getMessage();
  }
}
