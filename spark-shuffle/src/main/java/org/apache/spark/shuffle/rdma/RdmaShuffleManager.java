package org.apache.spark.shuffle.rdma;

import io.sluice.spark.shuffle.TransportReport;
import io.sluice.spark.shuffle.fallback.Decision;
import io.sluice.spark.shuffle.fallback.FallbackPolicy;
import io.sluice.spark.shuffle.registry.AddressBookClient;
import io.sluice.spark.shuffle.startup.StartupTimes;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.config.Check;
import io.sluice.transport.config.ConfigKey;
import io.sluice.transport.config.ConfigSource;
import io.sluice.transport.config.Parsers;
import io.sluice.transport.config.TransportKeys;
import io.sluice.transport.metrics.TransportMetrics;
import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.shuffle.BaseShuffleHandle;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleHandle;
import org.apache.spark.shuffle.ShuffleManager;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.shuffle.ShuffleWriteMetricsReporter;
import org.apache.spark.shuffle.ShuffleWriter;
import org.apache.spark.shuffle.sort.SortShuffleManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Spark shuffle over one-sided READs. Enable with {@code
 * spark.shuffle.manager=org.apache.spark.shuffle.rdma.RdmaShuffleManager}.
 *
 * <p>Map tasks write with Spark's own sort-shuffle writers, so the files, the MapStatus sizes
 * (which AQE uses) and everything that serves those files (external shuffle service,
 * decommission migration) stay standard; the committed data file is then registered with this
 * executor's transport. Reduce tasks learn locations and sizes from MapOutputTracker, ask each
 * executor holding their blocks once for exact ranges, and READ them ({@link RdmaShuffleReader}).
 * The driver keeps an address book of executors' transports ({@link AddressBookEndpoint}).
 *
 * <p>When to use Spark's sort shuffle instead is the {@link FallbackPolicy}'s decision, made once
 * per process (the transport could not start here), once per shuffle on each executor (getWriter
 * and getReader) and once per reduce task (in the reader), and logged in one line each. A job
 * never fails because the transport is missing.
 *
 * <p>Thread safe: Spark calls it from many task threads.
 */
public final class RdmaShuffleManager implements ShuffleManager {
  private static final Logger LOG = LoggerFactory.getLogger(RdmaShuffleManager.class);

  private final SparkConf conf;
  private final ConfigSource settings;
  private final SortShuffleManager sort;
  private final FallbackPolicy fallback = new FallbackPolicy();
  private final StartupTimes startup = new StartupTimes();
  private final boolean isDriver;
  /** The driver's address book and metrics source, once set up; always empty on executors. */
  private Optional<DriverSide> driverSide = Optional.empty(); // guarded by this
  private Optional<DriverLink> driverLink = Optional.empty(); // guarded by this
  private Optional<SluiceMetricsSource> executorSource = Optional.empty(); // guarded by this
  private Optional<MetricsReporter> reporter = Optional.empty(); // guarded by this
  /** The running transport's counters, for the metrics source and reporter, which must not wait for the lock. */
  private volatile Optional<TransportMetrics> runningTransportMetrics = Optional.empty();
  /** The running transport, for its connections' figures; read without the lock like the counters. */
  private volatile Optional<ExecutorShuffleTransport> runningTransport = Optional.empty();
  /** Completes when the open of this process's transport has ended; null before its first use. */
  private CompletableFuture<Void> opening; // guarded by this
  /** The transport the open published: empty before it ended, if it failed, and after stop(). */
  private Optional<ExecutorShuffleTransport> transport = Optional.empty(); // guarded by this
  private boolean stopped; // guarded by this
  /** This executor's announcement of its open to the driver's book: empty on the driver and until the open starts. */
  private Optional<Announcement> announced = Optional.empty(); // guarded by this
  /** Map outputs committed while the transport opened, registered once it has; null once that ran. */
  private List<CommittedOutput> afterOpen = new ArrayList<>(); // guarded by this

