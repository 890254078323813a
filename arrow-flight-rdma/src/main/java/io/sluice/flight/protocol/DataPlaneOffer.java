package io.sluice.flight.protocol;

import io.sluice.transport.NodeAddress;
import io.sluice.transport.crypto.NodeIdentity;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Objects;

/**
 * A server's answer to the {@value #ACTION} action: where its transport listens, the identity
 * key its transport's handshake will prove (an Ed25519 public key; the node id derives from it),
 * its provider, and how many data-plane gets one client may hold of it at once ({@code
 * maxStreams}: its share of the server's get threads, never more than its host's share nor than
 * all of them). A client opens no more than that at once; the server refuses the one past it with
 * RESOURCE_EXHAUSTED.
 *
 * <p>A server with the secret signs its answer, offer or refusal ({@link #SIGNATURE_LABEL}), and
 * a client takes neither unsigned: an offer on the path could otherwise name another node of the
 * cluster, which holds the secret and passes the handshake. The client then requires that the
 * transport it reaches proves exactly this key, not merely a key with the same 64-bit node id.
 *
 * <p>Encoded as: version byte ({@link DataPlaneProtocol#VERSION}), identity key (32), port (4),
 * max streams (4, at least 1), host length (4) and UTF-8 host, provider length (4) and UTF-8 name;
 * all big-endian. Immutable.
 */
public record DataPlaneOffer(NodeAddress address, byte[] identityKey, String provider, int maxStreams) {
  public static final String ACTION = "sluice.data-plane";
  /** Label of the signature a server with a secret adds over the client's nonce, the audience and its answer. */
  public static final String SIGNATURE_LABEL = "sluice/flight/data-plane-answer";
  /** Length of a transport identity key (Ed25519, raw). */
  public static final int IDENTITY_KEY_BYTES = NodeIdentity.PUBLIC_KEY_LENGTH;
  /** First byte of a refusal: "no data plane", then the reason in UTF-8. */
  private static final byte REFUSAL = 0;

  public DataPlaneOffer {
    if (maxStreams < 1) {
      throw new IllegalArgumentException("a data-plane offer of " + maxStreams + " streams per client (at least 1)");
    }
    if (identityKey.length != IDENTITY_KEY_BYTES) {
      throw new IllegalArgumentException("a data-plane offer's identity key has " + IDENTITY_KEY_BYTES
          + " bytes, not " + identityKey.length);
    }
    identityKey = identityKey.clone();
  }

  /** The identity key (a copy). */
  @Override
  public byte[] identityKey() {
    return identityKey.clone();
  }

  /** The transport node id the identity key derives. */
  public long nodeId() {
    return NodeIdentity.derivedNodeId(identityKey);
  }

  /** Whether {@code proven}, the key a transport connection proved, is this offer's key. */
  public boolean names(byte[] proven) {
    return MessageDigest.isEqual(identityKey, proven);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof DataPlaneOffer d && address.equals(d.address) && Arrays.equals(identityKey, d.identityKey)
        && provider.equals(d.provider) && maxStreams == d.maxStreams;
  }

  @Override
  public int hashCode() {
    return Objects.hash(address, Arrays.hashCode(identityKey), provider, maxStreams);
  }

  @Override
  public String toString() {
    return "DataPlaneOffer[" + address + ", node " + String.format("%016x", nodeId()) + ", " + provider + ", "
        + maxStreams + " streams]";
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
    return ByteBuffer.allocate(1 + IDENTITY_KEY_BYTES + 4 + 4 + 4 + host.length + 4 + p.length)
        .put(DataPlaneProtocol.VERSION).put(identityKey).putInt(address.port()).putInt(maxStreams)
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
      byte[] key = new byte[IDENTITY_KEY_BYTES];
      b.get(key);
      int port = b.getInt();
      int maxStreams = b.getInt();
      byte[] host = new byte[checkLength(b.getInt(), b)];
      b.get(host);
      byte[] p = new byte[checkLength(b.getInt(), b)];
      b.get(p);
      if (b.hasRemaining()) {
        throw new IllegalArgumentException(b.remaining() + " bytes after the offer");
      }
      return new DataPlaneOffer(new NodeAddress(new String(host, StandardCharsets.UTF_8), port), key,
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
