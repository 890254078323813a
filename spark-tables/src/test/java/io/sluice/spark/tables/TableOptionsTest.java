package io.sluice.spark.tables;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

/** Options and configuration keys: defaults, parsing, and errors that name what is wrong. */
class TableOptionsTest {

  @Test
  void defaultsAndParsedValues() {
    assertEquals(TableOptions.defaults(), TableOptions.parse(Map.of()));
    TableOptions o = TableOptions.parse(Map.of("BatchRows", "100", "ttl", "90s", "republishLost", "TRUE",
        "mode", "overwrite", "table", "ignored"));
    assertEquals(100, o.batchRows());
    assertEquals(Optional.of(Duration.ofSeconds(90)), o.ttl());
    assertTrue(o.republishLost());
    assertTrue(o.overwrite());
  }

  @Test
  void invalidOptionsAreNamed() {
    assertTrue(assertThrows(IllegalArgumentException.class, () -> TableOptions.parse(Map.of("ttl", "soon")))
        .getMessage().contains("ttl"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> TableOptions.parse(Map.of("batchRows", "x")))
        .getMessage().contains("batchRows"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> TableOptions.parse(Map.of("mode", "append")))
        .getMessage().contains("mode"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> TableOptions.parse(Map.of("republishLost", "yes")))
        .getMessage().contains("republishLost"));
  }

  @Test
  void theBudgetIsAShareOfOffHeapMemoryOrOfTheHeapUnlessSet() {
    long heap = 1L << 30;
    assertEquals((long) (0.3 * heap), TablesConf.memoryBudget(new SparkConf(false), heap));
    SparkConf offHeap = new SparkConf(false).set("spark.memory.offHeap.enabled", "true")
        .set("spark.memory.offHeap.size", "2g");
    assertEquals((long) (0.3 * (2L << 30)), TablesConf.memoryBudget(offHeap, heap));
    assertEquals(512L << 20, TablesConf.memoryBudget(new SparkConf(false).set(TablesConf.MEMORY, "512m"), heap));
    assertThrows(IllegalArgumentException.class,
        () -> TablesConf.memoryBudget(new SparkConf(false).set(TablesConf.MEMORY_FRACTION, "1.5"), heap));
    assertThrows(IllegalArgumentException.class,
        () -> TablesConf.memoryBudget(new SparkConf(false).set(TablesConf.MEMORY, "lots"), heap));
  }

  @Test
  void tlsNeedsACertificateAndKeyAndTheSecretIsNeverAKey() {
    assertFalse(TablesConf.tls(new SparkConf(false)).isPresent());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TablesConf.tls(new SparkConf(false).set("spark.ssl.enabled", "true")));
    assertTrue(e.getMessage().contains(TablesConf.TLS_CERT_CHAIN), e.getMessage());
    assertTrue(TablesConf.tls(new SparkConf(false).set("spark.ssl.rpc.enabled", "true")
        .set("spark.ssl.rpc.certChain", "/c.pem").set("spark.ssl.rpc.privateKey", "/k.pem")).isPresent());
    Map<String, String> keys = TablesConf.transportKeys(new SparkConf(false)
        .set(TablesConf.TRANSPORT_PREFIX + "secret", "in the open").set(TablesConf.FLIGHT_PREFIX + "streamWindow", "8"));
    assertEquals("8", keys.get("sluice.flight.streamWindow"));
    assertThrows(IllegalArgumentException.class, () -> TablesConf.refuseSecretKey(keys));
    for (String k : new String[] {"puts", "tokenAudiences"}) {
      Map<String, String> flight = TablesConf.transportKeys(new SparkConf(false).set(TablesConf.FLIGHT_PREFIX + k, "x"));
      assertTrue(assertThrows(IllegalArgumentException.class, () -> TablesConf.refuseSecretKey(flight))
          .getMessage().contains(k));
    }
  }
}
