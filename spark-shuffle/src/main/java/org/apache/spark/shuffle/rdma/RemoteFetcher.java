package org.apache.spark.shuffle.rdma;

import io.sluice.spark.shuffle.RegionInputStream;
import io.sluice.spark.shuffle.ViewInputStream;
import io.sluice.spark.shuffle.fetch.PeerConnections;
import io.sluice.spark.shuffle.fetch.ReadPlanner;
import io.sluice.spark.shuffle.protocol.RangeProtocol;
import io.sluice.spark.shuffle.registry.RangeService;
import io.sluice.transport.Checksums;
import io.sluice.transport.Connection;
import io.sluice.transport.NodeAddress;
import io.sluice.transport.ReadIntegrityException;
import io.sluice.transport.ReadRequest;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.RemoteView;
import io.sluice.transport.TransportException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.zip.CRC32C;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.storage.ShuffleBlockId;

/**
 * Fetches the remote part of a {@link FetchPlan} with one-sided READs: one range request per
 * executor (answered by that executor's {@link RangeService}), then one READ range per map output
 * (split into chunks of at most the READ size, issued as one batch), executor by executor,
 * keeping at most {@code maxBytesInFlight} bytes requested and not yet consumed (always at least
 * one range). How requests and READ ranges are cut is the {@link ReadPlanner}'s. Ranges are
 * handed out as {@link Fetched} units whose memory the consumer releases. Unless told not to, it
 * checks each block of a range against the CRC32C the owner sent with the range answer before
 * handing the range out: a READ body carries no tag of its own on verbs, so this is what keeps a
 * corrupting device, fabric or a changed file from reaching the deserializer. A mismatch is a
 * fetch failure naming the peer, the region and the range, with Spark's diagnosis of the block
 * ({@link CorruptionDiagnosis}).
 *
 * <p>Where the connection maps the owner's memory (shm: an executor on the same host) and {@code
 * sameHostViews} is on, a range is not READ into a destination: it is handed out as a read-only
 * view of the owner's registered data file ({@link Connection#view}), checked the same way, and
 * deserialized from streams that read the file where it lies ({@link ViewInputStream}), a chunk
 * at a time, with positional reads rather than through the mapping: anything of the executors'
 * user can shorten the file, and a read of the mapping past its new end would fault, which the
 * JVM reports as an {@code InternalError} that ends the executor, where a positional read fails
 * the block as a fetch failure. Such a range costs no destination memory; its view is held until
 * the consumer closes the unit (the iterator moved past its last block) or the fetcher closes
 * (the task ended, failed or was killed). A view outlives its owner's revocation and the
 * connection, so a peer that frees the file or goes away while a view is held does not change the
 * bytes being read. A range whose bytes span two registration windows, or that the connection
 * READs over its carrier, is READ as elsewhere.
 *
 * <p>Range requests go out ahead of the READs, to at most as many executors as the task's share
 * of the executor's bound on peer connections allows ({@link
 * ExecutorShuffleTransport#startReading}): all of them at once unless the bound is smaller than
 * the number of peers the task reads. Then each executor whose ranges are all handed out (READ,
 * nothing in flight) makes room for the next request, the task {@linkplain PeerConnections#expect
 * expects} the executors it asked and has not finished reading (so their connections are the last
 * to be closed for others), and it reads first the executors it has a connection to already. A
 * task that reads more peers than the bound thus opens each at most once and reuses what the
 * task before it left open.
 *
 * <p>Sends the first range requests when constructed and issues READs from {@link #start}. Not
 * thread safe: one reduce task drives it. Owns every destination region until it hands the unit out;
 * {@link #close} releases whatever is left, waiting for nothing (a region still being read is
 * released when its READ completes).
 */
final class RemoteFetcher implements AutoCloseable {
  /** One slice of a fetched range: a block's bytes, and the CRC32C its owner published for them. */
  record Slice(ShuffleBlockId id, long offset, long length, int checksum) {}

