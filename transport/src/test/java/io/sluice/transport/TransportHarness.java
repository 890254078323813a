package io.sluice.transport;

import static io.sluice.transport.TransportTestSupport.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Opens the transports of one test and checks, when the test ends, that it leaked nothing: every
 * transport reports zero live regions (the test closed all it registered), and after the
 * transports close, the test's own shm folder holds nothing. Each harness gets a fresh shm folder
 * under /dev/shm, so tests never see each other's files or those of other processes.
 *
 * <p>Owned by one test; not thread safe. {@link #close()} closes every transport it opened.
 */
public final class TransportHarness implements AutoCloseable {
  private static final Path SHM_ROOT = Paths.get("/dev/shm");
  /** How long READs still being served may keep a closed region alive before it counts as leaked. */
  private static final Duration DRAIN_DEADLINE = Duration.ofSeconds(5);

  private final String provider;
  private final Map<String, String> providerOptions;
  private final Path shmDir;
  private final List<Path> scratchDirs = new ArrayList<>();
  private final List<Transport> opened = new ArrayList<>();

  public TransportHarness(String provider, Map<String, String> providerOptions) {
    this.provider = provider;
    this.providerOptions = Map.copyOf(providerOptions);
    this.shmDir = createShmDir("");
  }

  public String provider() {
    return provider;
  }

  /** The shm folder every transport of this test uses unless told otherwise. */
  public Path shmDir() {
    return shmDir;
  }

  /** Another fresh folder under /dev/shm (for a peer process), deleted when the harness closes. */
  public Path scratchShmDir(String tag) {
    Path dir = createShmDir(tag + "-");
    scratchDirs.add(dir);
    return dir;
  }

  /** The full configuration map a transport of this test opens with. */
  public Map<String, String> config(Map<String, String> overrides) {
    Map<String, String> m = TransportTestSupport.baseConfig(provider, shmDir.toString());
    m.putAll(providerOptions);
    m.putAll(overrides);
    return m;
  }

  public Transport open(MessageHandler handler) throws TransportException {
    return open(handler, Map.of());
  }

  /** Opens a transport that the harness closes and checks for leaks at the end of the test. */
  public Transport open(MessageHandler handler, Map<String, String> overrides) throws TransportException {
    Transport t = Transports.open(TransportConfig.of(config(overrides)), handler);
    opened.add(t);
    return t;
  }

  /** Connects {@code client} to {@code server} and waits for authentication. */
  public static Connection connect(Transport client, Transport server) {
    return await(client.connect(server.localAddress()));
  }

  /**
   * Checks for leaks, then closes every transport and deletes the shm folders.
   *
   * @throws AssertionError naming every leak found
   */
  @Override
  public void close() {
    List<String> problems = new ArrayList<>();
    for (Transport t : opened) {
      // A region closed while a READ is being served is freed when that READ finishes, so
      // allow in-flight work to drain before calling it a leak.
      try {
        TransportTestSupport.eventually(
            "live regions of " + t.provider() + " transport reach 0", DRAIN_DEADLINE,
            () -> t.liveRegionCount() == 0);
      } catch (AssertionError e) {
        problems.add("transport " + t.localAddress() + " still has " + t.liveRegionCount()
            + " live regions after the test: a region was not closed or not freed");
      }
    }
    for (Transport t : opened) {
      try {
        t.close();
      } catch (RuntimeException e) {
        problems.add("Transport.close() threw " + e);
      }
    }
    for (Transport t : opened) {
      // The close revokes what is left; a region is freed when the selector thread still writing
      // a READ from it lets go, which may be just after close returns.
      try {
        TransportTestSupport.eventually("a closed " + t.provider() + " transport frees its regions", DRAIN_DEADLINE,
            () -> t.liveRegionCount() == 0);
      } catch (AssertionError e) {
        problems.add("closed transport still reports " + t.liveRegionCount() + " live regions");
      }
    }
    List<String> left = entries(shmDir);
    if (!left.isEmpty()) {
      problems.add("shm folder " + shmDir + " not empty after every transport closed: " + left);
    }
    deleteRecursively(shmDir);
    for (Path dir : scratchDirs) {
      deleteRecursively(dir);
    }
    if (!problems.isEmpty()) {
      throw new AssertionError(String.join("\n", problems));
    }
  }

  /** Names in a folder, sorted; empty when it is empty or missing. */
  public static List<String> entries(Path dir) {
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Path createShmDir(String tag) {
    String name = "sluice-test-" + tag + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 1);
    try {
      return Files.createDirectory(SHM_ROOT.resolve(name));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the test shm folder under " + SHM_ROOT, e);
    }
  }

  static void deleteRecursively(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).collect(Collectors.toList())) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete " + dir, e);
    }
  }
}
