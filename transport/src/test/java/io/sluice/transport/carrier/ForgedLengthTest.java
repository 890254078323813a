package io.sluice.transport.carrier;

import static io.sluice.transport.TransportTestSupport.await;
import static io.sluice.transport.TransportTestSupport.failureOf;
import static io.sluice.transport.TransportTestSupport.message;
import static io.sluice.transport.TransportTestSupport.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.Connection;
import io.sluice.transport.ProtocolException;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportOption;
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.wire.FrameHeader;
import io.sluice.transport.wire.FrameType;
import io.sluice.transport.wire.RecordLayer;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A relay without the secret replaces the server's answer with a bare forged header (16 bytes,
 * then a tag of zeros) announcing a READ_RESPONSE of 2 GiB - 1 for a correlation id nothing
 * waits on. The connecting side must refuse it on its header alone: the connection closes with a
 * {@link ProtocolException} that names the announced length (nothing was allocated or read for
 * it), the pending request fails with it well before its I/O deadline, and the selector thread
 * that received it goes on serving the transport's other connections.
 */
class ForgedLengthTest {
  /** Far beyond the test's deadline: a request that fails by timing out fails the test. */
  private static final String IO_TIMEOUT_MS = "120000";
  private final EchoPeers peers = new EchoPeers();

  @AfterEach
  void closePeers() {
    peers.close();
  }

  private Transport open(boolean encrypted) throws Exception {
    return peers.open(encrypted, Map.of(TransportOption.IO_TIMEOUT_MS.key(), IO_TIMEOUT_MS, TransportOption.IO_THREADS.key(), "1"));
  }

  /** A protected frame's header and an all-zero tag, as someone without the keys can write it. */
  private static byte[] forgedHeader(FrameType type, int length, long corr) {
    ByteBuffer b = ByteBuffer.allocate(FrameHeader.LENGTH + RecordLayer.TAG_LENGTH);
    new FrameHeader(type, length, corr).encode(b);
    return b.array();
  }

  @ParameterizedTest(name = "encrypted={0}")
  @ValueSource(booleans = {false, true})
  void hugeReadResponseForNobodyClosesTheConnectionAndSparesTheSelectorThread(boolean encrypted)
      throws Exception {
    Transport server = open(encrypted);
    Transport client = open(encrypted);
    try (TamperingRelay relay = new TamperingRelay(server.localAddress(), (d, h, f) ->
            h.type() == FrameType.RESPONSE
                ? List.of(forgedHeader(FrameType.READ_RESPONSE, Integer.MAX_VALUE, h.correlationId() + 1000))
                : List.of(f));
        Connection forged = await(client.connect(relay.address()))) {
      Throwable failure = failureOf(forged.request(message("hello")));
      assertInstanceOf(ProtocolException.class, rootTransportCause(failure), "request failed with " + failure);
      TransportTestSupport.eventually("connection closed", TransportTestSupport.DEADLINE, () -> !forged.isOpen());
      Throwable cause = ((CarrierConnection) forged).closeCause().orElseThrow();
      assertInstanceOf(ProtocolException.class, cause, "connection closed by " + cause);
      assertTrue(cause.getMessage().contains(String.valueOf(Integer.MAX_VALUE)),
          "the close cause names the announced length: " + cause.getMessage());

      try (Connection other = await(client.connect(server.localAddress()))) {
        assertEquals("ok:still here", text(await(other.request(message("still here")))));
      }
    }
  }

  /** The first ProtocolException in the chain, or the failure itself. */
  private static Throwable rootTransportCause(Throwable t) {
    for (Throwable x = t; x != null; x = x.getCause()) {
      if (x instanceof ProtocolException) {
        return x;
      }
    }
    return t;
  }
}
