package io.sluice.transport.carrier;

import static io.sluice.transport.TransportTestSupport.assertFailsWith;
import static io.sluice.transport.TransportTestSupport.await;
import static io.sluice.transport.TransportTestSupport.message;
import static io.sluice.transport.TransportTestSupport.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.MessageHandler;
import io.sluice.transport.ProtocolException;
import io.sluice.transport.RegionRevokedException;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.TransportUnavailableException;
import io.sluice.transport.UnknownKeyException;
import io.sluice.transport.crypto.NodeIdentity;
import io.sluice.transport.wire.Frames;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The hook that lets a provider run its own set-up on the carrier: CONTROL frames reach the
 * {@link ControlService} registered under their id (never the application's handler), its
 * exceptions reach the requester typed by their ERROR code, and a carrier without that service
 * refuses the request without dropping the connection.
 */
@Timeout(60)
class ControlServiceTest {
  private static final int SERVICE = 7;

  private static Settings settings() {
    Map<String, String> m = new HashMap<>(TransportTestSupport.baseConfig("tcp", "/dev/shm"));
    m.put("sluice.transport.shm.enabled", "false");
    return Settings.from(TransportConfig.of(m));
  }

  private static Carrier carrier(MessageHandler handler, ControlServices services) throws Exception {
    return new Carrier(settings(), NodeIdentity.generate(), handler, services, Optional.empty());
  }

  /** One selector thread, so that every connection shares it. */
  private static Carrier oneLoopCarrier(MessageHandler handler, ControlServices services) throws Exception {
    Map<String, String> m = new HashMap<>(TransportTestSupport.baseConfig("tcp", "/dev/shm"));
    m.put("sluice.transport.shm.enabled", "false");
    m.put("sluice.transport.ioThreads", "1");
    return new Carrier(Settings.from(TransportConfig.of(m)), NodeIdentity.generate(), handler, services, Optional.empty());
  }

  @Test
  void controlRequestsReachTheirServiceAndNotTheHandler() throws Exception {
    AtomicInteger handlerCalls = new AtomicInteger();
    AtomicLong seenPeer = new AtomicLong();
    AtomicReference<java.net.InetAddress> seenAddress = new AtomicReference<>();
    MessageHandler echo = (peer, request) -> {
      handlerCalls.incrementAndGet();
      return CompletableFuture.completedFuture(message("ok"));
    };
    ControlService service = (peer, address, request) -> {
      seenPeer.set(peer);
      seenAddress.set(address);
      byte op = request.get();
      return switch (op) {
        case 1 -> ByteBuffer.wrap(("echo:" + StandardCharsets.UTF_8.decode(request)).getBytes(StandardCharsets.UTF_8));
        case 2 -> throw new RegionRevokedException("revoked here");
        case 3 -> throw new UnknownKeyException("unknown here");
        case 5 -> ByteBuffer.allocate(4).putInt(0, 1 + request.remaining());
        case 6 -> ByteBuffer.allocate(Frames.MAX_CONTROL_PAYLOAD);
        default -> ByteBuffer.allocate(Frames.MAX_CONTROL_PAYLOAD + 1);
      };
    };
    try (Carrier server = carrier(echo, ControlServices.of(SERVICE, service));
        Carrier client = carrier(MessageHandler.REJECT_ALL, ControlServices.none());
        CarrierConnection c = await(client.connect(server.localAddress()))) {
      ByteBuffer reply = await(c.control(SERVICE, request(1, "abc")));
      assertEquals("echo:abc", StandardCharsets.UTF_8.decode(reply).toString());
      assertEquals(client.nodeId(), seenPeer.get());
      assertTrue(seenAddress.get().isLoopbackAddress(), "the service is told where the peer connects from: " + seenAddress.get());
      assertFailsWith(RegionRevokedException.class, c.control(SERVICE, request(2, "")));
      assertFailsWith(UnknownKeyException.class, c.control(SERVICE, request(3, "")));
      assertFailsWith(ProtocolException.class, c.control(SERVICE, request(4, "")));
      assertEquals(0, handlerCalls.get(), "control requests must not reach the message handler");
      assertTrue(c.isOpen());
      assertEquals("ok", text(await(c.request(message("hi")))));
      ByteBuffer largest = ByteBuffer.allocate(Frames.MAX_CONTROL_PAYLOAD).put(0, (byte) 5);
      assertEquals(Frames.MAX_CONTROL_PAYLOAD, await(c.control(SERVICE, largest)).getInt(0),
          "a request of the largest size is carried whole");
      assertEquals(Frames.MAX_CONTROL_PAYLOAD, await(c.control(SERVICE, request(6, ""))).remaining(),
          "a reply of the largest size is carried whole");
      assertThrows(IllegalArgumentException.class,
          () -> c.control(SERVICE, ByteBuffer.allocate(Frames.MAX_CONTROL_PAYLOAD + 1)));
      assertThrows(IllegalArgumentException.class, () -> c.control(0, request(1, "")));
      assertThrows(IllegalArgumentException.class, () -> c.control(256, request(1, "")));
    }
  }

  @Test
  void aServiceThatMayBlockStallsNeitherOtherPeersNorItsOwnConnection() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger running = new AtomicInteger();
    ControlService slow = new ControlService() {
      @Override
      public ByteBuffer serve(long peer, java.net.InetAddress address, ByteBuffer request) {
        running.incrementAndGet();
        try {
          if (!release.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("never released");
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        return ByteBuffer.allocate(1).put(0, request.get(0));
      }

      @Override
      public boolean mayBlock() {
        return true;
      }
    };
    MessageHandler echo = (peer, request) -> CompletableFuture.completedFuture(message("ok"));
    try (Carrier server = oneLoopCarrier(echo, ControlServices.of(SERVICE, slow));
        Carrier client = carrier(MessageHandler.REJECT_ALL, ControlServices.none());
        CarrierConnection blocked = await(client.connect(server.localAddress()));
        CarrierConnection other = await(client.connect(server.localAddress()))) {
      CompletableFuture<ByteBuffer> first = blocked.control(SERVICE, request(1, ""));
      CompletableFuture<ByteBuffer> second = blocked.control(SERVICE, request(2, ""));
      TransportTestSupport.eventually("both set-up calls running", java.time.Duration.ofSeconds(20),
          () -> running.get() == 2);
      // While the service blocks, the selector thread both connections share still serves them.
      assertEquals("ok", text(await(other.request(message("hi")))));
      assertEquals("ok", text(await(blocked.request(message("hi")))));
      assertTrue(!first.isDone() && !second.isDone());
      release.countDown();
      assertEquals(1, await(first).get(0));
      assertEquals(2, await(second).get(0));
    }
  }

  @Test
  void aServiceThatMayBlockIsServedWhileEveryHandlerThreadIsBusy() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch entered = new CountDownLatch(1);
    MessageHandler holding = (peer, request) -> {
      entered.countDown();
      try {
        release.await(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return CompletableFuture.completedFuture(message("released"));
    };
    ControlService setup = new ControlService() {
      @Override
      public ByteBuffer serve(long peer, java.net.InetAddress address, ByteBuffer request) {
        return ByteBuffer.allocate(1).put(0, (byte) 9);
      }

      @Override
      public boolean mayBlock() {
        return true;
      }
    };
    Map<String, String> m = new HashMap<>(TransportTestSupport.baseConfig("tcp", "/dev/shm"));
    m.put("sluice.transport.shm.enabled", "false");
    m.put("sluice.transport.handlerThreads", "1");
    try (Carrier server = new Carrier(Settings.from(TransportConfig.of(m)), NodeIdentity.generate(), holding,
            ControlServices.of(SERVICE, setup), Optional.empty());
        Carrier client = carrier(MessageHandler.REJECT_ALL, ControlServices.none());
        CarrierConnection c = await(client.connect(server.localAddress()))) {
      CompletableFuture<ByteBuffer> held = c.request(message("hold"));
      assertTrue(entered.await(30, TimeUnit.SECONDS));
      assertEquals(9, await(c.control(SERVICE, request(1, ""))).get(0), "set-up waited for the handler");
      release.countDown();
      assertEquals("released", text(await(held)));
    } finally {
      release.countDown();
    }
  }

  @Test
  void blockingRequestsBeyondTheBoundWaitTheirTurnAndAllAreAnswered() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger running = new AtomicInteger();
    AtomicInteger maxRunning = new AtomicInteger();
    ControlService slow = new ControlService() {
      @Override
      public ByteBuffer serve(long peer, java.net.InetAddress address, ByteBuffer request) {
        maxRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
        try {
          release.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        running.decrementAndGet();
        return ByteBuffer.allocate(1).put(0, request.get(0));
      }

      @Override
      public boolean mayBlock() {
        return true;
      }
    };
    try (Carrier server = oneLoopCarrier(MessageHandler.REJECT_ALL, ControlServices.of(SERVICE, slow));
        Carrier client = carrier(MessageHandler.REJECT_ALL, ControlServices.none());
        CarrierConnection c = await(client.connect(server.localAddress()))) {
      int n = 3 * ServerSession.MAX_CONTROLS_IN_FLIGHT;
      java.util.List<CompletableFuture<ByteBuffer>> replies = new java.util.ArrayList<>();
      for (int i = 0; i < n; i++) {
        replies.add(c.control(SERVICE, request(i, "")));
      }
      int atOnce = Math.min(ServerSession.MAX_CONTROLS_IN_FLIGHT, Carrier.SETUP_THREADS);
      TransportTestSupport.eventually("the first calls running", java.time.Duration.ofSeconds(20),
          () -> running.get() == atOnce);
      release.countDown();
      for (int i = 0; i < n; i++) {
        assertEquals(i, await(replies.get(i)).get(0));
      }
      assertEquals(atOnce, maxRunning.get(), "calls running at once");
    }
  }

  @Test
  void carrierWithoutTheServiceRefusesItAndKeepsTheConnection() throws Exception {
    ControlService other = (peer, address, request) -> ByteBuffer.allocate(0);
    try (Carrier server = carrier((peer, request) -> CompletableFuture.completedFuture(message("still here")),
            ControlServices.of(SERVICE + 1, other));
        Carrier client = carrier(MessageHandler.REJECT_ALL, ControlServices.none());
        CarrierConnection c = await(client.connect(server.localAddress()))) {
      assertFailsWith(TransportUnavailableException.class, c.control(SERVICE, request(1, "x")));
      assertTrue(c.isOpen());
      assertEquals("still here", text(await(c.request(message("hi")))));
    }
  }

  @Test
  void serviceIdsAreCheckedWhenRegistered() {
    ControlService s = (peer, address, request) -> request;
    assertThrows(IllegalArgumentException.class, () -> ControlServices.of(0, s));
    assertThrows(IllegalArgumentException.class, () -> ControlServices.of(256, s));
    assertThrows(IllegalArgumentException.class, () -> ControlServices.of(3, s).with(3, s));
    assertEquals(Optional.of(s), ControlServices.of(3, s).with(4, s).get(4));
    assertEquals(Optional.empty(), ControlServices.none().get(3));
  }

  private static ByteBuffer request(int op, String body) {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    return ByteBuffer.allocate(1 + b.length).put((byte) op).put(b).flip();
  }
}
