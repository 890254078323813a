package io.sluice.transport.carrier;

import io.sluice.transport.AuthenticationFailedException;
import io.sluice.transport.ProtocolException;
import io.sluice.transport.crypto.AesGcmEngine;
import io.sluice.transport.crypto.NodeIdentity;
import io.sluice.transport.crypto.SessionKeys;
import io.sluice.transport.handshake.Handshake;
import io.sluice.transport.wire.FrameHeader;
import io.sluice.transport.wire.FrameType;
import io.sluice.transport.wire.Frames;
import io.sluice.transport.wire.RecordLayer;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The connecting side's half of the handshake ({@link Handshake}) on a blocking channel: HELLO,
 * the server's CHALLENGE (its version, and its node id against its key), AUTH, then AUTH_OK as
 * the first protected frame: its tag proves the server derived the same keys (it holds the secret
 * and the ephemeral private key behind its CHALLENGE), its signature that it holds the key its
 * node id derives from. The accepting side's half is {@link ServerSession}'s. Stateless.
 */
final class ClientHandshake {
  private ClientHandshake() {}

  /**
   * Runs the client half of the handshake on the calling thread and turns on record protection.
   *
   * @param self who this side is
   * @param flags {@link Handshake#FLAG_ENCRYPT} to ask for encryption, else 0
   * @param engine what seals and opens records if the connection is encrypted
   * @return the client half, whose server node id and identity key its signature proved
   * @throws AuthenticationFailedException naming what was wrong if the server's version, node id,
   *     keys or signature is not right
   */
  static Handshake.Client authenticate(FrameChannel channel, Handshake hs, NodeIdentity self, int flags, AesGcmEngine engine)
      throws IOException {
    ByteBuffer scratch = ByteBuffer.allocate(FrameHeader.LENGTH + RecordLayer.TAG_LENGTH);
    Handshake.Client client = hs.client(self, flags);
    channel.writeFrame(FrameType.HELLO, 0, client.hello());
    FrameHeader h = channel.readHeader(scratch, Frames.MAX_CONTROL_PAYLOAD);
    if (h.type() == FrameType.ERROR) {
      Frames.ErrorFrame e = Frames.ErrorFrame.decode(channel.readBody(h));
      throw e.code().toException(e.message());
    }
    if (h.type() != FrameType.CHALLENGE) {
      throw new AuthenticationFailedException("peer answered HELLO with " + h.type());
    }
    channel.writeFrame(FrameType.AUTH, 0, client.auth(channel.readBody(h)));
    SessionKeys keys = client.keys().sessionKeys();
    h = channel.readHeader(scratch, Frames.MAX_CONTROL_PAYLOAD);
    if (h.type() == FrameType.ERROR) {
      Frames.ErrorFrame e = Frames.ErrorFrame.decode(channel.readBody(h));
      throw e.code().toException(e.message());
    }
    if (h.type() != FrameType.AUTH_OK) {
      throw new ProtocolException("expected AUTH_OK, got " + h.type());
    }
    channel.protect(RecordLayer.clientSealer(keys, engine), RecordLayer.clientOpener(keys, engine));
    channel.readTag();
    // Checks AUTH_OK's tag (the server holds the same keys), then its signature (the server
    // holds the private key of the node id it claimed).
    client.checkAuthOk(Frames.AuthOk.decode(channel.readBody(h)));
    return client;
  }
}
