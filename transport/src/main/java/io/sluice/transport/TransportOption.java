package io.sluice.transport;

/**
 * Every configuration key of the transport with its default. This enum is the one list; the
 * README's table is generated from the same names. Integrations prefix nothing: Spark passes
 * {@code spark.shuffle.rdma.transport.*} through as {@code sluice.transport.*}, Hadoop and Flight
 * pass their own settings the same way.
 */
public enum TransportOption {
  PROVIDER("sluice.transport.provider", "auto",
      "auto, tcp, shm or verbs. auto: verbs when its native library loads and a device is active,"
          + " else tcp; same-host peers read through shm."),
  SECRET("sluice.transport.secret", "",
      "Shared secret for mutual challenge-response authentication. Required; never sent."),
  BIND_HOST("sluice.transport.bindHost", "0.0.0.0", "Address the listener binds."),
  ADVERTISE_HOST("sluice.transport.advertiseHost", "",
      "Host peers connect to; empty means the bind host, or this machine's address when binding all interfaces."),
  PORT("sluice.transport.port", "0", "Listener port; 0 picks a free one."),
  CONNECT_TIMEOUT_MS("sluice.transport.connectTimeoutMs", "10000",
      "Deadline for connecting and authenticating."),
  IO_TIMEOUT_MS("sluice.transport.ioTimeoutMs", "30000",
      "Deadline for each READ and request, and for a stalled socket write."),
  MAX_MESSAGE_BYTES("sluice.transport.maxMessageBytes", "16777216",
      "Largest request or response message."),
  MAX_REQUESTS_IN_FLIGHT("sluice.transport.maxRequestsInFlight", "64",
      "Requests one connection may have outstanding; more wait at the sender (flow control)."),
  HANDLER_THREADS("sluice.transport.handlerThreads", "4", "Threads that run message handlers."),
  IO_THREADS("sluice.transport.ioThreads", "2",
      "tcp: selector threads that serve every connection, accepted (handshakes, READs, requests) or made (answers)."),
  MAX_CONNECTIONS("sluice.transport.maxConnections", "4096",
      "tcp: accepted connections held at once; more are refused."),
  HANDSHAKE_TIMEOUT_MS("sluice.transport.handshakeTimeoutMs", "3000",
      "tcp: deadline for an accepted connection to authenticate."),
  MAX_UNAUTHENTICATED("sluice.transport.maxUnauthenticated", "256",
      "tcp: accepted connections not yet authenticated; at the bound the oldest is dropped for a new one."),
  MAX_UNAUTHENTICATED_PER_ADDRESS("sluice.transport.maxUnauthenticatedPerAddress", "32",
      "tcp: of those, from one source address; beyond it new ones from that address are refused."),
  ENCRYPTION("sluice.transport.encryption", "false",
      "Encrypt every tcp frame (READ bodies, messages, set-up) with AES-GCM under keys from the handshake;"
          + " a connection is encrypted when either side sets it. shm is unaffected; verbs is skipped"
          + " unless encryption.dataAtRest."),
  DATA_ENCRYPTED_AT_REST("sluice.transport.encryption.dataAtRest", "false",
      "The bytes served are already ciphertext (Spark: spark.io.encryption.enabled), so with encryption on"
          + " verbs may still carry READs."),
  SHM_DIR("sluice.transport.shm.dir", "/dev/shm",
      "Where shm regions live; stale folders of dead processes are removed at start."),
  SHM_ENABLED("sluice.transport.shm.enabled", "true",
      "With provider auto: read same-host peers through shared memory.");

  private final String key;
  private final String defaultValue;
  private final String description;

  TransportOption(String key, String defaultValue, String description) {
    this.key = key;
    this.defaultValue = defaultValue;
    this.description = description;
  }

  public String key() {
    return key;
  }

  public String defaultValue() {
    return defaultValue;
  }

  public String description() {
    return description;
  }
}
