package io.sluice.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

/**
 * Static helpers shared by the transport tests: deadlines, future outcomes, configuration maps,
 * random and patterned bytes, and region fill/compare. Every wait here has a deadline, so a
 * provider that hangs fails the test instead of stalling the build. Stateless and thread safe.
 */
public final class TransportTestSupport {
  /** Longest any single operation may take before a test calls it hung. */
  public static final Duration DEADLINE = Duration.ofSeconds(20);

  public static final String SECRET = "contract-test-secret";

  /** Small message bound used by the tests, so size limits are cheap to reach. */
  public static final int MAX_MESSAGE_BYTES = 64 * 1024;

  private TransportTestSupport() {}

  /** Configuration every test transport starts from; providers and tests add to it. */
  public static Map<String, String> baseConfig(String provider, String shmDir) {
    Map<String, String> m = new HashMap<>();
    m.put(TransportOption.PROVIDER.key(), provider);
    m.put(TransportOption.SECRET.key(), SECRET);
    m.put(TransportOption.BIND_HOST.key(), "127.0.0.1");
    m.put(TransportOption.ADVERTISE_HOST.key(), "127.0.0.1");
    m.put(TransportOption.PORT.key(), "0");
    m.put(TransportOption.CONNECT_TIMEOUT_MS.key(), "5000");
    m.put(TransportOption.IO_TIMEOUT_MS.key(), "15000");
    m.put(TransportOption.MAX_MESSAGE_BYTES.key(), Integer.toString(MAX_MESSAGE_BYTES));
    m.put(TransportOption.SHM_DIR.key(), shmDir);
    return m;
  }

  /** Shorthand for building override maps: {@code options(KEY, value, KEY, value...)}. */
  public static Map<String, String> options(Object... keyValues) {
    if (keyValues.length % 2 != 0) {
      throw new IllegalArgumentException("options need key/value pairs");
    }
    Map<String, String> m = new HashMap<>();
    for (int i = 0; i < keyValues.length; i += 2) {
      Object k = keyValues[i];
      String key = k instanceof TransportOption o ? o.key() : k.toString();
      m.put(key, keyValues[i + 1].toString());
    }
    return m;
  }

  /** Waits for a future that must succeed, failing the test on error or deadline. */
  public static <T> T await(CompletableFuture<T> future) {
    return await(future, DEADLINE);
  }

