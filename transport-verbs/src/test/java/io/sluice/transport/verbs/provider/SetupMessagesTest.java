package io.sluice.transport.verbs.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.sluice.transport.ProtocolException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Round trips of the set-up payloads, and rejection of every malformed one. No device needed. */
class SetupMessagesTest {
  @Test
  void roundTrips() throws Exception {
    InetSocketAddress v4 = new InetSocketAddress(InetAddress.getByName("10.77.0.1"), 40000);
    InetSocketAddress v6 = new InetSocketAddress(InetAddress.getByName("fe80::1"), 65535);
    for (InetSocketAddress a : new InetSocketAddress[] {v4, v6}) {
      for (SetupMessages.Purpose purpose : SetupMessages.Purpose.values()) {
        ByteBuffer admit = SetupMessages.admitRequest(purpose, a);
        assertEquals(SetupMessages.Operation.ADMIT, SetupMessages.operation(admit));
        assertEquals(purpose, SetupMessages.purpose(admit));
        assertEquals(a, SetupMessages.address(admit));
      }
      assertEquals(a, SetupMessages.address(SetupMessages.addressReply(a)));
    }
    ByteBuffer key = SetupMessages.keyRequest(0x8000_0000_1234_5678L);
    assertEquals(SetupMessages.Operation.KEY, SetupMessages.operation(key));
    assertEquals(0x8000_0000_1234_5678L, SetupMessages.key(key));
    SetupMessages.KeyInfo info = new SetupMessages.KeyInfo(0x7f00_0000_1000L, 1 << 20, 0xabcdef);
    assertEquals(info, SetupMessages.keyInfo(SetupMessages.keyReply(info)));
    ByteBuffer nodeInfo = SetupMessages.nodeInfoRequest();
    assertEquals(SetupMessages.Operation.NODE_INFO, SetupMessages.operation(nodeInfo));
    SetupMessages.expectEmpty(nodeInfo, "NODE_INFO");
  }

  @Test
  void malformedPayloadsAreRejected() throws Exception {
    assertThrows(ProtocolException.class, () -> SetupMessages.operation(ByteBuffer.allocate(0)));
    assertThrows(ProtocolException.class, () -> SetupMessages.operation(ByteBuffer.wrap(new byte[] {9})));
    assertThrows(ProtocolException.class, () -> SetupMessages.operation(ByteBuffer.wrap(new byte[] {0})));
    assertThrows(ProtocolException.class, () -> SetupMessages.purpose(ByteBuffer.allocate(0)));
    assertThrows(ProtocolException.class, () -> SetupMessages.purpose(ByteBuffer.wrap(new byte[] {3})));
    assertThrows(ProtocolException.class, () -> SetupMessages.address(ByteBuffer.allocate(0)));
    assertThrows(ProtocolException.class, () -> SetupMessages.address(ByteBuffer.wrap(new byte[] {5, 1, 2, 3, 4, 5, 0, 1})));
    assertThrows(ProtocolException.class, () -> SetupMessages.address(ByteBuffer.wrap(new byte[] {4, 1, 2, 3, 4, 0})));
    assertThrows(ProtocolException.class, () -> SetupMessages.address(ByteBuffer.wrap(new byte[] {4, 1, 2, 3, 4, 0, 1, 7})));
    assertThrows(ProtocolException.class, () -> SetupMessages.key(ByteBuffer.allocate(7)));
    assertThrows(ProtocolException.class, () -> SetupMessages.key(ByteBuffer.allocate(9)));
    assertThrows(ProtocolException.class, () -> SetupMessages.keyInfo(ByteBuffer.allocate(SetupMessages.KEY_INFO_LENGTH - 1)));
    ByteBuffer negative = ByteBuffer.allocate(SetupMessages.KEY_INFO_LENGTH).putLong(0).putLong(-1).putInt(0).flip();
    assertThrows(ProtocolException.class, () -> SetupMessages.keyInfo(negative));
    assertThrows(ProtocolException.class, () -> SetupMessages.expectEmpty(ByteBuffer.allocate(1), "x"));
  }

  @Test
  void randomBytesNeverEscapeAsAnythingButProtocolException() {
    Random random = new Random(5);
    for (int i = 0; i < 10_000; i++) {
      byte[] b = new byte[random.nextInt(40)];
      random.nextBytes(b);
      ByteBuffer in = ByteBuffer.wrap(b);
      try {
        SetupMessages.Operation op = SetupMessages.operation(in);
        if (op == SetupMessages.Operation.ADMIT) {
          SetupMessages.purpose(in);
          SetupMessages.address(in);
        } else if (op == SetupMessages.Operation.KEY) {
          SetupMessages.key(in);
        } else {
          SetupMessages.expectEmpty(in, "NODE_INFO");
        }
      } catch (ProtocolException expected) {
        // malformed: the only acceptable failure
      }
      try {
        SetupMessages.keyInfo(ByteBuffer.wrap(b));
      } catch (ProtocolException expected) {
        // malformed: the only acceptable failure
      }
    }
  }
}
