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
