package io.sluice.flight.protocol;

import io.sluice.transport.NodeAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * A server's answer to the {@value #ACTION} action: where its transport listens, the node id
 * the transport's authentication will prove, its provider, and how many data-plane gets one
 * client may hold of it at once ({@code maxStreams}: its share of the server's get threads, never
 * more than its host's share nor than all of them). A client opens no more than that at once; the server refuses the one
 * past it with RESOURCE_EXHAUSTED.
 *
 * <p>Encoded as: version byte ({@link DataPlaneProtocol#VERSION}), node id (8), port (4), max
 * streams (4, at least 1), host length (4) and UTF-8 host, provider length (4) and UTF-8 name; all
 * big-endian.
 */
public record DataPlaneOffer(NodeAddress address, long nodeId, String provider, int maxStreams) {
  public static final String ACTION = "sluice.data-plane";
  /** Label of the signature a server with a secret adds over the client's nonce and its answer. */
  public static final String SIGNATURE_LABEL = "sluice/flight/data-plane-answer";
  /** First byte of a refusal: "no data plane", then the reason in UTF-8. */
  private static final byte REFUSAL = 0;

  public DataPlaneOffer {
    if (maxStreams < 1) {
      throw new IllegalArgumentException("a data-plane offer of " + maxStreams + " streams per client (at least 1)");
    }
  }

  /** A server's "no data plane" answer, with its reason. */
  public static byte[] refusal(String reason) {
    byte[] r = reason.getBytes(StandardCharsets.UTF_8);
    return ByteBuffer.allocate(1 + r.length).put(REFUSAL).put(r).array();
  }

  /** The reason of a refusal; empty if {@code answer} is not one. */
  public static java.util.Optional<String> refusalReason(byte[] answer) {
    return answer.length > 0 && answer[0] == REFUSAL
        ? java.util.Optional.of(new String(answer, 1, answer.length - 1, StandardCharsets.UTF_8))
        : java.util.Optional.empty();
  }

  public byte[] encode() {
    byte[] host = address.host().getBytes(StandardCharsets.UTF_8);
    byte[] p = provider.getBytes(StandardCharsets.UTF_8);
    return ByteBuffer.allocate(1 + 8 + 4 + 4 + 4 + host.length + 4 + p.length)
        .put(DataPlaneProtocol.VERSION).putLong(nodeId).putInt(address.port()).putInt(maxStreams)
        .putInt(host.length).put(host).putInt(p.length).put(p).array();
  }

  /** @throws IllegalArgumentException if the bytes are not an offer of this version */
  public static DataPlaneOffer decode(byte[] bytes) {
    try {
      ByteBuffer b = ByteBuffer.wrap(bytes);
      byte version = b.get();
      if (version != DataPlaneProtocol.VERSION) {
        throw new IllegalArgumentException("data-plane offer of version " + version + ", this client speaks "
            + DataPlaneProtocol.VERSION + " (client and server must be the same release)");
      }
      long node = b.getLong();
      int port = b.getInt();
      int maxStreams = b.getInt();
      byte[] host = new byte[checkLength(b.getInt(), b)];
      b.get(host);
      byte[] p = new byte[checkLength(b.getInt(), b)];
      b.get(p);
      if (b.hasRemaining()) {
        throw new IllegalArgumentException(b.remaining() + " bytes after the offer");
      }
      return new DataPlaneOffer(new NodeAddress(new String(host, StandardCharsets.UTF_8), port), node,
          new String(p, StandardCharsets.UTF_8), maxStreams);
    } catch (java.nio.BufferUnderflowException e) {
      throw new IllegalArgumentException("truncated data-plane offer", e);
    }
  }

  private static int checkLength(int n, ByteBuffer b) {
    if (n < 0 || n > b.remaining()) {
      throw new IllegalArgumentException("bad length " + n + " in a data-plane offer");
    }
    return n;
  }
}
