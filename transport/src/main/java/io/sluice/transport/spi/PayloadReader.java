package io.sluice.transport.spi;

import io.sluice.transport.PeerClosedException;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Receives one frame's payload at a time for a {@link SessionSocket}: into a new heap buffer;
 * straight into the receiver's sink (a READ's destination); as ciphertext, decrypted into the
 * sink once its tag checks out; or into scratch to be checked and dropped. Then it checks the
 * frame ({@link RecordLayer}) and hands it to the receiver. Owned by one socket and used on its
 * loop thread only.
 */
final class PayloadReader {
  /** Reads from the socket: bytes read, or -1 at its end. */
  @FunctionalInterface
  interface Source {
    int read(ByteBuffer dst) throws IOException;
  }

  private final ByteBuffer tag = ByteBuffer.allocate(RecordLayer.TAG_LENGTH);
  private FrameHeader header;
  private RecordLayer.Opener opener;
  /** Where the payload is being read: a heap buffer or the receiver's sink. */
  private ByteBuffer body;
  /** The receiver's sink when the payload is read elsewhere first (ciphertext, or checked whole to drop). */
  private ByteBuffer plainSink;
  private int sinkStart;
  private boolean intoSink;
  private long discardLeft = -1;
  private ByteBuffer discardScratch;

  boolean inProgress() {
    return header != null;
  }

  /**
   * Starts the payload of {@code h}, whose tag is {@code frameTag} (empty before the handshake
   * ends), and takes what {@code readAhead} (read mode) already holds of it.
   *
   * @param sink what {@link SessionSocket.Receiver#sink} said
   */
  void start(FrameHeader h, ByteBuffer frameTag, ByteBuffer sink, RecordLayer.Opener o, ByteBuffer readAhead) {
    header = h;
    opener = o;
    tag.clear();
    tag.put(frameTag).flip();
    boolean encrypted = o != null && o.encrypted();
    plainSink = null;
    intoSink = false;
    discardLeft = -1;
    if (sink == null) {
      body = ByteBuffer.allocate(h.payloadLength());
    } else if (sink == SessionSocket.DISCARD) {
      if (encrypted || RecordLayer.macCoversPayload(h.type())) {
        body = ByteBuffer.allocate(h.payloadLength()); // must be whole to be checked
        plainSink = SessionSocket.DISCARD;
      } else {
        discardLeft = h.payloadLength();
        if (discardScratch == null) {
          discardScratch = ByteBuffer.allocate(16 * 1024);
        }
      }
    } else if (encrypted) {
      body = ByteBuffer.allocate(h.payloadLength());
      plainSink = sink;
      sinkStart = sink.position();
    } else {
      body = sink;
      sinkStart = sink.position();
      intoSink = true;
    }
    int take = (int) Math.min(discardLeft >= 0 ? discardLeft : body.remaining(), readAhead.remaining());
    if (discardLeft >= 0) {
      discardLeft -= take;
    } else {
      body.put(readAhead.slice(readAhead.position(), take));
    }
    readAhead.position(readAhead.position() + take);
  }

  /**
   * Reads more of the payload, unless the socket was found empty already.
   *
   * @return true when the payload is complete
   */
  boolean readFrom(Source source, boolean socketEmpty) throws IOException {
    if (discardLeft >= 0) {
      while (discardLeft > 0 && !socketEmpty) {
        discardScratch.clear().limit((int) Math.min(discardScratch.capacity(), discardLeft));
        if (source.read(discardScratch) < 0) {
          throw new PeerClosedException("peer closed the connection mid-frame");
        }
        discardLeft -= discardScratch.position();
        socketEmpty = discardScratch.hasRemaining();
      }
      return discardLeft == 0;
    }
    if (body.hasRemaining() && !socketEmpty && source.read(body) < 0) {
      throw new PeerClosedException("peer closed the connection mid-frame");
    }
    return !body.hasRemaining();
  }

  /** Checks the complete frame and hands it to {@code receiver} (a dropped one to nobody). */
  void deliver(SessionSocket.Receiver receiver) throws IOException {
    FrameHeader h = header;
    ByteBuffer filled = body;
    ByteBuffer sink = plainSink;
    header = null;
    body = null;
    plainSink = null;
    if (discardLeft >= 0) {
      discardLeft = -1;
      opener.verify(h, tag, null);
      return;
    }
    if (sink == SessionSocket.DISCARD) {
      opener.open(h, tag, filled.flip()); // checked, then dropped
      return;
    }
    if (sink != null) {
      opener.decrypt(h, tag, filled.flip(), sink);
      receiver.frame(h, sink.duplicate().flip().position(sinkStart));
      return;
    }
    if (intoSink) {
      ByteBuffer range = filled.duplicate().flip().position(sinkStart);
      if (opener != null) {
        opener.verify(h, tag, range);
      }
      receiver.frame(h, range);
      return;
    }
    ByteBuffer payload = filled.flip();
    receiver.frame(h, opener != null ? opener.open(h, tag, payload) : payload);
  }
}
