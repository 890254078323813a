package io.sluice.flight;

import static io.sluice.flight.DataPlaneGetTest.SECRET;
import static io.sluice.flight.DataPlaneGetTest.config;
import static io.sluice.flight.DataPlaneGetTest.server;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;

/** One record batch larger than 256 MiB crosses the data plane whole. */
class LargeBatchTest {
  @Test
  void batchOverTwoHundredFiftySixMebibytes() throws Exception {
    int rows = 12_000_000; // three 8-byte columns with validity: about 280 MiB
    try (BufferAllocator allocator = new RootAllocator()) {
      try (SluiceFlightServer server = server(allocator, config("tcp", SECRET));
           SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(), config("tcp", SECRET))) {
        server.publish("big", TestTables.numeric(allocator, 1, rows));
        try (TableReader r = client.getStream(SluiceFlightServer.ticket("big"))) {
          assertTrue(r.next());
          assertEquals("tcp", r.dataPath());
          VectorSchemaRoot root = r.getRoot();
          assertEquals(rows, root.getRowCount());
          BigIntVector a = (BigIntVector) root.getVector("a");
          BigIntVector b = (BigIntVector) root.getVector("b");
          Float8Vector c = (Float8Vector) root.getVector("c");
          long bodyBytes = 0;
          for (var v : root.getFieldVectors()) {
            bodyBytes += v.getBufferSize();
          }
          assertTrue(bodyBytes > 256L << 20, "batch of only " + bodyBytes + " bytes");
          for (int i = 0; i < rows; i += 9_973) {
            assertEquals(i, a.get(i));
            assertEquals(i * 31L + 7, b.get(i));
            assertEquals(i * 0.5, c.get(i));
          }
          assertEquals(rows - 1, a.get(rows - 1));
          assertFalse(r.next());
        }
      }
    }
  }
}
