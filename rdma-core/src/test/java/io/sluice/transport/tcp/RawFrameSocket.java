package io.sluice.transport.tcp;

import io.sluice.transport.NodeAddress;
import io.sluice.transport.ProtocolException;
import io.sluice.transport.TransportTestSupport;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.Optional;

/**
 * A hand-driven end of the tcp wire protocol, for tests that must send what a real {@link
 * TcpConnection} or {@link ServerSession} never would: frames out of order, wrong proofs, cut-off
 * payloads, garbage. Blocking, with the test deadline on every read. Owned by one thread.
 */
final class RawFrameSocket implements AutoCloseable {
  /** A frame received from the server. */
  record Frame(FrameHeader header, byte[] payload) {
    FrameType type() {
      return header.type();
    }
  }

  private final Socket socket;
  private final InputStream in;
  private final OutputStream out;

  RawFrameSocket(NodeAddress address) throws IOException {
    this(new Socket(address.host(), address.port()));
  }

  RawFrameSocket(Socket connected) throws IOException {
    socket = connected;
    socket.setSoTimeout((int) TransportTestSupport.DEADLINE.toMillis());
    socket.setTcpNoDelay(true);
    in = socket.getInputStream();
    out = socket.getOutputStream();
  }

  /** Sends one well-formed frame. @return false if the server already closed the socket */
  boolean send(FrameType type, long corr, ByteBuffer payload) {
    ByteBuffer b = ByteBuffer.allocate(FrameHeader.LENGTH + payload.remaining());
    new FrameHeader(type, payload.remaining(), corr).encode(b);
    b.put(payload.duplicate());
    return sendRaw(b.array());
  }

  /** Sends raw bytes. @return false if the server already closed the socket */
  boolean sendRaw(byte[] bytes) {
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
  Optional<Frame> next() throws ProtocolException {
    byte[] head = new byte[FrameHeader.LENGTH];
    if (!readFully(head)) {
      return Optional.empty();
    }
    FrameHeader h = FrameHeader.decode(ByteBuffer.wrap(head), 64L << 20);
    byte[] payload = new byte[h.payloadLength()];
    if (!readFully(payload)) {
      return Optional.empty();
    }
    return Optional.of(new Frame(h, payload));
  }

  /** Reads frames until the server closes; fails if it sends one of {@code forbidden} first. */
  void expectClosedWithout(FrameType... forbidden) throws ProtocolException {
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
   * Runs the client half of the handshake with {@code secret}.
   *
   * @return the server's last frame: AUTH_OK if the server accepted, ERROR or empty otherwise
   */
  Optional<Frame> authenticate(String secret, long node) throws ProtocolException {
    Handshake hs = new Handshake(secret);
    byte[] nonce = Handshake.nonce();
    send(FrameType.HELLO, 0, new Frames.Hello(Frames.VERSION, node, nonce).encode());
    Optional<Frame> challenge = next();
    if (challenge.isEmpty() || challenge.get().type() != FrameType.CHALLENGE) {
      return challenge;
    }
    Frames.Challenge c = Frames.Challenge.decode(ByteBuffer.wrap(challenge.get().payload()));
    send(FrameType.AUTH, 0, new Frames.Auth(hs.clientProof(c.nonce(), nonce, node, c.node())).encode());
    return next();
  }

  /**
   * Runs the server half of the handshake with {@code secret} as node {@code self}.
   *
   * @return the client's node id
   */
  long acceptHandshake(String secret, long self) throws ProtocolException {
    Frame hello = next().orElseThrow(() -> new AssertionError("client closed before HELLO"));
    if (hello.type() != FrameType.HELLO) {
      throw new AssertionError("expected HELLO, got " + hello.type());
    }
    Frames.Hello h = Frames.Hello.decode(ByteBuffer.wrap(hello.payload()));
    byte[] nonce = Handshake.nonce();
    byte[] proof = new Handshake(secret).serverProof(h.nonce(), nonce, self, h.node());
    send(FrameType.CHALLENGE, 0, new Frames.Challenge(Frames.VERSION, self, nonce, proof).encode());
    Frame auth = next().orElseThrow(() -> new AssertionError("client closed before AUTH"));
    if (auth.type() != FrameType.AUTH) {
      throw new AssertionError("expected AUTH, got " + auth.type());
    }
    send(FrameType.AUTH_OK, 0, ByteBuffer.allocate(0));
    return h.node();
  }

  /** The next frame, which must arrive. */
  Frame expect(FrameType type) throws ProtocolException {
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
