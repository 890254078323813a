package io.sluice.flight.plane;

import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.OutboundStreamListener;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;

/**
 * The two directions of one DoExchange call as the data plane uses them: frames arrive as the
 * {@code app_metadata} of metadata-only Flight messages and leave the same way. The receiving
 * side is used by one thread at a time; {@link #send} is synchronized, so a producer and an
 * acknowledging thread may both send. Receive deadlines share one daemon timer thread.
 */
public final class FrameLink {
  private static final ScheduledExecutorService DEADLINES = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "sluice-flight-deadlines");
    t.setDaemon(true);
    return t;
  });

  private final FlightStream in;
  private final OutboundStreamListener out;
  private final BufferAllocator allocator;
  private final long receiveTimeoutNanos;
  private final boolean serverSide;

  /** A link whose {@link #receive} waits as long as the call lives. */
  public FrameLink(FlightStream in, OutboundStreamListener out, BufferAllocator allocator) {
    this(in, out, allocator, 0);
  }

  /**
   * A link whose {@link #receive} cancels the call when no frame arrives within {@code
   * receiveTimeoutNanos} (the client's side, which may cancel; 0: no deadline).
   */
  public FrameLink(FlightStream in, OutboundStreamListener out, BufferAllocator allocator, long receiveTimeoutNanos) {
    this(in, out, allocator, receiveTimeoutNanos, false);
  }

  private FrameLink(FlightStream in, OutboundStreamListener out, BufferAllocator allocator, long receiveTimeoutNanos,
      boolean serverSide) {
    this.in = in;
    this.out = out;
    this.allocator = allocator;
    this.receiveTimeoutNanos = receiveTimeoutNanos;
    this.serverSide = serverSide;
  }

  /**
   * The server's side of a call, whose {@link #receive} fails with TIMED_OUT when no frame arrives
   * within {@code receiveTimeoutNanos} ({@link BoundedNext}: the server cannot cancel its side);
   * the caller then ends the call.
   */
  public static FrameLink serverSide(FlightStream in, OutboundStreamListener out, BufferAllocator allocator,
      long receiveTimeoutNanos) {
    if (receiveTimeoutNanos <= 0) {
      throw new IllegalArgumentException("a server's link needs a deadline, not " + receiveTimeoutNanos + " ns");
    }
    return new FrameLink(in, out, allocator, receiveTimeoutNanos, true);
  }

  /**
   * The next frame, blocking; empty when the peer completed its side. A Flight message that
   * carries record data instead of a frame is a protocol error.
   *
   * @throws FlightRuntimeException TIMED_OUT when the deadline passed first
   */
  public Optional<ByteBuffer> receive() {
    boolean more;
    if (serverSide) {
      try {
        more = BoundedNext.next(in, receiveTimeoutNanos);
      } catch (TimeoutException e) {
        throw CallStatus.TIMED_OUT.withDescription("no data-plane frame from the peer within "
            + receiveTimeoutNanos / 1_000_000 + " ms").withCause(e).toRuntimeException();
      }
    } else if (receiveTimeoutNanos > 0) {
      AtomicBoolean expired = new AtomicBoolean();
      ScheduledFuture<?> deadline = DEADLINES.schedule(() -> {
        expired.set(true);
        in.cancel("no data-plane frame within " + receiveTimeoutNanos / 1_000_000 + " ms", null);
      }, receiveTimeoutNanos, TimeUnit.NANOSECONDS);
      try {
        more = in.next();
      } catch (RuntimeException e) {
        if (expired.get()) {
          throw CallStatus.TIMED_OUT.withDescription("no data-plane frame from the peer within "
              + receiveTimeoutNanos / 1_000_000 + " ms").withCause(e).toRuntimeException();
        }
        throw e;
      } finally {
        deadline.cancel(false);
      }
    } else {
      more = in.next();
    }
    if (!more) {
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

  /**
   * Why the peer ended the call, if it did with an error: reads on to the end of the call. Used
   * when a READ is refused, since the server withdraws access when it ends a stream.
   */
  public Optional<FlightRuntimeException> drainToError() {
    try {
      while (receive().isPresent()) {
        // frames sent before the end are of no use any more
      }
      return Optional.empty();
    } catch (FlightRuntimeException e) {
      return Optional.of(e);
    } catch (RuntimeException e) {
      return Optional.empty();
    }
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
