package io.sluice.transport;

import static io.sluice.transport.TransportTestSupport.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link Connection#view}: on shm a read-only view of the peer's bytes that stays mapped while it
 * is open, checked like a READ; on tcp there is none.
 */
class ShmViewTest {
  @Test
  void aViewSeesThePeersBytesReadOnlyAndOutlivesTheRegion() throws Exception {
    assumeTrue(Transports.provider("shm").isAvailable());
    try (TransportHarness h = new TransportHarness("shm", Map.of())) {
      Transport owner = h.open(MessageHandler.REJECT_ALL);
      Transport reader = h.open(MessageHandler.REJECT_ALL);
      Connection c = TransportHarness.connect(reader, owner);
      RegisteredRegion r = owner.allocate(1 << 16);
      r.buffer().putLong(64, 0x1122334455667788L);
      Optional<RemoteView> view = c.view(r.descriptor(), 64, 128).get(10, TimeUnit.SECONDS);
      assertTrue(view.isPresent());
      ByteBuffer b = view.get().buffer();
      assertTrue(b.isReadOnly());
      assertEquals(128, b.remaining());
      assertEquals(0x1122334455667788L, b.getLong(0));
      // Out of bounds, like a READ.
      ExecutionException outside = assertThrows(ExecutionException.class,
          () -> c.view(r.descriptor(), 1 << 16, 1).get(10, TimeUnit.SECONDS));
      assertInstanceOf(ReadOutOfBoundsException.class, outside.getCause());
      // The owner revokes the region: no new view, but the open one stays mapped.
      r.close();
      ExecutionException revoked = assertThrows(ExecutionException.class,
          () -> c.view(r.descriptor(), 0, 8).get(10, TimeUnit.SECONDS));
      assertInstanceOf(RegionRevokedException.class, revoked.getCause());
      assertEquals(0x1122334455667788L, view.get().buffer().getLong(0));
      view.get().close();
      view.get().close(); // idempotent
      c.close();
    }
  }

  @Test
  void aViewOutlivesItsConnectionAndTheOwnersTransport() throws Exception {
    assumeTrue(Transports.provider("shm").isAvailable());
    try (TransportHarness h = new TransportHarness("shm", Map.of())) {
      Transport owner = h.open(MessageHandler.REJECT_ALL);
      Transport reader = h.open(MessageHandler.REJECT_ALL);
      Connection c = TransportHarness.connect(reader, owner);
      RegisteredRegion r = owner.allocate(1 << 16);
      for (int i = 0; i < 1 << 16; i += 8) {
        r.buffer().putLong(i, i * 0x9E3779B97F4A7C15L);
      }
      RemoteView view = c.view(r.descriptor(), 4096, 8192).get(10, TimeUnit.SECONDS).orElseThrow();
      owner.close(); // frees the region, closes the connection from the owner's side
      c.close();
      ByteBuffer b = view.buffer();
      for (int i = 0; i < 8192; i += 8) {
        assertEquals((4096L + i) * 0x9E3779B97F4A7C15L, b.getLong(i), "byte " + i + " of the view");
      }
      ExecutionException closed = assertThrows(ExecutionException.class,
          () -> c.view(r.descriptor(), 0, 8).get(10, TimeUnit.SECONDS));
      assertInstanceOf(TransportException.class, closed.getCause());
      view.close();
    }
  }

  @Test
  void tcpOffersNoView() throws Exception {
    try (TransportHarness h = new TransportHarness("tcp", Map.of())) {
      Transport owner = h.open(MessageHandler.REJECT_ALL);
      Transport reader = h.open(MessageHandler.REJECT_ALL);
      Connection c = TransportHarness.connect(reader, owner);
      try (RegisteredRegion r = owner.allocate(4096)) {
        assertEquals(Optional.empty(), c.view(r.descriptor(), 0, 8).get(10, TimeUnit.SECONDS));
        try (RegisteredRegion dst = reader.allocate(4096)) {
          await(c.read(r.descriptor(), 0, dst, 0, 8)); // READs are the way there
        }
      }
      c.close();
    }
  }
}