  /** What {@link #TEST_OPEN_DELAY} says, checked when the manager is made. */
  private final long testOpenDelayMs;

  /**
   * Holds the open back this long on its own thread (default 0), so that tests see map tasks end
   * while it runs; not a setting for applications (it is not among {@link RdmaShuffleOption#all}).
   */
  static final ConfigKey<Long> TEST_OPEN_DELAY = ConfigKey.of("spark.shuffle.rdma.testing.openDelay", "0",
      "Holds the transport's open back this long, for tests.", Parsers.duration(TimeUnit.MILLISECONDS),
      Check.notNegative());

  /** A map output committed while the transport opened. */
  private record CommittedOutput(ShuffleHandle handle, long mapId) {}

  /** The announcement of this executor's open, and the book's answer to it. */
  private record Announcement(String executorId, CompletableFuture<Void> answered) {}

  public RdmaShuffleManager(SparkConf conf, boolean isDriver) {
    // Settings the transport or this manager would refuse fail here, before any shuffle runs.
    SparkTransportConfig.validate(conf);
    for (String w : SparkTransportConfig.unknownKeys(conf)) {
      LOG.warn("RdmaShuffleManager: {}", w);
    }
    this.conf = conf;
    this.settings = SparkTransportConfig.source(conf);
    this.sort = new SortShuffleManager(conf);
    this.isDriver = isDriver;
    this.testOpenDelayMs = settings.value(TEST_OPEN_DELAY);
    // Spark 4.0 and later make the manager once SparkEnv is set; 3.5 makes it inside SparkEnv.create,
    // before, on the driver and on executors. Without an env the set-up below waits for the first use.
    SparkEnv env = SparkEnv.get();
    if (env != null) {
      synchronized (this) {
        if (isDriver) {
          driverSide(env);
        } else {
          // Requests only, no set-up: the first task would otherwise wait for their round trips.
          driverLink = Optional.of(startDriverLink(env));
        }
      }
    }
  }

  /** The driver's address book endpoint and its metrics source (not yet registered). */
  private record DriverSide(RpcEndpointRef endpoint, SluiceMetricsSource source) {}

  /**
   * The driver's side, set up on the first call: the address book endpoint, and the secret it hands
   * out. Empty on executors. Runs once SparkEnv is set, before the first shuffle's tasks, which are
   * the first to ask the book.
   */
  private Optional<DriverSide> driverSide(SparkEnv env) {
    assert Thread.holdsLock(this);
    if (!isDriver || driverSide.isPresent() || stopped) {
      return driverSide;
    }
    // Without a secret of its own, the application's transports share a random one the driver hands out.
    Optional<String> handOut = SparkTransportConfig.secret(conf, env.securityManager()).isPresent()
        ? Optional.empty() : Optional.of(SparkTransportConfig.newSecret());
    // A reducer's lookup of an executor still opening waits at most half its own deadline.
    AddressBookEndpoint endpoint = new AddressBookEndpoint(env.rpcEnv(), AddressBookEndpoint::activeInScheduler,
        handOut, settings.value(RdmaShuffleOption.LOOKUP_TIMEOUT) / 2);
    RpcEndpointRef ref = env.rpcEnv().setupEndpoint(AddressBookEndpoint.NAME, endpoint);
    // Registered with the first shuffle (registerShuffle): Spark names a source by the
    // application's id as it registers it, and the driver learns that id after the env is set.
    driverSide = Optional.of(new DriverSide(ref, ShuffleMetrics.driver(endpoint.book())));
    return driverSide;
  }

  /**
   * The driver's side, set up now if this is the driver and it is not yet; empty on executors and
   * while SparkEnv is not set.
   */
  private synchronized Optional<DriverSide> driverSide() {
    SparkEnv env = SparkEnv.get();
    return driverSide.isPresent() || env == null ? driverSide : driverSide(env);
  }

  /**
   * Sets up the driver's side now rather than with the first shuffle, for work that makes executors
   * start their transports without a shuffle (collecting their reports). Does nothing on executors.
   */
  void setUpDriver() {
    driverSide();
  }

