package io.sluice.transport.verbs.diag;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class ControlMessageTest {

  @Test
  void roundTripsThroughItsFixedSizeEncoding() throws IOException {
    ControlMessage message = new ControlMessage(ControlMessage.DESCRIPTOR, 0x7f00_1234_5000L, 1 << 20, 0xbeef, -42L);
    ByteBuffer buffer = ByteBuffer.allocateDirect(ControlMessage.SIZE);
    message.writeTo(buffer);
    assertEquals(message, ControlMessage.readFrom(buffer).expect(ControlMessage.DESCRIPTOR));
  }

  @Test
  void garbageDecodesToAnInvalidKind() {
    ByteBuffer buffer = ByteBuffer.allocate(ControlMessage.SIZE);
    ControlMessage decoded = ControlMessage.readFrom(buffer);
    assertEquals(-1, decoded.kind());
    assertThrows(IOException.class, () -> decoded.expect(ControlMessage.DONE));
  }

  @Test
  void patternChecksumSeesEveryByte() throws IOException {
    ByteBuffer data = ByteBuffer.allocate(4096);
    Pattern.fill(data);
    Pattern.verify(data, "filled");
    long checksum = Pattern.checksum(data);
    data.put(4000, (byte) (data.get(4000) + 1));
    assertNotEquals(checksum, Pattern.checksum(data));
    assertThrows(IOException.class, () -> Pattern.verify(data, "changed"));
  }
}
