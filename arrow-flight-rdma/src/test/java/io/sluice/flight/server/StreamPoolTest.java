package io.sluice.flight.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.flight.FlightOption;
import io.sluice.transport.TransportConfig;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.junit.jupiter.api.Test;

/**
 * The pool's shares, with hosts named directly: the clients one host makes up hold at most its
 * share, another host's client is served, and the share a client is offered is the smaller one.
 */
class StreamPoolTest {
  @Test
  void clientsMadeUpOnOneHostHoldAtMostItsShareAndAnotherHostIsServed() throws Exception {
    StreamPool pool = new StreamPool("test-stream", TransportConfig.of(Map.of("sluice.flight.dataPlaneGets", "8",
        "sluice.flight.dataPlaneGetsPerClient", "2", "sluice.flight.dataPlaneGetsPerHost", "4")),
        FlightOption.DATA_PLANE_GETS, FlightOption.DATA_PLANE_GETS_PER_CLIENT, FlightOption.DATA_PLANE_GETS_PER_HOST);
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch running = new CountDownLatch(5);
    Runnable held = () -> {
      running.countDown();
      try {
        release.await(1, TimeUnit.MINUTES);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    };
    try {
      int refused = 0;
      for (int client = 0; client < 6; client++) {
        for (int i = 0; i < 2; i++) {
          try {
            pool.execute(Optional.of(new Requester("node " + client, "10.0.0.1")), held);
          } catch (FlightRuntimeException e) {
            assertEquals(FlightStatusCode.RESOURCE_EXHAUSTED, e.status().code());
            assertTrue(e.getMessage().contains("sluice.flight.dataPlaneGetsPerHost"), e.getMessage());
            refused++;
          }
        }
      }
      assertEquals(8, refused, "streams of six clients of one host past its share of 4");
      pool.execute(Optional.of(new Requester("node 6", "10.0.0.2")), held);
      assertTrue(running.await(1, TimeUnit.MINUTES), "streams admitted but not run");
      assertEquals(2, pool.perClient());
    } finally {
      release.countDown();
      pool.shutdownNow();
    }
  }

  @Test
  void theShareOfferedIsNeverMoreThanTheHostsNorTheTotal() {
    StreamPool pool = new StreamPool("test-stream", TransportConfig.of(Map.of("sluice.flight.dataPlaneGets", "8",
        "sluice.flight.dataPlaneGetsPerClient", "16", "sluice.flight.dataPlaneGetsPerHost", "4")),
        FlightOption.DATA_PLANE_GETS, FlightOption.DATA_PLANE_GETS_PER_CLIENT, FlightOption.DATA_PLANE_GETS_PER_HOST);
    StreamPool total = new StreamPool("test-stream", TransportConfig.of(Map.of("sluice.flight.dataPlaneGets", "3")),
        FlightOption.DATA_PLANE_GETS, FlightOption.DATA_PLANE_GETS_PER_CLIENT, FlightOption.DATA_PLANE_GETS_PER_HOST);
    try {
      assertEquals(4, pool.perClient());
      assertEquals(3, total.perClient());
    } finally {
      pool.shutdownNow();
      total.shutdownNow();
    }
  }
}
