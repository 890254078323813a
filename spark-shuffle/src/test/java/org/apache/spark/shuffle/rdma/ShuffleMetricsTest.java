package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.codahale.metrics.Gauge;
import io.sluice.spark.shuffle.fallback.FallbackCounts;
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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The driver's totals: counters add up, quantiles come from the added-up buckets. An executor's
 * gauges read one snapshot of its values per sink pass.
 */
class ShuffleMetricsTest {
  private static Map<String, Long> histogramReport(long... micros) {
    LatencyHistogram h = new LatencyHistogram();
    for (long m : micros) {
      h.record(TimeUnit.MICROSECONDS.toNanos(m));
    }
    List<Metric> metrics = new ArrayList<>();
    TransportMetrics.histogram(metrics, "reads.latency", h.snapshot());
    Map<String, Long> values = new LinkedHashMap<>();
    metrics.forEach(m -> values.put(m.name(), m.value()));
    return values;
  }

  @Test
  void quantilesOverExecutorsComeFromTheirBucketsAddedUp() {
    AddressBook book = new AddressBook(id -> true, Optional.empty());
    // Executor 1: 99 fast READs; executor 2: one slow one. Their p99s would add to 32 ms + 4 µs.
    long[] fast = new long[99];
    java.util.Arrays.fill(fast, 3);
    book.answer(AddressBookMessage.metrics(new AddressBookMessage.MetricsReport("1", histogramReport(fast))));
    book.answer(AddressBookMessage.metrics(new AddressBookMessage.MetricsReport("2", histogramReport(30_000))));
    assertEquals(100, book.metricTotal("reads.latency.count"));
    assertEquals(4, ShuffleMetrics.quantile(book, "reads.latency", 0.5));
    assertEquals(4, ShuffleMetrics.quantile(book, "reads.latency", 0.99));
    assertEquals(32768, ShuffleMetrics.quantile(book, "reads.latency", 1.0));
  }

  @Test
  void anExecutorsGaugesShareOneSnapshotPerPass() {
    StartupTimes startup = new StartupTimes();
    startup.opened(TimeUnit.MILLISECONDS.toNanos(7));
    AtomicInteger snapshots = new AtomicInteger();
    SluiceMetricsSource source = ShuffleMetrics.executor(() -> {
      snapshots.incrementAndGet();
      return Optional.empty();
    }, new FallbackCounts(), startup, Optional::empty);
    Map<String, Gauge> gauges = source.metricRegistry().getGauges();
    Map<String, Long> read = new LinkedHashMap<>();
    gauges.forEach((name, g) -> read.put(name, (Long) g.getValue()));
    assertEquals(ShuffleMetrics.executorNames().size(), read.size());
    assertTrue(snapshots.get() >= 1 && snapshots.get() < read.size() / 2,
        snapshots + " snapshots for one pass over " + read.size() + " gauges");
    assertEquals(7_000L, read.get(ShuffleMetrics.OPEN), read.toString());
    assertEquals(0L, read.get("connections.opened"), read.toString());
  }

  @Test
  void aSnapshotServesItsPeriodOnly() {
    AtomicInteger taken = new AtomicInteger();
    SluiceMetricsSource.Recent forever = new SluiceMetricsSource.Recent(
        () -> Map.of("n", (long) taken.incrementAndGet()), Long.MAX_VALUE);
    assertEquals(Map.of("n", 1L), forever.get());
    assertEquals(Map.of("n", 1L), forever.get());
    SluiceMetricsSource.Recent never = new SluiceMetricsSource.Recent(
        () -> Map.of("n", (long) taken.incrementAndGet()), 0);
    assertEquals(Map.of("n", 2L), never.get());
    assertEquals(Map.of("n", 3L), never.get());
  }
}
