package io.sluice.flight.plane;

import io.sluice.flight.memory.LandingPool;
import io.sluice.flight.protocol.DataPlaneProtocol;
import io.sluice.flight.protocol.DataPlaneProtocol.AckFrame;
import io.sluice.flight.protocol.DataPlaneProtocol.BodyFrame;
import io.sluice.flight.protocol.DataPlaneProtocol.Frame;
import io.sluice.flight.protocol.DataPlaneProtocol.SchemaFrame;
import io.sluice.flight.protocol.IpcBodies;
import io.sluice.transport.Connection;
import io.sluice.transport.ReadRequest;
import io.sluice.transport.RegionRevokedException;
import io.sluice.transport.UnknownKeyException;
import io.sluice.transport.TransportException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.arrow.compression.CommonsCompressionFactory;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The receiving side of a data-plane stream, as an Arrow {@link ArrowReader}: for each frame it
 * READs the body over the transport connection in one batched call straight into registered
 * memory from a {@link LandingPool}, acknowledges it, and loads the vectors from that memory
 * without a copy (Arrow's own loader slices the body; dictionaries, every type and compressed
 * buffers work as they do for IPC files and streams).
 *
 * <p>Not thread safe: one reading thread, as for any ArrowReader.
 */
public final class BodyReader extends ArrowReader {
  private final FrameLink link;
  private final Connection connection;
  private final LandingPool landing;
  private final int chunkBytes;
  private final long timeoutNanos;
  private long bytesRead;
  private long batches;
  private boolean ended;

  public BodyReader(BufferAllocator allocator, FrameLink link, Connection connection, LandingPool landing,
      int chunkBytes, long timeoutNanos) {
    super(allocator, CommonsCompressionFactory.INSTANCE);
    this.link = link;
    this.connection = connection;
    this.landing = landing;
    this.chunkBytes = chunkBytes;
    this.timeoutNanos = timeoutNanos;
  }

  @Override
  protected Schema readSchema() throws IOException {
    Frame f = nextFrame().orElseThrow(() -> new IOException("data-plane stream ended before its schema"));
    if (!(f instanceof SchemaFrame s)) {
      throw new IOException("data-plane stream must start with its schema, got " + f.getClass().getSimpleName());
    }
    try {
      return IpcBodies.schema(s.metadata());
    } catch (IllegalArgumentException e) {
      throw new IOException(e.getMessage(), e);
    }
  }

  @Override
  public boolean loadNextBatch() throws IOException {
    prepareLoadNextBatch();
    while (true) {
      Optional<Frame> next = nextFrame();
      if (next.isEmpty()) {
        return false;
      }
      if (!(next.get() instanceof BodyFrame f)) {
        throw new IOException("unexpected " + next.get().getClass().getSimpleName() + " in a data-plane stream");
      }
      ArrowBuf body = fetch(f);
      try {
        // Deserializing takes over the body's reference (Arrow slices it, then releases it).
        if (f.dictionary()) {
          loadDictionary(IpcBodies.dictionaryBatch(f.metadata(), body)); // closes the batch
          continue;
        }
        loadRecordBatch(IpcBodies.recordBatch(f.metadata(), body)); // closes it; vectors keep slices
        batches++;
        return true;
      } catch (IllegalArgumentException e) {
        body.close(); // refused before Arrow took it over
        throw new IOException("bad batch from the peer: " + e.getMessage(), e);
      }
    }
  }

  private Optional<Frame> nextFrame() throws IOException {
    if (ended) {
      return Optional.empty();
    }
    Optional<ByteBuffer> raw = link.receive();
    if (raw.isEmpty()) {
      ended = true;
      return Optional.empty();
    }
    try {
      return Optional.of(DataPlaneProtocol.decodeFrame(raw.get()));
    } catch (IllegalArgumentException e) {
      throw new IOException("malformed data-plane frame: " + e.getMessage(), e);
    }
  }

  /** READs the body into landing memory, acknowledges it, and returns it as an ArrowBuf. */
  private ArrowBuf fetch(BodyFrame f) throws IOException {
    long length = f.body().length();
    long declared = IpcBodies.declaredBodyLength(f.metadata());
    if (declared > length) {
      throw new IOException("batch metadata declares a body of " + declared + " bytes, the frame offers " + length);
    }
    if (length == 0) {
      acknowledge(f.sequence());
      return allocator.getEmpty();
    }
    LandingPool.Landing dst;
    try {
      dst = landing.acquire(length);
    } catch (TransportException e) {
      throw new IOException("no landing memory for a body of " + length + " bytes: " + e.getMessage(), e);
    }
    try {
      List<ReadRequest> ranges = new ArrayList<>();
      for (long off = 0; off < length; off += chunkBytes) {
        int n = (int) Math.min(chunkBytes, length - off);
        ranges.add(new ReadRequest(f.body().region(), f.body().offset() + off, dst.region(), off, n));
      }
      List<CompletableFuture<Void>> reads = connection.readBatch(ranges);
      CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).get(timeoutNanos, TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      dst.release();
      if (e.getCause() instanceof UnknownKeyException || e.getCause() instanceof RegionRevokedException) {
        // The server withdraws access when it ends a stream: its reason is the one to report.
        Optional<org.apache.arrow.flight.FlightRuntimeException> verdict = link.drainToError();
        if (verdict.isPresent()) {
          throw verdict.get();
        }
      }
      throw new IOException("READ of a batch body failed: " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      dst.release();
      throw new IOException("READ of a batch body took longer than " + timeoutNanos / 1_000_000 + " ms", e);
    } catch (InterruptedException e) {
      dst.release();
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while reading a batch body", e);
    } catch (RuntimeException e) {
      dst.release();
      throw e;
    }
    acknowledge(f.sequence());
    bytesRead += length;
    return dst.wrap(allocator, length);
  }

  private void acknowledge(long sequence) {
    link.send(DataPlaneProtocol.encode(new AckFrame(sequence)));
  }

  /** Bytes of bodies READ. */
  @Override
  public long bytesRead() {
    return bytesRead;
  }

  /** Record batches loaded. */
  public long batchCount() {
    return batches;
  }

  /** True once the peer completed the stream. */
  public boolean ended() {
    return ended;
  }

  @Override
  protected void closeReadSource() {
    // The Flight call belongs to whoever made the link; it ends the call.
  }
}
