package io.sluice.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sluice.transport.MessageHandler;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportHarness;
import io.sluice.transport.TransportOption;
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.Transports;
import io.sluice.transport.crypto.NodeIdentity;
import io.sluice.transport.wire.ErrorCode;
import io.sluice.transport.wire.FrameType;
import io.sluice.transport.wire.Frames;
import io.sluice.transport.wire.RawFrameSocket;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The shm control service on the wire: it reveals nothing before a peer authenticated (the
 * connection closes without an answer), and afterwards answers only keys the peer may read.
 */
@Timeout(60)
class ShmControlServiceTest {
  private TransportHarness harness;
  private Transport server;

  @BeforeEach
  void start() throws Exception {
    assumeTrue(Transports.provider("shm").isAvailable(), "shm provider unavailable");
    harness = new TransportHarness("shm", Map.of());
    server = harness.open(MessageHandler.REJECT_ALL, Map.of(TransportOption.CONNECT_TIMEOUT_MS.key(), "1500"));
  }

  @AfterEach
  void stop() {
    if (harness != null) {
      harness.close();
    }
  }

  private static ByteBuffer control(ByteBuffer request) {
    return new Frames.Control(ShmMessages.SERVICE, request).encode();
  }

  @Test
  void sharedMemoryIsRevealedOnlyAfterAuthentication() throws Exception {
    try (RegisteredRegion shared = server.allocate(4096)) {
      ByteBuffer open = control(ShmMessages.open(shared.descriptor().key()));
      try (RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
        raw.send(FrameType.CONTROL, 1, control(ShmMessages.hello()));
        raw.expectClosedWithout(FrameType.CONTROL_REPLY, FrameType.AUTH_OK);
      }
      try (RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
        raw.send(FrameType.CONTROL, 2, open.duplicate());
        raw.expectClosedWithout(FrameType.CONTROL_REPLY, FrameType.AUTH_OK);
      }
      try (RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
        assertEquals(Optional.of(FrameType.AUTH_OK),
            raw.authenticate(TransportTestSupport.SECRET, NodeIdentity.generate()).map(RawFrameSocket.Frame::type));
        raw.send(FrameType.CONTROL, 3, control(ShmMessages.open(shared.descriptor().key() ^ 1)));
        RawFrameSocket.Frame refused = raw.next().orElseThrow(() -> new AssertionError("closed on a wrong key"));
        assertEquals(ErrorCode.UNKNOWN_KEY, refused.errorCode(), "OPEN of an unknown key");
        raw.send(FrameType.CONTROL, 4, control(ByteBuffer.allocate(0)));
        assertEquals(ErrorCode.PROTOCOL, raw.next().orElseThrow().errorCode(), "an empty shm request");
        raw.send(FrameType.CONTROL, 5, open.duplicate());
        RawFrameSocket.Frame reply = raw.expect(FrameType.CONTROL_REPLY);
        ShmArena.Location where = ShmMessages.decodeLocation(ByteBuffer.wrap(reply.payload()));
        assertEquals(4096, where.length());
      }
    }
  }

  @Test
  void aKeyGrantedToAnotherPeerIsUnknownToThisOne() throws Exception {
    try (RegisteredRegion granted = server.allocateFor(1234, 4096);
        RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
      assertEquals(Optional.of(FrameType.AUTH_OK),
          raw.authenticate(TransportTestSupport.SECRET, NodeIdentity.generate()).map(RawFrameSocket.Frame::type));
      raw.send(FrameType.CONTROL, 1, control(ShmMessages.open(granted.descriptor().key())));
      assertEquals(ErrorCode.UNKNOWN_KEY, raw.next().orElseThrow().errorCode());
    }
  }
}
