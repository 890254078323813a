package io.sluice.transport.carrier;

import io.sluice.transport.PeerClosedException;
import io.sluice.transport.ProtocolException;
import io.sluice.transport.wire.FrameHeader;
import io.sluice.transport.wire.RecordLayer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Receives one frame's payload at a time for a {@link SessionSocket}: into a new heap buffer,
 * straight into the receiver's sink (a READ's destination), or into scratch to be checked and
 * dropped; then it checks the frame ({@link RecordLayer}) and hands it to the receiver. On an
 * encrypted connection the payload arrives as records (tag | ciphertext, see {@link
 * RecordLayer}): each is read into one reused direct buffer and opened into the frame's
 * destination as soon as it is whole, so a frame of any length costs at most one record of
 * scratch. Unencrypted, a READ's bytes land in its destination and are checked there (their GMAC)
 * before the receiver hears of them; a READ nobody waits for any more is checked piece by piece
 * as it passes through scratch. A READ that fails once bytes of it landed in its destination (its
 * check, or the connection closing mid-body) leaves zeros over its range, never those bytes: the
 * destination is the caller's memory, reused or read after a failure the caller may not look at.
 * Owned by one socket and used on its loop thread only.
 */
final class PayloadReader {
  /** Reads from the socket, scattering into the buffers in order: bytes read, or -1 at its end. */
  @FunctionalInterface
  interface Source {
    long read(ByteBuffer... dsts) throws IOException;
  }

  /** What the range of a failed READ is overwritten with, a piece at a time. */
  private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(64 * 1024).asReadOnlyBuffer();

  private final ByteBuffer tag = ByteBuffer.allocate(RecordLayer.TAG_LENGTH);
  private FrameHeader header;
  private RecordLayer.Opener opener;
  private boolean complete;
  /** Where the payload is being read: a heap buffer or the receiver's sink (plain payloads). */
  private ByteBuffer body;
  /**
   * Where the payload starts in the buffer it is read or opened into, and whether that is the
   * receiver's sink (then its range there is zeroed if the frame fails before it is delivered).
   */
  private int sinkStart;
  private boolean intoSink;
  private boolean discard;
  private long discardLeft = -1;
  private ByteBuffer discardScratch;

  // Encrypted frames: the record being read (ciphertext, then its tag moved behind it) and where
  // its plain text goes.
  private ByteBuffer record;
  private ByteBuffer nextTag;
  private ByteBuffer[] wanted;
  /** What a record is read into: the first one's tag came with the header, later ones bring theirs. */
  private ByteBuffer[] firstRecord;
  private ByteBuffer[] laterRecord;
  private ByteBuffer plainOut;
  private int recordIndex;
  private int records;

  boolean inProgress() {
    return header != null;
  }

  /**
   * Starts the payload of {@code h}, whose tag is {@code frameTag} (empty before the handshake
   * ends), and takes what {@code readAhead} (read mode) already holds of it.
   *
   * @param sink what {@link SessionSocket.Receiver#sink} said
   * @throws io.sluice.transport.ProtocolException if a record that arrived whole fails its check
   */
  void start(FrameHeader h, ByteBuffer frameTag, ByteBuffer sink, RecordLayer.Opener o, ByteBuffer readAhead)
      throws IOException {
    header = h;
    opener = o;
    tag.clear();
    tag.put(frameTag).flip();
    complete = false;
    intoSink = false;
    discard = sink == SessionSocket.DISCARD;
    discardLeft = -1;
    if (o != null && o.encrypted()) {
      startRecords(h, sink);
      readFrom(bytesOf(readAhead), false);
      return;
    }
    if (sink == null) {
      body = ByteBuffer.allocate(h.payloadLength());
    } else if (discard) {
      if (!RecordLayer.gmacTagged(h.type())) {
        body = ByteBuffer.allocate(h.payloadLength()); // must be whole to be checked
      } else {
        // A READ's body is checked as it passes, however long it is: its GMAC takes it in pieces.
        discardLeft = h.payloadLength();
        if (discardScratch == null) {
          discardScratch = ByteBuffer.allocate(16 * 1024);
        }
        if (o != null) {
          o.startBody(h);
        }
      }
    } else {
      body = sink;
      sinkStart = sink.position();
      intoSink = true;
    }
    int take = (int) Math.min(discardLeft >= 0 ? discardLeft : body.remaining(), readAhead.remaining());
    if (discardLeft >= 0) {
      discardLeft -= take;
      passed(readAhead.slice(readAhead.position(), take));
    } else {
      body.put(readAhead.slice(readAhead.position(), take));
    }
    readAhead.position(readAhead.position() + take);
  }

  /** Reads from {@code readAhead} as if it were the socket; an empty read-ahead reads 0 bytes. */
  private static Source bytesOf(ByteBuffer readAhead) {
    return dsts -> {
      long n = 0;
      for (ByteBuffer d : dsts) {
        int take = Math.min(d.remaining(), readAhead.remaining());
        d.put(readAhead.slice(readAhead.position(), take));
        readAhead.position(readAhead.position() + take);
        n += take;
      }
      return n;
    };
  }

  private void startRecords(FrameHeader h, ByteBuffer sink) {
    if (record == null) {
      record = ByteBuffer.allocateDirect(RecordLayer.RECORD_LENGTH + RecordLayer.TAG_LENGTH);
      nextTag = ByteBuffer.allocate(RecordLayer.TAG_LENGTH);
      firstRecord = new ByteBuffer[] {record};
      laterRecord = new ByteBuffer[] {nextTag, record};
    }
    if (discard) {
      if (discardScratch == null || discardScratch.capacity() < RecordLayer.RECORD_LENGTH) {
        discardScratch = ByteBuffer.allocateDirect(RecordLayer.RECORD_LENGTH);
      }
      plainOut = null;
    } else if (sink == null) {
      plainOut = ByteBuffer.allocate(h.payloadLength());
      sinkStart = 0;
    } else {
      plainOut = sink;
      sinkStart = sink.position();
      intoSink = true;
    }
    records = RecordLayer.records(h.payloadLength());
    recordIndex = 0;
    record.clear().limit(RecordLayer.recordLength(h.payloadLength(), 0));
    wanted = firstRecord;
  }

