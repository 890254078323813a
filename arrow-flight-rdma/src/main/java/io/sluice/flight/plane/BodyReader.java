package io.sluice.flight.plane;

import io.sluice.flight.memory.LandingPool;
import io.sluice.flight.protocol.DataPlaneProtocol;
import io.sluice.flight.protocol.DataPlaneProtocol.Announcement;
import io.sluice.flight.protocol.DataPlaneProtocol.BodyFrame;
import io.sluice.flight.protocol.DataPlaneProtocol.Frame;
import io.sluice.flight.protocol.DataPlaneProtocol.Pull;
import io.sluice.flight.protocol.DataPlaneProtocol.SchemaFrame;
import io.sluice.flight.protocol.IpcBodies;
import io.sluice.transport.Checksums;
import io.sluice.transport.Connection;
import io.sluice.transport.ReadIntegrityException;
import io.sluice.transport.RegionRevokedException;
import io.sluice.transport.RemoteView;
import io.sluice.transport.UnknownKeyException;
import io.sluice.transport.TransportException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.arrow.compression.CommonsCompressionFactory;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The receiving side of a data-plane get, as an Arrow {@link ArrowReader}, run entirely on the
 * consumer's thread. The schema arrives on the Flight call; body announcements are pulled over
 * the authenticated transport connection (a pull also acknowledges the bodies taken so far), one
 * pull under way at a time and sent while earlier announcements are still being read, so the
 * consumer rarely waits for one. Up to {@code depth} bodies are being READ at once, each in one
 * batched READ (ranges of at most {@code chunkBytes}) straight into registered memory from a
 * {@link LandingPool}; on shm (with {@code viewBodies}) a body is not READ at all but taken as a
 * read-only view of the server's memory ({@link ViewLease}). Each body's bytes are checked against
 * the CRC32C announced with it (unless told not to) before Arrow sees them: a mismatch fails the
 * stream with a {@link ReadIntegrityException} as the cause. Arrow's own loader then slices the
 * vectors from that memory without a copy (dictionaries, every type and compressed buffers work
 * as they do for IPC streams). When every body is taken, a last pull acknowledges them; the
 * call's owner then half-closes the call once no view is held.
 *
 * <p>Not thread safe: one reading thread, as for any ArrowReader. No thread of its own: READ
 * and pull completions arrive on the transport's threads and are waited for here.
 */
public final class BodyReader extends ArrowReader {
  private final FrameLink link;
  private final Connection connection;
  private final LandingPool landing;
  private final byte[] grant;
  private final int chunkBytes;
  private final long timeoutNanos;
  private final int depth;
  private final ArrayDeque<BodyFrame> announced = new ArrayDeque<>();
  private final ArrayDeque<Reading> reading = new ArrayDeque<>();
  private final boolean viewBodies;
  private final boolean verify;
  private final ViewLease views = new ViewLease();
  private CompletableFuture<ByteBuffer> pull;
  private long pulledAt = -1;
  private boolean allAnnounced;
  private long nextSequence;
  private long consumed;
  private long bytesRead;
  private long batches;
  private boolean ended;

  /**
   * A body on its way: being READ into {@code landing}, or being viewed where it lies ({@code
   * view}; empty when READ). A body of 0 bytes has neither.
   */
  private record Reading(BodyFrame frame, Optional<LandingPool.Landing> landing, CompletableFuture<Void> read,
      CompletableFuture<Optional<RemoteView>> view) {
    static Reading read(BodyFrame f, Optional<LandingPool.Landing> landing, CompletableFuture<Void> read) {
      return new Reading(f, landing, read, CompletableFuture.completedFuture(Optional.empty()));
    }

    static Reading view(BodyFrame f, CompletableFuture<Optional<RemoteView>> view) {
      return new Reading(f, Optional.empty(), CompletableFuture.completedFuture(null), view);
    }
  }

