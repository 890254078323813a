package io.sluice.hadoop.rpc;

/**
 * The engine's own configuration keys, read from the Hadoop {@code Configuration}. Every {@code
 * sluice.transport.*} key (see {@link io.sluice.transport.TransportOption}) is also read from the
 * same Configuration and passed to the transport unchanged; this list holds only what the engine
 * adds.
 */
public enum SluiceRpcOption {
  READ_THRESHOLD_BYTES("sluice.rpc.readThresholdBytes", "65536",
      "Request and response bodies larger than this stay in registered memory and the peer READs"
          + " them; smaller ones travel inside the message."),
  IO_TIMEOUT_MS("sluice.transport.ioTimeoutMs", "120000",
      "The transport's deadline for a READ and for a call's answer (the engine's default replaces"
          + " the transport's 30 s, since Hadoop calls without ipc.client.rpc-timeout.ms may be slow);"
          + " ipc.client.rpc-timeout.ms, when set, is the call's deadline."),
  DISCOVERY_ACL("security.sluice.transport.discovery.protocol.acl", "*",
      "With hadoop.security.authorization: who may ask a server where its transport listens"
          + " (clients that may not use the stock TCP path).");

  private final String key;
  private final String defaultValue;
  private final String description;

  SluiceRpcOption(String key, String defaultValue, String description) {
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
