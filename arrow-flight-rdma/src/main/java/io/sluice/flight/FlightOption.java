package io.sluice.flight;

import io.sluice.transport.TransportConfig;

/**
 * The Flight module's own configuration keys, beside the transport's {@code sluice.transport.*}
 * keys that the same map carries. This enum is the one list; the module README's table names the
 * same keys.
 */
public enum FlightOption {
  STAGING_BYTES("sluice.flight.stagingBytes", "1073741824",
      "Client: registered memory one data-plane put may hold for batches the server has not READ yet;"
          + " past it, putNext waits for the server."),
  STREAM_WINDOW("sluice.flight.streamWindow", "4",
      "Batches one data-plane stream may have announced and not yet had acknowledged."),
  ACK_TIMEOUT_MS("sluice.flight.ackTimeoutMs", "60000",
      "How long an announced batch waits for its reader's acknowledgement (and a put for memory)"
          + " before the stream is cancelled and the reader loses access."),
  DATA_PLANE("sluice.flight.dataPlane", "true",
      "Client: negotiate the READ data plane with servers that offer it (false: always plain Flight)."),
  READ_CHUNK_BYTES("sluice.flight.readChunkBytes", "8388608",
      "Largest single range of the batched READ that fetches one batch body.");

  private final String key;
  private final String defaultValue;
  private final String description;

  FlightOption(String key, String defaultValue, String description) {
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

  /** This option's value in {@code config} as a positive long. */
  public long positiveLong(TransportConfig config) {
    String s = config.get(key).map(String::trim).orElse(defaultValue);
    long v;
    try {
      v = Long.parseLong(s);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(key + " must be a number, got '" + s + "'", e);
    }
    if (v <= 0) {
      throw new IllegalArgumentException(key + " must be positive, got " + v);
    }
    return v;
  }

  /** This option's value in {@code config} as a boolean. */
  public boolean booleanValue(TransportConfig config) {
    String s = config.get(key).map(String::trim).orElse(defaultValue);
    if (s.equalsIgnoreCase("true") || s.equalsIgnoreCase("false")) {
      return Boolean.parseBoolean(s);
    }
    throw new IllegalArgumentException(key + " must be true or false, got '" + s + "'");
  }
}