  /**
   * Reads more of the payload, unless the socket was found empty already.
   *
   * @return true when the payload is complete
   */
  boolean readFrom(Source source, boolean socketEmpty) throws IOException {
    if (wanted != null) {
      return readRecords(source, socketEmpty);
    }
    if (discardLeft >= 0) {
      while (discardLeft > 0 && !socketEmpty) {
        discardScratch.clear().limit((int) Math.min(discardScratch.capacity(), discardLeft));
        if (source.read(discardScratch) < 0) {
          throw new PeerClosedException("peer closed the connection mid-frame");
        }
        discardLeft -= discardScratch.position();
        socketEmpty = discardScratch.hasRemaining();
        passed(discardScratch.flip());
      }
      return discardLeft == 0;
    }
    if (body.hasRemaining() && !socketEmpty && source.read(body) < 0) {
      throw new PeerClosedException("peer closed the connection mid-frame");
    }
    return !body.hasRemaining();
  }

  /** Bytes of a dropped READ body went by: they count towards its check. */
  private void passed(ByteBuffer piece) {
    if (opener != null) {
      opener.bodyPiece(piece);
    }
  }

  /**
   * The connection closed: zeroes the range of a READ half received in its destination, and drops
   * what a frame half received holds in its check (a dropped READ body's GMAC, whose engine may
   * hold native memory until it ends). On the loop thread, after its last read of the socket and
   * before the READ's failure is reported.
   */
  void abandon() {
    if (header != null) {
      zeroDestination(wanted != null ? plainOut : body);
    }
    if (opener != null) {
      opener.abandon();
    }
  }

  /** Reads records and opens each one that is whole; stops when the source has no more for now. */
  private boolean readRecords(Source source, boolean socketEmpty) throws IOException {
    while (!complete) {
      if (wanted[wanted.length - 1].hasRemaining()) {
        if (socketEmpty) {
          return false;
        }
        if (source.read(wanted) < 0) {
          throw new PeerClosedException("peer closed the connection mid-frame");
        }
        if (wanted[wanted.length - 1].hasRemaining()) {
          return false;
        }
      }
      openRecord();
    }
    return true;
  }

  /** The record in hand is whole: open it into its destination and wait for the next one. */
  private void openRecord() throws IOException {
    ByteBuffer recordTag = recordIndex == 0 ? tag : nextTag.flip();
    int n = record.position();
    record.limit(n + RecordLayer.TAG_LENGTH).put(n, recordTag, recordTag.position(), RecordLayer.TAG_LENGTH);
    record.position(0);
    try {
      opener.openRecord(header, record, plainOut != null ? plainOut : discardScratch.clear());
    } catch (ProtocolException e) {
      zeroDestination(plainOut); // the records before this one were checked, but the READ fails
      throw e;
    }
    if (++recordIndex == records) {
      complete = true;
      return;
    }
    nextTag.clear();
    record.clear().limit(RecordLayer.recordLength(header.payloadLength(), recordIndex));
    wanted = laterRecord;
  }

  /** Checks the complete frame and hands it to {@code receiver} (a dropped one to nobody). */
  void deliver(SessionSocket.Receiver receiver) throws IOException {
    FrameHeader h = header;
    ByteBuffer filled = body;
    header = null;
    body = null;
    if (wanted != null) {
      ByteBuffer plain = plainOut;
      wanted = null;
      plainOut = null;
      if (!discard) {
        receiver.frame(h, plain.duplicate().flip().position(sinkStart));
      }
      return;
    }
    if (discardLeft >= 0) {
      discardLeft = -1;
      if (opener != null) {
        opener.finishBody(h, tag); // checked, then dropped
      }
      return;
    }
    if (discard) {
      opener.open(h, tag, filled.flip()); // checked, then dropped
      return;
    }
    if (intoSink) {
      ByteBuffer range = filled.duplicate().flip().position(sinkStart);
      if (opener != null) {
        // The bytes are in their destination already; the receiver hears of them only if they
        // are the ones the peer sent, and otherwise they do not stay there.
        try {
          opener.verify(h, tag, range);
        } catch (ProtocolException e) {
          zeroDestination(filled);
          throw e;
        }
      }
      receiver.frame(h, range);
      return;
    }
    ByteBuffer payload = filled.flip();
    receiver.frame(h, opener != null ? opener.open(h, tag, payload) : payload);
  }

  /**
   * Zeroes the READ's whole range of {@code dst}, {@code [sinkStart, limit)}, if it is the
   * receiver's sink; once per frame. The whole range and not only what landed: a failed READ then
   * leaves the same thing wherever it was cut.
   */
  private void zeroDestination(ByteBuffer dst) {
    if (!intoSink) {
      return;
    }
    intoSink = false;
    zero(dst, sinkStart, dst.limit());
  }

  /** Zeroes {@code [from, to)} of {@code b}, heap or direct, without moving its position. */
  static void zero(ByteBuffer b, int from, int to) {
    if (b.hasArray()) {
      Arrays.fill(b.array(), b.arrayOffset() + from, b.arrayOffset() + to, (byte) 0);
      return;
    }
    for (int i = from; i < to; i += ZEROS.capacity()) {
      b.put(i, ZEROS, 0, Math.min(ZEROS.capacity(), to - i));
    }
  }
}
