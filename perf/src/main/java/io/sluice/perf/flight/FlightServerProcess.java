package io.sluice.perf.flight;

import io.sluice.perf.bench.ChildJvm;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The Flight benchmark's second JVM: {@link FlightBenchServer} in a {@link ChildJvm}. {@link
 * #start} returns at once, so the server builds its table while this JVM builds its own; {@link
 * #awaitReady} waits for the announcement of its Flight servers and table; {@link #drop} frees a
 * table a put stored there; {@link #close()} stops it. Extra JVM flags for it (a JFR recording,
 * say) come from the environment variable {@value #SERVER_OPTS_ENV}. Not thread safe.
 */
final class FlightServerProcess implements AutoCloseable {
  static final String SERVER_OPTS_ENV = "SLUICE_FLIGHT_SERVER_OPTS";
  /** Building a 2 GiB table takes a while on a busy 2-core machine. */
  private static final Duration START_DEADLINE = Duration.ofSeconds(180);
  private static final Duration COMMAND_DEADLINE = Duration.ofSeconds(60);
  private static final Duration STOP_DEADLINE = Duration.ofSeconds(30);

  private final ChildJvm jvm;
  private ServerAnnouncement announcement;

  private FlightServerProcess(ChildJvm jvm) {
    this.jvm = jvm;
  }

  /** The server's announcement, waiting for it the first time. */
  ServerAnnouncement awaitReady() throws IOException {
    if (announcement == null) {
      ServerAnnouncement.Parser parser = new ServerAnnouncement.Parser();
      announcement = jvm.await(parser::accept, jvm.deadlineFromStart(START_DEADLINE), "starting");
    }
    return announcement;
  }

  static FlightServerProcess start(FlightBenchOptions o, List<String> providers, String secret) throws IOException {
    List<String> args = new ArrayList<>();
    args.add(Long.toString(o.tableBytes()));
    args.add(Long.toString(o.warmupBytes()));
    args.add(Integer.toString(o.batchRows()));
    args.addAll(providers);
    return new FlightServerProcess(ChildJvm.start(new ChildJvm.Command("Flight benchmark server",
        FlightBenchServer.class, jvmFlags(o.tableBytes()), args, Map.of(LoopbackFlight.SECRET_ENV, secret),
        STOP_DEADLINE)));
  }

  /**
   * Heap and direct-memory limits for the server: the served tables, a table a put stores (a gRPC
   * put's buffers are rounded up by the allocator), gRPC's buffers and the staging and landing
   * memory of the data plane; then the flags of {@value #SERVER_OPTS_ENV}.
   */
  private static List<String> jvmFlags(long tableBytes) {
    List<String> flags = new ArrayList<>();
    flags.add("-Xmx1g");
    flags.add("-XX:MaxDirectMemorySize=" + (4 * tableBytes + (2L << 30)));
    flags.add("-XX:+UseParallelGC");
    flags.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
    String extra = System.getenv(SERVER_OPTS_ENV);
    if (extra != null && !extra.isBlank()) {
      flags.addAll(List.of(extra.trim().split("\\s+")));
    }
    return flags;
  }

  /** Frees the table {@code name} on every server of the process, waiting until it is done. */
  void drop(String name) throws IOException {
    jvm.send(ServerAnnouncement.dropCommand(name));
    jvm.await(line -> ServerAnnouncement.droppedTable(line).filter(name::equals),
        ChildJvm.deadlineFromNow(COMMAND_DEADLINE), "dropping table " + name);
  }

  @Override
  public void close() throws IOException {
    jvm.close();
  }
}
