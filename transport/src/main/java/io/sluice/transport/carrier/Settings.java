package io.sluice.transport.carrier;

import io.sluice.transport.TransportConfig;
import io.sluice.transport.config.TransportKeys;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The carrier's settings (and its data paths'), read and checked once from a {@link TransportConfig}. */
public record Settings(
    String secret,
    String bindHost,
    String advertiseHost,
    int port,
    long connectTimeoutNanos,
    long ioTimeoutNanos,
    int maxMessageBytes,
    long maxQueuedRequestBytes,
    int maxRequestsInFlight,
    int handlerThreads,
    Path shmDir,
    boolean shmEnabled,
    boolean shmSealed,
    List<Path> shmTrustedFileRoots,
    int ioThreads,
    int maxConnections,
    long idleTimeoutNanos,
    long handshakeTimeoutNanos,
    int maxUnauthenticated,
    int maxUnauthenticatedPerAddress,
    boolean encryption,
    String encryptionEngine) {

  /** Reads every setting through its declaration, which checks kind and range and names the key when it fails. */
  public static Settings from(TransportConfig c) {
    return new Settings(
        c.value(TransportKeys.SECRET),
        c.value(TransportKeys.BIND_HOST),
        c.value(TransportKeys.ADVERTISE_HOST),
        c.value(TransportKeys.PORT),
        TimeUnit.MILLISECONDS.toNanos(c.value(TransportKeys.CONNECT_TIMEOUT_MS)),
        TimeUnit.MILLISECONDS.toNanos(c.value(TransportKeys.IO_TIMEOUT_MS)),
        Math.toIntExact(c.value(TransportKeys.MAX_MESSAGE_BYTES)),
        queuedRequestBytes(c),
        c.value(TransportKeys.MAX_REQUESTS_IN_FLIGHT),
        c.value(TransportKeys.HANDLER_THREADS),
        Path.of(c.value(TransportKeys.SHM_DIR)),
        c.value(TransportKeys.SHM_ENABLED),
        c.value(TransportKeys.SHM_SEALED),
        c.value(TransportKeys.SHM_TRUSTED_FILE_ROOTS),
        c.value(TransportKeys.IO_THREADS),
        c.value(TransportKeys.MAX_CONNECTIONS),
        TimeUnit.MILLISECONDS.toNanos(c.value(TransportKeys.IDLE_TIMEOUT_MS)),
        TimeUnit.MILLISECONDS.toNanos(c.value(TransportKeys.HANDSHAKE_TIMEOUT_MS)),
        c.value(TransportKeys.MAX_UNAUTHENTICATED),
        c.value(TransportKeys.MAX_UNAUTHENTICATED_PER_ADDRESS),
        c.value(TransportKeys.ENCRYPTION),
        c.value(TransportKeys.ENCRYPTION_ENGINE));
  }

  /** {@link TransportKeys#MAX_QUEUED_REQUEST_BYTES}, with 0 resolved against this JVM's heap. */
  private static long queuedRequestBytes(TransportConfig c) {
    long set = c.value(TransportKeys.MAX_QUEUED_REQUEST_BYTES);
    long onePeer = 4L * c.value(TransportKeys.MAX_MESSAGE_BYTES);
    return set > 0 ? set : Math.max(onePeer, Runtime.getRuntime().maxMemory() / 4);
  }

  /** Every setting but the secret, which no log line may show. */
  @Override
  public String toString() {
    return "Settings[secret=<hidden>, bindHost=" + bindHost + ", advertiseHost=" + advertiseHost + ", port=" + port
        + ", connectTimeoutNanos=" + connectTimeoutNanos + ", ioTimeoutNanos=" + ioTimeoutNanos + ", maxMessageBytes="
        + maxMessageBytes + ", maxQueuedRequestBytes=" + maxQueuedRequestBytes + ", maxRequestsInFlight=" + maxRequestsInFlight + ", handlerThreads=" + handlerThreads
        + ", shmDir=" + shmDir + ", shmEnabled=" + shmEnabled + ", shmSealed=" + shmSealed + ", shmTrustedFileRoots=" + shmTrustedFileRoots
        + ", ioThreads=" + ioThreads + ", maxConnections=" + maxConnections + ", idleTimeoutNanos=" + idleTimeoutNanos
        + ", handshakeTimeoutNanos="
        + handshakeTimeoutNanos + ", maxUnauthenticated=" + maxUnauthenticated + ", maxUnauthenticatedPerAddress="
        + maxUnauthenticatedPerAddress + ", encryption=" + encryption
        + ", encryptionEngine=" + encryptionEngine + "]";
  }
}
