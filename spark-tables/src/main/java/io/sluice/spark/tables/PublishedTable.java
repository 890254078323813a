package io.sluice.spark.tables;

import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.types.StructType;

/**
 * A published table as the driver's catalog holds it now: where any Flight client finds it
 * ({@link #uri()}, the catalog, and {@link #name()}), its schema, size and shards. A snapshot:
 * ask {@link SluiceTables#table} again for news (lost shards, for one). Holds no secret.
 *
 * @param name the table's name in the catalog (a Flight descriptor path of one element)
 * @param uri the catalog's Flight location ({@code grpc+tcp://driver:port} or {@code grpc+tls://...})
 * @param schema the Arrow schema every batch has
 * @param sparkSchema the DataFrame's schema
 * @param rows all rows
 * @param bytes the bytes of all batch bodies
 * @param shards every shard, by partition and batch
 * @param lost shards lost with their executors (flight name to why), empty while all are served
 * @param dataPlane what the executors' servers offer beside gRPC: "tcp", "shm", "verbs", "grpc" (none), or
 *     "mixed" when the executors differ
 * @param expires when the table is unpublished by its time-to-live, if it has one
 */
public record PublishedTable(String name, String uri, Schema schema, StructType sparkSchema, long rows, long bytes,
    List<TableShard> shards, Map<String, String> lost, String dataPlane, Optional<Instant> expires) {
  public PublishedTable {
    shards = List.copyOf(shards);
    lost = java.util.Collections.unmodifiableMap(new java.util.TreeMap<>(lost));
  }

  /** The executors' Flight locations that serve the table, in shard order. */
  public List<String> endpoints() {
    LinkedHashSet<String> l = new LinkedHashSet<>();
    for (TableShard s : shards) {
      l.add(s.location());
    }
    return List.copyOf(l);
  }

  @Override
  public String toString() {
    return "PublishedTable[" + name + " at " + uri + ": " + rows + " rows, " + bytes + " bytes, " + shards.size()
        + " shards on " + endpoints().size() + " executors" + (lost.isEmpty() ? "" : ", " + lost.size() + " lost")
        + expires.map(e -> ", expires " + e).orElse("") + "]";
  }
}
