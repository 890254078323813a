package io.sluice.spark.shuffle;

import java.io.Serializable;
import java.util.Map;

/**
 * What one executor's shuffle transport did: its provider and address, the bytes its reduce
 * tasks READ per data path ("shm" for same-host peers, "tcp", "verbs"), and how many map outputs
 * it has registered now. Immutable; serializable so a task can return it to the driver.
 */
public record TransportReport(String executorId, String provider, String address, Map<String, Long> bytesReadByPath,
    int registeredMapOutputs) implements Serializable {
  private static final long serialVersionUID = 1L;

  public TransportReport {
    bytesReadByPath = Map.copyOf(bytesReadByPath);
  }

  public long bytesRead() {
    return bytesReadByPath.values().stream().mapToLong(Long::longValue).sum();
  }

  @Override
  public String toString() {
    StringBuilder paths = new StringBuilder();
    bytesReadByPath.forEach((path, n) -> paths.append(paths.length() == 0 ? "" : ", ").append(n).append(" B via ")
        .append(path));
    return "executor " + executorId + ": provider " + provider + " at " + address + "; READ "
        + (paths.length() == 0 ? "nothing" : paths) + "; " + registeredMapOutputs + " map outputs registered";
  }
}
