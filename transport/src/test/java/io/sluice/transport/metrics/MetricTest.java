package io.sluice.transport.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The names a metric may have: what sinks (JMX, Prometheus) take after their own prefixes. */
class MetricTest {
  @ParameterizedTest
  @ValueSource(strings = {"a", "reads.bytes", "connections.closed.idleTimeout", "x_1.y2", "Z."})
  void takesDottedNames(String name) {
    assertEquals(name, Metric.counter(name, Metric.Unit.COUNT, 1).name());
    assertEquals(name, Metric.gauge(name, Metric.Unit.BYTES, -1).name());
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "1reads", ".reads", "_reads", "reads-bytes", "reads bytes", "reads/x", "réads",
      "reads.bÿtes", "reads\n"})
  void refusesOtherNames(String name) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Metric.counter(name, Metric.Unit.COUNT, 0));
    assertEquals("metric name must be dotted letters, digits and _: '" + name + "'", e.getMessage());
  }
}
