package io.sluice.examples.pipeline;

import io.sluice.flight.SluiceFlightServer;
import io.sluice.flight.table.FlightTable;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportException;
import io.sluice.transport.config.TransportKeys;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The one Flight server of an executor JVM and the feature batches its tasks produced. Every task
 * that publishes adds its partition's batches and republishes the table with all of this JVM's
 * batches, so one executor serves one table: one endpoint per executor.
 *
 * <p>The server starts with the first publishing task and lives until the JVM exits (a shutdown
 * hook closes it): the driver keeps the executors until the trainer has read. Thread safe (tasks of
 * one executor publish one at a time under the class lock).
 */
final class ExecutorFlight {
  private static ExecutorFlight instance; // guarded by ExecutorFlight.class

  private final BufferAllocator allocator = new RootAllocator();
  private final SluiceFlightServer server;
  private final Map<String, List<VectorSchemaRoot>> batches = new HashMap<>(); // guarded by ExecutorFlight.class

  private ExecutorFlight(String host, String secret) throws IOException {
    Map<String, String> keys = new HashMap<>();
    keys.put(TransportKeys.BIND_HOST.key(), host);
    if (!secret.isEmpty()) {
      keys.put(TransportKeys.SECRET.key(), secret);
    }
    this.server = SluiceFlightServer.builder(allocator, Location.forGrpcInsecure(host, 0))
        .config(TransportConfig.of(keys)).start();
  }

  /**
   * This JVM's server, started on first use at {@code host}; an empty {@code secret} starts it
   * without the data plane (plain Flight only).
   */
  static synchronized ExecutorFlight get(String host, String secret) throws IOException {
    if (instance == null) {
      ExecutorFlight started = new ExecutorFlight(host, secret);
      Runtime.getRuntime().addShutdownHook(new Thread(started::close, "sluice-flight-close"));
      instance = started;
    }
    return instance;
  }

  BufferAllocator allocator() {
    return allocator;
  }

  String location() {
    return server.location().getUri().toString();
  }

  /** The data plane's provider, or "grpc" when the server has none. */
  String dataPlane() {
    return server.dataPlane().orElse("grpc");
  }

  /**
   * Adds {@code roots} (taking ownership) to table {@code name} and republishes it with every
   * batch this JVM holds for it.
   */
  void add(String name, Schema schema, List<VectorSchemaRoot> roots) throws TransportException {
    synchronized (ExecutorFlight.class) {
      List<VectorSchemaRoot> all = batches.computeIfAbsent(name, n -> new ArrayList<>());
      all.addAll(roots);
      try (FlightTable.Builder table = FlightTable.builder(schema, new DictionaryProvider.MapDictionaryProvider())) {
        for (VectorSchemaRoot root : all) {
          table.add(root);
        }
        server.publish(name, table.build());
      }
    }
  }

  private void close() {
    server.close();
    synchronized (ExecutorFlight.class) {
      batches.values().forEach(l -> l.forEach(VectorSchemaRoot::close));
      batches.clear();
    }
    allocator.close();
  }
}
