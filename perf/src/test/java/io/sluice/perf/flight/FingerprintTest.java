package io.sluice.perf.flight;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.sluice.flight.table.FlightTable;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VarCharVector;
import org.junit.jupiter.api.Test;

class FingerprintTest {
  @Test
  void aTableBuiltTwiceHasOneFingerprintAndReadsBackToIt() {
    try (BufferAllocator allocator = new RootAllocator();
         BenchTable.Built a = BenchTable.build(allocator, 1 << 20, 4096);
         BenchTable.Built b = BenchTable.build(allocator, 1 << 20, 4096)) {
      assertEquals(a.fingerprint(), b.fingerprint());
      assertEquals(a.table().rows(), a.fingerprint().rows());
      assertEquals(a.table().batches().size(), a.fingerprint().batches());
      assertEquals(a.fingerprint(), read(allocator, a.table(), -1).value());
    }
  }

  @Test
  void batchesOutOfOrderOrChangedStringsAreCaught() {
    try (BufferAllocator allocator = new RootAllocator();
         BenchTable.Built t = BenchTable.build(allocator, 1 << 20, 4096);
         VectorSchemaRoot root = VectorSchemaRoot.create(BenchTable.schema(), allocator)) {
      Fingerprint f = new Fingerprint();
      new VectorLoader(root).load(t.table().batches().get(1));
      assertThrows(IllegalStateException.class, () -> f.add(root));

      Fingerprint changed = read(allocator, t.table(), 0);
      assertNotEquals(t.fingerprint(), changed.value());
    }
  }

  /** Reads the table as a reader would; in batch {@code shorten}, one name loses a byte. */
  private static Fingerprint read(BufferAllocator allocator, FlightTable table, int shorten) {
    Fingerprint f = new Fingerprint();
    try (VectorSchemaRoot root = VectorSchemaRoot.create(BenchTable.schema(), allocator)) {
      VectorLoader loader = new VectorLoader(root);
      for (int i = 0; i < table.batches().size(); i++) {
        loader.load(table.batches().get(i));
        if (i == shorten) {
          VarCharVector name = (VarCharVector) root.getVector(BenchTable.NAME);
          int last = root.getRowCount();
          name.getOffsetBuffer().setInt((long) last * Integer.BYTES,
              name.getOffsetBuffer().getInt((long) last * Integer.BYTES) - 1);
        }
        f.add(root);
      }
    }
    return f;
  }
}
