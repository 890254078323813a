package io.sluice.spark.tables;

import io.sluice.transport.ShippedCode;
import org.junit.jupiter.api.Test;

/** This module's jar holds the tables' library only: no programs, no lab, example or benchmark code. */
class ShippedClassesTest {

  @Test
  void shipsLibraryCodeOnly() {
    ShippedCode.assertLibraryOnly(SluiceTables.class);
  }
}
