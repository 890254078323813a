package io.sluice.transport.carrier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class SealBuffersTest {
  @Test
  void aGivenBufferIsTakenAgainClearedAndTheIdleOnesAreBounded() {
    SealBuffers pool = new SealBuffers(64, 2);
    ByteBuffer a = pool.take();
    ByteBuffer b = pool.take();
    ByteBuffer c = pool.take();
    assertTrue(a.isDirect());
    assertEquals(64, a.capacity());
    a.put(new byte[10]).flip();
    pool.give(a);
    pool.give(b);
    pool.give(c); // beyond the two kept
    assertEquals(2, pool.idleCount());
    ByteBuffer again = pool.take();
    assertSame(a, again);
    assertEquals(0, again.position());
    assertEquals(64, again.limit());
    assertSame(b, pool.take());
    assertNotSame(c, pool.take());
    assertEquals(0, pool.idleCount());
  }

  @Test
  void aBufferOfAnotherSizeIsRefused() {
    SealBuffers pool = new SealBuffers(64, 2);
    assertThrows(IllegalArgumentException.class, () -> pool.give(ByteBuffer.allocateDirect(32)));
    assertEquals(0, pool.idleCount());
  }
}
