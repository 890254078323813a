package io.sluice.spark.tables;

import io.sluice.flight.CallToken;
import io.sluice.flight.FlightOption;
import io.sluice.flight.SluiceFlightClient;
import io.sluice.flight.SluiceFlightServer;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.config.TransportKeys;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.CallOptions;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.Criteria;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightServer;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.flight.Result;
import org.apache.arrow.flight.auth2.Auth2Constants;
import org.apache.arrow.flight.auth2.AuthUtilities;
import org.apache.arrow.flight.auth2.CallHeaderAuthenticator;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.TaskContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerApplicationEnd;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The driver's catalog of published tables, one per SparkContext: the tables by name, a Flight
 * server that lists them (ListFlights, GetFlightInfo with one endpoint per shard on the executor
 * holding it, and in each endpoint's app metadata a call token for that executor alone, with an
 * expiry), their lifetimes (unpublish, time-to-live, the application's end) and what executor
 * losses took from them. Every call to the server presents a call token of the tables' secret for
 * the catalog. Thread safe.
 */
final class DriverCatalog implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DriverCatalog.class);
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}");
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);
  private static final SecureRandom RANDOM = new SecureRandom();

  private static DriverCatalog instance; // guarded by DriverCatalog.class

  private final SparkContext sc;
  private final SparkConf conf;
  private final String secret;
  private final boolean shipSecret;
  private final CallToken.Key key;
  private final Duration tokenValidity;
  private final Duration maxValidity;
  private final Map<String, String> transportKeys;
  private final Optional<String[]> tls;
  private final BufferAllocator allocator = new RootAllocator();
  private final FlightServer server;
  private final Location location;
  private final Map<String, Entry> tables = new ConcurrentHashMap<>();
  /** Every executor server that has held a table: location to executor id. */
  private final Map<String, String> servers = new ConcurrentHashMap<>();
  private final AtomicLong generations = new AtomicLong();
  private final ScheduledExecutorService timers;
  private volatile boolean closed;

  /** A table's state: its shards by flight name, what was lost, how to publish lost partitions again. */
  private static final class Entry {
    final String name;
    final String key;
    final int rddId;
    final StructType sparkSchema;
    final org.apache.arrow.vector.types.pojo.Schema schema;
    final TableOptions options;
    final RDD<InternalRow> rows;
    final String timeZone;
    final Map<String, TableShard> shards = new TreeMap<>(); // guarded by this
    final Map<String, String> lost = new TreeMap<>(); // guarded by this
    String dataPlane = "grpc";
    int rounds; // guarded by this
    Optional<Instant> expires = Optional.empty();
    ScheduledFuture<?> ttl;

    Entry(String name, String key, int rddId, StructType sparkSchema, org.apache.arrow.vector.types.pojo.Schema schema,
        TableOptions options, RDD<InternalRow> rows, String timeZone) {
      this.name = name;
      this.key = key;
      this.rddId = rddId;
      this.sparkSchema = sparkSchema;
      this.schema = schema;
      this.options = options;
      this.rows = rows;
      this.timeZone = timeZone;
    }

    synchronized PublishedTable snapshot(String uri) {
      List<TableShard> live = new ArrayList<>(shards.values());
      live.sort(Comparator.comparingInt(TableShard::partition).thenComparingInt(TableShard::batch));
      long rows = live.stream().mapToLong(TableShard::rows).sum();
      long bytes = live.stream().mapToLong(TableShard::bytes).sum();
      return new PublishedTable(name, uri, schema, sparkSchema, rows, bytes, live, lost, dataPlane, expires);
    }
  }

  private DriverCatalog(SparkContext sc) throws IOException {
    this.sc = sc;
    this.conf = sc.getConf();
    boolean authenticate = conf.getBoolean("spark.authenticate", false);
    if (authenticate) {
      this.secret = TablesSecret.derive(sc.env().securityManager().getSecretKey(), sc.applicationId());
      this.shipSecret = false;
    } else {
      byte[] made = new byte[32];
      RANDOM.nextBytes(made);
      this.secret = HexFormat.of().formatHex(made);
      this.shipSecret = true;
    }
    this.transportKeys = TablesConf.transportKeys(conf);
    TablesConf.refuseSecretKey(transportKeys);
    this.tokenValidity = TablesConf.tokenValidity(conf);
    this.tls = TablesConf.tls(conf);
    TransportConfig checked = TransportConfig.of(clientKeys());
    TransportKeys.SECRET.from(checked);
    this.key = CallToken.key(secret);
    String host = conf.get("spark.driver.host", "localhost");
    String bind = conf.get("spark.driver.bindAddress", host);
    int port = TablesConf.catalogPort(conf);
    Location bindAt = tls.isPresent() ? Location.forGrpcTls(bind, port) : Location.forGrpcInsecure(bind, port);
    this.maxValidity = Duration.ofMillis(FlightOption.TOKEN_MAX_VALIDITY_MS.from(checked));
    Set<String> audiences = ConcurrentHashMap.newKeySet();
    FlightServer.Builder b = FlightServer.builder(allocator, bindAt, new Producer())
        .headerAuthenticator(new Authenticator(audiences, maxValidity));
    if (tls.isPresent()) {
      b.useTls(new java.io.File(tls.get()[0]), new java.io.File(tls.get()[1]));
    }
    this.server = b.build().start();
    this.location = tls.isPresent() ? Location.forGrpcTls(host, server.getPort())
        : Location.forGrpcInsecure(host, server.getPort());
    audiences.add(CallToken.audienceOf(location));
    this.timers = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "sluice-tables-catalog");
      t.setDaemon(true);
      return t;
    });
    sc.addSparkListener(new Listener());
    if (tls.isEmpty() && conf.getBoolean("spark.network.crypto.enabled", false)) {
      LOG.warn("Spark encrypts its own traffic (spark.network.crypto.enabled) but published tables are served"
          + " without TLS: their batches and call tokens cross the network in the clear. Set {}=true with {} and {}",
          TablesConf.TLS, TablesConf.TLS_CERT_CHAIN, TablesConf.TLS_PRIVATE_KEY);
    }
    LOG.info("Published tables' catalog at {} (secret: {})", location.getUri(),
        authenticate ? "Spark's (spark.authenticate)" : "made for this application");
  }

  /** The catalog of {@code sc}, started on first use; a new one once the old context stopped. */
  static synchronized DriverCatalog of(SparkContext sc) {
    if (instance == null || instance.sc != sc || instance.closed) {
      if (instance != null) {
        instance.close();
      }
      if (sc.isStopped()) {
        throw new TableException("the SparkContext is stopped");
      }
      try {
        instance = new DriverCatalog(sc);
      } catch (IOException e) {
        throw new TableException("the catalog of published tables could not start: " + e.getMessage(), e);
      }
    }
    return instance;
  }

  /** The catalog, if one is running for {@code sc}. */
  static synchronized Optional<DriverCatalog> existing(SparkContext sc) {
    return instance != null && instance.sc == sc && !instance.closed ? Optional.of(instance) : Optional.empty();
  }

  String uri() {
    return location.getUri().toString();
  }

  String secret() {
    return secret;
  }

  /** A call token for the catalog itself, valid for {@code validity}. */
  String token(Duration validity) {
    if (validity.isNegative() || validity.isZero() || validity.compareTo(maxValidity) > 0) {
      throw new IllegalArgumentException("a catalog token is valid for more than 0 and at most " + maxValidity
          + " (sluice.flight.tokenMaxValidityMs), not " + validity);
    }
    return key.mint(CallToken.audienceOf(location), Instant.now().plus(validity));
  }

  /** A key no other table of any application has: the name, a counter and 64 random bits. */
  private String newKey(String name) {
    byte[] nonce = new byte[8];
    RANDOM.nextBytes(nonce);
    return name + "@" + generations.incrementAndGet() + "-" + HexFormat.of().formatHex(nonce);
  }

  static void checkName(String name) {
    if (name == null || !NAME.matcher(name).matches()) {
      throw new IllegalArgumentException("a table name is 1 to 128 letters, digits, '_', '.' or '-', not starting"
          + " with '.' or '-'; got '" + name + "'");
    }
  }

  /** Publishes {@code df} as {@code name}; returns it once every partition is served. */
  PublishedTable publish(Dataset<Row> df, String name, TableOptions options) {
    checkName(name);
    if (tables.containsKey(name)) {
      if (!options.overwrite()) {
        throw new TableException("a table named '" + name + "' is published already: unpublish it first, or"
            + " publish with mode=overwrite");
      }
      unpublish(name);
    }
    RDD<InternalRow> rows = SparkShim.internalRows(df);
    Entry e = newEntry(name, df.schema(), options, rows);
    if (tables.putIfAbsent(name, e) != null) {
      throw new TableException("a table named '" + name + "' was published meanwhile");
    }
    boolean ok = false;
    try {
      List<Object> all = new ArrayList<>();
      for (int p = 0; p < rows.getNumPartitions(); p++) {
        all.add(p);
      }
      String description = sc.getLocalProperty("spark.job.description");
      sc.setJobDescription("publish table " + name);
      try {
        runRound(e, all);
      } finally {
        sc.setJobDescription(description);
      }
      options.ttl().ifPresent(ttl -> expireAfter(e, ttl));
      ok = true;
      PublishedTable t = e.snapshot(uri());
      LOG.info("published {}", t);
      return t;
    } catch (Exception ex) { // SparkException is checked, though Scala does not declare it
      throw failure(name, ex);
    } finally {
      if (!ok) {
        unpublish(name, e);
      }
    }
  }

  /**
   * A new table's entry: its key, a reserved RDD id for its marker blocks, and its Arrow schema
   * (a column Arrow cannot hold fails here, before any task).
   */
  private Entry newEntry(String name, StructType sparkSchema, TableOptions options, RDD<InternalRow> rows) {
    String timeZone = SQLConf.get().sessionLocalTimeZone();
    return new Entry(name, newKey(name), sc.newRddId(), sparkSchema, ArrowSchemas.of(name, sparkSchema, timeZone),
        options, rows, timeZone);
  }

  /** What the tasks of {@code e}'s next round of publishing take with them. */
  private TablesConf.TaskSettings nextRound(Entry e) {
    int round;
    synchronized (e) {
      round = e.rounds++;
    }
    return new TablesConf.TaskSettings(e.key, round, e.name, e.rddId, e.options.batchRows(), transportKeys,
        shipSecret ? secret : null);
  }

  /** Records what publishing tasks published: their shards, and their executors' servers. */
  private void record(Entry e, Iterable<ShardWriter.Result> results) {
    synchronized (e) {
      for (ShardWriter.Result r : results) {
        servers.put(r.location(), r.executorId());
        e.dataPlane = e.shards.isEmpty() || e.dataPlane.equals(r.dataPlane()) ? r.dataPlane() : "mixed";
        for (TableShard s : r.shards()) {
          e.shards.put(s.flight(), s);
        }
      }
    }
  }

  /** Runs the publishing tasks of {@code partitions} and records their shards. */
  private void runRound(Entry e, List<Object> partitions) {
    PublishTask task = new PublishTask(nextRound(e), e.sparkSchema, e.timeZone);
    Object results = sc.<InternalRow, ShardWriter.Result>runJob(e.rows, task,
        scala.collection.JavaConverters.asScalaBufferConverter(partitions).asScala().toSeq(),
        scala.reflect.ClassTag$.MODULE$.<ShardWriter.Result>apply(ShardWriter.Result.class));
    record(e, List.of((ShardWriter.Result[]) results));
  }

  /** A table the data source writes: tasks publish its shards, the driver commits or aborts it. */
  static final class Pending {
    private final Entry entry;
    final TablesConf.TaskSettings settings;

    private Pending(Entry entry, TablesConf.TaskSettings settings) {
      this.entry = entry;
      this.settings = settings;
    }

    String name() {
      return entry.name;
    }

    StructType sparkSchema() {
      return entry.sparkSchema;
    }

    String timeZone() {
      return entry.timeZone;
    }
  }

  /** Starts a data source write of {@code name}; nothing is listed until {@link #commit}. */
  Pending begin(String name, StructType sparkSchema, TableOptions options) {
    checkName(name);
    if (options.republishLost()) {
      throw new IllegalArgumentException("republishLost publishes lost partitions again from the DataFrame's"
          + " lineage, which a data source write does not have: use SluiceTables.publish (sluice.spark.publish)");
    }
    Entry e = newEntry(name, sparkSchema, options, null);
    return new Pending(e, nextRound(e));
  }

  /**
   * Lists a written table under its name, replacing a table of that name when {@code replace}.
   *
   * @throws TableException if a table has the name and {@code replace} is false (the write is dropped)
   */
  PublishedTable commit(Pending p, List<ShardWriter.Result> results, boolean replace) {
    Entry e = p.entry;
    record(e, results);
    if (replace) {
      unpublish(e.name);
    }
    if (tables.putIfAbsent(e.name, e) != null) {
      abort(p);
      throw new TableException("a table named '" + e.name + "' is published already: unpublish it first, or"
          + " write with mode overwrite");
    }
    e.options.ttl().ifPresent(ttl -> expireAfter(e, ttl));
    PublishedTable t = e.snapshot(uri());
    LOG.info("published {} (data source write)", t);
    return t;
  }

  /** Drops what a failed data source write published. */
  void abort(Pending p) {
    unpublish(p.entry.name, p.entry);
  }

  private void expireAfter(Entry e, Duration ttl) {
    e.expires = Optional.of(Instant.now().plus(ttl));
    e.ttl = timers.schedule(() -> {
      LOG.info("table '{}' reached its time-to-live ({}); unpublishing it", e.name, ttl);
      unpublish(e.name, e);
    }, ttl.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** The settings readers on executors use: the secret where Spark does not hand it to them, the transport keys. */
  ShardReaderFactory readerFactory() {
    return new ShardReaderFactory(transportKeys, shipSecret ? secret : null,
        tls.map(pem -> pem[0]).orElse(null));
  }

  /**
   * The job's failure as the table's: a budget or type error keeps its class and text. Spark hands
   * the task's exception to the driver as the failure's cause when it can serialize it; where it
   * cannot, only the text arrives, and the budget error is found by its class name there.
   */
  private static RuntimeException failure(String name, Exception ex) {
    for (Throwable t = ex; t != null; t = t.getCause()) {
      if (t instanceof TableException te) {
        return te;
      }
      String m = String.valueOf(t.getMessage());
      if (m.contains("TableMemoryException")) {
        return new TableException.TableMemoryException(m.substring(m.indexOf("TableMemoryException")
            + "TableMemoryException".length()).replaceFirst("^: ", "").split("\n")[0]);
      }
    }
    return new TableException("publishing table '" + name + "' failed: " + ex.getMessage(), ex);
  }

  boolean unpublish(String name) {
    Entry e = tables.get(name);
    return e != null && unpublish(name, e);
  }

  /** Drops {@code e} from the catalog and every executor; false when it was gone already. */
  private boolean unpublish(String name, Entry e) {
    boolean removed = tables.remove(name, e);
    if (e.ttl != null) {
      e.ttl.cancel(false);
    }
    for (String at : new ArrayList<>(servers.keySet())) {
      try {
        action(at, ExecutorTables.DROP, ExecutorTables.dropRequest(key, e.key));
      } catch (RuntimeException ex) {
        LOG.warn("table '{}': executor {} at {} did not confirm the drop ({}); its memory goes with it if it is gone",
            name, servers.get(at), at, ex.getMessage());
      }
    }
    try {
      // As for an unpersisted RDD: the blocks go, and dynamic allocation may idle the executors out.
      sc.unpersistRDD(e.rddId, false);
    } catch (RuntimeException ex) {
      LOG.debug("table '{}': marker blocks not removed: {}", name, ex.toString());
    }
    return removed;
  }

  Optional<PublishedTable> table(String name) {
    return Optional.ofNullable(tables.get(name)).map(e -> e.snapshot(uri()));
  }

  List<PublishedTable> list() {
    List<PublishedTable> l = new ArrayList<>();
    for (String n : new TreeSet<>(tables.keySet())) {
      table(n).ifPresent(l::add);
    }
    return l;
  }

  /** What each executor server holds now; an executor that does not answer is left out (and logged). */
  List<ExecutorMemory> memory() {
    List<ExecutorMemory> l = new ArrayList<>();
    for (Map.Entry<String, String> s : new TreeMap<>(servers).entrySet()) {
      String[] f;
      try {
        f = new String(action(s.getKey(), ExecutorTables.STATUS, new byte[0]), StandardCharsets.UTF_8).split(" ");
      } catch (RuntimeException ex) {
        LOG.warn("executor {} at {} did not say what it holds: {}", s.getValue(), s.getKey(), ex.getMessage());
        continue;
      }
      l.add(new ExecutorMemory(s.getValue(), s.getKey(), Integer.parseInt(f[0]), Integer.parseInt(f[1]),
          Long.parseLong(f[2]), Long.parseLong(f[3]), Integer.parseInt(f[4])));
    }
    return l;
  }

  private Map<String, String> clientKeys() {
    Map<String, String> k = new LinkedHashMap<>(transportKeys);
    k.put(TransportKeys.SECRET.key(), secret);
    k.put(FlightOption.DATA_PLANE.key(), "false");
    tls.ifPresent(pem -> k.putIfAbsent(FlightOption.TLS_TRUSTED_CERTIFICATES.key(), pem[0]));
    return k;
  }

  private byte[] action(String at, String type, byte[] body) {
    try (SluiceFlightClient c = SluiceFlightClient.connect(allocator, new Location(at),
        TransportConfig.of(clientKeys()))) {
      Iterator<Result> r = c.flight().doAction(new Action(type, body), CallOptions.timeout(CALL_TIMEOUT.toMillis(),
          TimeUnit.MILLISECONDS));
      if (!r.hasNext()) {
        throw new TableException(type + " at " + at + " answered nothing");
      }
      byte[] answer = r.next().getBody();
      while (r.hasNext()) {
        r.next();
      }
      return answer;
    } catch (java.net.URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Marks the shards an executor took with it as lost; publishes them again where the table asks for it. */
  private void executorRemoved(String executorId, String reason) {
    servers.values().removeIf(executorId::equals);
    for (Entry e : tables.values()) {
      List<Object> partitions = new ArrayList<>();
      synchronized (e) {
        for (Iterator<TableShard> it = e.shards.values().iterator(); it.hasNext(); ) {
          TableShard s = it.next();
          if (s.executorId().equals(executorId)) {
            it.remove();
            e.lost.put(s.flight(), "executor " + executorId + " removed: " + reason);
            if (!partitions.contains(s.partition())) {
              partitions.add(s.partition());
            }
          }
        }
      }
      if (partitions.isEmpty()) {
        continue;
      }
      LOG.warn("table '{}' lost the shards of partitions {} with executor {} ({})", e.name, partitions, executorId,
          reason);
      if (e.options.republishLost()) {
        timers.execute(() -> {
          try {
            runRound(e, partitions);
            synchronized (e) {
              e.lost.clear();
            }
            LOG.info("table '{}': partitions {} published again", e.name, partitions);
          } catch (RuntimeException ex) {
            LOG.warn("table '{}': publishing partitions {} again failed: {}", e.name, partitions, ex.toString());
          }
        });
      }
    }
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    timers.shutdownNow();
    // Executors in this JVM (local mode) outlive the context: drop what they hold of every table.
    for (Entry e : new ArrayList<>(tables.values())) {
      unpublish(e.name, e);
    }
    tables.clear();
    try {
      server.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      allocator.close();
    } catch (IllegalStateException e) {
      LOG.debug("catalog allocator: {}", e.getMessage());
    }
  }

  private final class Listener extends SparkListener {
    @Override
    public void onExecutorRemoved(SparkListenerExecutorRemoved event) {
      executorRemoved(event.executorId(), event.reason());
    }

    @Override
    public void onApplicationEnd(SparkListenerApplicationEnd event) {
      close();
    }
  }

  /** Bearer tokens of the tables' secret for the catalog's location, and nothing else. */
  private final class Authenticator implements CallHeaderAuthenticator {
    private final Set<String> audiences;
    private final Duration maxValidity;

    Authenticator(Set<String> audiences, Duration maxValidity) {
      this.audiences = audiences;
      this.maxValidity = maxValidity;
    }

    @Override
    public AuthResult authenticate(CallHeaders headers) {
      String presented = AuthUtilities.getValueFromAuthHeader(headers, Auth2Constants.BEARER_PREFIX);
      if (presented == null) {
        throw CallStatus.UNAUTHENTICATED.withDescription("the catalog of published tables authenticates every call:"
            + " send 'Authorization: Bearer <token>' (a call token of the tables' secret for " + uri() + ")")
            .toRuntimeException();
      }
      try {
        CallToken.Claims claims = key.verify(presented, audiences, Clock.systemUTC());
        if (claims.expires().isAfter(Instant.now().plus(maxValidity))) {
          throw CallStatus.UNAUTHENTICATED.withDescription("the token expires further ahead than " + maxValidity)
              .toRuntimeException();
        }
        String audience = claims.audience();
        return () -> audience;
      } catch (CallToken.InvalidTokenException e) {
        throw CallStatus.UNAUTHENTICATED.withDescription("the bearer token is refused: " + e.getMessage())
            .toRuntimeException();
      }
    }
  }

  /** ListFlights and GetFlightInfo over the tables. */
  private final class Producer extends NoOpFlightProducer {
    @Override
    public void listFlights(CallContext context, Criteria criteria, StreamListener<FlightInfo> listener) {
      for (String n : new TreeSet<>(tables.keySet())) {
        Entry e = tables.get(n);
        if (e != null) {
          listener.onNext(info(e, false));
        }
      }
      listener.onCompleted();
    }

    @Override
    public FlightInfo getFlightInfo(CallContext context, FlightDescriptor descriptor) {
      if (descriptor.isCommand() || descriptor.getPath().size() != 1) {
        throw CallStatus.INVALID_ARGUMENT.withDescription("the catalog names tables by a path of one element")
            .toRuntimeException();
      }
      String name = descriptor.getPath().get(0);
      if (!NAME.matcher(name).matches()) {
        throw CallStatus.INVALID_ARGUMENT.withDescription("not a table name (1 to 128 letters, digits, '_', '.'"
            + " or '-')").toRuntimeException();
      }
      Entry e = tables.get(name);
      if (e == null) {
        throw CallStatus.NOT_FOUND.withDescription("no table named '" + name + "' is published; published: "
            + new TreeSet<>(tables.keySet())).toRuntimeException();
      }
      return info(e, true);
    }

    private FlightInfo info(Entry e, boolean whole) {
      PublishedTable t = e.snapshot(uri());
      if (whole && !t.lost().isEmpty()) {
        throw CallStatus.UNAVAILABLE.withDescription(lostMessage(t, e.options.republishLost()))
            .toRuntimeException();
      }
      Instant expires = Instant.now().plus(tokenValidity);
      Map<String, byte[]> tokens = new LinkedHashMap<>();
      List<FlightEndpoint> endpoints = new ArrayList<>();
      for (TableShard s : t.shards()) {
        byte[] token = tokens.computeIfAbsent(s.location(),
            l -> key.mint(l, expires).getBytes(StandardCharsets.UTF_8));
        try {
          endpoints.add(FlightEndpoint.builder(SluiceFlightServer.ticket(s.flight()), new Location(s.location()))
              .setAppMetadata(token).build());
        } catch (java.net.URISyntaxException ex) {
          throw new IllegalStateException(ex);
        }
      }
      return new FlightInfo(t.schema(), FlightDescriptor.path(t.name()), endpoints, t.bytes(), t.rows());
    }
  }

  static String lostMessage(PublishedTable t, boolean republishing) {
    List<String> names = new ArrayList<>(t.lost().keySet());
    String listed = names.size() <= 8 ? String.join(", ", names)
        : String.join(", ", names.subList(0, 8)) + " and " + (names.size() - 8) + " more";
    return "table '" + t.name() + "' lost " + names.size() + " shards (" + t.lost().values().iterator().next()
        + "): " + listed + (republishing ? "; they are being published again, ask again shortly"
        : "; publish it again, or publish with republishLost=true");
  }
}
