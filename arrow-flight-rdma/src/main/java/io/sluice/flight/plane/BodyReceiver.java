package io.sluice.flight.plane;

import io.sluice.flight.protocol.DataPlaneProtocol;
import io.sluice.flight.protocol.DataPlaneProtocol.BodyFrame;
import io.sluice.flight.protocol.DataPlaneProtocol.BodyRef;
import io.sluice.flight.protocol.DataPlaneProtocol.Frame;
import io.sluice.flight.protocol.DataPlaneProtocol.SchemaFrame;
import io.sluice.flight.protocol.IpcBodies;
import io.sluice.flight.table.FlightTable;
import io.sluice.flight.table.RegisteredBodies;
import io.sluice.transport.Checksums;
import io.sluice.transport.Connection;
import io.sluice.transport.ReadIntegrityException;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The receiving side of a data-plane put, for a table that is kept: each body is READ into
 * registered segments that no peer may READ ({@link Transport#GRANTED_ONLY}), one after another,
 * and the stored table is made of those segments and the IPC metadata as received, so nothing is
 * copied after the READ and the table is served from the same memory. Each body is checked against
 * the CRC32C its frame carries (the writer's) once its READ completes and is stored with it, so the
 * table's readers check their READs against the same value; a mismatch fails the put and stores
 * nothing. Up to {@code depth} bodies are being READ at once while the next frames arrive;
 * acknowledgements are cumulative and sent from the READs' completions ({@link PutAcknowledger}),
 * one per half window and whenever no READ is left under way, so a writer waiting for room is never
 * left waiting on a server waiting for frames.
 *
 * <p>Not thread safe: one receiving thread (completions arrive on the transport's threads).
 */
public final class BodyReceiver {
  private static final long MIN_SEGMENT = 1L << 20;
  private static final long MAX_SEGMENT = 256L << 20;

  private final FrameLink link;
  private final Connection connection;
  private final Transport transport;
  private final int chunkBytes;
  private final int depth;
  private final long timeoutNanos;

  public BodyReceiver(FrameLink link, Connection connection, Transport transport, int chunkBytes, int depth,
      long timeoutNanos) {
    this.link = link;
    this.connection = connection;
    this.transport = transport;
    this.chunkBytes = chunkBytes;
    this.depth = Math.max(1, depth);
    this.timeoutNanos = timeoutNanos;
  }

  /**
   * Receives the whole stream and returns it as a table (the caller's reference). {@code
   * sizeCheck} sees the running total of bytes announced (schema, then each batch's IPC metadata
   * and body), before each body is READ, and
   * refuses the put by throwing (nothing is stored then).
   */
  public FlightTable receive(BufferAllocator allocator, java.util.function.LongConsumer sizeCheck) throws IOException {
    List<RegisteredRegion> segments = new ArrayList<>();
    List<RegisteredBodies.Body> dictionaries = new ArrayList<>();
    List<RegisteredBodies.Body> batches = new ArrayList<>();
    long offset = 0;
    long announcedBytes = 0;
    PutAcknowledger acks = new PutAcknowledger(link, depth);
    java.util.ArrayDeque<Landing> reading = new java.util.ArrayDeque<>();
    try {
      Frame first = next().orElseThrow(() -> new IOException("the put ended before its schema"));
      if (first instanceof SchemaFrame s) {
        announcedBytes += s.metadata().length;
        sizeCheck.accept(announcedBytes);
      }
      Schema schema = schema(first);
      for (Optional<Frame> f = next(); f.isPresent(); f = next()) {
        if (!(f.get() instanceof BodyFrame body)) {
          throw new IOException("unexpected " + f.get().getClass().getSimpleName() + " in a put");
        }
        long length = body.body().length();
        announcedBytes += length + body.metadata().length;
        sizeCheck.accept(announcedBytes);
        RegisteredRegion segment = segments.isEmpty() ? null : segments.get(segments.size() - 1);
        if (segment == null || offset + length > segment.length()) {
          segment = newSegment(length, segment);
          segments.add(segment);
          offset = 0;
        }
        if (reading.size() >= depth) {
          await(reading.poll());
        }
        reading.add(new Landing(body, segment, offset, acks.track(body.sequence(), read(body, segment, offset))));
        // Stored with the writer's checksum, which await() holds the landed bytes to.
        (body.dictionary() ? dictionaries : batches).add(new RegisteredBodies.Body(body.metadata(),
            new BodyRef(segment.descriptor(), offset, length), body.crc32c()));
        offset += (length + 7) & ~7L;
      }
      for (Landing r; (r = reading.poll()) != null; ) {
        await(r);
      }
      return RegisteredBodies.adopt(schema, segments, dictionaries, batches, allocator);
    } catch (IOException | RuntimeException e) {
      // A READ still under way may write its segment until it completes: wait before freeing.
      for (Landing r; (r = reading.poll()) != null; ) {
        try {
          r.read().get(timeoutNanos, TimeUnit.NANOSECONDS);
        } catch (Exception ignored) {
          // failed or late: the transport writes a destination only before completing normally
        }
      }
      segments.forEach(RegisteredRegion::close);
      throw e;
    }
  }

  /**
   * A segment for the next bodies: twice the last one (from 1 MiB, up to 256 MiB), or the body's
   * own size when larger, so a put registers a few large regions rather than one per batch.
   */
  private RegisteredRegion newSegment(long length, RegisteredRegion last) throws IOException {
    long want = Math.min(MAX_SEGMENT, last == null ? MIN_SEGMENT : 2 * last.length());
    long size = Math.max(want, (length + 7) & ~7L);
    if (size > Integer.MAX_VALUE) {
      throw new IOException("a batch body of " + length + " bytes is over the 2 GiB a region can hold");
    }
    return transport.allocateFor(Transport.GRANTED_ONLY, (int) size);
  }

  private Optional<Frame> next() throws IOException {
    Optional<ByteBuffer> raw = link.receive();
    try {
      return raw.map(DataPlaneProtocol::decodeFrame);
    } catch (IllegalArgumentException e) {
      throw new IOException("malformed data-plane frame: " + e.getMessage(), e);
    }
  }

  private static Schema schema(Frame f) throws IOException {
    if (!(f instanceof SchemaFrame s)) {
      throw new IOException("a put must start with its schema, got " + f.getClass().getSimpleName());
    }
    try {
      return IpcBodies.schema(s.metadata());
    } catch (IllegalArgumentException e) {
      throw new IOException(e.getMessage(), e);
    }
  }

  private CompletableFuture<Void> read(BodyFrame f, RegisteredRegion into, long at) throws IOException {
    long length = f.body().length();
    if (IpcBodies.declaredBodyLength(f.metadata()) > length) {
      throw new IOException("batch metadata declares a longer body than the frame offers");
    }
    if (length > Integer.MAX_VALUE) {
      throw new IOException("a batch body of " + length + " bytes is over the 2 GiB a region can hold");
    }
    return BodyReads.start(connection, f.body(), into, at, chunkBytes);
  }

  /** A body being READ into {@code segment} at {@code at}. */
  private record Landing(BodyFrame frame, RegisteredRegion segment, long at, CompletableFuture<Void> read) {}

  /** Waits for the body's READ, then checks the bytes that landed against the writer's checksum. */
  private void await(Landing landing) throws IOException {
    try {
      landing.read().get(timeoutNanos, TimeUnit.NANOSECONDS);
      BodyFrame f = landing.frame();
      ByteBuffer landed = landing.segment().buffer();
      landed.limit((int) (landing.at() + f.body().length())).position((int) landing.at());
      Checksums.verify(landed, f.crc32c(), connection.peer(), f.body().region(), f.body().offset(),
          (f.dictionary() ? "dictionary" : "record batch") + " body " + f.sequence() + " of a put");
    } catch (ReadIntegrityException e) {
      throw new IOException(e.getMessage(), e);
    } catch (ExecutionException e) {
      throw new IOException("READ of a batch body failed: " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      throw new IOException("READ of a batch body took longer than " + timeoutNanos / 1_000_000 + " ms", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while reading a batch body", e);
    }
  }
}
