package io.sluice.perf.transport;

import io.sluice.perf.bench.ChildJvm;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The transport benchmark's second JVM: {@link BenchServer} in a {@link ChildJvm}. {@link #start}
 * returns once the server has announced its endpoints; {@link #close()} stops it. Not thread safe.
 */
final class ServerProcess implements AutoCloseable {
  private static final Duration START_DEADLINE = Duration.ofSeconds(60);
  private static final Duration STOP_DEADLINE = Duration.ofSeconds(15);

  private final ChildJvm jvm;
  private final ServerEndpoints endpoints;

  private ServerProcess(ChildJvm jvm, ServerEndpoints endpoints) {
    this.jvm = jvm;
    this.endpoints = endpoints;
  }

  ServerEndpoints endpoints() {
    return endpoints;
  }

  static ServerProcess start(int regionBytes, List<String> providers, String secret) throws IOException {
    List<String> args = new ArrayList<>();
    args.add(Integer.toString(regionBytes));
    args.addAll(providers);
    // Heap and direct-memory limits: the served regions and the socket baseline's source.
    List<String> flags = List.of("-Xmx256m", "-XX:MaxDirectMemorySize=" + Math.max(1L << 30, 4L * regionBytes),
        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
    ChildJvm jvm = ChildJvm.start(new ChildJvm.Command("benchmark server", BenchServer.class, flags, args,
        Map.of(LoopbackTransports.SECRET_ENV, secret), STOP_DEADLINE));
    try {
      ServerEndpoints.Parser parser = new ServerEndpoints.Parser();
      return new ServerProcess(jvm, jvm.await(parser::accept, jvm.deadlineFromStart(START_DEADLINE), "starting"));
    } catch (IOException | RuntimeException e) {
      try {
        jvm.close();
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  @Override
  public void close() throws IOException {
    jvm.close();
  }
}
