package io.sluice.flight;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Reads several streams of one server at once, the shape of a trainer that takes every endpoint of
 * a FlightInfo: each stream runs on a thread of its own (the caller's thread when there is one),
 * keeping its own READs in flight over the client's shared transport connection, and hands each
 * batch to the consumer on that thread. The first failure stops the other streams at their next
 * batch (closing them cancels their calls) and is thrown once all have stopped.
 *
 * <pre>{@code
 * ParallelReader.Result r = ParallelReader.read(client, ParallelReader.tickets(info),
 *     (stream, batch) -> train(batch));   // called on the stream's own thread
 * }</pre>
 *
 * <p>Stateless. The consumer is called from several threads at once (never twice at once for one
 * stream); a batch's vectors are valid only during the call, as with {@link TableReader#next()}.
 */
public final class ParallelReader {
  /** Takes one batch of stream {@code stream} (the index of its ticket). */
  @FunctionalInterface
  public interface BatchConsumer {
    void accept(int stream, VectorSchemaRoot batch);
  }

  /** Rows read per stream, in ticket order, and the path the streams took. */
  public record Result(List<Long> rows, String dataPath) {
    public Result {
      rows = List.copyOf(rows);
    }
  }

  private ParallelReader() {}

  /** The tickets of every endpoint of {@code info}, in order. */
  public static List<Ticket> tickets(FlightInfo info) {
    return info.getEndpoints().stream().map(FlightEndpoint::getTicket).toList();
  }

  /**
   * Reads every stream of {@code tickets} to its end.
   *
   * @throws FlightRuntimeException the first stream's failure (or an unchecked failure of the consumer)
   */
  public static Result read(SluiceFlightClient client, List<Ticket> tickets, BatchConsumer consumer) {
    if (tickets.isEmpty()) {
      return new Result(List.of(), client.dataPlane());
    }
    AtomicReference<RuntimeException> failure = new AtomicReference<>();
    long[] rows = new long[tickets.size()];
    String[] paths = new String[tickets.size()];
    List<Thread> threads = new ArrayList<>();
    for (int i = 1; i < tickets.size(); i++) {
      int index = i;
      Thread t = new Thread(() -> readOne(client, tickets, index, consumer, rows, paths, failure),
          "sluice-flight-reader-" + i);
      t.setDaemon(true);
      t.start();
      threads.add(t);
    }
    readOne(client, tickets, 0, consumer, rows, paths, failure);
    boolean interrupted = false;
    for (Thread t : threads) {
      while (t.isAlive()) {
        try {
          // Each stream's own waits have deadlines; this wait ends when they do.
          t.join();
        } catch (InterruptedException e) {
          interrupted = true;
          failure.compareAndSet(null, CallStatus.CANCELLED.withDescription("interrupted").toRuntimeException());
        }
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    if (failure.get() != null) {
      throw failure.get();
    }
    List<Long> perStream = new ArrayList<>();
    for (long r : rows) {
      perStream.add(r);
    }
    return new Result(perStream, paths[0]);
  }

  private static void readOne(SluiceFlightClient client, List<Ticket> tickets, int index, BatchConsumer consumer,
      long[] rows, String[] paths, AtomicReference<RuntimeException> failure) {
    try (TableReader reader = client.getStream(tickets.get(index))) {
      paths[index] = reader.dataPath();
      long n = 0;
      while (failure.get() == null && reader.next()) {
        consumer.accept(index, reader.getRoot());
        n += reader.getRoot().getRowCount();
      }
      rows[index] = n;
    } catch (RuntimeException e) {
      failure.compareAndSet(null, e);
    }
  }
}
