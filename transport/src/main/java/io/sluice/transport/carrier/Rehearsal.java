package io.sluice.transport.carrier;

import io.sluice.transport.TransportException;
import io.sluice.transport.crypto.AesGcmEngine;
import io.sluice.transport.crypto.NodeIdentity;
import io.sluice.transport.crypto.SessionKeys;
import io.sluice.transport.handshake.Handshake;
import io.sluice.transport.wire.ErrorCode;
import io.sluice.transport.wire.FrameHeader;
import io.sluice.transport.wire.FrameType;
import io.sluice.transport.wire.Frames;
import io.sluice.transport.wire.RecordLayer;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * A whole handshake and two protected frames (AUTH_OK and a READ's answer), played in memory by a
 * throwaway identity with itself while a transport opens, so that its first real connection finds
 * the handshake's classes loaded, the JCA providers set up and their code run once: on a cold JVM
 * the first X25519 agreement, Ed25519 signature and verification, HKDF, record seal and GMAC cost
 * tens of milliseconds of class loading and interpretation, which would otherwise fall on the
 * first task that connects. It opens no socket, counts in no metric and keeps nothing. Stateless,
 * thread safe.
 */
public final class Rehearsal {
  private static final String SECRET = "sluice/7 rehearsal, not a secret";

  private Rehearsal() {}

  /**
   * Plays a handshake asking for encryption when {@code encrypted} (records sealed and opened by
   * {@code engine}), else one with HMAC tags and a READ_RESPONSE's GMAC (by {@code engine} too).
   * Failures are left for real connections to report.
   */
  public static void run(AesGcmEngine engine, boolean encrypted) {
    loadConnectionClasses();
    try {
      // One identity plays both sides: the code is the same, and a key pair costs a cold JVM dearly.
      NodeIdentity client = NodeIdentity.generate();
      NodeIdentity server = client;
      int flags = encrypted ? Handshake.FLAG_ENCRYPT : 0;
      Handshake hs = new Handshake(SECRET);
      Handshake.Client c = hs.client(client, flags);
      Handshake.Server s = hs.server(server, flags, Frames.Hello.decode(c.hello()));
      ByteBuffer auth = c.auth(s.challenge());
      Frames.Auth a = Frames.Auth.decode(auth.duplicate());
      s.checkFinished(a);
      ByteBuffer authOk = s.authOk(a);
      SessionKeys serverKeys = s.keys().sessionKeys();
      SessionKeys clientKeys = c.keys().sessionKeys();
      RecordLayer.Sealer serverSealer = RecordLayer.serverSealer(serverKeys, engine);
      RecordLayer.Opener clientOpener = RecordLayer.clientOpener(clientKeys, engine);
      open(clientOpener, serverSealer.seal(FrameType.AUTH_OK, 0, authOk));
      c.checkAuthOk(Frames.AuthOk.decode(authOk.duplicate()));
      open(clientOpener, serverSealer.seal(FrameType.READ_RESPONSE, 1, ByteBuffer.allocateDirect(64)));
    } catch (TransportException | RuntimeException e) {
      // Nothing to warm then; the real handshake reports whatever is wrong.
    }
  }

  /**
   * Loads, links and initializes the classes a connection's set-up runs through (both sides'),
   * and the JDK's socket option machinery, without opening a connection: the first connect of a
   * cold JVM otherwise loads about 85 classes on its own path.
   */
  public static void loadConnectionClasses() {
    MethodHandles.Lookup lookup = MethodHandles.lookup();
    Class<?>[] classes = {FrameChannel.class, ClientHandshake.class, ServerSession.class, SessionSocket.class,
        SessionSocket.Receiver.class, PayloadReader.class, CarrierConnection.class, SealBuffers.class,
        Admission.class, IoLoop.class, FrameType.class, ErrorCode.class, Frames.class};
    try {
      for (Class<?> c : classes) {
        lookup.ensureInitialized(c);
      }
    } catch (IllegalAccessException e) {
      return; // nothing to gain then; the connection loads them itself
    }
    try (SocketChannel unconnected = SocketChannel.open()) {
      unconnected.setOption(StandardSocketOptions.TCP_NODELAY, true);
    } catch (IOException | UnsupportedOperationException e) {
      // Left for the first connect.
    }
  }

  /** Opens a sealed frame of one record, given as the buffers a writer would write, as a reader would. */
  private static void open(RecordLayer.Opener opener, ByteBuffer... parts) throws TransportException {
    int length = 0;
    for (ByteBuffer p : parts) {
      length += p.remaining();
    }
    ByteBuffer frame = ByteBuffer.allocate(length);
    for (ByteBuffer p : parts) {
      frame.put(p.duplicate());
    }
    frame.flip();
    FrameHeader h = FrameHeader.decode(frame.duplicate(), Frames.MAX_CONTROL_PAYLOAD);
    ByteBuffer tag = frame.slice(FrameHeader.LENGTH, RecordLayer.TAG_LENGTH);
    ByteBuffer payload = frame.slice(FrameHeader.LENGTH + RecordLayer.TAG_LENGTH, h.payloadLength());
    opener.open(h, tag, payload);
  }
}