  /**
   * The bytes of {@code slices} (at least one) as one slice named by the first, if they lie back
   * to back in that order; else empty.
   */
  static Optional<Slice> span(List<Slice> slices) {
    Slice first = slices.get(0);
    long end = first.offset();
    for (Slice s : slices) {
      if (s.offset() != end) {
        return Optional.empty();
      }
      end += s.length();
    }
    return Optional.of(new Slice(first.id(), first.offset(), end - first.offset(), 0));
  }

  /** The size of the buffer in which a viewed block is read, a chunk at a time, for its checks. */
  private static final int CHECK_CHUNK = 64 << 10;

  /**
   * A fetched range, in local memory (READ) or viewed where the owner keeps it (same host), with
   * the blocks it holds. The consumer reads their streams and closes it.
   */
  static final class Fetched implements AutoCloseable {
    private final Function<Slice, InputStream> streams;
    final List<Slice> slices;
    private final Runnable onClose;
    private boolean closed;

    private Fetched(Function<Slice, InputStream> streams, List<Slice> slices, Runnable onClose) {
      this.streams = streams;
      this.slices = slices;
      this.onClose = onClose;
    }

    /** The bytes of block {@code s}, valid until the range is closed. */
    InputStream stream(Slice s) {
      return streams.apply(s);
    }

    /**
     * The bytes of all its blocks in order as one stream, valid until the range is closed; empty
     * if they do not lie back to back in the range (then each is read on its own).
     */
    Optional<InputStream> streamOfAll() {
      return span(slices).map(streams);
    }

    @Override
    public void close() {
      if (!closed) {
        closed = true;
        onClose.run();
      }
    }
  }

  /**
   * One executor this task reads from. Its connection is used through the executor's {@link
   * io.sluice.spark.shuffle.fetch.PeerConnections}, one operation at a time (the range request, each
   * range's READs or view): between operations it may be closed to make room for another peer's,
   * and is opened again for the next. The range answers stay valid across connections: they name
   * the owner's registrations, not a connection.
   */
  private static final class Source {
    final FetchPlan.Remote remote;
    final NodeAddress peer;
    /** The range answers; null until the request is sent. */
    CompletableFuture<List<RangeProtocol.Answer>> ranges;
    /** Held from the range request until the last range is handed out; null outside that time. */
    PeerConnections.Expectation expectation;
    /** Ranges not yet handed out, once the answers are known; -1 before. */
    int unitsLeft = -1;
    /** The connection of the latest operation issued (set on the transport's threads); null before. */
    volatile Connection connection;

    Source(FetchPlan.Remote remote, NodeAddress peer) {
      this.remote = remote;
      this.peer = peer;
    }

    /** Lets go of the expectation, if it holds one (finished, or the fetcher closed). */
    void stopExpecting() {
      if (expectation != null) {
        expectation.close();
        expectation = null;
      }
    }

    /** Notes the connection an operation runs on, for the data path and for discarding it after a failure. */
    Connection on(Connection c) {
      connection = c;
      return c;
    }
  }

  private record Unit(Source source, FetchPlan.MapRange map, RangeProtocol.Answer file, long start,
      long length, List<Slice> slices) {}

  /**
   * A range on its way: being READ into {@code destination} ({@code done} completes with the
   * connection the READs took), or being viewed ({@code view}).
   */
  private record InFlight(Unit unit, List<ReadRequest> reads, RegisteredRegion destination,
      CompletableFuture<Connection> done, CompletableFuture<Optional<RemoteView>> view) {
    static InFlight read(Unit unit, List<ReadRequest> reads, RegisteredRegion destination,
        CompletableFuture<Connection> done) {
      return new InFlight(unit, reads, destination, done, null);
    }

    static InFlight view(Unit unit, CompletableFuture<Optional<RemoteView>> view) {
      return new InFlight(unit, List.of(), null, null, view);
    }

    boolean viewed() {
      return view != null;
    }

    /** Lets go of whatever this range holds or will hold, waiting for nothing. */
    void abandon(ExecutorShuffleTransport transport) {
      if (viewed()) {
        view.whenComplete((v, e) -> {
          if (v != null) {
            v.ifPresent(RemoteView::close);
          }
        });
      } else {
        done.whenComplete((v, e) -> transport.destinations().free(destination));
      }
    }
  }

