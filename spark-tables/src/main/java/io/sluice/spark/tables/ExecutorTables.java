package io.sluice.spark.tables;

import io.sluice.flight.ServerAction;
import io.sluice.flight.SluiceFlightServer;
import io.sluice.flight.table.FlightTable;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportException;
import io.sluice.transport.config.TransportKeys;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The published tables one executor JVM holds: one Flight server (started by the first
 * publishing task, with the application's secret, over TLS when the configuration says so), the
 * shards by table, and the budget they must fit in ({@link TablesConf#MEMORY}). The driver drops a
 * table's shards through the server's {@value #DROP} action, and learns what it holds through
 * {@value #STATUS}; both are authenticated like every call to the server. The server closes with
 * the JVM. Thread safe.
 */
final class ExecutorTables {
  private static final Logger LOG = LoggerFactory.getLogger(ExecutorTables.class);
  /**
   * Body: {@link #dropRequest}: the table's key signed under the tables' secret, so that a reader
   * holding a call token for this server (which the catalog hands out) cannot drop tables; answer:
   * the bytes freed, in decimal.
   */
  static final String DROP = "sluice.tables.drop";
  private static final String DROP_LABEL = "sluice/tables drop";
  private static final int SIGNATURE_BYTES = 32;
  /** Answer: "tables shards bytes budget registeredRegions", in decimal. */
  static final String STATUS = "sluice.tables.status";

  private static ExecutorTables instance; // guarded by ExecutorTables.class

  /** Where tasks build batches before they are copied into registered memory: bounded by the budget too. */
  private final BufferAllocator allocator;
  private final SluiceFlightServer server;
  private final long budget;
  private final String budgetSource;
  private final String location;
  /** Table key to its flights here and their bytes; guarded by this. */
  private final Map<String, Map<String, Long>> tables = new HashMap<>();
  private long held; // guarded by this
  private final Map<String, Boolean> dropped = new ConcurrentHashMap<>();
  private final io.sluice.flight.CallToken.Key key;
  private final String secret;

  private ExecutorTables(SparkConf conf, String host, String secret, Map<String, String> keys) throws IOException {
    this.budget = TablesConf.memoryBudget(conf, Runtime.getRuntime().maxMemory());
    this.budgetSource = TablesConf.memoryBudgetSource(conf);
    this.allocator = new RootAllocator(budget);
    this.key = io.sluice.flight.CallToken.key(secret);
    this.secret = secret;
    Map<String, String> config = new HashMap<>();
    config.put(TransportKeys.BIND_HOST.key(), host);
    config.putAll(keys);
    config.put(TransportKeys.SECRET.key(), secret);
    Optional<String[]> tls = TablesConf.tls(conf);
    Location at = tls.isPresent() ? Location.forGrpcTls(host, 0) : Location.forGrpcInsecure(host, 0);
    SluiceFlightServer.Builder b = SluiceFlightServer.builder(allocator, at).config(TransportConfig.of(config))
        .action(DROP, ServerAction.of("Drops a published table's shards from this executor",
            body -> Long.toString(drop(verifiedKey(body))).getBytes(StandardCharsets.UTF_8)))
        .action(STATUS, ServerAction.of("What this executor holds of published tables",
            body -> status().getBytes(StandardCharsets.UTF_8)));
    tls.ifPresent(pem -> b.useTls(Path.of(pem[0]), Path.of(pem[1])));
    this.server = b.start();
    this.location = server.location().getUri().toString();
    LOG.info("Published tables of this executor served at {} (data plane {}), budget {} ({})", location,
        server.dataPlane().orElse("off"), TablesConf.size(budget), budgetSource);
  }

  /**
   * This JVM's tables, the server started on first use with {@code secret} and {@code keys}
   * (transport and Flight keys) at the executor's host.
   */
  static synchronized ExecutorTables get(String secret, Map<String, String> keys) throws IOException {
    if (instance != null && !instance.secret.equals(secret)) {
      // Another application in this JVM (local mode after a SparkContext stopped): its tables go.
      LOG.info("a new application publishes in this JVM; the previous one's tables are dropped");
      instance.close();
      instance = null;
    }
    if (instance == null) {
      SparkEnv env = SparkEnv.get();
      ExecutorTables started = new ExecutorTables(env.conf(), env.blockManager().blockManagerId().host(), secret, keys);
      Runtime.getRuntime().addShutdownHook(new Thread(started::close, "sluice-tables-close"));
      instance = started;
    }
    return instance;
  }

  BufferAllocator allocator() {
    return allocator;
  }

  /** A batch of table {@code name} that could not even be built within the budget. */
  TableException.TableMemoryException buildingOverBudget(String name, RuntimeException cause) {
    TableException.TableMemoryException e = new TableException.TableMemoryException("table '" + name + "': building a"
        + " record batch needs more memory than executor " + SparkEnv.get().executorId() + "'s budget for"
        + " published tables leaves, " + TablesConf.size(budget) + " (" + budgetSource + "). Raise "
        + TablesConf.MEMORY + ", or publish with a smaller batchRows");
    e.initCause(cause);
    return e;
  }

  String location() {
    return location;
  }

  String dataPlane() {
    return server.dataPlane().orElse("grpc");
  }

  /**
   * Publishes one shard of table {@code key} ({@code name} for messages) as flight {@code flight},
   * taking the caller's reference to {@code table}.
   *
   * @throws TableException.TableMemoryException if the shard does not fit in the budget (the table
   *     is released)
   */
  void publish(String key, String name, String flight, FlightTable table) throws TransportException {
    long bytes = table.bodyBytes();
    synchronized (this) {
      if (dropped.containsKey(key)) {
        table.close();
        throw new TableException("table '" + name + "' was unpublished while this task published it");
      }
      if (held + bytes > budget) {
        long mine = tables.getOrDefault(key, Map.of()).values().stream().mapToLong(Long::longValue).sum();
        table.close();
        throw new TableException.TableMemoryException("table '" + name + "' does not fit in executor "
            + SparkEnv.get().executorId() + "'s budget for published tables, " + TablesConf.size(budget) + " ("
            + budgetSource + "): it holds " + TablesConf.size(mine) + " of this table and " + TablesConf.size(held - mine)
            + " of others, and the next batch is " + TablesConf.size(bytes) + ". Raise " + TablesConf.MEMORY
            + ", spread the table over more executors, or unpublish tables no longer read");
      }
      held += bytes;
      tables.computeIfAbsent(key, k -> new HashMap<>()).put(flight, bytes);
    }
    try {
      server.publish(flight, table);
    } catch (TransportException | RuntimeException e) {
      forget(key, flight);
      throw e;
    }
  }

  /** Removes the flights of one task attempt that failed. */
  void removeAll(String key, List<String> flights) {
    for (String f : flights) {
      server.remove(f);
      forget(key, f);
    }
  }

  private synchronized void forget(String key, String flight) {
    Map<String, Long> t = tables.get(key);
    if (t != null) {
      Long b = t.remove(flight);
      if (b != null) {
        held -= b;
      }
      if (t.isEmpty()) {
        tables.remove(key);
      }
    }
  }

  /** The body of a {@link #DROP} action for table {@code tableKey}, signed with {@code key}. */
  static byte[] dropRequest(io.sluice.flight.CallToken.Key key, String tableKey) {
    byte[] name = tableKey.getBytes(StandardCharsets.UTF_8);
    byte[] signature = key.sign(DROP_LABEL, name);
    byte[] body = new byte[SIGNATURE_BYTES + name.length];
    System.arraycopy(signature, 0, body, 0, SIGNATURE_BYTES);
    System.arraycopy(name, 0, body, SIGNATURE_BYTES, name.length);
    return body;
  }

  private String verifiedKey(byte[] body) {
    if (body.length > SIGNATURE_BYTES) {
      byte[] name = java.util.Arrays.copyOfRange(body, SIGNATURE_BYTES, body.length);
      if (key.verifySignature(java.util.Arrays.copyOf(body, SIGNATURE_BYTES), DROP_LABEL, name)) {
        return new String(name, StandardCharsets.UTF_8);
      }
    }
    throw new SecurityException("a drop must be signed with the tables' secret; a call token is not enough");
  }

  /** Drops every shard of table {@code key}; later publishes of it fail. Returns the bytes freed. */
  long drop(String key) {
    List<String> flights;
    long bytes;
    synchronized (this) {
      dropped.put(key, Boolean.TRUE);
      Map<String, Long> t = tables.remove(key);
      if (t == null) {
        return 0;
      }
      flights = new ArrayList<>(t.keySet());
      bytes = t.values().stream().mapToLong(Long::longValue).sum();
      held -= bytes;
    }
    for (String f : flights) {
      server.remove(f);
    }
    return bytes;
  }

  synchronized String status() {
    int shards = tables.values().stream().mapToInt(Map::size).sum();
    return tables.size() + " " + shards + " " + held + " " + budget + " " + server.registeredRegions();
  }

  private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();

  private void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    server.close();
    try {
      allocator.close();
    } catch (IllegalStateException e) {
      LOG.debug("published tables' allocator closed with memory still referenced: {}", e.getMessage());
    }
  }
}
