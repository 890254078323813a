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
 * memory from a {@link LandingPool} (a {@link Prefetcher} starts those READs up to {@code depth}
 * bodies ahead), acknowledges it, and loads the vectors from that memory without a copy (Arrow's own loader slices the body; dictionaries, every type and compressed
 * buffers work as they do for IPC files and streams).
 *
 * <p>Not thread safe: one reading thread, as for any ArrowReader (plus its prefetching thread).
 */
public final class BodyReader extends ArrowReader {
  private final FrameLink link;
  private final Connection connection;
  private final LandingPool landing;
  private final int chunkBytes;
  private final long timeoutNanos;
  private final int depth;
  private Prefetcher prefetcher;
  private long bytesRead;
  private long batches;
  private boolean ended;

  public BodyReader(BufferAllocator allocator, FrameLink link, Connection connection, LandingPool landing,
      int chunkBytes, int depth, long timeoutNanos) {
    super(allocator, CommonsCompressionFactory.INSTANCE);
    this.link = link;
    this.connection = connection;
    this.landing = landing;
    this.chunkBytes = chunkBytes;
    this.timeoutNanos = timeoutNanos;
    this.depth = depth;
  }

  @Override
  protected Schema readSchema() throws IOException {
    Optional<ByteBuffer> raw = link.receive();
    if (raw.isEmpty()) {
      throw new IOException("data-plane stream ended before its schema");
    }
    Frame f;
    try {
      f = DataPlaneProtocol.decodeFrame(raw.get());
    } catch (IllegalArgumentException e) {
      throw new IOException("malformed data-plane frame: " + e.getMessage(), e);
    }
    if (!(f instanceof SchemaFrame s)) {
      throw new IOException("data-plane stream must start with its schema, got " + f.getClass().getSimpleName());
    }
    Schema schema;
    try {
      schema = IpcBodies.schema(s.metadata());
    } catch (IllegalArgumentException e) {
      throw new IOException(e.getMessage(), e);
    }
    prefetcher = new Prefetcher(link, connection, landing, chunkBytes, depth, timeoutNanos);
    return schema;
  }

  @Override
  public boolean loadNextBatch() throws IOException {
    prepareLoadNextBatch();
    while (!ended) {
      Prefetcher.Item item = next();
      if (item instanceof Prefetcher.End) {
        ended = true;
        return false;
      }
      if (item instanceof Prefetcher.Failed failed) {
        ended = true;
        throw asIo(failed.error());
      }
      Prefetcher.Fetched fetched = (Prefetcher.Fetched) item;
      BodyFrame f = fetched.frame();
      ArrowBuf body = complete(fetched);
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
    return false;
  }

  private Prefetcher.Item next() throws IOException {
    try {
      // The prefetcher's receive has a deadline of its own; this one only guards against a stall.
      return prefetcher.take(System.nanoTime() + 3 * timeoutNanos);
    } catch (TimeoutException e) {
      throw new IOException(e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while waiting for a batch", e);
    }
  }

  private static IOException asIo(RuntimeException e) {
    if (e instanceof org.apache.arrow.flight.FlightRuntimeException f) {
      throw f;
    }
    return new IOException("data-plane stream failed: " + e.getMessage(), e);
  }

  /** Waits for the body's READ, acknowledges it, and returns it as an ArrowBuf. */
  private ArrowBuf complete(Prefetcher.Fetched fetched) throws IOException {
    BodyFrame f = fetched.frame();
    long length = f.body().length();
    long declared = IpcBodies.declaredBodyLength(f.metadata());
    if (declared > length) {
      prefetcher.giveBack(fetched);
      throw new IOException("batch metadata declares a body of " + declared + " bytes, the frame offers " + length);
    }
    try {
      fetched.read().get(timeoutNanos, TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      prefetcher.giveBack(fetched);
      Throwable cause = e.getCause();
      if (cause instanceof UnknownKeyException || cause instanceof RegionRevokedException) {
        // The server withdraws access when it ends a stream: its reason is the one to report.
        serverVerdict();
      }
      throw new IOException("READ of a batch body failed: " + cause, cause);
    } catch (TimeoutException e) {
      prefetcher.giveBack(fetched);
      throw new IOException("READ of a batch body took longer than " + timeoutNanos / 1_000_000 + " ms", e);
    } catch (InterruptedException e) {
      prefetcher.giveBack(fetched);
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while reading a batch body", e);
    }
    acknowledge(f.sequence());
    bytesRead += length;
    return fetched.landing().map(l -> l.wrap(allocator, length)).orElseGet(allocator::getEmpty);
  }

  /** Throws the server's error if the stream ended with one (skipping bodies still queued). */
  private void serverVerdict() throws IOException {
    long deadline = System.nanoTime() + timeoutNanos;
    while (true) {
      Prefetcher.Item i;
      try {
        i = prefetcher.take(deadline);
      } catch (TimeoutException | InterruptedException e) {
        return;
      }
      if (i instanceof Prefetcher.Fetched skipped) {
        prefetcher.giveBack(skipped);
      } else {
        ended = true;
        if (i instanceof Prefetcher.Failed failed) {
          throw asIo(failed.error());
        }
        return;
      }
    }
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
    // The Flight call belongs to whoever made the link (it cancels or ends the call first).
    if (prefetcher != null) {
      prefetcher.close();
    }
  }
}
