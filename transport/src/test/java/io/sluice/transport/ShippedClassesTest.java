package io.sluice.transport;

import org.junit.jupiter.api.Test;

/** This module's jar holds the transport API, tcp and shm only: no programs, no lab, example or benchmark code. */
class ShippedClassesTest {

  @Test
  void shipsLibraryCodeOnly() {
    ShippedCode.assertLibraryOnly(Transport.class);
  }
}
