package io.sluice.transport.wire;

import io.sluice.transport.AuthenticationFailedException;
import io.sluice.transport.NodeAddress;
import io.sluice.transport.ProtocolException;
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.crypto.AesGcmEngine;
import io.sluice.transport.crypto.EngineChoice;
import io.sluice.transport.crypto.NodeIdentity;
import io.sluice.transport.crypto.SessionKeys;
import io.sluice.transport.handshake.Handshake;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.Optional;

/**
 * A hand-driven end of the carrier's wire protocol, for tests that must send what a real {@link
 * CarrierConnection} or {@code ServerSession} never would: frames out of order, wrong proofs, cut-off
 * payloads, garbage. Blocking, with the test deadline on every read. Owned by one thread.
 */
public final class RawFrameSocket implements AutoCloseable {
  /** A frame received from the server. */
  public record Frame(FrameHeader header, byte[] payload) {
    public FrameType type() {
      return header.type();
    }

    /** The code of an ERROR frame; fails the test for any other frame or a malformed one. */
    /** The message of this ERROR frame. @throws AssertionError if it is not a well-formed ERROR frame */
    public String errorMessage() {
      if (type() != FrameType.ERROR) {
        throw new AssertionError("expected a refusal (an ERROR frame), got " + type());
      }
      try {
        return Frames.ErrorFrame.decode(ByteBuffer.wrap(payload)).message();
      } catch (ProtocolException e) {
        throw new AssertionError("malformed ERROR frame from the server", e);
      }
    }

    public ErrorCode errorCode() {
      if (type() != FrameType.ERROR) {
        throw new AssertionError("expected an ERROR frame, got " + type());
      }
      try {
        return Frames.ErrorFrame.decode(ByteBuffer.wrap(payload)).code();
      } catch (ProtocolException e) {
        throw new AssertionError("malformed ERROR frame from the server", e);
      }
    }
  }

  private final Socket socket;
  private final InputStream in;
  private final OutputStream out;
  private RecordLayer.Sealer sealer;
  private RecordLayer.Opener opener;

  public RawFrameSocket(NodeAddress address) throws IOException {
    this(new Socket(address.host(), address.port()));
  }

  public RawFrameSocket(Socket connected) throws IOException {
    socket = connected;
    socket.setSoTimeout((int) TransportTestSupport.DEADLINE.toMillis());
    socket.setTcpNoDelay(true);
    in = socket.getInputStream();
    out = socket.getOutputStream();
  }

  /**
   * Sends one well-formed frame, sealed with this side's key once the handshake is over.
   *
   * @return false if the server already closed the socket
   */
  public boolean send(FrameType type, long corr, ByteBuffer payload) {
    return sendRaw(encode(type, corr, payload));
  }

  /** The bytes {@link #send} would write; sealing consumes a sequence number. */
  public byte[] encode(FrameType type, long corr, ByteBuffer payload) {
    ByteBuffer[] parts = sealer != null ? sealer.seal(type, corr, payload)
        : new ByteBuffer[] {new FrameHeader(type, payload.remaining(), corr).toBuffer(), payload.duplicate()};
    int n = 0;
    for (ByteBuffer p : parts) {
      n += p.remaining();
    }
    ByteBuffer b = ByteBuffer.allocate(n);
    for (ByteBuffer p : parts) {
      b.put(p.duplicate());
    }
    return b.array();
  }

  /**
   * Turns on record protection as the client ({@code client}) or server of the connection, with
   * the engine a transport opened now would choose (so {@code -Dsluice.transport.encryption.engine}
   * decides it for a whole test run).
   */
  public void protect(SessionKeys keys, boolean client) {
    AesGcmEngine engine = EngineChoice.choose(EngineChoice.AUTO).engine();
    sealer = client ? RecordLayer.clientSealer(keys, engine) : RecordLayer.serverSealer(keys, engine);
    opener = client ? RecordLayer.clientOpener(keys, engine) : RecordLayer.serverOpener(keys, engine);
  }

  /** Sends raw bytes. @return false if the server already closed the socket */
  public boolean sendRaw(byte[] bytes) {
    try {
      out.write(bytes);
      out.flush();
      return true;
    } catch (IOException closed) {
      return false;
    }
  }

