package io.sluice.transport.spi;

import io.sluice.transport.AuthenticationFailedException;
import io.sluice.transport.ProtocolException;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The connecting side's half of the handshake ({@link Handshake}): HELLO, check the server's
 * proof in its CHALLENGE, AUTH, then AUTH_OK as the first protected frame. The accepting side's
 * half is {@link ServerSession}'s. Stateless.
 */
final class ClientHandshake {
  private ClientHandshake() {}

  /**
   * Runs the client half of the handshake on the calling thread and turns on record protection.
   *
   * @param flags {@link Handshake#FLAG_ENCRYPT} to ask for encryption, else 0
   * @return the peer's node id
   */
  static long authenticate(FrameChannel channel, Handshake hs, long self, int flags) throws IOException {
    ByteBuffer scratch = ByteBuffer.allocate(FrameHeader.LENGTH + RecordLayer.TAG_LENGTH);
    byte[] nonce = Handshake.nonce();
    channel.writeFrame(FrameType.HELLO, 0, new Frames.Hello(Frames.VERSION, self, flags, nonce).encode());
    FrameHeader h = channel.readHeader(scratch, Frames.MAX_CONTROL_PAYLOAD);
    if (h.type() == FrameType.ERROR) {
      Frames.ErrorFrame e = Frames.ErrorFrame.decode(channel.readBody(h));
      throw e.code().toException(e.message());
    }
    if (h.type() != FrameType.CHALLENGE) {
      throw new AuthenticationFailedException("peer answered HELLO with " + h.type());
    }
    Frames.Challenge c = Frames.Challenge.decode(channel.readBody(h));
    Handshake.Transcript t = new Handshake.Transcript(nonce, c.nonce(), self, c.node(), flags, c.flags());
    if (!Handshake.matches(hs.serverProof(t), c.proof())) {
      throw new AuthenticationFailedException("server proof does not match the shared secret");
    }
    channel.writeFrame(FrameType.AUTH, 0, new Frames.Auth(hs.clientProof(t)).encode());
    Handshake.SessionKeys keys = hs.sessionKeys(t);
    h = channel.readHeader(scratch, Frames.MAX_CONTROL_PAYLOAD);
    if (h.type() == FrameType.ERROR) {
      Frames.ErrorFrame e = Frames.ErrorFrame.decode(channel.readBody(h));
      throw e.code().toException(e.message());
    }
    if (h.type() != FrameType.AUTH_OK || h.payloadLength() != 0) {
      throw new ProtocolException("expected AUTH_OK, got " + h.type());
    }
    channel.protect(RecordLayer.clientSealer(keys), RecordLayer.clientOpener(keys));
    channel.readTag();
    channel.readBody(h); // checks AUTH_OK's tag: the server holds the same keys
    return c.node();
  }
}
