package org.apache.spark.shuffle.rdma;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;
import org.apache.spark.SparkEnv;
import org.apache.spark.metrics.source.Source;

/**
 * Sluice's metrics in Spark's metrics system, under the source name {@value #NAME}, so every
 * configured sink (JMX, CSV, the Prometheus servlet) shows them: on each executor its own
 * transport's counters and fallback decisions ({@link ShuffleMetrics#executor}), on the driver
 * the sum of the executors' last reports to the address book ({@link ShuffleMetrics#driver}),
 * from the application's first shuffle on (when the driver knows the application's id).
 * Every metric is a gauge of a whole number read when a sink asks; the names are fixed when the
 * source is made.
 *
 * <p>Spark's {@code Source} is package-private to Spark, hence this package. Thread safe.
 */
final class SluiceMetricsSource implements Source {
  static final String NAME = "sluice";

  private final MetricRegistry registry = new MetricRegistry();
  private final AtomicBoolean registered = new AtomicBoolean();

  /**
   * How long one snapshot of all the values serves the gauges: a sink reads every gauge of a
   * source in one pass, and each read would otherwise take the whole snapshot again.
   */
  static final long SNAPSHOT_REUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

  /** A gauge for each of {@code names}, reading {@code value} of its name. */
  SluiceMetricsSource(List<String> names, ToLongFunction<String> value) {
    for (String name : names) {
      registry.register(name, (Gauge<Long>) () -> value.applyAsLong(name));
    }
  }

  /**
   * A gauge for each of {@code names}, reading its name in a snapshot of all the values; one
   * snapshot serves the reads of {@link #SNAPSHOT_REUSE_NANOS} (a name the snapshot lacks reads 0).
   */
  static SluiceMetricsSource ofSnapshots(List<String> names, Supplier<Map<String, Long>> snapshot) {
    Recent recent = new Recent(snapshot, SNAPSHOT_REUSE_NANOS);
    return new SluiceMetricsSource(names, name -> recent.get().getOrDefault(name, 0L));
  }

  /** The last snapshot taken, taken again once it is older than the reuse period. Thread safe. */
  static final class Recent {
    private final Supplier<Map<String, Long>> snapshot;
    private final long reuseNanos;
    private Map<String, Long> last;
    private long takenNanos;

    Recent(Supplier<Map<String, Long>> snapshot, long reuseNanos) {
      this.snapshot = snapshot;
      this.reuseNanos = reuseNanos;
    }

    synchronized Map<String, Long> get() {
      long now = System.nanoTime();
      if (last == null || now - takenNanos >= reuseNanos) {
        last = snapshot.get();
        takenNanos = now;
      }
      return last;
    }
  }

  @Override
  public String sourceName() {
    return NAME;
  }

  @Override
  public MetricRegistry metricRegistry() {
    return registry;
  }

  /**
   * Registers this source with the metrics system of this process's SparkEnv, unless it is registered already. Spark names it {@code
   * <app id>.<executor id>.sluice} from the application's id as it stands now.
   */
  void registerOnce() {
    if (registered.compareAndSet(false, true)) {
      SparkEnv.get().metricsSystem().registerSource(this);
    }
  }

  /** Takes it out again, when the shuffle manager stops. */
  void unregister() {
    SparkEnv env = SparkEnv.get();
    if (env != null && registered.compareAndSet(true, false)) {
      env.metricsSystem().removeSource(this);
    }
  }
}
