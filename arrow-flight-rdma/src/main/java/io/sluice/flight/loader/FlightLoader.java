package io.sluice.flight.loader;

import io.sluice.flight.SluiceFlightClient;
import io.sluice.flight.TableReader;
import io.sluice.transport.TransportConfig;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.util.TransferPair;

/**
 * A data loader for one trainer worker: reads its rank's share of a table's {@link Shard}s over
 * Flight, epoch after epoch, in the order {@link EpochOrder} draws from (seed, epoch), with up to
 * {@code prefetch} shards read ahead (across epoch ends too) while the trainer computes.
 *
 * <pre>{@code
 * List<Shard> shards = Shards.list(allocator, locations, "features.", Duration.ofSeconds(30), transportConfig);
 * try (FlightLoader loader = FlightLoader.builder(allocator, shards).rank(rank, world).seed(7)
 *          .epochs(5).prefetch(4).config(transportConfig).resumeFrom(checkpoint).build()) {
 *   while (!loader.finished()) {
 *     Optional<LoadedShard> s;
 *     while ((s = loader.next(Duration.ofMinutes(5))).isPresent()) {
 *       try (LoadedShard shard = s.get()) {
 *         shard.batches().forEach(model::step);
 *         checkpoint = shard.cursorAfter();
 *       }
 *     }
 *     // an epoch ended
 *   }
 * }
 * }</pre>
 *
 * <p>Shards are read with {@link SluiceFlightClient}: bodies are READ over the Sluice transport
 * where the server offers the data plane and {@code config} holds its secret, and arrive by plain
 * Flight DoGet otherwise; each {@link LoadedShard} says which. A shard is read whole, so a cursor
 * (epoch, position) names a shard boundary, and a loader resumed from it opens no shard before it.
 * Of one server, the loader holds no more data-plane gets at once than that server lets one
 * client hold ({@link SluiceFlightClient#maxDataPlaneGets()}); a deeper prefetch waits its turn
 * (at most {@link Builder#streamWait}), and a shard waiting for one is not yet being read.
 *
 * <p>Ownership: the loader owns its Flight clients, its reading threads and every shard read
 * ahead; a shard {@link #next} returns belongs to the caller. Closing, also mid-epoch, stops the
 * readers (streams in progress are cancelled, so servers withdraw their grants), frees every
 * shard read ahead and closes the clients; the allocator stays the caller's. Not thread safe:
 * {@link #next}, {@link #cursor} and {@link #close} belong to one consuming thread; the readers are
 * the loader's own.
 */
public final class FlightLoader implements AutoCloseable {
  private static final long STOP_SECONDS = 30;

  private final BufferAllocator allocator;
  private final List<Shard> shards;
  private final TransportConfig config;
  private final int prefetch;
  private final Duration streamWait;
  private final EpochPlan plan;
  private final ExecutorService readers;
  private final Map<String, SluiceFlightClient> clients = new ConcurrentHashMap<>();
  private final ArrayDeque<Pending> ahead = new ArrayDeque<>();
  private final AtomicLong streamsOpened = new AtomicLong();
  /** Readers waiting for their stream to open; {@link #close} interrupts them (they hold nothing yet). */
  private final Set<Thread> opening = new HashSet<>();
  private volatile boolean closed;
  private Cursor cursor;
  private RuntimeException failure;

  /** A step read ahead: a shard being read, or (future null) the end of an epoch. */
  private record Pending(EpochPlan.Step step, Future<LoadedShard> shard) {}

