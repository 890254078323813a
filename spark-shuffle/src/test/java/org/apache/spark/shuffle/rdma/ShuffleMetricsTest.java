package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sluice.spark.shuffle.protocol.AddressBookMessage;
import io.sluice.spark.shuffle.registry.AddressBook;
import io.sluice.transport.metrics.LatencyHistogram;
import io.sluice.transport.metrics.Metric;
import io.sluice.transport.metrics.TransportMetrics;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The driver's totals: counters add up, quantiles come from the added-up buckets. */
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
}
