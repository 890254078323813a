package io.sluice.perf.flight;

import io.sluice.flight.table.FlightTable;
import io.sluice.flight.table.TableRegistry;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.BackpressureStrategy;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * DoGet of the benchmark's tables the way a stock flight-core producer serves one: each batch is
 * loaded into a root without a copy and written with {@code putNext}, paced by flight-core's
 * {@link BackpressureStrategy.CallbackBackpressureStrategy}. The stream runs on a thread of its
 * own, so gRPC can deliver the on-ready callbacks that pace it while it waits. This is the gRPC
 * baseline's server: it moves the same table, from the same memory, as the data-plane servers.
 *
 * <p>Thread safe; one thread per stream. {@link #close()} stops the stream threads.
 */
final class StockTableProducer extends NoOpFlightProducer implements AutoCloseable {
  private static final long READY_TIMEOUT_MS = 60_000;

  private final BufferAllocator allocator;
  private final Map<String, BenchTable.Built> tables;
  private final ExecutorService streams = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "stock-flight-stream");
    t.setDaemon(true);
    return t;
  });

  /** Serves the tables of {@code tables} (which the caller fills and frees) by their tickets. */
  StockTableProducer(BufferAllocator allocator, Map<String, BenchTable.Built> tables) {
    this.allocator = allocator;
    this.tables = tables;
  }

  @Override
  public void getStream(CallContext context, Ticket ticket, ServerStreamListener listener) {
    BenchTable.Built built = TableRegistry.nameOf(ticket).map(tables::get).orElse(null);
    if (built == null) {
      listener.error(CallStatus.NOT_FOUND.withDescription("no such table").toRuntimeException());
      return;
    }
    FlightTable table = built.table();
    // gRPC takes the on-ready handler only during this call; the stream runs after it returns.
    BackpressureStrategy backpressure = new BackpressureStrategy.CallbackBackpressureStrategy();
    backpressure.register(listener);
    streams.execute(() -> serve(table, listener, backpressure));
  }

  private void serve(FlightTable table, ServerStreamListener listener, BackpressureStrategy backpressure) {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(table.schema(), allocator)) {
      listener.start(root);
      VectorLoader loader = new VectorLoader(root);
      for (ArrowRecordBatch batch : table.batches()) {
        BackpressureStrategy.WaitResult r = backpressure.waitForListener(READY_TIMEOUT_MS);
        if (r == BackpressureStrategy.WaitResult.CANCELLED) {
          return;
        }
        if (r != BackpressureStrategy.WaitResult.READY) {
          listener.error(CallStatus.TIMED_OUT.withDescription("the client took no data").toRuntimeException());
          return;
        }
        loader.load(batch);
        listener.putNext();
      }
      listener.completed();
    } catch (RuntimeException e) {
      listener.error(CallStatus.INTERNAL.withDescription("serving the table failed: " + e).withCause(e)
          .toRuntimeException());
    }
  }

  @Override
  public void close() {
    streams.shutdownNow();
    try {
      streams.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