  /** The link to the driver's address book, asking for the secret unless this process has one of its own. */
  private DriverLink startDriverLink(SparkEnv env) {
    assert Thread.holdsLock(this);
    long timeoutMs = settings.value(RdmaShuffleOption.LOOKUP_TIMEOUT);
    boolean wantSecret = SparkTransportConfig.secret(conf, env.securityManager()).isEmpty();
    return driverSide(env).map(d -> DriverLink.of(d.endpoint(), timeoutMs, wantSecret))
        .orElseGet(() -> DriverLink.start(conf, env.rpcEnv(), timeoutMs, wantSecret));
  }

  /**
   * On an executor, tells the driver's book that this executor's transport is opening (once, without
   * waiting, as the open starts), so that its first map tasks need not wait for the open: a reducer
   * that looks this executor up before its registration arrives is answered when it does. Never
   * throws: without an announcement map tasks wait for the open.
   */
  private void announce(SparkEnv env) {
    assert Thread.holdsLock(this);
    if (!isDriver && announced.isEmpty() && !stopped) {
      try {
        DriverLink link = driverLink.orElseGet(() -> startDriverLink(env));
        driverLink = Optional.of(link);
        announced = Optional.of(new Announcement(env.executorId(), link.announceOpening(env.executorId())));
      } catch (RuntimeException e) {
        LOG.debug("The open is not announced to the driver; map tasks wait for it", e);
      }
    }
  }

  /**
   * Starts opening this process's transport on a thread of its own unless that was done already;
   * the future completes when the open has ended, whatever its outcome. Never waits.
   */
  private synchronized CompletableFuture<Void> opening() {
    if (opening == null) {
      CompletableFuture<Void> f = new CompletableFuture<>();
      opening = f;
      if (stopped) {
        f.complete(null);
      } else {
        SparkEnv env = SparkEnv.get();
        if (env != null) {
          announce(env);
        }
        long delayMs = testOpenDelayMs;
        Thread t = new Thread(() -> {
          try {
            if (delayMs > 0) {
              Thread.sleep(delayMs);
            }
            openTransport();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          } finally {
            f.complete(null);
            try {
              registerCommittedOutputs();
            } finally {
              if (published().isEmpty()) {
                // Failed, stopped or interrupted: lookups of this executor held in the driver's book end now.
                withdrawAnnouncement();
              }
            }
          }
          // After the tasks waiting for the open are on their way: the connection it needs no task to wait for.
          published().ifPresent(ExecutorShuffleTransport::rehearseConnection);
        }, "sluice-transport-open");
        t.setDaemon(true);
        t.start();
      }
    }
    return opening;
  }

  /**
   * How long a task waits for the open at most: it asks the driver twice at most (the book's
   * endpoint and the secret), each within the lookup timeout; the transport's own set-up waits on
   * nothing remote.
   */
  private long openDeadlineMs() {
    return 2 * settings.value(RdmaShuffleOption.LOOKUP_TIMEOUT) + 10_000;
  }

  /**
   * This process's transport, or empty if it could not start here or this manager stopped: opened
   * on first use, on a thread of its own, and waited for here (recorded as the first task's wait
   * when it is the first). A task that is interrupted, or waits past the deadline, gets empty and
   * uses Spark's shuffle; the open goes on for later tasks.
   */
  Optional<ExecutorShuffleTransport> transport() {
    CompletableFuture<Void> f = opening();
    if (f.isDone()) {
      startup.waited(0);
      return published();
    }
    long started = System.nanoTime();
    try {
      f.get(openDeadlineMs(), TimeUnit.MILLISECONDS);
      startup.waited(System.nanoTime() - started);
      return published();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    } catch (TimeoutException e) {
      LOG.warn("The shuffle transport did not open within {} ms; this task uses Spark's shuffle", openDeadlineMs());
      return Optional.empty();
    } catch (ExecutionException e) {
      throw new IllegalStateException("the open never fails its future", e);
    }
  }

