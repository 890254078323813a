package io.sluice.transport.spi;

import io.sluice.transport.AuthenticationFailedException;
import io.sluice.transport.ProtocolException;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The connecting side's half of the handshake ({@link Handshake}): HELLO, check the server's
 * node id and proof in its CHALLENGE, AUTH, then AUTH_OK as the first protected frame, whose
 * signature proves the server holds the key its node id derives from. The accepting side's half
 * is {@link ServerSession}'s. Stateless.
 */
final class ClientHandshake {
  private ClientHandshake() {}

  /**
   * Runs the client half of the handshake on the calling thread and turns on record protection.
   *
   * @param self who this side is
   * @param flags {@link Handshake#FLAG_ENCRYPT} to ask for encryption, else 0
   * @return the peer's node id, proven by its signature
   * @throws AuthenticationFailedException naming what was wrong if the server's proof, node id or
   *     signature is not right
   */
  static long authenticate(FrameChannel channel, Handshake hs, NodeIdentity self, int flags) throws IOException {
    ByteBuffer scratch = ByteBuffer.allocate(FrameHeader.LENGTH + RecordLayer.TAG_LENGTH);
    byte[] nonce = Handshake.nonce();
    byte[] ownKey = self.publicKey();
    channel.writeFrame(FrameType.HELLO, 0,
        new Frames.Hello(Frames.VERSION, self.nodeId(), flags, nonce, ownKey).encode());
    FrameHeader h = channel.readHeader(scratch, Frames.MAX_CONTROL_PAYLOAD);
    if (h.type() == FrameType.ERROR) {
      Frames.ErrorFrame e = Frames.ErrorFrame.decode(channel.readBody(h));
      throw e.code().toException(e.message());
    }
    if (h.type() != FrameType.CHALLENGE) {
      throw new AuthenticationFailedException("peer answered HELLO with " + h.type());
    }
    Frames.Challenge c = Frames.Challenge.decode(channel.readBody(h));
    Handshake.Transcript t = new Handshake.Transcript(nonce, c.nonce(), self.nodeId(), c.node(), flags, c.flags(),
        ownKey, c.publicKey());
    if (!Handshake.matches(hs.serverProof(t), c.proof())) {
      throw new AuthenticationFailedException("server proof does not match the shared secret");
    }
    NodeIdentity.checkClaim("server", c.node(), c.publicKey());
    channel.writeFrame(FrameType.AUTH, 0,
        new Frames.Auth(hs.clientProof(t), Handshake.clientSignature(self, t)).encode());
    Handshake.SessionKeys keys = hs.sessionKeys(t);
    h = channel.readHeader(scratch, Frames.MAX_CONTROL_PAYLOAD);
    if (h.type() == FrameType.ERROR) {
      Frames.ErrorFrame e = Frames.ErrorFrame.decode(channel.readBody(h));
      throw e.code().toException(e.message());
    }
    if (h.type() != FrameType.AUTH_OK) {
      throw new ProtocolException("expected AUTH_OK, got " + h.type());
    }
    channel.protect(RecordLayer.clientSealer(keys), RecordLayer.clientOpener(keys));
    channel.readTag();
    // Checks AUTH_OK's tag (the server holds the same keys), then its signature (the server
    // holds the private key of the node id it claimed).
    Frames.AuthOk ok = Frames.AuthOk.decode(channel.readBody(h));
    Handshake.checkServerSignature(t, ok.signature());
    return c.node();
  }
}