  public static <T> T await(CompletableFuture<T> future, Duration deadline) {
    assertNotNull(future, "operation returned no future");
    try {
      return future.get(deadline.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw new AssertionError("operation failed: " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      throw new AssertionError("operation did not complete within " + deadline);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }

  /** Waits for a future that must fail, and returns the cause it failed with. */
  public static Throwable failureOf(CompletableFuture<?> future) {
    return failureOf(future, DEADLINE);
  }

  public static Throwable failureOf(CompletableFuture<?> future, Duration deadline) {
    assertNotNull(future, "operation returned no future");
    try {
      Object v = future.get(deadline.toMillis(), TimeUnit.MILLISECONDS);
      throw new AssertionError("expected a failure, but the operation completed with " + v);
    } catch (ExecutionException e) {
      return unwrap(e.getCause());
    } catch (CancellationException e) {
      throw new AssertionError("expected a failure, but the future was cancelled", e);
    } catch (TimeoutException e) {
      throw new AssertionError("expected a failure within " + deadline + ", but the operation is still pending");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }

  /** Asserts the future fails (within the deadline) with exactly that type or a subtype of it. */
  public static <T extends Throwable> T assertFailsWith(Class<T> type, CompletableFuture<?> future) {
    Throwable cause = failureOf(future);
    return assertInstanceOf(type, cause, () -> "expected " + type.getSimpleName() + " but got " + describe(cause));
  }

  /**
   * The failure of a future that is already complete: empty when it succeeded, else its cause.
   * For tests that classify many outcomes; the future must be done.
   */
  public static Optional<Throwable> failureIfAny(CompletableFuture<?> future) {
    if (!future.isDone()) {
      throw new AssertionError("future is still pending");
    }
    try {
      future.join();
      return Optional.empty();
    } catch (CompletionException e) {
      return Optional.of(unwrap(e.getCause()));
    } catch (CancellationException e) {
      return Optional.of(e);
    }
  }

  /** Waits until every future is done (successfully or not) or fails the test at the deadline. */
  public static void awaitAllDone(List<? extends CompletableFuture<?>> futures, Duration deadline) {
    CompletableFuture<?> all = CompletableFuture.allOf(futures.toArray(new CompletableFuture<?>[0]));
    try {
      all.get(deadline.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException expected) {
      // some failed; callers classify each one
    } catch (TimeoutException e) {
      long pending = futures.stream().filter(f -> !f.isDone()).count();
      throw new AssertionError(pending + " of " + futures.size() + " futures still pending after " + deadline);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }

  /** Polls a condition until it holds or the deadline passes ({@link Eventually#holds}). */
  public static void eventually(String what, Duration deadline, BooleanSupplier condition) {
    Eventually.holds(what, deadline, condition);
  }

  /**
   * The live threads the carriers of {@code transports} started, told apart by the tag every
   * carrier puts in its threads' names (the low 16 bits of its node id, in hex): the threads of
   * other transports, those still ending after an earlier test and the JVM's own do not count.
   */
  public static List<Thread> carrierThreads(Transport... transports) {
    List<String> tags = Stream.of(transports)
        .map(t -> "-" + HexFormat.of().toHexDigits((short) t.nodeId()) + "-")
        .toList();
    return ProductThreads.named(n -> n.startsWith(ProductThreads.PREFIX) && tags.stream().anyMatch(n::contains));
  }

  public static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }

  public static String describe(Throwable t) {
    return t.getClass().getName() + ": " + t.getMessage();
  }

  /** Strips CompletionException and ExecutionException wrappers. */
  public static Throwable unwrap(Throwable t) {
    Throwable c = t;
    while ((c instanceof CompletionException || c instanceof ExecutionException) && c.getCause() != null) {
      c = c.getCause();
    }
    return c;
  }

  public static byte[] randomBytes(Random random, int length) {
    byte[] b = new byte[length];
    random.nextBytes(b);
    return b;
  }

  /**
   * The byte at {@code index} of the deterministic pattern for {@code seed}; cheap to compute
   * anywhere (including a peer process), and distinct enough that a shifted or swapped range
   * does not compare equal.
   */
  /**
   * The tag of the contract cases that issue many concurrent READs: on soft-iWARP they caught the
   * device replying to short READs across a page boundary with wrong bytes (transport-verbs/README.md,
   * "READ integrity"). The lab runs them on both devices in every boot, and again and again on
   * demand (check siw-stress).
   */
  public static final String READ_STRESS = "read-stress";

  public static byte patternByte(long seed, long index) {
    long x = (index + seed) * 0x9E3779B97F4A7C15L;
    x ^= x >>> 29;
    return (byte) (x ^ (index >>> 8));
  }

  /** Writes the pattern for {@code seed} over the whole region. */
  public static void fillPattern(RegisteredRegion region, long seed) {
    ByteBuffer b = region.buffer();
    int n = b.remaining();
    for (int i = 0; i < n; i++) {
      b.put(i, patternByte(seed, i));
    }
  }

  /** Asserts {@code length} bytes at {@code offset} of {@code region} hold the pattern from {@code patternOffset}. */
  public static void assertPattern(long seed, long patternOffset, RegisteredRegion region, long offset, int length) {
    patternMismatch(seed, patternOffset, region, offset, length).ifPresent(problem -> fail(problem));
  }

  /** Empty when the bytes hold the pattern, else a description of the first difference. */
  public static Optional<String> patternMismatch(long seed, long patternOffset, RegisteredRegion region, long offset, int length) {
    ByteBuffer b = region.buffer();
    int base = Math.toIntExact(offset);
    for (int i = 0; i < length; i++) {
      byte want = patternByte(seed, patternOffset + i);
      byte got = b.get(base + i);
      if (want != got) {
        return Optional.of(String.format(
            "byte %d of a %d-byte range at local offset %d (remote offset %d): want %02x, got %02x",
            i, length, offset, patternOffset, want & 0xff, got & 0xff));
      }
    }
    return Optional.empty();
  }

  /**
   * Where the bytes of {@code region} at {@code offset} (up to 8 of them) came from, for a READ
   * that landed wrong bytes there: the pattern (of the given seeds, over sources of {@code
   * sourceLength} bytes) and offset that holds them, or that none does. Searches every offset of
   * every seed, so it is for failure messages only.
   */
  public static String originOf(RegisteredRegion region, long offset, int length, long[] seeds, long sourceLength) {
    ByteBuffer b = region.buffer();
    int n = Math.min(8, length);
    byte[] got = new byte[n];
    for (int i = 0; i < n; i++) {
      got[i] = b.get(Math.toIntExact(offset + i));
    }
    StringBuilder found = new StringBuilder();
    for (long seed : seeds) {
      for (long at = 0; at + n <= sourceLength; at++) {
        int i = 0;
        while (i < n && patternByte(seed, at + i) == got[i]) {
          i++;
        }
        if (i == n) {
          found.append(found.length() == 0 ? "" : ", ").append("pattern ").append(seed).append(" at ").append(at);
          if (found.length() > 200) {
            return "bytes " + java.util.HexFormat.of().formatHex(got) + " are " + found + ", ...";
          }
        }
      }
    }
    return "bytes " + java.util.HexFormat.of().formatHex(got) + (found.length() == 0 ? " are in no source region"
        : " are " + found);
  }

  /** Copies bytes into a writable region. */
  public static void fill(RegisteredRegion region, long offset, byte[] data) {
    region.buffer().put(Math.toIntExact(offset), data);
  }

  /** Copies bytes out of a region. */
  public static byte[] bytesOf(RegisteredRegion region, long offset, int length) {
    byte[] out = new byte[length];
    region.buffer().get(Math.toIntExact(offset), out);
    return out;
  }

  /** Asserts a region range equals {@code expected[from .. from+length)}. */
  public static void assertRegionEquals(byte[] expected, int from, RegisteredRegion region, long offset, int length) {
    ByteBuffer want = ByteBuffer.wrap(expected, from, length).slice();
    ByteBuffer got = region.buffer().slice(Math.toIntExact(offset), length);
    int at = want.mismatch(got);
    if (at >= 0) {
      fail(String.format("region bytes differ at %d of %d (local offset %d): want %02x, got %02x",
          at, length, offset, want.get(at) & 0xff, got.get(at) & 0xff));
    }
  }

  /** Wraps a string as a message. */
  public static ByteBuffer message(String text) {
    return ByteBuffer.wrap(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
  }

  /** Reads a whole message as a string. */
  public static String text(ByteBuffer message) {
    byte[] b = new byte[message.remaining()];
    message.duplicate().get(b);
    return new String(b, java.nio.charset.StandardCharsets.UTF_8);
  }

  /** The remaining bytes of a buffer, without moving it. */
  public static byte[] bytes(ByteBuffer message) {
    byte[] b = new byte[message.remaining()];
    message.duplicate().get(b);
    return b;
  }

  public static void assertBytes(byte[] expected, ByteBuffer actual) {
    assertEquals(expected.length, actual.remaining(), "message length");
    int at = ByteBuffer.wrap(expected).mismatch(actual.duplicate());
    if (at >= 0) {
      fail("message bytes differ at " + at);
    }
  }
}