  /**
   * The next frame, or empty when the server closed the socket (EOF or reset).
   *
   * @throws AssertionError if the server neither sends nor closes within the deadline
   * @throws ProtocolException if the server sent a malformed header
   */
  public Optional<Frame> next() throws ProtocolException {
    Optional<FrameHeader> h = nextHeader();
    return h.isEmpty() ? Optional.empty() : body(h.get());
  }

  private Optional<FrameHeader> nextHeader() throws ProtocolException {
    byte[] head = new byte[FrameHeader.LENGTH];
    if (!readFully(head)) {
      return Optional.empty();
    }
    return Optional.of(FrameHeader.decode(ByteBuffer.wrap(head), 64L << 20));
  }

  /** Reads a frame's tag (once protected) and payload, checked and decrypted. */
  private Optional<Frame> body(FrameHeader h) throws ProtocolException {
    byte[] tag = new byte[opener != null ? RecordLayer.TAG_LENGTH : 0];
    byte[] payload = new byte[h.payloadLength()];
    if (!readFully(tag) || !readFully(payload)) {
      return Optional.empty();
    }
    if (opener == null) {
      return Optional.of(new Frame(h, payload));
    }
    ByteBuffer plain = opener.open(h, ByteBuffer.wrap(tag), ByteBuffer.wrap(payload));
    byte[] bytes = new byte[plain.remaining()];
    plain.get(bytes);
    return Optional.of(new Frame(h, bytes));
  }

  /** Reads frames until the server closes; fails if it sends one of {@code forbidden} first. */
  public void expectClosedWithout(FrameType... forbidden) throws ProtocolException {
    for (int frames = 0; ; frames++) {
      Optional<Frame> f = next();
      if (f.isEmpty()) {
        return;
      }
      for (FrameType t : forbidden) {
        if (f.get().type() == t) {
          throw new AssertionError("server sent " + t + " where it must close the connection");
        }
      }
      if (frames > 1000) {
        throw new AssertionError("server keeps talking to a misbehaving peer");
      }
    }
  }

  /**
   * Runs the client half of the handshake with {@code secret} as {@code self}, unencrypted.
   *
   * @return the server's last frame: AUTH_OK if the server accepted, ERROR or empty otherwise
   */
  public Optional<Frame> authenticate(String secret, NodeIdentity self) throws ProtocolException {
    return authenticate(secret, self, 0);
  }

  /** Runs the client half of the handshake with {@code flags}; on AUTH_OK, protection is on. */
  public Optional<Frame> authenticate(String secret, NodeIdentity self, int flags) throws ProtocolException {
    return authenticateClaiming(secret, self, self.nodeId(), self.publicKey(), flags);
  }

  /**
   * Runs the client half of the handshake claiming node {@code node} with public key {@code key},
   * signing with {@code signer}'s private key: an honest client when those are {@code signer}'s
   * own, a liar otherwise. On AUTH_OK, protection is on and the server's signature checked.
   *
   * @return the server's last frame: AUTH_OK if the server accepted, ERROR or empty otherwise
   */
  public Optional<Frame> authenticateClaiming(String secret, NodeIdentity signer, long node, byte[] key, int flags)
      throws ProtocolException {
    return authenticate(secret, signer, node, key, flags, () -> { });
  }

  /**
   * Runs the client half of the handshake as {@code self}, unencrypted, running {@code
   * afterChallenge} between the server's CHALLENGE and this side's AUTH: a slow client.
   */
  public Optional<Frame> authenticateSlowly(String secret, NodeIdentity self, Runnable afterChallenge)
      throws ProtocolException {
    return authenticate(secret, self, self.nodeId(), self.publicKey(), 0, afterChallenge);
  }

