package io.sluice.examples.pipeline;

import io.sluice.flight.SluiceFlightServer;
import io.sluice.flight.table.FlightTable;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportException;
import io.sluice.transport.config.TransportKeys;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The one Flight server of an executor JVM. Tasks publish each batch of their partition as a
 * table of its own (a shard of the feature table), so a trainer's loader can shuffle and shard
 * them; every shard of this JVM is served from this server: one location per executor.
 *
 * <p>The server starts with the first publishing task and lives until the JVM exits (a shutdown
 * hook closes it): the driver keeps the executors until the trainer has read. Thread safe.
 */
final class ExecutorFlight {
  private static ExecutorFlight instance; // guarded by ExecutorFlight.class

  private final BufferAllocator allocator = new RootAllocator();
  private final SluiceFlightServer server;

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
   * Publishes the rows {@code root} holds as table {@code name}. The table takes references to
   * the buffers (and, with the data plane, copies them once into registered memory); the caller
   * still closes {@code root}.
   */
  void publish(String name, Schema schema, VectorSchemaRoot root) throws TransportException {
    try (FlightTable.Builder table = FlightTable.builder(schema, new DictionaryProvider.MapDictionaryProvider())) {
      table.add(root);
      server.publish(name, table.build());
    }
  }

  private void close() {
    server.close();
    allocator.close();
  }
}
