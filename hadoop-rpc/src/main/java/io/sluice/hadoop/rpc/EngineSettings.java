package io.sluice.hadoop.rpc;

import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportOption;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeys;

/**
 * A snapshot of what the engine reads from a Hadoop {@code Configuration}: the transport's keys
 * ({@code sluice.transport.*}, passed through unchanged) and the engine's own. Two snapshots with
 * equal transport keys may share one client transport. Immutable.
 *
 * @param transportKeys every {@code sluice.transport.*} key that is set, full names
 * @param readThreshold bodies above this many bytes travel by READ
 * @param maxDataLength the largest request or response body accepted (Hadoop's
 *     ipc.maximum.data.length)
 */
record EngineSettings(Map<String, String> transportKeys, int readThreshold, int maxDataLength) {
  static final String TRANSPORT_PREFIX = "sluice.transport.";

  EngineSettings {
    transportKeys = Map.copyOf(transportKeys);
    if (readThreshold < 0) {
      throw new IllegalArgumentException(SluiceRpcOption.READ_THRESHOLD_BYTES.key() + " must not be negative");
    }
  }

  static EngineSettings from(Configuration conf) {
    Map<String, String> keys = new HashMap<>();
    for (Map.Entry<String, String> e : conf.getPropsWithPrefix(TRANSPORT_PREFIX).entrySet()) {
      keys.put(TRANSPORT_PREFIX + e.getKey(), e.getValue().trim());
    }
    keys.putIfAbsent(SluiceRpcOption.IO_TIMEOUT_MS.key(), SluiceRpcOption.IO_TIMEOUT_MS.defaultValue());
    int threshold;
    try {
      threshold = Integer.parseInt(conf.getTrimmed(SluiceRpcOption.READ_THRESHOLD_BYTES.key(),
          SluiceRpcOption.READ_THRESHOLD_BYTES.defaultValue()));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(SluiceRpcOption.READ_THRESHOLD_BYTES.key() + " must be a number", e);
    }
    int maxData = conf.getInt(CommonConfigurationKeys.IPC_MAXIMUM_DATA_LENGTH,
        CommonConfigurationKeys.IPC_MAXIMUM_DATA_LENGTH_DEFAULT);
    return new EngineSettings(keys, threshold, maxData);
  }

  TransportConfig transportConfig() {
    return TransportConfig.of(transportKeys);
  }

  String secret() {
    return transportConfig().string(TransportOption.SECRET);
  }

  long ioTimeoutMs() {
    return transportConfig().longValue(TransportOption.IO_TIMEOUT_MS);
  }

  /** This snapshot with transport keys added where they are not set. */
  EngineSettings withTransportDefaults(Map<String, String> defaults) {
    Map<String, String> keys = new HashMap<>(defaults);
    keys.putAll(transportKeys);
    return new EngineSettings(keys, readThreshold, maxDataLength);
  }
}