  private Optional<Frame> authenticate(String secret, NodeIdentity signer, long node, byte[] key, int flags,
      Runnable afterChallenge) throws ProtocolException {
    Handshake.Client client = new Handshake(secret).client(signer, node, key, flags);
    send(FrameType.HELLO, 0, client.hello());
    Optional<Frame> challenge = next();
    if (challenge.isEmpty() || challenge.get().type() != FrameType.CHALLENGE) {
      return challenge;
    }
    afterChallenge.run();
    try {
      send(FrameType.AUTH, 0, client.auth(ByteBuffer.wrap(challenge.get().payload())));
    } catch (AuthenticationFailedException e) {
      throw new AssertionError("the server's CHALLENGE does not check out", e);
    }
    Optional<FrameHeader> h = nextHeader();
    if (h.isPresent() && h.get().type() == FrameType.AUTH_OK) {
      protect(client.keys().sessionKeys(), true);
    }
    Optional<Frame> last = h.isEmpty() ? Optional.empty() : body(h.get());
    if (last.isPresent() && last.get().type() == FrameType.AUTH_OK) {
      try {
        client.checkAuthOk(Frames.AuthOk.decode(ByteBuffer.wrap(last.get().payload())));
      } catch (AuthenticationFailedException e) {
        throw new AssertionError("the server's AUTH_OK does not carry its signature", e);
      }
    }
    return last;
  }

  /**
   * Runs the server half of the handshake with {@code secret} as {@code self}; protection is on
   * afterwards.
   *
   * @return the client's node id
   */
  public long acceptHandshake(String secret, NodeIdentity self) throws ProtocolException {
    return acceptHandshakeClaiming(secret, self, self.nodeId(), self.publicKey());
  }

  /**
   * Runs the server half of the handshake claiming node {@code node} with public key {@code key},
   * signing with {@code signer}'s private key, without checking the client's finished value or
   * signature; protection is on afterwards.
   *
   * @return the client's node id
   */
  public long acceptHandshakeClaiming(String secret, NodeIdentity signer, long node, byte[] key)
      throws ProtocolException {
    Frame hello = next().orElseThrow(() -> new AssertionError("client closed before HELLO"));
    if (hello.type() != FrameType.HELLO) {
      throw new AssertionError("expected HELLO, got " + hello.type());
    }
    Handshake.Server server;
    try {
      server = new Handshake(secret).server(signer, node, key, 0,
          Frames.Hello.decode(ByteBuffer.wrap(hello.payload())));
    } catch (AuthenticationFailedException e) {
      throw new AssertionError("the client's HELLO does not check out", e);
    }
    send(FrameType.CHALLENGE, 0, server.challenge());
    Frame auth = next().orElseThrow(() -> new AssertionError("client closed before AUTH"));
    if (auth.type() != FrameType.AUTH) {
      throw new AssertionError("expected AUTH, got " + auth.type());
    }
    Frames.Auth a = Frames.Auth.decode(ByteBuffer.wrap(auth.payload()));
    protect(server.keys().sessionKeys(), false);
    try {
      // Signs for whatever client: a lying server does not care whether the client's proofs hold.
      send(FrameType.AUTH_OK, 0, new Frames.AuthOk(signer.sign(Handshake.SERVER_SIGNATURE,
          concat(server.keys().transcriptHash(), server.keys().clientFinished()))).encode());
    } catch (RuntimeException e) {
      throw new AssertionError(e);
    }
    return server.clientNode();
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] c = new byte[a.length + b.length];
    System.arraycopy(a, 0, c, 0, a.length);
    System.arraycopy(b, 0, c, a.length, b.length);
    return c;
  }

  /** The next frame, which must arrive. */
  public Frame expect(FrameType type) throws ProtocolException {
    Frame f = next().orElseThrow(() -> new AssertionError("peer closed while " + type + " was expected"));
    if (f.type() != type) {
      throw new AssertionError("expected " + type + ", got " + f.type());
    }
    return f;
  }

  private boolean readFully(byte[] b) {
    int off = 0;
    try {
      while (off < b.length) {
        int n = in.read(b, off, b.length - off);
        if (n < 0) {
          return false; // closed, possibly mid-frame
        }
        off += n;
      }
      return true;
    } catch (SocketTimeoutException e) {
      throw new AssertionError("server neither answered nor closed within " + TransportTestSupport.DEADLINE);
    } catch (IOException reset) {
      return false;
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
