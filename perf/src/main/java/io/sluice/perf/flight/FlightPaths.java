package io.sluice.perf.flight;

import io.sluice.flight.ParallelReader;
import io.sluice.flight.SluiceFlightClient;
import io.sluice.flight.TableReader;
import io.sluice.flight.TableWriter;
import io.sluice.flight.table.FlightTable;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.arrow.flight.AsyncPutListener;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * One whole-table move along each path the benchmark compares, timed from opening the stream to
 * its end (a get has touched every batch; a put has the server's word that it stored the table).
 * Gets run the same {@link BodySum} over every byte of every batch as it arrives, inside the timed
 * part, as a consumer would read it; the sums are checked after.
 * The stock paths are flight-core's own {@code FlightClient} calls, used as flight-core's {@code
 * TestPerf} uses them ({@code getStream} then {@code next} until the end); the data-plane paths
 * are {@link SluiceFlightClient}'s. Stateless.
 */
final class FlightPaths {
  private FlightPaths() {}

  /**
   * How long a move took, what the path reported, and what its consumers summed (one {@link
   * BodySum} value per stream; none for puts).
   */
  record Timed(long nanos, String dataPath, List<BodySum.Value> seen) {
    Timed(long nanos, String dataPath, BodySum.Value seen) {
      this(nanos, dataPath, List.of(seen));
    }

    double gigabytesPerSecond(long bytes) {
      return bytes / (nanos / 1e9) / 1e9;
    }
  }

  /** DoGet with a plain flight-core client: gRPC streaming, the stock path; one stream per thread when several. */
  static Timed plainGet(FlightClient flight, Ticket ticket, int streams) {
    long start = System.nanoTime();
    List<BodySum.Value> seen = parallel(streams, i -> {
      BodySum sum = new BodySum();
      try (FlightStream stream = flight.getStream(ticket)) {
        while (stream.next()) {
          sum.add(stream.getRoot());
        }
      } catch (RuntimeException e) {
        throw e;
      } catch (Exception e) {
        throw new IllegalStateException("closing the Flight stream failed: " + e, e);
      }
      return sum.value();
    });
    return new Timed(System.nanoTime() - start, "grpc", seen);
  }

  /** A get with our client, over its data plane when negotiated; several streams read in parallel. */
  static Timed sluiceGet(SluiceFlightClient client, Ticket ticket, int streams) {
    List<BodySum> sums = new ArrayList<>();
    for (int i = 0; i < streams; i++) {
      sums.add(new BodySum());
    }
    long start = System.nanoTime();
    ParallelReader.Result r = ParallelReader.read(client, java.util.Collections.nCopies(streams, ticket),
        (stream, batch) -> sums.get(stream).add(batch));
    long nanos = System.nanoTime() - start;
    return new Timed(nanos, r.dataPath(), sums.stream().map(BodySum::value).toList());
  }

  /** Runs {@code streams} copies of {@code one} (given its index), each on a thread of its own when more than one. */
  private static List<BodySum.Value> parallel(int streams, java.util.function.IntFunction<BodySum.Value> one) {
    if (streams == 1) {
      return List.of(one.apply(0));
    }
    List<CompletableFuture<BodySum.Value>> running = new ArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(streams);
    try {
      for (int i = 0; i < streams; i++) {
        int index = i;
        running.add(CompletableFuture.supplyAsync(() -> one.apply(index), pool));
      }
      return running.stream().map(CompletableFuture::join).toList();
    } finally {
      pool.shutdownNow();
    }
  }

  /** DoPut of {@code table} with a plain flight-core client, its batches loaded into one root without copies. */
  static Timed plainPut(FlightClient flight, BufferAllocator allocator, FlightTable table, String name) {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(table.schema(), allocator)) {
      VectorLoader loader = new VectorLoader(root);
      long start = System.nanoTime();
      FlightClient.ClientStreamListener put =
          flight.startPut(FlightDescriptor.path(name), root, new AsyncPutListener());
      for (ArrowRecordBatch batch : table.batches()) {
        loader.load(batch);
        put.putNext();
      }
      put.completed();
      put.getResult();
      return new Timed(System.nanoTime() - start, "grpc", List.of());
    }
  }

  /** A put of {@code table} with our client: the server READs the bodies when the data plane is negotiated. */
  static Timed sluicePut(SluiceFlightClient client, BufferAllocator allocator, FlightTable table, String name) {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(table.schema(), allocator);
         DictionaryProvider.MapDictionaryProvider none = new DictionaryProvider.MapDictionaryProvider()) {
      VectorLoader loader = new VectorLoader(root);
      long start = System.nanoTime();
      String path;
      try (TableWriter put = client.startPut(FlightDescriptor.path(name), root, none)) {
        path = put.dataPath();
        for (ArrowRecordBatch batch : table.batches()) {
          loader.load(batch);
          put.putNext();
        }
        put.completed();
      }
      return new Timed(System.nanoTime() - start, path, List.of());
    }
  }
}
