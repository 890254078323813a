package io.sluice.spark.tables;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** Applications that share Spark's secret get tables' secrets of their own. */
class TablesSecretTest {

  @Test
  void eachApplicationDerivesItsOwn() {
    String spark = "a shared spark.authenticate.secret";
    String a = TablesSecret.derive(spark, "app-20261128103731-0000");
    assertEquals(a, TablesSecret.derive(spark, "app-20261128103731-0000"));
    assertNotEquals(a, TablesSecret.derive(spark, "app-20261128103731-0001"));
    assertNotEquals(a, TablesSecret.derive("another secret", "app-20261128103731-0000"));
    assertNotEquals(spark, a);
    assertEquals(64, a.length(), "256 bits in hex");
    // The vector python/tests/test_spark_tables.py checks sluice.spark.tables_secret against.
    assertEquals("cabf9261903104a6e4a53d79b93f785a37a5a040d10eb049584492a919c4f0f6", SluiceTables.tablesSecret(spark, "app-20261128103731-0000"));
    // A drop signed in one application is refused in another.
    byte[] drop = ExecutorTables.dropRequest(io.sluice.flight.CallToken.key(a), "features@1-00");
    byte[] other = ExecutorTables.dropRequest(io.sluice.flight.CallToken.key(
        TablesSecret.derive(spark, "app-20261128103731-0001")), "features@1-00");
    assertNotEquals(java.util.Arrays.toString(drop), java.util.Arrays.toString(other));
  }

  @Test
  void withoutASecretOrAnIdThereIsNone() {
    assertThrows(TableException.class, () -> TablesSecret.derive("", "app"));
    assertThrows(TableException.class, () -> TablesSecret.derive("s", null));
  }
}
