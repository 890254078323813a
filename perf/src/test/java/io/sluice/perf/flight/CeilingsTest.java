package io.sluice.perf.flight;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sluice.flight.protocol.IpcBodies;
import java.nio.ByteBuffer;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.junit.jupiter.api.Test;

/** The memcpy and socket ceilings see the bytes of Arrow's IPC bodies, as the transport ceiling does. */
class CeilingsTest {
  @Test
  void everyCeilingSumsTheIpcBodies() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         BenchTable.Built t = BenchTable.build(allocator, 3 << 20, 10_000)) {
      BodySum bodies = new BodySum();
      for (ArrowRecordBatch b : t.table().batches()) {
        ByteBuffer body = ByteBuffer.allocateDirect((int) b.computeBodyLength());
        IpcBodies.writeBody(b, body);
        bodies.addRange(body.flip());
      }
      assertEquals(bodies.value(), Ceilings.memcpy(t.table().batches()).seen().get(0));
      assertEquals(bodies.value(), Ceilings.socketStream(t.table().batches()).seen().get(0));
    }
  }
}
