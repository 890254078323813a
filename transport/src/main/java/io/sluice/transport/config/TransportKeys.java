package io.sluice.transport.config;

import io.sluice.transport.SecretKeys;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Every configuration key of the transport, declared once with its kind, default and checks. The
 * transport reads these; integrations that pass settings to the transport (Spark, Hadoop, Flight)
 * validate them with the same declarations, so a value the transport would refuse is refused where
 * it is first read. {@link io.sluice.transport.TransportOption} names the same keys for callers that
 * use the untyped accessors of {@link io.sluice.transport.TransportConfig}.
 */
public final class TransportKeys {
  /** The prefix every transport key starts with. */
  public static final String PREFIX = "sluice.transport.";

  public static final ConfigKey<String> PROVIDER = ConfigKey.of(PREFIX + "provider", "auto",
      "auto, tcp, shm or verbs. auto: verbs when its native library loads and a device is active,"
          + " else tcp; same-host peers read through shm.",
      Parsers.choice("auto", "tcp", "shm", "verbs"));
  public static final ConfigKey<String> SECRET = ConfigKey.secret(PREFIX + "secret",
      "Shared secret every peer holds: it authenticates peers and keys their connections, never sent. Required;"
          + " at least 16 bytes (128 bits) of random, e.g. `openssl rand -base64 32`.",
      v -> v.isEmpty() ? Optional.empty() : SecretKeys.problem(v));
  public static final ConfigKey<String> BIND_HOST = ConfigKey.of(PREFIX + "bindHost", "0.0.0.0",
      "Address the listener binds.", Parsers.string());
  public static final ConfigKey<String> ADVERTISE_HOST = ConfigKey.of(PREFIX + "advertiseHost", "",
      "Host peers connect to; empty means the bind host, or this machine's address when binding all interfaces.",
      Parsers.string());
  public static final ConfigKey<Integer> PORT = ConfigKey.of(PREFIX + "port", "0",
      "Listener port; 0 picks a free one.", Parsers.integer(), Check.between(0, 65535));
  public static final ConfigKey<Long> CONNECT_TIMEOUT_MS = ConfigKey.of(PREFIX + "connectTimeoutMs", "10000",
      "Deadline for connecting and authenticating, retries included: a connection the peer closes or resets"
          + " before the handshake ends is tried again after 20 ms, 40 ms, ... up to 1 s between tries; a refused"
          + " connect (nothing listens) and a failed authentication are not.", Parsers.duration(TimeUnit.MILLISECONDS), Check.positive());
  public static final ConfigKey<Long> IO_TIMEOUT_MS = ConfigKey.of(PREFIX + "ioTimeoutMs", "30000",
      "Deadline for each READ and request, and for a stalled socket write.",
      Parsers.duration(TimeUnit.MILLISECONDS), Check.positive());
  public static final ConfigKey<Long> MAX_MESSAGE_BYTES = ConfigKey.of(PREFIX + "maxMessageBytes", "16777216",
      "Largest request or response message.", Parsers.bytes(), Check.between(1, Integer.MAX_VALUE));
  public static final ConfigKey<Long> MAX_QUEUED_REQUEST_BYTES = ConfigKey.of(PREFIX + "maxQueuedRequestBytes", "0",
      "Request bytes all peers together may have read and waiting for or in a handler (each peer at most"
          + " 4 x maxMessageBytes); past it reading requests pauses until answers return memory, which goes to the"
          + " waiting connections in the order they came; a connection is never closed for waiting. 0: a quarter of"
          + " the heap, at least 4 x maxMessageBytes.", Parsers.bytes(), Check.notNegative());
  public static final ConfigKey<Integer> MAX_REQUESTS_IN_FLIGHT = ConfigKey.of(PREFIX + "maxRequestsInFlight", "64",
      "Requests one connection may have outstanding; more wait at the sender (flow control).",
      Parsers.integer(), Check.positive());
  public static final ConfigKey<Integer> HANDLER_THREADS = ConfigKey.of(PREFIX + "handlerThreads", "4",
      "Threads that run message handlers.", Parsers.integer(), Check.positive());
  public static final ConfigKey<Integer> IO_THREADS = ConfigKey.of(PREFIX + "ioThreads", "2",
      "tcp: selector threads that serve every connection, accepted (handshakes, READs, requests) or made (answers).",
      Parsers.integer(), Check.positive());
  public static final ConfigKey<Integer> MAX_CONNECTIONS = ConfigKey.of(PREFIX + "maxConnections", "4096",
      "tcp: authenticated connections held at once; past it a new one, once authenticated, takes the place of one idle for idleTimeoutMs, or is refused.", Parsers.integer(), Check.positive());
  public static final ConfigKey<Long> IDLE_TIMEOUT_MS = ConfigKey.of(PREFIX + "idleTimeoutMs", "60000",
      "tcp: at the maxConnections bound, an authenticated connection that has carried nothing for this long"
          + " (no frame either way, nothing in flight) is closed to make room for a new one; its peer"
          + " connects again when it next needs to.",
      Parsers.duration(TimeUnit.MILLISECONDS), Check.positive());
  public static final ConfigKey<Long> HANDSHAKE_TIMEOUT_MS = ConfigKey.of(PREFIX + "handshakeTimeoutMs", "3000",
      "tcp: deadline for an accepted connection to authenticate.",
      Parsers.duration(TimeUnit.MILLISECONDS), Check.positive());
  public static final ConfigKey<Integer> MAX_UNAUTHENTICATED = ConfigKey.of(PREFIX + "maxUnauthenticated", "256",
      "tcp: accepted connections not yet authenticated; at the bound a random one is dropped for a new one, first among those that have not sent their HELLO.",
      Parsers.integer(), Check.positive());
  public static final ConfigKey<Integer> MAX_UNAUTHENTICATED_PER_ADDRESS = ConfigKey.of(
      PREFIX + "maxUnauthenticatedPerAddress", "32",
      "tcp: of those, from one source network (an IPv4 /24, an IPv6 /64); beyond it a new one from that network pushes out one of the network's own waiting ones (silent ones first).",
      Parsers.integer(), Check.positive());
  public static final ConfigKey<Boolean> ENCRYPTION = ConfigKey.of(PREFIX + "encryption", "false",
      "Encrypt every tcp frame (READ bodies, messages, set-up) with AES-GCM under keys from the handshake;"
          + " a connection is encrypted when either side sets it. shm is unaffected; verbs is skipped"
          + " unless encryption.dataAtRest.",
      Parsers.bool());
  public static final ConfigKey<String> ENCRYPTION_ENGINE = ConfigKey.of(PREFIX + "encryption.engine", "auto",
      "What seals and opens AES-GCM records: auto, openssl or jdk. auto: OpenSSL's libcrypto when the"
          + " transport's native library loads it and it passes a self-check at open, else the JDK's; openssl"
          + " fails the open when it cannot be used. The wire is the same either way. With auto, the system"
          + " property of the same name, when set, decides instead.",
      Parsers.choice("auto", "openssl", "jdk"));
  public static final ConfigKey<Boolean> DATA_ENCRYPTED_AT_REST = ConfigKey.of(PREFIX + "encryption.dataAtRest",
      "false",
      "The bytes served are already ciphertext (Spark: spark.io.encryption.enabled), so with encryption on"
          + " verbs may still carry READs.",
      Parsers.bool());
  public static final ConfigKey<String> SHM_DIR = ConfigKey.of(PREFIX + "shm.dir", "/dev/shm",
      "Where shm regions live; at start, this user's folders whose owner lock no process holds are removed, in the background.",
      Parsers.string());
  public static final ConfigKey<Boolean> SHM_ENABLED = ConfigKey.of(PREFIX + "shm.enabled", "true",
      "With provider auto: read same-host peers through shared memory.", Parsers.bool());
  public static final ConfigKey<Boolean> SHM_SEALED = ConfigKey.of(PREFIX + "shm.sealed", "true",
      "Allocated shm regions are sealed memfds, which no process can shorten under a reader, where libsluice-shm.so"
          + " loads and the kernel makes them; false, or where not: files in shm.dir.", Parsers.bool());
  public static final ConfigKey<List<Path>> SHM_TRUSTED_FILE_ROOTS = ConfigKey.of(PREFIX + "shm.trustedFileRoots",
      "", "Folders (comma-separated) below which peers' registered files are mapped too: a file is mapped only if it"
          + " is a regular file of this user, reached without links through folders of this user that nobody else"
          + " may write to. Files elsewhere are READ over the carrier.",
      Parsers.absolutePaths());