  private FlightLoader(Builder b) {
    this.allocator = b.allocator;
    this.shards = b.shards;
    this.config = b.config;
    this.prefetch = b.prefetch;
    this.streamWait = b.streamWait;
    this.plan = new EpochPlan(b.shards.size(), b.seed, b.rank, b.world, b.epochs, b.from);
    this.cursor = b.from;
    AtomicInteger n = new AtomicInteger();
    this.readers = Executors.newFixedThreadPool(prefetch, r -> {
      Thread t = new Thread(r, "sluice-loader-" + b.rank + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
  }

  public static Builder builder(BufferAllocator allocator, List<Shard> shards) {
    return new Builder(allocator, shards);
  }

  /**
   * The next shard of the current epoch (the caller closes it), or empty when the epoch has ended
   * (the cursor then moves to the next epoch) or when the last epoch is done ({@link #finished}).
   *
   * @throws TimeoutException if the shard did not arrive within {@code timeout}; nothing is lost,
   *     the same shard is the next one
   * @throws ShardReadException if reading the shard failed; the loader is then unusable, and a new
   *     one resumed from {@link #cursor} starts with that shard
   */
  public Optional<LoadedShard> next(Duration timeout) throws InterruptedException, TimeoutException {
    if (closed) {
      throw new IllegalStateException("the loader is closed");
    }
    if (failure != null) {
      throw new IllegalStateException("the loader failed earlier; resume a new one from " + cursor, failure);
    }
    readAhead();
    Pending head = ahead.peek();
    if (head == null) {
      return Optional.empty();
    }
    if (head.shard() == null) {
      ahead.poll();
      cursor = head.step().cursor().nextEpoch();
      readAhead();
      return Optional.empty();
    }
    LoadedShard shard;
    try {
      shard = head.shard().get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      ahead.poll();
      failure = e.getCause() instanceof RuntimeException r ? r : new ShardReadException(shards.get(head.step().shard()),
          e.getCause());
      throw failure;
    }
    ahead.poll();
    cursor = shard.cursorAfter();
    readAhead();
    return Optional.of(shard);
  }

  /** Where this rank stands: the next shard {@link #next} returns (or the end of its epoch). */
  public Cursor cursor() {
    return cursor;
  }

  /** Whether every epoch asked for has been delivered. */
  public boolean finished() {
    return !plan.hasNext() && ahead.isEmpty();
  }

  /** Shard streams this loader has opened (read ahead included). */
  public long streamsOpened() {
    return streamsOpened.get();
  }

  /** Keeps up to {@code prefetch} steps of the plan read or being read ahead. */
  private void readAhead() {
    while (ahead.size() < prefetch && plan.hasNext()) {
      EpochPlan.Step step = plan.next();
      if (step.isEpochEnd()) {
        ahead.add(new Pending(step, null));
      } else {
        Shard shard = shards.get(step.shard());
        ahead.add(new Pending(step, readers.submit(() -> read(shard, step.cursor()))));
      }
    }
  }

  /** Reads one shard whole, moving its batches into the loader's allocator. Runs on a reader thread. */
  private LoadedShard read(Shard shard, Cursor at) {
    if (closed) {
      throw new CancellationException("the loader closed");
    }
    List<VectorSchemaRoot> batches = new ArrayList<>();
    long bytes = 0;
    try {
      try (TableReader stream = open(shard)) {
        // A stream runs to its end even when the loader closes meanwhile: a shard is bounded, and
        // ending a stream normally is what lets every server withdraw its grant at once.
        while (stream.next()) {
          VectorSchemaRoot root = stream.getRoot();
          List<FieldVector> moved = new ArrayList<>();
          for (FieldVector v : root.getFieldVectors()) {
            bytes += v.getBufferSize();
            TransferPair t = v.getTransferPair(allocator);
            t.transfer();
            moved.add((FieldVector) t.getTo());
          }
          batches.add(new VectorSchemaRoot(root.getSchema().getFields(), moved, root.getRowCount()));
        }
        return new LoadedShard(shard, at, List.copyOf(batches), bytes, stream.dataPath());
      }
    } catch (CancellationException e) {
      batches.forEach(VectorSchemaRoot::close);
      throw e;
    } catch (RuntimeException e) {
      batches.forEach(VectorSchemaRoot::close);
      throw closed ? new CancellationException("the loader closed") : new ShardReadException(shard, e);
    }
  }

  /**
   * Opens a shard's stream, waiting while the loader holds every get its server allows; a loader
   * closing meanwhile interrupts the wait.
   */
  private TableReader open(Shard shard) {
    Thread me = Thread.currentThread();
    synchronized (opening) {
      if (closed) {
        throw new CancellationException("the loader closed");
      }
      opening.add(me);
    }
    try {
      streamsOpened.incrementAndGet();
      return client(shard.location()).getStream(shard.ticket(), streamWait);
    } finally {
      synchronized (opening) {
        opening.remove(me);
        if (closed) {
          Thread.interrupted(); // close's interrupt, if it came after the stream opened: it is read to its end
        }
      }
    }
  }

  private SluiceFlightClient client(Location location) {
    return clients.computeIfAbsent(location.getUri().toString(),
        u -> SluiceFlightClient.connect(allocator, location, config));
  }

  /**
   * Stops the readers (shards not started are skipped, a stream in progress is read to its end;
   * one still blocked after {@value #STOP_SECONDS} s is cancelled by closing its client), frees
   * the shards read ahead and closes the clients.
   *
   * @throws IllegalStateException if a reader did not stop even then
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    readers.shutdown();
    synchronized (opening) {
      opening.forEach(Thread::interrupt);
    }
    boolean stopped;
    try {
      stopped = readers.awaitTermination(STOP_SECONDS, TimeUnit.SECONDS);
      if (!stopped) {
        clients.values().forEach(SluiceFlightClient::close);
        stopped = readers.awaitTermination(STOP_SECONDS, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      stopped = false;
    }
    for (Pending p : ahead) {
      if (p.shard() != null && p.shard().isDone()) {
        try {
          p.shard().get().close();
        } catch (ExecutionException | CancellationException | InterruptedException e) {
          // nothing was delivered: the reader freed what it had read
        }
      }
    }
    ahead.clear();
    clients.values().forEach(SluiceFlightClient::close);
    clients.clear();
    if (!stopped) {
      throw new IllegalStateException("the loader's readers did not stop within " + 2 * STOP_SECONDS + " s");
    }
  }

  /** Configures a loader. Not thread safe. */
  public static final class Builder {
    private final BufferAllocator allocator;
    private final List<Shard> shards;
    private TransportConfig config = TransportConfig.of(Map.of());
    private int rank;
    private int world = 1;
    private long seed;
    private int prefetch = 2;
    private Duration streamWait = Duration.ofMinutes(10);
    private int epochs = Integer.MAX_VALUE;
    private Cursor from = Cursor.START;

    private Builder(BufferAllocator allocator, List<Shard> shards) {
      this.allocator = allocator;
      this.shards = List.copyOf(shards);
      if (this.shards.isEmpty()) {
        throw new IllegalArgumentException("a loader needs at least one shard");
      }
    }

    /** This worker's rank among {@code world} workers reading the same shards with the same seed. */
    public Builder rank(int rank, int world) {
      EpochOrder.checkRank(rank, world);
      this.rank = rank;
      this.world = world;
      return this;
    }

    /** The seed the epochs' orders are drawn from (with the epoch number); default 0. */
    public Builder seed(long seed) {
      this.seed = seed;
      return this;
    }

    /** How many shards may be read ahead of the trainer (and how many are read at once); default 2. */
    public Builder prefetch(int depth) {
      if (depth < 1 || depth > 64) {
        throw new IllegalArgumentException("prefetch depth must be in [1, 64], got " + depth);
      }
      this.prefetch = depth;
      return this;
    }

    /**
     * How long a shard read ahead may wait to open its stream while the loader holds every
     * data-plane get its server lets one client hold (shards being read and, on shm, shards read
     * ahead or handed out and not yet closed); past it, reading that shard fails. Default 10
     * minutes.
     */
    public Builder streamWait(Duration wait) {
      if (wait.isNegative() || wait.isZero()) {
        throw new IllegalArgumentException("streamWait must be positive, got " + wait);
      }
      this.streamWait = wait;
      return this;
    }

    /** How many epochs (counted from epoch 0) the loader delivers; default unbounded. */
    public Builder epochs(int epochs) {
      if (epochs < 1) {
        throw new IllegalArgumentException("epochs must be >= 1, got " + epochs);
      }
      this.epochs = epochs;
      return this;
    }

    /** Where to start: a cursor a previous loader of the same rank, world, seed and shards reported. */
    public Builder resumeFrom(Cursor cursor) {
      this.from = java.util.Objects.requireNonNull(cursor, "cursor");
      return this;
    }

    /** Transport keys for the data plane ({@code sluice.transport.secret}, ...) and Flight keys. */
    public Builder config(TransportConfig config) {
      this.config = java.util.Objects.requireNonNull(config, "config");
      return this;
    }

    public FlightLoader build() {
      return new FlightLoader(this);
    }
  }
}
