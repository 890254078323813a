package io.sluice.spark.shuffle.startup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** What starting a transport cost, as recorded; no transport, no Spark. */
class StartupTimesTest {
  @Test
  void nothingRecordedReadsAsZero() {
    StartupTimes t = new StartupTimes();
    assertEquals(0, t.openNanos());
    assertEquals(0, t.openWaitNanos());
    assertEquals(0, t.firstConnects());
    assertEquals(0, t.firstConnectMedianNanos());
    assertEquals(0, t.firstConnectMaxNanos());
    assertTrue(t.steps().isEmpty());
  }

  @Test
  void onlyTheFirstTaskThatNeededTheTransportRecordsItsWait() {
    StartupTimes t = new StartupTimes();
    t.opened(90);
    t.waited(0);
    t.waited(40);
    assertEquals(90, t.openNanos());
    assertEquals(0, t.openWaitNanos(), "the first task found it open; the later wait is not the first task's");
    StartupTimes u = new StartupTimes();
    u.waited(25);
    u.waited(5);
    assertEquals(25, u.openWaitNanos());
  }

  @Test
  void stepsKeepTheirOrderAndARepeatedStepAddsUp() {
    StartupTimes t = new StartupTimes();
    t.step("driver", 5);
    t.step("transport", 7);
    t.step("driver", 1);
    assertEquals(List.of("driver", "transport"), List.copyOf(t.steps().keySet()));
    assertEquals(6L, t.steps().get("driver"));
    long since = System.nanoTime();
    long now = t.lap("register", since);
    assertEquals(now - since, t.steps().get("register"));
  }

  @Test
  void stepsReadInMillisecondsInTheirOrder() {
    assertEquals("", StartupTimes.describe(new StartupTimes().steps()));
    StartupTimes t = new StartupTimes();
    t.step("transport", 487_530_254);
    t.step("register", 50_000);
    assertEquals("transport 487.5 ms, register 0.1 ms", StartupTimes.describe(t.steps()));
  }

  @Test
  void firstConnectionsGiveCountMedianAndMaximum() {
    StartupTimes t = new StartupTimes();
    for (long n : new long[] {30, 10, 20, 40}) {
      t.firstConnect(n);
    }
    assertEquals(4, t.firstConnects());
    assertEquals(20, t.firstConnectMedianNanos(), "the lower middle of an even count");
    assertEquals(40, t.firstConnectMaxNanos());
    assertEquals(100, t.firstConnectSumNanos());
  }

  @Test
  void theMedianKeepsABoundedNumberOfSamples() {
    StartupTimes t = new StartupTimes();
    for (int i = 0; i < StartupTimes.MAX_SAMPLES; i++) {
      t.firstConnect(1);
    }
    for (int i = 0; i < 3 * StartupTimes.MAX_SAMPLES; i++) {
      t.firstConnect(1000);
    }
    assertEquals(4 * StartupTimes.MAX_SAMPLES, t.firstConnects());
    assertEquals(1, t.firstConnectMedianNanos(), "samples past the bound are not kept");
    assertEquals(1000, t.firstConnectMaxNanos());
  }
}
