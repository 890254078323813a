package io.sluice.perf.transport;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class RegionPatternTest {
  @Test
  void acceptsACopyFromTheRightOffsetOnly() {
    ByteBuffer region = ByteBuffer.allocateDirect(1 << 16);
    RegionPattern.fill(region);
    ByteBuffer local = ByteBuffer.allocateDirect(8192);
    local.put(0, region, 4096, 4096);
    assertDoesNotThrow(() -> RegionPattern.check(local, 0, 4096, 4096));
    IOException e = assertThrows(IOException.class, () -> RegionPattern.check(local, 0, 8192, 4096));
    assertTrue(e.getMessage().contains("8192"), e.getMessage());
    local.putLong(1000, 0);
    IOException middle = assertThrows(IOException.class, () -> RegionPattern.check(local, 0, 4096, 4096));
    assertTrue(middle.getMessage().contains("5096"), middle.getMessage());
  }
}
