package org.apache.spark.shuffle.rdma;

import io.sluice.transport.ShippedCode;
import org.junit.jupiter.api.Test;

/** This module's jar holds the shuffle manager only: no programs, no lab, example or benchmark code. */
class ShippedClassesTest {

  @Test
  void shipsLibraryCodeOnly() {
    ShippedCode.assertLibraryOnly(RdmaShuffleManager.class);
  }
}
