package io.sluice.perf.transport;

import io.sluice.perf.bench.Cli;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.NodeAddress;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The serving JVM of the transport benchmark, started by {@link ServerProcess}. It opens the
 * plain-socket baseline server and, per provider, a transport with one registered region filled
 * with {@link RegionPattern}; it announces them on standard output ({@link ServerEndpoints}) and
 * serves until its standard input closes, so it never outlives the driver.
 *
 * <p>Arguments: {@code REGION_BYTES PROVIDER...}; the secret comes from {@value
 * LoopbackTransports#SECRET_ENV}.
 */
public final class BenchServer {
  private BenchServer() {}

  public static void main(String[] args) {
    Cli.run("benchmark server", () -> {
      run(args);
      return 0;
    });
  }

  private static void run(String[] args) throws IOException {
    if (args.length < 2) {
      throw new IllegalArgumentException("usage: BenchServer REGION_BYTES PROVIDER...");
    }
    int regionBytes = Integer.parseInt(args[0]);
    String secret = System.getenv(LoopbackTransports.SECRET_ENV);
    if (secret == null || secret.isEmpty()) {
      throw new IllegalArgumentException("environment variable " + LoopbackTransports.SECRET_ENV + " is not set");
    }
    ByteBuffer socketSource = ByteBuffer.allocateDirect(regionBytes);
    RegionPattern.fill(socketSource);
    List<Transport> transports = new ArrayList<>();
    List<RegisteredRegion> regions = new ArrayList<>();
    try (StreamServer socket = new StreamServer(LoopbackTransports.HOST, socketSource)) {
      InetSocketAddress sa = socket.address();
      List<String> lines = new ArrayList<>();
      lines.add(ServerEndpoints.socketLine(new NodeAddress(LoopbackTransports.HOST, sa.getPort())));
      for (int i = 1; i < args.length; i++) {
        Transport t = LoopbackTransports.open(args[i], secret, MessageHandler.REJECT_ALL);
        transports.add(t);
        RegisteredRegion region = t.allocate(regionBytes);
        regions.add(region);
        RegionPattern.fill(region.buffer());
        lines.add(ServerEndpoints.regionLine(
            new ServerEndpoints.ServedRegion(args[i], t.localAddress(), region.descriptor())));
      }
      lines.forEach(System.out::println);
      System.out.println(ServerEndpoints.READY);
      System.out.flush();
      waitForEndOfInput(System.in);
    } finally {
      regions.forEach(RegisteredRegion::close);
      transports.forEach(Transport::close);
    }
  }

  private static void waitForEndOfInput(InputStream in) throws IOException {
    byte[] sink = new byte[256];
    while (in.read(sink) >= 0) {
      // the driver writes nothing; end of input is the signal to stop
    }
  }
}
