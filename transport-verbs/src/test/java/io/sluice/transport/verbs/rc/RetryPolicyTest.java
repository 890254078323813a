package io.sluice.transport.verbs.rc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.config.TransportKeys;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The retry policy's numbers: finite on every device, and done well inside the READ deadline. */
class RetryPolicyTest {

  @Test
  void retriesAreFiniteEvenOnSoftRoce() {
    assertTrue(RetryPolicy.RETRY_COUNT < 7, "rxe resends without limit at a retry count of 7");
    assertEquals(7, RetryPolicy.RNR_RETRY_COUNT, "RNR retries stay unlimited");
  }

  @Test
  void theDeviceGivesUpLongBeforeTheReadDeadline() {
    assertEquals(67_108_864L, RetryPolicy.ackTimeoutNanos(), "4.096 us x 2^14");
    // (6 + 1) tries x up to 4 x 67 ms, the longest the specification lets a device wait.
    assertEquals(7L * 4 * 67_108_864L, RetryPolicy.giveUpNanos());
    assertTrue(RetryPolicy.giveUpNanos() < TimeUnit.SECONDS.toNanos(2));
    long defaultDeadline = TimeUnit.MILLISECONDS.toNanos(TransportKeys.IO_TIMEOUT_MS.parse(TransportKeys.IO_TIMEOUT_MS.defaultValue()));
    assertTrue(RetryPolicy.deadlineCoversRetries(defaultDeadline), "the default READ deadline");
    assertTrue(RetryPolicy.deadlineCoversRetries(TimeUnit.SECONDS.toNanos(15)), "the lab's READ deadline");
  }
}