  private synchronized Optional<ExecutorShuffleTransport> published() {
    return transport;
  }

  /**
   * Opens this process's transport; runs once, on the thread {@link #opening} starts. Publishes
   * it unless this manager stopped meanwhile (then closes it).
   */
  private void openTransport() {
    long started = System.nanoTime();
    long step = started;
    SparkEnv env = SparkEnv.get();
    Optional<String> failure = Optional.empty();
    Optional<SluiceMetricsSource> source = Optional.empty();
    if (!isDriver) {
      // On an executor, its own counters; in local mode the driver's source shows the same ones.
      source = Optional.of(ShuffleMetrics.executor(this::transportMetrics, fallback.counts(), startup,
          this::peerConnections));
      step = startup.lap("metrics", step);
    }
    Optional<ExecutorShuffleTransport> opened = Optional.empty();
    Optional<MetricsReporter> report = Optional.empty();
    try {
      DriverLink link;
      synchronized (this) {
        // The driver's answers were asked for when this manager was made; normally they are here.
        link = driverLink.orElseGet(() -> startDriverLink(env));
        driverLink = Optional.of(link);
      }
      AddressBookClient book = link.client();
      String secret = SparkTransportConfig.secret(conf, env.securityManager()).orElseGet(link::handedOutSecret);
      step = startup.lap("driver", step);
      String executorId = env.executorId();
      report = Optional.of(new MetricsReporter(
          () -> ShuffleMetrics.report(executorId, this::transportMetrics, fallback.counts(), startup,
              this::peerConnections),
          book::reportMetrics, settings.value(RdmaShuffleOption.METRICS_REPORT_INTERVAL)));
      TransportConfig config = SparkTransportConfig.from(conf, env.securityManager(), () -> secret,
          Arrays.stream(env.blockManager().diskBlockManager().localDirs()).map(File::toPath).toList());
      startup.lap("config", step);
      // Idle READ destinations kept for reuse: two tasks' worth of bytes in flight.
      long pooled = 2 * settings.value(RdmaShuffleOption.MAX_BYTES_IN_FLIGHT);
      opened = Optional.of(ExecutorShuffleTransport.open(env.executorId(), config, resolver(), book, pooled,
          settings.value(RdmaShuffleOption.REGISTRATION_WINDOW_BYTES), startup,
          settings.value(RdmaShuffleOption.LOOKUP_TIMEOUT), settings.value(RdmaShuffleOption.MAX_PEER_CONNECTIONS)));
    } catch (Exception e) {
      // Settings were checked when the manager was created; any failure to start leaves this executor on
      // Spark's shuffle.
      failure = Optional.of(e.toString());
    }
    boolean published;
    synchronized (this) {
      published = !stopped;
      if (published) {
        transport = opened;
        runningTransportMetrics = opened.map(ExecutorShuffleTransport::metrics);
        runningTransport = opened;
        reporter = report;
        source.ifPresent(SluiceMetricsSource::registerOnce);
        executorSource = source;
      }
    }
    if (published && opened.isPresent()) {
      // A registration the driver never took leaves its lookups waiting for nothing: withdraw.
      opened.get().registration().whenComplete((ok, e) -> {
        if (e != null) {
          withdrawAnnouncement();
        }
      });
    }
    if (!published) {
      report.ifPresent(MetricsReporter::close);
      opened.ifPresent(ExecutorShuffleTransport::close);
      return;
    }
    long took = System.nanoTime() - started;
    startup.opened(took);
    LOG.info("Executor {}: the shuffle transport's open took {} ms ({})", env.executorId(),
        String.format(java.util.Locale.ROOT, "%.1f", took / 1e6), StartupTimes.describe(startup.steps()));
    fallback.decideExecutor(env.executorId(), failure);
  }

