package io.sluice.spark.shuffle;

import io.sluice.spark.shuffle.startup.StartupTimes;
import java.io.Serializable;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one executor's shuffle transport did: its provider and address, the bytes its reduce
 * tasks READ per data path ("shm" for same-host peers, "tcp", "verbs"), how many of those bytes
 * were taken as read-only views of a same-host peer's file rather than copied ({@code
 * bytesViewed}), how many such views its tasks hold now ({@code viewsHeld}; 0 between tasks), the
 * most bytes of READ destinations it ever held at once ({@code destinationPeakBytes}), and how many
 * map outputs it has registered now; and what starting it cost: how long the open took on its own thread ({@code
 * openNanos}, with its steps in order), how long the first task that needed the transport waited
 * for it ({@code openWaitNanos}), and the first connection
 * to each peer it read (connect, authenticate, attach shm: how many, their median and maximum);
 * and its bound on connections to peers ({@code maxPeerConnections}): how many are open (or being
 * opened) now, the most there were at once, how many reads waited for room, how many of those
 * waits ended at their deadline (each a fetch failure), and how many idle connections were closed
 * to make room, and how many peers its reduce tasks read through Spark's reader because the bound
 * had no room for them ({@code peersPassedOn}, with {@code
 * spark.shuffle.rdma.peersBeyondBound=spark}); and how many blocks its reduce tasks read as part
 * of a run of one map output's blocks decompressed and deserialized as one stream ({@code
 * blocksInRuns}), as Spark's reader fetches them in batch; and how many map outputs committed while the transport was still opening
 * were registered once it had opened ({@code outputsRegisteredAfterOpen}), their tasks having gone
 * on without waiting for it. Immutable; serializable so a task can return it to the driver.
 */
public record TransportReport(String executorId, String provider, String address, Map<String, Long> bytesReadByPath,
    long bytesViewed, long viewsHeld, long destinationPeakBytes, int registeredMapOutputs, long openNanos, long openWaitNanos,
    Map<String, Long> openStepNanos, int firstConnections,
    long firstConnectMedianNanos, long firstConnectMaxNanos, int maxPeerConnections, int peerConnectionsOpen,
    int peerConnectionsPeak, long peerConnectionWaits, long peerConnectionWaitTimeouts,
    long peerConnectionEvictions, long peersPassedOn, long blocksInRuns, int outputsRegisteredAfterOpen)
    implements Serializable {
  private static final long serialVersionUID = 8L;

  public TransportReport {
    bytesReadByPath = Map.copyOf(bytesReadByPath);
    openStepNanos = Collections.unmodifiableMap(new LinkedHashMap<>(openStepNanos));
  }

  /** A report without start-up figures (a transport that did not record them). */
  public TransportReport(String executorId, String provider, String address, Map<String, Long> bytesReadByPath,
      int registeredMapOutputs) {
    this(executorId, provider, address, bytesReadByPath, 0, 0, 0, registeredMapOutputs, 0, 0, Map.of(), 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0);
  }

  public long bytesRead() {
    return bytesReadByPath.values().stream().mapToLong(Long::longValue).sum();
  }

  @Override
  public String toString() {
    StringBuilder paths = new StringBuilder();
    bytesReadByPath.forEach((path, n) -> paths.append(paths.length() == 0 ? "" : ", ").append(n).append(" B via ")
        .append(path));
    String steps = StartupTimes.describe(openStepNanos);
    return "executor " + executorId + ": provider " + provider + " at " + address + "; READ "
        + (paths.length() == 0 ? "nothing" : paths) + " (" + bytesViewed + " B of it viewed in place, " + viewsHeld
        + " views held now; READ destinations peaked at " + destinationPeakBytes + " B); " + registeredMapOutputs + " map outputs registered"
        + "; open " + millis(openNanos) + " ms (" + steps + "), " + millis(openWaitNanos) + " ms of it waited for by"
        + " the first task that needed it; " + firstConnections
        + " first connections, median " + millis(firstConnectMedianNanos) + " ms, max "
        + millis(firstConnectMaxNanos) + " ms; connections to peers: " + peerConnectionsOpen + " open of at most "
        + maxPeerConnections + ", peak " + peerConnectionsPeak + ", " + peerConnectionWaits + " waits ("
        + peerConnectionWaitTimeouts + " timed out), " + peerConnectionEvictions + " idle ones closed for room, "
        + peersPassedOn + " peers read through Spark's reader for want of room; "
        + blocksInRuns + " blocks read in runs of one map output's blocks; " + outputsRegisteredAfterOpen
        + " map outputs registered after the open, their tasks not waiting for it";
  }

  private static String millis(long nanos) {
    return String.format(java.util.Locale.ROOT, "%.1f", nanos / 1e6);
  }
}