  /**
   * @param viewBodies take bodies as read-only views of the server's memory where the connection
   *     maps it (shm) instead of READing them
   * @param verify check each body READ or viewed against the CRC32C announced with it before
   *     Arrow sees it
   */
  public BodyReader(BufferAllocator allocator, FrameLink link, Connection connection, LandingPool landing,
      byte[] grant, int chunkBytes, int depth, long timeoutNanos, boolean viewBodies, boolean verify) {
    super(allocator, CommonsCompressionFactory.INSTANCE);
    this.link = link;
    this.connection = connection;
    this.landing = landing;
    this.grant = grant.clone();
    this.chunkBytes = chunkBytes;
    this.timeoutNanos = timeoutNanos;
    this.depth = Math.max(1, depth);
    this.viewBodies = viewBodies && connection.dataPath().equals("shm");
    this.verify = verify;
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
    sendPull();
    return schema;
  }

  @Override
  public boolean loadNextBatch() throws IOException {
    prepareLoadNextBatch();
    while (!ended) {
      Optional<Reading> next = nextBody();
      if (next.isEmpty()) {
        finish();
        ended = true;
        return false;
      }
      BodyFrame f = next.get().frame();
      ArrowBuf body = complete(next.get());
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

  /** The next body in stream order with its READ under way; empty when the stream has no more. */
  private Optional<Reading> nextBody() throws IOException {
    while (true) {
      takeAnnouncement(false);
      startReads();
      if (pull == null && !allAnnounced && announced.size() < depth && pulledAt != consumed) {
        sendPull();
      }
      if (!reading.isEmpty()) {
        return Optional.of(reading.poll());
      }
      if (allAnnounced && announced.isEmpty()) {
        return Optional.empty();
      }
      if (pull == null) {
        sendPull();
      }
      takeAnnouncement(true);
    }
  }

  private void sendPull() {
    pulledAt = consumed;
    int want = Math.min(DataPlaneProtocol.MAX_ANNOUNCED_BODIES, Math.max(64, 4 * depth));
    pull = connection.request(DataPlaneProtocol.encode(new Pull(grant, consumed, allAnnounced ? 0 : want)));
  }

  /** Takes the reply of the pull under way if it has come (or, with {@code wait}, once it comes). */
  private void takeAnnouncement(boolean wait) throws IOException {
    if (pull == null || !wait && !pull.isDone()) {
      return;
    }
    ByteBuffer reply;
    try {
      reply = pull.get(timeoutNanos, TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      serverVerdict();
      throw new IOException("the server refused the stream's pull: " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      throw new IOException("no announcement from the server within " + timeoutNanos / 1_000_000 + " ms", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while waiting for an announcement", e);
    } finally {
      if (pull.isDone()) {
        pull = null;
      }
    }
    Announcement a;
    try {
      a = DataPlaneProtocol.decodeAnnouncement(reply);
    } catch (IllegalArgumentException e) {
      throw new IOException("malformed announcement: " + e.getMessage(), e);
    }
    if (allAnnounced && !a.bodies().isEmpty()) {
      throw new IOException("the server announced bodies after its last one");
    }
    for (BodyFrame f : a.bodies()) {
      if (f.sequence() != nextSequence) {
        throw new IOException("announced body " + f.sequence() + ", expected " + nextSequence);
      }
      nextSequence++;
      announced.add(f);
    }
    allAnnounced |= a.last();
  }

  /** Starts READs of announced bodies until {@code depth} are under way. */
  private void startReads() {
    while (reading.size() < depth && !announced.isEmpty()) {
      BodyFrame f = announced.poll();
      long length = f.body().length();
      if (length == 0) {
        reading.add(Reading.read(f, Optional.empty(), CompletableFuture.completedFuture(null)));
        continue;
      }
      if (viewBodies) {
        reading.add(Reading.view(f, connection.view(f.body().region(), f.body().offset(), length)));
        continue;
      }
      LandingPool.Landing dst;
      try {
        dst = landing.acquire(length);
      } catch (TransportException | RuntimeException e) {
        reading.add(Reading.read(f, Optional.empty(), CompletableFuture.failedFuture(e)));
        continue;
      }
      reading.add(Reading.read(f, Optional.of(dst), BodyReads.start(connection, f.body(), dst.region(), 0, chunkBytes)));
    }
  }

  /** Waits for the body's READ and returns it as an ArrowBuf; the next pull acknowledges it. */
  private ArrowBuf complete(Reading r) throws IOException {
    BodyFrame f = r.frame();
    long length = f.body().length();
    long declared = IpcBodies.declaredBodyLength(f.metadata());
    if (declared > length) {
      giveBack(r);
      throw new IOException("batch metadata declares a body of " + declared + " bytes, the frame offers " + length);
    }
    Optional<RemoteView> view;
    try {
      r.read().get(timeoutNanos, TimeUnit.NANOSECONDS);
      view = r.view().get(timeoutNanos, TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      giveBack(r);
      Throwable cause = e.getCause();
      if (cause instanceof UnknownKeyException || cause instanceof RegionRevokedException) {
        // The server withdraws access when it ends a stream: its reason is the one to report.
        serverVerdict();
      }
      throw new IOException("READ of a batch body failed: " + cause, cause);
    } catch (TimeoutException e) {
      giveBack(r);
      throw new IOException("READ of a batch body took longer than " + timeoutNanos / 1_000_000 + " ms", e);
    } catch (InterruptedException e) {
      giveBack(r);
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while reading a batch body", e);
    }
    if (verify && length > 0) {
      check(r, view);
    }
    consumed++;
    bytesRead += length;
    if (view.isPresent()) {
      return views.wrap(view.get(), length, allocator);
    }
    return r.landing().map(l -> l.wrap(allocator, length)).orElseGet(allocator::getEmpty);
  }

  /**
   * Checks the body's bytes, READ or viewed, against the CRC32C the server announced with it; on
   * a mismatch gives the body back and fails the stream with the {@link ReadIntegrityException}
   * as the cause.
   */
  private void check(Reading r, Optional<RemoteView> view) throws IOException {
    BodyFrame f = r.frame();
    ByteBuffer bytes = view.map(RemoteView::buffer)
        .orElseGet(() -> r.landing().orElseThrow().region().buffer().limit((int) f.body().length()));
    try {
      Checksums.verify(bytes, f.crc32c(), connection.peer(), f.body().region(), f.body().offset(),
          (f.dictionary() ? "dictionary" : "record batch") + " body " + f.sequence());
    } catch (ReadIntegrityException e) {
      giveBack(r);
      throw new IOException(e.getMessage(), e);
    }
  }

  /**
   * Acknowledges every body with a last pull (its answer says the server took it). The call itself
   * ends when its owner half-closes it, once no view of the stream's bodies is held.
   */
  private void finish() throws IOException {
    if (pull != null) {
      takeAnnouncement(true);
    }
    if (pulledAt != consumed) {
      sendPull();
      takeAnnouncement(true);
    }
  }

  /**
   * Tells the server this reader wants no more bodies, keeping those it has (their views stay
   * valid); false if the server did not take it within the deadline.
   */
  public boolean stop() {
    try {
      connection.request(DataPlaneProtocol.encode(new Pull(grant, consumed, 0, true)))
          .get(timeoutNanos, TimeUnit.NANOSECONDS);
      return true;
    } catch (ExecutionException | TimeoutException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /**
   * After the caller half-closed the call: waits (within the link's deadline) for the server to
   * end it, and returns its error if it ended with one.
   */
  public Optional<org.apache.arrow.flight.FlightRuntimeException> awaitServerEnd() {
    return link.drainToError();
  }

  /** The views of this stream's bodies that buffers still hold; see {@link ViewLease}. */
  public ViewLease views() {
    return views;
  }

  /** Throws the server's error if the call ended with one. */
  private void serverVerdict() throws IOException {
    Optional<org.apache.arrow.flight.FlightRuntimeException> e = link.drainToError();
    if (e.isPresent()) {
      ended = true;
      throw e.get();
    }
  }

  /** Gives a body's landing memory back once its READ has finished (within the deadline), or closes its view. */
  private void giveBack(Reading r) {
    r.view().thenAccept(v -> v.ifPresent(RemoteView::close));
    if (r.landing().isEmpty()) {
      return;
    }
    try {
      r.read().get(timeoutNanos, TimeUnit.NANOSECONDS);
    } catch (Exception e) {
      // finished with an error, or not within the deadline: the transport writes a destination
      // only before the READ's future completes normally, so the memory is safe to reuse either way
    }
    r.landing().get().release();
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
    ended = true;
    for (Reading r; (r = reading.poll()) != null; ) {
      giveBack(r);
    }
    announced.clear();
  }
}
