package io.sluice.flight.plane;

import java.nio.ByteBuffer;
import java.util.Optional;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.OutboundStreamListener;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;

/**
 * The two directions of one DoExchange call as the data plane uses them: frames arrive as the
 * {@code app_metadata} of metadata-only Flight messages and leave the same way. The receiving
 * side is used by one thread at a time; {@link #send} is synchronized, so a producer and an
 * acknowledging thread may both send.
 */
public final class FrameLink {
  private final FlightStream in;
  private final OutboundStreamListener out;
  private final BufferAllocator allocator;

  public FrameLink(FlightStream in, OutboundStreamListener out, BufferAllocator allocator) {
    this.in = in;
    this.out = out;
    this.allocator = allocator;
  }

  /**
   * The next frame, blocking; empty when the peer completed its side. A Flight message that
   * carries record data instead of a frame is a protocol error.
   */
  public Optional<ByteBuffer> receive() {
    if (!in.next()) {
      return Optional.empty();
    }
    ArrowBuf meta = in.getLatestMetadata();
    if (meta == null || in.hasRoot() && in.getRoot().getRowCount() > 0) {
      throw new IllegalArgumentException("data-plane stream carried a Flight message that is not a frame");
    }
    ByteBuffer copy = ByteBuffer.allocate((int) meta.readableBytes());
    meta.getBytes(meta.readerIndex(), copy);
    return Optional.of(copy.flip());
  }

  /** Sends one frame (the Flight listener takes the buffer and frees it once written). */
  public synchronized void send(ByteBuffer frame) {
    ArrowBuf buf = allocator.buffer(frame.remaining());
    try {
      buf.setBytes(0, frame.duplicate());
      buf.writerIndex(frame.remaining());
    } catch (RuntimeException e) {
      buf.close();
      throw e;
    }
    out.putMetadata(buf);
  }
}