  private final int shuffleId;
  private final ExecutorShuffleTransport transport;
  private final ShuffleReadMetricsReporter metrics;
  private final long maxBytesInFlight;
  private final int readChunkBytes;
  private final long maxRangeBytes;
  private final boolean verifyReads;
  private final boolean sameHostViews;
  private final CorruptionDiagnosis diagnosis;
  private final List<Source> sources = new ArrayList<>();
  private final Deque<Unit> unissued = new ArrayDeque<>();
  private final Deque<InFlight> issued = new ArrayDeque<>();
  private final int maxRequestBytes;
  /** Where viewed blocks are read for their checks; made at the first. */
  private ByteBuffer checkChunk;
  /** Executors asked for ranges and not yet finished, at most. */
  private final int window;
  /** Sources whose range request was sent: the first {@code requested}. */
  private int requested;
  /** Sources whose ranges are all handed out. */
  private int finished;
  private int nextSource;
  private long bytesInFlight;
  private boolean closed;

  RemoteFetcher(int shuffleId, FetchPlan plan, ExecutorShuffleTransport transport,
      ShuffleReadMetricsReporter metrics, long maxBytesInFlight, int readChunkBytes, long maxRangeBytes,
      int maxRequestBytes, boolean verifyReads, boolean sameHostViews, CorruptionDiagnosis diagnosis) {
    this.shuffleId = shuffleId;
    this.diagnosis = diagnosis;
    this.verifyReads = verifyReads;
    this.sameHostViews = sameHostViews;
    this.transport = transport;
    this.metrics = metrics;
    this.maxBytesInFlight = maxBytesInFlight;
    this.readChunkBytes = readChunkBytes;
    this.maxRangeBytes = maxRangeBytes;
    this.maxRequestBytes = maxRequestBytes;
    for (FetchPlan.Remote remote : plan.remote()) {
      NodeAddress peer = transport.addressOf(remote.location().executorId()).orElseThrow(
          () -> new IllegalStateException("executor " + remote.location().executorId() + " has no transport"));
      sources.add(new Source(remote, peer));
    }
    this.window = transport.startReading();
    if (sources.size() > window) {
      // Those with a connection first, in plan order: their range requests and READs open nothing.
      List<Source> unconnected = new ArrayList<>();
      sources.removeIf(s -> !transport.connected(s.peer) && unconnected.add(s));
      sources.addAll(unconnected);
    }
    requestAhead();
  }

  /** Sends range requests while fewer than {@code window} executors are asked and not yet finished. */
  private void requestAhead() {
    while (requested < sources.size() && requested - finished < window) {
      Source source = sources.get(requested++);
      List<RangeProtocol.Query> queries = source.remote.maps().stream().map(FetchPlan.MapRange::query).toList();
      source.expectation = transport.expect(source.peer);
      source.ranges = transport.use(source.peer, c -> requestRanges(source.on(c), queries, maxRequestBytes));
    }
  }

  /** A range was handed out; after a source's last one, see {@link #finished}. */
  private void handedOut(Unit u) {
    if (--u.source().unitsLeft == 0) {
      finished(u.source());
    }
  }

  /**
   * A source's ranges are all handed out, so nothing of it is in flight: its connection may go,
   * and the next request may be sent.
   */
  private void finished(Source s) {
    s.stopExpecting();
    finished++;
    requestAhead();
  }

  /**
   * Starts the first READs once the owner can release them: call after arranging for {@link
   * #close} at task end, since a failure here leaves already issued READs behind.
   */
  void start() {
    fill(false);
  }

