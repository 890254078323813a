package io.sluice.flight.loader;

import io.sluice.flight.SluiceFlightServer;
import io.sluice.flight.table.FlightTable;
import io.sluice.transport.Eventually;
import io.sluice.transport.TransportConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Real Flight servers on loopback serving one table as shards "t.s00", "t.s01", ... spread
 * round-robin over the servers. Shard {@code k} has {@code batchesOf(k)} batches of rows whose
 * ids are {@code k * 1_000_000 + i}, so a reader's ids say which shard and row it saw.
 */
final class ShardedTables implements AutoCloseable {
  static final String SECRET = "loader-test-secret";
  static final Schema SCHEMA = new Schema(List.of(
      Field.notNullable("id", new ArrowType.Int(64, true)),
      Field.notNullable("x", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE))));

  final List<SluiceFlightServer> servers = new ArrayList<>();

  static TransportConfig config(boolean dataPlane) {
    Map<String, String> m = new HashMap<>(Map.of(
        "sluice.transport.provider", "tcp",
        "sluice.transport.bindHost", "127.0.0.1"));
    if (dataPlane) {
      m.put("sluice.transport.secret", SECRET);
      m.put("sluice.flight.unsignedFallback", "true"); // some tests read plain Flight servers too
    }
    return TransportConfig.of(m);
  }

  ShardedTables(BufferAllocator allocator, int servers, int shards, int rows, boolean dataPlane) throws Exception {
    try {
      for (int s = 0; s < servers; s++) {
        this.servers.add(SluiceFlightServer.builder(allocator, Location.forGrpcInsecure("127.0.0.1", 0))
            .config(config(dataPlane)).start());
      }
      for (int k = 0; k < shards; k++) {
        this.servers.get(k % servers).publish(name(k), shard(allocator, k, rows));
      }
    } catch (Exception | Error e) {
      close();
      throw e;
    }
  }

  static String name(int k) {
    return String.format("t.s%02d", k);
  }

  /** Every third shard has two batches; the others one. */
  static int batchesOf(int k) {
    return k % 3 == 2 ? 2 : 1;
  }

  private static FlightTable shard(BufferAllocator allocator, int k, int rows) {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator);
         FlightTable.Builder b = FlightTable.builder(SCHEMA, new DictionaryProvider.MapDictionaryProvider())) {
      for (int batch = 0; batch < batchesOf(k); batch++) {
        root.allocateNew();
        BigIntVector id = (BigIntVector) root.getVector(0);
        Float8Vector x = (Float8Vector) root.getVector(1);
        for (int i = 0; i < rows; i++) {
          long v = k * 1_000_000L + (long) batch * rows + i;
          id.setSafe(i, v);
          x.setSafe(i, v * 0.25);
        }
        root.setRowCount(rows);
        b.add(root);
      }
      return b.build();
    }
  }

  List<Location> locations() {
    return servers.stream().map(SluiceFlightServer::location).toList();
  }

  List<Shard> shards(BufferAllocator allocator) throws InterruptedException {
    return Shards.list(allocator, locations(), "t.", Duration.ofSeconds(30), config(true));
  }

  /** Waits until no server has a data-plane stream or grant left; the servers end them on their own threads. */
  void awaitNoGrants() {
    for (SluiceFlightServer s : servers) {
      Eventually.reaches("data-plane streams " + s.location() + " still serves", 0, s::activeDataPlaneStreams);
      Eventually.reaches("grants " + s.location() + " still holds for a closed reader", 0, s::activeGrants);
    }
  }

  @Override
  public void close() {
    servers.forEach(SluiceFlightServer::close);
  }
}
