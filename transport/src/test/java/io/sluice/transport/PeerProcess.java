package io.sluice.transport;

import java.io.IOException;
import java.io.InputStream;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;

/**
 * A peer in its own JVM, for tests that kill a process mid-transfer. Arguments are {@code
 * key=value} transport options plus {@code peer.regionBytes} and {@code peer.seed}. It opens a
 * transport, allocates a region filled with {@link TransportTestSupport#patternByte}, prints one
 * line {@code PEER <host:port> <descriptor hex>} on stdout, and serves until killed, until its
 * stdin closes (the test JVM went away) or for at most two minutes.
 */
public final class PeerProcess {
  static final String READY_PREFIX = "PEER ";
  static final String REGION_BYTES = "peer.regionBytes";
  static final String SEED = "peer.seed";

  private PeerProcess() {}

  public static void main(String[] args) throws IOException, InterruptedException {
    Map<String, String> options = new HashMap<>();
    for (String a : args) {
      int eq = a.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("expected key=value, got " + a);
      }
      options.put(a.substring(0, eq), a.substring(eq + 1));
    }
    int regionBytes = Integer.parseInt(options.remove(REGION_BYTES));
    long seed = Long.parseLong(options.remove(SEED));
    MessageHandler echo = (peer, request) -> {
      java.nio.ByteBuffer copy = java.nio.ByteBuffer.allocate(request.remaining());
      copy.put(request).flip();
      return java.util.concurrent.CompletableFuture.completedFuture(copy);
    };
    try (Transport t = Transports.open(TransportConfig.of(options), echo);
        RegisteredRegion region = t.allocate(regionBytes)) {
      TransportTestSupport.fillPattern(region, seed);
      System.out.println(READY_PREFIX + t.localAddress() + " "
          + HexFormat.of().formatHex(region.descriptor().toBytes()));
      System.out.flush();
      waitForStdinToClose(120_000);
    }
  }

  private static void waitForStdinToClose(long maxMillis) throws InterruptedException {
    Thread watcher = new Thread(() -> {
      InputStream in = System.in;
      try {
        while (in.read() >= 0) {
          // discard; only end of stream matters
        }
      } catch (IOException e) {
        // treat as closed
      }
    }, "stdin-watcher");
    watcher.setDaemon(true);
    watcher.start();
    watcher.join(maxMillis);
  }
}
