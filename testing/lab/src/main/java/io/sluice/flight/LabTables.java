package io.sluice.flight;

import io.sluice.flight.table.FlightTable;
import org.apache.arrow.memory.ArrowBuf;

/**
 * What the lab's Flight check does to a served table that the public API does not: it changes a
 * byte of a published table's registered memory, as a corrupting device or a stray write would,
 * so the check can show that readers over verbs refuse what they READ.
 */
public final class LabTables {
  private LabTables() {}

  /** Flips one bit of the first column's values in batch {@code batch} of the table {@code name}. */
  public static void flipAByte(SluiceFlightServer server, String name, int batch) {
    try (FlightTable table = server.published(name).orElseThrow(
        () -> new IllegalStateException("no table " + name + " is published"))) {
      ArrowBuf values = table.batches().get(batch).getBuffers().get(1); // [validity, values] of column 0
      long at = 8L * 17;
      values.setByte(at, values.getByte(at) ^ 0x40);
    }
  }
}
