package org.apache.spark.shuffle.rdma;

import io.sluice.spark.shuffle.protocol.AddressBookMessage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends an executor's metrics to the driver's address book every interval, on one daemon thread,
 * and once more when closed (waiting a few seconds at most), so the driver's source holds the
 * totals of a finished job. A report that fails (the driver is busy or gone) is logged at debug
 * and the next one tries again.
 *
 * <p>Thread safe; close it once.
 */
final class MetricsReporter implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MetricsReporter.class);
  static final long LAST_REPORT_WAIT_MS = 3000;

  private final Supplier<AddressBookMessage.MetricsReport> report;
  private final Consumer<AddressBookMessage.MetricsReport> send;
  private final ScheduledExecutorService timer;

  /**
   * @param report makes the report of now
   * @param send sends it to the driver (blocking, within the lookup deadline)
   */
  MetricsReporter(Supplier<AddressBookMessage.MetricsReport> report, Consumer<AddressBookMessage.MetricsReport> send,
      long intervalMs) {
    this.report = report;
    this.send = send;
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "sluice-metrics-report");
      t.setDaemon(true);
      return t;
    });
    timer.scheduleWithFixedDelay(this::sendNow, intervalMs, intervalMs, TimeUnit.MILLISECONDS);
  }

  private void sendNow() {
    try {
      send.accept(report.get());
    } catch (RuntimeException e) {
      LOG.debug("Sending Sluice metrics to the driver failed; trying again at the next interval", e);
    }
  }

  /**
   * Sends the last report and stops the timer. Waits for that report at most {@link
   * #LAST_REPORT_WAIT_MS}: a driver that is already gone must not hold up the executor's stop.
   */
  @Override
  public void close() {
    try {
      timer.submit(this::sendNow).get(LAST_REPORT_WAIT_MS, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException
        | RejectedExecutionException e) {
      LOG.debug("The last Sluice metrics report did not reach the driver", e);
    } finally {
      timer.shutdownNow();
    }
  }
}
