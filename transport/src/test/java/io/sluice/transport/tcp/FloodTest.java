package io.sluice.transport.tcp;

import static io.sluice.transport.TransportTestSupport.await;
import static io.sluice.transport.TransportTestSupport.fillPattern;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sluice.transport.Connection;
import io.sluice.transport.Eventually;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportHarness;
import io.sluice.transport.TransportOption;
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.carrier.Carrier;
import io.sluice.transport.carrier.Settings;
import io.sluice.transport.crypto.NodeIdentity;
import io.sluice.transport.wire.FrameHeader;
import io.sluice.transport.wire.FrameType;
import io.sluice.transport.wire.Frames;
import io.sluice.transport.wire.RawFrameSocket;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The serving side at cluster scale and under a flood, on loopback: 2,000 authenticated peers
 * sit idle while 5,000 unauthenticated sockets arrive from 16 loopback addresses (silent, half a
 * header, or a HELLO and then nothing), at most {@link #FLOOD_OPEN} open at a time. A legitimate
 * peer keeps READing throughout, every one of {@link #LEGIT_CONNECTS} new legitimate connections
 * spread over the flood gets in with one connect call, the server's threads stay
 * the fixed set, and unauthenticated connections stay within their bound. Prints the figures.
 *
 * <p>File descriptors: both ends live in this JVM, so it needs about 2 x (idle + flood) of them.
 * HotSpot raises its soft limit to the hard one at start; if that is still too low, the idle
 * peers are scaled down to fit and the test says so.
 */
class FloodTest {
  private static final int IDLE_PEERS = 2000;
  private static final int FLOOD_SOCKETS = 5000;
  private static final int FLOOD_OPEN = 600;
  private static final int FLOOD_ADDRESSES = 16;
  /** New legitimate connections made during the flood, spread over it. */
  private static final int LEGIT_CONNECTS = 17;
  private static final int REGION = 1 << 20;
  private static final int READ = 64 * 1024;

  private final TransportHarness harness = new TransportHarness("tcp",
      Map.of(TransportOption.SHM_ENABLED.key(), "false"));
  private final List<AutoCloseable> sockets = new ArrayList<>();

  @AfterEach
  void close() {
    for (AutoCloseable s : sockets) {
      try {
        s.close();
      } catch (Exception ignored) {
        // test clean-up
      }
    }
    harness.close();
  }

  private static long fdLimit() {
    return ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean u
        ? u.getMaxFileDescriptorCount() : Long.MAX_VALUE;
  }

  private static int serverThreads(Transport server) {
    return TransportTestSupport.carrierThreads(server).size();
  }

  @Test
  void idlePeersAndAnUnauthenticatedFloodLeaveReadsWorkingOnAFixedSetOfThreads() throws Exception {
    long limit = fdLimit();
    int idle = (int) Math.min(IDLE_PEERS, (limit - 2L * FLOOD_OPEN - 300) / 2);
    System.out.printf("flood test: file descriptor limit %d, %d idle peers%s%n", limit, idle,
        idle < IDLE_PEERS ? " (scaled down to fit the limit)" : "");
    assumeTrue(idle >= 100, "file descriptor limit " + limit + " is too low for this test");

    Transport server = harness.open(MessageHandler.REJECT_ALL,
        Map.of(TransportOption.HANDSHAKE_TIMEOUT_MS.key(), "1000"));
    Carrier tcp = ((TcpTransport) server).carrier();
    Settings settings = tcp.settings();
    Transport client = harness.open(MessageHandler.REJECT_ALL);
    try (RegisteredRegion src = server.allocate(REGION); RegisteredRegion dst = client.allocate(READ)) {
      fillPattern(src, 7);
      Connection legit = TransportHarness.connect(client, server);
      await(legit.read(src.descriptor(), 0, dst, 0, READ));
      // Both transports' threads, by name: the JVM's own come and go on their own.
      int threadsBefore = TransportTestSupport.carrierThreads(server, client).size();

      long t0 = System.nanoTime();
      List<RawFrameSocket> idlePeers = new ArrayList<>(idle);
      for (int i = 0; i < idle; i++) {
        RawFrameSocket peer = new RawFrameSocket(server.localAddress());
        sockets.add(peer);
        assertEquals(Optional.of(FrameType.AUTH_OK),
            peer.authenticate(TransportTestSupport.SECRET, NodeIdentity.generate()).map(RawFrameSocket.Frame::type));
        idlePeers.add(peer);
      }
      System.out.printf("flood test: %d idle peers authenticated in %d ms; server threads %d%n", idle,
          (System.nanoTime() - t0) / 1_000_000, serverThreads(server));

      Reader reader = new Reader(legit, src, dst);
      Thread readerThread = new Thread(reader, "legitimate-reader");
      readerThread.start();
      Flood flood = new Flood(server, client, tcp);
      int legitAttempts = flood.run(() -> TransportHarness.connect(client, server));
      reader.stop = true;
      readerThread.join(TransportTestSupport.DEADLINE.toMillis());

      long[] lat = reader.latencies();
      System.out.printf("flood test: %d flood sockets opened (%d refused at connect) in %d ms; max %d"
              + " unauthenticated held (bound %d); server threads max %d (%s), both transports' threads max %d (%d"
              + " before the idle peers)%n",
          flood.opened, flood.refused, flood.millis, flood.maxUnauthenticated, settings.maxUnauthenticated(),
          flood.maxServerThreads, "1 acceptor, " + settings.ioThreads() + " selectors, 1 timer, up to "
              + settings.handlerThreads() + " handlers and " + Carrier.PROOF_THREADS + " proof threads",
          flood.maxTransportThreads, threadsBefore);
      System.out.printf("flood test: legitimate READs of 64 KiB during the flood: %d, p50 %.2f ms, p99 %.2f ms,"
              + " max %.2f ms; new legitimate connections: %d of %d made%n",
          lat.length, pct(lat, 0.5), pct(lat, 0.99), lat.length == 0 ? 0 : lat[lat.length - 1] / 1e6,
          legitAttempts - flood.failedConnects.size(), legitAttempts);

      assertEquals(Optional.empty(), Optional.ofNullable(reader.failure), "a legitimate READ failed");
      assertEquals(LEGIT_CONNECTS, legitAttempts);
      assertEquals(List.of(), flood.failedConnects, "new legitimate connections failed during the flood");
      assertTrue(lat.length > 0, "no legitimate READ completed during the flood");
      assertEquals(FLOOD_SOCKETS, flood.opened + flood.refused);
      assertTrue(flood.maxUnauthenticated <= settings.maxUnauthenticated(), "unauthenticated bound exceeded");
      int fixed = 1 + settings.ioThreads() + 1 + settings.handlerThreads() + Carrier.PROOF_THREADS;
      assertTrue(flood.maxServerThreads <= fixed, "server threads " + flood.maxServerThreads + " > " + fixed);
      assertTrue(flood.maxTransportThreads - threadsBefore <= 8,
          "the transports grew from " + threadsBefore + " to " + flood.maxTransportThreads + " threads");

      // The idle peers are still served, and the flood left nothing behind.
      for (int i = 0; i < idle; i += Math.max(1, idle / 20)) {
        RawFrameSocket peer = idlePeers.get(i);
        java.nio.ByteBuffer read = java.nio.ByteBuffer.allocate(Frames.ReadRequestFrame.LENGTH);
        new Frames.ReadRequestFrame(src.descriptor().key(), 0, 64).encode(read);
        peer.send(FrameType.READ_REQUEST, i + 1, read.flip());
        RawFrameSocket.Frame f = peer.expect(FrameType.READ_RESPONSE);
        assertEquals(i + 1, f.header().correlationId());
        assertEquals(64, f.payload().length);
      }
      // The idle peers and the reader's connection: the server ends the others as it sees them close.
      Eventually.holds("flood connections closed",
          () -> tcp.unauthenticatedCount() == 0 && tcp.sessionCount() == idle + 1);
      legit.close();
    }
  }

  private static double pct(long[] sorted, double p) {
    return sorted.length == 0 ? 0 : sorted[(int) Math.min(sorted.length - 1, p * sorted.length)] / 1e6;
  }

  /** Reads 64 KiB at a time from the legitimate connection until stopped, checking the bytes. */
  private static final class Reader implements Runnable {
    private final Connection c;
    private final RegisteredRegion src;
    private final RegisteredRegion dst;
    private final List<Long> nanos = new ArrayList<>();
    volatile boolean stop;
    volatile Throwable failure;

    Reader(Connection c, RegisteredRegion src, RegisteredRegion dst) {
      this.c = c;
      this.src = src;
      this.dst = dst;
    }

    @Override
    public void run() {
      try {
        for (long off = 0; !stop; off = (off + READ) % REGION) {
          long t = System.nanoTime();
          await(c.read(src.descriptor(), off, dst, 0, READ));
          long took = System.nanoTime() - t;
          TransportTestSupport.assertPattern(7, off, dst, 0, READ);
          synchronized (nanos) {
            nanos.add(took);
          }
        }
      } catch (Throwable e) {
        failure = e;
      }
    }

    long[] latencies() {
      synchronized (nanos) {
        long[] a = nanos.stream().mapToLong(Long::longValue).toArray();
        Arrays.sort(a);
        return a;
      }
    }
  }

  /** The unauthenticated flood: bounded in count and in sockets open at once; stops by itself. */
  private final class Flood {
    private final Transport server;
    private final Transport client;
    private final Carrier tcp;
    int opened;
    int refused;
    long millis;
    int maxUnauthenticated;
    int maxServerThreads;
    int maxTransportThreads;
    final List<String> failedConnects = new ArrayList<>();

    Flood(Transport server, Transport client, Carrier tcp) {
      this.server = server;
      this.client = client;
      this.tcp = tcp;
    }

    /**
     * Floods; every {@code FLOOD_SOCKETS / LEGIT_CONNECTS} sockets, makes one new legitimate
     * connection with {@code legit} (one connect call each; the transport may retry inside it).
     *
     * @return the legitimate connects made
     */
    int run(java.util.function.Supplier<Connection> legit) throws IOException {
      long start = System.nanoTime();
      long deadline = start + Duration.ofSeconds(90).toNanos();
      ArrayDeque<Socket> open = new ArrayDeque<>();
      int attempts = 0;
      byte[] hello = new FrameHeader(FrameType.HELLO, Frames.Hello.LENGTH, 0).toBuffer().array();
      try {
        for (int i = 0; i < FLOOD_SOCKETS && System.nanoTime() < deadline; i++) {
          InetAddress from = InetAddress.getByAddress(new byte[] {127, 0, 1, (byte) (1 + i % FLOOD_ADDRESSES)});
          Socket s = new Socket();
          try {
            s.bind(new InetSocketAddress(from, 0));
            s.connect(new InetSocketAddress(server.localAddress().host(), server.localAddress().port()), 2000);
            switch (i % 3) {
              case 1 -> s.getOutputStream().write(hello, 0, 8); // half a header, then nothing
              case 2 -> s.getOutputStream().write(hello); // a HELLO header without its payload
              default -> { } // silent
            }
            open.add(s);
            opened++;
          } catch (IOException e) {
            s.close();
            refused++;
          }
          if (open.size() > FLOOD_OPEN) {
            open.poll().close();
          }
          if (i % 100 == 0) {
            sample();
          }
          if (i % (FLOOD_SOCKETS / LEGIT_CONNECTS) == FLOOD_SOCKETS / LEGIT_CONNECTS / 2) {
            attempts++;
            try {
              legit.get().close();
            } catch (AssertionError | RuntimeException e) {
              failedConnects.add(e.toString());
            }
          }
        }
      } finally {
        sample();
        millis = (System.nanoTime() - start) / 1_000_000;
        for (Socket s : open) {
          s.close();
        }
      }
      return attempts;
    }

    private void sample() {
      maxUnauthenticated = Math.max(maxUnauthenticated, tcp.unauthenticatedCount());
      maxServerThreads = Math.max(maxServerThreads, serverThreads(server));
      maxTransportThreads = Math.max(maxTransportThreads, TransportTestSupport.carrierThreads(server, client).size());
    }
  }
}
