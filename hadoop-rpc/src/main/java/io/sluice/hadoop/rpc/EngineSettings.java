package io.sluice.hadoop.rpc;

import io.sluice.transport.ClientBinding;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.Transports;
import io.sluice.transport.config.ConfigSource;
import io.sluice.transport.config.TransportKeys;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeys;

/**
 * A snapshot of what the engine reads from a Hadoop {@code Configuration}: the transport's keys
 * ({@code sluice.transport.*}, passed through unchanged) and the engine's own. Every value is read
 * through its declaration when the snapshot is taken, so an invalid one fails here, naming the key
 * and the value. Two snapshots with equal transport keys may share one client transport. Immutable.
 *
 * @param transportKeys every {@code sluice.transport.*} key that is set, full names, plus {@link
 *     TransportKeys#IO_TIMEOUT_MS} from {@link SluiceRpcOption#IO_TIMEOUT_MS} when not set
 * @param readThreshold bodies above this many bytes travel by READ
 * @param maxDataLength the largest request or response body accepted (Hadoop's
 *     ipc.maximum.data.length)
 * @param maxIncomingBodyBytes registered memory a server holds for request bodies it READs
 * @param callerConnectionIdleMs how long a server keeps an unused connection back to a caller
 */
record EngineSettings(Map<String, String> transportKeys, int readThreshold, int maxDataLength,
    long maxIncomingBodyBytes, long callerConnectionIdleMs) {
  EngineSettings {
    transportKeys = Map.copyOf(transportKeys);
    TransportConfig transport = TransportConfig.of(transportKeys);
    Transports.validate(transport);
    Transports.requireReadsKeptPerPeer(transport, "a call's body is READ by the one peer told its key");
    if (readThreshold < 0) {
      throw new IllegalArgumentException(SluiceRpcOption.READ_THRESHOLD_BYTES.key() + " must not be negative");
    }
    if (maxIncomingBodyBytes < maxDataLength) {
      throw new IllegalArgumentException(SluiceRpcOption.SERVER_MAX_INCOMING_BODY_BYTES.key() + "="
          + maxIncomingBodyBytes + " is below " + CommonConfigurationKeys.IPC_MAXIMUM_DATA_LENGTH + "="
          + maxDataLength + ": a body of the largest size could never be READ");
    }
  }

  /**
   * Warnings for the {@code sluice.*} keys of {@code conf} that neither the engine nor the transport
   * declares, each naming the closest known key.
   */
  static java.util.List<String> unknownKeys(Configuration conf) {
    java.util.List<String> known = new java.util.ArrayList<>();
    Transports.keys().forEach(k -> known.add(k.key()));
    SluiceRpcOption.all().forEach(k -> known.add(k.key()));
    java.util.List<String> present = new java.util.ArrayList<>();
    conf.forEach(e -> present.add(e.getKey()));
    return io.sluice.transport.config.ConfigKey.unknown(present, "sluice.", known);
  }

  static EngineSettings from(Configuration conf) {
    ConfigSource source = key -> Optional.ofNullable(conf.getTrimmed(key));
    Map<String, String> keys = new HashMap<>();
    for (Map.Entry<String, String> e : conf.getPropsWithPrefix(TransportKeys.PREFIX).entrySet()) {
      keys.put(TransportKeys.PREFIX + e.getKey(), e.getValue().trim());
    }
    keys.computeIfAbsent(TransportKeys.IO_TIMEOUT_MS.key(),
        k -> Long.toString(source.value(SluiceRpcOption.IO_TIMEOUT_MS)));
    int threshold = Math.toIntExact(source.value(SluiceRpcOption.READ_THRESHOLD_BYTES));
    int maxData = conf.getInt(CommonConfigurationKeys.IPC_MAXIMUM_DATA_LENGTH,
        CommonConfigurationKeys.IPC_MAXIMUM_DATA_LENGTH_DEFAULT);
    return new EngineSettings(keys, threshold, maxData, source.value(SluiceRpcOption.SERVER_MAX_INCOMING_BODY_BYTES),
        source.value(SluiceRpcOption.SERVER_CALLER_CONNECTION_IDLE_MS));
  }

  TransportConfig transportConfig() {
    return TransportConfig.of(transportKeys);
  }

  String secret() {
    return transportConfig().value(TransportKeys.SECRET);
  }

  long ioTimeoutMs() {
    return transportConfig().value(TransportKeys.IO_TIMEOUT_MS);
  }

  /** This snapshot with transport keys added where they are not set. */
  EngineSettings withTransportDefaults(Map<String, String> defaults) {
    Map<String, String> keys = new HashMap<>(defaults);
    keys.putAll(transportKeys);
    return new EngineSettings(keys, readThreshold, maxDataLength, maxIncomingBodyBytes, callerConnectionIdleMs);
  }

  /**
   * A client's settings: unless the configuration names a bind host, its transport listens on the
   * local address that reaches {@code server} only (see {@link ClientBinding}). Clients of servers
   * reached from different local addresses get different settings, hence different transports.
   */
  EngineSettings listeningToward(InetSocketAddress server) {
    if (transportKeys.containsKey(TransportKeys.BIND_HOST.key())) {
      return this;
    }
    String host = server.getAddress() != null ? server.getAddress().getHostAddress() : server.getHostString();
    return withTransportDefaults(Map.of(TransportKeys.BIND_HOST.key(), ClientBinding.bindHostToward(host)));
  }

  /** The settings with the secret left out: a settings object may be logged. */
  @Override
  public String toString() {
    Map<String, String> shown = new java.util.TreeMap<>(transportKeys);
    shown.computeIfPresent(TransportKeys.SECRET.key(), (k, v) -> "<hidden>");
    return "EngineSettings[transportKeys=" + shown + ", readThreshold=" + readThreshold + ", maxDataLength="
        + maxDataLength + ", maxIncomingBodyBytes=" + maxIncomingBodyBytes + ", callerConnectionIdleMs="
        + callerConnectionIdleMs + "]";
  }
}
