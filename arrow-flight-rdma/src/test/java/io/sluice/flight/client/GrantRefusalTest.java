package io.sluice.flight.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.flight.protocol.DataPlaneOffer;
import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.ResourceExhaustedException;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.Transports;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;

/**
 * A data-plane get asks again for a grant only when the server refused it for load, which the
 * transport says by its ERROR code (EXHAUSTED, a {@link ResourceExhaustedException}); any other
 * failure of the grant request fails the get at once, whatever its text says. The grants come
 * from a transport whose handler the test writes; the refused gets never reach Flight.
 */
class GrantRefusalTest {
  private static final TransportConfig CONFIG = TransportConfig.of(Map.of("sluice.transport.provider", "tcp",
      "sluice.transport.bindHost", "127.0.0.1", "sluice.transport.secret", "grant-refusal-secret"));

  @Test
  void aGrantRefusedForLoadIsAskedForAgainUntilTheDeadline() throws Exception {
    AtomicInteger asked = new AtomicInteger();
    MessageHandler busy = (peer, request) -> {
      asked.incrementAndGet();
      return CompletableFuture.failedFuture(new ResourceExhaustedException("this peer holds 1 unredeemed grant"));
    };
    FlightRuntimeException e = refusedGet(busy, Duration.ofMillis(300));
    assertEquals(FlightStatusCode.RESOURCE_EXHAUSTED, e.status().code(), e.toString());
    assertTrue(e.getMessage().contains("this peer holds 1 unredeemed grant") && e.getMessage().contains("refused again"),
        e.getMessage());
    assertTrue(asked.get() >= 2, "grant requests: " + asked.get());
  }

  @Test
  void aHandlerFailureWhoseTextReadsLikeARefusalForLoadIsNotAskedAgain() throws Exception {
    // The text the server's grant refusals began with before the transport had a code for them.
    AtomicInteger asked = new AtomicInteger();
    MessageHandler failing = (peer, request) -> {
      asked.incrementAndGet();
      return CompletableFuture.failedFuture(new IllegalStateException(
          "RESOURCE_EXHAUSTED: this peer holds 1024 unredeemed data-plane grants (sluice.flight.grantsPerClient)"));
    };
    long start = System.nanoTime();
    FlightRuntimeException e = refusedGet(failing, Duration.ofMinutes(1));
    assertEquals(FlightStatusCode.UNAVAILABLE, e.status().code(), e.toString());
    assertTrue(e.getMessage().contains("RemoteHandlerException"), e.getMessage());
    assertEquals(1, asked.get(), "grant requests");
    assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(30), "the get waited for its deadline");
  }

  /** How a data-plane get fails within {@code wait} when its grants come from {@code grants}. */
  private static FlightRuntimeException refusedGet(MessageHandler grants, Duration wait) throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         Transport server = Transports.open(CONFIG, grants);
         Transport client = Transports.open(CONFIG, MessageHandler.REJECT_ALL);
         FlightClient flight = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", 1)).build()) {
      Connection connection = client.connect(server.localAddress()).get(30, TimeUnit.SECONDS);
      DataPlaneOffer offer = new DataPlaneOffer(server.localAddress(), server.identityKey(), "tcp", 4);
      try (DataPlaneSession session = new DataPlaneSession(client, connection, 0, offer, TimeUnit.SECONDS.toNanos(30))) {
        return assertThrows(FlightRuntimeException.class, () -> ClientStreams.dataPlaneGet(flight, session, allocator,
            new Ticket(new byte[0]), CONFIG, wait.toNanos()).close());
      }
    }
  }
}
