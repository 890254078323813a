package io.sluice.transport.spi;

import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportOption;
import java.nio.file.Path;
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
    int maxRequestsInFlight,
    int handlerThreads,
    Path shmDir,
    boolean shmEnabled,
    int ioThreads,
    int maxConnections,
    long handshakeTimeoutNanos,
    int maxUnauthenticated,
    int maxUnauthenticatedPerAddress,
    boolean encryption) {

  public static Settings from(TransportConfig c) {
    Settings s = new Settings(
        c.string(TransportOption.SECRET),
        c.string(TransportOption.BIND_HOST),
        c.string(TransportOption.ADVERTISE_HOST),
        c.intValue(TransportOption.PORT),
        TimeUnit.MILLISECONDS.toNanos(c.longValue(TransportOption.CONNECT_TIMEOUT_MS)),
        TimeUnit.MILLISECONDS.toNanos(c.longValue(TransportOption.IO_TIMEOUT_MS)),
        c.intValue(TransportOption.MAX_MESSAGE_BYTES),
        c.intValue(TransportOption.MAX_REQUESTS_IN_FLIGHT),
        c.intValue(TransportOption.HANDLER_THREADS),
        Path.of(c.string(TransportOption.SHM_DIR)),
        c.booleanValue(TransportOption.SHM_ENABLED),
        c.intValue(TransportOption.IO_THREADS),
        c.intValue(TransportOption.MAX_CONNECTIONS),
        TimeUnit.MILLISECONDS.toNanos(c.longValue(TransportOption.HANDSHAKE_TIMEOUT_MS)),
        c.intValue(TransportOption.MAX_UNAUTHENTICATED),
        c.intValue(TransportOption.MAX_UNAUTHENTICATED_PER_ADDRESS),
        c.booleanValue(TransportOption.ENCRYPTION));
    positive(TransportOption.CONNECT_TIMEOUT_MS, s.connectTimeoutNanos);
    positive(TransportOption.IO_TIMEOUT_MS, s.ioTimeoutNanos);
    positive(TransportOption.MAX_MESSAGE_BYTES, s.maxMessageBytes);
    positive(TransportOption.MAX_REQUESTS_IN_FLIGHT, s.maxRequestsInFlight);
    positive(TransportOption.HANDLER_THREADS, s.handlerThreads);
    positive(TransportOption.IO_THREADS, s.ioThreads);
    positive(TransportOption.MAX_CONNECTIONS, s.maxConnections);
    positive(TransportOption.HANDSHAKE_TIMEOUT_MS, s.handshakeTimeoutNanos);
    positive(TransportOption.MAX_UNAUTHENTICATED, s.maxUnauthenticated);
    positive(TransportOption.MAX_UNAUTHENTICATED_PER_ADDRESS, s.maxUnauthenticatedPerAddress);
    return s;
  }

  private static void positive(TransportOption o, long v) {
    if (v <= 0) {
      throw new IllegalArgumentException(o.key() + " must be positive, got " + v);
    }
  }
}
