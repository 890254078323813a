package io.sluice.flight;

import io.sluice.transport.ShippedCode;
import org.junit.jupiter.api.Test;

/** This module's jar holds the Flight server and client only: no programs, no lab, example or benchmark code. */
class ShippedClassesTest {

  @Test
  void shipsLibraryCodeOnly() {
    ShippedCode.assertLibraryOnly(SluiceFlightServer.class);
  }
}
