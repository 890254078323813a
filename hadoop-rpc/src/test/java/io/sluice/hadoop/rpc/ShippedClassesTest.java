package io.sluice.hadoop.rpc;

import io.sluice.transport.ShippedCode;
import org.junit.jupiter.api.Test;

/** This module's jar holds the Hadoop RPC engine only: no programs, no lab, example or benchmark code. */
class ShippedClassesTest {

  @Test
  void shipsLibraryCodeOnly() {
    ShippedCode.assertLibraryOnly(SluiceRpcEngine.class);
  }
}