  private static final List<ConfigKey<?>> ALL = List.of(PROVIDER, SECRET, BIND_HOST, ADVERTISE_HOST, PORT,
      CONNECT_TIMEOUT_MS, IO_TIMEOUT_MS, MAX_MESSAGE_BYTES, MAX_QUEUED_REQUEST_BYTES, MAX_REQUESTS_IN_FLIGHT, HANDLER_THREADS, IO_THREADS,
      MAX_CONNECTIONS, IDLE_TIMEOUT_MS, HANDSHAKE_TIMEOUT_MS, MAX_UNAUTHENTICATED, MAX_UNAUTHENTICATED_PER_ADDRESS, ENCRYPTION,
      ENCRYPTION_ENGINE, DATA_ENCRYPTED_AT_REST, SHM_DIR, SHM_ENABLED, SHM_SEALED, SHM_TRUSTED_FILE_ROOTS);

  private TransportKeys() {}

  /** Every transport key, in the order of the README's table. */
  public static List<ConfigKey<?>> all() {
    return ALL;
  }

  /** The part of a transport key after {@link #PREFIX}. @throws IllegalArgumentException for another key */
  public static String suffix(String key) {
    if (!key.startsWith(PREFIX)) {
      throw new IllegalArgumentException(key + " is not a transport key (" + PREFIX + "*)");
    }
    return key.substring(PREFIX.length());
  }

  /**
   * Reads every transport key of {@code source} with its parser and checks, so a value the
   * transport would refuse is refused here. @throws IllegalArgumentException naming the first bad key and its value
   */
  public static void validate(ConfigSource source) {
    for (ConfigKey<?> k : ALL) {
      k.from(source);
    }
  }
}
