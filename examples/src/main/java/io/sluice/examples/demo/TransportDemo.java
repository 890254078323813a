package io.sluice.examples.demo;

import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.NodeAddress;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.RemoteDescriptor;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportException;
import io.sluice.transport.Transports;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.zip.CRC32;

/**
 * Moves data between two JVMs with one-sided READs and says what it moved and how fast. The
 * parent starts a child JVM that registers a region filled with random bytes and prints its
 * address, descriptor and checksum; the parent READs the region many times, verifies the
 * checksum of the last pass, and prints provider, data path, bytes and throughput.
 *
 * <pre>java -cp ... io.sluice.examples.demo.TransportDemo [provider] [megabytes]</pre>
 */
public final class TransportDemo {
  private static final int REGION = 8 << 20;
  private static final int BLOCK = 1 << 20;

  private TransportDemo() {}

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("--serve")) {
      serve(args[1], args[2]);
      return;
    }
    String provider = args.length > 0 ? args[0] : "auto";
    long megabytes = args.length > 1 ? Long.parseLong(args[1]) : 2048;
    String secret = HexFormat.of().formatHex(new SecureRandom().generateSeed(16));
    String javaBin = java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process child = new ProcessBuilder(javaBin, "-cp", System.getProperty("java.class.path"),
        TransportDemo.class.getName(), "--serve", provider, secret)
        .redirectError(ProcessBuilder.Redirect.INHERIT).start();
    try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
      String line = out.readLine();
      if (line == null) {
        throw new IllegalStateException("serving JVM exited with " + child.waitFor());
      }
      String[] f = line.split(" ");
      NodeAddress address = NodeAddress.parse(f[0]);
      RemoteDescriptor remote = RemoteDescriptor.fromBytes(HexFormat.of().parseHex(f[1]));
      long expectedCrc = Long.parseLong(f[2]);
      fetch(provider, secret, address, remote, expectedCrc, megabytes);
    } finally {
      child.destroy();
      child.waitFor(10, TimeUnit.SECONDS);
    }
  }

  private static Map<String, String> config(String provider, String secret) {
    return Map.of("sluice.transport.provider", provider, "sluice.transport.secret", secret,
        "sluice.transport.bindHost", "127.0.0.1");
  }

  private static void serve(String provider, String secret) throws Exception {
    try (Transport t = Transports.open(TransportConfig.of(config(provider, secret)), MessageHandler.REJECT_ALL);
         RegisteredRegion region = t.allocate(REGION)) {
      byte[] data = new byte[REGION];
      new SecureRandom().nextBytes(data);
      region.buffer().put(data);
      CRC32 crc = new CRC32();
      crc.update(data);
      System.out.println(t.localAddress() + " " + HexFormat.of().formatHex(region.descriptor().toBytes()) + " " + crc.getValue());
      System.out.flush();
      System.in.read(); // serve until the parent closes our stdin or kills us
    }
  }

  private static void fetch(String provider, String secret, NodeAddress address, RemoteDescriptor remote,
      long expectedCrc, long megabytes) throws TransportException, InterruptedException, ExecutionException, TimeoutException {
    try (Transport t = Transports.open(TransportConfig.of(config(provider, secret)), MessageHandler.REJECT_ALL);
         RegisteredRegion dest = t.allocate(REGION);
         Connection c = t.connect(address).get(30, TimeUnit.SECONDS)) {
      long blocks = Math.max(REGION / BLOCK, megabytes * (1 << 20) / BLOCK);
      ArrayDeque<CompletableFuture<Void>> inFlight = new ArrayDeque<>();
      long start = System.nanoTime();
      for (long i = 0; i < blocks; i++) {
        int off = (int) ((i % (REGION / BLOCK)) * BLOCK);
        inFlight.add(c.readBatch(List.of(new io.sluice.transport.ReadRequest(remote, off, dest, off, BLOCK))).get(0));
        if (inFlight.size() >= 8) {
          inFlight.poll().get(30, TimeUnit.SECONDS);
        }
      }
      while (!inFlight.isEmpty()) {
        inFlight.poll().get(30, TimeUnit.SECONDS);
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      byte[] copy = new byte[REGION];
      dest.buffer().get(copy);
      CRC32 crc = new CRC32();
      crc.update(copy);
      long bytes = blocks * BLOCK;
      System.out.printf("Sluice transport demo: provider %s, data path %s, peer %s%n", t.provider(), c.dataPath(), address);
      System.out.printf("moved %,d bytes in %,d READs of %d KiB (8 in flight) in %.2f s: %.2f GB/s; checksum %s%n",
          bytes, blocks, BLOCK >> 10, seconds, bytes / seconds / 1e9, crc.getValue() == expectedCrc ? "ok" : "MISMATCH");
      if (crc.getValue() != expectedCrc) {
        throw new IllegalStateException("data read does not match the data served");
      }
    }
  }
}
