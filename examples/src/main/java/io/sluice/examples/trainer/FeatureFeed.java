package io.sluice.examples.trainer;

import io.sluice.flight.SluiceFlightClient;
import io.sluice.flight.TableReader;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.util.TransferPair;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * One pass over the feature table: a reading thread per endpoint streams its executor's table and
 * hands each batch (its buffers transferred, not copied) to the one consuming thread through a
 * queue. The queue is unbounded: a pass holds at most the table, which the trainer reads whole
 * anyway, and the readers never wait for the trainer, so their arrival times measure the Flight
 * hop. A reader puts its stream's end in the queue only after closing the stream. Closing cancels
 * the readers still running and frees undelivered batches.
 *
 * <p>{@link #next} is for one consuming thread; the readers run on the given pool.
 */
final class FeatureFeed implements AutoCloseable {
  private sealed interface Item permits Batch, End, Failure {}

  private record Batch(VectorSchemaRoot root) implements Item {}

  private record End(String path) implements Item {}

  private record Failure(String endpoint, RuntimeException error) implements Item {}

  private final LinkedBlockingQueue<Item> queue = new LinkedBlockingQueue<>();
  private final List<Future<?>> readers = new ArrayList<>();
  private final Map<String, Integer> paths = new TreeMap<>();
  private final AtomicLong bytes = new AtomicLong();
  private final AtomicLong lastArrivalNanos = new AtomicLong();
  private final long startNanos = System.nanoTime();
  private final CountDownLatch finished;
  private int open;

  FeatureFeed(List<SluiceFlightClient> clients, Ticket ticket, BufferAllocator allocator, ExecutorService pool) {
    finished = new CountDownLatch(clients.size());
    for (SluiceFlightClient client : clients) {
      open++;
      readers.add(pool.submit(() -> read(client, ticket, allocator)));
    }
  }

  private void read(SluiceFlightClient client, Ticket ticket, BufferAllocator allocator) {
    try {
      String path;
      try (TableReader stream = client.getStream(ticket)) {
        path = read(stream, allocator);
      }
      // Only once the stream is closed: a consumer that has seen every end may close the clients.
      queue.add(new End(path));
    } catch (RuntimeException e) {
      queue.add(new Failure(client.flight().toString(), e));
    } finally {
      finished.countDown();
    }
  }

  /** Moves every batch of one stream into the queue; returns the stream's data path. */
  private String read(TableReader stream, BufferAllocator allocator) {
    while (stream.next()) {
      VectorSchemaRoot root = stream.getRoot();
      List<FieldVector> moved = new ArrayList<>();
      long size = 0;
      for (FieldVector v : root.getFieldVectors()) {
        size += v.getBufferSize();
        TransferPair t = v.getTransferPair(allocator);
        t.transfer();
        moved.add((FieldVector) t.getTo());
      }
      bytes.addAndGet(size);
      queue.add(new Batch(new VectorSchemaRoot(root.getSchema().getFields(), moved, root.getRowCount())));
      lastArrivalNanos.set(System.nanoTime());
    }
    return stream.dataPath();
  }

  /**
   * The next batch (the caller closes it), or empty when every endpoint has ended; waits at most
   * until {@code deadlineNanos}.
   */
  Optional<VectorSchemaRoot> next(long deadlineNanos) throws InterruptedException {
    while (open > 0) {
      Item item = queue.poll(deadlineNanos - System.nanoTime(), TimeUnit.NANOSECONDS);
      if (item == null) {
        throw new IllegalStateException("no batch from the Flight endpoints before the deadline");
      }
      if (item instanceof Batch b) {
        return Optional.of(b.root());
      } else if (item instanceof End e) {
        open--;
        paths.merge(e.path(), 1, Integer::sum);
      } else if (item instanceof Failure f) {
        throw new IllegalStateException("reading the feature table from " + f.endpoint() + " failed", f.error());
      }
    }
    return Optional.empty();
  }

  /** Which data paths the ended streams took, with how many streams each. */
  Map<String, Integer> paths() {
    return paths;
  }

  long bytes() {
    return bytes.get();
  }

  /** Nanoseconds from the start of the pass to the last batch's arrival. */
  long readNanos() {
    return Math.max(1, lastArrivalNanos.get() - startNanos);
  }

  @Override
  public void close() {
    if (open > 0) {
      // The consumer stopped early: interrupt the readers still running (every ended reader has
      // closed its stream already, and interrupting a close could leave its buffers behind).
      readers.forEach(f -> f.cancel(true));
    }
    try {
      if (!finished.await(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("Flight readers did not stop within 30 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    Item item;
    while ((item = queue.poll()) != null) {
      if (item instanceof Batch b) {
        b.root().close();
      }
    }
  }
}
