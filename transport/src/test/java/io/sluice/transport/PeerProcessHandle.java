package io.sluice.transport;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A running {@link PeerProcess} child JVM: its address and region descriptor, and a way to kill
 * it. Its stderr goes to a temporary log that failure messages quote. Closing kills the child if
 * it still runs and deletes the log. Owned by one test thread.
 */
public final class PeerProcessHandle implements AutoCloseable {
  private static final long START_DEADLINE_MS = 60_000;

  private final Process process;
  private final Path log;
  private final NodeAddress address;
  private final RemoteDescriptor descriptor;

  private PeerProcessHandle(Process process, Path log, NodeAddress address, RemoteDescriptor descriptor) {
    this.process = process;
    this.log = log;
    this.address = address;
    this.descriptor = descriptor;
  }

  /** Starts the child with these transport options and waits for its ready line. */
  public static PeerProcessHandle start(Map<String, String> options, int regionBytes, long seed)
      throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx256m");
    cmd.add("-XX:+UseSerialGC");
    cmd.add("-XX:TieredStopAtLevel=1");
    for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (arg.startsWith("--add-opens") || arg.startsWith("--add-exports")
          || arg.startsWith("--enable-native-access") || arg.startsWith("-Djava.library.path")) {
        cmd.add(arg);
      }
    }
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(PeerProcess.class.getName());
    options.forEach((k, v) -> cmd.add(k + "=" + v));
    cmd.add(PeerProcess.REGION_BYTES + "=" + regionBytes);
    cmd.add(PeerProcess.SEED + "=" + seed);

    Path log = Files.createTempFile("sluice-peer-", ".log");
    Process p = new ProcessBuilder(cmd).redirectError(log.toFile()).start();
    CompletableFuture<String> ready = new CompletableFuture<>();
    Thread reader = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = r.readLine()) != null) {
          if (line.startsWith(PeerProcess.READY_PREFIX)) {
            ready.complete(line);
          }
        }
        ready.completeExceptionally(new IOException("peer exited before it was ready"));
      } catch (IOException e) {
        ready.completeExceptionally(e);
      }
    }, "peer-stdout");
    reader.setDaemon(true);
    reader.start();
    try {
      String[] parts = ready.get(START_DEADLINE_MS, TimeUnit.MILLISECONDS).split(" ");
      NodeAddress address = NodeAddress.parse(parts[1]);
      RemoteDescriptor d = RemoteDescriptor.fromBytes(HexFormat.of().parseHex(parts[2]));
      return new PeerProcessHandle(p, log, address, d);
    } catch (ExecutionException | TimeoutException | RuntimeException e) {
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
      String tail = tail(log);
      Files.deleteIfExists(log);
      throw new AssertionError("peer process did not start: " + e + "\n--- peer stderr ---\n" + tail, e);
    }
  }

  public NodeAddress address() {
    return address;
  }

  public RemoteDescriptor descriptor() {
    return descriptor;
  }

  /** Sends SIGKILL and waits for the process to be gone. */
  public void kill() throws InterruptedException {
    process.destroyForcibly();
    if (!process.waitFor(20, TimeUnit.SECONDS)) {
      throw new AssertionError("peer process survived SIGKILL");
    }
  }

  /** The end of the child's stderr, for failure messages. */
  public String logTail() {
    return tail(log);
  }

  @Override
  public void close() throws IOException, InterruptedException {
    try {
      if (process.isAlive()) {
        process.destroyForcibly();
        process.waitFor(20, TimeUnit.SECONDS);
      }
    } finally {
      Files.deleteIfExists(log);
    }
  }

  private static String tail(Path log) {
    try {
      String s = Files.readString(log, StandardCharsets.UTF_8);
      return s.length() > 4000 ? s.substring(s.length() - 4000) : s;
    } catch (IOException e) {
      return "(log unreadable: " + e + ")";
    }
  }
}