  /**
   * Withdraws this executor's announcement, once the announcement itself has had its answer (both
   * wait for the book's endpoint, and a withdrawal sent first would leave the announcement
   * standing).
   */
  private void withdrawAnnouncement() {
    DriverLink link;
    Announcement announcement;
    synchronized (this) {
      if (announced.isEmpty() || driverLink.isEmpty()) {
        return;
      }
      link = driverLink.get();
      announcement = announced.get();
    }
    announcement.answered().whenComplete((ok, e) -> {
      try {
        link.withdraw(announcement.executorId());
      } catch (RuntimeException failure) {
        LOG.debug("Could not withdraw the open's announcement", failure);
      }
    });
  }

  /**
   * Registers the map outputs committed while the transport opened, on the open's thread once it
   * has ended; outputs committed from now on register themselves.
   */
  private void registerCommittedOutputs() {
    List<CommittedOutput> committed;
    synchronized (this) {
      committed = afterOpen;
      afterOpen = null;
    }
    int registered = 0;
    for (CommittedOutput c : committed) {
      Optional<ExecutorShuffleTransport> t = registeringTransport(c.handle());
      if (t.isPresent()) {
        t.get().registry().registerQuietly(c.handle().shuffleId(), c.mapId());
        registered++;
      }
    }
    if (registered > 0) {
      startup.registeredAfterOpen(registered);
      LOG.info("Registered {} map outputs committed while the shuffle transport opened", registered);
    }
  }

  /**
   * Registers a map output its task has committed, before its MapStatus leaves the task. While the
   * transport is still opening, and the driver's book has this executor's announcement, the
   * registration is left to the open's thread and the task goes on (it waited for nothing, and that
   * is its wait for the open). Otherwise the task waits for the open, registers the output and
   * waits until the driver has this executor's address ({@link ExecutorShuffleTransport#awaitRegistered}),
   * at once except on the executor's first map tasks.
   */
  private void registerCommitted(ShuffleHandle handle, long mapId) {
    if (leftToTheOpen(handle, mapId)) {
      return;
    }
    registeringTransport(handle).ifPresent(t -> t.registerAndAwaitDriver(handle.shuffleId(), mapId));
  }

