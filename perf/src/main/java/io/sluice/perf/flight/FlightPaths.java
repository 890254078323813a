package io.sluice.perf.flight;

import io.sluice.flight.SluiceFlightClient;
import io.sluice.flight.TableReader;
import io.sluice.flight.TableWriter;
import io.sluice.flight.table.FlightTable;
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
 * Gets fingerprint every batch as it arrives, inside the timed part, as a consumer would read it.
 * The stock paths are flight-core's own {@code FlightClient} calls, used as flight-core's {@code
 * TestPerf} uses them ({@code getStream} then {@code next} until the end); the data-plane paths
 * are {@link SluiceFlightClient}'s. Stateless.
 */
final class FlightPaths {
  private FlightPaths() {}

  /** How long a move took, and what the path reported. */
  record Timed(long nanos, String dataPath, Fingerprint.Value seen) {
    double gigabytesPerSecond(long bytes) {
      return bytes / (nanos / 1e9) / 1e9;
    }
  }

  /** DoGet with a plain flight-core client: gRPC streaming, the stock path. */
  static Timed plainGet(FlightClient flight, Ticket ticket) {
    Fingerprint seen = new Fingerprint();
    long start = System.nanoTime();
    try (FlightStream stream = flight.getStream(ticket)) {
      while (stream.next()) {
        seen.add(stream.getRoot());
      }
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException("closing the Flight stream failed: " + e, e);
    }
    return new Timed(System.nanoTime() - start, "grpc", seen.value());
  }

  /** A get with our client: over its data plane when negotiated. */
  static Timed sluiceGet(SluiceFlightClient client, Ticket ticket) {
    Fingerprint seen = new Fingerprint();
    long start = System.nanoTime();
    String path;
    try (TableReader reader = client.getStream(ticket)) {
      path = reader.dataPath();
      while (reader.next()) {
        seen.add(reader.getRoot());
      }
    }
    return new Timed(System.nanoTime() - start, path, seen.value());
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
      return new Timed(System.nanoTime() - start, "grpc", null);
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
      return new Timed(System.nanoTime() - start, path, null);
    }
  }
}