  /**
   * Issues whatever READs the range answers received so far and the in-flight bound allow,
   * without waiting for anything. The consumer calls it between local blocks, so remote data
   * is on its way while local data is read.
   *
   * @throws org.apache.spark.shuffle.FetchFailedException (unchecked) if a range request failed
   */
  void progress() {
    if (!closed) {
      fill(false);
    }
  }

  /** Asks for the queries' ranges: one message unless the answer would exceed the message size. */
  private CompletableFuture<List<RangeProtocol.Answer>> requestRanges(
      Connection c, List<RangeProtocol.Query> queries, int maxResponseBytes) {
    List<List<RangeProtocol.Query>> batches = ReadPlanner.requests(queries, maxResponseBytes);
    List<CompletableFuture<List<RangeProtocol.Answer>>> parts = new ArrayList<>();
    for (List<RangeProtocol.Query> b : batches) {
      parts.add(c.request(RangeProtocol.encodeRequest(shuffleId, b))
          .thenApply(response -> RangeProtocol.decodeResponse(response, b)));
    }
    return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new)).thenApply(v -> {
      List<RangeProtocol.Answer> all = new ArrayList<>(queries.size());
      parts.forEach(p -> all.addAll(p.join()));
      return all;
    });
  }

  /**
   * The next fetched range in plan order, waiting for it if need be (the wait is the task's fetch
   * wait time), or empty when every range has been handed out.
   *
   * @throws org.apache.spark.shuffle.FetchFailedException (unchecked) if any transport step fails
   */
  Optional<Fetched> next() {
    fill(true);
    InFlight f = issued.poll();
    if (f == null) {
      return Optional.empty();
    }
    if (f.viewed()) {
      Optional<Fetched> viewed = viewed(f);
      if (viewed.isPresent()) {
        return viewed;
      }
      f = read(f.unit()); // the connection READs this region over its carrier
    }
    Connection c;
    try {
      c = awaitCountingFetchWait(f.done());
    } catch (Throwable t) {
      f.abandon(transport);
      bytesInFlight -= f.unit().length();
      throw failed(f.unit().source(), f.unit().map(), firstReduce(f.unit()), "READ failed", t);
    }
    Unit u = f.unit();
    RegisteredRegion destination = f.destination();
    ByteBuffer bytes = destination.buffer();
    if (verifyReads) {
      verify(u, inMemory(bytes), () -> transport.destinations().release(destination));
    }
    for (ReadRequest r : f.reads()) {
      transport.recordRead(c.dataPath(r.remote()), r.length());
    }
    metrics.incRemoteBytesRead(u.length());
    metrics.incRemoteBlocksFetched(u.slices().size());
    handedOut(u);
    return Optional.of(new Fetched(s -> new RegionInputStream(slice(bytes, s)), u.slices(), () -> {
      transport.destinations().release(destination);
      consumed(u);
    }));
  }

  /** The range of a view in flight, or empty if the connection offers no view of its region. */
  private Optional<Fetched> viewed(InFlight f) {
    Unit u = f.unit();
    Optional<RemoteView> view;
    try {
      view = awaitCountingFetchWait(f.view());
    } catch (Throwable t) {
      bytesInFlight -= u.length();
      throw failed(u.source(), u.map(), firstReduce(u), "view failed", t);
    }
    if (view.isEmpty()) {
      return Optional.empty(); // still in flight: the caller READs it
    }
    RemoteView v = view.get();
    if (verifyReads) {
      verify(u, viewed(v), v::close);
    }
    transport.recordViewed(u.source().connection.dataPath(), u.length());
    metrics.incRemoteBytesRead(u.length());
    metrics.incRemoteBlocksFetched(u.slices().size());
    handedOut(u);
    Function<Slice, InputStream> streams = s -> new ViewInputStream(v, s.offset(), s.length(),
        e -> failure(u.source(), u.map(), s.id().reduceId(), "read of the view of block " + s.id() + " failed", e));
    return Optional.of(new Fetched(streams, u.slices(), () -> {
      v.close();
      consumed(u);
    }));
  }

  private static ByteBuffer slice(ByteBuffer bytes, Slice s) {
    return bytes.duplicate().position((int) s.offset()).limit((int) (s.offset() + s.length())).slice();
  }

  /** A fetched range's blocks as its checks read them. */
  private interface CheckedBytes {
    int crc32c(Slice s) throws TransportException;

    CorruptionDiagnosis.BlockBytes bytes(Slice s);

    /** The CRC32C of each of {@code slices}, in order. */
    default int[] crc32cs(List<Slice> slices) throws TransportException {
      int[] out = new int[slices.size()];
      for (int i = 0; i < out.length; i++) {
        out[i] = crc32c(slices.get(i));
      }
      return out;
    }
  }

  private static CheckedBytes inMemory(ByteBuffer bytes) {
    return new CheckedBytes() {
      @Override
      public int crc32c(Slice s) {
        return Checksums.crc32c(slice(bytes, s));
      }

      @Override
      public CorruptionDiagnosis.BlockBytes bytes(Slice s) {
        return c -> c.update(slice(bytes, s));
      }
    };
  }

  /** A view's blocks, read a chunk at a time with the view's positional reads, never through its mapping. */
  private CheckedBytes viewed(RemoteView v) {
    return new CheckedBytes() {
      @Override
      public int crc32c(Slice s) throws TransportException {
        CRC32C crc = new CRC32C();
        readChunks(v, s, crc::update);
        return (int) crc.getValue();
      }

      @Override
      public CorruptionDiagnosis.BlockBytes bytes(Slice s) {
        return c -> readChunks(v, s, c::update);
      }

      /**
       * Blocks that lie back to back are read in one pass over their bytes, a chunk at a time,
       * not one positional read each: a range of thousands of small blocks (a coalesced SQL
       * read) costs as many reads as chunks.
       */
      @Override
      public int[] crc32cs(List<Slice> slices) throws TransportException {
        Optional<Slice> all = span(slices);
        if (all.isEmpty()) {
          return CheckedBytes.super.crc32cs(slices);
        }
        int[] out = new int[slices.size()];
        // Sums the chunks into the slice they belong to, closing each slice as its bytes end.
        final class Sums implements Consumer<ByteBuffer> {
          private final CRC32C crc = new CRC32C();
          private int at; // the slice being summed
          private long left = slices.get(0).length(); // its bytes not yet summed

          /** Records every slice whose bytes are all summed (empty ones included). */
          void closeFinished() {
            while (at < out.length && left == 0) {
              out[at++] = (int) crc.getValue();
              crc.reset();
              left = at < out.length ? slices.get(at).length() : 0;
            }
          }

          @Override
          public void accept(ByteBuffer chunk) {
            closeFinished();
            while (chunk.hasRemaining() && at < out.length) {
              int n = (int) Math.min(left, chunk.remaining());
              crc.update(chunk.slice(chunk.position(), n));
              chunk.position(chunk.position() + n);
              left -= n;
              closeFinished();
            }
          }
        }
        Sums sums = new Sums();
        readChunks(v, all.get(), sums);
        sums.closeFinished(); // slices of no bytes where no chunk came
        return out;
      }
    };
  }

  /** Hands block {@code s} of a view to {@code sink} in chunks of this fetcher's check buffer. */
  private void readChunks(RemoteView v, Slice s, Consumer<ByteBuffer> sink) throws TransportException {
    if (checkChunk == null) {
      checkChunk = ByteBuffer.allocateDirect(CHECK_CHUNK);
    }
    long end = s.offset() + s.length();
    for (long at = s.offset(); at < end; at += CHECK_CHUNK) {
      checkChunk.clear().limit((int) Math.min(CHECK_CHUNK, end - at));
      v.read(at, checkChunk);
      sink.accept(checkChunk.flip());
    }
  }

  /** A consumed range no longer counts as in flight: more may be issued. */
  private void consumed(Unit u) {
    bytesInFlight -= u.length();
    if (!closed) {
      fill(false);
    }
  }

  /**
   * Checks each block of a range READ into, or viewed as, {@code read} against its owner's
   * checksum.
   *
   * @param giveBack lets go of {@code read} when a block differs or cannot be read
   * @throws org.apache.spark.shuffle.FetchFailedException (unchecked) for the first block that
   *     differs, after giving the memory back, or that cannot be read (a view of a file cut short)
   */
  private void verify(Unit u, CheckedBytes read, Runnable giveBack) {
    int[] crcs;
    try {
      crcs = read.crc32cs(u.slices());
    } catch (TransportException e) {
      giveBack.run();
      bytesInFlight -= u.length();
      throw failure(u.source(), u.map(), firstReduce(u), "view failed", e);
    }
    for (int i = 0; i < crcs.length; i++) {
      Slice s = u.slices().get(i);
      long at = u.start() + s.offset(); // in the owner's data file
      int actual = crcs[i];
      if (actual != s.checksum()) {
        ReadIntegrityException e = new ReadIntegrityException(u.source().peer, u.file().windowAt(at),
            u.file().offsetInWindow(at), s.length(), s.checksum(), actual,
            "block " + s.id() + " (bytes [" + at + ", " + (at + s.length()) + ") of its data file)");
        String why = diagnosis.diagnose(s.id(), read.bytes(s), u.source().remote.location());
        giveBack.run(); // the READ is complete (or the view taken): nothing writes to it any more
        bytesInFlight -= u.length();
        throw failed(u.source(), u.map(), s.id().reduceId(),
            "READ does not match its owner's checksum" + (why.isEmpty() ? "" : " (" + why + ")"), e);
      }
    }
  }

  /**
   * Waits for a transport future; the time blocked is the task's fetch wait, as in Spark's own
   * reader, where issuing fetches is not counted and waiting for their results is.
   */
  private <T> T awaitCountingFetchWait(CompletableFuture<T> future) throws Throwable {
    long started = System.nanoTime();
    try {
      return FetchFailures.await(future, transport.waitDeadlineMs());
    } finally {
      metrics.incFetchWaitTime(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
    }
  }

  /**
   * Issues READs while the in-flight bound allows, learning ranges as their answers arrive. Waits
   * for a range answer only if {@code mayBlock} and nothing else is in flight.
   */
  private void fill(boolean mayBlock) {
    while (true) {
      if (unissued.isEmpty()) {
        if (nextSource >= sources.size()) {
          return;
        }
        Source s = sources.get(nextSource);
        if (s.ranges == null) {
          return; // not asked yet: ranges in flight come first (see requestAhead)
        }
        if (!s.ranges.isDone() && (!mayBlock || !issued.isEmpty())) {
          return; // never block for an answer while there is data to consume
        }
        nextSource++;
        expand(s);
        continue;
      }
      Unit u = unissued.peek();
      if (!issued.isEmpty() && bytesInFlight + u.length() > maxBytesInFlight) {
        return;
      }
      unissued.poll();
      issue(u);
    }
  }

  private void expand(Source s) {
    List<RangeProtocol.Answer> answers;
    try {
      answers = awaitCountingFetchWait(s.ranges);
    } catch (Throwable t) {
      FetchPlan.MapRange first = s.remote.maps().get(0);
      throw failed(s, first, first.startPartition(), "range request failed", t);
    }
    int added = 0;
    for (int i = 0; i < answers.size(); i++) {
      FetchPlan.MapRange map = s.remote.maps().get(i);
      RangeProtocol.Answer a = answers.get(i);
      List<ReadPlanner.Unit> units;
      try {
        units = ReadPlanner.units(a, map.startPartition(), maxRangeBytes);
      } catch (ReadPlanner.BlockTooLargeException e) {
        throw failed(s, map, e.partition(), e.getMessage(), null);
      }
      for (ReadPlanner.Unit unit : units) {
        List<Slice> slices = new ArrayList<>(unit.blocks().size());
        for (ReadPlanner.Block b : unit.blocks()) {
          slices.add(new Slice(new ShuffleBlockId(shuffleId, map.mapId(), b.partition()), b.offset(), b.length(),
              a.checksum(b.partition() - map.startPartition())));
        }
        unissued.add(new Unit(s, map, a, unit.start(), unit.length(), slices));
        added++;
      }
    }
    s.unitsLeft = added;
    if (added == 0) {
      finished(s);
    }
  }

  private void issue(Unit u) {
    Source s = u.source();
    // Set: its range answer arrived over it. The data path is the peer's, whichever connection comes next.
    if (sameHostViews && s.connection.dataPath().equals("shm") && u.length() <= Integer.MAX_VALUE) {
      List<RangeProtocol.Piece> whole = u.file().pieces(u.start(), u.length(), Integer.MAX_VALUE);
      if (whole.size() == 1) {
        RangeProtocol.Piece p = whole.get(0);
        CompletableFuture<Optional<RemoteView>> view = transport.use(s.peer,
            c -> s.on(c).view(p.window(), p.offset(), p.length())).thenApply(v -> v.map(transport::held));
        issued.add(InFlight.view(u, view));
        bytesInFlight += u.length();
        return;
      }
    }
    issued.add(read(u));
    bytesInFlight += u.length();
  }

  /**
   * Starts the READs of a range into a fresh destination, as one use of the peer's connection: a
   * READ that cannot be issued fails the range's future like one that failed on the way.
   */
  private InFlight read(Unit u) {
    Source s = u.source();
    RegisteredRegion destination;
    try {
      destination = transport.destinations().allocate(u.length());
    } catch (TransportException | RuntimeException e) {
      throw failed(u.source(), u.map(), firstReduce(u), "no memory for a READ destination", e);
    }
    List<ReadRequest> reads = new ArrayList<>();
    for (RangeProtocol.Piece p : u.file().pieces(u.start(), u.length(), readChunkBytes)) {
      reads.add(new ReadRequest(p.window(), p.offset(), destination, p.rangeOffset(), p.length()));
    }
    CompletableFuture<Connection> done = transport.use(s.peer,
        c -> CompletableFuture.allOf(s.on(c).readBatch(reads).toArray(CompletableFuture[]::new)).thenApply(v -> c));
    return InFlight.read(u, reads, destination, done);
  }

  private static int firstReduce(Unit u) {
    return u.slices().get(0).id().reduceId();
  }

  /** A fetch failure of {@code map}'s output on {@code s}, whose connection is discarded. */
  private RuntimeException failed(Source s, FetchPlan.MapRange map, int reduceId, String what, Throwable cause) {
    Connection used = s.connection;
    if (used != null) {
      transport.discard(s.peer, used);
    }
    return failure(s, map, reduceId, what, cause);
  }

  /** A fetch failure of {@code map}'s output on {@code s} that says nothing against the connection. */
  private RuntimeException failure(Source s, FetchPlan.MapRange map, int reduceId, String what, Throwable cause) {
    String message = what + " from executor " + s.remote.location().executorId() + " at " + s.peer
        + " (shuffle " + shuffleId + ", map " + map.mapId() + ", reduce " + reduceId + ")"
        + (cause == null ? "" : ": " + cause);
    return FetchFailures.fail(s.remote.location(), shuffleId, map.mapId(), map.mapIndex(), reduceId, message, cause);
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    transport.stopReading();
    sources.forEach(Source::stopExpecting);
    for (InFlight f : issued) {
      f.abandon(transport);
    }
    issued.clear();
    unissued.clear();
  }
}
