package org.apache.spark.shuffle.rdma;

import io.sluice.spark.shuffle.fallback.FallbackCounts;
import io.sluice.spark.shuffle.fetch.PeerConnections;
import io.sluice.spark.shuffle.protocol.AddressBookMessage;
import io.sluice.spark.shuffle.registry.AddressBook;
import io.sluice.spark.shuffle.startup.StartupTimes;
import io.sluice.transport.metrics.LatencyHistogram;
import io.sluice.transport.metrics.Metric;
import io.sluice.transport.metrics.TransportMetrics;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The names and values of the shuffle manager's metrics: the transport's ({@link
 * TransportMetrics}, zero on an executor without one), the fallback decisions ({@link
 * FallbackCounts}), what starting the transport cost ({@link StartupTimes}) and the bound on
 * connections to peers ({@link PeerConnections.Stats}, zero without a transport); the driver adds {@code executors.registered} and {@code executors.reporting}.
 * Stateless helpers; the values are read from the objects passed in, when asked.
 */
final class ShuffleMetrics {
  static final String EXECUTORS_REGISTERED = "executors.registered";
  static final String EXECUTORS_REPORTING = "executors.reporting";
  static final String OPEN = "startup.openMicros";
  static final String OPEN_WAIT = "startup.openWaitMicros";
  static final String FIRST_CONNECTIONS = "startup.firstConnections";
  static final String FIRST_CONNECT_SUM = "startup.firstConnectSumMicros";
  static final String PEER_CONNECTIONS_MAX = "peerConnections.max";
  static final String PEER_CONNECTIONS_OPEN = "peerConnections.open";
  static final String PEER_CONNECTIONS_PEAK = "peerConnections.peak";
  static final String PEER_CONNECTION_WAITS = "peerConnections.waits";
  static final String PEER_CONNECTION_WAIT_TIMEOUTS = "peerConnections.waitTimeouts";
  static final String PEER_CONNECTION_EVICTIONS = "peerConnections.evictions";
  static final String PEERS_PASSED_ON = "peerConnections.passedOn";

  private ShuffleMetrics() {}

  /** Every name an executor reports, in a fixed order. */
  static List<String> executorNames() {
    List<String> names = new ArrayList<>();
    for (Metric m : new TransportMetrics().snapshot()) {
      names.add(m.name());
    }
    names.addAll(new FallbackCounts().snapshot().keySet());
    names.addAll(startupValues(new StartupTimes()).keySet());
    names.addAll(peerValues(Optional.empty()).keySet());
    return names;
  }

  /** Every name the driver shows: the executors' and its own two. */
  static List<String> driverNames() {
    List<String> names = new ArrayList<>(executorNames());
    names.add(EXECUTORS_REGISTERED);
    names.add(EXECUTORS_REPORTING);
    return names;
  }

  /**
   * This executor's values now: its transport's (once it has one), its fallback counts, its
   * start-up costs and its bound on connections to peers.
   */
  static Map<String, Long> executorValues(Supplier<Optional<TransportMetrics>> transport, FallbackCounts fallback,
      StartupTimes startup, Supplier<Optional<PeerConnections.Stats>> peers) {
    Map<String, Long> values = new LinkedHashMap<>();
    for (Metric m : transport.get().orElseGet(TransportMetrics::new).snapshot()) {
      values.put(m.name(), m.value());
    }
    values.putAll(fallback.snapshot());
    values.putAll(startupValues(startup));
    values.putAll(peerValues(peers.get()));
    return values;
  }

  /** The bound on connections to peers and what it did; zeros without a transport. */
  private static Map<String, Long> peerValues(Optional<PeerConnections.Stats> peers) {
    PeerConnections.Stats p = peers.orElse(new PeerConnections.Stats(0, 0, 0, 0, 0, 0, 0));
    Map<String, Long> values = new LinkedHashMap<>();
    values.put(PEER_CONNECTIONS_MAX, (long) p.bound());
    values.put(PEER_CONNECTIONS_OPEN, (long) p.open());
    values.put(PEER_CONNECTIONS_PEAK, (long) p.peak());
    values.put(PEER_CONNECTION_WAITS, p.waits());
    values.put(PEER_CONNECTION_WAIT_TIMEOUTS, p.waitTimeouts());
    values.put(PEER_CONNECTION_EVICTIONS, p.evictions());
    values.put(PEERS_PASSED_ON, p.passedOn());
    return values;
  }

  /** Start-up costs as sums, so the driver's totals over executors mean something. */
  private static Map<String, Long> startupValues(StartupTimes startup) {
    Map<String, Long> values = new LinkedHashMap<>();
    values.put(OPEN, startup.openNanos() / 1000);
    values.put(OPEN_WAIT, startup.openWaitNanos() / 1000);
    values.put(FIRST_CONNECTIONS, (long) startup.firstConnects());
    values.put(FIRST_CONNECT_SUM, startup.firstConnectSumNanos() / 1000);
    return values;
  }

  /** The executor's source. */
  static SluiceMetricsSource executor(Supplier<Optional<TransportMetrics>> transport, FallbackCounts fallback,
      StartupTimes startup, Supplier<Optional<PeerConnections.Stats>> peers) {
    return SluiceMetricsSource.ofSnapshots(executorNames(), () -> executorValues(transport, fallback, startup, peers));
  }

  /**
   * The driver's source: the executors' reports to {@code book}, added up; a histogram's quantiles
   * are taken from its buckets added up (quantiles themselves do not add).
   */
  static SluiceMetricsSource driver(AddressBook book) {
    return new SluiceMetricsSource(driverNames(), name -> switch (name) {
      case EXECUTORS_REGISTERED -> book.registeredExecutors();
      case EXECUTORS_REPORTING -> book.reportingExecutors();
      default -> name.endsWith(P50) ? quantile(book, name.substring(0, name.length() - P50.length()), 0.5)
          : name.endsWith(P99) ? quantile(book, name.substring(0, name.length() - P99.length()), 0.99)
          : book.metricTotal(name);
    });
  }

  private static final String P50 = ".p50Micros";
  private static final String P99 = ".p99Micros";

  /** Quantile {@code q} of histogram {@code prefix} (reads.latency) over every executor's buckets. */
  static long quantile(AddressBook book, String prefix, double q) {
    long[] bounds = LatencyHistogram.BOUNDS_MICROS;
    long[] counts = new long[bounds.length + 1];
    long below = 0;
    for (int i = 0; i < bounds.length; i++) {
      long cumulative = book.metricTotal(prefix + ".le." + bounds[i] + "us");
      counts[i] = Math.max(0, cumulative - below);
      below = Math.max(below, cumulative);
    }
    counts[bounds.length] = Math.max(0, book.metricTotal(prefix + ".count") - below);
    return new LatencyHistogram.Snapshot(counts, book.metricTotal(prefix + ".sumMicros")).quantileMicros(q);
  }

  /** The report an executor sends to the driver. */
  static AddressBookMessage.MetricsReport report(String executorId,
      Supplier<Optional<TransportMetrics>> transport, FallbackCounts fallback, StartupTimes startup,
      Supplier<Optional<PeerConnections.Stats>> peers) {
    return new AddressBookMessage.MetricsReport(executorId, executorValues(transport, fallback, startup, peers));
  }
}