  /** Leaves a committed output to the open's thread if it is still opening and was announced. */
  private boolean leftToTheOpen(ShuffleHandle handle, long mapId) {
    CompletableFuture<Void> answered;
    synchronized (this) {
      if (afterOpen == null || announced.isEmpty()) {
        return false;
      }
      answered = announced.get().answered();
    }
    long started = System.nanoTime();
    try {
      // Sent as the executor's first shuffle task began: normally answered long before a map task ends.
      answered.get(settings.value(RdmaShuffleOption.LOOKUP_TIMEOUT), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (ExecutionException | TimeoutException e) {
      return false; // without it, reducers could take this executor for one without a transport
    }
    synchronized (this) {
      if (afterOpen == null) {
        return false; // the open ended meanwhile
      }
      afterOpen.add(new CommittedOutput(handle, mapId));
    }
    startup.waited(System.nanoTime() - started);
    return true;
  }

  /** The counters of this process's transport, once it has one; never starts it. */
  private Optional<TransportMetrics> transportMetrics() {
    return runningTransportMetrics;
  }

  /** The bound on this process's connections to peers and what it did, once it has a transport. */
  private Optional<io.sluice.spark.shuffle.fetch.PeerConnections.Stats> peerConnections() {
    return runningTransport.map(ExecutorShuffleTransport::peerConnections);
  }

  private IndexShuffleBlockResolver resolver() {
    return sort.shuffleBlockResolver();
  }

  @Override
  public <K, V, C> ShuffleHandle registerShuffle(int shuffleId, ShuffleDependency<K, V, C> dependency) {
    driverSide().ifPresent(d -> d.source().registerOnce());
    return sort.registerShuffle(shuffleId, dependency);
  }

  /** The fallback policy's decision for a shuffle on this executor, made on its first task here. */
  private Decision decide(ShuffleHandle handle, Optional<ExecutorShuffleTransport> t) {
    BaseShuffleHandle<?, ?, ?> base = (BaseShuffleHandle<?, ?, ?>) handle;
    return fallback.decideShuffle(handle.shuffleId(), SparkEnv.get().executorId(), t.isPresent(),
        base.dependency().shuffleMergeEnabled());
  }

  @Override
  public <K, V> ShuffleWriter<K, V> getWriter(ShuffleHandle handle, long mapId, TaskContext context,
      ShuffleWriteMetricsReporter metrics) {
    ShuffleWriter<K, V> writer = sort.getWriter(handle, mapId, context, metrics);
    if (opening().isDone()) {
      Optional<ExecutorShuffleTransport> t = registeringTransport(handle);
      return t.isEmpty() ? writer
          : new RegisteringShuffleWriter<>(writer, () -> t.get().registerAndAwaitDriver(handle.shuffleId(), mapId));
    }
    // While the transport opens, the executor's first map tasks compute; their outputs are
    // registered once it has opened.
    return new RegisteringShuffleWriter<>(writer, () -> registerCommitted(handle, mapId));
  }

  /** The transport a map task registers its output with; empty if this shuffle uses Spark's here. */
  private Optional<ExecutorShuffleTransport> registeringTransport(ShuffleHandle handle) {
    Optional<ExecutorShuffleTransport> t = transport();
    // The transport is empty after stop(), whatever the shuffle's decision was.
    return decide(handle, t).usesSparkShuffle() ? Optional.empty() : t;
  }

  @Override
  public <K, C> ShuffleReader<K, C> getReader(ShuffleHandle handle, int startMapIndex, int endMapIndex,
      int startPartition, int endPartition, TaskContext context, ShuffleReadMetricsReporter metrics) {
    Optional<ExecutorShuffleTransport> t = transport();
    if (decide(handle, t).usesSparkShuffle() || t.isEmpty()) {
      return sort.getReader(handle, startMapIndex, endMapIndex, startPartition, endPartition, context, metrics);
    }
    @SuppressWarnings("unchecked")
    BaseShuffleHandle<K, ?, C> base = (BaseShuffleHandle<K, ?, C>) handle;
    return new RdmaShuffleReader<>(base, startMapIndex, endMapIndex, startPartition, endPartition, context,
        metrics, t.get(), readerSettings(), resolver(), fallback,
        () -> sort.getReader(handle, startMapIndex, endMapIndex, startPartition, endPartition, context, metrics));
  }

  private RdmaShuffleReader.ReaderSettings readerSettings() {
    long chunk = settings.value(RdmaShuffleOption.READ_CHUNK_BYTES);
    int maxMessage = Math.toIntExact(SparkTransportConfig.passThrough(conf).value(TransportKeys.MAX_MESSAGE_BYTES));
    return new RdmaShuffleReader.ReaderSettings(
        settings.value(RdmaShuffleOption.MAX_BYTES_IN_FLIGHT),
        (int) Math.min(chunk, Integer.MAX_VALUE - 64),
        Math.min(settings.value(RdmaShuffleOption.MAX_RANGE_BYTES), Integer.MAX_VALUE - 64),
        settings.value(RdmaShuffleOption.LOCAL_READS),
        settings.value(RdmaShuffleOption.VERIFY_READS),
        settings.value(RdmaShuffleOption.SAME_HOST_VIEWS),
        Math.max(4096, maxMessage / 2),
        conf.getBoolean("spark.shuffle.service.enabled", false),
        CorruptionDiagnosis.of(conf), RdmaShuffleReader.streamsConcatenate(conf),
        peersBeyondBoundThroughSpark(conf));
  }

  /**
   * Whether reduce tasks read the peers the bound has no room for through Spark's reader: as
   * {@code peersBeyondBound} says, except where the transport encrypts and Spark's own network does
   * not ({@code spark.shuffle.rdma.transport.encryption=true} without {@code
   * spark.network.crypto.enabled}): blocks asked to cross the network encrypted never cross it in the
   * clear, so those peers are READ in turns ({@code queue}).
   */
  static boolean peersBeyondBoundThroughSpark(SparkConf conf) {
    if (!SparkTransportConfig.source(conf).value(RdmaShuffleOption.PEERS_BEYOND_BOUND).equals("spark")) {
      return false;
    }
    boolean sparkEncrypts = conf.getBoolean(SparkTransportConfig.NETWORK_CRYPTO, false);
    return sparkEncrypts || !SparkTransportConfig.passThrough(conf).value(TransportKeys.ENCRYPTION);
  }

  @Override
  public boolean unregisterShuffle(int shuffleId) {
    Optional<ExecutorShuffleTransport> t;
    synchronized (this) {
      t = transport;
    }
    // Files first: a reducer's range request arriving in between must not register them again
    // (the registry registers on request). Regions already registered stay readable until revoked.
    synchronized (this) {
      if (afterOpen != null) {
        afterOpen.removeIf(c -> c.handle().shuffleId() == shuffleId);
      }
    }
    boolean removed = sort.unregisterShuffle(shuffleId);
    t.ifPresent(x -> x.registry().unregisterShuffle(shuffleId));
    fallback.forgetShuffle(shuffleId);
    return removed;
  }

  @Override
  public IndexShuffleBlockResolver shuffleBlockResolver() {
    return resolver();
  }

  /**
   * The executors whose transports registered with this driver, as "executor address provider"
   * lines: a report for operators and examples. Empty on executors.
   */
  public List<String> registeredTransports() {
    return driverSide()
        .map(d -> AddressBookEndpoint.client(d.endpoint(), settings.value(RdmaShuffleOption.LOOKUP_TIMEOUT)).list().stream()
            .map(e -> e.executorId() + " " + e.address() + " " + e.provider()).toList())
        .orElse(List.of());
  }

  /**
   * The report of the transport of the executor this runs on, or empty if it has none (it fell
   * back to Spark's shuffle, or another shuffle manager is configured). Call it inside a task.
   */
  public static Optional<TransportReport> localTransportReport() {
    SparkEnv env = SparkEnv.get();
    if (env == null || !(env.shuffleManager() instanceof RdmaShuffleManager m)) {
      return Optional.empty();
    }
    return m.transport().map(ExecutorShuffleTransport::report);
  }

  @Override
  public void stop() {
    Optional<ExecutorShuffleTransport> t;
    Optional<MetricsReporter> lastReport;
    Optional<DriverSide> driver;
    synchronized (this) {
      lastReport = reporter;
      reporter = Optional.empty();
    }
    // The last report, with the transport's final counts, before the transport goes.
    lastReport.ifPresent(MetricsReporter::close);
    Optional<MetricsReporter> publishedMeanwhile;
    CompletableFuture<Void> inFlight;
    synchronized (this) {
      stopped = true;
      publishedMeanwhile = reporter;
      reporter = Optional.empty();
      inFlight = opening;
      t = transport;
      transport = Optional.empty();
      executorSource.ifPresent(SluiceMetricsSource::unregister);
      executorSource = Optional.empty();
      driver = driverSide;
    }
    driver.ifPresent(d -> d.source().unregister());
    publishedMeanwhile.ifPresent(MetricsReporter::close);
    t.ifPresent(ExecutorShuffleTransport::close);
    if (inFlight != null && !inFlight.isDone()) {
      // An open still under way sees the stop and closes what it opened.
      try {
        inFlight.get(openDeadlineMs(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (ExecutionException | TimeoutException e) {
        LOG.warn("The shuffle transport's open did not end within {} ms of the stop", openDeadlineMs());
      }
    }
    driver.ifPresent(d -> {
      try {
        SparkEnv.get().rpcEnv().stop(d.endpoint());
      } catch (RuntimeException e) {
        LOG.debug("Address book endpoint already stopped", e);
      }
    });
    sort.stop();
  }
}
